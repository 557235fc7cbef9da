// The web console handler over in-memory and directory files, and the router's fallback to it.
#include "http/console.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "http/router.hpp"

namespace sb::http {
namespace {

namespace fs = std::filesystem;

const unsigned char kIndexBytes[] = "<!doctype html><script src=\"/assets/app-1a2b.js\"></script>";
const unsigned char kIndexGzip[] = "GZ-INDEX";
const unsigned char kScript[] = "console.log('a long enough script');";
const unsigned char kScriptGzip[] = "GZ-SCRIPT";
const unsigned char kScriptBr[] = "BR-SCRIPT";
const unsigned char kPng[] = "\x89PNG";

template <size_t N>
constexpr size_t Len(const unsigned char (&)[N]) {
  return N - 1;
}

const EmbeddedConsoleFile kTable[] = {
    {"/assets/app-1a2b.js", "00112233aabbccdd", kScript, Len(kScript), kScriptGzip,
     Len(kScriptGzip), kScriptBr, Len(kScriptBr)},
    {"/assets/logo-9f.png", "0123456789abcdef", kPng, Len(kPng), nullptr, 0, nullptr, 0},
    {"/index.html", "fedcba9876543210", kIndexBytes, Len(kIndexBytes), kIndexGzip, Len(kIndexGzip),
     nullptr, 0},
};

Request Get(std::string path, std::vector<std::pair<std::string, std::string>> headers = {}) {
  Request r;
  r.method = "GET";
  r.path = std::move(path);
  r.headers = std::move(headers);
  r.request_id = "rid";
  return r;
}

std::string HeaderOf(const Response& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

size_t CountOf(const Response& r, std::string_view name) {
  size_t n = 0;
  for (const auto& [k, v] : r.headers) n += k == name;
  return n;
}

void ExpectSecurityHeaders(const Response& r) {
  EXPECT_EQ(HeaderOf(r, "Content-Security-Policy"),
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data: blob: https:; connect-src 'self'; font-src 'self' data:; "
            "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'");
  EXPECT_EQ(HeaderOf(r, "X-Frame-Options"), "DENY");
  EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(HeaderOf(r, "Referrer-Policy"), "no-referrer");
}

class ConsoleTest : public ::testing::Test {
 protected:
  EmbeddedConsoleFiles files_{kTable};
  ConsoleHandler console_{files_};

  Response Answer(Request r) {
    auto answer = console_.Handle(r);
    EXPECT_TRUE(answer.has_value()) << r.method << " " << r.path;
    return answer ? *answer : Response{};
  }
};

TEST_F(ConsoleTest, RootServesIndexWithoutLongCaching) {
  const auto r = Answer(Get("/"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body, reinterpret_cast<const char*>(kIndexBytes));
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-cache");
  EXPECT_EQ(HeaderOf(r, "ETag"), "\"fedcba9876543210\"");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Accept-Encoding");
  EXPECT_EQ(CountOf(r, "Content-Encoding"), 0u);
  ExpectSecurityHeaders(r);
  EXPECT_EQ(Answer(Get("/index.html")).body, r.body);
}

TEST_F(ConsoleTest, HashedAssetsAreImmutable) {
  const auto r = Answer(Get("/assets/app-1a2b.js"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(Answer(Get("/assets/logo-9f.png")).content_type, "image/png");
}

TEST_F(ConsoleTest, EncodingFollowsAcceptEncodingBrThenGzip) {
  auto with = [this](std::string accept) {
    return Answer(Get("/assets/app-1a2b.js", {{"accept-encoding", std::move(accept)}}));
  };
  auto br = with("gzip, deflate, br");
  EXPECT_EQ(HeaderOf(br, "Content-Encoding"), "br");
  EXPECT_EQ(br.body, "BR-SCRIPT");
  EXPECT_EQ(HeaderOf(br, "ETag"), "\"00112233aabbccdd-br\"");

  auto gz = with("gzip");
  EXPECT_EQ(HeaderOf(gz, "Content-Encoding"), "gzip");
  EXPECT_EQ(gz.body, "GZ-SCRIPT");
  EXPECT_EQ(HeaderOf(gz, "ETag"), "\"00112233aabbccdd-gz\"");
  EXPECT_EQ(HeaderOf(with("x-gzip"), "Content-Encoding"), "gzip");

  // q=0 refuses a coding, in any spelling; "*" covers the codings not named.
  EXPECT_EQ(HeaderOf(with("br;q=0, gzip;q=0.5"), "Content-Encoding"), "gzip");
  EXPECT_EQ(HeaderOf(with("BR ; Q=0 , GZIP"), "Content-Encoding"), "gzip");
  EXPECT_EQ(HeaderOf(with("*"), "Content-Encoding"), "br");
  EXPECT_EQ(HeaderOf(with("br;q=0, *"), "Content-Encoding"), "gzip");
  auto none = with("br;q=0, gzip;q=0.0");
  EXPECT_EQ(CountOf(none, "Content-Encoding"), 0u);
  EXPECT_EQ(none.body, reinterpret_cast<const char*>(kScript));
  EXPECT_EQ(HeaderOf(none, "ETag"), "\"00112233aabbccdd\"");
  // Everything refused, identity too: identity all the same rather than a 406.
  EXPECT_EQ(CountOf(with("*;q=0"), "Content-Encoding"), 0u);
  // A file with no compressed copy, and a client without the header.
  EXPECT_EQ(
      CountOf(Answer(Get("/assets/logo-9f.png", {{"accept-encoding", "br"}})), "Content-Encoding"),
      0u);
  EXPECT_EQ(CountOf(Answer(Get("/assets/app-1a2b.js")), "Content-Encoding"), 0u);
  // index.html has gzip but no brotli.
  EXPECT_EQ(HeaderOf(Answer(Get("/", {{"accept-encoding", "br, gzip"}})), "Content-Encoding"),
            "gzip");
}

TEST_F(ConsoleTest, IfNoneMatchOfTheSentVariantAnswers304) {
  auto r = Answer(Get("/assets/app-1a2b.js",
                      {{"accept-encoding", "gzip"}, {"if-none-match", "\"00112233aabbccdd-gz\""}}));
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  EXPECT_TRUE(r.content_type.empty());
  EXPECT_EQ(HeaderOf(r, "ETag"), "\"00112233aabbccdd-gz\"");
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Accept-Encoding");
  ExpectSecurityHeaders(r);

  // Weak comparison, lists and "*".
  EXPECT_EQ(Answer(Get("/", {{"if-none-match", "\"x\", W/\"fedcba9876543210\""}})).status, 304);
  EXPECT_EQ(Answer(Get("/", {{"if-none-match", "*"}})).status, 304);
  // The tag of another variant is another representation: the full answer.
  auto other = Answer(Get("/assets/app-1a2b.js", {{"accept-encoding", "br"},
                                                  {"if-none-match", "\"00112233aabbccdd-gz\""}}));
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.body, "BR-SCRIPT");
  EXPECT_EQ(Answer(Get("/", {{"if-none-match", "\"stale\""}})).status, 200);
}

TEST_F(ConsoleTest, ClientRoutesFallBackToIndex) {
  for (const char* path : {"/pipelines/abc", "/bots", "/login", "/pipelines/some/client/route",
                           "/settings/", "/assets"}) {
    const auto r = Answer(Get(path));
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8") << path;
    EXPECT_EQ(r.body, reinterpret_cast<const char*>(kIndexBytes)) << path;
    EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-cache") << path;
  }
}

TEST_F(ConsoleTest, MissingFileWithAnExtensionIsA404InPlainText) {
  for (const char* path : {"/assets/missing.js", "/favicon.ico", "/a/b.css", "/.env", "/..",
                           "/../../etc/passwd", "/x/./y", "/.well-known/thing"}) {
    const auto r = Answer(Get(path));
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.content_type, "text/plain; charset=utf-8") << path;
    EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-cache") << path;
    ExpectSecurityHeaders(r);
  }
}

TEST_F(ConsoleTest, ApiWebhooksAndProbesNeverFallBack) {
  for (const char* path : {"/api", "/api/", "/api/v1/nope", "/api/v1/pipelines/x",
                           "/bots/5f1c9a3e-0000-4000-8000-000000000000", "/bots/x/y", "/healthz",
                           "/healthz/x", "/readyz", "/metrics", "/metrics/x"}) {
    EXPECT_FALSE(console_.Handle(Get(path)).has_value()) << path;
  }
  // Only the exact prefixes: /apiary and /metricsboard are client routes.
  EXPECT_EQ(Answer(Get("/apiary")).status, 200);
  EXPECT_EQ(Answer(Get("/metricsboard")).status, 200);
}

TEST_F(ConsoleTest, OnlyGetAndHead) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    auto r = Get("/");
    r.method = method;
    EXPECT_FALSE(console_.Handle(r).has_value()) << method;
  }
  auto head = Get("/assets/app-1a2b.js", {{"accept-encoding", "gzip"}});
  head.method = "HEAD";
  const auto r = Answer(head);
  // The server drops the body of a HEAD answer and keeps its length: the same answer as GET.
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(HeaderOf(r, "Content-Encoding"), "gzip");
  EXPECT_EQ(r.body, "GZ-SCRIPT");
}

TEST(ConsoleNotBuilt, EveryConsolePathAnswers503InPlainText) {
  EmbeddedConsoleFiles files(std::span<const EmbeddedConsoleFile>{});
  ConsoleHandler console(files);
  for (const char* path : {"/", "/pipelines/x", "/assets/app.js"}) {
    auto r = console.Handle(Get(path));
    ASSERT_TRUE(r.has_value()) << path;
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->content_type, "text/plain; charset=utf-8");
    EXPECT_EQ(r->body, "the web console is not built into this binary: run `make build`\n");
    ExpectSecurityHeaders(*r);
  }
  EXPECT_FALSE(console.Handle(Get("/api/v1/x")).has_value());
}

TEST(ConsoleContentTypes, ByExtension) {
  EXPECT_EQ(ConsoleContentType("/a/b.CSS"), "text/css; charset=utf-8");
  EXPECT_EQ(ConsoleContentType("/x.svg"), "image/svg+xml");
  EXPECT_EQ(ConsoleContentType("/x.woff2"), "font/woff2");
  EXPECT_EQ(ConsoleContentType("/x.json"), "application/json");
  EXPECT_EQ(ConsoleContentType("/x.unknown"), "application/octet-stream");
  EXPECT_EQ(ConsoleContentType("/a.b/noext"), "application/octet-stream");
}

class ConsoleDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() /
            ("sb_console_test_" + std::to_string(std::random_device{}()) + "_" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    root_ = base_ / "dist";
    fs::create_directories(root_ / "assets");
    Write(root_ / "index.html", "<!doctype html>dir");
    Write(root_ / "assets" / "app.js", "let a = 1;");
    Write(root_ / ".env", "SECRET=1");
    fs::create_directories(root_ / ".git");
    Write(root_ / ".git" / "config", "x");
    Write(base_ / "secret.txt", "outside");
    fs::create_symlink(base_ / "secret.txt", root_ / "escape.txt");
    fs::create_symlink(base_, root_ / "up");
    fs::create_symlink(root_ / "assets" / "app.js", root_ / "inside.js");
  }
  void TearDown() override { fs::remove_all(base_); }

  static void Write(const fs::path& p, std::string_view text) {
    std::ofstream(p, std::ios::binary) << text;
  }

  fs::path base_;
  fs::path root_;
};

TEST_F(ConsoleDirectoryTest, ServesFilesIdentityOnlyWithoutLongCaching) {
  DirectoryConsoleFiles files(root_);
  ConsoleHandler console(files);
  EXPECT_TRUE(files.Unavailable().empty());
  auto r = console.Handle(Get("/assets/app.js", {{"accept-encoding", "br, gzip"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "let a = 1;");
  EXPECT_EQ(r->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(CountOf(*r, "Content-Encoding"), 0u);
  EXPECT_EQ(HeaderOf(*r, "Cache-Control"), "no-cache");
  const std::string etag = HeaderOf(*r, "ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(console.Handle(Get("/assets/app.js", {{"if-none-match", etag}}))->status, 304);
  EXPECT_EQ(console.Handle(Get("/"))->body, "<!doctype html>dir");
  EXPECT_EQ(console.Handle(Get("/pipelines/x"))->body, "<!doctype html>dir");
  // A link that stays inside the root is followed.
  EXPECT_EQ(console.Handle(Get("/inside.js"))->body, "let a = 1;");
}

TEST_F(ConsoleDirectoryTest, RefusesTraversalDotfilesAndSymlinkEscapes) {
  DirectoryConsoleFiles files(root_);
  for (const char* path :
       {"/../secret.txt", "/assets/../../secret.txt", "/./index.html", "/.env", "/.git/config",
        "/escape.txt", "/up/secret.txt", "/assets", "/nope.js", "relative", "/assets/app.js/"}) {
    EXPECT_FALSE(files.Find(path).has_value()) << path;
  }
  ConsoleHandler console(files);
  for (const char* path : {"/../secret.txt", "/escape.txt", "/.env", "/up/secret.txt"}) {
    auto r = console.Handle(Get(path));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_EQ(r->body.find("outside"), std::string::npos) << path;
  }
}

TEST_F(ConsoleDirectoryTest, WithoutIndexAnswers503) {
  fs::remove(root_ / "index.html");
  DirectoryConsoleFiles files(root_);
  ConsoleHandler console(files);
  EXPECT_EQ(console.Handle(Get("/assets/app.js"))->status, 503);
}

class AllowAll final : public Authenticator {
 public:
  util::Result<Principal> Authenticate(const Request&, AuthClass) override { return Principal{}; }
};

TEST(RouterFallback, AskedOnlyWhenNoRouteHasThePath) {
  AllowAll auth;
  Router router(auth);
  router.Add({"GET", "/api/v1/things", AuthClass::kNone,
              [](Request&) {
                return Response{200, "{}", "application/json", {}};
              },
              Execution::kInline});
  int asked = 0;
  router.SetFallback([&asked](const Request& r) -> std::optional<Response> {
    ++asked;
    if (r.path == "/keep-404") return std::nullopt;
    return Response{200, "console", "text/html", {}};
  });
  auto run = [&router](std::string method, std::string path) {
    Request r = Get(std::move(path));
    r.method = std::move(method);
    return *router.TryHandleWithoutBlocking(router.Match(r), r);
  };
  EXPECT_EQ(run("GET", "/pipelines/x").body, "console");
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(run("GET", "/api/v1/things").body, "{}");
  // A known path with another verb stays a 405.
  EXPECT_EQ(run("POST", "/api/v1/things").status, 405);
  EXPECT_EQ(asked, 1);
  const auto kept = run("GET", "/keep-404");
  EXPECT_EQ(kept.status, 404);
  EXPECT_EQ(kept.content_type, "application/json");
  EXPECT_EQ(asked, 2);
}

TEST(RouterFallback, AThrowingFallbackAnswers500) {
  AllowAll auth;
  Router router(auth);
  router.SetFallback(
      [](const Request&) -> std::optional<Response> { throw std::runtime_error("boom"); });
  Request r = Get("/x");
  const auto answer = *router.TryHandleWithoutBlocking(router.Match(r), r);
  EXPECT_EQ(answer.status, 500);
  EXPECT_EQ(answer.body.find("boom"), std::string::npos);
}

}  // namespace
}  // namespace sb::http
