#include "runners/n8n_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/stream_parsers.hpp"
#include "pipeline/config_values.hpp"
#include "runners/runner_kit.hpp"
#include "util/crypto.hpp"

namespace sb::runners {

namespace asio = boost::asio;
using pipeline::AgentReply;
using util::ErrorCode;

namespace {

using OnDelta = std::function<void(const domain::ChatDelta&)>;

// LangBot's cap on a webhook's answer.
constexpr std::size_t kMaxResponseBytes = 1024 * 1024;

// Everything one call needs, read from the config and the input before the call starts.
struct Turn {
  net::HttpRequest request;
  std::string output_key = "response";
  std::vector<std::string> secrets;  // never to appear in an error message
};

std::string Base64(std::string_view bytes) {
  std::string text = util::Base64UrlEncode(bytes);
  std::replace(text.begin(), text.end(), '-', '+');
  std::replace(text.begin(), text.end(), '_', '/');
  text.append((4 - text.size() % 4) % 4, '=');
  return text;
}

// LangBot's token: HS256 over {"iat","exp","sub":"n8n-webhook"}, valid for an hour.
std::string HmacJwt(std::string_view secret, std::int64_t now) {
  const std::string header = util::Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  const std::string claims = util::Base64UrlEncode(util::SerializeJson(
      util::JsonObject{{"iat", now}, {"exp", now + 3600}, {"sub", "n8n-webhook"}}));
  const std::string signing_input = header + '.' + claims;
  return signing_input + '.' + util::Base64UrlEncode(util::HmacSha256(secret, signing_input));
}

// A stable id per (pipeline, bot, session), shaped like a UUID, for workflows that key memory on
// LangBot's `conversation_id`.
std::string ConversationId(const domain::ConversationKey& key) {
  const std::string hex =
      util::Sha256Hex(key.pipeline.str() + '\n' + key.bot.str() + '\n' + key.session_id);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20, 12));
}

util::Result<Turn> ReadTurn(const util::JsonObject& config, const pipeline::AgentInput& input) {
  using pipeline::GetNumber;
  using pipeline::GetString;
  auto setting = [&](std::string_view key, std::string_view fallback) {
    return GetString(config, {"ai", "n8n-service-api", key}, fallback);
  };
  Turn turn;
  net::HttpRequest& request = turn.request;
  request.method = "POST";
  request.url = setting("webhook-url", "");
  request.headers.emplace_back("Content-Type", "application/json");

  const std::string auth = setting("auth-type", "none");
  if (auth == "basic") {
    const std::string user = setting("basic-username", "");
    const std::string password = setting("basic-password", "");
    const std::string token = Base64(user + ':' + password);
    request.headers.emplace_back("Authorization", "Basic " + token);
    turn.secrets = {password, token};
  } else if (auth == "jwt") {
    const std::string algorithm = setting("jwt-algorithm", "HS256");
    if (algorithm != "HS256") {
      return util::Fail(ErrorCode::kInvalidArgument,
                        fmt::format("n8n: jwt-algorithm '{}' is not supported (only HS256)",
                                    algorithm.substr(0, 32)));
    }
    const std::string secret = setting("jwt-secret", "");
    if (secret.empty()) return util::Fail(ErrorCode::kInvalidArgument, "n8n: jwt-secret is empty");
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    const std::string token = HmacJwt(secret, now);
    request.headers.emplace_back("Authorization", "Bearer " + token);
    turn.secrets = {secret, token};
  } else if (auth == "header") {
    const std::string name = setting("header-name", "");
    if (name.empty()) return util::Fail(ErrorCode::kInvalidArgument, "n8n: header-name is empty");
    const std::string value = setting("header-value", "");
    request.headers.emplace_back(name, value);
    turn.secrets = {value};
  } else if (auth != "none") {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("n8n: auth-type '{}' is not one of none, basic, jwt, header",
                                  auth.substr(0, 32)));
  }

  double seconds = GetNumber(config, {"ai", "n8n-service-api", "timeout"}, 120);
  if (!(seconds > 0)) seconds = 120;  // NaN and nonsense too
  seconds = std::min(seconds, 24.0 * 3600);
  const std::chrono::milliseconds timeout(static_cast<std::int64_t>(std::ceil(seconds * 1000)));
  request.timeouts.connect = std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(10));
  request.timeouts.total = timeout;
  request.timeouts.idle = timeout;
  request.max_response_bytes = kMaxResponseBytes;
  turn.output_key = setting("output-key", "response");
  if (turn.output_key.empty()) turn.output_key = "response";

  std::string text;
  for (const auto& part : input.content) {
    if (part.kind != domain::ContentPart::Kind::kText || part.text.empty()) continue;
    if (!text.empty()) text += '\n';
    text += part.text;
  }
  const std::string& session = input.conversation.session_id;
  const auto underscore = session.find('_');
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  // LangBot's body: the text three times over, the ids, and its query variables.
  util::JsonObject body{
      {"chatInput", text},
      {"message", text},
      {"user_message_text", text},
      {"conversation_id", ConversationId(input.conversation)},
      {"session_id", session},
      {"sessionId", session},  // what n8n's own chat nodes key their memory on
      {"user_id", session},
      {"msg_create_time", now},
      {"launcher_type", session.substr(0, underscore)},
      {"launcher_id", underscore == std::string::npos ? "" : session.substr(underscore + 1)},
  };
  request.body = util::SerializeJson(body);
  return turn;
}

std::string Redact(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    if (secret.size() < 4) continue;
    for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
      text.replace(pos, secret.size(), "[redacted]");
    }
  }
  return text;
}

std::string_view Trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

// n8n's errors are JSON {"code","message"} from the server and plain text from the auth check.
util::Error ClassifyStatus(const net::HttpResponse& response, const Turn& turn) {
  std::string message;
  if (auto parsed = util::ParseJson(response.body); parsed && parsed->is_object()) {
    message = StringField(parsed->as_object(), "message");
  }
  if (message.empty()) message = std::string(Trim(response.body).substr(0, 200));
  util::Error error;
  switch (response.status) {
    case 401:
    case 403:
      error = {ErrorCode::kUpstreamAuth,
               fmt::format("n8n: the webhook refused the credentials ({}: {})", response.status,
                           message)};
      break;
    case 404:
      error = {ErrorCode::kUpstreamNotFound, "n8n: " + message};
      break;
    case 429:
      error = {ErrorCode::kUpstreamRateLimited, "n8n: rate limited: " + message};
      break;
    default:
      error = {ErrorCode::kUpstreamFailed, fmt::format("n8n: {}: {}", response.status, message)};
      break;
  }
  error.message = Redact(std::move(error.message), turn.secrets);
  return error;
}

// A streaming webhook's NDJSON, recognised by its first line (n8n labels it application/json).
struct Reading {
  enum class Mode { kUnknown, kStream, kWhole };
  Mode mode = Mode::kUnknown;
  net::LineSplitter lines;
  std::string text;
  bool items = false;
  std::optional<std::string> error = std::nullopt;
};

void OnLine(std::string_view line, Reading& reading, const OnDelta& on_delta) {
  if (reading.mode == Reading::Mode::kWhole) return;
  auto parsed = util::ParseJson(line);
  const std::string type =
      parsed && parsed->is_object() ? StringField(parsed->as_object(), "type") : std::string();
  const bool chunk = type == "begin" || type == "item" || type == "end" || type == "error";
  if (reading.mode == Reading::Mode::kUnknown) {
    reading.mode = chunk ? Reading::Mode::kStream : Reading::Mode::kWhole;
  }
  if (!chunk) return;
  const auto& object = parsed->as_object();
  if (type == "item") {
    std::string piece = StringField(object, "content");
    reading.items = true;
    if (piece.empty()) return;
    reading.text += piece;
    if (on_delta) on_delta(domain::ChatDelta{std::move(piece)});
  } else if (type == "error") {
    std::string content = StringField(object, "content");
    reading.error = content.empty() ? "the workflow failed" : content;
  }
}

// The answer of a webhook that replied in one piece: a JSON object (or the first of an array)
// holds it under `output_key`; a body that is not JSON is the answer itself.
util::Result<std::string> WholeBody(const std::string& body, const std::string& output_key) {
  const std::string_view trimmed = Trim(body);
  if (trimmed.empty()) {
    return util::Fail(ErrorCode::kUpstreamFailed, "n8n: the webhook answered with an empty body");
  }
  auto parsed = util::ParseJson(trimmed);
  if (!parsed) return std::string(trimmed);
  if (parsed->is_string()) return std::string(parsed->as_string());
  const util::Json* item = &*parsed;
  if (item->is_array()) {
    if (item->as_array().empty()) {
      return util::Fail(ErrorCode::kUpstreamFailed, "n8n: the webhook answered with no items");
    }
    item = &item->as_array().front();
  }
  if (!item->is_object()) return std::string(trimmed);
  const auto& object = item->as_object();
  const auto* value = object.if_contains(output_key);
  if (!value) {
    const bool started_only = StringField(object, "message") == "Workflow was started";
    return util::Fail(
        ErrorCode::kUpstreamFailed,
        fmt::format("n8n: the response has no '{}' key{}", output_key.substr(0, 64),
                    started_only ? " (the webhook responds 'Immediately'; set it to respond when "
                                   "the last node finishes or with a 'Respond to Webhook' node)"
                                 : ""));
  }
  if (value->is_string()) return std::string(value->as_string());
  return util::SerializeJson(*value);
}

// One message: the webhook call and its answer, streamed or whole.
asio::awaitable<util::Result<AgentReply>> Start(std::shared_ptr<ServiceState> state, Turn turn,
                                                OnDelta on_delta) {
  Reading reading;
  std::string body;
  auto sink = [&](std::string_view piece) {
    body.append(piece);
    if (reading.mode == Reading::Mode::kWhole) return true;
    // A line over the splitter's limit cannot be a stream chunk: read the rest as one body.
    const bool fits =
        reading.lines.Feed(piece, [&](std::string_view line) { OnLine(line, reading, on_delta); });
    if (!fits) reading.mode = Reading::Mode::kWhole;
    return true;
  };
  net::BodySink body_sink = sink;
  auto sent = co_await state->http->Send(std::move(turn.request), std::move(body_sink));
  if (!sent) {
    util::Error error = sent.error();
    error.message = Redact("n8n: " + error.message, turn.secrets);
    co_return tl::unexpected(std::move(error));
  }
  if (sent->status < 200 || sent->status >= 300) {
    co_return tl::unexpected(ClassifyStatus(*sent, turn));
  }
  reading.lines.Finish([&](std::string_view line) { OnLine(line, reading, on_delta); });

  AgentReply reply;
  if (reading.mode == Reading::Mode::kStream) {
    if (reading.error) {
      co_return util::Fail(ErrorCode::kUpstreamFailed,
                           Redact("n8n: the workflow failed: " + *reading.error, turn.secrets));
    }
    if (reading.text.empty()) {
      co_return util::Fail(ErrorCode::kUpstreamFailed, "n8n: the streamed answer carried no text");
    }
    reply.text = std::move(reading.text);
    co_return reply;
  }
  auto text = WholeBody(body, turn.output_key);
  if (!text) co_return tl::unexpected(std::move(text.error()));
  reply.text = std::move(*text);
  co_return reply;
}

}  // namespace

util::Result<CallLauncher::Body> N8nRunner::Prepare(const util::JsonObject& pipeline_config,
                                                    pipeline::AgentInput input,
                                                    OnDelta on_delta) const {
  auto turn = ReadTurn(pipeline_config, input);
  if (!turn) return tl::unexpected(std::move(turn.error()));
  return [state = state(), turn = std::move(*turn), on_delta = std::move(on_delta)]() mutable {
    return Start(state, std::move(turn), std::move(on_delta));
  };
}

}  // namespace sb::runners
