#include "platforms/web_page_bot/web_page_visitors.hpp"

#include <algorithm>
#include <chrono>

namespace sb::platforms::web_page {

using util::ErrorCode;

VisitorTable::Visitor& VisitorTable::Remember(const std::string& visitor, util::TimePoint now) {
  auto [it, fresh] = visitors_.try_emplace(visitor);
  if (fresh) {
    it->second.tokens = limits_.burst;
    it->second.refilled_at = now;
  }
  it->second.last_seen = now;
  if (fresh) Trim(visitor);
  return visitors_.at(visitor);
}

void VisitorTable::Trim(std::string_view keep) {
  while (visitors_.size() > limits_.max_visitors) {
    auto oldest = visitors_.end();
    for (auto it = visitors_.begin(); it != visitors_.end(); ++it) {
      if (!it->second.sockets.empty() || it->first == keep) continue;
      if (oldest == visitors_.end() || it->second.last_seen < oldest->second.last_seen) oldest = it;
    }
    if (oldest == visitors_.end()) return;  // every one is connected: max_sockets bounds them
    visitors_.erase(oldest);
  }
}

util::Result<std::uint64_t> VisitorTable::Attach(const std::string& visitor,
                                                 const std::string& address,
                                                 std::shared_ptr<domain::PlatformSocket> socket,
                                                 util::TimePoint now) {
  if (socket_count_ >= limits_.max_sockets) {
    return util::Fail(ErrorCode::kUnavailable, "too many visitors are connected; try again later");
  }
  if (auto it = per_address_.find(address);
      it != per_address_.end() && it->second >= limits_.max_sockets_per_address) {
    return util::Fail(ErrorCode::kRateLimited, "too many connections from this address");
  }
  if (auto it = visitors_.find(visitor);
      it != visitors_.end() && it->second.sockets.size() >= limits_.max_sockets_per_visitor) {
    return util::Fail(ErrorCode::kRateLimited, "too many connections for this visitor");
  }
  Visitor& v = Remember(visitor, now);
  const std::uint64_t id = next_socket_id_++;
  v.sockets.emplace(id, Socket{std::move(socket), address, now});
  ++per_address_[address];
  ++socket_count_;
  return id;
}

void VisitorTable::Detach(const std::string& visitor, std::uint64_t socket_id) {
  auto it = visitors_.find(visitor);
  if (it == visitors_.end()) return;
  auto s = it->second.sockets.find(socket_id);
  if (s == it->second.sockets.end()) return;
  if (auto a = per_address_.find(s->second.address); a != per_address_.end()) {
    if (--a->second == 0) per_address_.erase(a);
  }
  it->second.sockets.erase(s);
  --socket_count_;
  Trim({});
}

void VisitorTable::Touch(const std::string& visitor, std::uint64_t socket_id, util::TimePoint now) {
  auto it = visitors_.find(visitor);
  if (it == visitors_.end()) return;
  it->second.last_seen = now;
  if (auto s = it->second.sockets.find(socket_id); s != it->second.sockets.end()) {
    s->second.last_activity = now;
  }
}

Admission VisitorTable::Admit(const std::string& visitor, std::uint64_t socket_id,
                              util::TimePoint now) {
  Touch(visitor, socket_id, now);
  auto it = visitors_.find(visitor);
  if (it == visitors_.end()) return Admission::kRefused;
  Visitor& v = it->second;
  const double elapsed = std::chrono::duration<double>(now - v.refilled_at).count();
  const double per_token = std::chrono::duration<double>(limits_.refill).count();
  if (elapsed > 0 && per_token > 0) {
    v.tokens = std::min(limits_.burst, v.tokens + elapsed / per_token);
    v.refilled_at = now;
  }
  if (v.tokens >= 1) {
    v.tokens -= 1;
    v.strikes = 0;
    return Admission::kAccepted;
  }
  return ++v.strikes >= limits_.strikes_before_close ? Admission::kClose : Admission::kRefused;
}

void VisitorTable::Record(const std::string& visitor, util::JsonObject entry, util::TimePoint now) {
  Visitor& v = Remember(visitor, now);
  v.history.push_back(std::move(entry));
  while (v.history.size() > limits_.history_messages) v.history.pop_front();
}

std::vector<util::JsonObject> VisitorTable::History(const std::string& visitor) const {
  auto it = visitors_.find(visitor);
  if (it == visitors_.end()) return {};
  return {it->second.history.begin(), it->second.history.end()};
}

bool VisitorTable::Known(const std::string& visitor) const { return visitors_.contains(visitor); }

std::vector<std::shared_ptr<domain::PlatformSocket>> VisitorTable::SocketsOf(
    const std::string& visitor) const {
  std::vector<std::shared_ptr<domain::PlatformSocket>> out;
  if (auto it = visitors_.find(visitor); it != visitors_.end()) {
    for (const auto& [id, s] : it->second.sockets) out.push_back(s.socket);
  }
  return out;
}

std::vector<std::shared_ptr<domain::PlatformSocket>> VisitorTable::Idle(util::TimePoint now) const {
  std::vector<std::shared_ptr<domain::PlatformSocket>> out;
  for (const auto& [name, v] : visitors_) {
    for (const auto& [id, s] : v.sockets) {
      if (now - s.last_activity >= limits_.idle) out.push_back(s.socket);
    }
  }
  return out;
}

std::vector<std::shared_ptr<domain::PlatformSocket>> VisitorTable::AllSockets() const {
  std::vector<std::shared_ptr<domain::PlatformSocket>> out;
  for (const auto& [name, v] : visitors_) {
    for (const auto& [id, s] : v.sockets) out.push_back(s.socket);
  }
  return out;
}

}  // namespace sb::platforms::web_page
