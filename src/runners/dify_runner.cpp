#include "runners/dify_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/config_values.hpp"
#include "runners/runner_kit.hpp"

namespace sb::runners {

namespace asio = boost::asio;
using pipeline::AgentReply;
using util::ErrorCode;

namespace {

using OnDelta = std::function<void(const domain::ChatDelta&)>;

enum class AppType { kChat, kAgent, kWorkflow };

// `ai.dify-service-api`, plus what the call needs from the input.
struct Turn {
  std::string base_url;
  AppType app_type = AppType::kChat;
  std::string api_key;
  std::chrono::milliseconds timeout{30'000};
  std::string conversation_key;  // for the conversation map
  std::string user;              // the session id: Dify scopes conversations by user
  std::string query;
  std::vector<std::string> image_urls;  // http(s) only: Dify fetches them itself
  std::string conversation_id;          // empty: start a new conversation
};

util::Result<Turn> ReadTurn(const util::JsonObject& config, const pipeline::AgentInput& input) {
  using pipeline::GetNumber;
  using pipeline::GetString;
  Turn turn;
  turn.base_url =
      GetString(config, {"ai", "dify-service-api", "base-url"}, "https://api.dify.ai/v1");
  while (!turn.base_url.empty() && turn.base_url.back() == '/') turn.base_url.pop_back();
  const std::string type = GetString(config, {"ai", "dify-service-api", "app-type"}, "chat");
  if (type == "chat") {
    turn.app_type = AppType::kChat;
  } else if (type == "agent") {
    turn.app_type = AppType::kAgent;
  } else if (type == "workflow") {
    turn.app_type = AppType::kWorkflow;
  } else {
    return util::Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("dify: app-type '{}' is not one of chat, agent, workflow", type.substr(0, 64)));
  }
  turn.api_key = GetString(config, {"ai", "dify-service-api", "api-key"}, "");
  double seconds = GetNumber(config, {"ai", "dify-service-api", "timeout"}, 30);
  if (!(seconds > 0)) seconds = 30;  // NaN and nonsense too
  seconds = std::min(seconds, 24.0 * 3600);
  turn.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000)));
  turn.conversation_key = SessionKey(input.conversation);
  turn.user = input.conversation.session_id;
  for (const auto& part : input.content) {
    if (part.kind == domain::ContentPart::Kind::kText) {
      if (!turn.query.empty() && !part.text.empty()) turn.query += '\n';
      turn.query += part.text;
    } else if (part.image_url.starts_with("http://") || part.image_url.starts_with("https://")) {
      turn.image_urls.push_back(part.image_url);
    }
  }
  return turn;
}

domain::Usage UsageFrom(const util::JsonObject& message) {
  domain::Usage usage;
  const auto* metadata = message.if_contains("metadata");
  if (!metadata || !metadata->is_object()) return usage;
  const auto* u = metadata->as_object().if_contains("usage");
  if (!u || !u->is_object()) return usage;
  usage.prompt_tokens = IntField(u->as_object(), "prompt_tokens");
  usage.completion_tokens = IntField(u->as_object(), "completion_tokens");
  usage.total_tokens = IntField(u->as_object(), "total_tokens");
  return usage;
}

// Dify's error body is {"status","code","message"}; anything else is quoted, shortened.
std::pair<std::string, std::string> CodeAndMessage(const net::HttpResponse& response) {
  auto parsed = util::ParseJson(response.body);
  if (parsed && parsed->is_object()) {
    std::string code = StringField(parsed->as_object(), "code");
    std::string message = StringField(parsed->as_object(), "message");
    if (!code.empty() || !message.empty()) return {std::move(code), std::move(message)};
  }
  return {fmt::format("HTTP {}", response.status), response.body.substr(0, 200)};
}

util::Error ClassifyStatus(const net::HttpResponse& response, const std::string& api_key) {
  auto [code, message] = CodeAndMessage(response);
  util::Error error;
  switch (response.status) {
    case 401:
      error = {ErrorCode::kUpstreamAuth, "dify: bad API key"};
      break;
    case 404:
      error = {ErrorCode::kUpstreamNotFound, "dify: " + message};
      break;
    case 429:
      error = {ErrorCode::kUpstreamRateLimited, "dify: rate limited: " + message};
      // Dify separates a busy app (retry) from a spent plan quota (don't).
      error.final = code == "rate_limit_error";
      break;
    default:
      error = {ErrorCode::kUpstreamFailed,
               fmt::format("dify: {}: {}", code.empty() ? std::to_string(response.status) : code,
                           message)};
      break;
  }
  error.message = Redact(std::move(error.message), api_key);
  return error;
}

net::HttpRequest MakeRequest(const Turn& turn, std::string path, const util::JsonObject& body,
                             bool streaming) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = turn.base_url + std::move(path);
  request.headers.emplace_back("Authorization", "Bearer " + turn.api_key);
  request.headers.emplace_back("Content-Type", "application/json");
  if (streaming) request.headers.emplace_back("Accept", "text/event-stream");
  request.body = util::SerializeJson(body);
  request.timeouts.connect =
      std::min<std::chrono::milliseconds>(turn.timeout, std::chrono::seconds(10));
  request.timeouts.total = turn.timeout;
  request.timeouts.idle = turn.timeout;
  request.max_response_bytes = 8 * 1024 * 1024;
  return request;
}

util::JsonArray Files(const Turn& turn) {
  util::JsonArray files;
  for (const auto& url : turn.image_urls) {
    files.push_back(
        util::JsonObject{{"type", "image"}, {"transfer_method", "remote_url"}, {"url", url}});
  }
  return files;
}

net::HttpRequest ChatRequest(const Turn& turn, bool streaming) {
  util::JsonObject body{{"inputs", util::JsonObject{}},
                        {"query", turn.query},
                        {"response_mode", streaming ? "streaming" : "blocking"},
                        {"conversation_id", turn.conversation_id},
                        {"user", turn.user}};
  if (!turn.image_urls.empty()) body["files"] = Files(turn);
  return MakeRequest(turn, "/chat-messages", body, streaming);
}

net::HttpRequest WorkflowRequest(const Turn& turn) {
  util::JsonObject body{{"inputs", util::JsonObject{{"query", turn.query}}},
                        {"response_mode", "blocking"},
                        {"user", turn.user}};
  if (!turn.image_urls.empty()) body["files"] = Files(turn);
  return MakeRequest(turn, "/workflows/run", body, false);
}

// A blocking /chat-messages reply; `conversation_id` receives the conversation it belongs to.
util::Result<AgentReply> ParseBlockingChat(const std::string& body, std::string& conversation_id) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed, "dify: the reply is not a JSON object");
  }
  const auto& object = parsed->as_object();
  AgentReply reply;
  reply.text = StringField(object, "answer");
  reply.usage = UsageFrom(object);
  conversation_id = StringField(object, "conversation_id");
  return reply;
}

util::Error Transport(util::Error error, const std::string& api_key) {
  error.message = Redact("dify: " + error.message, api_key);
  return error;
}

// What a chat stream has told so far.
struct ChatStream {
  std::string text;
  std::string conversation_id;
  domain::Usage usage;
  bool ended = false;
  std::optional<util::Error> error = std::nullopt;
};

// Applies one SSE event; false stops reading (the stream failed or is malformed).
bool OnChatEvent(const net::SseEvent& event, ChatStream& stream, const OnDelta& on_delta) {
  if (event.data.empty()) return true;  // `event: ping` keep-alive
  auto parsed = util::ParseJson(event.data);
  if (!parsed || !parsed->is_object()) {
    stream.error = util::Error{ErrorCode::kUpstreamFailed, "dify: malformed stream event"};
    return false;
  }
  const auto& object = parsed->as_object();
  const std::string name = StringField(object, "event");
  if (std::string id = StringField(object, "conversation_id"); !id.empty()) {
    stream.conversation_id = std::move(id);
  }
  if (name == "message" || name == "agent_message") {
    std::string piece = StringField(object, "answer");
    if (piece.empty()) return true;
    stream.text += piece;
    if (on_delta) on_delta(domain::ChatDelta{std::move(piece)});
  } else if (name == "message_replace") {
    stream.text = StringField(object, "answer");
  } else if (name == "message_end") {
    stream.usage = UsageFrom(object);
    stream.ended = true;
  } else if (name == "error") {
    stream.error = util::Error{
        ErrorCode::kUpstreamFailed,
        fmt::format("dify: {}: {}", StringField(object, "code"), StringField(object, "message"))};
    return false;
  }
  return true;
}

// The workflow's answer: `answer` or `text` when it has them, else its first string output.
std::optional<std::string> WorkflowText(const util::JsonObject& outputs) {
  for (const char* key : {"answer", "text"}) {
    if (const auto* v = outputs.if_contains(key); v && v->is_string()) {
      return std::string(v->as_string());
    }
  }
  for (const auto& entry : outputs) {
    if (entry.value().is_string()) return std::string(entry.value().as_string());
  }
  return std::nullopt;
}

// A blocking /workflows/run reply; the run must have succeeded (fully or partly).
util::Result<AgentReply> ParseWorkflowReply(const std::string& body, const std::string& api_key) {
  auto parsed = util::ParseJson(body);
  const util::JsonObject* data = nullptr;
  if (parsed && parsed->is_object()) {
    if (const auto* d = parsed->as_object().if_contains("data"); d && d->is_object()) {
      data = &d->as_object();
    }
  }
  if (!data) return util::Fail(ErrorCode::kUpstreamFailed, "dify: the reply has no data object");
  const std::string status = StringField(*data, "status");
  if (status != "succeeded" && status != "partial-succeeded") {
    const std::string why = StringField(*data, "error");
    return util::Fail(
        ErrorCode::kUpstreamFailed,
        Redact(fmt::format("dify: the workflow {}{}{}", status.empty() ? "failed" : status,
                           why.empty() ? "" : ": ", why),
               api_key));
  }
  const auto* outputs = data->if_contains("outputs");
  std::optional<std::string> text;
  if (outputs && outputs->is_object()) text = WorkflowText(outputs->as_object());
  if (!text) {
    return util::Fail(ErrorCode::kUpstreamFailed, "dify: the workflow produced no text output");
  }
  AgentReply reply;
  reply.text = std::move(*text);
  reply.usage.total_tokens = IntField(*data, "total_tokens");
  return reply;
}

asio::awaitable<util::Result<AgentReply>> RunChat(std::shared_ptr<ServiceState> state, Turn turn,
                                                  OnDelta on_delta) {
  // Agent apps only stream; a chatbot streams only when someone wants the pieces.
  const bool streaming = turn.app_type == AppType::kAgent || on_delta != nullptr;
  net::HttpRequest request = ChatRequest(turn, streaming);

  ChatStream stream;
  SseReader reader(
      [&](const net::SseEvent& event) { return OnChatEvent(event, stream, on_delta); });
  // A local, not a conditional expression in the co_await: GCC 12 destroys such temporaries twice.
  net::BodySink body_sink;
  if (streaming) body_sink = reader.Sink();
  auto sent = co_await state->http->Send(std::move(request), std::move(body_sink));
  if (reader.too_big()) {
    stream.error = util::Error{ErrorCode::kUpstreamFailed, "dify: stream event too big"};
  }
  if (stream.error) {
    stream.error->message = Redact(std::move(stream.error->message), turn.api_key);
    co_return tl::unexpected(std::move(*stream.error));
  }
  if (!sent) co_return tl::unexpected(Transport(sent.error(), turn.api_key));
  if (sent->status < 200 || sent->status >= 300) {
    util::Error error = ClassifyStatus(*sent, turn.api_key);
    // The conversation is gone on Dify's side: the next message starts a new one.
    if (sent->status == 404 && !turn.conversation_id.empty())
      state->sessions.Drop(turn.conversation_key);
    co_return tl::unexpected(std::move(error));
  }

  AgentReply reply;
  std::string conversation_id;
  if (streaming) {
    reader.Finish();
    if (stream.error) co_return tl::unexpected(std::move(*stream.error));
    if (!stream.ended) {
      co_return util::Fail(ErrorCode::kUpstreamFailed, "dify: the stream ended before message_end");
    }
    reply.text = std::move(stream.text);
    reply.usage = stream.usage;
    conversation_id = std::move(stream.conversation_id);
  } else {
    auto parsed = ParseBlockingChat(sent->body, conversation_id);
    if (!parsed) co_return tl::unexpected(std::move(parsed.error()));
    reply = std::move(*parsed);
  }
  if (!conversation_id.empty())
    state->sessions.Remember(turn.conversation_key, std::move(conversation_id));
  co_return reply;
}

asio::awaitable<util::Result<AgentReply>> RunWorkflow(std::shared_ptr<ServiceState> state,
                                                      Turn turn) {
  net::HttpRequest request = WorkflowRequest(turn);
  auto sent = co_await state->http->Send(std::move(request));
  if (!sent) co_return tl::unexpected(Transport(sent.error(), turn.api_key));
  if (sent->status < 200 || sent->status >= 300) {
    co_return tl::unexpected(ClassifyStatus(*sent, turn.api_key));
  }
  co_return ParseWorkflowReply(sent->body, turn.api_key);
}

// One message: a chat or agent app continues the session's Dify conversation.
asio::awaitable<util::Result<AgentReply>> Start(std::shared_ptr<ServiceState> state, Turn turn,
                                                OnDelta on_delta) {
  if (turn.app_type == AppType::kWorkflow) co_return co_await RunWorkflow(state, std::move(turn));
  turn.conversation_id = state->sessions.Lookup(turn.conversation_key);
  co_return co_await RunChat(state, std::move(turn), std::move(on_delta));
}

}  // namespace

util::Result<CallLauncher::Body> DifyRunner::Prepare(const util::JsonObject& pipeline_config,
                                                     pipeline::AgentInput input,
                                                     OnDelta on_delta) const {
  auto turn = ReadTurn(pipeline_config, input);
  if (!turn) return tl::unexpected(std::move(turn.error()));
  return [state = state(), turn = std::move(*turn), on_delta = std::move(on_delta)]() mutable {
    return Start(state, std::move(turn), std::move(on_delta));
  };
}

}  // namespace sb::runners
