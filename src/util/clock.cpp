#include "util/clock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace sb::util {

// One thread and a queue ordered by due time, then by scheduling order.
class SystemClock::TimerThread {
 public:
  ~TimerThread() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  TimerHandle Add(Duration delay, std::function<void()> fn) {
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    const auto due = std::chrono::steady_clock::now() + std::max(delay, Duration::zero());
    {
      std::lock_guard lock(mu_);
      if (stopping_) return TimerHandle(std::move(cancelled));
      queue_.emplace(std::make_pair(due, next_seq_++), Entry{std::move(fn), cancelled});
      if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
    }
    wake_.notify_one();
    return TimerHandle(std::move(cancelled));
  }

 private:
  struct Entry {
    std::function<void()> fn;
    std::shared_ptr<std::atomic<bool>> cancelled;
  };

  void Run() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      if (queue_.empty()) {
        wake_.wait(lock);
        continue;
      }
      auto first = queue_.begin();
      if (first->first.first > std::chrono::steady_clock::now()) {
        wake_.wait_until(lock, first->first.first);
        continue;
      }
      Entry entry = std::move(first->second);
      queue_.erase(first);
      if (entry.cancelled->load()) continue;
      lock.unlock();
      entry.fn();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;       // guarded by mu_
  std::uint64_t next_seq_ = 0;  // guarded by mu_
  std::map<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>, Entry>
      queue_;           // guarded by mu_
  std::thread thread_;  // started under mu_ by the first Add
};

SystemClock::SystemClock() : timers_(std::make_unique<TimerThread>()) {}
SystemClock::~SystemClock() = default;

TimerHandle SystemClock::After(Duration delay, std::function<void()> fn) const {
  return timers_->Add(delay, std::move(fn));
}

std::int64_t ToUnixMillis(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

TimePoint FromUnixMillis(std::int64_t ms) { return TimePoint(std::chrono::milliseconds(ms)); }

std::int64_t ToUnixSeconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string FormatRfc3339(TimePoint t) {
  const std::int64_t ms = ToUnixMillis(t);
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  int millis = static_cast<int>(ms % 1000);
  if (millis < 0) {
    millis += 1000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

}  // namespace sb::util
