#include "runners/tbox_runner.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "runners/runner_kit.hpp"

namespace sb::runners {

namespace asio = boost::asio;
using pipeline::AgentReply;
using util::ErrorCode;

namespace {

using OnDelta = std::function<void(const domain::ChatDelta&)>;
constexpr std::string_view kService = "tbox";
constexpr std::size_t kMaxConversationId = 256;
constexpr std::size_t kMaxLanes = 64;  // a workflow has a few outputs; more is abuse

struct Turn {
  std::string url;
  std::string token;
  std::chrono::milliseconds timeout{120'000};
  std::string session_key;
  util::JsonObject body;  // conversationId added at call time
};

util::Result<Turn> ReadTurn(const util::JsonObject& config, const pipeline::AgentInput& input) {
  using pipeline::GetString;
  Turn turn;
  const std::string app = GetString(config, {"ai", "tbox-app-api", "app-id"}, "");
  if (app.empty()) return util::Fail(ErrorCode::kInvalidArgument, "tbox: app-id is not set");
  std::string query = InputText(input);
  // The open API requires a query; images would need Tbox's file upload first.
  if (query.empty()) {
    return util::Fail(ErrorCode::kInvalidArgument, "tbox: the message has no text to send");
  }
  // Not in LangBot's metadata (its SDK always calls api.tbox.cn): ours, so that a proxy or a
  // fake can be used.
  turn.url =
      TrimBase(GetString(config, {"ai", "tbox-app-api", "base-url"}, "https://api.tbox.cn")) +
      "/api/chat";
  turn.token = GetString(config, {"ai", "tbox-app-api", "api-key"}, "");
  turn.timeout = TimeoutSetting(config, {"ai", "tbox-app-api", "timeout"}, 120);
  turn.session_key = SessionKey(input.conversation);
  // userId is the developer's own user identity (the docs); the chat session is ours. LangBot
  // 4.9.5 sends the bot's uuid, which makes every user of a bot one Tbox user.
  turn.body = {{"appId", app},
               {"query", std::move(query)},
               {"userId", input.conversation.session_id},
               {"stream", true}};
  return turn;
}

// A JSON object from `value`: an object as is, or JSON text holding one (Tbox sends payloads as
// JSON text inside the event's JSON).
std::optional<util::JsonObject> ObjectOf(const util::Json* value) {
  if (!value) return std::nullopt;
  if (value->is_object()) return value->as_object();
  if (!value->is_string()) return std::nullopt;
  auto parsed = util::ParseJson(std::string(value->as_string()));
  if (!parsed || !parsed->is_object()) return std::nullopt;
  return std::move(parsed->as_object());
}

// The first non-empty string member of `object` among `keys`.
std::string FirstString(const util::JsonObject& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (std::string s = StringField(object, key); !s.empty()) return s;
  }
  return {};
}

// Tbox's error object {errorCode, errorMsg} (an answer instead of a stream), or the SSE error
// event's {errorCode?, description} and an inline error message's {status_code?, message}.
util::Error ServiceError(const util::JsonObject& object) {
  std::string code = StringField(object, "errorCode");
  if (code.empty()) {
    std::int64_t number = IntField(object, "errorCode");
    if (number == 0) number = IntField(object, "status_code");
    if (number != 0) code = std::to_string(number);
  }
  if (code == "0") {
    return {ErrorCode::kUpstreamFailed, "tbox: a JSON answer instead of a stream"};
  }
  std::string why = FirstString(object, {"errorMsg", "description", "message"});
  if (why.empty()) why = "no explanation given";
  return {ErrorCode::kUpstreamFailed, fmt::format("tbox: {}{}{}", code.substr(0, 64),
                                                  code.empty() ? "" : ": ", why.substr(0, 300))};
}

struct Stream {
  std::string text;
  std::string conversation_id;
  std::map<std::string, std::string> lane_media;  // lane -> mediaType of its header
  bool ended = false;                             // an `end` message came
  std::optional<util::Error> error;
};

bool OnEvent(const net::SseEvent& event, Stream& stream, const OnDelta& on_delta) {
  auto parsed = util::ParseJson(event.data);
  const util::JsonObject* data = parsed && parsed->is_object() ? &parsed->as_object() : nullptr;
  if (event.event == "error") {
    stream.error =
        data ? ServiceError(*data)
             : util::Error{ErrorCode::kUpstreamFailed, "tbox: the stream reported an error"};
    return false;
  }
  // The SDK reads "message" events (also the SSE default name) and skips any other.
  if (!data || !(event.event.empty() || event.event == "message")) return true;
  const std::string type = StringField(*data, "type");
  std::string lane = StringField(*data, "lane");
  if (lane.empty()) lane = "default";
  auto payload = ObjectOf(data->if_contains("payload"));
  if (type == "header") {
    if (payload && (stream.lane_media.size() < kMaxLanes || stream.lane_media.contains(lane))) {
      stream.lane_media[lane] = StringField(*payload, "mediaType");
    }
  } else if (type == "chunk") {
    if (!payload) return true;
    if (std::string id = StringField(*payload, "conversationId"); !id.empty()) {
      stream.conversation_id = std::move(id);
    }
    // Only text lanes make the answer (a workflow may also send e.g. an image lane).
    auto media = stream.lane_media.find(lane);
    if (media != stream.lane_media.end() && !media->second.empty() && media->second != "text") {
      return true;
    }
    std::string piece = StringField(*payload, "text");
    if (piece.empty()) return true;
    stream.text += piece;
    if (on_delta) on_delta(domain::ChatDelta{std::move(piece)});
  } else if (type == "error") {
    util::JsonObject merged = *data;
    if (payload) {
      for (const auto& entry : *payload) merged[entry.key()] = entry.value();
    }
    stream.error = ServiceError(merged);
    return false;
  } else if (type == "end") {
    stream.ended = true;
    return false;
  }
  // meta, revoke, charge, followup, unknown and thinking carry no part of the answer.
  return true;
}

// What went wrong with a finished /api/chat call, if anything (the token not yet redacted).
std::optional<util::Error> Failure(const util::Result<net::HttpResponse>& sent, Stream& stream,
                                   SseReader& reader) {
  if (stream.error) return stream.error;
  // An `end` message stops the reading on purpose: that is the normal end, not a failure.
  if (!sent && !(sent.error().code == ErrorCode::kCancelled && stream.ended)) {
    return TransportError(kService, sent.error(), "");
  }
  if (sent && (sent->status < 200 || sent->status >= 300)) {
    auto body = util::ParseJson(sent->body);
    std::string why = body && body->is_object()
                          ? FirstString(body->as_object(), {"errorMsg", "description", "message"})
                          : sent->body;
    return StatusError(kService, sent->status, why, "");
  }
  if (sent) reader.Finish();
  if (stream.error) return stream.error;
  if (sent && sent->Header("content-type").starts_with("application/json")) {
    // The request was refused before any answer: {errorCode, errorMsg} instead of a stream.
    auto body = util::ParseJson(reader.head());
    if (body && body->is_object()) return ServiceError(body->as_object());
    return util::Error{ErrorCode::kUpstreamFailed, "tbox: a JSON answer instead of a stream"};
  }
  if (stream.text.empty()) {
    // Tbox may send no `end` message: the text received is the answer, and none is a failure.
    return util::Error{ErrorCode::kUpstreamFailed, "tbox: the stream ended without a text answer"};
  }
  return std::nullopt;
}

// One message: the request, the streamed answer, the conversation id kept.
asio::awaitable<util::Result<AgentReply>> Converse(std::shared_ptr<ServiceState> state, Turn turn,
                                                   OnDelta on_delta) {
  const std::string known = state->sessions.Lookup(turn.session_key);
  if (!known.empty()) turn.body["conversationId"] = known;
  // Always streamed (the API's default): the pieces and the conversation id come the same way
  // whether or not someone wants the pieces.
  net::HttpRequest request = JsonPost(turn.url, turn.body, turn.timeout, true);
  // The token itself, without "Bearer" (the docs' example and the official SDK).
  request.headers.emplace_back("Authorization", turn.token);

  Stream stream;
  SseReader reader([&](const net::SseEvent& event) { return OnEvent(event, stream, on_delta); });
  auto sent = co_await state->http->Send(std::move(request), reader.Sink());
  if (reader.too_big()) {
    stream.error = util::Error{ErrorCode::kUpstreamFailed, "tbox: stream event too big"};
  }
  std::optional<util::Error> failure = Failure(sent, stream, reader);
  if (failure) {
    failure->message = Redact(std::move(failure->message), turn.token);
    // Tbox refused the turn outright (an error answer instead of a stream; its conversation may
    // be gone): the next message starts a new conversation.
    const int status = sent ? sent->status : 0;
    const bool refused =
        sent &&
        (status == 404 || (status != 401 && status != 403 && status != 429 && status < 500 &&
                           sent->Header("content-type").starts_with("application/json")));
    if (refused && !known.empty()) state->sessions.Drop(turn.session_key);
    co_return tl::unexpected(std::move(*failure));
  }
  if (!stream.conversation_id.empty() && stream.conversation_id.size() <= kMaxConversationId &&
      stream.conversation_id != known) {
    state->sessions.Remember(turn.session_key, stream.conversation_id);
  }
  AgentReply reply;
  reply.text = std::move(stream.text);
  co_return reply;
}

}  // namespace

util::Result<CallLauncher::Body> TboxRunner::Prepare(const util::JsonObject& pipeline_config,
                                                     pipeline::AgentInput input,
                                                     OnDelta on_delta) const {
  auto turn = ReadTurn(pipeline_config, input);
  if (!turn) return tl::unexpected(std::move(turn.error()));
  return [state = state(), turn = std::move(*turn), on_delta = std::move(on_delta)]() mutable {
    return Converse(state, std::move(turn), std::move(on_delta));
  };
}

}  // namespace sb::runners
