#include "platforms/onebot/onebot_registry.hpp"

#include <utility>

namespace sb::platforms::onebot {
namespace {

constexpr std::size_t kMaxRoutes = 100'000;  // chats remembered with the account that heard them

std::string RouteKey(domain::TargetType type, const std::string& id) {
  return (type == domain::TargetType::kGroup ? "g" : "p") + id;
}

}  // namespace

void ConnectionRegistry::AddLive(std::shared_ptr<Conn> conn) {
  const std::uint64_t serial = conn->serial;
  live_.emplace(serial, std::move(conn));
}

std::shared_ptr<Conn> ConnectionRegistry::Claim(const std::shared_ptr<Conn>& conn,
                                                const std::string& self_id) {
  const std::string key = self_id + (conn->CanSend() ? "/api" : "/event");
  std::shared_ptr<Conn> older;
  auto& slot = slots_[key];
  if (slot && slot != conn) older = slot;
  slot = conn;
  if (conn->CanSend()) primary_ = conn;
  shown_account_ = self_id;
  return older;
}

bool ConnectionRegistry::Remove(const std::shared_ptr<Conn>& conn) {
  live_.erase(conn->serial);
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (it->second == conn) {
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
  if (primary_.lock() == conn || primary_.expired()) {
    primary_.reset();
    for (auto& [key, other] : slots_) {
      if (other->CanSend()) primary_ = other;
    }
  }
  return !primary_.expired();
}

std::string ConnectionRegistry::RememberRoute(const domain::ReceivedMessage& message,
                                              const std::string& self_id) {
  if (self_id.empty()) return self_id;
  std::string key = RouteKey(message.chat_type, message.chat_id);
  auto it = routes_.find(key);
  if (it != routes_.end()) {
    if (it->second != self_id) it->second = self_id;
  } else {
    if (routes_.size() >= kMaxRoutes) routes_.clear();
    routes_.emplace(std::move(key), self_id);
  }
  return shown_account_.empty() ? self_id : shown_account_;
}

std::shared_ptr<Conn> ConnectionRegistry::RouteFor(const domain::OutgoingMessage& message) const {
  if (slots_.size() > 1) {
    auto route = routes_.find(RouteKey(message.target_type, message.target_id));
    if (route != routes_.end()) {
      auto slot = slots_.find(route->second + "/api");
      if (slot != slots_.end()) return slot->second;
    }
  }
  return primary_.lock();
}

std::vector<std::shared_ptr<Conn>> ConnectionRegistry::Silent(std::int64_t now_ms) const {
  std::vector<std::shared_ptr<Conn>> silent;
  for (const auto& [serial, conn] : live_) {
    const std::int64_t interval = conn->heartbeat_ms.load();
    if (interval <= 0 || conn->dropping.load()) continue;
    const std::int64_t allowed = interval * kHeartbeatsMissed + kHeartbeatSlack.count();
    if (now_ms - conn->last_frame_ms.load() > allowed) silent.push_back(conn);
  }
  return silent;
}

}  // namespace sb::platforms::onebot
