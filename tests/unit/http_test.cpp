// The router, the envelope and the route table: every route the server registers must appear in
// tests/route_auth_table.txt with its auth class, so a new route cannot forget its class.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "app/core.hpp"
#include "app/data_dir.hpp"
#include "http/api/api.hpp"
#include "http/auth_guard.hpp"
#include "http/envelope.hpp"
#include "http/router.hpp"
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

}  // namespace
}  // namespace sb::http
