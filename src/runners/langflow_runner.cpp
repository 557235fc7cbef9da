#include "runners/langflow_runner.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>

#include "net/stream_parsers.hpp"
#include "runners/runner_kit.hpp"
#include "util/ids.hpp"

namespace sb::runners {

namespace asio = boost::asio;
using pipeline::AgentReply;
using util::ErrorCode;

namespace {

using OnDelta = std::function<void(const domain::ChatDelta&)>;
constexpr std::string_view kService = "langflow";

struct Turn {
  std::string url;  // without the stream query
  std::string api_key;
  std::chrono::milliseconds timeout{120'000};
  std::string session_key;
  util::JsonObject body;  // session_id filled in at call time
};

bool PathSafe(std::string_view id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

util::Result<Turn> ReadTurn(const util::JsonObject& config, const pipeline::AgentInput& input) {
  using pipeline::GetString;
  Turn turn;
  const std::string base =
      TrimBase(GetString(config, {"ai", "langflow-api", "base-url"}, "http://localhost:7860"));
  const std::string flow = GetString(config, {"ai", "langflow-api", "flow-id"}, "");
  if (!PathSafe(flow)) {
    return util::Fail(
        ErrorCode::kInvalidArgument,
        "langflow: flow-id must be a flow id or endpoint name (letters, digits, - _ .)");
  }
  turn.url = base + "/api/v1/run/" + flow;
  turn.api_key = GetString(config, {"ai", "langflow-api", "api-key"}, "");
  turn.timeout = TimeoutSetting(config, {"ai", "langflow-api", "timeout"}, 120);
  turn.session_key = SessionKey(input.conversation);
  turn.body["input_value"] = InputText(input);
  // LangBot's metadata names them input-type/output-type; its runner read input_type/output_type.
  turn.body["input_type"] = GetString(config, {"ai", "langflow-api", "input-type"}, "chat");
  turn.body["output_type"] = GetString(config, {"ai", "langflow-api", "output-type"}, "chat");
  // The console stores tweaks as a JSON text; an object is taken as is.
  if (const auto* tweaks = pipeline::FindConfigValue(config, {"ai", "langflow-api", "tweaks"})) {
    util::Json value = *tweaks;
    if (value.is_string()) {
      const std::string text(value.as_string());
      if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        value = util::JsonObject{};
      } else {
        auto parsed = util::ParseJson(text);
        if (!parsed) {
          return util::Fail(ErrorCode::kInvalidArgument, "langflow: tweaks is not valid JSON");
        }
        value = std::move(*parsed);
      }
    }
    if (!value.is_null() && !value.is_object()) {
      return util::Fail(ErrorCode::kInvalidArgument, "langflow: tweaks must be a JSON object");
    }
    if (value.is_object() && !value.as_object().empty()) turn.body["tweaks"] = std::move(value);
  }
  return turn;
}

// The chat message text of a run response (RunResponse): outputs[0].outputs[0] holds `results`
// (documented: results.message.text), and older servers `outputs.message.message` or
// `artifacts.message`.
std::optional<std::string> ResultText(const util::JsonObject& response) {
  const auto* outputs = response.if_contains("outputs");
  if (!outputs || !outputs->is_array()) return std::nullopt;
  for (const auto& run : outputs->as_array()) {
    if (!run.is_object()) continue;
    const auto* inner = run.as_object().if_contains("outputs");
    if (!inner || !inner->is_array()) continue;
    for (const auto& component : inner->as_array()) {
      if (!component.is_object()) continue;
      const auto& c = component.as_object();
      if (const auto* results = ObjectField(c, "results")) {
        if (const auto* message = ObjectField(*results, "message")) {
          if (message->contains("text")) return StringField(*message, "text");
          if (const auto* data = ObjectField(*message, "data")) {
            if (data->contains("text")) return StringField(*data, "text");
          }
        }
      }
      if (const auto* outs = ObjectField(c, "outputs")) {
        if (const auto* message = ObjectField(*outs, "message")) {
          if (message->contains("message")) return StringField(*message, "message");
        }
      }
      if (const auto* artifacts = ObjectField(c, "artifacts")) {
        if (artifacts->contains("message")) return StringField(*artifacts, "message");
      }
    }
  }
  return std::nullopt;
}

util::Result<AgentReply> ReplyFrom(const util::JsonObject& result) {
  auto text = ResultText(result);
  if (!text) {
    return util::Fail(ErrorCode::kUpstreamFailed, "langflow: the flow's result holds no message");
  }
  AgentReply reply;
  reply.text = std::move(*text);
  return reply;
}

// Langflow's error bodies are FastAPI's {"detail": ...} (a string or a list of problems).
std::string Detail(const std::string& body) {
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    if (const auto* d = parsed->as_object().if_contains("detail")) {
      return d->is_string() ? std::string(d->as_string()) : util::SerializeJson(*d);
    }
  }
  return body.substr(0, 200);
}

// What the token stream (stream=true) has told so far. Langflow writes each event as one JSON
// object {"event","data"} followed by a blank line; a "data: " prefix is tolerated too.
struct Stream {
  std::string tokens;
  std::optional<util::Result<AgentReply>> end;
  std::optional<util::Error> error;
};

bool OnLine(std::string_view line, Stream& stream, const OnDelta& on_delta) {
  if (line.starts_with("data:")) {
    line.remove_prefix(5);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  }
  if (line.empty() || line.starts_with(":") || line.starts_with("event:")) return true;
  auto parsed = util::ParseJson(line);
  if (!parsed || !parsed->is_object()) {
    stream.error = util::Error{ErrorCode::kUpstreamFailed, "langflow: malformed stream event"};
    return false;
  }
  const auto& object = parsed->as_object();
  const std::string event = StringField(object, "event");
  const auto* data = ObjectField(object, "data");
  if (event == "token" && data) {
    std::string chunk = StringField(*data, "chunk");
    if (chunk.empty()) return true;
    stream.tokens += chunk;
    if (on_delta) on_delta(domain::ChatDelta{std::move(chunk)});
  } else if (event == "end" && data) {
    const auto* result = ObjectField(*data, "result");
    stream.end = result ? ReplyFrom(*result)
                        : util::Result<AgentReply>(util::Fail(
                              ErrorCode::kUpstreamFailed, "langflow: the end event has no result"));
  } else if (event == "error") {
    std::string why = data ? StringField(*data, "error") : std::string();
    if (why.empty() && data) why = StringField(*data, "text");
    stream.error =
        util::Error{ErrorCode::kUpstreamFailed, "langflow: the flow failed: " + why.substr(0, 300)};
    return false;
  }
  return true;
}

// One message's call: the request, the streamed answer, the session id kept.
asio::awaitable<util::Result<AgentReply>> Converse(std::shared_ptr<ServiceState> state, Turn turn,
                                                   OnDelta on_delta) {
  // Langflow keeps chat memory by session_id, which we choose: a new one per chat session and
  // after !reset (LangBot sends a fresh one every message, so its flows forget; the docs' way
  // keeps the conversation).
  std::string session = state->sessions.Lookup(turn.session_key);
  if (session.empty()) {
    session = util::NewUuid();
    state->sessions.Remember(turn.session_key, session);
  }
  turn.body["session_id"] = session;
  const bool streaming = on_delta != nullptr;
  net::HttpRequest request = JsonPost(turn.url + (streaming ? "?stream=true" : "?stream=false"),
                                      turn.body, turn.timeout, streaming);
  if (!turn.api_key.empty()) request.headers.emplace_back("x-api-key", turn.api_key);

  Stream stream;
  net::LineSplitter lines;
  auto sink = [&](std::string_view piece) {
    bool keep_going = true;
    const bool fits = lines.Feed(piece, [&](std::string_view line) {
      if (keep_going) keep_going = OnLine(line, stream, on_delta);
    });
    if (!fits) stream.error = util::Error{ErrorCode::kUpstreamFailed, "langflow: event too big"};
    return keep_going && fits;
  };
  net::BodySink body_sink;
  if (streaming) body_sink = sink;
  auto sent = co_await state->http->Send(std::move(request), std::move(body_sink));
  if (stream.error) {
    stream.error->message = Redact(std::move(stream.error->message), turn.api_key);
    co_return tl::unexpected(std::move(*stream.error));
  }
  if (!sent) co_return tl::unexpected(TransportError(kService, sent.error(), turn.api_key));
  if (sent->status < 200 || sent->status >= 300) {
    co_return tl::unexpected(StatusError(kService, sent->status, Detail(sent->body), turn.api_key));
  }
  if (streaming) {
    lines.Finish([&](std::string_view line) { OnLine(line, stream, on_delta); });
    if (stream.error) co_return tl::unexpected(std::move(*stream.error));
    if (!stream.end) {
      co_return util::Fail(ErrorCode::kUpstreamFailed,
                           "langflow: the stream ended before its end event");
    }
    // A flow whose model does not stream sends no tokens: its end result is the answer.
    if (!*stream.end && !stream.tokens.empty()) {
      AgentReply reply;
      reply.text = std::move(stream.tokens);
      co_return reply;
    }
    co_return std::move(*stream.end);
  }
  auto parsed = util::ParseJson(sent->body);
  if (!parsed || !parsed->is_object()) {
    co_return util::Fail(ErrorCode::kUpstreamFailed, "langflow: the reply is not a JSON object");
  }
  co_return ReplyFrom(parsed->as_object());
}

}  // namespace

util::Result<CallLauncher::Body> LangflowRunner::Prepare(const util::JsonObject& pipeline_config,
                                                         pipeline::AgentInput input,
                                                         OnDelta on_delta) const {
  auto turn = ReadTurn(pipeline_config, input);
  if (!turn) return tl::unexpected(std::move(turn.error()));
  return [state = state(), turn = std::move(*turn), on_delta = std::move(on_delta)]() mutable {
    return Converse(state, std::move(turn), std::move(on_delta));
  };
}

}  // namespace sb::runners
