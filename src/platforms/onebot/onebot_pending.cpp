#include "platforms/onebot/onebot_pending.hpp"

#include <fmt/format.h>

#include <utility>

namespace sb::platforms::onebot {

std::string PendingActions::Add(Pending pending) {
  std::string echo = "sb:" + std::to_string(++echo_seq_);
  pending_.emplace(echo, std::move(pending));
  return echo;
}

std::optional<Pending> PendingActions::Take(const std::string& echo) {
  auto it = pending_.find(echo);
  if (it == pending_.end()) return std::nullopt;
  std::optional<Pending> p = std::move(it->second);
  pending_.erase(it);
  return p;
}

std::vector<Pending> PendingActions::TakeAll() {
  std::vector<Pending> all;
  for (auto& [echo, p] : pending_) all.push_back(std::move(p));
  pending_.clear();
  return all;
}

std::vector<Pending> PendingActions::TakeFor(std::uint64_t conn_serial) {
  std::vector<Pending> taken;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.conn_serial == conn_serial) {
      taken.push_back(std::move(it->second));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

std::vector<Pending> PendingActions::TakeExpired(util::TimePoint now) {
  std::vector<Pending> expired;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline <= now) {
      expired.push_back(std::move(it->second));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return expired;
}

util::Result<domain::SendReceipt> SendOutcome(const Pending& pending,
                                              const ActionResponse& response) {
  if (!response.ok) {
    std::string why = response.failure.empty() ? "no reason given" : response.failure;
    return util::Fail(
        util::ErrorCode::kUpstreamFailed,
        fmt::format("OneBot refused {}: {} (retcode {})", pending.action, why, response.retcode));
  }
  domain::SendReceipt receipt;
  if (!response.message_id.empty()) receipt.message_id = response.message_id;
  return receipt;
}

}  // namespace sb::platforms::onebot
