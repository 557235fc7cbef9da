#include "http/server.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "http/connection_counts.hpp"
#include "http/envelope.hpp"
#include "http/websocket_session.hpp"
#include "util/client_address.hpp"
#include "util/crypto.hpp"
#include "util/log_text.hpp"

namespace sb::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// Session bookkeeping that outlives the server object: coroutine frames destroyed late (with
// the io_context) still decrement these safely.
struct Registry {
  std::mutex mu;
  std::list<std::weak_ptr<beast::tcp_stream>> streams;    // guarded by mu
  std::list<std::weak_ptr<WebSocketSession>> websockets;  // guarded by mu
  bool closing = false;                                   // guarded by mu; CloseConnections ran
  std::atomic<int> sessions{0};
  std::atomic<int> in_flight{0};
  std::atomic<bool> draining{false};
};

struct CountGuard {
  std::atomic<int>& n;
  explicit CountGuard(std::atomic<int>& counter) : n(counter) { ++n; }
  ~CountGuard() { --n; }
};

// A request being handled, for WaitIdle and /metrics. A WebSocket connection stops counting once
// upgraded: it is long-lived and must not hold up shutdown.
class InFlight {
 public:
  InFlight(Registry& registry, Metrics& metrics) : registry_(registry), metrics_(metrics) {
    ++registry_.in_flight;
    metrics_.AddInFlight(1);
  }
  ~InFlight() { End(); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  void End() {
    if (ended_) return;
    ended_ = true;
    --registry_.in_flight;
    metrics_.AddInFlight(-1);
  }

 private:
  Registry& registry_;
  Metrics& metrics_;
  bool ended_ = false;
};

// Browsers cannot set headers on a WebSocket connection, so an upgrade may carry its credential
// as `?token=`, read as if it were `Authorization: Bearer <token>`. Only for upgrades: elsewhere a
// credential in the URL would only end up in proxies' logs and browser history.
void AcceptQueryToken(Request& req) {
  if (!req.Header("authorization").empty() || !req.Header("x-api-key").empty()) return;
  const auto token = req.Query("token");
  if (!token || token->empty()) return;
  req.headers.emplace_back("authorization", "Bearer " + std::string(*token));
}

bool IsSafeRequestId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return true;
}

bool IsLoopback(const asio::ip::address& a) {
  if (a.is_loopback()) return true;
  return a.is_v6() && a.to_v6().is_v4_mapped() &&
         asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
}

// RFC 9112 §6.3: a request whose Transfer-Encoding is anything but "chunked" alone has no length
// the server can trust (gzip, identity, "chunked, identity", a Content-Length beside it): if it
// were served, its body would be read as the next request on the connection (request
// smuggling). Returns why to refuse it (the connection is then closed), or nothing.
// Beast itself already refuses a second "chunked" and Content-Length before Transfer-Encoding.
std::optional<util::Error> RefusedTransferEncoding(
    const bhttp::request_parser<bhttp::string_body>& parser) {
  auto refuse = [](std::string why) {
    return util::Error{util::ErrorCode::kInvalidArgument, std::move(why)};
  };
  const auto& head = parser.get();
  const auto count = head.count(bhttp::field::transfer_encoding);
  if (count == 0) return std::nullopt;
  if (head.version() < 11) {
    // HTTP/1.0 has no transfer codings: the framing cannot be trusted (RFC 9112 §6.1).
    return refuse("malformed HTTP request: Transfer-Encoding in an HTTP/1.0 request");
  }
  const auto value = head[bhttp::field::transfer_encoding];
  if (count == 1 && beast::iequals(value, "chunked") && !head.count(bhttp::field::content_length)) {
    return std::nullopt;
  }
  if (count == 1 && parser.chunked() && !head.count(bhttp::field::content_length)) {
    // The length is known (chunked comes last), but not the codings before it. RFC 9112 §6.1
    // suggests 501; a client error is what it is, and no stranger gets a 5xx from us.
    return refuse("transfer coding is not supported: only chunked is");
  }
  return refuse("malformed HTTP request: Transfer-Encoding must be exactly chunked");
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io_in, asio::thread_pool& blocking_in, Router& router_in,
       Metrics& metrics_in, ServerOptions options_in)
      : io(io_in),
        blocking(blocking_in),
        router(router_in),
        metrics(metrics_in),
        options(std::move(options_in)),
        acceptor(asio::make_strand(io_in)),
        registry(std::make_shared<Registry>()),
        connections(std::make_shared<ConnectionCounts>(options.max_connections_per_address)),
        id_prefix(util::RandomUrlSafe(6)) {}

  asio::io_context& io;
  asio::thread_pool& blocking;
  Router& router;
  Metrics& metrics;
  ServerOptions options;
  tcp::acceptor acceptor;
  std::shared_ptr<Registry> registry;
  std::shared_ptr<ConnectionCounts> connections;
  std::string id_prefix;
  std::atomic<std::uint64_t> next_id{0};

  std::string NewRequestId() {
    return id_prefix + "-" + std::to_string(next_id.fetch_add(1, std::memory_order_relaxed));
  }

  asio::awaitable<void> AcceptLoop();
  // Runs an async route: starts it on the blocking pool, resumes when it responds.
  asio::awaitable<Response> StartAsync(const RouteMatch& match, Request& req);
  asio::awaitable<void> Session(tcp::socket socket);
  // An upgrade request to a WebSocket route: the refusal to answer over HTTP, or nullopt once
  // the connection was handed over and has ended.
  asio::awaitable<std::optional<Response>> ServeWebSocket(
      beast::tcp_stream& stream, bhttp::request<bhttp::string_body>& upgrade,
      const RouteMatch& match, Request& req, InFlight& in_flight, Clock::time_point started);
  bool AllowedOrigin(std::string_view origin) const;
  void AddCors(const bhttp::request<bhttp::string_body>& req,
               bhttp::response<bhttp::string_body>& res) const;
};

asio::awaitable<Response> HttpServer::Impl::StartAsync(const RouteMatch& match, Request& req) {
  return asio::async_initiate<decltype(asio::use_awaitable), void(Response)>(
      [this, &match, &req](auto handler) {
        // The completion handler is move-only; share it so the Respond (a std::function) can be
        // copied, and hand the response back on the handler's own executor.
        using Handler = decltype(handler);
        auto shared = std::make_shared<Handler>(std::move(handler));
        Respond respond = [shared](Response r) {
          auto executor = asio::get_associated_executor(*shared);
          asio::dispatch(executor,
                         [shared, r = std::move(r)]() mutable { (*shared)(std::move(r)); });
        };
        asio::post(blocking, [this, &match, &req, respond = std::move(respond)]() mutable {
          router.HandleAsync(match, req, std::move(respond));
        });
      },
      asio::use_awaitable);
}

asio::awaitable<void> HttpServer::Impl::AcceptLoop() {
  auto self = shared_from_this();
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(io), kTuple);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // Out of descriptors and similar: back off instead of spinning.
      spdlog::warn("accept failed: {}", ec.message());
      asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(50));
      co_await pause.async_wait(kTuple);
      continue;
    }
    boost::system::error_code ignored;
    const auto remote = socket.remote_endpoint(ec);
    if (ec) continue;  // already gone
    std::string key = util::ClientAddressKey(remote.address().to_string());
    bool first_refusal = false;
    if (!connections->TryAdd(key, first_refusal)) {
      if (first_refusal) {
        spdlog::warn("{} has {} connections open, the most allowed; closing more", key,
                     options.max_connections_per_address);
      }
      socket.close(ignored);
      continue;
    }
    socket.set_option(tcp::no_delay(true), ignored);
    auto executor = socket.get_executor();
    // The completion handler keeps the count until the session ends, however it ends.
    asio::co_spawn(executor, Session(std::move(socket)),
                   [connections = connections, key = std::move(key)](std::exception_ptr) {
                     connections->Remove(key);
                   });
  }
}

bool HttpServer::Impl::AllowedOrigin(std::string_view origin) const {
  for (const auto& allowed : options.cors_allow_origins) {
    if (allowed == "*" || allowed == origin) return true;
  }
  return false;
}

void HttpServer::Impl::AddCors(const bhttp::request<bhttp::string_body>& req,
                               bhttp::response<bhttp::string_body>& res) const {
  if (options.cors_allow_origins.empty()) return;
  const auto origin = req[bhttp::field::origin];
  if (origin.empty() || !AllowedOrigin(origin)) return;
  res.set(bhttp::field::access_control_allow_origin, origin);
  res.set(bhttp::field::vary, "Origin");
  res.set(bhttp::field::access_control_allow_headers,
          "Authorization, Content-Type, X-API-Key, X-Request-Id");
  res.set(bhttp::field::access_control_allow_methods, "GET, POST, PUT, DELETE, OPTIONS");
  res.set(bhttp::field::access_control_expose_headers, "X-Request-Id");
}

asio::awaitable<void> HttpServer::Impl::Session(tcp::socket socket) {
  auto self = shared_from_this();
  auto reg = registry;
  CountGuard session_guard(reg->sessions);
  metrics.AddConnections(1);
  struct ConnGuard {
    Metrics& m;
    ~ConnGuard() { m.AddConnections(-1); }
  } conn_guard{metrics};

  boost::system::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  const std::string remote_address = ec ? std::string("unknown") : remote.address().to_string();
  const bool from_loopback = !ec && IsLoopback(remote.address());

  auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
  std::list<std::weak_ptr<beast::tcp_stream>>::iterator reg_it;
  {
    std::lock_guard lock(reg->mu);
    reg_it = reg->streams.insert(reg->streams.end(), stream);
  }
  struct Unregister {
    Registry& r;
    std::list<std::weak_ptr<beast::tcp_stream>>::iterator it;
    ~Unregister() {
      std::lock_guard lock(r.mu);
      r.streams.erase(it);
    }
  } unregister{*reg, reg_it};

  beast::flat_buffer buffer;
  buffer.max_size(64 * 1024 + options.body_limit_bytes);

  // A request refused before it reached the router: the status comes from the error's code.
  // (Code and message travel apart: GCC 12 mis-copies an aggregate parameter of a coroutine
  // lambda, which corrupted the heap.)
  auto send_error = [&](util::ErrorCode code, std::string message,
                        const std::string& request_id) -> asio::awaitable<void> {
    Response r = JsonError({code, std::move(message)}, request_id);
    const int status = r.status;
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), 11};
    res.set(bhttp::field::content_type, "application/json");
    res.set("X-Request-Id", request_id);
    res.keep_alive(false);
    res.body() = std::move(r.body);
    res.prepare_payload();
    stream->expires_after(std::chrono::seconds(5));
    co_await bhttp::async_write(*stream, res, kTuple);
    metrics.RecordRequest(status, 0);
    spdlog::info("{} - - {} rid={} (rejected while reading)", remote_address, status, request_id);
  };

  for (;;) {
    // Wait for the next request under the idle timeout; once it starts, it has to arrive whole
    // within the header and body timeouts (slow senders are cut off).
    if (buffer.size() == 0) {
      // The first bytes of the next request may take up to the idle timeout (a kept-alive
      // connection between requests); the rest of the head has the header timeout.
      stream->expires_after(options.idle_timeout);
      auto [first_ec, first_n] = co_await stream->async_read_some(buffer.prepare(4096), kTuple);
      if (first_ec || reg->draining) break;
      buffer.commit(first_n);
    }
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(options.body_limit_bytes);
    parser.header_limit(16 * 1024);
    stream->expires_after(options.header_timeout);
    auto [hdr_ec, hdr_n] = co_await bhttp::async_read_header(*stream, buffer, parser, kTuple);
    (void)hdr_n;
    const auto started = Clock::now();
    std::string request_id;
    {
      // Also after an error: a header rejected for its Content-Length has had its fields
      // stored, and the client's id belongs on the 413.
      const auto incoming = parser.get()["X-Request-Id"];
      request_id = IsSafeRequestId(incoming) ? std::string(incoming) : NewRequestId();
    }
    if (hdr_ec) {
      if (hdr_ec == bhttp::error::body_limit) {
        co_await send_error(util::ErrorCode::kPayloadTooLarge,
                            "request body is larger than the limit of " +
                                std::to_string(options.body_limit_bytes) + " bytes",
                            request_id);
      } else if (hdr_ec == bhttp::error::header_limit) {
        co_await send_error(util::ErrorCode::kHeadersTooLarge, "request headers are too large",
                            request_id);
      } else if (hdr_ec != beast::error::timeout && hdr_ec != bhttp::error::end_of_stream &&
                 hdr_ec != asio::error::eof && hdr_ec != asio::error::connection_reset &&
                 hdr_ec != asio::error::operation_aborted) {
        co_await send_error(util::ErrorCode::kInvalidArgument,
                            "malformed HTTP request: " + hdr_ec.message(), request_id);
      }
      break;
    }
    if (auto refused = RefusedTransferEncoding(parser)) {
      co_await send_error(refused->code, std::move(refused->message), request_id);
      break;
    }
    InFlight in_flight(*reg, metrics);

    auto& head = parser.get();
    if (bhttp::token_list(head[bhttp::field::expect]).exists("100-continue")) {
      static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      stream->expires_after(options.header_timeout);
      auto [cont_ec, cont_n] = co_await asio::async_write(
          *stream, asio::buffer(kContinue, sizeof kContinue - 1), kTuple);
      (void)cont_n;
      if (cont_ec) break;
    }
    // The body must keep flowing (no pause longer than the header timeout) and be complete
    // within the body timeout.
    const auto body_deadline = Clock::now() + options.body_timeout;
    while (!parser.is_done()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(body_deadline - Clock::now());
      boost::system::error_code body_ec = beast::error::timeout;
      if (left.count() > 0) {
        stream->expires_after(std::min<std::chrono::milliseconds>(options.header_timeout, left));
        auto [read_ec, read_n] = co_await bhttp::async_read_some(*stream, buffer, parser, kTuple);
        (void)read_n;
        body_ec = read_ec;
      }
      if (body_ec) {
        if (body_ec == bhttp::error::body_limit) {
          co_await send_error(util::ErrorCode::kPayloadTooLarge,
                              "request body is larger than the limit of " +
                                  std::to_string(options.body_limit_bytes) + " bytes",
                              request_id);
        } else if (body_ec != beast::error::timeout && body_ec != bhttp::error::end_of_stream &&
                   body_ec != bhttp::error::partial_message && body_ec != asio::error::eof &&
                   body_ec != asio::error::connection_reset) {
          co_await send_error(util::ErrorCode::kInvalidArgument,
                              "malformed HTTP request body: " + body_ec.message(), request_id);
        }
        break;
      }
    }
    if (!parser.is_done()) break;
    auto req_msg = parser.release();

    bhttp::response<bhttp::string_body> res;
    res.version(req_msg.version());
    Request req;
    req.method = std::string(req_msg.method_string());
    req.remote_address = remote_address;
    req.from_loopback = from_loopback;
    req.request_id = request_id;
    auto target = boost::urls::parse_origin_form(req_msg.target());
    Response out;
    if (!target) {
      out = JsonError({util::ErrorCode::kInvalidArgument, "malformed request target"}, request_id);
      req.path = "?";
    } else {
      req.path = std::string(target->path());
      for (auto param : target->params()) {
        req.query.emplace_back(std::string(param.key), std::string(param.value));
      }
      req.headers.reserve(8);
      for (const auto& field : req_msg) {
        req.headers.emplace_back(Lower(field.name_string()), std::string(field.value()));
      }
      req.body = std::move(req_msg.body());
      if (req_msg.method() == bhttp::verb::options && !options.cors_allow_origins.empty()) {
        out.status = 204;
        out.content_type.clear();
      } else {
        RouteMatch match = router.Match(req);
        if (match.route && match.route->websocket && beast::websocket::is_upgrade(req_msg)) {
          auto refusal = co_await ServeWebSocket(*stream, req_msg, match, req, in_flight, started);
          if (!refusal) co_return;
          out = std::move(*refusal);
        } else if (auto quick = router.TryHandleWithoutBlocking(match, req)) {
          out = std::move(*quick);
        } else if (match.route && match.route->async_handler) {
          out = co_await StartAsync(match, req);
        } else {
          out = co_await asio::co_spawn(
              blocking,
              [this, &match, &req]() -> asio::awaitable<Response> {
                co_return router.Handle(match, req);
              },
              asio::use_awaitable);
        }
      }
    }

    res.result(static_cast<unsigned>(out.status));
    if (!out.content_type.empty()) res.set(bhttp::field::content_type, out.content_type);
    res.set("X-Request-Id", request_id);
    for (auto& [name, value] : out.headers) res.set(name, value);
    AddCors(req_msg, res);
    res.body() = std::move(out.body);
    res.keep_alive(req_msg.keep_alive() && !reg->draining);
    res.prepare_payload();
    // RFC 9110 §8.6: a 304's Content-Length could only be that of the 200 it stands for; none
    // is right, 0 is not (Beast's prepare_payload sets 0 for the empty body).
    if (out.status == 304) res.erase(bhttp::field::content_length);
    const auto body_size = res.body().size();
    if (req_msg.method() == bhttp::verb::head) {
      // RFC 9110 §9.3.2: the headers of the GET answer, with its Content-Length, and no body.
      res.body().clear();
      res.content_length(body_size);
    }

    stream->expires_after(options.body_timeout);
    auto [write_ec, write_n] = co_await bhttp::async_write(*stream, res, kTuple);
    (void)write_n;
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
    metrics.RecordRequest(out.status, micros);
    // The query string is left out on purpose: it may carry a token.
    spdlog::info("{} {} {} {} {}B {}us rid={}", remote_address, req.method,
                 util::EscapeForLog(req.path), out.status, body_size, micros, request_id);
    if (write_ec || !res.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream->close();
}

asio::awaitable<std::optional<Response>> HttpServer::Impl::ServeWebSocket(
    beast::tcp_stream& stream, bhttp::request<bhttp::string_body>& upgrade, const RouteMatch& match,
    Request& req, InFlight& in_flight, Clock::time_point started) {
  if (registry->draining) {
    co_return JsonError({util::ErrorCode::kUnavailable, "the server is shutting down"},
                        req.request_id);
  }
  AcceptQueryToken(req);
  auto session = WebSocketSession::Create(stream.get_executor(), blocking, req.request_id);
  // Captures by reference only: GCC 12 destroys a temporary lambda in a co_await expression
  // twice, which a by-value shared_ptr capture does not survive.
  auto peer = session->peer();
  auto accepted = co_await asio::co_spawn(
      blocking,
      [this, &match, &req, &peer]() -> asio::awaitable<util::Result<WebSocketHandlers>> {
        co_return router.AcceptWebSocket(match, req, peer);
      },
      asio::use_awaitable);
  if (!accepted) co_return JsonError(accepted.error(), req.request_id);

  in_flight.End();
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
  metrics.RecordRequest(101, micros);
  spdlog::info("{} {} {} 101 {}us rid={}", req.remote_address, req.method,
               util::EscapeForLog(req.path), micros, req.request_id);

  auto reg = registry;
  std::list<std::weak_ptr<WebSocketSession>>::iterator reg_it;
  {
    // Under the lock with CloseConnections: either it sees this session or we see `closing`.
    std::lock_guard lock(reg->mu);
    reg_it = reg->websockets.insert(reg->websockets.end(), session);
    if (reg->closing) session->Shutdown();
  }
  struct Unregister {
    Registry& r;
    std::list<std::weak_ptr<WebSocketSession>>::iterator it;
    ~Unregister() {
      std::lock_guard lock(r.mu);
      r.websockets.erase(it);
    }
  } unregister{*reg, reg_it};
  co_await session->Run(stream.release_socket(), std::move(upgrade), std::move(*accepted));
  co_return std::nullopt;
}

HttpServer::HttpServer(asio::io_context& io, asio::thread_pool& blocking, Router& router,
                       Metrics& metrics, ServerOptions options)
    : impl_(std::make_shared<Impl>(io, blocking, router, metrics, std::move(options))) {}

HttpServer::~HttpServer() {
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
}

util::Result<void> HttpServer::Start() {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.host, ec);
  const std::string where = impl_->options.host + ":" + std::to_string(impl_->options.port);
  if (ec) return util::Fail(util::ErrorCode::kInvalidArgument, "bad listen address " + where);
  tcp::endpoint endpoint(address, impl_->options.port);
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return util::Fail(util::ErrorCode::kUnavailable,
                      "cannot listen on " + where + ": " + ec.message());
  }
  asio::co_spawn(acceptor.get_executor(), impl_->AcceptLoop(), asio::detached);
  return util::Ok();
}

std::uint16_t HttpServer::port() const {
  boost::system::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

void HttpServer::StopAccepting() {
  impl_->registry->draining = true;
  auto impl = impl_;
  asio::post(impl->acceptor.get_executor(), [impl] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
}

bool HttpServer::WaitIdle(std::chrono::milliseconds grace) {
  const auto deadline = Clock::now() + grace;
  while (impl_->registry->in_flight.load() > 0) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void HttpServer::CloseConnections() {
  auto reg = impl_->registry;
  {
    std::lock_guard lock(reg->mu);
    reg->closing = true;
    for (auto& weak : reg->websockets) {
      if (auto session = weak.lock()) session->Shutdown();
    }
    for (auto& weak : reg->streams) {
      if (auto stream = weak.lock()) {
        asio::post(stream->get_executor(), [stream] {
          boost::system::error_code ignored;
          stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
          stream->socket().close(ignored);
        });
      }
    }
  }
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (reg->sessions.load() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace sb::http
