#include "platforms/common/wake_signal.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace sb::platforms::common {

namespace asio = boost::asio;

asio::awaitable<bool> WakeSignal::Wait(const util::Clock& clock, util::Duration timeout) {
  auto state = co_await asio::this_coro::cancellation_state;
  if (state.cancelled() != asio::cancellation_type::none) co_return notified();
  auto executor = co_await asio::this_coro::executor;
  auto timer =
      std::make_shared<asio::steady_timer>(executor, asio::steady_timer::time_point::max());
  {
    std::lock_guard lock(mu_);
    if (notified_) co_return true;
    timer_ = timer;
    executor_ = executor;
  }
  std::weak_ptr<asio::steady_timer> weak = timer;
  util::TimerHandle handle = clock.After(timeout, [executor, weak] {
    asio::post(executor, [weak] {
      if (auto t = weak.lock()) t->cancel();
    });
  });
  // Posted cancels run on this coroutine's executor, so none can come before this wait starts.
  co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  handle.Cancel();
  std::lock_guard lock(mu_);
  timer_.reset();
  co_return notified_;
}

void WakeSignal::Notify() {
  std::lock_guard lock(mu_);
  notified_ = true;
  if (auto timer = timer_.lock()) {
    asio::post(executor_, [weak = timer_] {
      if (auto t = weak.lock()) t->cancel();
    });
  }
}

bool WakeSignal::notified() const {
  std::lock_guard lock(mu_);
  return notified_;
}

}  // namespace sb::platforms::common
