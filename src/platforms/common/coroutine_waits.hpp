// Waits a connection adapter's coroutines share: whether the coroutine was cancelled (the bot is
// stopping), waiting until it is, and a pause timed on the injected util::Clock (simulated in
// tests) that a cancellation ends.
//   if (!co_await common::Sleep(*context.clock, 5s)) co_return;  // cancelled: the bot is stopping
#pragma once

#include <boost/asio/awaitable.hpp>

#include "util/clock.hpp"

namespace sb::platforms::common {

boost::asio::awaitable<bool> IsCancelled();

boost::asio::awaitable<void> WaitUntilCancelled();

// Waits `delay` on `clock`. False when the coroutine was cancelled first. The clock's callback
// only posts to the coroutine's executor, where the timer lives.
boost::asio::awaitable<bool> Sleep(const util::Clock& clock, util::Duration delay);

}  // namespace sb::platforms::common
