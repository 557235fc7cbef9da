// A WebSocketTransport for adapter tests that plays the platform's side of each connection from
// the test thread: push text or binary frames to the adapter, read what it wrote (raw, with the
// binary flag, or as JSON), close or drop the socket. One double for every gateway adapter's
// tests (Discord's own predates it).
//   auto transport = std::make_shared<ScriptedTransport>();
//   context.websockets = transport;  ... adapter->Start();
//   auto conn = transport->WaitFor(0);           // the adapter's first connection
//   conn->Push(R"({"op":10})");  EXPECT_EQ(conn->Written().size(), 1u);
//   conn->Push(frame_bytes, /*binary=*/true);   conn->WrittenOp(1);  conn->ServerClose(4004);
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

#include "eventually.hpp"  // beside this header
#include "net/websocket.hpp"
#include "util/json.hpp"

namespace sb::test {

// Thread-safe.
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
      Wake();
    }
    co_return;
  }

  void Abort() override {
    std::lock_guard lock(mu_);
    aborted_ = true;
    if (!closed_) {
      closed_ = true;
      close_ = {1006, ""};
      Wake();
    }
  }

  net::WebSocketClose close_info() const override {
    std::lock_guard lock(mu_);
    return close_;
  }
  std::string remote_address() const override { return "127.0.0.1:1"; }

  // --- the platform's side ---
  void Push(std::string data, bool binary = false) {
    std::lock_guard lock(mu_);
    inbox_.push_back({std::move(data), binary});
    Wake();
  }
  // The socket drops (1006) or the platform closes it with `code`.
  void ServerClose(int code = 1006, std::string reason = "closed by the test") {
    std::lock_guard lock(mu_);
    closed_ = true;
    close_ = {code, std::move(reason)};
    Wake();
  }
  // What the adapter wrote, oldest first: the data only, or with the binary flag.
  std::vector<std::string> Written() const {
    std::vector<std::string> data;
    for (auto& m : Messages()) data.push_back(std::move(m.data));
    return data;
  }
  std::vector<net::WebSocketMessage> Messages() const {
    std::lock_guard lock(mu_);
    return written_;
  }
  // The written frames parsed as JSON, and those whose "op" is `op` (Satori's, Discord's shape).
  std::vector<util::Json> WrittenJson() const {
    std::vector<util::Json> frames;
    for (const auto& w : Written()) frames.push_back(util::ParseJson(w).value());
    return frames;
  }
  std::vector<util::Json> WrittenOp(int op) const {
    std::vector<util::Json> frames;
    for (auto& f : WrittenJson()) {
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
  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
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

// Thread-safe. Every Connect succeeds with a new ScriptedConnection.
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
  // Connection `i`, which must exist.
  std::shared_ptr<ScriptedConnection> at(std::size_t i) const {
    std::lock_guard lock(mu_);
    return conns_.at(i);
  }
  // Connection `i`, waited for (null when it did not come within 5 s).
  std::shared_ptr<ScriptedConnection> WaitFor(std::size_t i) const {
    if (!Eventually([&] { return count() > i; })) return nullptr;
    std::lock_guard lock(mu_);
    return conns_.at(i);
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<ScriptedConnection>> conns_;  // guarded by mu_
};

}  // namespace sb::test
