#include "platforms/common/recent_ids.hpp"

namespace sb::platforms::common {

bool RecentIds::FirstSighting(const std::string& id) {
  if (id.empty()) return true;
  std::lock_guard lock(mu_);
  if (!ids_.insert(id).second) return false;
  order_.push_back(id);
  while (order_.size() > capacity_) {
    ids_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

void RecentIds::Forget(const std::string& id) {
  std::lock_guard lock(mu_);
  ids_.erase(id);
}

std::size_t RecentIds::size() const {
  std::lock_guard lock(mu_);
  return ids_.size();
}

}  // namespace sb::platforms::common
