#include "pipeline/rate_limiter.hpp"

#include <chrono>

#include "pipeline/config_values.hpp"

namespace sb::pipeline {
namespace {

// Floor division: times before the epoch only appear with a broken clock, but must not crash.
std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

RateLimitSettings RateLimitSettings::FromConfig(const util::JsonObject& config) {
  RateLimitSettings settings;
  std::int64_t window = GetInt(config, {"safety", "rate-limit", "window-length"}, -1);
  // Beyond ~292 years the millisecond arithmetic would overflow.
  if (window >= 1 && window <= 1'000'000'000) settings.window_seconds = window;
  std::int64_t limit = GetInt(config, {"safety", "rate-limit", "limitation"}, -1);
  if (limit >= 0) settings.limitation = limit;
  if (GetString(config, {"safety", "rate-limit", "strategy"}, "drop") == "wait") {
    settings.strategy = RateStrategy::kWait;
  }
  return settings;
}

const char* RateVerdictName(RateVerdict verdict) {
  switch (verdict) {
    case RateVerdict::kAllow:
      return "allow";
    case RateVerdict::kDrop:
      return "drop";
    case RateVerdict::kWait:
      return "wait";
  }
  return "allow";
}

RateLimiter::RateLimiter(const util::Clock& clock, std::size_t max_sessions)
    : clock_(clock), max_sessions_(max_sessions) {}

std::size_t RateLimiter::TrackedSessions() const {
  std::lock_guard lock(mutex_);
  return windows_.size();
}

void RateLimiter::SweepLocked(std::int64_t now_ms) {
  std::erase_if(windows_, [now_ms](const auto& item) { return item.second.EndMs() <= now_ms; });
  // Sweeping is O(sessions); at most once a second keeps a full map from costing that per call.
  next_sweep_ms_ = now_ms + 1000;
}

RateDecision RateLimiter::Acquire(std::string_view session_key, const RateLimitSettings& settings) {
  RateDecision decision;
  if (settings.limitation <= 0) {
    decision.verdict = RateVerdict::kDrop;
    return decision;
  }
  const std::int64_t now_ms = util::ToUnixMillis(clock_.Now());
  const std::int64_t length_ms = settings.window_seconds * 1000;
  const std::int64_t current = FloorDiv(now_ms, length_ms);

  std::lock_guard lock(mutex_);
  auto it = windows_.find(std::string(session_key));
  if (it == windows_.end()) {
    if (windows_.size() >= max_sessions_ && now_ms >= next_sweep_ms_) SweepLocked(now_ms);
    if (windows_.size() >= max_sessions_) return decision;  // admitted untracked
    it = windows_.emplace(std::string(session_key), Window{current, length_ms, 0}).first;
  } else if (now_ms >= next_sweep_ms_ && windows_.size() > max_sessions_ / 2) {
    SweepLocked(now_ms);
    it = windows_.find(std::string(session_key));
    if (it == windows_.end()) {
      it = windows_.emplace(std::string(session_key), Window{current, length_ms, 0}).first;
    }
  }

  Window& window = it->second;
  // A changed window length (pipeline edited) starts the count afresh, as LangBot's would.
  if (window.length_ms != length_ms || window.index < current) {
    window = Window{current, length_ms, 0};
  }
  if (window.index == current && window.count < settings.limitation) {
    ++window.count;
    return decision;
  }
  if (settings.strategy == RateStrategy::kDrop) {
    decision.verdict = RateVerdict::kDrop;
    return decision;
  }
  // Wait: slots are handed out window after window, so waiters keep their arrival order and a
  // burst never overfills a later window. Reservations reach at most kMaxWindowsAhead windows
  // ahead: a flood beyond that is dropped instead of queueing for hours.
  if (window.count >= settings.limitation) {
    if (window.index + 1 - current > kMaxWindowsAhead) {
      decision.verdict = RateVerdict::kDrop;
      return decision;
    }
    window = Window{window.index + 1, length_ms, 0};
  }
  ++window.count;
  decision.verdict = RateVerdict::kWait;
  decision.retry_at = util::FromUnixMillis(window.index * length_ms);
  return decision;
}

}  // namespace sb::pipeline
