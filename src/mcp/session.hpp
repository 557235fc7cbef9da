// One MCP client session, whatever its transport (stdio child process, HTTP+SSE of 2024-11-05,
// Streamable HTTP): the lifecycle (initialize, then notifications/initialized), tools, pings and
// the end. The session manager and the connection test drive every transport through this.
//   auto s = MakeSession(server, deps);          // session_factory.hpp
//   co_await (*s)->Initialize();  auto tools = co_await (*s)->ListTools();
//   auto r = co_await (*s)->CallTool("add", args, 30s);  co_await (*s)->Close();
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::mcp {

struct Tool {
  std::string name;
  std::string description;
  util::JsonObject input_schema;
};

struct ToolResult {
  std::string text;  // the text content items joined; other kinds named in brackets
  bool is_error = false;
};

// Every call runs on the session's executor (a strand when the I/O context has several threads).
// Calls may overlap once Initialize has succeeded (several conversations call tools at once);
// Initialize and Close do not overlap anything. Failures:
//   kUpstreamUnreachable / kUpstreamTimeout  the transport could not reach the server in time
//   kUpstreamFailed   the server answered wrongly: an answer over the byte cap, invalid JSON-RPC,
//                     an unsupported protocol version, a JSON-RPC error (its message, cut)
//   kUnavailable      the session is gone (the server forgot it, the process exited): reconnect
class Session {
 public:
  virtual ~Session() = default;

  virtual boost::asio::awaitable<util::Result<void>> Initialize() = 0;
  // Every page (nextCursor followed), bounded in tools and pages.
  virtual boost::asio::awaitable<util::Result<std::vector<Tool>>> ListTools() = 0;
  // `deadline` bounds this call alone; the result text is bounded by the session's byte cap.
  virtual boost::asio::awaitable<util::Result<ToolResult>> CallTool(
      const std::string& name, util::JsonObject arguments, std::chrono::milliseconds deadline) = 0;
  virtual boost::asio::awaitable<util::Result<void>> Ping() = 0;
  // Ends the session (DELETE, closing stdin and reaping the child, ...); never fails.
  virtual boost::asio::awaitable<void> Close() = 0;

  // Set when the server sent notifications/tools/list_changed; cleared by ListTools.
  virtual bool tools_changed() const = 0;
  // False once the transport knows the session is over (the child exited, the event stream
  // ended); the manager then reconnects without waiting for a call to fail.
  virtual bool alive() const { return true; }
  // The version the server chose at Initialize.
  virtual const std::string& protocol_version() const = 0;
};

}  // namespace sb::mcp
