// The webhook mode's reply streams. WeCom takes an AI bot's answer only inside HTTP responses: the
// first callback of a message is answered with a stream id (finish false), then WeCom polls that
// id with refresh callbacks and shows each answer's content (cumulative) until one says finish.
// So the reply the pipeline sends (PlatformAdapter::Send with reply_to_message_id) is put into
// the message's stream here, and the refresh answers hand it out. Pure bookkeeping on an injected
// time; thread-safe.
//   ReplyStreams streams(options);
//   auto opened = streams.Open(msgid, chat, now);         // first callback: answer opened.id
//   streams.Fill(msgid, "the reply", once, now);          // the pipeline's Send
//   auto snap = streams.Take(stream_id, now);             // a refresh: {content, finish}
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "platforms/common/send_once.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::platforms::wecombot {

struct StreamOptions {
  std::size_t capacity = 1024;  // streams remembered; the oldest goes first
  // A stream is finished with what it has once this old (PullStreamMaxLifetimeMs), so WeCom
  // stops polling before its own 6-minute limit shows its fallback text.
  util::Duration max_lifetime{300'000};
  // While nothing has been produced, refreshes after this long show `placeholder`
  // (PullPendingPlaceholder*); an empty placeholder shows nothing.
  util::Duration placeholder_delay{3'000};
  std::string placeholder;
  std::size_t max_content_bytes = 20480;
};

// What one refresh answer says.
struct StreamSnapshot {
  bool known = false;  // false: no such stream (expired or never ours)
  std::string content;
  bool finish = false;
};

class ReplyStreams {
 public:
  explicit ReplyStreams(StreamOptions options);

  struct Opened {
    std::string stream_id;
    bool fresh = false;  // false: the message was seen before (a redelivery)
  };
  // The stream of message `msgid`, opened now unless it exists. `stream_id` is the new id when
  // fresh (the caller draws it, so tests can fix it).
  Opened Open(const std::string& msgid, std::string stream_id, util::TimePoint now);

  // Adds `text` to the reply of message `msgid` (joined to earlier text by a blank line) and
  // marks the reply complete. `sent` runs (through `once`) when a refresh answer has carried the
  // finished reply to WeCom. kNotFound when the message has no stream (unknown, expired);
  // kConflict when its finish was already handed out (WeCom shows nothing more on it).
  util::Result<void> Fill(const std::string& msgid, const std::string& text,
                          std::shared_ptr<common::SendOnce> once, util::TimePoint now);

  // The answer to a refresh of `stream_id` at `now`. Handing out a finish completes the sends
  // held for it.
  StreamSnapshot Take(const std::string& stream_id, util::TimePoint now);

  // True when a refresh now would hand out something new (content, placeholder or finish), so a
  // refresh need not wait; false also for an unknown stream.
  bool Ready(const std::string& stream_id, util::TimePoint now) const;

  // `wake` runs once, on the caller's thread of Fill, when the stream gets content; at once
  // (inline) when it is Ready already. Dropped with the stream.
  void OnChange(const std::string& stream_id, std::function<void()> wake, util::TimePoint now);

  // Forgets every stream: held sends complete with kCancelled, waiters are dropped.
  void Clear();

  std::size_t size() const;

 private:
  struct Stream {
    std::string msgid;
    util::TimePoint opened{};
    std::string content;
    bool complete = false;       // the reply is in (Fill)
    bool finish_handed = false;  // a finish went out: the stream is over
    std::string last_handed;     // content of the last answer
    bool placeholder_handed = false;
    std::vector<std::shared_ptr<common::SendOnce>> held;
    std::vector<std::function<void()>> waiters;
  };
  bool ReadyLocked(const Stream& s, util::TimePoint now) const;
  bool Expired(const Stream& s, util::TimePoint now) const;

  const StreamOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Stream> streams_;        // guarded by mu_; by stream id
  std::unordered_map<std::string, std::string> by_msgid_;  // guarded by mu_
  std::deque<std::string> order_;                          // guarded by mu_; oldest first
};

}  // namespace sb::platforms::wecombot
