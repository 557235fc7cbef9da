// The QQ app access token and the gateway's frames: the token request and answer, GET /gateway,
// HELLO / READY, IDENTIFY / RESUME / HEARTBEAT, and what each close code means for the session.
// Pure functions declared in qqofficial_codec.hpp; qqofficial_rest.cpp and qqofficial_gateway.cpp
// do the I/O.
#include <fmt/format.h>

#include <charconv>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/qqofficial/qqofficial_codec.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::qqofficial {

using common::Invalid;
using util::ErrorCode;
using util::Json;
using util::JsonObject;

std::string EncodeTokenRequest(std::string_view appid, std::string_view secret) {
  JsonObject o;
  o["appId"] = appid;
  o["clientSecret"] = secret;
  return util::SerializeJson(o);
}

util::Result<AccessToken> DecodeAccessToken(int http_status, std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (http_status >= 200 && http_status < 300 && parsed && parsed->is_object()) {
    const JsonObject& o = parsed->get_object();
    std::string_view token = common::StringOr(o, "access_token");
    if (!token.empty()) {
      AccessToken out;
      out.token = std::string(token);
      if (auto n = common::IntField(o, "expires_in")) {
        out.expires_in = std::chrono::seconds(*n);
      } else if (std::string_view s = common::StringOr(o, "expires_in"); !s.empty()) {
        long long n = 0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (ec == std::errc() && ptr == s.data() + s.size())
          out.expires_in = std::chrono::seconds(n);
      }
      if (out.expires_in.count() <= 0 || out.expires_in.count() > 86'400 * 30) {
        out.expires_in = std::chrono::seconds(7200);
      }
      return out;
    }
  }
  util::Error error{
      ErrorCode::kUpstreamFailed,
      "QQ refused the app credentials (appid / secret): " + DescribeError(http_status, body)};
  // An answer that names an error is about the credentials; retrying cannot fix them.
  error.final = http_status == 401 || http_status == 403 ||
                (parsed && parsed->is_object() && ErrorCodeOf(body) != 0);
  return tl::unexpected(std::move(error));
}

util::Result<std::string> DecodeGatewayUrl(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    std::string_view url = common::StringOr(parsed->get_object(), "url");
    if (url.starts_with("wss://") || url.starts_with("ws://")) return std::string(url);
  }
  return util::Fail(ErrorCode::kUpstreamFailed, "QQ's GET /gateway answer has no ws(s):// url");
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
  ReadyInfo info;
  info.session_id = std::string(common::StringOr(o, "session_id"));
  if (info.session_id.empty() || info.session_id.size() > 256) {
    return Invalid("d.session_id must be a string");
  }
  const JsonObject* user = common::ObjectField(o, "user");
  if (user == nullptr) return Invalid("d.user must be an object");
  info.user_id = std::string(common::StringOr(*user, "id"));
  if (info.user_id.empty() || info.user_id.size() > kMaxIdBytes) {
    return Invalid("d.user.id must be a string");
  }
  info.username = util::ToValidUtf8(common::StringOr(*user, "username").substr(0, 256));
  return info;
}

std::string EncodeIdentify(std::string_view access_token, std::int64_t intents) {
  JsonObject d;
  d["token"] = "QQBot " + std::string(access_token);
  d["intents"] = intents;
  d["shard"] = util::JsonArray{0, 1};
  JsonObject properties;
  properties["$os"] = "linux";
  properties["$browser"] = "switchboard";
  properties["$device"] = "switchboard";
  d["properties"] = std::move(properties);
  JsonObject o;
  o["op"] = kOpIdentify;
  o["d"] = std::move(d);
  return util::SerializeJson(o);
}

std::string EncodeResume(std::string_view access_token, std::string_view session_id,
                         std::int64_t seq) {
  JsonObject d;
  d["token"] = "QQBot " + std::string(access_token);
  d["session_id"] = session_id;
  d["seq"] = seq;
  JsonObject o;
  o["op"] = kOpResume;
  o["d"] = std::move(d);
  return util::SerializeJson(o);
}

std::string EncodeHeartbeat(std::optional<std::int64_t> last_seq) {
  return last_seq ? fmt::format(R"({{"op":1,"d":{}}})", *last_seq) : R"({"op":1,"d":null})";
}

CloseAction ClassifyClose(int code) {
  if (code == 4004) return CloseAction::kNewToken;
  if (code == 4008) return CloseAction::kWait;
  // 4013 invalid intents, 4014 intents the bot may not have, 4914 offline / sandbox only, 4915
  // banned: the bot's settings on the QQ open platform must change first.
  if (code == 4013 || code == 4014 || code == 4914 || code == 4915) return CloseAction::kFatal;
  // 4006 invalid session id, 4007 seq error on resume, 4009 session timed out, 4900-4913 QQ's
  // internal errors: the botpy and LangBot clients start a new session after each.
  if (code == 4006 || code == 4007 || code == 4009 || (code >= 4900 && code <= 4913)) {
    return CloseAction::kIdentify;
  }
  // 4001 / 4002 bad opcode or payload, 4010-4012 shard and version errors: a new session may
  // fare no better, but a resume surely not.
  if (code >= 4001 && code <= 4013) return CloseAction::kIdentify;
  return CloseAction::kResume;
}

std::string DescribeClose(int code, std::string_view reason) {
  std::string what;
  switch (code) {
    case 1000:
      what = "closed normally";
      break;
    case 1006:
      what = "dropped without a close frame";
      break;
    case 4004:
      what = "the access token was refused";
      break;
    case 4006:
      what = "invalid session";
      break;
    case 4007:
      what = "invalid seq on resume";
      break;
    case 4008:
      what = "sending too fast";
      break;
    case 4009:
      what = "session timed out";
      break;
    case 4013:
      what = "invalid intents";
      break;
    case 4014:
      what = "the bot may not subscribe to these intents (enable its events on q.qq.com)";
      break;
    case 4914:
      what = "the bot is offline or limited to its sandbox";
      break;
    case 4915:
      what = "the bot is banned";
      break;
    default:
      what = "closed";
      break;
  }
  std::string out = fmt::format("{} ({})", what, code);
  if (!reason.empty()) out += ": " + util::ToValidUtf8(reason.substr(0, 200));
  return out;
}

}  // namespace sb::platforms::qqofficial
