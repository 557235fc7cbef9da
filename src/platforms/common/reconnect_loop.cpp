#include "platforms/common/reconnect_loop.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <utility>

#include "platforms/common/clock_waits.hpp"

namespace sb::platforms::common {

boost::asio::awaitable<void> RunReconnecting(
    const util::Clock& clock, std::function<void(const std::string&)> trouble,
    std::function<boost::asio::awaitable<Attempt>(ReconnectBackoff&)> attempt,
    ReconnectOptions options) {
  co_await boost::asio::this_coro::throw_if_cancelled(false);
  ReconnectBackoff backoff(options);
  for (;;) {
    if (co_await IsCancelled()) co_return;
    Attempt ended = co_await attempt(backoff);
    if (ended.connected_at) backoff.Connected(*ended.connected_at);
    switch (ended.kind) {
      case Attempt::Kind::kCancelled:
        co_return;
      case Attempt::Kind::kFatal:
        trouble(ended.why);
        co_await WaitUntilCancelled();
        co_return;
      case Attempt::Kind::kAgain:
        break;
      case Attempt::Kind::kRetry: {
        const util::Duration delay = backoff.NextDelay(clock.Now());
        trouble(fmt::format("{}; {}", ended.why, backoff.Describe(delay)));
        if (!co_await Sleep(clock, delay)) co_return;
        break;
      }
    }
  }
}

}  // namespace sb::platforms::common
