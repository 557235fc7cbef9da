#include "util/clock.hpp"

#include <fmt/format.h>

#include <ctime>

namespace sb::util {

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
