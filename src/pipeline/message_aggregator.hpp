// trigger.message-aggregation: messages of one chat session that arrive within `delay` of each
// other are merged into one before they go through the pipeline, as LangBot does for people who
// type in bursts. Each new message restarts the wait; at most kMaxMerged are merged.
//   auto aggregator = MessageAggregator::Make(clock);
//   aggregator->Add(key, std::move(message), 1500ms, [](ReceivedMessage merged) { Enqueue(...); });
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "domain/received_message.hpp"
#include "util/clock.hpp"

namespace sb::pipeline {

class MessageAggregator : public std::enable_shared_from_this<MessageAggregator> {
 public:
  static constexpr int kMaxMerged = 10;
  using Deliver = std::function<void(domain::ReceivedMessage merged)>;

  // The clock outlives the aggregator.
  static std::shared_ptr<MessageAggregator> Make(const util::Clock& clock);

  // Thread-safe. `deliver` of the session's first held message is the one called, once, on the
  // clock's timer thread (or inline when the kMaxMerged-th message arrives), with the merged
  // message: the chains joined by a line break, the id and sender of the newest message (so a
  // reply quotes the last one).
  void Add(const std::string& key, domain::ReceivedMessage message, util::Duration delay,
           Deliver deliver);

  // Drops whatever is held; nothing is delivered afterwards (shutdown).
  void Close();

  std::size_t Held() const;

 private:
  struct Pending {
    domain::ReceivedMessage message;
    Deliver deliver;
    util::TimerHandle timer;
    int merged = 0;
  };
  explicit MessageAggregator(const util::Clock& clock) : clock_(clock) {}
  void Fire(const std::string& key, std::uint64_t generation);

  const util::Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::pair<std::uint64_t, Pending>> pending_;  // guarded by mu_
  std::uint64_t generation_ = 0;                                      // guarded by mu_
  bool closed_ = false;                                               // guarded by mu_
};

}  // namespace sb::pipeline
