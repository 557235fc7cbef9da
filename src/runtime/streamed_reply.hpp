// One bot reply streamed to an adapter while the runner writes it: the runner's text pieces are
// added up and handed to the adapter's ReplyStream as the whole text so far, one update at a time
// (the newest text wins over any that waited), at most one per `interval` (a trailing update is
// scheduled on the clock so the last words do not wait for the end), and the final reply, or the
// withdrawal of it, goes to the stream exactly once, after the last update has returned.
//   auto reply = std::make_shared<StreamedReply>(stream, clock, 500ms, warn);
//   on_delta = [reply](const ChatDelta& d) { reply->Add(d.content); };
//   ...
//   if (reply->Started()) reply->Finish(std::move(message), done); else adapter.Send(...);
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "domain/message.hpp"
#include "platforms/platform_adapter.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::runtime {

// Thread-safe; never blocks.
class StreamedReply : public std::enable_shared_from_this<StreamedReply> {
 public:
  // `warn` gets a line for the bot's log when an update fails (the stream then only finishes).
  StreamedReply(std::shared_ptr<platforms::ReplyStream> stream, const util::Clock& clock,
                util::Duration interval, std::function<void(std::string)> warn);

  // A piece of the reply's text, as the runner streams it.
  void Add(std::string_view piece);

  // True once an update was handed to the adapter: the reply must then end through Finish or
  // Abandon, not through the adapter's Send.
  bool Started() const;

  // The final reply. `done` as PlatformAdapter::Send's. Once; Add is ignored afterwards.
  void Finish(domain::OutgoingMessage message,
              std::function<void(util::Result<domain::SendReceipt>)> done);

  // The reply was withdrawn (filtered, undeliverable). Once, instead of Finish.
  void Abandon();

 private:
  // Hands the text to the stream when nothing is in flight and the interval has passed, or
  // schedules that for when it will have. Called with mu_ held; unlocks it.
  void Pump(std::unique_lock<std::mutex> lock);
  void Updated(util::Result<void> result);
  // Runs `end` now, or after the update in flight returns.
  void End(std::function<void()> end);

  const std::shared_ptr<platforms::ReplyStream> stream_;
  const util::Clock& clock_;
  const util::Duration interval_;
  const std::function<void(std::string)> warn_;

  mutable std::mutex mu_;
  std::string text_;             // everything so far
  std::size_t shown_bytes_ = 0;  // of text_, handed to the stream
  bool started_ = false;
  bool in_flight_ = false;
  bool broken_ = false;  // an update failed: no more updates
  bool ended_ = false;   // Finish or Abandon was called
  bool timer_set_ = false;
  util::TimePoint last_update_{};
  util::TimerHandle timer_;
  std::function<void()> after_update_;  // the end, waiting for the update in flight
};

}  // namespace sb::runtime
