// The Boost.Beast HttpClient: HTTP/1.1 over TCP or TLS (OpenSSL), a keep-alive pool per
// scheme+host+port, an optional HTTP proxy (absolute-form for http, CONNECT for https), per-call
// timeouts and cancellation. All of Beast's HTTP stays in this file (one Beast TU costs ~11 s to
// build); the proxy settings, the TLS context and the dial/tunnel steps are shared with the
// WebSocket transport (proxy.hpp, tls_context.hpp, dial.hpp).
//
// Concurrency model: every connection owns a strand; one call drives it from a coroutine spawned
// on that strand, so the socket, its Beast timer and the resolver are never touched from two
// threads. Idle connections sit in a mutex-guarded pool and belong to nobody while there.

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/dial.hpp"
#include "net/http_client.hpp"
#include "net/proxy.hpp"
#include "net/tls_context.hpp"

namespace sb::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using util::Error;
using util::ErrorCode;
using util::Fail;
using util::Result;

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kReadPiece = 16 * 1024;
// Provider responses carry many rate-limit and tracing headers; Beast's 8 KB default is tight.
constexpr std::uint32_t kHeaderLimit = 64 * 1024;

// Where one request goes and how.
struct Route {
  bool tls = false;
  std::string host;  // origin host (IPv6 without brackets)
  std::string port;
  std::string target;  // origin-form, or absolute-form for plain http through a proxy
  std::string host_header;
  bool via_proxy = false;
  std::string key;  // pool key
};

Result<Route> MakeRoute(const std::string& url_text, const ProxyConfig& proxy) {
  auto url = boost::urls::parse_absolute_uri(url_text);
  // Messages name neither the URL nor its query: Gemini-style URLs carry the API key.
  if (!url) return Fail(ErrorCode::kInvalidArgument, "malformed URL: " + url.error().message());
  Route route;
  if (url->scheme_id() == boost::urls::scheme::https) {
    route.tls = true;
  } else if (url->scheme_id() != boost::urls::scheme::http) {
    return Fail(ErrorCode::kInvalidArgument, "unsupported URL scheme (only http and https)");
  }
  route.host = url->host_address();
  if (route.host.empty()) return Fail(ErrorCode::kInvalidArgument, "URL has no host");
  route.port = url->has_port() ? std::string(url->port()) : (route.tls ? "443" : "80");
  route.host_header = url->encoded_host_and_port();
  route.target = url->encoded_path().empty() ? "/" : std::string(url->encoded_path());
  if (url->has_query()) route.target += "?" + std::string(url->encoded_query());
  route.via_proxy = proxy.enabled && !BypassesProxy(proxy, route.host);
  if (route.via_proxy && !route.tls) {
    route.target = "http://" + std::string(url->encoded_host_and_port()) + route.target;
  }
  route.key = (route.tls ? "https://" : "http://") + HostPort(route.host, route.port);
  if (route.via_proxy) route.key += " via " + HostPort(proxy.host, proxy.port);
  return route;
}

struct Connection {
  explicit Connection(const asio::any_io_executor& ex) : strand(asio::make_strand(ex)) {}

  beast::tcp_stream& Tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  void Close() {
    if (!tls && !plain) return;  // not connected yet
    boost::system::error_code ec;
    auto& socket = Tcp().socket();
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  asio::strand<asio::any_io_executor> strand;
  std::optional<beast::tcp_stream> plain;                   // set for http
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;  // set for https
  beast::flat_buffer buffer;                                // bytes read past the previous response
  Clock::time_point idle_since;
};

// Everything one call needs, shared by its attempts.
struct Call {
  Route route;
  http::request<http::string_body> request;
  HttpTimeouts timeouts;
  Clock::time_point total_deadline;
  std::size_t max_response_bytes = 0;
  BodySink* sink = nullptr;
  bool armed_total = false;  // the last armed expiry was the total deadline, not the idle gap
};

struct Outcome {
  Result<HttpResponse> result;
  bool retry_fresh = false;  // a pooled connection was dead before any response byte
};

Outcome Failed(ErrorCode code, std::string message) {
  return Outcome{Fail(code, std::move(message)), false};
}

// A response over the size cap will be as large next time: retrying cannot help.
Outcome TooLarge(std::string message) {
  util::Error error{ErrorCode::kUpstreamFailed, std::move(message)};
  error.final = true;
  return Outcome{tl::unexpected(std::move(error)), false};
}

asio::awaitable<bool> IsCancelled() {
  auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

// Errors that mean the peer had closed the (pooled) connection before we used it.
bool IsClosedByPeer(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == ssl::error::stream_truncated;
}

class BeastHttpClient final : public HttpClient,
                              public std::enable_shared_from_this<BeastHttpClient> {
 public:
  BeastHttpClient(asio::any_io_executor executor, HttpClientOptions options)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        proxy_(ParseProxy(options_)),
        tls_(options_) {}

  ~BeastHttpClient() override {
    for (auto& [key, list] : idle_) {
      for (auto& conn : list) conn->Close();
    }
  }

  asio::awaitable<Result<HttpResponse>> Send(HttpRequest request, BodySink sink) override {
    auto self = shared_from_this();  // the pool must outlive every call in flight
    try {
      // Cancellation is reported as kCancelled, never as an exception out of a co_await.
      co_await asio::this_coro::throw_if_cancelled(false);
      if (!tls_.init_error().empty()) {
        co_return Fail(ErrorCode::kInvalidArgument, tls_.init_error());
      }
      if (!proxy_.error.empty()) co_return Fail(ErrorCode::kInvalidArgument, proxy_.error);
      auto route = MakeRoute(request.url, proxy_);
      if (!route) co_return tl::make_unexpected(route.error());
      auto built = BuildRequest(*route, request);
      if (!built) co_return tl::make_unexpected(built.error());

      Call call{.route = std::move(*route),
                .request = std::move(*built),
                .timeouts = request.timeouts,
                .total_deadline = Clock::now() + request.timeouts.total,
                .max_response_bytes = request.max_response_bytes,
                .sink = sink ? &sink : nullptr};
      // Cancellation of the caller closes the connection instead of travelling through
      // co_spawn: Boost 1.81's co_spawn forwards it with a raw pointer that can dangle when the
      // child finishes at the same moment (asio issue #1332). Posting with the connection held
      // by a shared_ptr is safe in every order.
      auto cancelled = std::make_shared<std::atomic<bool>>(false);
      auto slot = (co_await asio::this_coro::cancellation_state).slot();
      for (int attempt = 0;; ++attempt) {
        std::shared_ptr<Connection> conn = attempt == 0 ? Take(call.route.key) : nullptr;
        const bool reused = conn != nullptr;
        if (!conn) conn = std::make_shared<Connection>(executor_);
        if (slot.is_connected()) {
          slot.assign([conn, cancelled](asio::cancellation_type) {
            cancelled->store(true);
            asio::post(conn->strand, [conn] { conn->Close(); });
          });
        }
        Outcome out = co_await asio::co_spawn(
            conn->strand, Run(conn, reused, call),
            asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
        if (slot.is_connected()) slot.clear();
        if (cancelled->load()) co_return Fail(ErrorCode::kCancelled, "request cancelled");
        if (out.retry_fresh && attempt == 0) continue;
        co_return std::move(out.result);
      }
    } catch (const boost::system::system_error& e) {
      if (e.code() == asio::error::operation_aborted) {
        co_return Fail(ErrorCode::kCancelled, "request cancelled");
      }
      co_return Fail(ErrorCode::kUpstreamFailed, std::string("HTTP client error: ") + e.what());
    } catch (const std::exception& e) {
      co_return Fail(ErrorCode::kInternal, std::string("HTTP client error: ") + e.what());
    }
  }

 private:
  Result<http::request<http::string_body>> BuildRequest(const Route& route,
                                                        HttpRequest& request) const {
    http::request<http::string_body> req;
    const http::verb verb = http::string_to_verb(request.method);
    if (verb == http::verb::unknown) {
      req.method_string(request.method);
    } else {
      req.method(verb);
    }
    req.target(route.target);
    req.version(11);
    req.set(http::field::host, route.host_header);
    req.set(http::field::user_agent, options_.user_agent);
    // Compressed bodies would defeat streaming parsers and the size cap; ask for identity.
    req.set(http::field::accept_encoding, "identity");
    bool has_content_type = false;
    for (const auto& [name, value] : request.headers) {
      if (name.find_first_of("\r\n:") != std::string::npos ||
          value.find_first_of("\r\n") != std::string::npos) {
        // Name only: the value may be a key.
        return Fail(ErrorCode::kInvalidArgument, "header " + name + " has an invalid value");
      }
      const std::string lower = AsciiLower(name);
      // Framing headers are ours to set: a wrong one would desynchronise the connection.
      if (lower == "host" || lower == "content-length" || lower == "transfer-encoding" ||
          lower == "accept-encoding" || lower == "connection") {
        continue;
      }
      if (lower == "user-agent") {
        req.set(http::field::user_agent, value);
        continue;
      }
      if (lower == "content-type") has_content_type = true;
      req.insert(name, value);
    }
    if (route.via_proxy && !route.tls && !proxy_.authorization.empty()) {
      req.set(http::field::proxy_authorization, proxy_.authorization);
    }
    if (!request.body.empty() && !has_content_type) {
      req.set(http::field::content_type, "application/json");
    }
    req.body() = std::move(request.body);
    req.prepare_payload();
    return req;
  }

  asio::awaitable<Outcome> Run(std::shared_ptr<Connection> conn, bool reused, Call& call) {
    co_await asio::this_coro::throw_if_cancelled(false);
    if (!reused) {
      if (auto connected = co_await Connect(*conn, call); !connected) {
        conn->Close();
        co_return Outcome{tl::make_unexpected(connected.error()), false};
      }
    }
    if (conn->tls) co_return co_await Exchange(*conn->tls, conn, reused, call);
    co_return co_await Exchange(*conn->plain, conn, reused, call);
  }

  static std::string TimeoutMessage(bool total, const Call& call, const char* phase,
                                    std::chrono::milliseconds limit) {
    const std::chrono::milliseconds ms = total ? call.timeouts.total : limit;
    return std::string(total ? "total" : phase) + " timeout after " + std::to_string(ms.count()) +
           " ms to " + call.route.host;
  }

  // DNS, TCP, proxy CONNECT and TLS handshake, all under the connect timeout.
  asio::awaitable<Result<void>> Connect(Connection& conn, const Call& call) {
    const Route& route = call.route;
    const std::string& host = route.via_proxy ? proxy_.host : route.host;
    const std::string& port = route.via_proxy ? proxy_.port : route.port;
    const std::string who = (route.via_proxy ? "proxy " : "") + HostPort(host, port);
    const auto connect_deadline =
        std::min(Clock::now() + call.timeouts.connect, call.total_deadline);
    const bool total_binds = connect_deadline == call.total_deadline;
    auto timeout = [&] {
      return Fail(ErrorCode::kUpstreamTimeout,
                  TimeoutMessage(total_binds, call, "connect", call.timeouts.connect));
    };
    // GCC 12 miscompiles some co_await-in-condition forms, so cancellation is read into a local
    // first and the error mapping is an ordinary function.
    auto failure = [&](const boost::system::error_code& ec, bool cancelled) -> Result<void> {
      if (cancelled) return Fail(ErrorCode::kCancelled, "request cancelled");
      if (ec == beast::error::timeout) return timeout();
      return Fail(ErrorCode::kUpstreamUnreachable,
                  "cannot connect to " + who + ": " + ec.message());
    };

    if (route.tls) {
      conn.tls.emplace(conn.strand, tls_.Get());
    } else {
      conn.plain.emplace(conn.strand);
    }

    beast::tcp_stream& stream = conn.Tcp();
    const auto dial_ec = co_await Dial(stream, host, port, connect_deadline);
    if (dial_ec) {
      const bool cancelled = co_await IsCancelled();
      co_return failure(dial_ec, cancelled);
    }
    if (route.tls && route.via_proxy) {
      const std::string authority = HostPort(route.host, route.port);
      int refused = 0;
      const auto tunnel_ec = co_await OpenTunnel(stream, authority, proxy_, options_.user_agent,
                                                 connect_deadline, refused);
      if (tunnel_ec) {
        if (refused != 0) {
          co_return Fail(ErrorCode::kUpstreamUnreachable,
                         "cannot connect to " + authority + ": proxy refused the tunnel (status " +
                             std::to_string(refused) + ")");
        }
        const bool cancelled = co_await IsCancelled();
        co_return failure(tunnel_ec, cancelled);
      }
    }
    if (route.tls) {
      tls_.PrepareConnection(conn.tls->native_handle(), route.host);
      stream.expires_at(connect_deadline);
      auto [hec] = co_await conn.tls->async_handshake(ssl::stream_base::client, kTuple);
      if (hec) {
        const bool cancelled = co_await IsCancelled();
        co_return failure(hec, cancelled);
      }
    }
    stream.expires_never();
    co_return util::Ok();
  }

  // Arms the Beast stream expiry for the next read or write: the idle gap, capped by what is left
  // of the total budget; remembers which one it was for the error message.
  static void Arm(beast::tcp_stream& stream, Call& call) {
    const auto idle_deadline = Clock::now() + call.timeouts.idle;
    call.armed_total = call.total_deadline <= idle_deadline;
    stream.expires_at(std::min(idle_deadline, call.total_deadline));
  }

  static Outcome ReadFailure(const boost::system::error_code& ec, const Call& call,
                             bool cancelled) {
    if (cancelled) return Failed(ErrorCode::kCancelled, "request cancelled");
    if (ec == beast::error::timeout) {
      return Failed(ErrorCode::kUpstreamTimeout,
                    TimeoutMessage(call.armed_total, call, "idle", call.timeouts.idle));
    }
    if (ec == http::error::body_limit) {
      return TooLarge("response larger than " + std::to_string(call.max_response_bytes) +
                      " bytes from " + call.route.host);
    }
    return Failed(ErrorCode::kUpstreamFailed,
                  "HTTP exchange with " + call.route.host + " failed: " + ec.message());
  }

  template <typename Stream>
  asio::awaitable<Outcome> Exchange(Stream& stream, std::shared_ptr<Connection> conn, bool reused,
                                    Call& call) {
    beast::tcp_stream& tcp_layer = conn->Tcp();
    Arm(tcp_layer, call);
    auto [wec, wn] = co_await http::async_write(stream, call.request, kTuple);
    if (wec) {
      conn->Close();
      const bool cancelled = co_await IsCancelled();
      if (reused && IsClosedByPeer(wec) && !cancelled) co_return Outcome{{}, true};
      co_return ReadFailure(wec, call, cancelled);
    }

    http::response_parser<http::buffer_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(call.max_response_bytes);
    if (call.request.method() == http::verb::head) parser.skip(true);
    Arm(tcp_layer, call);
    auto [hec, hn] = co_await http::async_read_header(stream, conn->buffer, parser, kTuple);
    if (hec) {
      conn->Close();
      const bool cancelled = co_await IsCancelled();
      if (reused && !parser.got_some() && IsClosedByPeer(hec) && !cancelled) {
        co_return Outcome{{}, true};
      }
      co_return ReadFailure(hec, call, cancelled);
    }

    HttpResponse response;
    response.status = static_cast<int>(parser.get().result_int());
    for (const auto& field : parser.get()) {
      response.headers.emplace_back(AsciiLower(field.name_string()), std::string(field.value()));
    }
    const bool to_sink = call.sink != nullptr && response.status / 100 == 2;
    std::array<char, kReadPiece> piece;
    std::size_t received = 0;
    while (!parser.is_done()) {
      auto& body = parser.get().body();
      body.data = piece.data();
      body.size = piece.size();
      body.more = true;
      Arm(tcp_layer, call);
      // read_some, not read: read would wait to fill the piece and hold back streamed tokens.
      auto [ec, n] = co_await http::async_read_some(stream, conn->buffer, parser, kTuple);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        conn->Close();
        const bool cancelled = co_await IsCancelled();
        co_return ReadFailure(ec, call, cancelled);
      }
      const std::size_t got = piece.size() - parser.get().body().size;
      if (got == 0) continue;
      received += got;
      if (received > call.max_response_bytes) {  // body_limit should already have caught it
        conn->Close();
        co_return ReadFailure(http::error::body_limit, call, false);
      }
      if (to_sink) {
        if (!(*call.sink)(std::string_view(piece.data(), got))) {
          conn->Close();
          co_return Failed(ErrorCode::kCancelled, "response stream stopped by the receiver");
        }
      } else {
        response.body.append(piece.data(), got);
      }
    }
    tcp_layer.expires_never();
    if (parser.keep_alive()) {
      Put(call.route.key, std::move(conn));
    } else {
      conn->Close();
    }
    co_return Outcome{std::move(response), false};
  }

  // Pool. Idle connections past idle_keepalive are closed when the pool is next touched for that
  // host rather than by a timer: a timer per idle connection would keep the io_context busy (and
  // `run()` from returning) for the whole keep-alive period.
  std::shared_ptr<Connection> Take(const std::string& key) {
    std::vector<std::shared_ptr<Connection>> expired;
    std::shared_ptr<Connection> found;
    {
      std::lock_guard lock(mutex_);
      auto it = idle_.find(key);
      if (it == idle_.end()) return nullptr;
      auto& list = it->second;
      const auto oldest_allowed = Clock::now() - options_.idle_keepalive;
      while (!list.empty() && list.front()->idle_since < oldest_allowed) {
        expired.push_back(std::move(list.front()));
        list.erase(list.begin());
      }
      if (!list.empty()) {
        found = std::move(list.back());  // the most recently used is the least likely stale
        list.pop_back();
      }
      if (list.empty()) idle_.erase(it);
    }
    for (auto& conn : expired) conn->Close();
    return found;
  }

  void Put(const std::string& key, std::shared_ptr<Connection> conn) {
    if (options_.max_idle_per_host == 0) {
      conn->Close();
      return;
    }
    conn->idle_since = Clock::now();
    std::shared_ptr<Connection> evicted;
    {
      std::lock_guard lock(mutex_);
      auto& list = idle_[key];
      if (list.size() >= options_.max_idle_per_host) {
        evicted = std::move(list.front());
        list.erase(list.begin());
      }
      list.push_back(std::move(conn));
    }
    if (evicted) evicted->Close();
  }

  const asio::any_io_executor executor_;
  const HttpClientOptions options_;
  const ProxyConfig proxy_;
  TlsClientContext tls_;  // shared by all connections

  std::mutex mutex_;
  // Guarded by mutex_. Oldest first per key.
  std::unordered_map<std::string, std::vector<std::shared_ptr<Connection>>> idle_;
};

}  // namespace

std::shared_ptr<HttpClient> MakeHttpClient(boost::asio::any_io_executor executor,
                                           HttpClientOptions options) {
  return std::make_shared<BeastHttpClient>(std::move(executor), std::move(options));
}

}  // namespace sb::net
