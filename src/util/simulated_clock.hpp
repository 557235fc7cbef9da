// A clock for tests: time stands still until the test advances it, and timers that come due run
// inline in the advancing thread, in time order. Timed behaviour (aggregation windows, rate-limit
// waits, backoff) is then tested without sleeping.
//   SimulatedClock clock(FromUnixMillis(1'000));
//   bool fired = false;
//   clock.After(std::chrono::seconds(5), [&] { fired = true; });
//   clock.Advance(std::chrono::seconds(4));  // fired == false
//   clock.Advance(std::chrono::seconds(1));  // fired == true
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "util/clock.hpp"

namespace sb::util {

class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(TimePoint start = FromUnixMillis(1'700'000'000'000)) : now_(start) {}

  TimePoint Now() const override;
  TimerHandle After(Duration delay, std::function<void()> fn) const override;

  // Moves time forward by `step`, running every timer due on the way at its own time. A timer
  // scheduled by a running timer runs in the same Advance when it falls due within it.
  void Advance(Duration step);
  // Advance to `t`; nothing happens when `t` is not later than now.
  void AdvanceTo(TimePoint t);
  // Timers scheduled and not yet run or cancelled.
  std::size_t pending() const;

 private:
  struct Entry {
    std::function<void()> fn;
    std::shared_ptr<std::atomic<bool>> cancelled;
  };
  mutable std::mutex mu_;
  TimePoint now_;                                                     // guarded by mu_
  mutable std::uint64_t next_seq_ = 0;                                // guarded by mu_
  mutable std::map<std::pair<TimePoint, std::uint64_t>, Entry> due_;  // guarded by mu_
};

}  // namespace sb::util
