// Outside parties told of each message a running bot received, before its pipeline runs, who may
// take it over (LangBot's webhook answer `skip_pipeline`). The runtime asks the listener once per
// message and looks at the answer when the run begins and again before the reply is sent, so a
// listener that is slow to answer never holds a reply up.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "domain/received_message.hpp"

namespace sb::domain {

// The answer for one message. Thread-safe: the listener writes, the runtime reads.
class Takeover {
 public:
  // Someone took the message over: no pipeline run, no reply.
  void Take(std::string by) {
    {
      std::lock_guard lock(mu_);
      if (!taken_) by_ = std::move(by);
      taken_ = true;
      decided_ = true;
    }
    changed_.notify_all();
  }
  // Every party has answered without taking it.
  void Decline() {
    {
      std::lock_guard lock(mu_);
      decided_ = true;
    }
    changed_.notify_all();
  }
  bool Taken() const {
    std::lock_guard lock(mu_);
    return taken_;
  }
  std::string TakenBy() const {
    std::lock_guard lock(mu_);
    return by_;
  }
  // Waits up to `window` for an answer (blocking; the blocking pool only). True when taken.
  bool WaitTaken(std::chrono::milliseconds window) {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, window, [this] { return decided_; });
    return taken_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool taken_ = false;    // guarded by mu_
  bool decided_ = false;  // guarded by mu_
  std::string by_;        // guarded by mu_
};

class MessageTakeoverListener {
 public:
  virtual ~MessageTakeoverListener() = default;
  // Called once per message a running bot received (`adapter` is its adapter's name, e.g.
  // "telegram"), on any thread; must not block and must not keep `message`. Null: nobody can
  // take this message over.
  virtual std::shared_ptr<Takeover> OnReceived(const std::string& bot_uuid,
                                               const std::string& adapter,
                                               const ReceivedMessage& message) = 0;
};

}  // namespace sb::domain
