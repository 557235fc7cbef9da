#include "mcp/http_session.hpp"

#include <fmt/format.h>

#include <optional>

#include "net/stream_parsers.hpp"

namespace sb::mcp {

namespace {

using util::ErrorCode;
namespace asio = boost::asio;

util::Error Failed(std::string message) { return {ErrorCode::kUpstreamFailed, std::move(message)}; }

}  // namespace

net::HttpRequest HttpSession::NewPost(std::string body, std::chrono::milliseconds timeout) const {
  net::HttpRequest req;
  req.method = "POST";
  req.url = target_.url;
  req.body = std::move(body);
  req.headers = target_.headers;
  req.headers.emplace_back("Content-Type", "application/json");
  req.headers.emplace_back("Accept", "application/json, text/event-stream");
  if (!session_id_.empty()) req.headers.emplace_back("Mcp-Session-Id", session_id_);
  if (!protocol_version_.empty())
    req.headers.emplace_back("MCP-Protocol-Version", protocol_version_);
  req.timeouts.connect = std::min(timeout, std::chrono::milliseconds(10'000));
  req.timeouts.total = timeout;
  req.timeouts.idle = timeout;
  req.max_response_bytes = target_.max_message_bytes;
  return req;
}

asio::awaitable<util::Result<util::Json>> HttpSession::Request(std::string_view method,
                                                               util::JsonObject params,
                                                               std::chrono::milliseconds timeout) {
  const std::int64_t id = next_id_++;
  net::HttpRequest req = NewPost(BuildRequest(id, method, std::move(params)), timeout);
  // An SSE answer may carry notifications (and requests we do not serve) before our response.
  // The stream is read to its end (the server SHOULD close it after the response; one that does
  // not costs the timeout, within the byte cap), because the sink never sees the headers and an
  // early stop would lose them (the Mcp-Session-Id of an initialize answer).
  net::SseParser sse;
  sse.max_event_bytes = target_.max_message_bytes;
  std::optional<Message> answer;
  std::string invalid;
  bool is_sse = false;
  bool sniffed = false;
  std::string json_body;
  // The sink runs on the HTTP client's connection strand, not ours: it only touches locals.
  bool list_changed = false;
  auto sink = [&](std::string_view piece) -> bool {
    if (!sniffed) {
      sniffed = true;
      // The sink sees the body before we see the headers: an SSE stream starts with a field
      // name or a comment, a JSON answer with "{" (whitespace aside).
      std::size_t i = piece.find_first_not_of(" \t\r\n");
      is_sse = i != std::string_view::npos && piece[i] != '{' && piece[i] != '[';
    }
    if (!is_sse) {
      json_body.append(piece);
      return true;
    }
    return sse.Feed(piece, [&](const net::SseEvent& e) {
      if (answer || !invalid.empty()) return;
      if (!e.event.empty() && e.event != "message") return;
      if (e.data.empty()) return;
      Message m = ParseMessage(e.data);
      if (m.kind == Message::Kind::kInvalid) {
        invalid = m.invalid_reason;
      } else if (m.kind == Message::Kind::kResponse && m.int_id == id) {
        answer = std::move(m);
      } else if (m.kind == Message::Kind::kNotification &&
                 m.method == "notifications/tools/list_changed") {
        list_changed = true;
      }
    }) && invalid.empty();
  };
  auto res = co_await http_.Send(std::move(req), sink);
  if (list_changed) tools_changed_ = true;
  if (!res && !(res.error().code == ErrorCode::kCancelled && !invalid.empty())) {
    if (res.error().code == ErrorCode::kCancelled) {
      co_return tl::make_unexpected(Failed(fmt::format(
          "the server's event stream broke the {}-byte message limit", target_.max_message_bytes)));
    }
    co_return tl::make_unexpected(res.error());
  }
  if (res) {
    if (res->status == 404 && !session_id_.empty()) {
      co_return util::Fail(ErrorCode::kUnavailable, "the server ended the MCP session");
    }
    if (res->status / 100 != 2) {
      co_return tl::make_unexpected(
          Failed(fmt::format("{} answered HTTP {}", method, res->status)));
    }
    if (auto sid = res->Header("mcp-session-id"); !sid.empty() && session_id_.empty()) {
      // Visible ASCII only (spec); anything else is not echoed back.
      bool ok = sid.size() <= 256;
      for (char c : sid) ok = ok && c > 0x20 && c < 0x7f;
      if (ok) session_id_ = std::string(sid);
    }
    if (!is_sse && !answer) {
      const std::string& body = json_body.empty() ? res->body : json_body;
      Message m = ParseMessage(body);
      if (m.kind == Message::Kind::kInvalid) {
        invalid = m.invalid_reason;
      } else if (m.kind == Message::Kind::kResponse && m.int_id == id) {
        answer = std::move(m);
      } else {
        invalid = "the answer is not the response to our request";
      }
    }
    if (is_sse && !answer && invalid.empty())
      sse.Finish([&](const net::SseEvent& e) {
        Message m = ParseMessage(e.data);
        if (m.kind == Message::Kind::kResponse && m.int_id == id) answer = std::move(m);
      });
  }
  if (!invalid.empty()) {
    co_return tl::make_unexpected(InvalidRpc(invalid));
  }
  if (!answer) co_return tl::make_unexpected(Failed(fmt::format("no response to {}", method)));
  co_return ResultOf(method, std::move(*answer));
}

asio::awaitable<util::Result<void>> HttpSession::Notify(std::string_view method) {
  auto res = co_await http_.Send(NewPost(BuildNotification(method, {}), target_.timeout));
  if (!res) co_return tl::make_unexpected(res.error());
  if (res->status / 100 != 2) {
    co_return tl::make_unexpected(Failed(fmt::format("{} answered HTTP {}", method, res->status)));
  }
  co_return util::Ok();
}

asio::awaitable<void> HttpSession::Close() {
  if (session_id_.empty()) co_return;
  net::HttpRequest req;
  req.method = "DELETE";
  req.url = target_.url;
  req.headers = target_.headers;
  req.headers.emplace_back("Mcp-Session-Id", session_id_);
  req.timeouts.total = req.timeouts.idle = req.timeouts.connect = std::chrono::seconds(5);
  req.max_response_bytes = 64 * 1024;
  (void)co_await http_.Send(std::move(req));
  session_id_.clear();
}

}  // namespace sb::mcp
