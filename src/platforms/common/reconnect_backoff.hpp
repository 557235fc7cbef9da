// When to try again after a platform connection failed or dropped: exponential backoff with
// jitter, back to the first step once a connection has stayed up for a while. Pure; the adapter
// schedules the retry on its clock and reports it through its host (runtime status and log).
//   ReconnectBackoff backoff;
//   backoff.Connected(clock.Now());
//   ... the socket drops ...
//   auto delay = backoff.NextDelay(clock.Now());   // ~1 s, then ~2 s, ~4 s ... up to 60 s
//   host.OnTrouble(fmt::format("connection lost: {}; {}", why, backoff.Describe(delay)));
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "util/clock.hpp"

namespace sb::platforms::common {

struct ReconnectOptions {
  util::Duration initial{1'000};
  util::Duration max{60'000};
  double multiplier = 2.0;
  double jitter = 0.2;  // each delay is scaled by a random factor in [1 - jitter, 1 + jitter]
  // A connection that stayed up this long resets the backoff to `initial`.
  util::Duration stable_after{60'000};
};

// A uniform value in [0, 1) from a thread-local generator: the default jitter source, and the one
// gateway adapters use for their heartbeat and re-identify jitter.
double Random01();

// Not thread-safe: one per connection loop.
class ReconnectBackoff {
 public:
  // `random01` returns a uniform value in [0, 1); the default is a thread-local generator.
  explicit ReconnectBackoff(ReconnectOptions options = {},
                            std::function<double()> random01 = nullptr);

  // A connection is up (from `now`).
  void Connected(util::TimePoint now);
  // The connection attempt failed or the connection dropped at `now`: how long to wait before
  // the next attempt. Counts the attempt.
  util::Duration NextDelay(util::TimePoint now);
  // Failed attempts since the last stable connection.
  int attempts() const { return attempts_; }
  // "retrying in 4 s (attempt 3)", for the bot's status and log.
  std::string Describe(util::Duration delay) const;

 private:
  ReconnectOptions options_;
  std::function<double()> random01_;
  int attempts_ = 0;
  bool connected_ = false;
  util::TimePoint connected_at_{};
};

}  // namespace sb::platforms::common
