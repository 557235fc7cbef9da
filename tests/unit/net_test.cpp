// Tests of src/net: the stream parsers on their own, and the Beast client against small fake
// servers (plain, TLS with a certificate made at test time, an HTTP proxy) on 127.0.0.1 port 0.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.hpp"
#include "net/stream_parsers.hpp"

namespace sb::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using util::ErrorCode;
using util::Result;

// ---------------------------------------------------------------------------------------------
// Stream parsers

std::vector<SseEvent> FeedSse(const std::vector<std::string>& pieces, bool finish = true) {
  SseParser parser;
  std::vector<SseEvent> events;
  auto on_event = [&](const SseEvent& e) { events.push_back(e); };
  for (const auto& p : pieces) EXPECT_TRUE(parser.Feed(p, on_event));
  if (finish) parser.Finish(on_event);
  return events;
}

TEST(SseParserTest, SplitAtEveryBytePositionGivesTheSameEvents) {
  const std::string stream =
      "event: delta\r\ndata: {\"a\":1}\r\ndata:  two\r\nid: 7\r\n\r\n"
      ": OPENROUTER PROCESSING\r\n\r\n"
      "data: [DONE]\r\n\r\n";
  for (std::size_t i = 0; i <= stream.size(); ++i) {
    for (std::size_t j = i; j <= stream.size(); j += 7) {
      auto events = FeedSse({stream.substr(0, i), stream.substr(i, j - i), stream.substr(j)});
      ASSERT_EQ(events.size(), 2u) << "split at " << i << "," << j;
      EXPECT_EQ(events[0].event, "delta");
      EXPECT_EQ(events[0].data, "{\"a\":1}\n two");  // only one leading space is stripped
      EXPECT_EQ(events[0].id, "7");
      EXPECT_EQ(events[1].event, "");
      EXPECT_EQ(events[1].data, "[DONE]");
    }
  }
}

TEST(SseParserTest, ByteByByteWithLf) {
  const std::string stream = "data: a\n\ndata: b\ndata: c\n\n";
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  auto events = FeedSse(bytes);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "a");
  EXPECT_EQ(events[1].data, "b\nc");
}

TEST(SseParserTest, CrLfAcrossPiecesIsOneLineEnd) {
  // Counted twice, the CR/LF pair would end the event after "a" and yield two events.
  auto events = FeedSse({"data: a\r", "\ndata: b\r\n\r\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a\nb");
}

TEST(SseParserTest, CrOnlyLineEnds) {
  auto events = FeedSse({"data: x\rdata: y\r\rdata:z\r\r"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "x\ny");
  EXPECT_EQ(events[1].data, "z");
}

TEST(SseParserTest, EventsComeOutBeforeTheStreamEnds) {
  SseParser parser;
  std::vector<std::string> data;
  auto on_event = [&](const SseEvent& e) { data.push_back(e.data); };
  EXPECT_TRUE(parser.Feed("data: first\n\ndata: sec", on_event));
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0], "first");
  EXPECT_TRUE(parser.Feed("ond\n\n", on_event));
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[1], "second");
}

TEST(SseParserTest, CommentsAndEventOnlyAndFinish) {
  auto events = FeedSse({": keep-alive\n\nevent: ping\n\ndata\n\ndata: tail"});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event, "ping");  // Dify's keep-alive: an event name without data
  EXPECT_EQ(events[0].data, "");
  EXPECT_EQ(events[1].data, "");  // "data" without a colon is an empty data line
  EXPECT_EQ(events[1].event, "");
  EXPECT_EQ(events[2].data, "tail");  // pending at end of stream, dispatched by Finish
  EXPECT_TRUE(FeedSse({"data: tail"}, /*finish=*/false).empty());
}

TEST(SseParserTest, RejectsOversizedEvent) {
  SseParser parser;
  parser.max_event_bytes = 10;
  auto ignore = [](const SseEvent&) {};
  EXPECT_FALSE(parser.Feed("data: 0123456789abcdef", ignore));
  SseParser growing;
  growing.max_event_bytes = 10;
  EXPECT_TRUE(growing.Feed("data: 012345\n", ignore));
  EXPECT_FALSE(growing.Feed("data: 012345\n", ignore));
}

TEST(LineSplitterTest, LfCrLfEmptyLinesAndEverySplit) {
  const std::string stream = "{\"a\":1}\n\n{\"b\":2}\r\n\r\n{\"c\":3}\n{\"d\"";
  for (std::size_t i = 0; i <= stream.size(); ++i) {
    LineSplitter splitter;
    std::vector<std::string> lines;
    auto on_line = [&](std::string_view l) { lines.emplace_back(l); };
    EXPECT_TRUE(splitter.Feed(stream.substr(0, i), on_line));
    EXPECT_TRUE(splitter.Feed(stream.substr(i), on_line));
    EXPECT_EQ(lines.size(), 3u);
    splitter.Finish(on_line);
    ASSERT_EQ(lines.size(), 4u) << "split at " << i;
    EXPECT_EQ(lines[0], "{\"a\":1}");
    EXPECT_EQ(lines[1], "{\"b\":2}");
    EXPECT_EQ(lines[2], "{\"c\":3}");
    EXPECT_EQ(lines[3], "{\"d\"");
  }
}

TEST(LineSplitterTest, RejectsOversizedLine) {
  LineSplitter splitter;
  splitter.max_line_bytes = 4;
  auto ignore = [](std::string_view) {};
  EXPECT_TRUE(splitter.Feed("abcd\n", ignore));
  EXPECT_FALSE(splitter.Feed("abcdef", ignore));
}

// ---------------------------------------------------------------------------------------------
// Proxy settings

TEST(ProxyFromEnvironmentTest, PrefersHttpsProxyAndKeepsExplicitOptions) {
  std::vector<std::pair<std::string, std::string>> env = {{"http_proxy", "http://plain:3128"},
                                                          {"HTTPS_PROXY", "secure:8080"},
                                                          {"no_proxy", "localhost,.internal"},
                                                          {"PATH", "/usr/bin"}};
  HttpClientOptions from_env = WithProxyFromEnvironment({}, env);
  EXPECT_EQ(from_env.proxy_url, "http://secure:8080");  // scheme added when missing
  EXPECT_EQ(from_env.no_proxy, "localhost,.internal");

  HttpClientOptions explicit_options;
  explicit_options.proxy_url = "http://mine:1";
  explicit_options.no_proxy = "*";
  HttpClientOptions kept = WithProxyFromEnvironment(explicit_options, env);
  EXPECT_EQ(kept.proxy_url, "http://mine:1");
  EXPECT_EQ(kept.no_proxy, "*");

  EXPECT_EQ(WithProxyFromEnvironment({}, {{"http_proxy", "http://p:1"}}).proxy_url, "http://p:1");
  EXPECT_EQ(WithProxyFromEnvironment({}, {{"ALL_PROXY", "http://a:2"}}).proxy_url, "http://a:2");
  EXPECT_EQ(WithProxyFromEnvironment({}, {{"HTTPS_PROXY", ""}}).proxy_url, "");
}

// ---------------------------------------------------------------------------------------------
// Fake servers

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// Accepts on 127.0.0.1:0 and runs `handler` for every connection on its own I/O thread.
class FakeServer {
 public:
  using Handler = std::function<asio::awaitable<void>(tcp::socket)>;

  explicit FakeServer(Handler handler)
      : handler_(std::move(handler)),
        acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(ioc_, Accept(), asio::detached);
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~FakeServer() {
    ioc_.stop();
    thread_.join();
  }

  std::uint16_t port() const { return port_; }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int connections() const { return connections_; }

 private:
  asio::awaitable<void> Accept() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(kTuple);
      if (ec) co_return;
      ++connections_;
      asio::co_spawn(ioc_, handler_(std::move(socket)), asio::detached);
    }
  }

  Handler handler_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// What a fake server saw, read by the test thread.
class Seen {
 public:
  void Add(std::string s) {
    std::lock_guard lock(mu_);
    items_.push_back(std::move(s));
  }
  std::vector<std::string> All() const {
    std::lock_guard lock(mu_);
    return items_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> items_;
};

using Request = http::request<http::string_body>;

// Serves requests on one connection in turn; `reply` gives the raw response bytes.
FakeServer::Handler ServeEach(std::function<std::string(const Request&)> reply) {
  return [reply](tcp::socket socket) -> asio::awaitable<void> {
    beast::flat_buffer buffer;
    for (;;) {
      Request req;
      auto [ec, n] = co_await http::async_read(socket, buffer, req, kTuple);
      if (ec) co_return;
      const std::string raw = reply(req);
      auto [wec, wn] = co_await asio::async_write(socket, asio::buffer(raw), kTuple);
      if (wec || raw.find("Connection: close") != std::string::npos) co_return;
    }
  };
}

std::string Ok200(const std::string& body, const std::string& extra_headers = "") {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extra_headers + "\r\n" + body;
}

asio::awaitable<void> Sleep(std::chrono::milliseconds d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(kTuple);
}

// A client on a private io_context; Send runs it until the call and all its work finish, which
// also proves that nothing is left pending (no leaked timers or operations).
struct Rig {
  explicit Rig(HttpClientOptions options = {})
      : client(MakeHttpClient(ioc.get_executor(), std::move(options))) {}

  Result<HttpResponse> Send(HttpRequest request, BodySink sink = nullptr) {
    std::optional<Result<HttpResponse>> out;
    asio::co_spawn(ioc, client->Send(std::move(request), std::move(sink)),
                   [&](std::exception_ptr, Result<HttpResponse> r) { out = std::move(r); });
    ioc.restart();
    ioc.run();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : util::Fail(ErrorCode::kInternal, "no result");
  }

  asio::io_context ioc;
  std::shared_ptr<HttpClient> client;
};

HttpClientOptions Options(const std::function<void(HttpClientOptions&)>& edit) {
  HttpClientOptions options;
  edit(options);
  return options;
}

HttpRequest Get(const std::string& url) {
  HttpRequest req;
  req.url = url;
  return req;
}

// ---------------------------------------------------------------------------------------------
// Plain HTTP

TEST(HttpClientTest, SendsRequestAndReadsResponse) {
  Seen seen;
  FakeServer server(ServeEach([&](const Request& req) {
    seen.Add(std::string(req.method_string()) + " " + std::string(req.target()));
    seen.Add("host=" + std::string(req[http::field::host]));
    seen.Add("auth=" + std::string(req[http::field::authorization]));
    seen.Add("ct=" + std::string(req[http::field::content_type]));
    seen.Add("ae=" + std::string(req[http::field::accept_encoding]));
    seen.Add("ua=" + std::string(req[http::field::user_agent]));
    seen.Add("body=" + req.body());
    return Ok200("{\"ok\":true}", "X-Request-Id: abc\r\nContent-Type: application/json\r\n");
  }));
  Rig rig;
  HttpRequest req = Get(server.Url("/v1/chat/completions?x=1&y=2"));
  req.method = "POST";
  req.headers.emplace_back("Authorization", "Bearer secret");
  req.body = "{\"model\":\"m\"}";
  auto res = rig.Send(std::move(req));
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "{\"ok\":true}");
  EXPECT_EQ(res->Header("x-request-id"), "abc");
  EXPECT_EQ(res->Header("content-type"), "application/json");
  EXPECT_EQ(res->Header("absent"), "");
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  EXPECT_EQ(seen.All(),
            (std::vector<std::string>{"POST /v1/chat/completions?x=1&y=2", "host=" + host,
                                      "auth=Bearer secret", "ct=application/json", "ae=identity",
                                      "ua=Switchboard", "body={\"model\":\"m\"}"}));
}

TEST(HttpClientTest, NonSuccessStatusIsAResponseNotAnError) {
  FakeServer server(ServeEach([](const Request&) {
    return std::string(
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nContent-Length: 4\r\n"
        "\r\nslow");
  }));
  Rig rig;
  bool sink_called = false;
  auto res = rig.Send(Get(server.Url("/")), [&](std::string_view) {
    sink_called = true;
    return true;
  });
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->Header("retry-after"), "2");
  EXPECT_EQ(res->body, "slow");  // a non-2xx body goes to the response, not the sink
  EXPECT_FALSE(sink_called);
}

TEST(HttpClientTest, ReusesKeptAliveConnection) {
  FakeServer server(ServeEach([](const Request& req) { return Ok200(std::string(req.target())); }));
  Rig rig;
  for (int i = 0; i < 3; ++i) {
    auto res = rig.Send(Get(server.Url("/n" + std::to_string(i))));
    ASSERT_TRUE(res) << res.error().message;
    EXPECT_EQ(res->body, "/n" + std::to_string(i));
  }
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpClientTest, DoesNotReuseConnectionTheServerCloses) {
  FakeServer server(ServeEach([](const Request&) { return Ok200("x", "Connection: close\r\n"); }));
  Rig rig;
  ASSERT_TRUE(rig.Send(Get(server.Url("/"))));
  ASSERT_TRUE(rig.Send(Get(server.Url("/"))));
  EXPECT_EQ(server.connections(), 2);
}

TEST(HttpClientTest, ReplacesPooledConnectionClosedBetweenRequests) {
  // Answers keep-alive, then hangs up anyway: the pooled connection is dead when reused.
  FakeServer server([](tcp::socket socket) -> asio::awaitable<void> {
    beast::flat_buffer buffer;
    Request req;
    auto [ec, n] = co_await http::async_read(socket, buffer, req, kTuple);
    if (ec) co_return;
    const std::string raw = Ok200("fine");
    co_await asio::async_write(socket, asio::buffer(raw), kTuple);
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  });
  Rig rig;
  ASSERT_TRUE(rig.Send(Get(server.Url("/"))));
  std::this_thread::sleep_for(50ms);  // let the FIN arrive
  HttpRequest post = Get(server.Url("/"));
  post.method = "POST";
  post.body = "{}";
  auto res = rig.Send(std::move(post));
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->body, "fine");
  EXPECT_EQ(server.connections(), 2);
}

TEST(HttpClientTest, StreamsChunkedBodyAsItArrives) {
  std::atomic<bool> second_sent{false};
  FakeServer server([&](tcp::socket socket) -> asio::awaitable<void> {
    beast::flat_buffer buffer;
    Request req;
    auto [ec, n] = co_await http::async_read(socket, buffer, req, kTuple);
    if (ec) co_return;
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        "f\r\ndata: {\"a\":1}\n\n\r\n";
    co_await asio::async_write(socket, asio::buffer(head), kTuple);
    co_await Sleep(100ms);
    second_sent = true;
    std::string tail = "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n";
    co_await asio::async_write(socket, asio::buffer(tail), kTuple);
    Request next;
    co_await http::async_read(socket, buffer, next, kTuple);
  });
  Rig rig;
  SseParser sse;
  std::vector<std::pair<std::string, bool>> events;  // data, whether the server had sent more
  auto res = rig.Send(Get(server.Url("/stream")), [&](std::string_view piece) {
    return sse.Feed(piece, [&](const SseEvent& e) { events.emplace_back(e.data, second_sent); });
  });
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].first, "{\"a\":1}");
  EXPECT_FALSE(events[0].second) << "first event was held back until the stream ended";
  EXPECT_EQ(events[1].first, "[DONE]");
}

TEST(HttpClientTest, SinkReturningFalseCancels) {
  FakeServer server(ServeEach([](const Request&) {
    return std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
  }));
  Rig rig;
  auto res = rig.Send(Get(server.Url("/")), [](std::string_view) { return false; });
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kCancelled);
}

TEST(HttpClientTest, ConnectionRefusedIsUnreachable) {
  std::uint16_t port;
  {
    asio::io_context ioc;
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }
  Rig rig;
  auto res = rig.Send(Get("http://127.0.0.1:" + std::to_string(port) + "/"));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamUnreachable);
  EXPECT_NE(res.error().message.find("cannot connect to 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << res.error().message;
}

TEST(HttpClientTest, RejectsBadUrls) {
  Rig rig;
  for (const char* url : {"ftp://example.com/", "not a url", "http:///nohost", ""}) {
    auto res = rig.Send(Get(url));
    ASSERT_FALSE(res) << url;
    EXPECT_EQ(res.error().code, ErrorCode::kInvalidArgument) << url;
  }
}

FakeServer::Handler NeverAnswers() {
  return [](tcp::socket socket) -> asio::awaitable<void> {
    std::array<char, 4096> buf;
    for (;;) {  // swallow the request, answer nothing, notice when the client hangs up
      auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf), kTuple);
      if (ec) co_return;
    }
  };
}

TEST(HttpClientTest, IdleTimeout) {
  FakeServer server(NeverAnswers());
  Rig rig;
  HttpRequest req = Get(server.Url("/"));
  req.timeouts.idle = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto res = rig.Send(std::move(req));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_NE(res.error().message.find("idle timeout after 300 ms to 127.0.0.1"), std::string::npos)
      << res.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(HttpClientTest, TotalTimeoutWhileDataTrickles) {
  FakeServer server([](tcp::socket socket) -> asio::awaitable<void> {
    beast::flat_buffer buffer;
    Request req;
    co_await http::async_read(socket, buffer, req, kTuple);
    std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    co_await asio::async_write(socket, asio::buffer(head), kTuple);
    for (int i = 0; i < 100; ++i) {  // never idle long enough for the idle timeout
      std::string chunk = "1\r\nx\r\n";
      auto [ec, n] = co_await asio::async_write(socket, asio::buffer(chunk), kTuple);
      if (ec) co_return;
      co_await Sleep(50ms);
    }
  });
  Rig rig;
  HttpRequest req = Get(server.Url("/"));
  req.timeouts.total = 300ms;
  req.timeouts.idle = 10s;
  const auto start = std::chrono::steady_clock::now();
  auto res = rig.Send(std::move(req), [](std::string_view) { return true; });
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_NE(res.error().message.find("total timeout after 300 ms"), std::string::npos)
      << res.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(HttpClientTest, BodyOverTheCapFails) {
  FakeServer server(ServeEach([](const Request& req) {
    if (req.target() == "/chunked") {
      std::string raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
      for (int i = 0; i < 4; ++i) raw += "40\r\n" + std::string(64, 'x') + "\r\n";
      return raw + "0\r\n\r\n";
    }
    return Ok200(std::string(1000, 'x'));
  }));
  Rig rig;
  HttpRequest req = Get(server.Url("/sized"));
  req.max_response_bytes = 100;
  auto res = rig.Send(req);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(res.error().message.find("response larger than 100 bytes"), std::string::npos)
      << res.error().message;

  req.url = server.Url("/chunked");
  std::size_t streamed = 0;
  res = rig.Send(req, [&](std::string_view piece) {
    streamed += piece.size();
    return true;
  });
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_LE(streamed, 100u);
}

TEST(HttpClientTest, ServerClosingMidBodyFails) {
  FakeServer server([](tcp::socket socket) -> asio::awaitable<void> {
    beast::flat_buffer buffer;
    Request req;
    co_await http::async_read(socket, buffer, req, kTuple);
    std::string raw = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..";
    co_await asio::async_write(socket, asio::buffer(raw), kTuple);
    socket.close();
  });
  Rig rig;
  auto res = rig.Send(Get(server.Url("/")));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamFailed);
}

TEST(HttpClientTest, CancellationSlotCancelsPromptlyAndClosesTheSocket) {
  std::atomic<bool> client_hung_up{false};
  FakeServer server([&](tcp::socket socket) -> asio::awaitable<void> {
    std::array<char, 4096> buf;
    for (;;) {
      auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf), kTuple);
      if (ec) break;
    }
    client_hung_up = true;
  });
  asio::io_context ioc;
  auto client = MakeHttpClient(ioc.get_executor(), {});
  asio::cancellation_signal signal;
  std::optional<Result<HttpResponse>> out;
  asio::co_spawn(
      ioc, client->Send(Get(server.Url("/"))),
      asio::bind_cancellation_slot(
          signal.slot(), [&](std::exception_ptr, Result<HttpResponse> r) { out = std::move(r); }));
  asio::steady_timer timer(ioc, 100ms);
  timer.async_wait(
      [&](boost::system::error_code) { signal.emit(asio::cancellation_type::terminal); });
  const auto start = std::chrono::steady_clock::now();
  ioc.run();
  ASSERT_TRUE(out.has_value());
  ASSERT_FALSE(*out);
  EXPECT_EQ(out->error().code, ErrorCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  for (int i = 0; i < 100 && !client_hung_up; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(client_hung_up);
}

asio::awaitable<void> SendSeveral(std::shared_ptr<HttpClient> client, std::string url,
                                  std::atomic<int>& ok) {
  for (int i = 0; i < 5; ++i) {
    auto res = co_await client->Send(Get(url));
    if (res && res->status == 200 && res->body == "/shared") ++ok;
  }
}

TEST(HttpClientTest, SharedByCoroutinesOnSeveralThreads) {
  FakeServer server(ServeEach([](const Request& req) { return Ok200(std::string(req.target())); }));
  asio::io_context ioc;
  HttpClientOptions options;
  options.max_idle_per_host = 4;
  auto client = MakeHttpClient(ioc.get_executor(), options);
  std::atomic<int> ok{0};
  for (int i = 0; i < 16; ++i) {
    asio::co_spawn(ioc, SendSeveral(client, server.Url("/shared"), ok), asio::detached);
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { ioc.run(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 80);
  EXPECT_LE(server.connections(), 16);
}

// ---------------------------------------------------------------------------------------------
// TLS

// A self-signed certificate made at test time; the PEM file doubles as the trusted CA file.
class TestCert {
 public:
  explicit TestCert(const std::string& san) {
    key_ = EVP_EC_gen("P-256");
    cert_ = X509_new();
    X509_set_version(cert_, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert_), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert_), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert_), 24 * 3600);
    X509_set_pubkey(cert_, key_);
    X509_NAME* name = X509_get_subject_name(cert_);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("switchboard test"), -1, -1,
                               0);
    X509_set_issuer_name(cert_, name);
    AddExtension(NID_subject_alt_name, san);
    AddExtension(NID_basic_constraints, "critical,CA:TRUE");
    X509_sign(cert_, key_, EVP_sha256());
    path_ = (std::filesystem::temp_directory_path() / ("sb_net_test_" + std::to_string(::getpid()) +
                                                       "_" + std::to_string(++counter_) + ".pem"))
                .string();
    BIO* bio = BIO_new_file(path_.c_str(), "w");
    PEM_write_bio_X509(bio, cert_);
    BIO_free(bio);
  }
  ~TestCert() {
    std::filesystem::remove(path_);
    X509_free(cert_);
    EVP_PKEY_free(key_);
  }

  const std::string& path() const { return path_; }
  void UseIn(ssl::context& ctx) const {
    SSL_CTX_use_certificate(ctx.native_handle(), cert_);
    SSL_CTX_use_PrivateKey(ctx.native_handle(), key_);
  }

 private:
  void AddExtension(int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert_, cert_, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    X509_add_ext(cert_, ext, -1);
    X509_EXTENSION_free(ext);
  }

  static inline int counter_ = 0;
  EVP_PKEY* key_ = nullptr;
  X509* cert_ = nullptr;
  std::string path_;
};

// An HTTPS server answering every request with "secure <target>".
class TlsServer {
 public:
  explicit TlsServer(const TestCert& cert)
      : ctx_(ssl::context::tls_server),
        server_([this](tcp::socket socket) { return Serve(std::move(socket)); }) {
    cert.UseIn(ctx_);
  }
  std::uint16_t port() const { return server_.port(); }
  std::string Url(const std::string& host, const std::string& path) const {
    return "https://" + host + ":" + std::to_string(port()) + path;
  }

 private:
  asio::awaitable<void> Serve(tcp::socket socket) {
    ssl::stream<tcp::socket> stream(std::move(socket), ctx_);
    auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, kTuple);
    if (hec) co_return;
    beast::flat_buffer buffer;
    for (;;) {
      Request req;
      auto [ec, n] = co_await http::async_read(stream, buffer, req, kTuple);
      if (ec) co_return;
      const std::string raw = Ok200("secure " + std::string(req.target()));
      auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(raw), kTuple);
      if (wec) co_return;
    }
  }

  ssl::context ctx_;
  FakeServer server_;  // last: its thread must stop before ctx_ goes
};

TEST(HttpClientTlsTest, TrustsTheGivenCaFile) {
  TestCert cert("IP:127.0.0.1,DNS:localhost");
  TlsServer server(cert);
  Rig rig(Options([&](auto& o) { o.ca_file = cert.path(); }));
  auto res = rig.Send(Get(server.Url("127.0.0.1", "/ip")));
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->body, "secure /ip");
  res = rig.Send(Get(server.Url("localhost", "/name")));
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->body, "secure /name");
}

TEST(HttpClientTlsTest, RejectsUntrustedCertificate) {
  TestCert cert("IP:127.0.0.1");
  TlsServer server(cert);
  Rig rig;
  auto res = rig.Send(Get(server.Url("127.0.0.1", "/")));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamUnreachable);
  EXPECT_NE(res.error().message.find("cannot connect to 127.0.0.1:"), std::string::npos)
      << res.error().message;

  Rig unverified(Options([](auto& o) { o.verify_tls = false; }));
  res = unverified.Send(Get(server.Url("127.0.0.1", "/")));
  ASSERT_TRUE(res) << res.error().message;
}

TEST(HttpClientTlsTest, RejectsCertificateForAnotherHost) {
  TestCert cert("DNS:other.example");
  TlsServer server(cert);
  Rig rig(Options([&](auto& o) { o.ca_file = cert.path(); }));
  auto res = rig.Send(Get(server.Url("127.0.0.1", "/")));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamUnreachable);
}

// ---------------------------------------------------------------------------------------------
// Proxy

asio::awaitable<void> Pump(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
  std::array<char, 8192> buf;
  for (;;) {
    auto [ec, n] = co_await from->async_read_some(asio::buffer(buf), kTuple);
    if (ec) break;
    auto [wec, wn] = co_await asio::async_write(*to, asio::buffer(buf.data(), n), kTuple);
    if (wec) break;
  }
  boost::system::error_code ignored;
  from->close(ignored);
  to->close(ignored);
}

// Answers absolute-form GETs itself and tunnels CONNECT to 127.0.0.1:<requested port>.
FakeServer::Handler ProxyHandler(Seen& seen) {
  return [&seen](tcp::socket socket) -> asio::awaitable<void> {
    auto client = std::make_shared<tcp::socket>(std::move(socket));
    beast::flat_buffer buffer;
    http::request_parser<http::empty_body> parser;
    auto [ec, n] = co_await http::async_read_header(*client, buffer, parser, kTuple);
    if (ec) co_return;
    const auto& req = parser.get();
    seen.Add(std::string(req.method_string()) + " " + std::string(req.target()) +
             " auth=" + std::string(req[http::field::proxy_authorization]));
    if (req.method() != http::verb::connect) {
      const std::string raw = Ok200("via proxy", "Connection: close\r\n");
      co_await asio::async_write(*client, asio::buffer(raw), kTuple);
      co_return;
    }
    const std::string target(req.target());
    const auto port = static_cast<std::uint16_t>(std::stoi(target.substr(target.rfind(':') + 1)));
    auto upstream = std::make_shared<tcp::socket>(co_await asio::this_coro::executor);
    auto [cec] = co_await upstream->async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), kTuple);
    if (cec) co_return;
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await asio::async_write(*client, asio::buffer(ok), kTuple);
    asio::co_spawn(co_await asio::this_coro::executor, Pump(upstream, client), asio::detached);
    co_await Pump(client, upstream);
  };
}

TEST(HttpClientProxyTest, PlainHttpUsesAbsoluteFormWithCredentials) {
  Seen seen;
  FakeServer proxy(ProxyHandler(seen));
  Rig rig(Options([&](auto& o) {
    o.proxy_url = "http://user:pass@127.0.0.1:" + std::to_string(proxy.port());
  }));
  // The origin's name is never resolved by the client: the proxy does that.
  auto res = rig.Send(Get("http://api.example.invalid/v1/models?x=1"));
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->body, "via proxy");
  EXPECT_EQ(seen.All(),
            (std::vector<std::string>{
                "GET http://api.example.invalid/v1/models?x=1 auth=Basic dXNlcjpwYXNz"}));
}

TEST(HttpClientProxyTest, HttpsTunnelsThroughConnect) {
  TestCert cert("IP:127.0.0.1");
  TlsServer origin(cert);
  Seen seen;
  FakeServer proxy(ProxyHandler(seen));
  Rig rig(Options([&](auto& o) {
    o.ca_file = cert.path();
    o.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  }));
  auto res = rig.Send(Get(origin.Url("127.0.0.1", "/tunnel")));
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->body, "secure /tunnel");
  const std::string authority = "127.0.0.1:" + std::to_string(origin.port());
  EXPECT_EQ(seen.All(), (std::vector<std::string>{"CONNECT " + authority + " auth="}));
}

TEST(HttpClientProxyTest, NoProxyBypasses) {
  Seen seen;
  FakeServer proxy(ProxyHandler(seen));
  FakeServer origin(ServeEach([](const Request&) { return Ok200("direct"); }));
  Rig rig(Options([&](auto& o) {
    o.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
    o.no_proxy = "example.com, 127.0.0.1";
  }));
  auto res = rig.Send(Get(origin.Url("/")));
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->body, "direct");
  EXPECT_EQ(proxy.connections(), 0);

  Rig wildcard(Options([&](auto& o) {
    o.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
    o.no_proxy = "*";
  }));
  ASSERT_TRUE(wildcard.Send(Get(origin.Url("/"))));
  EXPECT_EQ(proxy.connections(), 0);
}

TEST(HttpClientProxyTest, ProxyRefusingTheTunnelIsUnreachable) {
  FakeServer proxy(ServeEach([](const Request&) {
    return std::string("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  }));
  Rig rig(
      Options([&](auto& o) { o.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port()); }));
  auto res = rig.Send(Get("https://api.example.invalid/"));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kUpstreamUnreachable);
  EXPECT_NE(res.error().message.find("403"), std::string::npos) << res.error().message;
}

}  // namespace
}  // namespace sb::net
