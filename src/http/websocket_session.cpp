#include "http/websocket_session.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <exception>

namespace sb::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
// After the closing handshake started, the longest Run waits for it before cutting the socket.
constexpr std::chrono::seconds kCloseWait{2};

}  // namespace

class WebSocketSession::Peer final : public WebSocketPeer {
 public:
  explicit Peer(std::weak_ptr<WebSocketSession> session) : session_(std::move(session)) {}
  void SendText(std::string text) override {
    if (auto session = session_.lock()) session->Send(std::move(text));
  }
  void Close() override {
    if (auto session = session_.lock()) session->RequestClose(websocket::close_code::normal);
  }
  void CloseWith(int code, std::string reason) override {
    if (auto session = session_.lock()) {
      session->RequestClose(
          websocket::close_reason(static_cast<websocket::close_code>(code), reason));
    }
  }

 private:
  const std::weak_ptr<WebSocketSession> session_;
};

std::shared_ptr<WebSocketSession> WebSocketSession::Create(asio::any_io_executor strand,
                                                           asio::thread_pool& blocking,
                                                           std::string request_id) {
  std::shared_ptr<WebSocketSession> session(
      new WebSocketSession(std::move(strand), blocking, std::move(request_id)));
  session->peer_ = std::make_shared<Peer>(session);
  return session;
}

WebSocketSession::WebSocketSession(asio::any_io_executor strand, asio::thread_pool& blocking,
                                   std::string request_id)
    : strand_(strand),
      blocking_(blocking),
      request_id_(std::move(request_id)),
      close_wait_(strand),
      cut_timer_(strand) {}

WebSocketSession::~WebSocketSession() {
  if (close_reported_.exchange(true) || !handlers_.on_close) return;
  try {
    handlers_.on_close();
  } catch (const std::exception& e) {
    spdlog::error("websocket rid={}: on_close threw: {}", request_id_, e.what());
  } catch (...) {
    spdlog::error("websocket rid={}: on_close threw", request_id_);
  }
}

void WebSocketSession::Send(std::string text) {
  asio::post(strand_, [self = shared_from_this(), text = std::move(text)]() mutable {
    if (self->finished_ || self->close_wanted_) return;
    // A client that does not read must not make us hold unbounded frames: past the cap the
    // connection is closed (1008) instead.
    if (self->queued_bytes_ + text.size() > kMaxQueuedBytes) {
      spdlog::warn("websocket rid={}: client too slow, {} bytes queued: closing", self->request_id_,
                   self->queued_bytes_);
      self->close_wanted_ =
          websocket::close_reason(websocket::close_code::policy_error, "too many unread messages");
      // Unsent frames go; only the one being written (if any) must stay for its completion.
      while (self->queue_.size() > (self->writing_ ? 1u : 0u)) self->queue_.pop_back();
      self->queued_bytes_ = self->queue_.empty() ? 0 : self->queue_.front().size();
      self->Pump();
      return;
    }
    self->queued_bytes_ += text.size();
    self->queue_.push_back(std::move(text));
    self->Pump();
  });
}

void WebSocketSession::RequestClose(websocket::close_reason reason) {
  asio::post(strand_, [self = shared_from_this(), reason = std::move(reason)]() mutable {
    if (self->finished_ || self->close_wanted_) return;
    self->close_wanted_ = std::move(reason);
    self->Pump();
  });
}

void WebSocketSession::Shutdown() {
  RequestClose(websocket::close_code::going_away);
  asio::post(strand_, [self = shared_from_this()] {
    self->shutting_down_ = true;
    if (self->open_) self->ArmCut();
  });
}

void WebSocketSession::ArmCut() {
  cut_timer_.expires_after(kShutdownGrace);
  cut_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->finished_ || !self->ws_) return;
    boost::system::error_code ignored;
    beast::get_lowest_layer(*self->ws_).socket().close(ignored);
  });
}

void WebSocketSession::Pump() {
  if (!open_ || finished_ || writing_ || close_started_) return;
  if (!queue_.empty()) {
    writing_ = true;
    ws_->text(true);
    ws_->async_write(asio::buffer(queue_.front()),
                     [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                       self->writing_ = false;
                       self->queued_bytes_ -= self->queue_.front().size();
                       self->queue_.pop_front();
                       // A failed write fails the stream; the read loop sees it and ends.
                       if (!ec) self->Pump();
                     });
    return;
  }
  if (!close_wanted_) return;
  close_started_ = true;
  ws_->async_close(*close_wanted_, [self = shared_from_this()](boost::system::error_code) {
    self->close_done_ = true;
    self->close_wait_.cancel();
  });
}

asio::awaitable<void> WebSocketSession::Deliver(std::string text) {
  const bool ok = co_await asio::co_spawn(
      blocking_,
      [this, &text]() -> asio::awaitable<bool> {
        try {
          handlers_.on_text(std::move(text));
          co_return true;
        } catch (const std::exception& e) {
          spdlog::error("websocket rid={}: on_text threw: {}", request_id_, e.what());
        } catch (...) {
          spdlog::error("websocket rid={}: on_text threw", request_id_);
        }
        co_return false;
      },
      asio::use_awaitable);
  if (!ok && !close_wanted_) {
    close_wanted_ = websocket::close_reason(websocket::close_code::internal_error);
    Pump();
  }
}

asio::awaitable<void> WebSocketSession::ReportClose() {
  if (close_reported_.exchange(true)) co_return;
  // The handlers go on the pool too: whatever they hold is released off the I/O thread.
  co_await asio::co_spawn(
      blocking_,
      [this]() -> asio::awaitable<void> {
        try {
          if (handlers_.on_close) handlers_.on_close();
        } catch (const std::exception& e) {
          spdlog::error("websocket rid={}: on_close threw: {}", request_id_, e.what());
        } catch (...) {
          spdlog::error("websocket rid={}: on_close threw", request_id_);
        }
        handlers_ = {};
        co_return;
      },
      asio::use_awaitable);
}

asio::awaitable<void> WebSocketSession::Run(asio::ip::tcp::socket socket,
                                            beast::http::request<beast::http::string_body> upgrade,
                                            WebSocketHandlers handlers) {
  auto self = shared_from_this();
  handlers_ = std::move(handlers);
  ws_.emplace(std::move(socket));
  // Beast answers pings and, with keep-alive pings, closes a connection idle for 5 minutes.
  ws_->set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_->set_option(websocket::stream_base::decorator(
      [id = request_id_](websocket::response_type& res) { res.set("X-Request-Id", id); }));
  ws_->read_message_max(kMaxMessageBytes);

  auto [accept_ec] = co_await ws_->async_accept(upgrade, kTuple);
  boost::system::error_code end_ec = accept_ec;
  if (!accept_ec) {
    open_ = true;
    if (shutting_down_) ArmCut();
    Pump();
    beast::flat_buffer buffer;
    for (;;) {
      buffer.clear();
      auto [read_ec, read_n] = co_await ws_->async_read(buffer, kTuple);
      (void)read_n;
      if (read_ec) {
        end_ec = read_ec;
        break;
      }
      if (!ws_->got_text()) {
        // Beast fails a message over the limit itself, with 1009.
        if (!close_wanted_) {
          close_wanted_ = websocket::close_reason(websocket::close_code::unknown_data,
                                                  "this endpoint takes text messages only");
          Pump();
        }
        continue;
      }
      if (close_wanted_ || !handlers_.on_text) continue;
      co_await Deliver(beast::buffers_to_string(buffer.data()));
    }
  }

  if (close_started_ && !close_done_) {
    close_wait_.expires_after(kCloseWait);
    co_await close_wait_.async_wait(kTuple);
  }
  finished_ = true;
  cut_timer_.cancel();
  boost::system::error_code ignored;
  beast::get_lowest_layer(*ws_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  beast::get_lowest_layer(*ws_).socket().close(ignored);
  spdlog::info("websocket closed ({}) rid={}", end_ec.message(), request_id_);
  co_await ReportClose();
}

}  // namespace sb::http
