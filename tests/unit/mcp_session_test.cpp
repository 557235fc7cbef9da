// HttpSession over loopback against tests/fakes/fake_mcp.py (Streamable HTTP from the spec):
// lifecycle, pagination, JSON and SSE answers, list_changed, and what hostile servers cost.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <string>
#include <vector>

#include "mcp/http_session.hpp"
#include "support/fake_mcp_process.hpp"

namespace sb::mcp {
namespace {

using namespace std::chrono_literals;
using util::ErrorCode;

using FakeMcp = test::FakeMcpProcess;

// Runs `body` on a fresh io_context with a real HttpClient and waits for it.
template <typename T, typename F>
T RunOnIo(F body) {
  boost::asio::io_context io;
  auto http = net::MakeHttpClient(io.get_executor(), {});
  std::promise<T> done;
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { done.set_value(co_await body(*http)); },
      boost::asio::detached);
  io.run();
  return done.get_future().get();
}

HttpTarget Target(const FakeMcp& fake, std::chrono::milliseconds timeout = 5s) {
  HttpTarget t;
  t.url = fake.url();
  t.timeout = timeout;
  t.max_message_bytes = 256 * 1024;
  return t;
}

void CheckFullExchange(const FakeMcp& fake) {
  auto out =
      RunOnIo<std::string>([&](net::HttpClient& http) -> boost::asio::awaitable<std::string> {
        HttpSession s(http, Target(fake));
        if (auto r = co_await s.Initialize(); !r) co_return "init: " + r.error().message;
        auto tools = co_await s.ListTools();
        if (!tools) co_return "list: " + tools.error().message;
        std::string names;
        for (const auto& t : *tools) names += t.name + ",";
        util::JsonObject args{{"a", 2}, {"b", 40}};
        auto sum = co_await s.CallTool("add", args, 5s);
        if (!sum) co_return "call: " + sum.error().message;
        auto grown = co_await s.CallTool("grow", {}, 5s);
        if (!grown) co_return "grow: " + grown.error().message;
        const bool changed = s.tools_changed();
        auto again = co_await s.ListTools();
        if (!again) co_return "list2: " + again.error().message;
        auto unknown = co_await s.CallTool("nope", {}, 5s);
        if (auto p = co_await s.Ping(); !p) co_return "ping: " + p.error().message;
        co_await s.Close();
        co_return names + "|" + sum->text + "|" + (changed ? "changed" : "same") + "|" +
            std::to_string(again->size()) + "|" + (unknown ? "ok" : unknown.error().message) + "|" +
            s.protocol_version();
      });
  EXPECT_EQ(out.substr(0, out.find('|')), "echo,add,slow,crash,grow,");
  EXPECT_NE(out.find("|42|"), std::string::npos) << out;
  EXPECT_NE(out.find("|6|"), std::string::npos) << out;
  EXPECT_NE(out.find("Unknown tool: nope"), std::string::npos) << out;
  EXPECT_NE(out.find("|2025-06-18"), std::string::npos) << out;
}

TEST(McpHttpSession, JsonAnswers) {
  FakeMcp fake({});
  ASSERT_GT(fake.port(), 0);
  CheckFullExchange(fake);
}

TEST(McpHttpSession, SseAnswersCarryNotificationsAndTheSessionId) {
  FakeMcp fake({"--sse-answers"});
  ASSERT_GT(fake.port(), 0);
  CheckFullExchange(fake);
  // The list_changed notification only travels in an SSE answer.
  auto changed = RunOnIo<bool>([&](net::HttpClient& http) -> boost::asio::awaitable<bool> {
    HttpSession s(http, Target(fake));
    if (!co_await s.Initialize()) co_return false;
    if (!co_await s.CallTool("grow", {}, 5s)) co_return false;
    co_return s.tools_changed();
  });
  EXPECT_TRUE(changed);
}

util::Error CallUnder(const FakeMcp& fake, std::chrono::milliseconds timeout,
                      const std::string& tool) {
  return RunOnIo<util::Error>([&](net::HttpClient& http) -> boost::asio::awaitable<util::Error> {
    HttpSession s(http, Target(fake, timeout));
    if (auto r = co_await s.Initialize(); !r) co_return r.error();
    auto call = co_await s.CallTool(tool, {}, timeout);
    if (call) co_return util::Error{ErrorCode::kInternal, "answered: " + call->text};
    co_return call.error();
  });
}

TEST(McpHttpSession, HostileServersCostOneFailedCall) {
  {
    FakeMcp fake({"--hostile", "never"});
    const auto start = std::chrono::steady_clock::now();
    auto e = CallUnder(fake, 1s, "echo");
    EXPECT_EQ(e.code, ErrorCode::kUpstreamTimeout) << e.message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  {
    FakeMcp fake({"--hostile", "endless"});
    auto e = CallUnder(fake, 10s, "echo");
    EXPECT_EQ(e.code, ErrorCode::kUpstreamFailed) << e.message;
  }
  {
    FakeMcp fake({"--hostile", "huge-list"});
    auto e =
        RunOnIo<util::Error>([&](net::HttpClient& http) -> boost::asio::awaitable<util::Error> {
          HttpSession s(http, Target(fake));
          if (auto r = co_await s.Initialize(); !r) co_return r.error();
          auto l = co_await s.ListTools();
          co_return l ? util::Error{ErrorCode::kInternal, "listed"} : l.error();
        });
    EXPECT_EQ(e.code, ErrorCode::kUpstreamFailed) << e.message;
  }
  {
    FakeMcp fake({"--hostile", "invalid"});
    auto e = CallUnder(fake, 5s, "echo");
    EXPECT_EQ(e.code, ErrorCode::kUpstreamFailed);
    EXPECT_NE(e.message.find("invalid JSON-RPC"), std::string::npos) << e.message;
  }
  {
    FakeMcp fake({});
    auto e = CallUnder(fake, 5s, "crash");
    EXPECT_NE(e.code, ErrorCode::kInternal) << e.message;  // failed, not answered
  }
}

}  // namespace
}  // namespace sb::mcp
