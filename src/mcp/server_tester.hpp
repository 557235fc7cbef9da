// domain::McpTester over the MCP transports: a task per test, run as a coroutine on the I/O
// context, its row written from the blocking pool.
//   McpServerTester tester(http, executor, tasks, clock, blocking);
//   auto task_id = tester.StartTest(server);
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include "domain/mcp.hpp"
#include "domain/task.hpp"
#include "mcp/stdio_session.hpp"
#include "net/http_client.hpp"
#include "util/blocking_executor.hpp"
#include "util/clock.hpp"

namespace sb::mcp {

class McpServerTester final : public domain::McpTester {
 public:
  // Every reference must outlive this object and the tests it started.
  McpServerTester(net::HttpClient& http, boost::asio::any_io_executor executor,
                  domain::TaskRepository& tasks, const util::Clock& clock,
                  util::BlockingExecutor& blocking, StdioSettings stdio = {})
      : http_(http),
        executor_(executor),
        tasks_(tasks),
        clock_(clock),
        blocking_(blocking),
        stdio_(std::move(stdio)) {}

  // Any mode MakeSession speaks; others kInvalidArgument.
  util::Result<std::int64_t> StartTest(const domain::McpServer& server) override;

 private:
  net::HttpClient& http_;
  boost::asio::any_io_executor executor_;
  domain::TaskRepository& tasks_;
  const util::Clock& clock_;
  util::BlockingExecutor& blocking_;
  StdioSettings stdio_;
};

}  // namespace sb::mcp
