// The loop every long-connection adapter runs: connect and run a session (one Attempt), and when
// it ends, either stop (cancelled), report the refusal and wait for the bot to be stopped or
// changed (fatal: retrying cannot help), go again at once (the attempt did its own wait, or the
// platform asked for it), or report the trouble with the retry to come and wait out the backoff.
//   co_await common::RunReconnecting(*context_.clock, [this](auto why) { Trouble(why); },
//                                     [&](common::ReconnectBackoff& backoff) {
//                                       return OneConnection(backoff);  // -> awaitable<Attempt>
//                                     });
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "platforms/common/reconnect_backoff.hpp"
#include "util/clock.hpp"

namespace sb::platforms::common {

// How one connection attempt ended.
struct Attempt {
  enum class Kind { kCancelled, kRetry, kAgain, kFatal };
  Kind kind = Kind::kRetry;
  std::string why;  // kRetry: the trouble, before "; retrying in ..."; kFatal: the whole trouble
  // The connection was up (ready) from then: the backoff starts over once it stayed up long enough.
  std::optional<util::TimePoint> connected_at;

  static Attempt Cancelled() { return Make(Kind::kCancelled, {}, {}); }
  static Attempt Retry(std::string why, std::optional<util::TimePoint> connected_at = {}) {
    return Make(Kind::kRetry, std::move(why), connected_at);
  }
  static Attempt Again(std::optional<util::TimePoint> connected_at = {}) {
    return Make(Kind::kAgain, {}, connected_at);
  }
  static Attempt Fatal(std::string why) { return Make(Kind::kFatal, std::move(why), {}); }

 private:
  static Attempt Make(Kind kind, std::string why, std::optional<util::TimePoint> connected_at) {
    Attempt attempt;
    attempt.kind = kind;
    attempt.why = std::move(why);
    attempt.connected_at = connected_at;
    return attempt;
  }
};

// Runs `attempt` until the coroutine is cancelled or an attempt is fatal. `trouble` reports to the
// bot's status and log (the caller scrubs secrets). The attempt gets the loop's backoff for its
// own use (Connected, or a delay it waits itself).
boost::asio::awaitable<void> RunReconnecting(
    const util::Clock& clock, std::function<void(const std::string&)> trouble,
    std::function<boost::asio::awaitable<Attempt>(ReconnectBackoff&)> attempt,
    ReconnectOptions options = {});

}  // namespace sb::platforms::common
