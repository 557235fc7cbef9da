#include "util/simulated_clock.hpp"

#include <algorithm>

namespace sb::util {

TimePoint SimulatedClock::Now() const {
  std::lock_guard lock(mu_);
  return now_;
}

TimerHandle SimulatedClock::After(Duration delay, std::function<void()> fn) const {
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard lock(mu_);
  due_.emplace(std::make_pair(now_ + std::max(delay, Duration::zero()), next_seq_++),
               Entry{std::move(fn), cancelled});
  return TimerHandle(std::move(cancelled));
}

void SimulatedClock::Advance(Duration step) {
  std::unique_lock lock(mu_);
  const TimePoint end = now_ + step;
  while (!due_.empty() && due_.begin()->first.first <= end) {
    auto first = due_.begin();
    now_ = std::max(now_, first->first.first);
    Entry entry = std::move(first->second);
    due_.erase(first);
    if (entry.cancelled->load()) continue;
    lock.unlock();
    entry.fn();
    lock.lock();
  }
  now_ = end;
}

void SimulatedClock::AdvanceTo(TimePoint t) {
  const TimePoint now = Now();
  if (t > now) Advance(std::chrono::duration_cast<Duration>(t - now));
}

std::size_t SimulatedClock::pending() const {
  std::lock_guard lock(mu_);
  return static_cast<std::size_t>(std::count_if(
      due_.begin(), due_.end(), [](const auto& e) { return !e.second.cancelled->load(); }));
}

}  // namespace sb::util
