// LangBot's fixed-window rate limit per session: at most `limitation` messages per window of
// `window-length` seconds, windows aligned to the Unix epoch. Over the limit a message is
// dropped, or (strategy "wait") given a slot in the next free window and told when it starts.
//   RateLimiter limiter(clock);
//   RateDecision d = limiter.Acquire(pipeline_uuid + ":" + query.SessionId(),
//                                    RateLimitSettings::FromConfig(query.Config()));
//   if (d.verdict == RateVerdict::kWait) co_await sleep_until(d.retry_at);
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "util/clock.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

enum class RateStrategy { kDrop, kWait };

struct RateLimitSettings {
  std::int64_t window_seconds = 60;
  // 0 admits nothing (every message is dropped, whatever the strategy: a wait would never end).
  std::int64_t limitation = 60;
  RateStrategy strategy = RateStrategy::kDrop;

  // safety.rate-limit; a missing, mistyped or negative value (or a window below 1 s) keeps the
  // default above, an unknown strategy means drop.
  static RateLimitSettings FromConfig(const util::JsonObject& config);
};

enum class RateVerdict { kAllow, kDrop, kWait };
const char* RateVerdictName(RateVerdict verdict);

struct RateDecision {
  RateVerdict verdict = RateVerdict::kAllow;
  // kWait: when the reserved window opens; the slot is already taken, so the caller proceeds
  // then without calling Acquire again. Unset otherwise.
  util::TimePoint retry_at{};
};

// Thread-safe. Memory is bounded: sessions whose windows have passed are swept out, and at most
// `max_sessions` are tracked; past that, a new session is admitted untracked rather than
// refused (a flood of distinct senders must not lock out everyone).
class RateLimiter {
 public:
  // How far ahead a "wait" may reserve: the next window and the one after; later ones drop.
  static constexpr std::int64_t kMaxWindowsAhead = 2;

  explicit RateLimiter(const util::Clock& clock, std::size_t max_sessions = 100'000);

  // `session_key` identifies the counter; include the pipeline when one limiter serves several
  // pipelines (LangBot keeps one per pipeline).
  RateDecision Acquire(std::string_view session_key, const RateLimitSettings& settings);

  // Sessions currently tracked (for metrics and tests).
  std::size_t TrackedSessions() const;

 private:
  struct Window {
    std::int64_t index = 0;  // window number since the epoch, in units of length_ms
    std::int64_t length_ms = 0;
    std::int64_t count = 0;  // slots taken in that window
    std::int64_t EndMs() const { return (index + 1) * length_ms; }
  };

  void SweepLocked(std::int64_t now_ms);

  const util::Clock& clock_;
  const std::size_t max_sessions_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Window> windows_;  // guarded by mutex_
  std::int64_t next_sweep_ms_ = 0;                   // guarded by mutex_
};

}  // namespace sb::pipeline
