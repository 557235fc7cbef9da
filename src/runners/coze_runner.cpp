#include "runners/coze_runner.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runners/runner_kit.hpp"

namespace sb::runners {

namespace asio = boost::asio;
using pipeline::AgentReply;
using util::ErrorCode;

namespace {

using OnDelta = std::function<void(const domain::ChatDelta&)>;
constexpr std::string_view kService = "coze";

struct Turn {
  std::string base;
  std::string api_key;
  std::chrono::milliseconds timeout{120'000};
  std::string session_key;
  util::JsonObject body;
};

// The user's message as a Coze message: plain text, or an object_string list when it carries
// images (Coze fetches http(s) file_urls itself; data URLs would need a file upload first).
util::JsonObject UserMessage(const pipeline::AgentInput& input) {
  util::JsonArray parts;
  bool has_image = false;
  for (const auto& part : input.content) {
    if (part.kind == domain::ContentPart::Kind::kText) {
      if (!part.text.empty())
        parts.push_back(util::JsonObject{{"type", "text"}, {"text", part.text}});
    } else if (part.image_url.starts_with("http://") || part.image_url.starts_with("https://")) {
      parts.push_back(util::JsonObject{{"type", "image"}, {"file_url", part.image_url}});
      has_image = true;
    }
  }
  if (!has_image) {
    return {{"role", "user"}, {"content", InputText(input)}, {"content_type", "text"}};
  }
  return {
      {"role", "user"}, {"content", util::SerializeJson(parts)}, {"content_type", "object_string"}};
}

util::Result<Turn> ReadTurn(const util::JsonObject& config, const pipeline::AgentInput& input) {
  using pipeline::GetString;
  Turn turn;
  const std::string bot = GetString(config, {"ai", "coze-api", "bot-id"}, "");
  if (bot.empty()) return util::Fail(ErrorCode::kInvalidArgument, "coze: bot-id is not set");
  turn.base = TrimBase(GetString(config, {"ai", "coze-api", "api-base"}, "https://api.coze.cn"));
  turn.api_key = GetString(config, {"ai", "coze-api", "api-key"}, "");
  turn.timeout = TimeoutSetting(config, {"ai", "coze-api", "timeout"}, 120);
  turn.session_key = SessionKey(input.conversation);
  turn.body = {{"bot_id", bot},
               {"user_id", input.conversation.session_id},
               {"stream", true},
               {"auto_save_history",
                pipeline::GetBool(config, {"ai", "coze-api", "auto-save-history"}, true)},
               {"additional_messages", util::JsonArray{UserMessage(input)}}};
  return turn;
}

bool QueryToken(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Coze's business error {code, msg}: codes from its error-code table.
util::Error CodeError(std::int64_t code, const std::string& msg) {
  ErrorCode kind = ErrorCode::kUpstreamFailed;
  if (code == 4100 || code == 4101) kind = ErrorCode::kUpstreamAuth;
  if (code == 4200) kind = ErrorCode::kUpstreamNotFound;
  if (code == 4013) kind = ErrorCode::kUpstreamRateLimited;
  return {kind, fmt::format("coze: error {}: {}", code, msg.substr(0, 300))};
}

struct Stream {
  std::string deltas;                // answer pieces so far
  std::vector<std::string> answers;  // completed answer messages
  std::string conversation_id;
  domain::Usage usage;
  bool completed = false;
  std::optional<util::Error> error;
};

bool OnEvent(const net::SseEvent& event, Stream& stream, const OnDelta& on_delta) {
  if (event.event == "done") return false;
  auto parsed = util::ParseJson(event.data);
  const util::JsonObject* data = parsed && parsed->is_object() ? &parsed->as_object() : nullptr;
  if (event.event == "error") {
    stream.error =
        data ? CodeError(IntField(*data, "code"), StringField(*data, "msg"))
             : util::Error{ErrorCode::kUpstreamFailed, "coze: the stream reported an error"};
    return false;
  }
  if (!data) return true;  // keep-alives and events we do not read
  if (std::string id = StringField(*data, "conversation_id"); !id.empty()) {
    stream.conversation_id = std::move(id);
  }
  const bool answer = StringField(*data, "type") == "answer";
  if (event.event == "conversation.message.delta" && answer) {
    std::string piece = StringField(*data, "content");
    if (piece.empty()) return true;
    stream.deltas += piece;
    if (on_delta) on_delta(domain::ChatDelta{std::move(piece)});
  } else if (event.event == "conversation.message.completed" && answer) {
    stream.answers.push_back(StringField(*data, "content"));
  } else if (event.event == "conversation.chat.completed") {
    if (const auto* usage = ObjectField(*data, "usage")) {
      stream.usage.prompt_tokens = IntField(*usage, "input_count");
      stream.usage.completion_tokens = IntField(*usage, "output_count");
      stream.usage.total_tokens = IntField(*usage, "token_count");
    }
    stream.completed = true;
  } else if (event.event == "conversation.chat.failed") {
    const auto* last = ObjectField(*data, "last_error");
    stream.error = last ? CodeError(IntField(*last, "code"), StringField(*last, "msg"))
                        : util::Error{ErrorCode::kUpstreamFailed, "coze: the chat failed"};
    return false;
  } else if (event.event == "conversation.chat.requires_action") {
    stream.error =
        util::Error{ErrorCode::kUpstreamFailed,
                    "coze: the bot asks for tool results, which this runner cannot give"};
    return false;
  }
  return true;
}

// A JSON body {code, msg} (HTTP error, or a 200 that is not a stream).
std::optional<util::Error> JsonError(const std::string& body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return std::nullopt;
  const auto& object = parsed->as_object();
  if (!object.contains("code")) return std::nullopt;
  const std::int64_t code = IntField(object, "code");
  if (code == 0) return std::nullopt;
  return CodeError(code, StringField(object, "msg"));
}

// What went wrong with a finished /v3/chat call, if anything (the secret not yet redacted).
std::optional<util::Error> Failure(const util::Result<net::HttpResponse>& sent, Stream& stream,
                                   SseReader& reader) {
  if (stream.error) return stream.error;
  // `done` stops the reading on purpose: that is the normal end, not a failure.
  if (!sent && !(sent.error().code == ErrorCode::kCancelled && stream.completed)) {
    return TransportError(kService, sent.error(), "");
  }
  if (sent && (sent->status < 200 || sent->status >= 300)) {
    if (auto coded = JsonError(sent->body)) return coded;
    return StatusError(kService, sent->status, sent->body, "");
  }
  if (sent) reader.Finish();
  if (stream.error) return stream.error;
  if (!stream.completed) {
    // Coze answers some failures with a JSON {code, msg} body instead of a stream.
    if (auto coded = JsonError(reader.head())) return coded;
    return util::Error{ErrorCode::kUpstreamFailed,
                       "coze: the stream ended before conversation.chat.completed"};
  }
  return std::nullopt;
}

// One message's call: the request, the streamed answer, the session id kept.
asio::awaitable<util::Result<AgentReply>> Converse(std::shared_ptr<ServiceState> state, Turn turn,
                                                   OnDelta on_delta) {
  // Coze keeps the history in its conversation; LangBot 4.9.5 never passes one (each message is
  // a new conversation), the API documents conversation_id as the way to continue.
  const std::string known = state->sessions.Lookup(turn.session_key);
  std::string url = turn.base + "/v3/chat";
  if (!known.empty()) url += "?conversation_id=" + known;  // Coze ids are digits
  net::HttpRequest request = JsonPost(std::move(url), turn.body, turn.timeout, true);
  request.headers.emplace_back("Authorization", "Bearer " + turn.api_key);

  Stream stream;
  SseReader reader([&](const net::SseEvent& event) { return OnEvent(event, stream, on_delta); });
  auto sent = co_await state->http->Send(std::move(request), reader.Sink());
  if (reader.too_big()) {
    stream.error = util::Error{ErrorCode::kUpstreamFailed, "coze: stream event too big"};
  }
  // The id goes back into a URL: only a plain token (Coze's are digits) is kept.
  if (QueryToken(stream.conversation_id) && stream.conversation_id != known) {
    state->sessions.Remember(turn.session_key, stream.conversation_id);
  }
  std::optional<util::Error> failure = Failure(sent, stream, reader);
  if (failure) {
    failure->message = Redact(std::move(failure->message), turn.api_key);
    // Coze no longer knows the conversation: the next message starts a new one.
    if (failure->code == ErrorCode::kUpstreamNotFound && !known.empty()) {
      state->sessions.Drop(turn.session_key);
    }
    co_return tl::unexpected(std::move(*failure));
  }
  AgentReply reply;
  if (stream.answers.empty()) {
    reply.text = std::move(stream.deltas);
  } else {
    for (auto& answer : stream.answers) {
      if (!reply.text.empty()) reply.text += "\n\n";
      reply.text += answer;
    }
  }
  reply.usage = stream.usage;
  co_return reply;
}

}  // namespace

util::Result<CallLauncher::Body> CozeRunner::Prepare(const util::JsonObject& pipeline_config,
                                                     pipeline::AgentInput input,
                                                     OnDelta on_delta) const {
  auto turn = ReadTurn(pipeline_config, input);
  if (!turn) return tl::unexpected(std::move(turn.error()));
  return [state = state(), turn = std::move(*turn), on_delta = std::move(on_delta)]() mutable {
    return Converse(state, std::move(turn), std::move(on_delta));
  };
}

}  // namespace sb::runners
