// A coroutine's wait for "something happened" from another thread (an acknowledgement frame that
// the read loop saw, a reply the pipeline produced), bounded by a timeout on the injected clock and
// ended by the coroutine's cancellation. One waiter, any number of notifiers; a Notify before the
// Wait counts.
//   auto signal = std::make_shared<WakeSignal>();
//   register(signal);                                        // somebody will call Notify()
//   bool woken = co_await signal->Wait(clock, 5s);           // false: timed out or cancelled
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <mutex>

#include "util/clock.hpp"

namespace sb::platforms::common {

// Thread-safe.
class WakeSignal {
 public:
  // True when Notify was called (before or during the wait); false when `timeout` passed or the
  // awaiting coroutine was cancelled first. The timer lives on the coroutine's executor; Notify
  // and the clock only post to it.
  boost::asio::awaitable<bool> Wait(const util::Clock& clock, util::Duration timeout);
  void Notify();
  bool notified() const;

 private:
  mutable std::mutex mu_;
  bool notified_ = false;                           // guarded by mu_
  std::weak_ptr<boost::asio::steady_timer> timer_;  // guarded by mu_
  boost::asio::any_io_executor executor_;           // guarded by mu_
};

}  // namespace sb::platforms::common
