// One open WebSocket connection over Beast, client or server side: a read loop that keeps at most
// one complete message waiting for Read, a write queue that serialises Write and Close (Beast
// allows one outstanding write), and the end-of-connection bookkeeping. Internal to net/ (Beast).
//   auto session = std::make_shared<Session<beast::tcp_stream>>(limits, remote, on_end, socket);
//   co_await session->Accept(request);  session->Start();
//   opened(std::make_shared<ConnectionHandle>(session), upgrade);
//
// Concurrency: the Beast stream, its timers and all state but close_ are touched only on the
// stream's strand; the public methods hop there with co_spawn (or post) and hold the session by a
// shared_ptr, so a caller dropping its handle mid-call is safe.
#pragma once

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/websocket.hpp"

namespace sb::net::ws_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using boost::system::error_code;

inline constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// Completion of a coroutine nobody awaits: an exception (a bug, memory exhaustion) is logged
// instead of escaping from io_context::run() and ending the process.
struct LogException {
  const char* task;
  void operator()(std::exception_ptr e) const {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("websocket {}: {}", task, ex.what());
    } catch (...) {
      spdlog::error("websocket {}: unknown exception", task);
    }
  }
};

// What the handles and the listener need of a session, whatever its stream type.
class SessionBase : public WebSocketConnection {
 public:
  // Thread-safe: a polite close (1001) unless the connection already ended. Used when the last
  // handle is dropped and when a listener stops.
  virtual void GoAway() = 0;
};

// The object adapters hold: dropping the last one closes the connection (1001).
class ConnectionHandle final : public WebSocketConnection {
 public:
  explicit ConnectionHandle(std::shared_ptr<SessionBase> session) : session_(std::move(session)) {}
  ~ConnectionHandle() override { session_->GoAway(); }
  ConnectionHandle(const ConnectionHandle&) = delete;
  ConnectionHandle& operator=(const ConnectionHandle&) = delete;

  asio::awaitable<util::Result<WebSocketMessage>> Read() override { return session_->Read(); }
  asio::awaitable<util::Result<void>> Write(std::string data, bool binary) override {
    return session_->Write(std::move(data), binary);
  }
  asio::awaitable<void> Close(int code, std::string reason) override {
    return session_->Close(code, std::move(reason));
  }
  void Abort() override { session_->Abort(); }
  WebSocketClose close_info() const override { return session_->close_info(); }
  std::string remote_address() const override { return session_->remote_address(); }

 private:
  const std::shared_ptr<SessionBase> session_;
};

// Stream is beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
template <typename Stream>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  using Ws = websocket::stream<Stream>;

  // `args` construct the Stream; its executor must be a strand. `on_end` (may be empty) runs
  // once, on the strand, when the connection has ended.
  template <typename... Args>
  Session(WebSocketLimits limits, std::string remote, std::function<void()> on_end, Args&&... args)
      : limits_(limits), remote_(std::move(remote)), on_end_(std::move(on_end)) {
    ws_.emplace(std::forward<Args>(args)...);
    strand_ = ws_->get_executor();
    space_.emplace(strand_);
  }

  ~Session() override {
    if (!finished_ && on_end_) on_end_();
  }

  Ws& ws() { return *ws_; }
  // On the strand: Finish has run (an Abort during the opening steps, for one).
  bool finished() const { return finished_; }

  // Before the handshake: Beast's timeouts (the idle ping goes out after half of Beast's idle
  // time) and the message limit.
  void Configure(beast::role_type role) {
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = limits_.handshake_timeout;
    timeout.idle_timeout = 2 * limits_.idle_timeout;
    timeout.keep_alive_pings = true;
    beast::get_lowest_layer(*ws_).expires_never();
    ws_->set_option(timeout);
    ws_->read_message_max(limits_.max_message_bytes);
    if (role == beast::role_type::server) {
      ws_->set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
        res.set(beast::http::field::server, "Switchboard");
      }));
    }
  }

  // On the strand, after the handshake: starts reading.
  void Start() {
    asio::co_spawn(strand_, ReadLoop(this->shared_from_this()), LogException{"read loop"});
  }

  asio::awaitable<util::Result<WebSocketMessage>> Read() override {
    auto self = this->shared_from_this();
    co_await asio::this_coro::throw_if_cancelled(false);
    auto state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) co_return Cancelled();
    auto waiter = std::make_shared<Waiter>(strand_);
    // Cancellation reaches the strand by a post holding the session, never through co_spawn
    // (Boost 1.81 forwards it with a pointer that can dangle, asio issue #1332).
    auto slot = state.slot();
    if (slot.is_connected()) {
      slot.assign([self, waiter](asio::cancellation_type) {
        asio::post(self->strand_, [waiter] { waiter->Wake(true); });
      });
    }
    auto result = co_await asio::co_spawn(
        strand_, self->DoRead(waiter),
        asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
    if (slot.is_connected()) slot.clear();
    co_return result;
  }

  asio::awaitable<util::Result<void>> Write(std::string data, bool binary) override {
    auto self = this->shared_from_this();
    co_await asio::this_coro::throw_if_cancelled(false);
    auto item = std::make_shared<WriteItem>(strand_);
    item->data = std::move(data);
    item->binary = binary;
    co_return co_await asio::co_spawn(
        strand_, self->DoWrite(item),
        asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
  }

  asio::awaitable<void> Close(int code, std::string reason) override {
    auto self = this->shared_from_this();
    co_await asio::this_coro::throw_if_cancelled(false);
    co_await asio::co_spawn(
        strand_, self->DoClose(code, std::move(reason)),
        asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
  }

  void Abort() override {
    asio::post(strand_, [self = this->shared_from_this()] {
      self->Finish(asio::error::connection_aborted, "connection aborted");
    });
  }

  void GoAway() override {
    asio::post(strand_, [self = this->shared_from_this()] {
      if (self->finished_ || self->close_queued_) return;
      // The frame holds the session: nobody else may by the time the close completes. (A named
      // coroutine, not a coroutine lambda: GCC 12 mis-copies a lambda coroutine's by-value
      // parameter, which freed the session under the close, as AddressSanitizer showed.)
      asio::co_spawn(self->strand_, CloseHolding(self, 1001, "going away"), LogException{"close"});
    });
  }

  WebSocketClose close_info() const override {
    std::lock_guard lock(close_mutex_);
    return close_;
  }
  std::string remote_address() const override { return remote_; }

  // Client side, on the strand: the upgrade request with the caller's headers.
  asio::awaitable<error_code> Handshake(const std::string& host, const std::string& target,
                                        std::vector<std::pair<std::string, std::string>> headers,
                                        websocket::response_type& response) {
    ws_->set_option(websocket::stream_base::decorator(
        [headers = std::move(headers)](websocket::request_type& req) {
          for (const auto& [name, value] : headers) req.set(name, value);
        }));
    auto [ec] = co_await ws_->async_handshake(response, host, target, kTuple);
    co_return ec;
  }

  // Server side, on the strand: answers the upgrade request already read.
  template <typename Request>
  asio::awaitable<error_code> Accept(const Request& request) {
    auto [ec] = co_await ws_->async_accept(request, kTuple);
    co_return ec;
  }

  // On the strand: the connection is over. Closes the socket, fails what waits, reports once.
  void Finish(error_code ec, std::string why) {
    if (finished_) return;
    finished_ = true;
    WebSocketClose info;
    const auto& reason = ws_->reason();
    if (ec == websocket::error::message_too_big) {
      info = {1009, "message too big"};
      why = "a message was larger than " + std::to_string(limits_.max_message_bytes) + " bytes";
    } else if (reason.code != websocket::close_code::none) {
      info = {static_cast<int>(reason.code),
              std::string(reason.reason.data(), reason.reason.size())};
    }
    if (why.empty()) {
      if (info.code != 1006) {
        why = "connection closed with code " + std::to_string(info.code);
      } else if (ec == beast::error::timeout) {
        why = "connection dropped: nothing received from the peer in time";
      } else {
        why = "connection lost: " + ec.message();
      }
    }
    {
      std::lock_guard lock(close_mutex_);
      close_ = info;
    }
    end_message_ = std::move(why);
    error_code ignored;
    beast::get_lowest_layer(*ws_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(*ws_).socket().close(ignored);
    if (read_waiter_) read_waiter_->Wake(false);
    space_->cancel();
    // Queued writes fail; the one in flight fails by itself now that the socket is closed.
    while (queue_.size() > (writing_ ? 1u : 0u)) {
      queue_.back()->Complete(asio::error::operation_aborted);
      queue_.pop_back();
    }
    for (auto& waiter : finish_waiters_) waiter->Wake(false);
    finish_waiters_.clear();
    if (on_end_) on_end_();
  }

 private:
  // A coroutine parked on the strand until something wakes it.
  struct Waiter {
    explicit Waiter(const asio::any_io_executor& ex) : timer(ex) {
      timer.expires_at(asio::steady_timer::time_point::max());
    }
    void Wake(bool cancel) {
      if (cancel) cancelled = true;
      woken = true;
      timer.cancel();
    }
    asio::awaitable<void> Wait() {
      if (!woken) co_await timer.async_wait(kTuple);
    }
    asio::steady_timer timer;
    bool woken = false;
    bool cancelled = false;
  };

  struct WriteItem : Waiter {
    using Waiter::Waiter;
    void Complete(error_code e) {
      ec = e;
      this->Wake(false);
    }
    std::string data;
    bool binary = false;
    std::optional<websocket::close_reason> close;
    error_code ec;
  };

  static util::Error CancelledError() {
    return util::Error{util::ErrorCode::kCancelled, "WebSocket read cancelled"};
  }
  static tl::unexpected<util::Error> Cancelled() { return tl::unexpected(CancelledError()); }
  tl::unexpected<util::Error> Ended() const {
    return util::Fail(util::ErrorCode::kUpstreamFailed,
                      "WebSocket to " + remote_ + ": " + end_message_);
  }

  static asio::awaitable<void> ReadLoop(std::shared_ptr<Session> self) {
    beast::flat_buffer buffer;
    for (;;) {
      // One message waits for Read at most: a peer cannot make us buffer more than one.
      while (!self->pending_.empty() && !self->finished_) {
        self->space_->expires_at(asio::steady_timer::time_point::max());
        co_await self->space_->async_wait(kTuple);
      }
      if (self->finished_) co_return;
      buffer.clear();
      auto [ec, n] = co_await self->ws_->async_read(buffer, kTuple);
      if (ec) {
        self->Finish(ec, "");
        co_return;
      }
      self->pending_.push_back(
          WebSocketMessage{beast::buffers_to_string(buffer.data()), self->ws_->got_binary()});
      if (self->read_waiter_) self->read_waiter_->Wake(false);
    }
  }

  asio::awaitable<util::Result<WebSocketMessage>> DoRead(std::shared_ptr<Waiter> waiter) {
    if (pending_.empty() && !finished_ && !waiter->cancelled) {
      read_waiter_ = waiter;
      co_await waiter->Wait();
      if (read_waiter_ == waiter) read_waiter_.reset();
    }
    if (waiter->cancelled) co_return Cancelled();
    if (!pending_.empty()) {
      WebSocketMessage message = std::move(pending_.front());
      pending_.pop_front();
      space_->cancel();
      co_return message;
    }
    co_return Ended();
  }

  asio::awaitable<util::Result<void>> DoWrite(std::shared_ptr<WriteItem> item) {
    if (finished_ || close_queued_) co_return Ended();
    queue_.push_back(item);
    Pump();
    co_await item->Wait();
    if (item->ec) {
      if (finished_) co_return Ended();
      co_return util::Fail(util::ErrorCode::kUpstreamFailed,
                           "WebSocket write to " + remote_ + " failed: " + item->ec.message());
    }
    co_return util::Ok();
  }

  static asio::awaitable<void> CloseHolding(std::shared_ptr<Session> session, int code,
                                            std::string reason) {
    co_await session->DoClose(code, std::move(reason));
  }

  asio::awaitable<void> DoClose(int code, std::string reason) {
    if (finished_) co_return;
    if (!close_queued_) {
      close_queued_ = true;
      auto item = std::make_shared<WriteItem>(strand_);
      websocket::close_reason frame;
      frame.code = static_cast<std::uint16_t>(code);
      // A close frame's payload is at most 125 bytes: two for the code, the rest for the reason.
      frame.reason.assign(reason.data(), std::min(reason.size(), frame.reason.max_size()));
      item->close = frame;
      queue_.push_back(item);
      Pump();
    }
    if (finished_) co_return;
    // Queued writes and the peer's answer together get the handshake time; then the socket goes.
    auto waiter = std::make_shared<Waiter>(strand_);
    waiter->timer.expires_after(limits_.handshake_timeout);
    finish_waiters_.push_back(waiter);
    co_await waiter->Wait();
    Finish(beast::error::timeout, "closing handshake not answered in time");
  }

  // Starts the next queued write or close unless one is in flight.
  void Pump() {
    if (writing_ || queue_.empty() || finished_) return;
    writing_ = true;
    auto item = queue_.front();
    auto done = [self = this->shared_from_this(), item](error_code ec, std::size_t = 0) {
      self->writing_ = false;
      if (!self->queue_.empty() && self->queue_.front() == item) self->queue_.pop_front();
      item->Complete(ec);
      if (item->close) {
        // Beast finished the closing handshake (reason() holds the peer's frame) or gave up.
        self->Finish(ec ? ec : error_code(websocket::error::closed), "");
      } else if (ec) {
        self->Finish(ec, "");
      } else {
        self->Pump();
      }
    };
    if (item->close) {
      ws_->async_close(*item->close, [done](error_code ec) { done(ec); });
      return;
    }
    ws_->binary(item->binary);
    ws_->async_write(asio::buffer(item->data), done);
  }

  const WebSocketLimits limits_;
  const std::string remote_;
  std::function<void()> on_end_;
  asio::any_io_executor strand_;
  std::optional<Ws> ws_;

  mutable std::mutex close_mutex_;
  WebSocketClose close_;  // guarded by close_mutex_; final once finished_

  // All below only on strand_.
  std::optional<asio::steady_timer> space_;  // the read loop waits here while pending_ is full
  std::deque<WebSocketMessage> pending_;
  std::shared_ptr<Waiter> read_waiter_;
  std::deque<std::shared_ptr<WriteItem>> queue_;  // the front is in flight while writing_
  bool writing_ = false;
  bool close_queued_ = false;
  bool finished_ = false;
  std::string end_message_;
  std::vector<std::shared_ptr<Waiter>> finish_waiters_;
};

// The listener half, in beast_websocket_listener.cpp.
util::Result<std::shared_ptr<WebSocketListener>> ListenWebSocket(asio::any_io_executor executor,
                                                                 WebSocketListenOptions options,
                                                                 WebSocketAcceptor accept,
                                                                 WebSocketOpened opened);

}  // namespace sb::net::ws_detail
