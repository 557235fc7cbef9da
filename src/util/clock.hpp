// Time as the code sees it: an injectable clock that tells the time and runs things later, and the
// RFC 3339 text form of the API. Code that waits takes a `const Clock&`, so tests drive it with
// SimulatedClock (util/simulated_clock.hpp) instead of sleeping.
//   SystemClock clock;
//   TimePoint now = clock.Now();
//   TimerHandle t = clock.After(std::chrono::seconds(2), [] { /* on the clock's timer thread */ });
//   t.Cancel();                              // fn will not start after this returns
//   std::string text = FormatRfc3339(now);  // "2026-11-22T01:38:37.120Z"
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace sb::util {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::milliseconds;

// Cancels one scheduled call. Copyable (copies share the call); destroying a handle does NOT
// cancel, so fire-and-forget timers need not keep it. Thread-safe.
class TimerHandle {
 public:
  TimerHandle() = default;
  explicit TimerHandle(std::shared_ptr<std::atomic<bool>> cancelled)
      : cancelled_(std::move(cancelled)) {}
  // After Cancel returns the call does not start. One already running on the timer thread is not
  // waited for: callbacks hold weak references to what they touch, as with any async callback.
  void Cancel() {
    if (cancelled_) cancelled_->store(true);
  }
  bool active() const { return cancelled_ && !cancelled_->load(); }

 private:
  std::shared_ptr<std::atomic<bool>> cancelled_;
};

// Thread-safe in every implementation.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Runs `fn` once, `delay` from now (at once for a delay <= 0), on a thread of the clock and
  // never inline in the caller. Calls due at the same time run in the order they were scheduled.
  // `fn` must be short: it shares its thread with every other timer of the clock, so real work
  // is posted to an executor. Calls still pending when the clock is destroyed never run.
  virtual TimerHandle After(Duration delay, std::function<void()> fn) const = 0;
};

// Wall-clock time; timers run on one thread of its own, started at the first After.
class SystemClock final : public Clock {
 public:
  SystemClock();
  ~SystemClock() override;
  SystemClock(const SystemClock&) = delete;
  SystemClock& operator=(const SystemClock&) = delete;

  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  TimerHandle After(Duration delay, std::function<void()> fn) const override;

 private:
  class TimerThread;
  std::unique_ptr<TimerThread> timers_;
};

// UTC, millisecond precision, `Z` suffix.
std::string FormatRfc3339(TimePoint t);
std::int64_t ToUnixMillis(TimePoint t);
TimePoint FromUnixMillis(std::int64_t ms);
std::int64_t ToUnixSeconds(TimePoint t);

}  // namespace sb::util
