#include "mcp/http_session.hpp"

#include <fmt/format.h>

#include <optional>

#include "net/stream_parsers.hpp"

namespace sb::mcp {

namespace {

using util::ErrorCode;
namespace asio = boost::asio;

constexpr int kMaxPages = 50;

util::Error Failed(std::string message) { return {ErrorCode::kUpstreamFailed, std::move(message)}; }

std::string StringField(const util::JsonObject& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || !it->value().is_string()) return {};
  return std::string(it->value().as_string());
}

}  // namespace

std::vector<Tool> ToolsFromJson(const util::Json& result) {
  std::vector<Tool> out;
  if (!result.is_object()) return out;
  auto tools = result.as_object().find("tools");
  if (tools == result.as_object().end() || !tools->value().is_array()) return out;
  for (const auto& t : tools->value().as_array()) {
    if (!t.is_object()) continue;
    Tool tool;
    tool.name = StringField(t.as_object(), "name");
    if (tool.name.empty() || tool.name.size() > 128) continue;
    tool.description = StringField(t.as_object(), "description").substr(0, 4096);
    if (auto s = t.as_object().find("inputSchema");
        s != t.as_object().end() && s->value().is_object()) {
      tool.input_schema = s->value().as_object();
    } else {
      tool.input_schema = util::JsonObject{{"type", "object"}, {"properties", util::JsonObject{}}};
    }
    out.push_back(std::move(tool));
  }
  return out;
}

ToolResult ToolResultFromJson(const util::Json& result, std::size_t max_bytes) {
  ToolResult r;
  if (!result.is_object()) return r;
  const auto& o = result.as_object();
  if (auto e = o.find("isError"); e != o.end() && e->value().is_bool()) {
    r.is_error = e->value().as_bool();
  }
  if (auto content = o.find("content"); content != o.end() && content->value().is_array()) {
    for (const auto& item : content->value().as_array()) {
      if (!item.is_object()) continue;
      const std::string type = StringField(item.as_object(), "type");
      if (!r.text.empty()) r.text.push_back('\n');
      if (type == "text") {
        r.text += StringField(item.as_object(), "text");
      } else {
        r.text += fmt::format("[{} content]", type.substr(0, 32));
      }
    }
  }
  if (r.text.empty()) {
    if (auto s = o.find("structuredContent"); s != o.end())
      r.text = util::SerializeJson(s->value());
  }
  if (r.text.size() > max_bytes) r.text.resize(max_bytes);
  return r;
}

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

void HttpSession::Note(const Message& m) {
  if (m.kind == Message::Kind::kNotification && m.method == "notifications/tools/list_changed") {
    tools_changed_ = true;
  }
}

asio::awaitable<util::Result<util::Json>> HttpSession::Call(std::string_view method,
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
      } else {
        Note(m);
      }
    }) && invalid.empty();
  };
  auto res = co_await http_.Send(std::move(req), sink);
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
    co_return tl::make_unexpected(
        Failed(fmt::format("invalid JSON-RPC from the server: {}", invalid)));
  }
  if (!answer) co_return tl::make_unexpected(Failed(fmt::format("no response to {}", method)));
  if (answer->is_error) {
    co_return tl::make_unexpected(Failed(
        fmt::format("{} failed: {} ({})", method, answer->error_message, answer->error_code)));
  }
  co_return std::move(answer->result);
}

asio::awaitable<util::Result<void>> HttpSession::Notify(std::string_view method) {
  auto res = co_await http_.Send(NewPost(BuildNotification(method, {}), target_.timeout));
  if (!res) co_return tl::make_unexpected(res.error());
  if (res->status / 100 != 2) {
    co_return tl::make_unexpected(Failed(fmt::format("{} answered HTTP {}", method, res->status)));
  }
  co_return util::Ok();
}

asio::awaitable<util::Result<void>> HttpSession::Initialize() {
  util::JsonObject params;
  params["protocolVersion"] = kProtocolVersion;
  params["capabilities"] = util::JsonObject{};
  params["clientInfo"] = util::JsonObject{{"name", "switchboard"}, {"version", "1"}};
  auto result = co_await Call("initialize", std::move(params), target_.timeout);
  if (!result) co_return tl::make_unexpected(result.error());
  if (!result->is_object())
    co_return tl::make_unexpected(Failed("initialize: result is not an object"));
  const std::string version = StringField(result->as_object(), "protocolVersion");
  if (!SupportedProtocolVersion(version)) {
    co_return tl::make_unexpected(Failed(
        fmt::format("the server speaks MCP protocol version '{}', which this client does not",
                    version.substr(0, 32))));
  }
  protocol_version_ = version;
  co_return co_await Notify("notifications/initialized");
}

asio::awaitable<util::Result<std::vector<Tool>>> HttpSession::ListTools() {
  tools_changed_ = false;
  std::vector<Tool> all;
  std::string cursor;
  for (int page = 0; page < kMaxPages; ++page) {
    util::JsonObject params;
    if (!cursor.empty()) params["cursor"] = cursor;
    auto result = co_await Call("tools/list", std::move(params), target_.timeout);
    if (!result) co_return tl::make_unexpected(result.error());
    for (auto& t : ToolsFromJson(*result)) all.push_back(std::move(t));
    if (all.size() > target_.max_tools) {
      co_return tl::make_unexpected(
          Failed(fmt::format("the server lists more than {} tools", target_.max_tools)));
    }
    cursor = result->is_object() ? StringField(result->as_object(), "nextCursor") : "";
    if (cursor.empty()) co_return all;
  }
  co_return tl::make_unexpected(Failed("tools/list: more than 50 pages"));
}

asio::awaitable<util::Result<ToolResult>> HttpSession::CallTool(
    const std::string& name, util::JsonObject arguments, std::chrono::milliseconds deadline) {
  util::JsonObject params;
  params["name"] = name;
  params["arguments"] = std::move(arguments);
  auto result = co_await Call("tools/call", std::move(params), deadline);
  if (!result) co_return tl::make_unexpected(result.error());
  co_return ToolResultFromJson(*result, target_.max_message_bytes);
}

asio::awaitable<util::Result<void>> HttpSession::Ping() {
  auto result = co_await Call("ping", util::JsonObject{}, target_.timeout);
  if (!result) co_return tl::make_unexpected(result.error());
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
