// WebSockets (RFC 6455) for the adapters: client connections to a platform's gateway (ws and wss,
// through the configured proxy) and listeners that platforms dial into (OneBot's reverse socket).
// Awaited from coroutines on the I/O context, like HttpClient.
//   auto conn = co_await transport.Connect({.url = "wss://gateway.example/?v=10"});
//   if (!conn) return OnTrouble(conn.error().message);
//   co_await (*conn)->Write(R"({"op":2,...})");
//   while (auto message = co_await (*conn)->Read()) Handle(message->data);
//   // Read failed: the socket closed ((*conn)->close_info() says how) or was cancelled.
//
//   auto listener = transport.Listen({.host = "0.0.0.0", .port = 2280},
//       [](const WebSocketUpgrade& up) { return WebSocketVerdict{up.target == "/ws" ? 0 : 404}; },
//       [](std::shared_ptr<WebSocketConnection> conn, WebSocketUpgrade up) { /* read loop */ });
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http_client.hpp"
#include "util/error.hpp"

namespace sb::net {

struct WebSocketLimits {
  // A frame or a reassembled message above this closes the connection with 1009.
  std::size_t max_message_bytes = 1 << 20;
  std::chrono::milliseconds handshake_timeout{10'000};
  // After this long without any frame from the peer a ping goes out; the connection is dropped
  // when nothing (not even the pong) arrives within the same time again.
  std::chrono::milliseconds idle_timeout{60'000};
};

struct WebSocketMessage {
  std::string data;
  bool binary = false;
};

// How a connection ended: the peer's close frame, or 1006 when the socket dropped without one.
struct WebSocketClose {
  int code = 1006;
  std::string reason;
};

// One open connection. Thread-safe: Write and Close may be called from any coroutine while one
// other coroutine reads; writes go out whole, in call order.
class WebSocketConnection {
 public:
  virtual ~WebSocketConnection() = default;

  // The next complete message (fragments reassembled; pings answered on the way). Fails with
  // kCancelled when the awaiting coroutine is cancelled, otherwise kUpstreamFailed once the
  // connection has ended (close_info() then says how) or a message broke the limits.
  virtual boost::asio::awaitable<util::Result<WebSocketMessage>> Read() = 0;

  // Sends one message. Fails with kUpstreamFailed when the connection has ended.
  virtual boost::asio::awaitable<util::Result<void>> Write(std::string data,
                                                           bool binary = false) = 0;

  // Sends a close frame and waits (bounded by the handshake timeout) for the peer's; after it,
  // Read fails. Idempotent.
  virtual boost::asio::awaitable<void> Close(int code, std::string reason) = 0;

  // Drops the TCP connection at once, with no close frame (tests of a vanished peer, shutdown).
  virtual void Abort() = 0;

  virtual WebSocketClose close_info() const = 0;
  virtual std::string remote_address() const = 0;
};

struct WebSocketConnectRequest {
  std::string url;  // ws://host[:port]/path?query or wss://...
  std::vector<std::pair<std::string, std::string>> headers;
  WebSocketLimits limits{.max_message_bytes = 16 << 20};
  std::chrono::milliseconds connect_timeout{15'000};
};

// An upgrade request a listener received, before it is accepted.
struct WebSocketUpgrade {
  std::string target;  // path and query, as sent
  std::string remote_address;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  // The first header of that (lower-case) name; empty when absent.
  std::string_view Header(std::string_view lower_name) const;
};

// 0 accepts the upgrade; any other status refuses it with that status and body.
struct WebSocketVerdict {
  int status = 0;
  std::string body;
};

struct WebSocketListenOptions {
  std::string host = "0.0.0.0";
  std::uint16_t port = 0;  // 0: any free port (tests)
  WebSocketLimits limits;
  std::size_t max_connections = 4096;    // upgrades beyond it are refused with 503
  std::size_t max_header_bytes = 16384;  // a larger upgrade request is refused with 431
};

using WebSocketAcceptor = std::function<WebSocketVerdict(const WebSocketUpgrade&)>;
using WebSocketOpened = std::function<void(std::shared_ptr<WebSocketConnection>, WebSocketUpgrade)>;

class WebSocketListener {
 public:
  virtual ~WebSocketListener() = default;
  virtual std::uint16_t port() const = 0;
  // Stops accepting and closes every connection it accepted (1001 "going away"); `stopped` runs
  // exactly once, on any thread, when none is left. Idempotent.
  virtual void Stop(std::function<void()> stopped) = 0;
};

// Thread-safe.
class WebSocketTransport {
 public:
  virtual ~WebSocketTransport() = default;

  // Opens a client connection: TCP (through the HTTP proxy of the options, with CONNECT), TLS
  // with certificate and host-name checks for wss, then the upgrade. Fails like HttpClient::Send:
  // kInvalidArgument for a malformed URL, kUpstreamUnreachable, kUpstreamTimeout, kCancelled, and
  // kUpstreamFailed when the server refused the upgrade (the message names its status). Error
  // messages name the host, never a header value or the query string.
  virtual boost::asio::awaitable<util::Result<std::shared_ptr<WebSocketConnection>>> Connect(
      WebSocketConnectRequest request) = 0;

  // Listens on host:port. `accept` decides on each upgrade (on an I/O thread; it must not block);
  // `opened` receives each accepted connection. Fails with kUnavailable naming the address when
  // it cannot bind ("cannot listen on 0.0.0.0:2280: Address already in use").
  virtual util::Result<std::shared_ptr<WebSocketListener>> Listen(WebSocketListenOptions options,
                                                                  WebSocketAcceptor accept,
                                                                  WebSocketOpened opened) = 0;
};

// The Boost.Beast implementation; TLS and proxy settings as the HTTP client's.
std::shared_ptr<WebSocketTransport> MakeWebSocketTransport(boost::asio::any_io_executor executor,
                                                           HttpClientOptions options);

}  // namespace sb::net
