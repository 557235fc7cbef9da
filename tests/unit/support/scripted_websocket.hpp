// A scripted WebSocketTransport for adapter tests: each Connect makes a connection whose incoming
// messages the test pushes (text or binary) and whose writes it reads back, and which the test can
// close as the server would. The same shape as discord_adapter_test's gateway double, with binary
// frames (Lark's long connection).
//   auto ws = std::make_shared<test::ScriptedTransport>();
//   context.websockets = ws;  ... ws->at(0)->Push(bytes, true); ws->at(0)->Written();
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/websocket.hpp"

namespace sb::test {

class ScriptedConnection final : public net::WebSocketConnection {
 public:
  explicit ScriptedConnection(std::string url) : url_(std::move(url)) {}

  boost::asio::awaitable<util::Result<net::WebSocketMessage>> Read() override {
    namespace asio = boost::asio;
    auto executor = co_await asio::this_coro::executor;
    for (;;) {
      std::shared_ptr<asio::steady_timer> timer;
      {
        std::lock_guard lock(mu_);
        if (!inbox_.empty()) {
          net::WebSocketMessage m = std::move(inbox_.front());
          inbox_.pop_front();
          co_return m;
        }
        if (closed_) co_return util::Fail(util::ErrorCode::kUpstreamFailed, "closed");
        timer_ =
            std::make_shared<asio::steady_timer>(executor, asio::steady_timer::time_point::max());
        timer = timer_;
      }
      co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
      auto state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) {
        co_return util::Fail(util::ErrorCode::kCancelled, "cancelled");
      }
    }
  }

  boost::asio::awaitable<util::Result<void>> Write(std::string data, bool binary) override {
    std::lock_guard lock(mu_);
    if (closed_) co_return util::Fail(util::ErrorCode::kUpstreamFailed, "closed");
    written_.push_back({std::move(data), binary});
    co_return util::Ok();
  }

  boost::asio::awaitable<void> Close(int code, std::string reason) override {
    std::lock_guard lock(mu_);
    if (!closed_) {
      closed_ = true;
      close_ = {code, std::move(reason)};
      closed_by_client_ = code;
    }
    co_return;
  }

  void Abort() override {
    std::lock_guard lock(mu_);
    aborted_ = true;
    if (!closed_) {
      closed_ = true;
      close_ = {1006, ""};
    }
  }

  net::WebSocketClose close_info() const override {
    std::lock_guard lock(mu_);
    return close_;
  }
  std::string remote_address() const override { return "127.0.0.1:1"; }

  // --- the server's side ---
  void Push(std::string data, bool binary) {
    std::lock_guard lock(mu_);
    inbox_.push_back({std::move(data), binary});
    Wake();
  }
  void ServerClose(int code) {
    std::lock_guard lock(mu_);
    closed_ = true;
    close_ = {code, "closed by the test"};
    Wake();
  }
  std::vector<net::WebSocketMessage> Written() const {
    std::lock_guard lock(mu_);
    return written_;
  }
  int closed_by_client() const {
    std::lock_guard lock(mu_);
    return closed_by_client_;
  }
  bool aborted() const {
    std::lock_guard lock(mu_);
    return aborted_;
  }
  const std::string& url() const { return url_; }

 private:
  void Wake() {  // under mu_
    if (timer_) {
      auto timer = timer_;
      boost::asio::post(timer->get_executor(), [timer] { timer->cancel(); });
    }
  }

  const std::string url_;
  mutable std::mutex mu_;
  std::deque<net::WebSocketMessage> inbox_;           // guarded by mu_
  std::vector<net::WebSocketMessage> written_;        // guarded by mu_
  std::shared_ptr<boost::asio::steady_timer> timer_;  // guarded by mu_
  bool closed_ = false;                               // guarded by mu_
  bool aborted_ = false;                              // guarded by mu_
  int closed_by_client_ = 0;                          // guarded by mu_
  net::WebSocketClose close_;                         // guarded by mu_
};

class ScriptedTransport final : public net::WebSocketTransport {
 public:
  boost::asio::awaitable<util::Result<std::shared_ptr<net::WebSocketConnection>>> Connect(
      net::WebSocketConnectRequest request) override {
    auto conn = std::make_shared<ScriptedConnection>(request.url);
    std::lock_guard lock(mu_);
    conns_.push_back(conn);
    co_return conn;
  }
  util::Result<std::shared_ptr<net::WebSocketListener>> Listen(net::WebSocketListenOptions,
                                                               net::WebSocketAcceptor,
                                                               net::WebSocketOpened) override {
    return util::Fail(util::ErrorCode::kUnavailable, "not in this test");
  }
  std::size_t count() const {
    std::lock_guard lock(mu_);
    return conns_.size();
  }
  std::shared_ptr<ScriptedConnection> at(std::size_t i) const {
    std::lock_guard lock(mu_);
    return conns_.at(i);
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<ScriptedConnection>> conns_;  // guarded by mu_
};

}  // namespace sb::test
