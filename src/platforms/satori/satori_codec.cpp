#include "platforms/satori/satori_codec.hpp"

#include <fmt/format.h>

#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/satori/satori_elements.hpp"

namespace sb::platforms::satori {
namespace {

using common::Invalid;
using common::ObjectField;
using common::StringOr;
using domain::ElementType;
using util::ErrorCode;
using util::JsonObject;

constexpr std::size_t kMaxTargetBytes = 256;

// Ids are strings in the spec; some SDKs write numbers, which are taken as their decimal text.
std::string IdField(const JsonObject& obj, std::string_view key) {
  const util::Json* v = obj.if_contains(key);
  if (v == nullptr) return {};
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_int64()) return std::to_string(v->get_int64());
  if (v->is_uint64()) return std::to_string(v->get_uint64());
  return {};
}

std::string IdOf(const JsonObject& obj, std::string_view resource) {
  const JsonObject* r = ObjectField(obj, resource);
  return r == nullptr ? std::string() : IdField(*r, "id");
}

std::string TrimSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string WebSocketUrl(std::string_view http_url) {
  if (http_url.starts_with("https://")) return "wss://" + std::string(http_url.substr(8));
  if (http_url.starts_with("http://")) return "ws://" + std::string(http_url.substr(7));
  return std::string(http_url);
}

bool PlausibleId(std::string_view id) {
  if (id.empty() || id.size() > kMaxTargetBytes) return false;
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7F) return false;
  }
  return true;
}

}  // namespace

Endpoints EndpointsFromConfig(const util::JsonObject& config) {
  const std::string root = common::ConfigBaseUrl(config, "api_base_url", "");
  if (!root.empty()) return {root + "/v1", WebSocketUrl(root) + "/v1/events"};
  const std::string host = common::ConfigString(config, "host", "127.0.0.1");
  const std::int64_t port = common::ConfigInt(config, "port", 5600);
  const std::string authority = fmt::format("{}:{}", host.empty() ? "127.0.0.1" : host, port);
  Endpoints out;
  out.api = TrimSlashes(common::ConfigString(config, "satori_api_base_url"));
  if (out.api.empty()) out.api = "http://" + authority + "/v1";
  out.events = TrimSlashes(common::ConfigString(config, "satori_endpoint"));
  if (out.events.empty()) out.events = "ws://" + authority + "/v1/events";
  return out;
}

util::Result<Signal> DecodeSignal(std::string_view text) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return tl::unexpected(parsed.error());
  if (!parsed->is_object()) return Invalid("a signal must be a JSON object");
  JsonObject& obj = parsed->get_object();
  const auto op = common::IntField(obj, "op");
  if (!op || *op < 0 || *op > 1000) return Invalid("signal.op must be a small integer");
  Signal signal;
  signal.op = static_cast<int>(*op);
  if (util::Json* body = obj.if_contains("body"); body != nullptr && !body->is_null()) {
    if (!body->is_object()) return Invalid("signal.body must be an object");
    signal.body = std::move(body->get_object());
  }
  return signal;
}

std::string EncodeIdentify(std::string_view token, std::optional<std::int64_t> sn) {
  JsonObject body;
  if (!token.empty()) body["token"] = token;
  if (sn) body["sn"] = *sn;
  return util::SerializeJson(JsonObject{{"op", kOpIdentify}, {"body", std::move(body)}});
}

std::string EncodePing() { return R"({"op":1,"body":{}})"; }

std::vector<Login> DecodeLogins(const util::JsonObject& ready_body) {
  std::vector<Login> out;
  const util::JsonArray* logins = common::ArrayField(ready_body, "logins");
  if (logins == nullptr) return out;
  for (const util::Json& v : *logins) {
    if (!v.is_object()) continue;
    const JsonObject& login = v.get_object();
    Login l;
    l.platform = std::string(StringOr(login, "platform"));
    if (const JsonObject* user = ObjectField(login, "user")) {
      l.user_id = IdField(*user, "id");
      l.user_name = std::string(StringOr(*user, "name"));
    }
    if (l.platform.empty() || l.user_id.empty()) continue;
    out.push_back(std::move(l));
  }
  return out;
}

util::Result<Login> PickLogin(const std::vector<Login>& logins, std::string_view platform) {
  for (const Login& l : logins) {
    if (!platform.empty() && l.platform == platform) return l;
  }
  if (platform.empty() && logins.size() == 1) return logins.front();
  std::string offered;
  for (const Login& l : logins) offered += (offered.empty() ? "" : ", ") + l.platform;
  return util::Fail(
      ErrorCode::kNotFound,
      fmt::format("the Satori server has no login for platform \"{}\" (it offers: {})", platform,
                  offered.empty() ? "none yet" : offered));
}

util::Result<DecodedEvent> DecodeEvent(const util::JsonObject& body, const Login& self) {
  DecodedEvent out;
  out.sn = common::IntField(body, "sn");
  out.type = std::string(StringOr(body, "type"));
  if (out.type != "message-created") return out;

  // The event's account: `login` in the current spec, `platform` / `self_id` in older SDKs.
  std::string platform, self_id;
  if (const JsonObject* login = ObjectField(body, "login")) {
    platform = std::string(StringOr(*login, "platform"));
    self_id = IdOf(*login, "user");
  }
  if (platform.empty()) platform = std::string(StringOr(body, "platform"));
  if (self_id.empty()) self_id = IdField(body, "self_id");
  if ((!platform.empty() && platform != self.platform) ||
      (!self_id.empty() && self_id != self.user_id)) {
    return out;  // another account served by the same SDK
  }

  const JsonObject* message = ObjectField(body, "message");
  if (message == nullptr) return Invalid("event.message is required for message-created");
  const JsonObject* channel = ObjectField(body, "channel");
  if (channel == nullptr) channel = ObjectField(*message, "channel");
  const std::string channel_id = channel == nullptr ? std::string() : IdField(*channel, "id");
  if (channel_id.empty()) return Invalid("event.channel.id is required for message-created");
  const JsonObject* user = ObjectField(body, "user");
  if (user == nullptr) user = ObjectField(*message, "user");
  const std::string user_id = user == nullptr ? std::string() : IdField(*user, "id");
  if (user_id.empty()) return Invalid("event.user.id is required for message-created");
  if (user_id == self.user_id) return out;  // the bot's own message, echoed

  domain::ReceivedMessage received;
  const std::optional<std::int64_t> type = common::IntField(*channel, "type");
  const JsonObject* guild = ObjectField(body, "guild");
  const bool in_guild = guild != nullptr && !IdField(*guild, "id").empty();
  // LangBot's rule: DIRECT is private; TEXT or any guild is a group; anything else private.
  const bool group =
      !(type && *type == kChannelDirect) && ((type && *type == kChannelText) || in_guild);
  received.chat_type = group ? domain::TargetType::kGroup : domain::TargetType::kPerson;
  received.chat_id = group ? channel_id : user_id;
  received.sender_id = user_id;
  if (const JsonObject* member = ObjectField(body, "member")) {
    received.sender_name = std::string(StringOr(*member, "nick"));
  }
  if (received.sender_name.empty()) received.sender_name = std::string(StringOr(*user, "nick"));
  if (received.sender_name.empty()) received.sender_name = std::string(StringOr(*user, "name"));
  received.message_id = IdField(*message, "id");

  domain::MessageChain content = DecodeContent(StringOr(*message, "content"));
  if (content.empty()) return out;
  if (!received.message_id.empty()) {
    domain::MessageElement source;
    source.type = ElementType::kSource;
    source.id = received.message_id;
    received.chain.push_back(std::move(source));
  }
  for (auto& e : content) received.chain.push_back(std::move(e));
  out.message = std::move(received);
  out.channel_id = channel_id;
  return out;
}

std::string EncodeMessageCreate(std::string_view channel_id, std::string_view content) {
  return util::SerializeJson(JsonObject{{"channel_id", channel_id}, {"content", content}});
}

std::string EncodeDirectChannelCreate(std::string_view user_id) {
  return util::SerializeJson(JsonObject{{"user_id", user_id}});
}

util::Result<std::string> DecodeCreatedMessageId(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !(parsed->is_array() || parsed->is_object())) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "the Satori server answered message.create with no list of messages");
  }
  std::string id;
  if (parsed->is_object()) return IdField(parsed->get_object(), "id");
  for (const util::Json& m : parsed->get_array()) {
    if (!m.is_object()) continue;
    if (std::string one = IdField(m.get_object(), "id"); !one.empty()) id = std::move(one);
  }
  return id;
}

util::Result<std::string> DecodeChannelId(std::string_view body) {
  auto parsed = util::ParseJson(body);
  std::string id;
  if (parsed && parsed->is_object()) id = IdField(parsed->get_object(), "id");
  if (id.empty()) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "the Satori server answered user.channel.create without a channel id");
  }
  return id;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!PlausibleId(message.target_id)) {
    return Invalid(
        "target_id must be a Satori channel id (group) or user id (person): 1-256 bytes without "
        "control characters");
  }
  bool shows_something = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const domain::MessageElement& e = message.chain[i];
    const std::string where = fmt::format("message_chain[{}]", i);
    switch (e.type) {
      case ElementType::kPlain:
        if (!e.text.empty()) shows_something = true;
        break;
      case ElementType::kAt:
        if (!PlausibleId(e.target)) return Invalid(where + ": At needs the user's id as target");
        shows_something = true;
        break;
      case ElementType::kAtAll:
        shows_something = true;
        break;
      case ElementType::kImage:
      case ElementType::kVoice:
        if (e.url.empty() && e.base64.empty()) {
          return Invalid(where + fmt::format(": {} needs a url or base64 data",
                                             domain::ElementTypeName(e.type)));
        }
        shows_something = true;
        break;
      case ElementType::kFile:
        if (e.url.empty()) return Invalid(where + ": File needs a url");
        shows_something = true;
        break;
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!shows_something) return Invalid("message_chain has nothing Satori can show");
  return {};
}

}  // namespace sb::platforms::satori
