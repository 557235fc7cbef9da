// A WebSocketTransport for adapter tests that plays the platform's side from the test: each
// Connect makes a ScriptedConnection whose inbox the test fills (Push) and whose writes it reads
// (Written); ServerClose ends it with a close code. Built like the gateway double of
// discord_adapter_test.cpp, as a shared header for the gateway adapters that came after it.
//   auto transport = std::make_shared<test::ScriptedTransport>();
//   context.websockets = transport;  ...  auto conn = transport->at(0);
//   conn->Push(R"({"op":4,"body":{...}})");  conn->WrittenOp(1);  conn->ServerClose(4004);
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
#include <utility>
#include <vector>

#include "net/websocket.hpp"
#include "util/json.hpp"

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
          net::WebSocketMessage m{std::move(inbox_.front()), false};
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

  boost::asio::awaitable<util::Result<void>> Write(std::string data, bool) override {
    std::lock_guard lock(mu_);
    if (closed_) co_return util::Fail(util::ErrorCode::kUpstreamFailed, "closed");
    written_.push_back(std::move(data));
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

  // --- the platform's side ---
  void Push(std::string frame) {
    std::lock_guard lock(mu_);
    inbox_.push_back(std::move(frame));
    Wake();
  }
  void ServerClose(int code, std::string reason = "closed by the test") {
    std::lock_guard lock(mu_);
    closed_ = true;
    close_ = {code, std::move(reason)};
    Wake();
  }
  std::vector<util::Json> Written() const {
    std::lock_guard lock(mu_);
    std::vector<util::Json> frames;
    for (const auto& w : written_) frames.push_back(util::ParseJson(w).value());
    return frames;
  }
  // The written frames whose "op" is `op`.
  std::vector<util::Json> WrittenOp(int op) const {
    std::vector<util::Json> frames;
    for (auto& f : Written()) {
      if (f.is_object() && f.as_object().contains("op") && f.at("op").as_int64() == op) {
        frames.push_back(f);
      }
    }
    return frames;
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
  std::deque<std::string> inbox_;                     // guarded by mu_
  std::vector<std::string> written_;                  // guarded by mu_
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
