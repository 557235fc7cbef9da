// The Boost.Beast WebSocketTransport: client connections (ws and wss, through the HTTP proxy with
// CONNECT) here, listeners in beast_websocket_listener.cpp, the open connection itself in
// beast_websocket_session.hpp. TLS and proxy settings are the HTTP client's (tls_context, proxy,
// dial).
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/url/parse.hpp>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "net/beast_websocket_session.hpp"
#include "net/dial.hpp"
#include "net/proxy.hpp"
#include "net/tls_context.hpp"
#include "net/websocket.hpp"

namespace sb::net {
namespace {

using namespace ws_detail;  // NOLINT: the session's namespace aliases
namespace ssl = asio::ssl;
using Clock = std::chrono::steady_clock;
using util::ErrorCode;
using util::Fail;
using util::Result;

using PlainSession = Session<beast::tcp_stream>;
using TlsSession = Session<beast::ssl_stream<beast::tcp_stream>>;

// Where a client connection goes.
struct Target {
  bool tls = false;
  std::string host;  // IPv6 without brackets
  std::string port;
  std::string host_header;
  std::string path;  // path and query, for the upgrade request only: never in a message
  bool via_proxy = false;
};

Result<Target> ParseTarget(const std::string& text, const ProxyConfig& proxy) {
  auto url = boost::urls::parse_absolute_uri(text);
  // Messages name neither the URL nor its query: gateway URLs may carry a token.
  if (!url) return Fail(ErrorCode::kInvalidArgument, "malformed URL: " + url.error().message());
  Target target;
  if (url->scheme_id() == boost::urls::scheme::wss) {
    target.tls = true;
  } else if (url->scheme_id() != boost::urls::scheme::ws) {
    return Fail(ErrorCode::kInvalidArgument, "unsupported URL scheme (only ws and wss)");
  }
  target.host = url->host_address();
  if (target.host.empty()) return Fail(ErrorCode::kInvalidArgument, "URL has no host");
  target.port = url->has_port() ? std::string(url->port()) : (target.tls ? "443" : "80");
  target.host_header = url->encoded_host_and_port();
  target.path = url->encoded_path().empty() ? "/" : std::string(url->encoded_path());
  if (url->has_query()) target.path += "?" + std::string(url->encoded_query());
  target.via_proxy = proxy.enabled && !BypassesProxy(proxy, target.host);
  return target;
}

// The caller's upgrade headers, minus those the handshake itself owns.
Result<std::vector<std::pair<std::string, std::string>>> UpgradeHeaders(
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::string& user_agent) {
  std::vector<std::pair<std::string, std::string>> out{{"User-Agent", user_agent}};
  for (const auto& [name, value] : headers) {
    if (name.empty() || name.find_first_of("\r\n: ") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos) {
      // Name only: the value may be a token.
      return Fail(ErrorCode::kInvalidArgument, "header " + name + " has an invalid value");
    }
    const std::string lower = AsciiLower(name);
    if (lower == "host" || lower == "upgrade" || lower == "connection" ||
        lower == "sec-websocket-key" || lower == "sec-websocket-version" ||
        lower == "sec-websocket-extensions" || lower == "content-length" ||
        lower == "transfer-encoding") {
      continue;
    }
    if (lower == "user-agent") {
      out.front().second = value;
      continue;
    }
    out.emplace_back(name, value);
  }
  return out;
}

class BeastWebSocketTransport final : public WebSocketTransport,
                                      public std::enable_shared_from_this<BeastWebSocketTransport> {
 public:
  BeastWebSocketTransport(asio::any_io_executor executor, HttpClientOptions options)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        proxy_(ParseProxy(options_)),
        tls_(options_) {}

  asio::awaitable<Result<std::shared_ptr<WebSocketConnection>>> Connect(
      WebSocketConnectRequest request) override {
    auto self = shared_from_this();
    try {
      co_await asio::this_coro::throw_if_cancelled(false);
      if (!proxy_.error.empty()) co_return Fail(ErrorCode::kInvalidArgument, proxy_.error);
      auto target = ParseTarget(request.url, proxy_);
      if (!target) co_return tl::make_unexpected(target.error());
      if (target->tls && !tls_.init_error().empty()) {
        co_return Fail(ErrorCode::kInvalidArgument, tls_.init_error());
      }
      auto headers = UpgradeHeaders(request.headers, options_.user_agent);
      if (!headers) co_return tl::make_unexpected(headers.error());
      auto state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) {
        co_return Fail(ErrorCode::kCancelled, "WebSocket connect cancelled");
      }
      if (target->tls) {
        auto session =
            std::make_shared<TlsSession>(request.limits, HostPort(target->host, target->port),
                                         nullptr, asio::make_strand(executor_), tls_.Get());
        co_return co_await Open(session, *target, std::move(*headers), request, state.slot());
      }
      auto session =
          std::make_shared<PlainSession>(request.limits, HostPort(target->host, target->port),
                                         nullptr, asio::make_strand(executor_));
      co_return co_await Open(session, *target, std::move(*headers), request, state.slot());
    } catch (const std::exception& e) {
      co_return Fail(ErrorCode::kInternal, std::string("WebSocket client error: ") + e.what());
    }
  }

  Result<std::shared_ptr<WebSocketListener>> Listen(WebSocketListenOptions options,
                                                    WebSocketAcceptor accept,
                                                    WebSocketOpened opened) override {
    return ListenWebSocket(executor_, std::move(options), std::move(accept), std::move(opened));
  }

 private:
  // Runs the opening steps on the session's strand. The caller's cancellation aborts the
  // session (closing its socket) by a post, never through co_spawn (asio issue #1332).
  template <typename S>
  asio::awaitable<Result<std::shared_ptr<WebSocketConnection>>> Open(
      std::shared_ptr<S> session, const Target& target,
      std::vector<std::pair<std::string, std::string>> headers,
      const WebSocketConnectRequest& request, asio::cancellation_slot slot) {
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    if (slot.is_connected()) {
      slot.assign([session, cancelled](asio::cancellation_type) {
        cancelled->store(true);
        session->Abort();
      });
    }
    auto opened = co_await asio::co_spawn(
        session->ws().get_executor(), Handshake(session, target, std::move(headers), request),
        asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
    if (slot.is_connected()) slot.clear();
    if (cancelled->load()) {
      session->Abort();
      co_return Fail(ErrorCode::kCancelled, "WebSocket connect cancelled");
    }
    if (!opened) {
      session->Abort();
      co_return tl::make_unexpected(opened.error());
    }
    co_return std::make_shared<ConnectionHandle>(session);
  }

  // TCP (or the proxy's tunnel), TLS and the upgrade; on the session's strand.
  template <typename S>
  asio::awaitable<Result<void>> Handshake(std::shared_ptr<S> session, Target target,
                                          std::vector<std::pair<std::string, std::string>> headers,
                                          WebSocketConnectRequest request) {
    const auto deadline = Clock::now() + request.connect_timeout;
    const std::string origin = HostPort(target.host, target.port);
    const std::string& host = target.via_proxy ? proxy_.host : target.host;
    const std::string& port = target.via_proxy ? proxy_.port : target.port;
    const std::string who = (target.via_proxy ? "proxy " : "") + HostPort(host, port);
    auto unreachable = [&](const error_code& ec, const std::string& whom) {
      if (ec == beast::error::timeout) {
        return Fail(ErrorCode::kUpstreamTimeout,
                    "connect timeout after " + std::to_string(request.connect_timeout.count()) +
                        " ms to " + origin);
      }
      return Fail(ErrorCode::kUpstreamUnreachable,
                  "cannot connect to " + whom + ": " + ec.message());
    };

    auto& tcp = beast::get_lowest_layer(session->ws());
    auto aborted = [&] { return Fail(ErrorCode::kCancelled, "WebSocket connect cancelled"); };
    // GCC 12 miscompiles some co_await-in-condition forms: results go to locals first.
    const auto dial_ec = co_await Dial(tcp, host, port, deadline);
    if (dial_ec) co_return unreachable(dial_ec, who);
    if (session->finished()) co_return aborted();
    if (target.via_proxy) {
      int refused = 0;
      const auto tunnel_ec =
          co_await OpenTunnel(tcp, origin, proxy_, options_.user_agent, deadline, refused);
      if (tunnel_ec) {
        if (refused != 0) {
          co_return Fail(ErrorCode::kUpstreamUnreachable,
                         "cannot connect to " + origin + ": proxy refused the tunnel (status " +
                             std::to_string(refused) + ")");
        }
        co_return unreachable(tunnel_ec, who);
      }
      if (session->finished()) co_return aborted();
    }
    if constexpr (std::is_same_v<S, TlsSession>) {
      auto& tls = session->ws().next_layer();
      tls_.PrepareConnection(tls.native_handle(), target.host);
      tcp.expires_at(deadline);
      auto [ec] = co_await tls.async_handshake(ssl::stream_base::client, kTuple);
      if (ec) co_return unreachable(ec, origin);
    }

    session->Configure(beast::role_type::client);
    websocket::response_type response;
    auto ec =
        co_await session->Handshake(target.host_header, target.path, std::move(headers), response);
    if (ec == websocket::error::upgrade_declined) {
      co_return Fail(ErrorCode::kUpstreamFailed, origin +
                                                     " refused the WebSocket upgrade with status " +
                                                     std::to_string(response.result_int()));
    }
    if (ec == beast::error::timeout) {
      co_return Fail(ErrorCode::kUpstreamTimeout,
                     "WebSocket handshake timeout after " +
                         std::to_string(request.limits.handshake_timeout.count()) + " ms with " +
                         origin);
    }
    if (ec) {
      co_return Fail(ErrorCode::kUpstreamFailed,
                     "WebSocket handshake with " + origin + " failed: " + ec.message());
    }
    session->Start();
    co_return util::Ok();
  }

  const asio::any_io_executor executor_;
  const HttpClientOptions options_;
  const ProxyConfig proxy_;
  TlsClientContext tls_;
};

}  // namespace

std::shared_ptr<WebSocketTransport> MakeWebSocketTransport(asio::any_io_executor executor,
                                                           HttpClientOptions options) {
  return std::make_shared<BeastWebSocketTransport>(std::move(executor), std::move(options));
}

}  // namespace sb::net
