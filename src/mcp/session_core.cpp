#include "mcp/session_core.hpp"

#include <fmt/format.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

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

util::Result<util::Json> ResultOf(std::string_view method, Message response) {
  if (response.is_error) {
    return tl::make_unexpected(Failed(
        fmt::format("{} failed: {} ({})", method, response.error_message, response.error_code)));
  }
  return std::move(response.result);
}

util::Error InvalidRpc(std::string_view why) {
  return Failed(fmt::format("invalid JSON-RPC from the server: {}", why));
}

util::Error TooLong(std::size_t max_bytes) {
  return Failed(fmt::format("the server broke the {}-byte message limit", max_bytes));
}

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

void RpcSession::Note(const Message& m) {
  if (m.kind == Message::Kind::kNotification && m.method == "notifications/tools/list_changed") {
    tools_changed_ = true;
  }
}

asio::awaitable<util::Result<void>> RpcSession::Initialize() {
  if (auto connected = co_await Connect(); !connected) {
    co_return tl::make_unexpected(connected.error());
  }
  util::JsonObject params;
  params["protocolVersion"] = kProtocolVersion;
  params["capabilities"] = util::JsonObject{};
  params["clientInfo"] = util::JsonObject{{"name", "switchboard"}, {"version", "1"}};
  auto result = co_await Request("initialize", std::move(params), limits_.timeout);
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

asio::awaitable<util::Result<std::vector<Tool>>> RpcSession::ListTools() {
  tools_changed_ = false;
  std::vector<Tool> all;
  std::string cursor;
  for (int page = 0; page < kMaxPages; ++page) {
    util::JsonObject params;
    if (!cursor.empty()) params["cursor"] = cursor;
    auto result = co_await Request("tools/list", std::move(params), limits_.timeout);
    if (!result) co_return tl::make_unexpected(result.error());
    for (auto& t : ToolsFromJson(*result)) all.push_back(std::move(t));
    if (all.size() > limits_.max_tools) {
      co_return tl::make_unexpected(
          Failed(fmt::format("the server lists more than {} tools", limits_.max_tools)));
    }
    cursor = result->is_object() ? StringField(result->as_object(), "nextCursor") : "";
    if (cursor.empty()) co_return all;
  }
  co_return tl::make_unexpected(Failed("tools/list: more than 50 pages"));
}

asio::awaitable<util::Result<ToolResult>> RpcSession::CallTool(const std::string& name,
                                                               util::JsonObject arguments,
                                                               std::chrono::milliseconds deadline) {
  util::JsonObject params;
  params["name"] = name;
  params["arguments"] = std::move(arguments);
  auto result = co_await Request("tools/call", std::move(params), deadline);
  if (!result) co_return tl::make_unexpected(result.error());
  co_return ToolResultFromJson(*result, limits_.max_message_bytes);
}

asio::awaitable<util::Result<void>> RpcSession::Ping() {
  auto result = co_await Request("ping", util::JsonObject{}, limits_.timeout);
  if (!result) co_return tl::make_unexpected(result.error());
  co_return util::Ok();
}

// -- PendingRequests ------------------------------------------------------------------------

struct PendingRequests::Slot {
  explicit Slot(asio::any_io_executor executor) : timer(executor) {}
  asio::steady_timer timer;
  std::optional<util::Result<Message>> outcome;
};

std::int64_t PendingRequests::Add() {
  const std::int64_t id = next_id_++;
  slots_.emplace(id, std::make_shared<Slot>(executor_));
  return id;
}

asio::awaitable<util::Result<util::Json>> PendingRequests::Wait(std::int64_t id,
                                                                std::string_view method,
                                                                std::chrono::milliseconds timeout) {
  auto it = slots_.find(id);
  if (it == slots_.end()) co_return util::Fail(ErrorCode::kInternal, "no such request");
  auto slot = it->second;
  if (!slot->outcome) {
    slot->timer.expires_after(timeout);
    // Deliver and Fail cancel the timer after setting the outcome.
    auto [ec] = co_await slot->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
  }
  slots_.erase(id);
  if (!slot->outcome) {
    // Not answered: the deadline passed, or the caller's coroutine was cancelled.
    if (slot->timer.expiry() > asio::steady_timer::clock_type::now()) {
      co_return util::Fail(ErrorCode::kCancelled, fmt::format("{} was cancelled", method));
    }
    co_return util::Fail(
        ErrorCode::kUpstreamTimeout,
        fmt::format("the server did not answer {} within {} ms", method, timeout.count()));
  }
  if (!*slot->outcome) co_return tl::make_unexpected(slot->outcome->error());
  co_return ResultOf(method, std::move(**slot->outcome));
}

bool PendingRequests::Deliver(Message response) {
  if (!response.int_id) return false;
  auto it = slots_.find(*response.int_id);
  if (it == slots_.end() || it->second->outcome) return false;
  it->second->outcome = std::move(response);
  it->second->timer.cancel();
  return true;
}

void PendingRequests::Fail(std::int64_t id, const util::Error& error) {
  auto it = slots_.find(id);
  if (it == slots_.end() || it->second->outcome) return;
  it->second->outcome = tl::make_unexpected(error);
  it->second->timer.cancel();
}

void PendingRequests::FailAll(const util::Error& error) {
  for (auto& [id, slot] : slots_) {
    if (slot->outcome) continue;
    slot->outcome = tl::make_unexpected(error);
    slot->timer.cancel();
  }
}

}  // namespace sb::mcp
