// What every transport's session shares: the lifecycle (initialize, version check,
// notifications/initialized), tools/list paging, tools/call and ping over a transport's "send a
// request, await its response" primitive; reading tool lists and results; and, for transports
// where responses arrive apart from their requests (stdio, HTTP+SSE), the table of requests
// awaiting a response by id.
//   class StdioSession final : public RpcSession { ... Request(...) override; Notify(...) ... };
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/jsonrpc.hpp"
#include "mcp/session.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::mcp {

struct SessionLimits {
  std::chrono::milliseconds timeout{10'000};    // per request, tool calls excepted
  std::size_t max_message_bytes = 1024 * 1024;  // any one message, tool results too
  std::size_t max_tools = 512;                  // across every tools/list page
};

class RpcSession : public Session {
 public:
  explicit RpcSession(SessionLimits limits) : limits_(limits) {}

  boost::asio::awaitable<util::Result<void>> Initialize() override;
  // Follows nextCursor; fails past max_tools or after 50 pages.
  boost::asio::awaitable<util::Result<std::vector<Tool>>> ListTools() override;
  boost::asio::awaitable<util::Result<ToolResult>> CallTool(
      const std::string& name, util::JsonObject arguments,
      std::chrono::milliseconds deadline) override;
  boost::asio::awaitable<util::Result<void>> Ping() override;

  bool tools_changed() const override { return tools_changed_; }
  const std::string& protocol_version() const override { return protocol_version_; }

 protected:
  // Sends one request and returns its result; a JSON-RPC error answer is kUpstreamFailed with
  // the server's message (ResultOf).
  virtual boost::asio::awaitable<util::Result<util::Json>> Request(
      std::string_view method, util::JsonObject params, std::chrono::milliseconds timeout) = 0;
  virtual boost::asio::awaitable<util::Result<void>> Notify(std::string_view method) = 0;
  // Called before Initialize's request (the stdio transport starts its process here).
  virtual boost::asio::awaitable<util::Result<void>> Connect() { co_return util::Ok(); }

  // A server's notification: list_changed is remembered.
  void Note(const Message& m);

  const SessionLimits limits_;
  std::string protocol_version_;
  bool tools_changed_ = false;
};

// The result of a response, or kUpstreamFailed "<method> failed: <message> (<code>)".
util::Result<util::Json> ResultOf(std::string_view method, Message response);
util::Error InvalidRpc(std::string_view why);  // "invalid JSON-RPC from the server: <why>"
util::Error TooLong(std::size_t max_bytes);    // "... broke the <n>-byte message limit"

// A tools/call result to text (content items), bounded by `max_bytes`.
ToolResult ToolResultFromJson(const util::Json& result, std::size_t max_bytes);
// A tools/list page's tools; malformed entries are skipped.
std::vector<Tool> ToolsFromJson(const util::Json& result);

// Requests sent and not answered yet, by id; everything runs on one strand. A caller Adds an id
// before sending (the answer may come before it waits), then Waits; the reader Delivers
// responses; FailAll ends every waiting call (the transport is gone).
class PendingRequests {
 public:
  explicit PendingRequests(boost::asio::any_io_executor executor) : executor_(executor) {}

  std::int64_t Add();
  // The response's result (ResultOf) or kUpstreamTimeout after `timeout`; the id is forgotten
  // either way, so a late answer is dropped.
  boost::asio::awaitable<util::Result<util::Json>> Wait(std::int64_t id, std::string_view method,
                                                        std::chrono::milliseconds timeout);
  // False when nobody waits for that id (a late or unknown answer).
  bool Deliver(Message response);
  void Fail(std::int64_t id, const util::Error& error);
  void FailAll(const util::Error& error);
  std::size_t size() const { return slots_.size(); }

 private:
  struct Slot;
  boost::asio::any_io_executor executor_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, std::shared_ptr<Slot>> slots_;
};

}  // namespace sb::mcp
