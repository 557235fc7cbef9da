// Discord gateway v10 frames: decoding HELLO / READY / dispatch envelopes, encoding HEARTBEAT,
// IDENTIFY and RESUME, Get Gateway Bot's answer, and what each close code means for the session.
// Pure functions declared in discord_codec.hpp; discord_adapter.cpp runs the connection.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/discord/discord_codec.hpp"
#include "platforms/discord/discord_fields.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::discord {

using common::Invalid;
using util::ErrorCode;
using util::Json;
using util::JsonObject;

util::Result<GatewayFrame> DecodeFrame(std::string_view text) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return Invalid("the frame is not JSON");
  if (!parsed->is_object()) return Invalid("the frame is not a JSON object");
  JsonObject& o = parsed->get_object();
  const Json* op = o.if_contains("op");
  if (op == nullptr || !op->is_int64() || op->get_int64() < 0 || op->get_int64() > 1000) {
    return Invalid("op must be a small integer");
  }
  GatewayFrame frame;
  frame.op = static_cast<int>(op->get_int64());
  if (Json* d = o.if_contains("d")) frame.d = std::move(*d);
  if (const Json* s = o.if_contains("s"); s != nullptr && !s->is_null()) {
    if (!s->is_int64()) return Invalid("s must be null or an integer");
    frame.s = s->get_int64();
  }
  if (const Json* t = o.if_contains("t"); t != nullptr && !t->is_null()) {
    if (!t->is_string()) return Invalid("t must be null or a string");
    frame.t = std::string(t->get_string());
  }
  return frame;
}

util::Result<std::chrono::milliseconds> DecodeHello(const Json& d) {
  const Json* v = d.is_object() ? d.get_object().if_contains("heartbeat_interval") : nullptr;
  if (v == nullptr || !v->is_number()) return Invalid("d.heartbeat_interval must be a number");
  const double ms = v->to_number<double>();
  if (!(ms >= 1 && ms <= 600'000)) {
    return Invalid("d.heartbeat_interval must be between 1 ms and 10 minutes");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

util::Result<ReadyInfo> DecodeReady(const Json& d) {
  if (!d.is_object()) return Invalid("d must be an object");
  const JsonObject& o = d.get_object();
  const Json* user = o.if_contains("user");
  if (user == nullptr || !user->is_object()) return Invalid("d.user must be an object");
  ReadyInfo info;
  auto id = RequireString(user->get_object(), "id", "d.user");
  if (!id) return tl::unexpected(id.error());
  info.user_id = std::move(*id);
  auto name = OptionalString(user->get_object(), "username", "d.user");
  if (!name) return tl::unexpected(name.error());
  info.username = Truncated(*name, kMaxNameBytes);
  auto session = RequireString(o, "session_id", "d");
  if (!session) return tl::unexpected(session.error());
  info.session_id = std::move(*session);
  auto resume = OptionalString(o, "resume_gateway_url", "d");
  if (!resume) return tl::unexpected(resume.error());
  if (resume->starts_with("wss://") || resume->starts_with("ws://")) {
    info.resume_gateway_url = std::move(*resume);
  }
  return info;
}

bool DecodeInvalidSession(const Json& d) { return d.is_bool() && d.get_bool(); }

std::string EncodeHeartbeat(std::optional<std::int64_t> last_sequence) {
  JsonObject frame{{"op", kOpHeartbeat}, {"d", nullptr}};
  if (last_sequence) frame["d"] = *last_sequence;
  return util::SerializeJson(frame);
}

std::string EncodeIdentify(std::string_view token) {
  JsonObject properties{{"os", "linux"}, {"browser", "switchboard"}, {"device", "switchboard"}};
  JsonObject d{{"token", token}, {"intents", kIntents}, {"properties", std::move(properties)}};
  return util::SerializeJson(JsonObject{{"op", kOpIdentify}, {"d", std::move(d)}});
}

std::string EncodeResume(std::string_view token, std::string_view session_id,
                         std::optional<std::int64_t> last_sequence) {
  JsonObject d{{"token", token}, {"session_id", session_id}, {"seq", nullptr}};
  if (last_sequence) d["seq"] = *last_sequence;
  return util::SerializeJson(JsonObject{{"op", kOpResume}, {"d", std::move(d)}});
}

util::Result<GatewayBot> DecodeGatewayBot(std::string_view body) {
  auto parsed = util::ParseJson(body);
  const JsonObject* o = parsed && parsed->is_object() ? &parsed->get_object() : nullptr;
  const Json* url = o != nullptr ? o->if_contains("url") : nullptr;
  if (url == nullptr || !url->is_string() ||
      !(url->get_string().starts_with("wss://") || url->get_string().starts_with("ws://"))) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "Get Gateway Bot answered without a ws:// or wss:// url");
  }
  GatewayBot info;
  info.url = std::string(url->get_string());
  const Json* limit = o->if_contains("session_start_limit");
  if (limit != nullptr && limit->is_object()) {
    const Json* remaining = limit->get_object().if_contains("remaining");
    const Json* reset = limit->get_object().if_contains("reset_after");
    if (remaining != nullptr && remaining->is_int64() && reset != nullptr && reset->is_number()) {
      const double ms = reset->to_number<double>();
      if (std::isfinite(ms) && ms >= 0) {
        info.remaining = remaining->get_int64();
        info.reset_after = std::chrono::milliseconds(
            static_cast<std::int64_t>(std::min(ms, 7.0 * 24 * 3600 * 1000)));
      }
    }
  }
  return info;
}

std::string GatewayConnectUrl(std::string_view url) {
  std::string base(url);
  const auto query = base.find('?');
  if (query != std::string::npos) base.erase(query);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/?v=10&encoding=json";
}

CloseAction ClassifyClose(int code) {
  switch (code) {
    case 4004:
    case 4010:
    case 4011:
    case 4012:
    case 4013:
    case 4014:
      return CloseAction::kFatal;
    case 1000:  // a close by us or a deliberate one by the server: the session is over
    case 1001:
    case 4003:
    case 4005:
    case 4007:
    case 4009:
      return CloseAction::kIdentify;
    default:
      return CloseAction::kResume;
  }
}

std::string DescribeClose(int code, std::string_view reason) {
  const char* what = nullptr;
  switch (code) {
    case 1006:
      what = "the connection dropped without a close frame";
      break;
    case 4000:
      what = "unknown error";
      break;
    case 4001:
      what = "Discord did not know an opcode we sent";
      break;
    case 4002:
      what = "Discord could not decode a payload we sent";
      break;
    case 4003:
      what = "not authenticated";
      break;
    case 4004:
      what = "authentication failed: Discord refused the token";
      break;
    case 4005:
      what = "already authenticated";
      break;
    case 4007:
      what = "invalid sequence number on resume";
      break;
    case 4008:
      what = "rate limited: too many gateway payloads";
      break;
    case 4009:
      what = "the session timed out";
      break;
    case 4010:
      what = "invalid shard";
      break;
    case 4011:
      what = "sharding required: the bot is in too many guilds for one connection";
      break;
    case 4012:
      what = "invalid API version";
      break;
    case 4013:
      what = "invalid intents";
      break;
    case 4014:
      what =
          "disallowed intents: enable the MESSAGE CONTENT intent for the bot in the Discord "
          "Developer Portal";
      break;
    default:
      break;
  }
  std::string text = what != nullptr ? fmt::format("{} (close code {})", what, code)
                                     : fmt::format("the gateway closed with code {}", code);
  if (!reason.empty() && what == nullptr) {
    text += ": " + Truncated(util::ToValidUtf8(reason), 120);
  }
  return text;
}

}  // namespace sb::platforms::discord
