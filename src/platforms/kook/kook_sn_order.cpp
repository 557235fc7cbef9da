#include "platforms/kook/kook_sn_order.hpp"

#include <utility>

namespace sb::platforms::kook {

SnOrder::SnOrder(std::size_t max_held, util::Duration max_gap_wait)
    : max_held_(max_held == 0 ? 1 : max_held), max_gap_wait_(max_gap_wait) {}

std::vector<util::Json> SnOrder::Accept(std::int64_t sn, util::Json d, util::TimePoint now) {
  if (sn <= last_ || held_.contains(sn)) return {};  // handled or held already: a resend
  if (sn == last_ + 1) {
    last_ = sn;
    std::vector<util::Json> ready;
    ready.push_back(std::move(d));
    for (auto& more : Drain()) ready.push_back(std::move(more));
    if (!held_.empty()) gap_since_ = now;  // a new gap starts behind the drained run
    return ready;
  }
  if (held_.empty()) gap_since_ = now;
  held_.emplace(sn, std::move(d));
  if (held_.size() > max_held_) return GiveUpGap();
  return {};
}

std::vector<util::Json> SnOrder::Expire(util::TimePoint now) {
  if (held_.empty() || now - gap_since_ < max_gap_wait_) return {};
  auto released = GiveUpGap();
  if (!held_.empty()) gap_since_ = now;
  return released;
}

void SnOrder::Reset() {
  last_ = 0;
  held_.clear();
}

std::vector<util::Json> SnOrder::Drain() {
  std::vector<util::Json> ready;
  while (!held_.empty() && held_.begin()->first == last_ + 1) {
    last_ = held_.begin()->first;
    ready.push_back(std::move(held_.begin()->second));
    held_.erase(held_.begin());
  }
  return ready;
}

// Skips the gap before the oldest held event and releases the run that follows it.
std::vector<util::Json> SnOrder::GiveUpGap() {
  if (held_.empty()) return {};
  last_ = held_.begin()->first - 1;
  return Drain();
}

}  // namespace sb::platforms::kook
