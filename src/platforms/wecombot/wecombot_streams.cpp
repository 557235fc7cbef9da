#include "platforms/wecombot/wecombot_streams.hpp"

#include <utility>

namespace sb::platforms::wecombot {
namespace {

constexpr std::size_t kMaxWaiters = 16;

// The longest prefix of `text` within `max` bytes that ends on a whole UTF-8 character.
void CutUtf8(std::string& text, std::size_t max) {
  if (text.size() <= max) return;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
}

}  // namespace

ReplyStreams::ReplyStreams(StreamOptions options) : options_(std::move(options)) {}

ReplyStreams::Opened ReplyStreams::Open(const std::string& msgid, std::string stream_id,
                                        util::TimePoint now) {
  std::vector<std::shared_ptr<common::SendOnce>> dropped;  // completed outside the lock
  Opened opened;
  {
    std::lock_guard lock(mu_);
    if (auto it = by_msgid_.find(msgid); it != by_msgid_.end()) {
      opened.stream_id = it->second;
      return opened;
    }
    while (order_.size() >= options_.capacity && !order_.empty()) {
      auto old = streams_.find(order_.front());
      if (old != streams_.end()) {
        by_msgid_.erase(old->second.msgid);
        dropped = std::move(old->second.held);
        streams_.erase(old);
      }
      order_.pop_front();
    }
    Stream stream;
    stream.msgid = msgid;
    stream.opened = now;
    streams_.emplace(stream_id, std::move(stream));
    by_msgid_[msgid] = stream_id;
    order_.push_back(stream_id);
    opened.stream_id = std::move(stream_id);
    opened.fresh = true;
  }
  for (auto& once : dropped) {
    (*once)(util::Fail(util::ErrorCode::kUpstreamTimeout,
                       "WeCom did not fetch the reply before its stream was forgotten"));
  }
  return opened;
}

util::Result<void> ReplyStreams::Fill(const std::string& msgid, const std::string& text,
                                      std::shared_ptr<common::SendOnce> once, util::TimePoint now) {
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(mu_);
    auto id = by_msgid_.find(msgid);
    if (id == by_msgid_.end()) {
      return util::Fail(util::ErrorCode::kNotFound,
                        "the message has no open WeCom reply stream (it expired or was never "
                        "received in webhook mode)");
    }
    Stream& s = streams_.at(id->second);
    if (s.finish_handed || Expired(s, now)) {
      return util::Fail(util::ErrorCode::kConflict,
                        "WeCom's reply stream for this message has already finished; webhook "
                        "mode cannot add to it");
    }
    if (!s.content.empty() && !text.empty()) s.content += "\n\n";
    s.content += text;
    CutUtf8(s.content, options_.max_content_bytes);
    s.complete = true;
    s.held.push_back(std::move(once));
    wake = std::move(s.waiters);
    s.waiters.clear();
  }
  for (auto& w : wake) w();
  return util::Ok();
}

bool ReplyStreams::Expired(const Stream& s, util::TimePoint now) const {
  return now - s.opened >= options_.max_lifetime;
}

bool ReplyStreams::ReadyLocked(const Stream& s, util::TimePoint now) const {
  if (s.finish_handed) return true;  // a repeated refresh gets the same finish again
  if (s.complete || Expired(s, now)) return true;
  return !options_.placeholder.empty() && !s.placeholder_handed &&
         now - s.opened >= options_.placeholder_delay;
}

bool ReplyStreams::Ready(const std::string& stream_id, util::TimePoint now) const {
  std::lock_guard lock(mu_);
  auto it = streams_.find(stream_id);
  return it != streams_.end() && ReadyLocked(it->second, now);
}

StreamSnapshot ReplyStreams::Take(const std::string& stream_id, util::TimePoint now) {
  StreamSnapshot snap;
  std::vector<std::shared_ptr<common::SendOnce>> delivered;
  {
    std::lock_guard lock(mu_);
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) return snap;
    Stream& s = it->second;
    snap.known = true;
    if (s.finish_handed || s.complete || Expired(s, now)) {
      s.finish_handed = true;
      snap.finish = true;
      snap.content = s.content;
      delivered = std::move(s.held);
      s.held.clear();
    } else if (!options_.placeholder.empty() && now - s.opened >= options_.placeholder_delay) {
      s.placeholder_handed = true;
      snap.content = options_.placeholder;
    }
    s.last_handed = snap.content;
  }
  domain::SendReceipt receipt;
  receipt.message_id = stream_id;
  for (auto& once : delivered) (*once)(receipt);
  return snap;
}

void ReplyStreams::OnChange(const std::string& stream_id, std::function<void()> wake,
                            util::TimePoint now) {
  {
    std::lock_guard lock(mu_);
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) return;
    if (!ReadyLocked(it->second, now)) {
      // Refreshes that waited in vain leave their waiters behind; only the newest few can still
      // be waiting (each waits at most PullPollTimeoutMs), so the stream keeps a handful.
      auto& waiters = it->second.waiters;
      if (waiters.size() >= kMaxWaiters) waiters.erase(waiters.begin());
      waiters.push_back(std::move(wake));
      return;
    }
  }
  wake();
}

void ReplyStreams::Clear() {
  std::unordered_map<std::string, Stream> gone;
  {
    std::lock_guard lock(mu_);
    gone.swap(streams_);
    by_msgid_.clear();
    order_.clear();
  }
  // The held SendOnces complete with kCancelled as they are released here.
}

std::size_t ReplyStreams::size() const {
  std::lock_guard lock(mu_);
  return streams_.size();
}

}  // namespace sb::platforms::wecombot
