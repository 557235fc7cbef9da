// An MCP client session over the Streamable HTTP transport (spec 2025-03-26 / 2025-06-18): every
// message is a POST to one endpoint with `Accept: application/json, text/event-stream`; the
// server answers a request with one JSON body or an SSE stream carrying the response; the
// Mcp-Session-Id it gives at initialize goes on every later request; DELETE ends the session.
//   HttpSession s(http, {url, headers, 10s, 1 << 20});
//   co_await s.Initialize();  auto tools = co_await s.ListTools();
//   auto r = co_await s.CallTool("add", args, 30s);  co_await s.Close();
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mcp/jsonrpc.hpp"
#include "mcp/session.hpp"
#include "net/http_client.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::mcp {

struct HttpTarget {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // the operator's (Authorization...)
  std::chrono::milliseconds timeout{10'000};                 // per request, tool calls excepted
  std::size_t max_message_bytes = 1024 * 1024;               // any one answer, tool results too
  std::size_t max_tools = 512;                               // across every tools/list page
};

// The Session contract; non-2xx answers are kUpstreamFailed, and a 404 on a session is
// kUnavailable (the server forgot it: reconnect). Each request is its own POST, so calls overlap
// freely.
class HttpSession final : public Session {
 public:
  HttpSession(net::HttpClient& http, HttpTarget target) : http_(http), target_(std::move(target)) {}

  boost::asio::awaitable<util::Result<void>> Initialize() override;
  // Follows nextCursor; fails past max_tools or after 50 pages.
  boost::asio::awaitable<util::Result<std::vector<Tool>>> ListTools() override;
  boost::asio::awaitable<util::Result<ToolResult>> CallTool(
      const std::string& name, util::JsonObject arguments,
      std::chrono::milliseconds deadline) override;
  boost::asio::awaitable<util::Result<void>> Ping() override;
  // DELETE with the session id, when there is one; errors are ignored (the server may not allow
  // it, and the session is ours to forget anyway).
  boost::asio::awaitable<void> Close() override;

  bool tools_changed() const override { return tools_changed_; }
  const std::string& protocol_version() const override { return protocol_version_; }

 private:
  net::HttpRequest NewPost(std::string body, std::chrono::milliseconds timeout) const;
  boost::asio::awaitable<util::Result<util::Json>> Call(std::string_view method,
                                                        util::JsonObject params,
                                                        std::chrono::milliseconds timeout);
  boost::asio::awaitable<util::Result<void>> Notify(std::string_view method);
  void Note(const Message& m);

  net::HttpClient& http_;
  HttpTarget target_;
  std::int64_t next_id_ = 1;
  std::string session_id_;
  std::string protocol_version_;
  bool tools_changed_ = false;
};

// A tools/call result to text (content items), bounded by `max_bytes`.
ToolResult ToolResultFromJson(const util::Json& result, std::size_t max_bytes);
// A tools/list page's tools; malformed entries are skipped.
std::vector<Tool> ToolsFromJson(const util::Json& result);

}  // namespace sb::mcp
