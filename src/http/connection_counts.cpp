#include "http/connection_counts.hpp"

namespace sb::http {

bool ConnectionCounts::TryAdd(const std::string& client, bool& first_refusal) {
  std::lock_guard lock(mu_);
  auto& entry = counts_[client];
  if (limit_ > 0 && entry.open >= limit_) {
    first_refusal = !entry.refused;
    entry.refused = true;
    return false;
  }
  ++entry.open;
  return true;
}

void ConnectionCounts::Remove(const std::string& client) {
  std::lock_guard lock(mu_);
  auto it = counts_.find(client);
  if (it == counts_.end()) return;
  if (--it->second.open == 0) {
    counts_.erase(it);
  } else if (it->second.open < limit_) {
    it->second.refused = false;
  }
}

}  // namespace sb::http
