// An MCP client session over the HTTP+SSE transport of revision 2024-11-05 (still served by many
// servers): a GET opens an event stream whose first event, `endpoint`, names the URL to POST
// every client message to; the server's messages (our responses among them, matched by id, so
// calls overlap) arrive as `message` events on that stream. The session ends with the stream.
//   SseSession s(http, strand, {url, headers, limits, 30s});
//   co_await s.Initialize();  ...  co_await s.Close();   // the stream is cancelled
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mcp/session_core.hpp"
#include "net/http_client.hpp"

namespace sb::mcp {

struct SseTarget {
  std::string url;                                           // the GET's
  std::vector<std::pair<std::string, std::string>> headers;  // on the GET and every POST
  SessionLimits limits;
  std::chrono::milliseconds read_timeout{30'000};  // longest silence of the stream (ssereadtimeout)
  // Bytes over the stream's whole life; past it the stream ends and the session with it (the
  // manager reconnects). Also what a non-2xx answer to the GET may cost in memory.
  std::size_t max_stream_bytes = 64 << 20;
};

// The Session contract; the stream ending, failing or going silent past read_timeout makes
// alive() false and fails the waiting calls with kUnavailable; an event over max_message_bytes
// or one that is not JSON-RPC fails them with kUpstreamFailed and ends the stream. An endpoint
// of another origin than `url` is refused (a server must not send our headers elsewhere).
class SseSession final : public RpcSession {
 public:
  // `http` must outlive the session and its stream.
  SseSession(net::HttpClient& http, boost::asio::any_io_executor executor, SseTarget target);
  // Cancels a stream still open.
  ~SseSession() override;

  boost::asio::awaitable<util::Result<std::vector<Tool>>> ListTools() override;
  boost::asio::awaitable<void> Close() override;
  bool tools_changed() const override;
  bool alive() const override;

  // The endpoint the server gave, resolved; empty before Initialize.
  const std::string& endpoint() const;

 protected:
  boost::asio::awaitable<util::Result<void>> Connect() override;
  boost::asio::awaitable<util::Result<util::Json>> Request(
      std::string_view method, util::JsonObject params, std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<util::Result<void>> Notify(std::string_view method) override;

 private:
  struct State;
  boost::asio::any_io_executor executor_;
  std::shared_ptr<State> state_;
};

// `endpoint` (absolute, scheme-relative, absolute-path or relative) resolved against `base`;
// empty when it is malformed or of another origin (scheme, host and port) than `base`.
std::string ResolveSameOrigin(const std::string& base, const std::string& endpoint);

}  // namespace sb::mcp
