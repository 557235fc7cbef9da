#include "runners/dashscope_runner.hpp"

#include <fmt/format.h>

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
constexpr std::string_view kService = "dashscope";

struct Turn {
  std::string url;
  std::string api_key;
  bool workflow = false;
  std::string references_quote;
  std::chrono::milliseconds timeout{120'000};
  std::string session_key;
  util::JsonObject body;  // input.session_id added at call time
};

bool PathSafe(std::string_view id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

util::Result<Turn> ReadTurn(const util::JsonObject& config, const pipeline::AgentInput& input) {
  using pipeline::GetString;
  Turn turn;
  const std::string type = GetString(config, {"ai", "dashscope-app-api", "app-type"}, "agent");
  if (type != "agent" && type != "workflow") {
    return util::Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("dashscope: app-type '{}' is not agent or workflow", type.substr(0, 64)));
  }
  turn.workflow = type == "workflow";
  const std::string app = GetString(config, {"ai", "dashscope-app-api", "app-id"}, "");
  if (!PathSafe(app)) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "dashscope: app-id must be an application id (letters, digits, - _)");
  }
  // Not in LangBot's metadata (its SDK reads DASHSCOPE_HTTP_BASE_URL): ours, so the
  // international endpoint (dashscope-intl.aliyuncs.com) or a fake can be used.
  turn.url = TrimBase(GetString(config, {"ai", "dashscope-app-api", "base-url"},
                                "https://dashscope.aliyuncs.com/api/v1")) +
             "/apps/" + app + "/completion";
  turn.api_key = GetString(config, {"ai", "dashscope-app-api", "api-key"}, "");
  turn.references_quote =
      GetString(config, {"ai", "dashscope-app-api", "references_quote"}, "参考资料来自:");
  turn.timeout = TimeoutSetting(config, {"ai", "dashscope-app-api", "timeout"}, 120);
  turn.session_key = SessionKey(input.conversation);
  util::JsonObject parameters{{"incremental_output", true}};
  if (turn.workflow) parameters["flow_stream_mode"] = "message_format";
  turn.body = {{"input", util::JsonObject{{"prompt", InputText(input)}}},
               {"parameters", std::move(parameters)},
               {"debug", util::JsonObject{}}};
  return turn;
}

util::Error CodeError(const std::string& code, const std::string& message, int status) {
  ErrorCode kind = ErrorCode::kUpstreamFailed;
  if (code == "InvalidApiKey" || status == 401 || status == 403) kind = ErrorCode::kUpstreamAuth;
  if (status == 404) kind = ErrorCode::kUpstreamNotFound;
  if (code.starts_with("Throttling") || status == 429) kind = ErrorCode::kUpstreamRateLimited;
  return {kind, fmt::format("dashscope: {}: {}", code.empty() ? std::to_string(status) : code,
                            message.substr(0, 300))};
}

// DashScope's error body {code, message, request_id}.
util::Error BodyError(const std::string& body, int status) {
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    return CodeError(StringField(parsed->as_object(), "code"),
                     StringField(parsed->as_object(), "message"), status);
  }
  return CodeError("", body.substr(0, 200), status);
}

struct Stream {
  std::string text;
  std::string session_id;
  std::map<std::string, std::string> references;  // index_id -> doc_name
  domain::Usage usage;
  bool finished = false;
  std::optional<util::Error> error;
};

bool OnEvent(const net::SseEvent& event, Stream& stream, bool workflow, const OnDelta& on_delta) {
  if (event.data.empty()) return true;
  auto parsed = util::ParseJson(event.data);
  if (!parsed || !parsed->is_object()) {
    stream.error = util::Error{ErrorCode::kUpstreamFailed, "dashscope: malformed stream event"};
    return false;
  }
  const auto& object = parsed->as_object();
  if (event.event == "error") {
    stream.error = CodeError(StringField(object, "code"), StringField(object, "message"), 500);
    return false;
  }
  const auto* output = ObjectField(object, "output");
  if (!output) return true;
  if (std::string id = StringField(*output, "session_id"); !id.empty()) {
    stream.session_id = std::move(id);
  }
  std::string piece;
  if (workflow) {
    if (const auto* wm = ObjectField(*output, "workflow_message")) {
      if (const auto* message = ObjectField(*wm, "message"))
        piece = StringField(*message, "content");
    } else {
      piece = StringField(*output, "text");
    }
  } else {
    piece = StringField(*output, "text");
  }
  if (!piece.empty()) {
    stream.text += piece;
    if (on_delta) on_delta(domain::ChatDelta{std::move(piece)});
  }
  if (const auto* refs = output->if_contains("doc_references"); refs && refs->is_array()) {
    for (const auto& ref : refs->as_array()) {
      if (!ref.is_object()) continue;
      std::string index = StringField(ref.as_object(), "index_id");
      if (!index.empty()) stream.references[index] = StringField(ref.as_object(), "doc_name");
    }
  }
  const std::string finish = StringField(*output, "finish_reason");
  if (!finish.empty() && finish != "null") stream.finished = true;
  if (const auto* usage = ObjectField(object, "usage")) {
    if (const auto* models = usage->if_contains("models"); models && models->is_array()) {
      domain::Usage total;
      for (const auto& m : models->as_array()) {
        if (!m.is_object()) continue;
        total.prompt_tokens += IntField(m.as_object(), "input_tokens");
        total.completion_tokens += IntField(m.as_object(), "output_tokens");
      }
      total.total_tokens = total.prompt_tokens + total.completion_tokens;
      if (total.total_tokens > 0) stream.usage = total;
    }
  }
  return true;
}

// Knowledge-base citations "<ref>[n]</ref>" become "(<references_quote> <doc name>)", as in
// LangBot; unknown ones stay.
std::string ReplaceReferences(const std::string& text,
                              const std::map<std::string, std::string>& refs,
                              const std::string& quote) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const auto open = text.find("<ref>[", pos);
    if (open == std::string::npos) break;
    const auto close = text.find("]</ref>", open);
    if (close == std::string::npos) break;
    const std::string key = text.substr(open + 6, close - open - 6);
    out.append(text, pos, open - pos);
    if (auto it = refs.find(key); it != refs.end()) {
      out += "(" + quote + " " + it->second + ")";
    } else {
      out.append(text, open, close + 7 - open);
    }
    pos = close + 7;
  }
  out.append(text, pos);
  return out;
}

// One message's call: the request, the streamed answer, the session id kept.
asio::awaitable<util::Result<AgentReply>> Converse(std::shared_ptr<ServiceState> state, Turn turn,
                                                   OnDelta on_delta) {
  const std::string known = state->sessions.Lookup(turn.session_key);
  if (!known.empty()) turn.body["input"].as_object()["session_id"] = known;
  // Always streamed: the incremental SSE output is the documented way to get pieces, and it
  // carries the same final fields as a blocking answer.
  net::HttpRequest request = JsonPost(turn.url, turn.body, turn.timeout, true);
  request.headers.emplace_back("Authorization", "Bearer " + turn.api_key);
  request.headers.emplace_back("X-DashScope-SSE", "enable");

  Stream stream;
  SseReader reader(
      [&](const net::SseEvent& event) { return OnEvent(event, stream, turn.workflow, on_delta); });
  auto sent = co_await state->http->Send(std::move(request), reader.Sink());
  if (reader.too_big()) {
    stream.error = util::Error{ErrorCode::kUpstreamFailed, "dashscope: event too big"};
  }
  if (!stream.session_id.empty() && stream.session_id != known) {
    state->sessions.Remember(turn.session_key, stream.session_id);
  }
  std::optional<util::Error> failure = stream.error;
  if (!failure && !sent) failure = TransportError(kService, sent.error(), "");
  if (!failure && (sent->status < 200 || sent->status >= 300)) {
    failure = BodyError(sent->body, sent->status);
  }
  if (!failure) {
    reader.Finish();
    failure = stream.error;
  }
  if (!failure && !stream.finished) {
    failure = util::Error{ErrorCode::kUpstreamFailed,
                          "dashscope: the stream ended before a finish_reason"};
  }
  if (failure) {
    failure->message = Redact(std::move(failure->message), turn.api_key);
    co_return tl::unexpected(std::move(*failure));
  }
  AgentReply reply;
  reply.text = ReplaceReferences(stream.text, stream.references, turn.references_quote);
  reply.usage = stream.usage;
  co_return reply;
}

}  // namespace

util::Result<CallLauncher::Body> DashScopeRunner::Prepare(const util::JsonObject& pipeline_config,
                                                          pipeline::AgentInput input,
                                                          OnDelta on_delta) const {
  auto turn = ReadTurn(pipeline_config, input);
  if (!turn) return tl::unexpected(std::move(turn.error()));
  return [state = state(), turn = std::move(*turn), on_delta = std::move(on_delta)]() mutable {
    return Converse(state, std::move(turn), std::move(on_delta));
  };
}

}  // namespace sb::runners
