#include "platforms/onebot/onebot_connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

namespace sb::platforms::onebot {

namespace asio = boost::asio;

bool Enqueue(Conn& conn, std::string frame) {
  {
    std::lock_guard lock(conn.mu);
    if (conn.ended) return false;
    conn.outbox.push_back(std::move(frame));
  }
  WakeWriter(conn);
  return true;
}

void WakeWriter(Conn& conn) {
  std::shared_ptr<asio::steady_timer> timer;
  std::optional<asio::any_io_executor> executor;
  {
    std::lock_guard lock(conn.mu);
    if (!conn.writer_idle || !conn.wake) return;
    conn.writer_idle = false;
    timer = conn.wake;
    executor = conn.writer_executor;
  }
  // The writer set writer_idle and began its wait in one step on its strand, so this cancel,
  // queued on that strand, reaches the wait.
  asio::post(*executor, [timer] { timer->cancel(); });
}

asio::awaitable<void> RunWriter(std::shared_ptr<Conn> conn) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto executor = co_await asio::this_coro::executor;
  auto wake = std::make_shared<asio::steady_timer>(executor);
  {
    std::lock_guard lock(conn->mu);
    conn->writer_executor = executor;
    conn->wake = wake;
  }
  std::deque<std::string> batch;
  for (;;) {
    {
      std::lock_guard lock(conn->mu);
      if (conn->outbox.empty()) {
        if (conn->ended) break;
        conn->writer_idle = true;
      } else {
        batch.swap(conn->outbox);
      }
    }
    if (batch.empty()) {
      wake->expires_at(asio::steady_timer::time_point::max());
      (void)co_await wake->async_wait(asio::as_tuple(asio::use_awaitable));
      auto state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) break;
      continue;
    }
    for (std::string& frame : batch) {
      auto written = co_await conn->ws->Write(std::move(frame));
      if (!written) {
        batch.clear();
        // The read loop sees the same end and fails what waits for an answer.
        conn->ws->Abort();
        break;
      }
    }
    batch.clear();
  }
  std::lock_guard lock(conn->mu);
  conn->writer_idle = false;
  conn->wake.reset();
}

}  // namespace sb::platforms::onebot
