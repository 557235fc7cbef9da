#include "mcp/server_tester.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <memory>

#include "mcp/session_factory.hpp"

namespace sb::mcp {

namespace {

namespace asio = boost::asio;
using util::ErrorCode;

asio::awaitable<util::Result<util::Json>> RunTest(std::unique_ptr<Session> owned) {
  Session& session = *owned;
  auto init = co_await session.Initialize();
  if (!init) {
    co_await session.Close();
    co_return tl::make_unexpected(init.error());
  }
  auto tools = co_await session.ListTools();
  co_await session.Close();
  if (!tools) co_return tl::make_unexpected(tools.error());
  util::JsonArray out;
  for (const auto& t : *tools) {
    out.push_back(util::JsonObject{{"name", t.name}, {"description", t.description}});
  }
  co_return util::JsonObject{{"protocol_version", session.protocol_version()},
                             {"tool_count", static_cast<std::int64_t>(out.size())},
                             {"tools", std::move(out)}};
}

}  // namespace

util::Result<std::int64_t> McpServerTester::StartTest(const domain::McpServer& server) {
  // Each test gets its own strand: a session's calls never run on two threads at once.
  auto strand = asio::make_strand(executor_);
  auto session = MakeSession(server, {http_, strand, stdio_});
  if (!session) return tl::make_unexpected(session.error());
  domain::Task task;
  task.task_type = "mcp-operation";  // LangBot's kind for these tasks
  task.kind = "mcp-test";
  task.name = "mcp-test-" + server.name;
  task.label = "Testing MCP server " + server.name;
  task.status = domain::TaskStatus::kRunning;
  task.current_action = "connecting";
  task.created_at = task.updated_at = clock_.Now();
  task.result = nullptr;
  auto id = tasks_.Insert(task);
  if (!id) return tl::make_unexpected(id.error());
  task.id = *id;
  auto shared = std::make_shared<domain::Task>(std::move(task));
  asio::co_spawn(strand, RunTest(std::move(*session)),
                 [this, shared](std::exception_ptr ep, util::Result<util::Json> result) {
                   if (ep)
                     result = util::Fail(ErrorCode::kInternal, "the test failed unexpectedly");
                   blocking_.Post([this, shared, result = std::move(result)] {
                     domain::Task& t = *shared;
                     t.updated_at = clock_.Now();
                     t.current_action = "done";
                     if (result) {
                       t.status = domain::TaskStatus::kSucceeded;
                       t.result = *result;
                     } else {
                       t.status = domain::TaskStatus::kFailed;
                       t.exception = result.error().message;
                     }
                     if (auto r = tasks_.Update(t); !r) {
                       spdlog::warn("mcp test task {}: {}", t.id, r.error().message);
                     }
                   });
                 });
  return *id;
}

}  // namespace sb::mcp
