// Time as the code sees it: an injectable clock and the RFC 3339 text form of the API.
//   SystemClock clock;
//   TimePoint now = clock.Now();
//   std::string text = FormatRfc3339(now);  // "2026-11-22T01:38:37.120Z"
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sb::util {

using TimePoint = std::chrono::system_clock::time_point;

// Thread-safe in every implementation.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
};

// UTC, millisecond precision, `Z` suffix.
std::string FormatRfc3339(TimePoint t);
std::int64_t ToUnixMillis(TimePoint t);
TimePoint FromUnixMillis(std::int64_t ms);
std::int64_t ToUnixSeconds(TimePoint t);

}  // namespace sb::util
