#include "platforms/common/coroutine_waits.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>

namespace sb::platforms::common {

namespace asio = boost::asio;

asio::awaitable<bool> IsCancelled() {
  auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

asio::awaitable<void> WaitUntilCancelled() {
  asio::steady_timer timer(co_await asio::this_coro::executor,
                           asio::steady_timer::time_point::max());
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<bool> Sleep(const util::Clock& clock, util::Duration delay) {
  // A stop that came while the coroutine was busy elsewhere would not cancel this wait.
  if (co_await IsCancelled()) co_return false;
  auto executor = co_await asio::this_coro::executor;
  auto timer =
      std::make_shared<asio::steady_timer>(executor, asio::steady_timer::time_point::max());
  auto fired = std::make_shared<bool>(false);
  std::weak_ptr<asio::steady_timer> weak = timer;
  util::TimerHandle handle = clock.After(delay, [executor, weak, fired] {
    asio::post(executor, [weak, fired] {
      if (auto t = weak.lock()) {
        *fired = true;
        t->cancel();
      }
    });
  });
  co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  handle.Cancel();
  co_return *fired;
}

}  // namespace sb::platforms::common
