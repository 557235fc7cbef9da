// QQ official callback payloads, the op 13 validation, the four message events and the send
// bodies. Pure functions declared in qqofficial_codec.hpp.
#include "platforms/qqofficial/qqofficial_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::qqofficial {

using common::Invalid;
using util::ErrorCode;
using util::Json;
using util::JsonObject;

namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Ids QQ hands out: openids (hex), snowflake-like numbers, message ids ("ROBOT1.0_..." with
// letters, digits, '.', '_', '-', '!', '=' and '/'). Anything else could bend a URL path.
bool PlausibleId(std::string_view s) {
  return !s.empty() && s.size() <= kMaxIdBytes && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '!' || c == '=';
  });
}

// Ids that name a chat or a person end up in URL paths (/v2/users/{id}/messages): openids are
// hex, guild and channel ids numbers, so letters, digits, '_' and '-' are all they may hold.
bool PlausibleTarget(std::string_view s) {
  return !s.empty() && s.size() <= kMaxIdBytes && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// A required id field of `o` (a message id, or with `target` a chat or person id);
// kInvalidArgument naming `where.key`.
util::Result<std::string> RequireId(const JsonObject& o, std::string_view key,
                                    std::string_view where, bool target = true) {
  const auto* v = common::StringField(o, key);
  if (v == nullptr) return Invalid(fmt::format("{}.{} must be a string", where, key));
  if (!(target ? PlausibleTarget(*v) : PlausibleId(*v))) {
    return Invalid(fmt::format("{}.{} is not a QQ id", where, key));
  }
  return std::string(*v);
}

// The bot's own guild user id: READY's, else (webhook mode has no READY) the mentioned bot's.
std::string GuildBotId(const JsonObject& d, std::string_view bot_user_id) {
  if (!bot_user_id.empty()) return std::string(bot_user_id);
  if (const util::JsonArray* mentions = common::ArrayField(d, "mentions")) {
    for (const Json& m : *mentions) {
      if (m.is_object() && common::IsTrue(m.get_object(), "bot")) {
        return std::string(common::StringOr(m.get_object(), "id"));
      }
    }
  }
  return {};
}

std::string WithScheme(std::string_view url) {
  if (url.starts_with("http://") || url.starts_with("https://")) return std::string(url);
  if (url.starts_with("//")) return "https:" + std::string(url);
  return "https://" + std::string(url);
}

// Guild content: `<@!id>` / `<@id>` mentions. The bot's own are dropped (the chain already
// starts with At{bot}); others become At{id}. Everything else is text.
void AppendGuildContent(domain::MessageChain& chain, std::string_view content,
                        std::string_view bot_user_id, bool drop_leading_space) {
  std::string_view rest = content;
  bool first = true;
  while (!rest.empty()) {
    const auto open = rest.find("<@");
    std::string_view text = rest.substr(0, open);
    if (first && drop_leading_space) {
      while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    }
    if (!text.empty()) {
      common::AppendPlain(chain, text);
      first = false;
    }
    if (open == std::string_view::npos) break;
    rest.remove_prefix(open);
    std::size_t i = 2;
    if (i < rest.size() && rest[i] == '!') ++i;
    const std::size_t digits_from = i;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    if (i == digits_from || i >= rest.size() || rest[i] != '>' || i - digits_from > 20) {
      common::AppendPlain(chain, rest.substr(0, 2));
      first = false;
      rest.remove_prefix(2);
      continue;
    }
    const std::string_view id = rest.substr(digits_from, i - digits_from);
    if (id != bot_user_id) common::AppendAt(chain, std::string(id));
    rest.remove_prefix(i + 1);
  }
}

void AppendAttachments(domain::MessageChain& chain, const JsonObject& d) {
  const util::JsonArray* attachments = common::ArrayField(d, "attachments");
  if (attachments == nullptr) return;
  std::size_t taken = 0;
  for (const Json& a : *attachments) {
    if (!a.is_object() || ++taken > kMaxAttachments) continue;
    const JsonObject& att = a.get_object();
    std::string_view url = common::StringOr(att, "url");
    if (url.empty() || url.size() > 4096) continue;
    domain::MessageElement element;
    element.url = WithScheme(url);
    if (common::StringOr(att, "content_type").starts_with("image/")) {
      element.type = domain::ElementType::kImage;
    } else {
      element.type = domain::ElementType::kFile;
      element.name = std::string(common::StringOr(att, "filename"));
    }
    chain.push_back(std::move(element));
  }
}

}  // namespace

util::Result<Payload> DecodePayload(std::string_view text) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return Invalid("the body is not JSON");
  if (!parsed->is_object()) return Invalid("the body is not a JSON object");
  JsonObject& o = parsed->get_object();
  const Json* op = o.if_contains("op");
  if (op == nullptr || !op->is_int64() || op->get_int64() < 0 || op->get_int64() > 1000) {
    return Invalid("op must be a small integer");
  }
  Payload payload;
  payload.op = static_cast<int>(op->get_int64());
  if (const Json* id = o.if_contains("id"); id != nullptr && !id->is_null()) {
    if (!id->is_string() || id->get_string().size() > kMaxIdBytes) {
      return Invalid("id must be a string of at most 128 bytes");
    }
    payload.id = std::string(id->get_string());
  }
  if (Json* d = o.if_contains("d")) payload.d = std::move(*d);
  if (const Json* s = o.if_contains("s"); s != nullptr && !s->is_null()) {
    if (!s->is_int64()) return Invalid("s must be null or an integer");
    payload.s = s->get_int64();
  }
  if (const Json* t = o.if_contains("t"); t != nullptr && !t->is_null()) {
    if (!t->is_string() || t->get_string().size() > 64) return Invalid("t must be a short string");
    payload.t = std::string(t->get_string());
  }
  return payload;
}

util::Result<Validation> DecodeValidation(const Json& d) {
  if (!d.is_object()) return Invalid("d must be an object");
  const JsonObject& o = d.get_object();
  const auto* token = common::StringField(o, "plain_token");
  const auto* ts = common::StringField(o, "event_ts");
  if (token == nullptr || ts == nullptr) {
    return Invalid("d.plain_token and d.event_ts must be strings");
  }
  const bool token_ok =
      !token->empty() && token->size() <= 128 &&
      std::all_of(token->begin(), token->end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      });
  if (!token_ok) return Invalid("d.plain_token must be letters and digits");
  if (!IsDigits(*ts) || ts->size() > 20) return Invalid("d.event_ts must be decimal digits");
  return Validation{std::string(*token), std::string(*ts)};
}

std::string EncodeValidationAnswer(std::string_view plain_token, std::string_view signature) {
  JsonObject o;
  o["plain_token"] = plain_token;
  o["signature"] = signature;
  return util::SerializeJson(o);
}

std::string EncodeCallbackAck() { return R"({"op":12,"d":0})"; }

const char* RouteName(Route route) {
  switch (route) {
    case Route::kC2c:
      return "c2c";
    case Route::kGroup:
      return "group";
    case Route::kChannel:
      return "channel";
    case Route::kDirect:
      return "dm";
  }
  return "c2c";
}

Route RouteFor(domain::TargetType type, std::string_view target_id) {
  const bool guild = IsDigits(target_id);
  if (type == domain::TargetType::kPerson) return guild ? Route::kDirect : Route::kC2c;
  return guild ? Route::kChannel : Route::kGroup;
}

util::Result<DecodedEvent> DecodeEvent(std::string_view t, const Json& d,
                                       std::string_view bot_account_id,
                                       std::string_view bot_user_id) {
  DecodedEvent out;
  const bool c2c = t == "C2C_MESSAGE_CREATE";
  const bool group = t == "GROUP_AT_MESSAGE_CREATE";
  const bool channel = t == "AT_MESSAGE_CREATE";
  const bool direct = t == "DIRECT_MESSAGE_CREATE";
  if (!c2c && !group && !channel && !direct) {
    out.skipped = t == "MESSAGE_CREATE" ? "a guild message that does not mention the bot"
                                        : fmt::format("a {} event", t.empty() ? "nameless" : t);
    return out;
  }
  if (!d.is_object()) return Invalid("d must be an object");
  const JsonObject& o = d.get_object();
  const JsonObject* author = common::ObjectField(o, "author");
  if (author == nullptr) return Invalid("d.author must be an object");
  auto id = RequireId(o, "id", "d", /*target=*/false);
  if (!id) return tl::unexpected(id.error());
  const Json* content_value = o.if_contains("content");
  if (content_value != nullptr && !content_value->is_null() && !content_value->is_string()) {
    return Invalid("d.content must be a string");
  }
  std::string_view content = common::StringOr(o, "content");
  if (content.size() > kMaxTextBytes) return Invalid("d.content is too long");
  const std::string text = util::ToValidUtf8(content);

  domain::ReceivedMessage m;
  m.message_id = *id;
  domain::MessageElement source;
  source.type = domain::ElementType::kSource;
  source.id = *id;
  m.chain.push_back(std::move(source));
  if (c2c || group) {
    auto sender = RequireId(*author, c2c ? "user_openid" : "member_openid", "d.author");
    if (!sender) return tl::unexpected(sender.error());
    m.sender_id = *sender;
    if (c2c) {
      m.chat_type = domain::TargetType::kPerson;
      m.chat_id = *sender;
      out.route = Route::kC2c;
    } else {
      auto group_openid = RequireId(o, "group_openid", "d");
      if (!group_openid) return tl::unexpected(group_openid.error());
      m.chat_type = domain::TargetType::kGroup;
      m.chat_id = *group_openid;
      out.route = Route::kGroup;
      common::AppendAt(m.chain, std::string(bot_account_id));
    }
    // Group content starts with a space where the @ was; C2C text is taken as typed.
    std::string_view body = text;
    if (group) {
      while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
    }
    common::AppendPlain(m.chain, body);
  } else {
    auto sender = RequireId(*author, "id", "d.author");
    if (!sender) return tl::unexpected(sender.error());
    m.sender_id = *sender;
    m.sender_name = util::ToValidUtf8(common::StringOr(*author, "username").substr(0, 256));
    if (direct) {
      auto guild = RequireId(o, "guild_id", "d");
      if (!guild) return tl::unexpected(guild.error());
      m.chat_type = domain::TargetType::kPerson;
      m.chat_id = *guild;
      out.route = Route::kDirect;
    } else {
      auto channel_id = RequireId(o, "channel_id", "d");
      if (!channel_id) return tl::unexpected(channel_id.error());
      m.chat_type = domain::TargetType::kGroup;
      m.chat_id = *channel_id;
      out.route = Route::kChannel;
      common::AppendAt(m.chain, std::string(bot_account_id));
    }
    AppendGuildContent(m.chain, text, GuildBotId(o, bot_user_id), channel);
  }
  AppendAttachments(m.chain, o);
  if (m.chain.size() == (c2c || direct ? 1u : 2u)) {
    out.skipped = "a message with nothing in it";
    return out;
  }
  out.message = std::move(m);
  return out;
}

// ---- sends ----

namespace {

bool IsHttpUrl(std::string_view url) {
  return url.starts_with("https://") || url.starts_with("http://");
}

// The base64 payload of `value`, without a data: prefix.
std::string_view Base64Payload(std::string_view value) {
  if (value.starts_with("data:")) {
    const auto comma = value.find(',');
    return comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
  }
  return value;
}

}  // namespace

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!PlausibleTarget(message.target_id)) {
    return Invalid("target_id: not a QQ openid, group openid, channel id or guild id");
  }
  bool visible = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const domain::MessageElement& e = message.chain[i];
    const std::string where = fmt::format("message_chain[{}]", i);
    switch (e.type) {
      case domain::ElementType::kPlain:
        visible = visible || !e.text.empty();
        break;
      case domain::ElementType::kImage:
      case domain::ElementType::kVoice:
        if (!IsHttpUrl(e.url) && Base64Payload(e.base64).empty()) {
          return Invalid(where + ": " + domain::ElementTypeName(e.type) +
                         " needs an http(s) url or base64");
        }
        visible = true;
        break;
      case domain::ElementType::kFile:
        if (!IsHttpUrl(e.url)) return Invalid(where + ": File needs an http(s) url");
        visible = true;
        break;
      case domain::ElementType::kAt:
        if (e.target.empty()) return Invalid(where + ": At needs a target");
        break;
      case domain::ElementType::kAtAll:
      case domain::ElementType::kQuote:
      case domain::ElementType::kSource:
        break;
    }
  }
  if (!visible) return Invalid("message_chain: nothing QQ can show");
  return util::Ok();
}

util::Result<std::vector<Part>> EncodeParts(const domain::OutgoingMessage& message, Route route) {
  const bool guild = route == Route::kChannel || route == Route::kDirect;
  std::vector<Part> parts;
  std::string text;
  auto flush = [&] {
    if (text.find_first_not_of(" \n") != std::string::npos) {
      Part part;
      part.text = text;
      parts.push_back(std::move(part));
    }
    text.clear();
  };
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const domain::MessageElement& e = message.chain[i];
    switch (e.type) {
      case domain::ElementType::kPlain:
        text += e.text;
        break;
      case domain::ElementType::kAt:
        if (guild && route == Route::kChannel) text += "<@" + e.target + ">";
        break;
      case domain::ElementType::kAtAll:
        if (route == Route::kChannel) text += "@everyone";
        break;
      case domain::ElementType::kFile:
        if (!text.empty() && text.back() != '\n') text += "\n";
        text += (e.name.empty() ? std::string("file") : e.name) + ": " + e.url;
        break;
      case domain::ElementType::kImage:
      case domain::ElementType::kVoice: {
        flush();
        Part part;
        part.file_type = e.type == domain::ElementType::kImage ? 1 : 3;
        if (IsHttpUrl(e.url)) {
          part.url = e.url;
        } else {
          part.base64 = std::string(Base64Payload(e.base64));
        }
        if (guild && (part.file_type != 1 || part.url.empty())) {
          return Invalid(fmt::format(
              "message_chain[{}]: QQ guild channels and DMs take images by URL only", i));
        }
        parts.push_back(std::move(part));
        break;
      }
      case domain::ElementType::kQuote:
      case domain::ElementType::kSource:
        break;
    }
  }
  flush();
  if (parts.empty()) return Invalid("message_chain: nothing QQ can show on this route");
  return parts;
}

std::string MessagesPath(Route route, std::string_view target) {
  switch (route) {
    case Route::kC2c:
      return fmt::format("/v2/users/{}/messages", target);
    case Route::kGroup:
      return fmt::format("/v2/groups/{}/messages", target);
    case Route::kChannel:
      return fmt::format("/channels/{}/messages", target);
    case Route::kDirect:
      return fmt::format("/dms/{}/messages", target);
  }
  return {};
}

std::string FilesPath(Route route, std::string_view target) {
  return route == Route::kGroup ? fmt::format("/v2/groups/{}/files", target)
                                : fmt::format("/v2/users/{}/files", target);
}

std::string EncodeText(Route route, std::string_view text, std::string_view msg_id, int msg_seq) {
  JsonObject o;
  o["content"] = util::ToValidUtf8(text);
  o["msg_type"] = 0;
  if (!msg_id.empty()) o["msg_id"] = msg_id;
  if (route == Route::kC2c || route == Route::kGroup) o["msg_seq"] = msg_seq;
  return util::SerializeJson(o);
}

std::string EncodeUpload(const Part& part) {
  JsonObject o;
  o["file_type"] = part.file_type;
  if (!part.url.empty()) {
    o["url"] = part.url;
  } else {
    o["file_data"] = part.base64;
  }
  o["srv_send_msg"] = false;
  return util::SerializeJson(o);
}

util::Result<std::string> DecodeFileInfo(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    std::string_view info = common::StringOr(parsed->get_object(), "file_info");
    if (!info.empty()) return std::string(info);
  }
  return util::Fail(ErrorCode::kUpstreamFailed, "QQ's upload answer has no file_info");
}

std::string EncodeMedia(std::string_view file_info, std::string_view msg_id, int msg_seq) {
  JsonObject o;
  o["content"] = " ";  // msg_type 7 wants a content, a space will do
  o["msg_type"] = 7;
  JsonObject media;
  media["file_info"] = file_info;
  o["media"] = std::move(media);
  if (!msg_id.empty()) o["msg_id"] = msg_id;
  o["msg_seq"] = msg_seq;
  return util::SerializeJson(o);
}

std::string EncodeChannelImage(std::string_view url, std::string_view msg_id) {
  JsonObject o;
  o["image"] = url;
  if (!msg_id.empty()) o["msg_id"] = msg_id;
  return util::SerializeJson(o);
}

std::string DescribeError(int http_status, std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    const JsonObject& o = parsed->get_object();
    std::string message = util::ToValidUtf8(common::StringOr(o, "message").substr(0, 300));
    auto code = common::IntField(o, "code");
    if (!code) code = common::IntField(o, "err_code");
    if (code && !message.empty()) return fmt::format("code {}: {}", *code, message);
    if (!message.empty()) return message;
    if (code) return fmt::format("code {}", *code);
  }
  return fmt::format("HTTP {}", http_status);
}

std::int64_t ErrorCodeOf(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return 0;
  auto code = common::IntField(parsed->get_object(), "code");
  return code ? *code : 0;
}

bool IsTokenRejected(int http_status, std::string_view body) {
  // 11244 "token not exist or expire"; 11241/11242 other token failures.
  const std::int64_t code = ErrorCodeOf(body);
  return http_status == 401 || code == 11244 || code == 11241 || code == 11242;
}

std::string SentMessageId(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return {};
  return std::string(common::StringOr(parsed->get_object(), "id"));
}

}  // namespace sb::platforms::qqofficial
