// StdioSession and SseSession against tests/fakes/fake_mcp.py (the spec's stdio transport and
// the HTTP+SSE transport of 2024-11-05): lifecycle, paging, overlapping calls, deadlines, the
// server's own requests, hostile servers, a server dying mid-call, and the child reaped on Close.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "mcp/session_factory.hpp"
#include "mcp/sse_session.hpp"
#include "mcp/stdio_session.hpp"
#include "support/fake_mcp_process.hpp"

namespace sb::mcp {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using util::ErrorCode;

using FakeHttp = test::FakeMcpProcess;

template <typename T, typename F>
T RunOnIo(F body) {
  asio::io_context io;
  auto http = net::MakeHttpClient(io.get_executor(), {});
  std::promise<T> done;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> { done.set_value(co_await body(*http, io.get_executor())); },
      asio::detached);
  io.run();
  return done.get_future().get();
}

// Tool arguments, built outside the coroutines (GCC 12 miscompiles braced lists inside them).
util::JsonObject Obj(std::string_view key, util::Json value) {
  util::JsonObject o;
  o[key] = std::move(value);
  return o;
}
util::JsonObject Obj(std::string_view k1, util::Json v1, std::string_view k2, util::Json v2) {
  util::JsonObject o = Obj(k1, std::move(v1));
  o[k2] = std::move(v2);
  return o;
}

asio::awaitable<void> Sleep(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

// Processes whose command line holds `marker` (the fake's --log-env argument).
int CountProcessesWith(const std::string& marker) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline.find(marker) != std::string::npos) ++n;
  }
  return n;
}

class McpStdioSession : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sb-mcp-stdio-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "data");
    settings_.sandbox = sandbox::SandboxOptions{};  // on, as the server's default
    settings_.data_root = root_ / "data" / "mcp";
    settings_.protected_dir = root_ / "data";
    settings_.stop_grace = 1s;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  StdioTarget Target(std::vector<std::string> extra, std::chrono::milliseconds timeout = 10s) {
    StdioTarget t;
    t.argv = {"python3", SB_FAKE_MCP, "--stdio", "--log-env", marker_};
    for (auto& e : extra) t.argv.push_back(std::move(e));
    t.limits.timeout = timeout;
    t.limits.max_message_bytes = 256 * 1024;
    return t;
  }

  std::unique_ptr<StdioSession> Make(StdioTarget target) {
    return std::make_unique<StdioSession>(executor_, std::move(target), settings_, "0123-uuid",
                                          "fake");
  }

  fs::path root_;
  StdioSettings settings_;
  asio::any_io_executor executor_;
  const std::string marker_ = "SB_MCP_MARK_" + std::to_string(::getpid());
};

TEST_F(McpStdioSession, LifecycleToolsAndCloseReapsTheSandboxedChild) {
  int pid = -1;
  std::string sandbox;
  auto out = RunOnIo<std::string>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        executor_ = ex;
        auto s = Make(Target({}));
        if (auto r = co_await s->Initialize(); !r) co_return "init: " + r.error().message;
        pid = s->pid();
        sandbox = s->sandbox_description();
        auto tools = co_await s->ListTools();
        if (!tools) co_return "list: " + tools.error().message;
        std::string names;
        for (const auto& t : *tools) names += t.name + ",";
        auto sum = co_await s->CallTool("add", Obj("a", 2, "b", 40), 5s);
        if (!sum) co_return "add: " + sum.error().message;
        if (!co_await s->CallTool("grow", {}, 5s)) co_return "grow failed";
        const bool changed = s->tools_changed();
        auto again = co_await s->ListTools();
        if (!again) co_return "list2: " + again.error().message;
        auto unknown = co_await s->CallTool("nope", {}, 5s);
        if (auto p = co_await s->Ping(); !p) co_return "ping: " + p.error().message;
        const bool alive = s->alive();
        co_await s->Close();
        co_return names + "|" + sum->text + "|" + (changed ? "changed" : "same") + "|" +
            std::to_string(again->size()) + "|" + (unknown ? "ok" : unknown.error().message) + "|" +
            s->protocol_version() + "|" + (alive ? "alive" : "dead") + "|" +
            (s->alive() ? "alive" : "closed");
      });
  EXPECT_EQ(out,
            "echo,add,slow,crash,grow,|42|changed|6|tools/call failed: Unknown tool: nope "
            "(-32602)|2025-06-18|alive|closed");
  EXPECT_NE(sandbox.find("bubblewrap; network on"), std::string::npos) << sandbox;
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(pid, 0), -1) << "the child is still there (or a zombie)";
  EXPECT_EQ(CountProcessesWith(marker_), 0);
  EXPECT_TRUE(fs::is_directory(settings_.data_root / "0123-uuid"));
}

TEST_F(McpStdioSession, OverlappingCallsAndAPerCallDeadline) {
  auto out = RunOnIo<std::string>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        executor_ = ex;
        auto s = Make(Target({}));
        if (auto r = co_await s->Initialize(); !r) co_return "init: " + r.error().message;
        const auto start = std::chrono::steady_clock::now();
        // The slow call misses its deadline; the quick ones, sent after it, are answered.
        auto [slow, quick, sum] = co_await (s->CallTool("slow", Obj("seconds", 3), 500ms) &&
                                            s->CallTool("echo", Obj("text", "hi"), 5s) &&
                                            s->CallTool("add", Obj("a", 1, "b", 2), 5s));
        const auto spent = std::chrono::steady_clock::now() - start;
        std::string r = (slow ? "answered" : std::to_string(static_cast<int>(slow.error().code))) +
                        "|" + (quick ? quick->text : quick.error().message) + "|" +
                        (sum ? sum->text : sum.error().message) + "|" +
                        (spent < 2s ? "fast" : "slow") + "|" + (s->alive() ? "alive" : "dead");
        auto after = co_await s->CallTool("echo", Obj("text", "again"), 5s);
        r += "|" + (after ? after->text : after.error().message);
        co_await s->Close();
        co_return r;
      });
  EXPECT_EQ(out, std::to_string(static_cast<int>(ErrorCode::kUpstreamTimeout)) +
                     "|echo: hi|3|fast|alive|echo: again");
}

TEST_F(McpStdioSession, TheServersRequestsAreAnsweredAndItsEnvIsMasked) {
  ::setenv("SB_MCP_SERVER_ONLY", "server-secret", 1);
  auto tail = RunOnIo<std::vector<std::string>>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::vector<std::string>> {
        executor_ = ex;
        StdioTarget t = Target({"--ping-client"});
        t.argv[4] = "MCP_TOKEN";  // --log-env MCP_TOKEN
        t.env.emplace_back("MCP_TOKEN", "tok-1234567890");
        auto s = Make(std::move(t));
        if (auto r = co_await s->Initialize(); !r)
          co_return std::vector<std::string>(1, "init: " + r.error().message);
        for (int i = 0; i < 100 && s->StderrTail().size() < 4; ++i) co_await Sleep(50ms);
        auto lines = s->StderrTail();
        co_await s->Close();
        co_return lines;
      });
  std::string all;
  for (const auto& l : tail) all += l + "\n";
  EXPECT_NE(all.find("fake-mcp: MCP_TOKEN=****\n"), std::string::npos) << all;
  EXPECT_EQ(all.find("tok-1234567890"), std::string::npos) << all;
  EXPECT_NE(all.find("client answered s1: {\"result\": {}}"), std::string::npos) << all;
  EXPECT_NE(all.find("client answered s2: {\"error\": {\"code\": -32601"), std::string::npos)
      << all;
  // Nothing of the server's environment reaches the child.
  auto leak = RunOnIo<std::string>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        executor_ = ex;
        StdioTarget t = Target({});
        t.argv[4] = "SB_MCP_SERVER_ONLY";
        auto s = Make(std::move(t));
        if (auto r = co_await s->Initialize(); !r) co_return "init: " + r.error().message;
        for (int i = 0; i < 100 && s->StderrTail().size() < 2; ++i) co_await Sleep(50ms);
        auto lines = s->StderrTail();
        co_await s->Close();
        std::string second = "no log";
        if (lines.size() >= 2) second = lines[1];
        co_return second;
      });
  EXPECT_EQ(leak, "fake-mcp: SB_MCP_SERVER_ONLY=");
}

// What a hostile or dying server costs: one failed call, or the session when the transport
// itself is broken.
TEST_F(McpStdioSession, HostileServers) {
  struct Case {
    std::vector<std::string> extra;
    std::string tool;  // "" lists the tools
    ErrorCode code;
    std::string fragment;
    bool alive_after;
  };
  const std::vector<Case> cases = {
      {{"--hostile", "never"}, "echo", ErrorCode::kUpstreamTimeout, "within 1000 ms", true},
      {{"--hostile", "endless"}, "echo", ErrorCode::kUpstreamFailed, "262144-byte", false},
      {{"--hostile", "huge-list"}, "", ErrorCode::kUpstreamFailed, "262144-byte", false},
      {{}, "crash", ErrorCode::kUnavailable, "process ended", false},
      {{"--hostile", "invalid"}, "init", ErrorCode::kUpstreamFailed, "invalid JSON-RPC", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.extra.empty() ? c.tool : c.extra.back());
    int pid = -1;
    auto out = RunOnIo<std::pair<util::Error, bool>>(
        [&](net::HttpClient&,
            asio::any_io_executor ex) -> asio::awaitable<std::pair<util::Error, bool>> {
          executor_ = ex;
          auto s = Make(Target(c.extra, 5s));
          auto init = co_await s->Initialize();
          pid = s->pid();
          util::Error e{ErrorCode::kInternal, "no failure"};
          if (!init) {
            e = init.error();
          } else if (c.tool.empty()) {
            auto l = co_await s->ListTools();
            if (!l) e = l.error();
          } else {
            auto r = co_await s->CallTool(c.tool, {}, 1s);
            if (!r) e = r.error();
          }
          // The end of a broken session is seen without another call.
          for (int i = 0; i < 40 && s->alive() != c.alive_after; ++i) co_await Sleep(50ms);
          const bool alive = s->alive();
          co_await s->Close();
          co_return std::make_pair(e, alive);
        });
    EXPECT_EQ(out.first.code, c.code) << out.first.message;
    EXPECT_NE(out.first.message.find(c.fragment), std::string::npos) << out.first.message;
    EXPECT_EQ(out.second, c.alive_after);
    EXPECT_EQ(::kill(pid, 0), -1);
  }
  EXPECT_EQ(CountProcessesWith(marker_), 0);
}

TEST_F(McpStdioSession, ADroppedSessionKillsItsProcessAndBadCommandsAreNamed) {
  auto failed = RunOnIo<std::string>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        executor_ = ex;
        {
          auto s = Make(Target({}));
          if (auto r = co_await s->Initialize(); !r) co_return "init: " + r.error().message;
          // Dropped without Close, mid-call (the call is abandoned with it).
        }
        StdioTarget missing = Target({});
        missing.argv = {"no-such-mcp-server-binary"};
        auto s = Make(std::move(missing));
        auto r = co_await s->Initialize();
        co_return r ? "started" : r.error().message;
      });
  EXPECT_NE(failed.find("not installed"), std::string::npos) << failed;
  EXPECT_EQ(CountProcessesWith(marker_), 0);  // io.run() returned: the reaper finished
}

TEST_F(McpStdioSession, AChildKilledFromOutsideEndsTheSessionWithoutACall) {
  auto out = RunOnIo<std::string>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        executor_ = ex;
        auto s = Make(Target({}));
        if (auto r = co_await s->Initialize(); !r) co_return "init: " + r.error().message;
        ::kill(s->pid(), SIGKILL);
        for (int i = 0; i < 100 && s->alive(); ++i) co_await Sleep(50ms);
        const bool alive = s->alive();
        auto call = co_await s->CallTool("echo", Obj("text", "late"), 5s);
        co_await s->Close();
        co_return std::string(alive ? "alive" : "dead") + "|" +
            (call ? call->text : std::to_string(static_cast<int>(call.error().code)));
      });
  EXPECT_EQ(out, "dead|" + std::to_string(static_cast<int>(ErrorCode::kUnavailable)));
  EXPECT_EQ(CountProcessesWith(marker_), 0);
}

// A server that ignores the end of its input and SIGTERM is killed after the second grace.
TEST_F(McpStdioSession, CloseEscalatesToSigkill) {
  settings_.sandbox = sandbox::SandboxOptions::Off();  // SIGTERM reaches the program itself
  settings_.stop_grace = 300ms;
  int pid = -1;
  std::chrono::steady_clock::duration closing{};
  auto init = RunOnIo<std::string>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        executor_ = ex;
        StdioTarget t = Target({}, 1s);
        t.argv = {"python3", "-c",
                  "import signal, sys, time\n"
                  "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                  "sys.stdin.read()\n"
                  "time.sleep(60)  # " +
                      marker_};
        auto s = Make(std::move(t));
        auto r = co_await s->Initialize();  // never answered
        pid = s->pid();
        const auto start = std::chrono::steady_clock::now();
        co_await s->Close();
        closing = std::chrono::steady_clock::now() - start;
        co_return r ? "answered" : r.error().message;
      });
  EXPECT_NE(init.find("did not answer initialize"), std::string::npos) << init;
  EXPECT_GE(closing, 600ms);
  EXPECT_LT(closing, 3s);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(CountProcessesWith(marker_), 0);
}

TEST_F(McpStdioSession, RunsUnsandboxedWhenTheAdminSaysSo) {
  settings_.sandbox = sandbox::SandboxOptions::Off();
  auto out = RunOnIo<std::string>(
      [&](net::HttpClient&, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        executor_ = ex;
        auto s = Make(Target({}));
        if (auto r = co_await s->Initialize(); !r) co_return "init: " + r.error().message;
        auto echo = co_await s->CallTool("echo", Obj("text", "plain"), 5s);
        const std::string sandbox = s->sandbox_description();
        co_await s->Close();
        co_return (echo ? echo->text : echo.error().message) + "|" + sandbox;
      });
  EXPECT_EQ(out, "echo: plain|none (plugins.sandbox: off)");
}

TEST(McpStdioOwnFolders, BindsTheCommandsFoldersButNothingSensitive) {
  const fs::path fake = fs::weakly_canonical(SB_FAKE_MCP);
  const fs::path data = fake.parent_path().parent_path();  // tests/: holds the fake's folder
  auto folders = OwnFolders({"python3", fake.string(), "/usr/bin/env", "/", "/etc/passwd", "/tmp",
                             "--flag", "relative/x.py"},
                            "/nonexistent-data");
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_EQ(folders[0], fake.parent_path());
  // Nothing overlapping the server's data directory, either way.
  EXPECT_TRUE(OwnFolders({fake.string()}, data).empty());
  EXPECT_TRUE(OwnFolders({fake.string()}, fake.parent_path() / "sub").empty());
}

// -- HTTP+SSE ------------------------------------------------------------------------------------

SseTarget SseOf(const FakeHttp& fake, std::chrono::milliseconds timeout = 5s) {
  SseTarget t;
  t.url = fake.base() + "/sse";
  t.headers = {{"Authorization", "Bearer sse-token"}};
  t.limits.timeout = timeout;
  t.limits.max_message_bytes = 256 * 1024;
  return t;
}

TEST(McpSseSession, LifecycleToolsOverlapAndTheServersRequests) {
  FakeHttp fake({"--ping-client"});
  ASSERT_GT(fake.port(), 0);
  std::string endpoint;
  auto out = RunOnIo<std::string>(
      [&](net::HttpClient& http, asio::any_io_executor ex) -> asio::awaitable<std::string> {
        SseSession s(http, ex, SseOf(fake));
        if (auto r = co_await s.Initialize(); !r) co_return "init: " + r.error().message;
        endpoint = s.endpoint();
        auto tools = co_await s.ListTools();
        if (!tools) co_return "list: " + tools.error().message;
        std::string names;
        for (const auto& t : *tools) names += t.name + ",";
        auto [slow, quick] = co_await (s.CallTool("slow", Obj("seconds", 3), 500ms) &&
                                       s.CallTool("add", Obj("a", 2, "b", 40), 5s));
        if (!co_await s.CallTool("grow", {}, 5s)) co_return "grow failed";
        const bool changed = s.tools_changed();
        auto again = co_await s.ListTools();
        if (!again) co_return "list2: " + again.error().message;
        if (auto p = co_await s.Ping(); !p) co_return "ping: " + p.error().message;
        const bool alive = s.alive();
        co_await s.Close();
        // What the fake received: the server's two requests answered by POST.
        net::HttpRequest get;
        get.url = fake.base() + "/_control/requests";
        auto reqs = co_await http.Send(get);
        co_return names + "|" +
            (slow ? "answered" : std::to_string(static_cast<int>(slow.error().code))) + "|" +
            (quick ? quick->text : quick.error().message) + "|" + (changed ? "changed" : "same") +
            "|" + std::to_string(again->size()) + "|" + (alive ? "alive" : "dead") + "|" +
            (s.alive() ? "alive" : "closed") + "|" + (reqs ? reqs->body : reqs.error().message);
      });
  EXPECT_EQ(out.substr(0, out.find("|closed|") + 7),
            "echo,add,slow,crash,grow,|" +
                std::to_string(static_cast<int>(ErrorCode::kUpstreamTimeout)) +
                "|42|changed|6|alive|closed");
  EXPECT_EQ(endpoint.rfind(fake.base() + "/messages?session_id=", 0), 0u) << endpoint;
  EXPECT_NE(out.find(R"({\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{}})"), std::string::npos)
      << out;
  EXPECT_NE(out.find(R"(\"id\":\"s2\",\"error\":{\"code\":-32601)"), std::string::npos) << out;
  EXPECT_NE(out.find("\"authorization\": \"Bearer sse-token\""), std::string::npos);
}

util::Error SseFailure(const FakeHttp& fake, const std::string& tool, bool* alive_after,
                       std::chrono::milliseconds read_timeout = 30s) {
  return RunOnIo<util::Error>(
      [&](net::HttpClient& http, asio::any_io_executor ex) -> asio::awaitable<util::Error> {
        SseTarget t = SseOf(fake);
        t.read_timeout = read_timeout;
        SseSession s(http, ex, std::move(t));
        util::Error e{ErrorCode::kInternal, "no failure"};
        if (auto r = co_await s.Initialize(); !r) {
          e = r.error();
        } else if (tool == "list") {
          auto l = co_await s.ListTools();
          if (!l) e = l.error();
        } else if (tool == "wait") {
          for (int i = 0; i < 60 && s.alive(); ++i) co_await Sleep(50ms);
          auto p = co_await s.Ping();
          if (!p) e = p.error();
        } else {
          auto r = co_await s.CallTool(tool, {}, 1s);
          if (!r) e = r.error();
        }
        for (int i = 0; i < 40 && s.alive() != *alive_after; ++i) co_await Sleep(50ms);
        *alive_after = s.alive();
        co_await s.Close();
        co_return e;
      });
}

TEST(McpSseSession, HostileServers) {
  struct Case {
    std::vector<std::string> args;
    std::string tool;
    ErrorCode code;
    std::string fragment;
    bool alive_after;
  };
  const std::vector<Case> cases = {
      {{"--hostile", "never"}, "echo", ErrorCode::kUpstreamTimeout, "within", true},
      {{"--hostile", "endless"}, "echo", ErrorCode::kUpstreamFailed, "262144-byte", false},
      {{"--hostile", "huge-list"}, "list", ErrorCode::kUpstreamFailed, "262144-byte", false},
      {{"--hostile", "invalid"}, "init", ErrorCode::kUpstreamFailed, "invalid JSON-RPC", false},
      {{}, "crash", ErrorCode::kUnavailable, "event stream", false},
      {{"--endpoint-prefix", "http://other.example/m"},
       "init",
       ErrorCode::kUpstreamFailed,
       "origin",
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args.empty() ? c.tool : c.args.back());
    FakeHttp fake(c.args);
    ASSERT_GT(fake.port(), 0);
    bool alive = c.alive_after;
    auto e = SseFailure(fake, c.tool, &alive);
    EXPECT_EQ(e.code, c.code) << e.message;
    EXPECT_NE(e.message.find(c.fragment), std::string::npos) << e.message;
    EXPECT_EQ(alive, c.alive_after);
  }
}

TEST(McpSseSession, ASilentStreamEndsTheSession) {
  FakeHttp fake({});
  bool alive = false;
  auto e = SseFailure(fake, "wait", &alive, 1s);
  EXPECT_EQ(e.code, ErrorCode::kUnavailable) << e.message;
  EXPECT_FALSE(alive);
  auto unreachable = RunOnIo<util::Error>(
      [&](net::HttpClient& http, asio::any_io_executor ex) -> asio::awaitable<util::Error> {
        SseTarget t;
        t.url = "http://127.0.0.1:9/sse";
        t.limits.timeout = 2s;
        SseSession s(http, ex, std::move(t));
        auto r = co_await s.Initialize();
        co_return r ? util::Error{} : r.error();
      });
  EXPECT_EQ(unreachable.code, ErrorCode::kUpstreamUnreachable) << unreachable.message;
}

TEST(McpSseSession, EndpointsResolveWithinTheOrigin) {
  const std::string base = "http://Example.com:8080/a/sse?x=1";
  EXPECT_EQ(ResolveSameOrigin(base, "/messages?s=1"), "http://Example.com:8080/messages?s=1");
  EXPECT_EQ(ResolveSameOrigin(base, "messages?s=1"), "http://Example.com:8080/a/messages?s=1");
  EXPECT_EQ(ResolveSameOrigin(base, "http://example.com:8080/m"), "http://example.com:8080/m");
  EXPECT_EQ(ResolveSameOrigin(base, "//example.com:8080/m"), "http://example.com:8080/m");
  EXPECT_EQ(ResolveSameOrigin("https://h/sse", "https://h:443/m"), "https://h:443/m");
  for (const char* bad :
       {"http://other.com:8080/m", "https://example.com:8080/m", "//example.com/m",
        "http://example.com:8081/m", "http://user@example.com:8080/m", "/m x", ""}) {
    EXPECT_EQ(ResolveSameOrigin(base, bad), "") << bad;
  }
}

TEST(McpSessionFactory, EveryModeAndWhatEachNeeds) {
  asio::io_context io;
  auto http = net::MakeHttpClient(io.get_executor(), {});
  domain::McpServer server;
  server.mode = "sse";
  server.extra_args = util::JsonObject{{"url", "http://127.0.0.1:9/sse"}};
  EXPECT_TRUE(MakeSession(server, {*http, io.get_executor()}));
  server.mode = "stdio";
  server.extra_args = util::JsonObject{{"command", "python3"}};
  auto refused = MakeSession(server, {*http, io.get_executor()});
  ASSERT_FALSE(refused);  // no folder for stdio servers in these deps
  StdioSettings stdio;
  stdio.data_root = "/tmp/sb-mcp-factory";
  EXPECT_TRUE(MakeSession(server, {*http, io.get_executor(), stdio}));
  server.extra_args = util::JsonObject{};
  auto no_command = MakeSession(server, {*http, io.get_executor(), stdio});
  ASSERT_FALSE(no_command);
  EXPECT_NE(no_command.error().message.find("command"), std::string::npos);
  server.mode = "ws";
  EXPECT_FALSE(MakeSession(server, {*http, io.get_executor()}));
}

}  // namespace
}  // namespace sb::mcp
