// The router, the envelope and the route table: every route the server registers must appear in
// tests/route_auth_table.txt with its auth class, so a new route cannot forget its class.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "app/core.hpp"
#include "app/data_dir.hpp"
#include "http/api/api.hpp"
#include "http/auth_guard.hpp"
#include "http/envelope.hpp"
#include "http/router.hpp"
#include "http/server.hpp"
#include "http/websocket.hpp"
#include "util/crypto.hpp"

namespace sb::http {
namespace {

class AllowAll final : public Authenticator {
 public:
  util::Result<Principal> Authenticate(const Request&, AuthClass) override {
    return Principal{Principal::Kind::kUser, "tester", 0};
  }
};

class DenyAll final : public Authenticator {
 public:
  util::Result<Principal> Authenticate(const Request&, AuthClass) override {
    return util::Fail(util::ErrorCode::kUnauthenticated, "no");
  }
};

// The route table test registers every route; these stand in for what model tests would call.
class UnreachableGateway final : public domain::LlmGateway {
 public:
  std::shared_ptr<domain::CallHandle> Chat(
      const domain::ProviderEndpoint&, domain::ChatRequest,
      std::function<void(const domain::ChatDelta&)>,
      std::function<void(util::Result<domain::ChatResult>)> done) override {
    done(util::Fail(util::ErrorCode::kUpstreamUnreachable, "no network in this test"));
    return nullptr;
  }
  std::shared_ptr<domain::CallHandle> Embed(
      const domain::ProviderEndpoint&, domain::EmbeddingRequest,
      std::function<void(util::Result<domain::EmbeddingResult>)> done) override {
    done(util::Fail(util::ErrorCode::kUpstreamUnreachable, "no network in this test"));
    return nullptr;
  }
};

class InlineExecutor final : public util::BlockingExecutor {
 public:
  void Post(std::function<void()> task) override { task(); }
};

Request Make(std::string method, std::string path) {
  Request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.request_id = "rid-1";
  return r;
}

Response Echo(Request& req) {
  Response r;
  r.body = std::string(req.PathParam("id")) + "|" + std::string(req.PathParam("x"));
  return r;
}

TEST(Router, LiteralSegmentsWinOverParameters) {
  AllowAll auth;
  Router router(auth);
  router.Add({"GET", "/p/{id}/x", AuthClass::kEither, [](Request&) {
                Response r;
                r.body = "param";
                return r;
              }});
  router.Add({"GET", "/p/_/x", AuthClass::kEither, [](Request&) {
                Response r;
                r.body = "literal";
                return r;
              }});
  auto req = Make("GET", "/p/_/x");
  EXPECT_EQ(router.Handle(router.Match(req), req).body, "literal");
  req = Make("GET", "/p/abc/x");
  EXPECT_EQ(router.Handle(router.Match(req), req).body, "param");
}

TEST(Router, CapturesParametersAndIgnoresTrailingSlash) {
  AllowAll auth;
  Router router(auth);
  router.Add({"GET", "/a/{id}/{x}", AuthClass::kEither, Echo});
  auto req = Make("GET", "/a/1/2/");
  EXPECT_EQ(router.Handle(router.Match(req), req).body, "1|2");
}

TEST(Router, TailParameterTakesTheRestOfThePath) {
  AllowAll auth;
  Router router(auth);
  router.Add({"POST", "/bots/{id}/{x...}", AuthClass::kNone, Echo});
  router.Add({"POST", "/bots/{id}/fixed", AuthClass::kNone, [](Request&) {
                Response r;
                r.body = "fixed";
                return r;
              }});
  auto req = Make("POST", "/bots/7/a/b/c");
  EXPECT_EQ(router.Handle(router.Match(req), req).body, "7|a/b/c");
  req = Make("POST", "/bots/7/fixed");
  EXPECT_EQ(router.Handle(router.Match(req), req).body, "fixed");
  req = Make("POST", "/bots/7");
  EXPECT_EQ(router.Handle(router.Match(req), req).status, 404);
}

TEST(Router, UnknownPathIs404AndWrongVerbIs405) {
  AllowAll auth;
  Router router(auth);
  router.Add({"GET", "/a/{id}", AuthClass::kEither, Echo});
  auto req = Make("GET", "/b/1");
  EXPECT_EQ(router.Handle(router.Match(req), req).status, 404);
  req = Make("DELETE", "/a/1");
  EXPECT_EQ(router.Handle(router.Match(req), req).status, 405);
}

TEST(Router, HeadIsAnsweredByTheGetRoute) {
  AllowAll auth;
  Router router(auth);
  router.Add({"GET", "/a/{id}", AuthClass::kEither, Echo});
  router.Add({"POST", "/b", AuthClass::kEither, Echo});
  auto req = Make("HEAD", "/a/1");
  auto match = router.Match(req);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(router.Handle(match, req).body, "1|");  // the server drops the body
  req = Make("DELETE", "/a/1");
  match = router.Match(req);
  EXPECT_EQ(match.allowed_methods, "GET, HEAD");
  req = Make("HEAD", "/b");
  match = router.Match(req);
  EXPECT_EQ(router.Handle(match, req).status, 405);
  EXPECT_EQ(match.allowed_methods, "POST");
}

TEST(Router, DuplicateRouteIsRejected) {
  AllowAll auth;
  Router router(auth);
  router.Add({"GET", "/a/{id}", AuthClass::kEither, Echo});
  EXPECT_THROW(router.Add({"GET", "/a/{other}", AuthClass::kEither, Echo}), std::logic_error);
}

TEST(Router, ThrowingHandlerAnswers500WithRequestIdAndNoDetail) {
  AllowAll auth;
  Router router(auth);
  router.Add({"GET", "/boom", AuthClass::kEither,
              [](Request&) -> Response { throw std::runtime_error("secret detail"); }});
  auto req = Make("GET", "/boom");
  const auto res = router.Handle(router.Match(req), req);
  EXPECT_EQ(res.status, 500);
  EXPECT_NE(res.body.find("\"code\":-2"), std::string::npos);
  EXPECT_NE(res.body.find("rid-1"), std::string::npos);
  EXPECT_EQ(res.body.find("secret detail"), std::string::npos);
}

TEST(Router, AuthFailureStopsBeforeTheHandler) {
  DenyAll auth;
  Router router(auth);
  bool called = false;
  router.Add({"GET", "/private", AuthClass::kEither, [&](Request&) {
                called = true;
                return Response{};
              }});
  router.Add({"GET", "/public", AuthClass::kNone, [&](Request&) { return Response{}; }});
  auto req = Make("GET", "/private");
  EXPECT_EQ(router.Handle(router.Match(req), req).status, 401);
  EXPECT_FALSE(called);
  req = Make("GET", "/public");
  EXPECT_EQ(router.Handle(router.Match(req), req).status, 200);
}

TEST(Envelope, RetryAfterBecomesAHeader) {
  util::Error error{util::ErrorCode::kRateLimited, "slow down"};
  EXPECT_TRUE(JsonError(error, "rid").headers.empty());
  error.retry_after_seconds = 7;
  const auto r = JsonError(error, "rid");
  EXPECT_EQ(r.status, 429);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "Retry-After");
  EXPECT_EQ(r.headers[0].second, "7");
}

TEST(Envelope, StatusMappingCoversEveryCode) {
  using util::ErrorCode;
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kConflict), 409);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kPayloadTooLarge), 413);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kRateLimited), 429);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUpstreamFailed), 502);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUpstreamAuth), 502);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUpstreamNotFound), 502);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUpstreamRateLimited), 502);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUpstreamUnreachable), 502);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kCancelled), 503);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUpstreamTimeout), 504);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInternal), 500);
  const auto client = JsonError({ErrorCode::kNotFound, "bot x does not exist"}, "r");
  EXPECT_EQ(client.body, R"({"code":-1,"msg":"bot x does not exist"})");
}

// Only its presence matters to the route table.
class NoDebugChat final : public domain::DebugChat {
 public:
  util::Result<std::shared_ptr<domain::DebugChatConnection>> Connect(
      const util::PipelineId&, const std::string&, std::function<void(std::string)>,
      std::function<void()>) override {
    return util::Fail(util::ErrorCode::kUnavailable, "no debug chat here");
  }
  util::Result<util::JsonArray> Messages(const util::PipelineId&, const std::string&) override {
    return util::JsonArray{};
  }
  util::Result<void> Reset(const util::PipelineId&, const std::string&) override {
    return util::Ok();
  }
  util::Result<std::vector<domain::DebugChatConnectionInfo>> Connections(
      const util::PipelineId&) override {
    return std::vector<domain::DebugChatConnectionInfo>{};
  }
  domain::DebugChatStats Stats() override { return {}; }
  util::Result<std::size_t> Broadcast(const util::PipelineId&, const util::Json&) override {
    return std::size_t{0};
  }
};

class NoPlugins final : public domain::PluginManager {
 public:
  static util::Error None() { return {util::ErrorCode::kUnavailable, "no plugins here"}; }
  util::Result<std::vector<domain::PluginView>> List() override { return tl::unexpected(None()); }
  util::Result<domain::PluginView> Get(const domain::PluginKey&) override {
    return tl::unexpected(None());
  }
  util::Result<std::int64_t> InstallFromMarketplace(const domain::PluginKey&,
                                                    const std::string&) override {
    return tl::unexpected(None());
  }
  util::Result<std::int64_t> InstallLocal(std::string) override { return tl::unexpected(None()); }
  util::Result<std::int64_t> Upgrade(const domain::PluginKey&) override {
    return tl::unexpected(None());
  }
  util::Result<std::int64_t> Delete(const domain::PluginKey&) override {
    return tl::unexpected(None());
  }
  util::Result<util::JsonObject> Config(const domain::PluginKey&) override {
    return tl::unexpected(None());
  }
  util::Result<void> SetConfig(const domain::PluginKey&, const util::JsonObject&) override {
    return tl::unexpected(None());
  }
  util::Result<void> SetEnabled(const domain::PluginKey&, bool) override {
    return tl::unexpected(None());
  }
  util::Result<void> SetNetworkAllowed(const domain::PluginKey&, bool) override {
    return tl::unexpected(None());
  }
  util::Result<std::string> Readme(const domain::PluginKey&) override {
    return tl::unexpected(None());
  }
  util::Result<domain::PluginFile> Icon(const domain::PluginKey&) override {
    return tl::unexpected(None());
  }
  util::Result<std::string> Asset(const domain::PluginKey&, std::string_view) override {
    return tl::unexpected(None());
  }
  util::Result<util::Json> MarketplaceList(int, int) override { return tl::unexpected(None()); }
  util::Result<domain::GithubReleaseList> GithubReleases(std::string_view) override {
    return tl::unexpected(None());
  }
  util::Result<std::vector<domain::GithubAsset>> GithubReleaseAssets(const std::string&,
                                                                     const std::string&,
                                                                     std::int64_t) override {
    return tl::unexpected(None());
  }
  util::Result<std::int64_t> InstallFromGithub(const domain::GithubInstall&) override {
    return tl::unexpected(None());
  }
  domain::PluginSystemStatus SystemStatus() override { return {}; }
};

// Builds the real route set over a throwaway data directory and compares it with the table.
TEST(RouteTable, EveryRegisteredRouteIsListedWithItsAuthClass) {
  const auto dir = std::filesystem::temp_directory_path() / ("sb-route-" + util::RandomUrlSafe(8));
  app::CoreOptions options;
  options.data_dir = dir;
  auto core = app::Core::Open(options);
  ASSERT_TRUE(core) << core.error().message;
  Metrics metrics;
  AuthGuard guard((*core)->auth());
  Router router(guard);
  UnreachableGateway gateway;
  InlineExecutor executor;
  services::ModelTestService model_tests((*core)->models(), (*core)->providers(),
                                         (*core)->storage().models(), gateway, executor);
  api::ApiContext ctx{(*core)->auth(),     (*core)->system(), (*core)->providers(),
                      (*core)->models(),   (*core)->bots(),   (*core)->pipelines(),
                      (*core)->tasks(),    model_tests,       (*core)->requesters(),
                      (*core)->adapters(), metrics,           [] { return true; },
                      {"http://h", "", ""}};
  NoDebugChat debug_chat;
  ctx.debug_chat = &debug_chat;
  NoPlugins plugins;
  ctx.plugins = &plugins;
  services::PluginConfigFiles plugin_config_files(dir / "files" / "plugin_config");
  ctx.plugin_config_files = &plugin_config_files;
  util::SystemClock clock;
  services::KnowledgeOptions knowledge_options;
  knowledge_options.files_dir = dir / "files";
  services::KnowledgeService knowledge((*core)->storage().knowledge(), (*core)->tasks(),
                                       (*core)->models(), gateway, clock, knowledge_options);
  ctx.knowledge = &knowledge;
  util::SystemClock webhook_clock;
  services::WebhookService webhooks((*core)->storage().webhooks(), webhook_clock);
  ctx.webhooks = &webhooks;
  services::McpService mcp((*core)->storage().mcp_servers(), clock, nullptr);
  ctx.mcp = &mcp;
  ctx.monitoring = &(*core)->storage().monitoring();
  api::RegisterAllRoutes(router, ctx);

  std::set<std::string> registered;
  for (const auto& r : router.routes()) {
    registered.insert(r->method + " " + r->path_template + " " + AuthClassName(r->auth));
  }
  std::set<std::string> listed;
  std::ifstream in(SB_ROUTE_TABLE);
  ASSERT_TRUE(in) << SB_ROUTE_TABLE;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    listed.insert(line);
  }
  for (const auto& r : registered) {
    EXPECT_TRUE(listed.count(r)) << "route not in tests/route_auth_table.txt: " << r;
  }
  for (const auto& l : listed) {
    EXPECT_TRUE(registered.count(l)) << "listed route not registered: " << l;
  }
  (*core)->Close();
  std::filesystem::remove_all(dir);
}

// Two processes starting together on a new data directory must share one secret.
TEST(DataDir, ConcurrentFirstStartsAgreeOnTheSecret) {
  const auto dir = std::filesystem::temp_directory_path() / ("sb-secret-" + util::RandomUrlSafe(8));
  std::filesystem::create_directories(dir);
  for (int round = 0; round < 20; ++round) {
    const auto path = dir / ("secret" + std::to_string(round));
    std::vector<std::string> seen(8);
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&, i] {
        auto s = app::ReadOrCreateSecret(path, 32);
        if (s) seen[i] = s->value;
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& v : seen) EXPECT_EQ(v, seen[0]);
    EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
  std::filesystem::remove_all(dir);
}

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

constexpr auto kStepLimit = std::chrono::seconds(10);

// Runs one asynchronous step on `io` and returns its error code, or timed_out after kStepLimit,
// so a broken server fails the test instead of hanging it.
template <typename Start>
ErrorCode Await(asio::io_context& io, Start start) {
  auto result = std::make_shared<std::optional<ErrorCode>>();
  start([result](ErrorCode ec, auto&&...) { *result = ec; });
  io.restart();
  const auto deadline = std::chrono::steady_clock::now() + kStepLimit;
  while (!*result && io.run_one_until(deadline) > 0) {
  }
  return result->value_or(asio::error::timed_out);
}

template <typename Predicate>
bool WaitUntil(Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + kStepLimit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Accepts `Authorization: Bearer good` only.
class BearerAuth final : public Authenticator {
 public:
  util::Result<Principal> Authenticate(const Request& request, AuthClass) override {
    if (request.Header("authorization") == "Bearer good") {
      return Principal{Principal::Kind::kUser, "tester", 0};
    }
    return util::Fail(util::ErrorCode::kUnauthenticated, "missing credential");
  }
};

// The real server on a loopback port with its own I/O thread and blocking pool; shuts down as
// serve does.
class LoopbackServer {
 public:
  explicit LoopbackServer(Router& router) {
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<HttpServer>(io_, blocking_, router, metrics_, options);
    auto started = server_->Start();
    EXPECT_TRUE(started) << started.error().message;
    io_thread_ = std::thread([this] { io_.run(); });
  }
  ~LoopbackServer() {
    server_->StopAccepting();
    server_->CloseConnections();
    work_.reset();
    io_.stop();
    io_thread_.join();
    blocking_.join();
    server_.reset();
  }
  std::uint16_t port() const { return server_->port(); }
  HttpServer& server() { return *server_; }

 private:
  Metrics metrics_;  // outlives io_: frames destroyed with it still count connections
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      io_.get_executor()};
  asio::thread_pool blocking_{4};
  std::unique_ptr<HttpServer> server_;
  std::thread io_thread_;
};

// A WebSocket client whose every step is bounded by kStepLimit.
class WsClient {
 public:
  // Asks for the upgrade of `target`; response() holds the server's HTTP answer either way.
  ErrorCode Connect(std::uint16_t port, const std::string& target,
                    const std::string& authorization = "") {
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
    auto ec = Await(io_, [&](auto done) {
      beast::get_lowest_layer(ws_).async_connect(endpoint, std::move(done));
    });
    if (ec) return ec;
    if (!authorization.empty()) {
      ws_.set_option(
          websocket::stream_base::decorator([authorization](websocket::request_type& req) {
            req.set(beast::http::field::authorization, authorization);
          }));
    }
    return Await(io_, [&](auto done) {
      ws_.async_handshake(response_, "127.0.0.1", target, std::move(done));
    });
  }
  ErrorCode Send(const std::string& message, bool binary = false) {
    ws_.binary(binary);
    return Await(io_, [&](auto done) { ws_.async_write(asio::buffer(message), std::move(done)); });
  }
  // The next message, or the error that ended the connection instead.
  std::pair<ErrorCode, std::string> Read() {
    beast::flat_buffer buffer;
    auto ec = Await(io_, [&](auto done) { ws_.async_read(buffer, std::move(done)); });
    return {ec, beast::buffers_to_string(buffer.data())};
  }
  ErrorCode Close() {
    return Await(
        io_, [&](auto done) { ws_.async_close(websocket::close_code::normal, std::move(done)); });
  }
  int close_code() const { return ws_.reason().code; }
  const websocket::response_type& response() const { return response_; }

 private:
  asio::io_context io_;
  websocket::stream<beast::tcp_stream> ws_{io_};
  websocket::response_type response_;
};

beast::http::response<beast::http::string_body> PlainGet(std::uint16_t port,
                                                         const std::string& target) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::http::response<beast::http::string_body> res;
  beast::http::request<beast::http::empty_body> req{beast::http::verb::get, target, 11};
  req.set(beast::http::field::host, "127.0.0.1");
  req.set(beast::http::field::authorization, "Bearer good");
  beast::flat_buffer buffer;
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  auto ec = Await(io, [&](auto done) { stream.async_connect(endpoint, std::move(done)); });
  if (!ec) {
    ec = Await(io, [&](auto done) { beast::http::async_write(stream, req, std::move(done)); });
  }
  if (!ec) {
    ec = Await(io,
               [&](auto done) { beast::http::async_read(stream, buffer, res, std::move(done)); });
  }
  EXPECT_FALSE(ec) << ec.message();
  return res;
}

// A /ws route that echoes each message as "echo: <text>" and records what it saw.
class WebSocketTest : public ::testing::Test {
 protected:
  void Start(std::optional<util::Error> refuse = std::nullopt) {
    router_.Add({"GET",
                 "/ws/{id}",
                 AuthClass::kEither,
                 nullptr,
                 Execution::kBlocking,
                 {},
                 {},
                 [this, refuse](Request& req, std::shared_ptr<WebSocketPeer> peer)
                     -> util::Result<WebSocketHandlers> {
                   ++accepts_;
                   if (refuse) return tl::unexpected(*refuse);
                   {
                     std::lock_guard lock(mu_);
                     peer_ = peer;
                     path_id_ = std::string(req.PathParam("id"));
                   }
                   WebSocketHandlers handlers;
                   handlers.on_text = [this, peer](std::string text) {
                     {
                       std::lock_guard lock(mu_);
                       texts_.push_back(text);
                     }
                     peer->SendText("echo: " + text);
                   };
                   handlers.on_close = [this] { ++closes_; };
                   return handlers;
                 }});
    server_.emplace(router_);
  }
  std::shared_ptr<WebSocketPeer> peer() {
    std::lock_guard lock(mu_);
    return peer_;
  }
  std::uint16_t port() const { return server_->port(); }

  // Declared before the server: the handlers may run until it is gone.
  std::atomic<int> accepts_{0};
  std::atomic<int> closes_{0};
  std::mutex mu_;
  std::shared_ptr<WebSocketPeer> peer_;  // guarded by mu_
  std::string path_id_;                  // guarded by mu_
  std::vector<std::string> texts_;       // guarded by mu_
  BearerAuth auth_;
  Router router_{auth_};
  std::optional<LoopbackServer> server_;
};

TEST_F(WebSocketTest, EchoesSeveralMessagesInOrder) {
  Start();
  WsClient client;
  ASSERT_FALSE(client.Connect(port(), "/ws/p1?token=good"));
  EXPECT_FALSE(client.response()["X-Request-Id"].empty());
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(client.Send("m" + std::to_string(i)));
  for (int i = 0; i < 5; ++i) {
    auto [ec, text] = client.Read();
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(text, "echo: m" + std::to_string(i));
  }
  EXPECT_FALSE(client.Close());
  std::lock_guard lock(mu_);
  EXPECT_EQ(path_id_, "p1");
  EXPECT_EQ(texts_, (std::vector<std::string>{"m0", "m1", "m2", "m3", "m4"}));
}

TEST_F(WebSocketTest, SendTextFromAnotherThreadArrives) {
  Start();
  WsClient client;
  ASSERT_FALSE(client.Connect(port(), "/ws/p1", "Bearer good"));
  auto server_side = peer();
  ASSERT_TRUE(server_side);
  std::thread sender([server_side] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server_side->SendText("later 1");
    server_side->SendText("later 2");
  });
  auto [ec1, first] = client.Read();
  auto [ec2, second] = client.Read();
  sender.join();
  EXPECT_FALSE(ec1);
  EXPECT_FALSE(ec2);
  EXPECT_EQ(first, "later 1");
  EXPECT_EQ(second, "later 2");
}

TEST_F(WebSocketTest, ClientCloseCallsOnCloseOnceAndThePeerStaysUsable) {
  Start();
  WsClient client;
  ASSERT_FALSE(client.Connect(port(), "/ws/p1?token=good"));
  ASSERT_FALSE(client.Close());
  EXPECT_EQ(client.close_code(), 1000);  // the server answers with the client's code
  EXPECT_TRUE(WaitUntil([&] { return closes_.load() == 1; }));
  auto server_side = peer();
  server_side->SendText("too late");
  server_side->Close();
  server_.reset();
  EXPECT_EQ(closes_.load(), 1);
}

TEST_F(WebSocketTest, PeerCloseSendsQueuedFramesThenCloses1000) {
  Start();
  WsClient client;
  ASSERT_FALSE(client.Connect(port(), "/ws/p1?token=good"));
  auto server_side = peer();
  server_side->SendText("bye");
  server_side->Close();
  server_side->Close();
  auto [ec1, text] = client.Read();
  EXPECT_FALSE(ec1);
  EXPECT_EQ(text, "bye");
  auto [ec2, nothing] = client.Read();
  EXPECT_EQ(ec2, websocket::error::closed) << ec2.message();
  EXPECT_EQ(client.close_code(), 1000);
  EXPECT_TRUE(WaitUntil([&] { return closes_.load() == 1; }));
  server_.reset();
  EXPECT_EQ(closes_.load(), 1);
}

TEST_F(WebSocketTest, ServerShutdownClosesWith1001AndDoesNotWaitForIt) {
  Start();
  WsClient client;
  ASSERT_FALSE(client.Connect(port(), "/ws/p1?token=good"));
  server_->server().StopAccepting();
  // A WebSocket connection is idle between messages: shutdown must not wait for it.
  EXPECT_TRUE(server_->server().WaitIdle(std::chrono::milliseconds(200)));
  EXPECT_EQ(closes_.load(), 0);
  std::thread closer([this] { server_->server().CloseConnections(); });
  auto [ec, text] = client.Read();
  closer.join();
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(client.close_code(), 1001);
  EXPECT_EQ(closes_.load(), 1);  // CloseConnections waits for the sessions, on_close included
  server_.reset();
  EXPECT_EQ(closes_.load(), 1);
}

TEST_F(WebSocketTest, MissingCredentialIs401WithoutUpgrade) {
  Start();
  WsClient client;
  EXPECT_EQ(client.Connect(port(), "/ws/p1"), websocket::error::upgrade_declined);
  EXPECT_EQ(client.response().result_int(), 401);
  EXPECT_NE(client.response().body().find("missing credential"), std::string::npos);
  WsClient wrong;
  EXPECT_EQ(wrong.Connect(port(), "/ws/p1?token=bad"), websocket::error::upgrade_declined);
  EXPECT_EQ(wrong.response().result_int(), 401);
  EXPECT_EQ(accepts_.load(), 0);
}

TEST_F(WebSocketTest, HeaderCredentialWinsOverTheQueryToken) {
  Start();
  WsClient client;
  EXPECT_EQ(client.Connect(port(), "/ws/p1?token=good", "Bearer bad"),
            websocket::error::upgrade_declined);
  EXPECT_EQ(client.response().result_int(), 401);
}

TEST_F(WebSocketTest, AcceptErrorBecomesTheHttpAnswer) {
  Start(util::Error{util::ErrorCode::kNotFound, "pipeline p1 does not exist"});
  WsClient client;
  EXPECT_EQ(client.Connect(port(), "/ws/p1?token=good"), websocket::error::upgrade_declined);
  EXPECT_EQ(client.response().result_int(), 404);
  EXPECT_EQ(client.response().body(), R"({"code":-1,"msg":"pipeline p1 does not exist"})");
  EXPECT_EQ(accepts_.load(), 1);
}

TEST_F(WebSocketTest, PlainGetIs400) {
  Start();
  const auto res = PlainGet(port(), "/ws/p1");
  EXPECT_EQ(res.result_int(), 400);
  EXPECT_NE(res.body().find("this endpoint takes a WebSocket upgrade"), std::string::npos);
  EXPECT_EQ(accepts_.load(), 0);
}

TEST_F(WebSocketTest, MessageAtTheLimitPassesAndOneByteMoreCloses1009) {
  Start();
  WsClient client;
  ASSERT_FALSE(client.Connect(port(), "/ws/p1?token=good"));
  const std::string at_limit(1024 * 1024, 'a');
  ASSERT_FALSE(client.Send(at_limit));
  auto [ec1, echoed] = client.Read();
  EXPECT_FALSE(ec1);
  EXPECT_EQ(echoed.size(), at_limit.size() + 6);
  (void)client.Send(at_limit + "a");  // may fail: the server stops reading it
  auto [ec2, nothing] = client.Read();
  EXPECT_TRUE(ec2);
  EXPECT_EQ(client.close_code(), 1009);
  EXPECT_TRUE(WaitUntil([&] { return closes_.load() == 1; }));
  std::lock_guard lock(mu_);
  EXPECT_EQ(texts_.size(), 1u);
}

TEST_F(WebSocketTest, BinaryMessageCloses1003) {
  Start();
  WsClient client;
  ASSERT_FALSE(client.Connect(port(), "/ws/p1?token=good"));
  ASSERT_FALSE(client.Send("\x01\x02", /*binary=*/true));
  auto [ec, nothing] = client.Read();
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(client.close_code(), 1003);
  EXPECT_TRUE(WaitUntil([&] { return closes_.load() == 1; }));
  std::lock_guard lock(mu_);
  EXPECT_TRUE(texts_.empty());
}

}  // namespace
}  // namespace sb::http
