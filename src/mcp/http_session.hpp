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
#include "mcp/session_core.hpp"
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
class HttpSession final : public RpcSession {
 public:
  HttpSession(net::HttpClient& http, HttpTarget target)
      : RpcSession({target.timeout, target.max_message_bytes, target.max_tools}),
        http_(http),
        target_(std::move(target)) {}

  // DELETE with the session id, when there is one; errors are ignored (the server may not allow
  // it, and the session is ours to forget anyway).
  boost::asio::awaitable<void> Close() override;

 protected:
  boost::asio::awaitable<util::Result<util::Json>> Request(
      std::string_view method, util::JsonObject params, std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<util::Result<void>> Notify(std::string_view method) override;

 private:
  net::HttpRequest NewPost(std::string body, std::chrono::milliseconds timeout) const;

  net::HttpClient& http_;
  HttpTarget target_;
  std::int64_t next_id_ = 1;
  std::string session_id_;
};

}  // namespace sb::mcp
