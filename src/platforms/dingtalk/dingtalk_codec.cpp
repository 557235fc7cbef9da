#include "platforms/dingtalk/dingtalk_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/text_units.hpp"
#include "util/crypto.hpp"
#include "util/json.hpp"

namespace sb::platforms::dingtalk {
namespace {

using common::AppendPlain;
using common::ArrayField;
using common::Invalid;
using common::ObjectField;
using common::StringField;
using common::StringOr;
using domain::ElementType;
using domain::MessageElement;
using util::ErrorCode;
using util::Json;
using util::JsonObject;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool IsHttpUrl(std::string_view url) {
  return (StartsWith(url, "https://") || StartsWith(url, "http://")) &&
         url.size() <= kMaxUrlBytes && std::none_of(url.begin(), url.end(), [](char c) {
           return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
         });
}

bool IsWsUrl(std::string_view url) {
  return (StartsWith(url, "wss://") || StartsWith(url, "ws://")) && url.size() <= kMaxUrlBytes &&
         std::none_of(url.begin(), url.end(),
                      [](char c) { return static_cast<unsigned char>(c) <= 0x20; });
}

util::Result<JsonObject> ParseObject(std::string_view text, std::string_view what) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return Invalid(fmt::format("{}: {}", what, parsed.error().message));
  if (!parsed->is_object()) return Invalid(fmt::format("{} is not a JSON object", what));
  return std::move(parsed->get_object());
}

// A field DingTalk writes as a string in one place and as a number in another.
std::string StringOrNumber(const JsonObject& obj, std::string_view key) {
  const Json* value = obj.if_contains(key);
  if (value == nullptr) return {};
  if (value->is_string()) return std::string(value->get_string());
  if (value->is_int64()) return std::to_string(value->get_int64());
  if (value->is_uint64()) return std::to_string(value->get_uint64());
  return {};
}

std::int64_t MillisField(const JsonObject& obj, std::string_view key) {
  const std::string text = StringOrNumber(obj, key);
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() ? value : 0;
}

std::string Bounded(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

// Removes every "@<robot_name>" and the space DingTalk puts where the mention was.
std::string WithoutMention(std::string text, std::string_view robot_name) {
  if (!robot_name.empty()) {
    std::string mention = "@";  // not "@" + string: GCC 12's false -Wrestrict (bug 105329)
    mention += robot_name;
    for (std::size_t at = text.find(mention); at != std::string::npos;
         at = text.find(mention, at)) {
      text.erase(at, mention.size());
    }
  }
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  text.erase(0, first);
  const std::size_t last = text.find_last_not_of(" \t\r\n");
  text.erase(last + 1);
  return text;
}

void AppendMedia(domain::MessageChain& chain, std::vector<PendingMedia>& media,
                 std::string_view download_code, std::string_view file_name = {}) {
  if (download_code.empty() || download_code.size() > kMaxUrlBytes ||
      media.size() >= kMaxMediaPerMessage) {
    return;
  }
  const bool file = !file_name.empty();
  media.push_back({chain.size(), std::string(download_code), file});
  MessageElement element;
  element.type = file ? ElementType::kFile : ElementType::kImage;
  if (file) element.name = Bounded(file_name, 256);
  chain.push_back(std::move(element));
}

std::string QuotePlus(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

util::JsonObject AtObject(const Rendered& rendered) {
  util::JsonArray ids;
  for (const auto& id : rendered.at_user_ids) ids.emplace_back(id);
  return {{"atUserIds", std::move(ids)}, {"isAtAll", rendered.at_all}};
}

}  // namespace

// ---- Stream mode ----

std::string EncodeOpenConnection(std::string_view client_id, std::string_view client_secret) {
  util::JsonArray subscriptions;
  subscriptions.push_back(JsonObject{{"type", "EVENT"}, {"topic", "*"}});
  subscriptions.push_back(JsonObject{{"type", "CALLBACK"}, {"topic", kBotMessageTopic}});
  JsonObject body{{"clientId", client_id},
                  {"clientSecret", client_secret},
                  {"subscriptions", std::move(subscriptions)},
                  {"ua", "switchboard-dingtalk/1.0"},
                  {"localIp", ""}};
  return util::SerializeJson(body);
}

util::Result<Connection> DecodeConnection(std::string_view body) {
  auto obj = ParseObject(body, "the gateway's connections/open answer");
  if (!obj) return util::Fail(ErrorCode::kUpstreamFailed, obj.error().message);
  Connection connection{std::string(StringOr(*obj, "endpoint")),
                        std::string(StringOr(*obj, "ticket"))};
  if (connection.ticket.empty() || connection.ticket.size() > kMaxUrlBytes) {
    return util::Fail(ErrorCode::kUpstreamFailed, "the gateway's answer has no ticket");
  }
  if (!IsWsUrl(connection.endpoint)) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "the gateway's answer has no ws:// or wss:// endpoint");
  }
  return connection;
}

std::string StreamUrl(const Connection& connection) {
  const char joint = connection.endpoint.find('?') == std::string::npos ? '?' : '&';
  return connection.endpoint + joint + "ticket=" + QuotePlus(connection.ticket);
}

util::Result<StreamFrame> DecodeFrame(std::string_view text) {
  auto obj = ParseObject(text, "stream frame");
  if (!obj) return tl::unexpected(obj.error());
  StreamFrame frame;
  frame.type = std::string(StringOr(*obj, "type"));
  if (frame.type.empty()) return Invalid("stream frame: type is required");
  const JsonObject* headers = ObjectField(*obj, "headers");
  if (headers == nullptr) return Invalid("stream frame: headers must be an object");
  frame.topic = std::string(StringOr(*headers, "topic"));
  frame.message_id = StringOrNumber(*headers, "messageId");
  if (frame.message_id.size() > kMaxIdBytes) {
    return Invalid("stream frame: headers.messageId is too long");
  }
  if (const Json* data = obj->if_contains("data"); data != nullptr && !data->is_null()) {
    if (!data->is_string()) return Invalid("stream frame: data must be a string");
    frame.data = std::string(data->get_string());
  }
  return frame;
}

std::string EncodeAck(std::string_view message_id, std::string_view data_json, int code,
                      std::string_view message) {
  JsonObject ack{
      {"code", code},
      {"headers", JsonObject{{"messageId", message_id}, {"contentType", "application/json"}}},
      {"message", message},
      {"data", data_json}};
  return util::SerializeJson(ack);
}

std::string AckData(const StreamFrame& frame) {
  if (frame.type == "CALLBACK") return R"({"response":"OK"})";
  return frame.data.empty() ? "{}" : frame.data;
}

// ---- HTTP callback mode ----

std::string CallbackSign(std::string_view app_secret, std::string_view timestamp) {
  return common::HmacSha256Base64(app_secret,
                                  std::string(timestamp) + "\n" + std::string(app_secret));
}

bool VerifyCallback(std::string_view app_secret, std::string_view timestamp, std::string_view sign,
                    std::int64_t now_ms) {
  if (app_secret.empty() || sign.empty() || timestamp.empty() || timestamp.size() > 15) {
    return false;
  }
  std::int64_t ms = 0;
  auto [ptr, ec] = std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), ms);
  if (ec != std::errc() || ptr != timestamp.data() + timestamp.size() || ms < 0) return false;
  constexpr std::int64_t kHourMs = 3'600'000;
  if (ms > now_ms + kHourMs || ms < now_ms - kHourMs) return false;
  return util::ConstantTimeEquals(CallbackSign(app_secret, timestamp), sign);
}

// ---- Robot messages ----

util::Result<BotMessage> DecodeBotMessage(std::string_view data, std::string_view bot_account_id,
                                          std::string_view robot_name) {
  auto parsed = ParseObject(data, "robot message");
  if (!parsed) return tl::unexpected(parsed.error());
  const JsonObject& m = *parsed;
  BotMessage out;
  out.msg_id = std::string(StringOr(m, "msgId"));
  if (out.msg_id.empty()) return Invalid("robot message: msgId is required");
  if (out.msg_id.size() > kMaxIdBytes) return Invalid("robot message: msgId is too long");
  const std::string type = StringOrNumber(m, "conversationType");
  if (type != "1" && type != "2") {
    return Invalid("robot message: conversationType must be \"1\" or \"2\"");
  }
  const bool group = type == "2";
  out.conversation_id = std::string(StringOr(m, "conversationId"));
  std::string sender(StringOr(m, "senderStaffId"));
  if (sender.empty()) sender = std::string(StringOr(m, "senderId"));
  if (sender.empty()) return Invalid("robot message: senderStaffId or senderId is required");
  if (sender.size() > kMaxIdBytes || out.conversation_id.size() > kMaxIdBytes) {
    return Invalid("robot message: an id is too long");
  }
  if (group && out.conversation_id.empty()) {
    return Invalid("robot message: conversationId is required in a group");
  }
  if (std::string_view hook = StringOr(m, "sessionWebhook"); IsHttpUrl(hook)) {
    out.session_webhook = std::string(hook);
    out.session_webhook_expires_ms = MillisField(m, "sessionWebhookExpiredTime");
  }
  const bool mentioned = common::IsTrue(m, "isInAtList");
  if (group && !mentioned) {
    out.skipped = "a group message that does not mention the bot";
    return out;
  }

  domain::ReceivedMessage message;
  message.chat_type = group ? domain::TargetType::kGroup : domain::TargetType::kPerson;
  message.chat_id = group ? out.conversation_id : sender;
  message.sender_id = sender;
  message.sender_name = Bounded(StringOr(m, "senderNick"), 256);
  message.message_id = out.msg_id;
  MessageElement source;
  source.type = ElementType::kSource;
  source.id = out.msg_id;
  message.chain.push_back(std::move(source));
  if (group && !bot_account_id.empty())
    common::AppendAt(message.chain, std::string(bot_account_id));
  const std::size_t before = message.chain.size();

  const std::string_view msgtype = StringOr(m, "msgtype");
  const JsonObject* content = ObjectField(m, "content");
  if (msgtype == "text") {
    const JsonObject* text = ObjectField(m, "text");
    if (text == nullptr) return Invalid("robot message: text must be an object");
    AppendPlain(message.chain, WithoutMention(std::string(StringOr(*text, "content")), robot_name));
  } else if (msgtype == "richText") {
    const util::JsonArray* items = content ? ArrayField(*content, "richText") : nullptr;
    if (items == nullptr) return Invalid("robot message: content.richText must be an array");
    for (const Json& value : *items) {
      if (!value.is_object()) continue;
      const JsonObject& item = value.get_object();
      if (const auto* text = StringField(item, "text")) {
        const std::string cleaned =
            WithoutMention(std::string(text->data(), text->size()), robot_name);
        if (cleaned.empty()) continue;
        if (message.chain.size() > before && message.chain.back().type == ElementType::kPlain) {
          AppendPlain(message.chain, "\n");
        }
        AppendPlain(message.chain, cleaned);
      } else if (StringOr(item, "type") == "picture") {
        AppendMedia(message.chain, out.media, StringOr(item, "downloadCode"));
      }
    }
  } else if (msgtype == "picture") {
    if (content == nullptr) return Invalid("robot message: content must be an object");
    AppendMedia(message.chain, out.media, StringOr(*content, "downloadCode"));
  } else if (msgtype == "file") {
    if (content == nullptr) return Invalid("robot message: content must be an object");
    std::string_view name = StringOr(*content, "fileName");
    AppendMedia(message.chain, out.media, StringOr(*content, "downloadCode"),
                name.empty() ? std::string_view("file") : name);
  } else if (msgtype == "audio") {
    if (content != nullptr) {
      AppendPlain(message.chain,
                  WithoutMention(std::string(StringOr(*content, "recognition")), ""));
    }
    if (message.chain.size() == before) {
      out.skipped = "a voice message without a transcript";
      return out;
    }
  } else {
    out.skipped = fmt::format("a {} message (not taken)", Bounded(msgtype, 32));
    return out;
  }
  if (message.chain.size() == before) {
    out.skipped = "a message with nothing in it";
    return out;
  }
  out.message = std::move(message);
  return out;
}

// ---- OpenAPI answers ----

util::Result<AccessToken> DecodeAccessToken(std::string_view body) {
  auto obj = ParseObject(body, "the accessToken answer");
  if (!obj) return util::Fail(ErrorCode::kUpstreamFailed, obj.error().message);
  AccessToken token{std::string(StringOr(*obj, "accessToken")), 0};
  if (token.token.empty() || token.token.size() > 1024) {
    return util::Fail(ErrorCode::kUpstreamFailed, "the accessToken answer has no accessToken");
  }
  token.expires_in_seconds = MillisField(*obj, "expireIn");
  if (token.expires_in_seconds <= 0) token.expires_in_seconds = 7200;
  return token;
}

util::Result<std::string> DecodeDownloadUrl(std::string_view body) {
  auto obj = ParseObject(body, "the messageFiles/download answer");
  if (!obj) return util::Fail(ErrorCode::kUpstreamFailed, obj.error().message);
  const std::string_view url = StringOr(*obj, "downloadUrl");
  if (!IsHttpUrl(url)) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "the messageFiles/download answer has no http(s) downloadUrl");
  }
  return std::string(url);
}

std::string DescribeError(int http_status, std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    const JsonObject& obj = parsed->get_object();
    std::string code = StringOrNumber(obj, "code");
    std::string message(StringOr(obj, "message"));
    if (code.empty() && message.empty()) {
      code = StringOrNumber(obj, "errcode");
      message = std::string(StringOr(obj, "errmsg"));
    }
    if (!code.empty() || !message.empty()) {
      return fmt::format("HTTP {}: {} {}", http_status, Bounded(code, 64), Bounded(message, 300));
    }
  }
  return fmt::format("HTTP {}", http_status);
}

bool IsTokenRejected(int http_status, std::string_view body) {
  if (http_status == 401) return true;
  auto parsed = util::ParseJson(body);
  return parsed && parsed->is_object() &&
         StringOr(parsed->get_object(), "code") == "InvalidAuthentication";
}

bool WebhookAccepted(int http_status, std::string_view body) {
  if (http_status != 200) return false;
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return true;  // 200 without a JSON body
  const Json* errcode = parsed->get_object().if_contains("errcode");
  if (errcode == nullptr) return true;
  return (errcode->is_int64() && errcode->get_int64() == 0) ||
         (errcode->is_uint64() && errcode->get_uint64() == 0) ||
         (errcode->is_string() && errcode->get_string() == "0");
}

std::string ProcessQueryKey(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return {};
  return Bounded(StringOr(parsed->get_object(), "processQueryKey"), kMaxIdBytes);
}

// ---- Outgoing ----

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (message.target_id.empty() || message.target_id.size() > kMaxIdBytes ||
      std::any_of(message.target_id.begin(), message.target_id.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
    return Invalid(
        "target_id must be a DingTalk userId (person) or openConversationId (group) of at most "
        "256 bytes");
  }
  bool shows = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    switch (e.type) {
      case ElementType::kPlain:
        if (!e.text.empty()) shows = true;
        break;
      case ElementType::kAt:
        if (e.target.empty())
          return Invalid(fmt::format("message_chain[{}]: At needs a target", i));
        shows = true;
        break;
      case ElementType::kAtAll:
        shows = true;
        break;
      case ElementType::kImage:
      case ElementType::kFile:
        if (!IsHttpUrl(e.url)) {
          return Invalid(fmt::format(
              "message_chain[{}]: {} needs an http(s) url (DingTalk media upload is not supported)",
              i, domain::ElementTypeName(e.type)));
        }
        shows = true;
        break;
      case ElementType::kVoice:
        return Invalid(fmt::format("message_chain[{}]: DingTalk robots cannot send Voice", i));
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!shows) return Invalid("message_chain has nothing DingTalk can show");
  return {};
}

Rendered Render(const domain::OutgoingMessage& message, bool markdown) {
  Rendered rendered;
  rendered.markdown = markdown;
  std::string text;
  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
        text += e.text;
        break;
      case ElementType::kAt:
        text += "@" + e.target;
        if (std::find(rendered.at_user_ids.begin(), rendered.at_user_ids.end(), e.target) ==
            rendered.at_user_ids.end()) {
          rendered.at_user_ids.push_back(e.target);
        }
        break;
      case ElementType::kAtAll:
        text += "@all";
        rendered.at_all = true;
        break;
      case ElementType::kImage:
        if (!text.empty() && text.back() != '\n') text += '\n';
        text += markdown ? "![image](" + e.url + ")\n" : e.url + "\n";
        break;
      case ElementType::kFile:
        if (!text.empty() && text.back() != '\n') text += '\n';
        text += (e.name.empty() ? std::string("file") : e.name) + ": " + e.url + "\n";
        break;
      case ElementType::kVoice:
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  rendered.pieces =
      common::SplitKeepingSeparator(text, kMaxTextCodePoints, common::TextUnit::kCodePoint);
  return rendered;
}

std::string MarkdownTitle(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.front() == ' ' || line.front() == '#')) line.remove_prefix(1);
  std::string title;
  std::size_t count = 0;
  for (std::size_t i = 0; i < line.size() && count < 30; ++count) {
    char32_t cp = 0;
    const std::size_t n = common::NextCodePoint(line, i, cp);
    title.append(line.substr(i, n));
    i += n;
  }
  return title.empty() ? "message" : title;
}

std::string EncodeWebhookReply(const Rendered& rendered, std::size_t piece) {
  const std::string& text = rendered.pieces.at(piece);
  JsonObject body;
  if (rendered.markdown) {
    body["msgtype"] = "markdown";
    body["markdown"] = JsonObject{{"title", MarkdownTitle(text)}, {"text", text}};
  } else {
    body["msgtype"] = "text";
    body["text"] = JsonObject{{"content", text}};
  }
  body["at"] = AtObject(rendered);
  return util::SerializeJson(body);
}

std::string EncodeRobotSend(const Rendered& rendered, std::size_t piece,
                            std::string_view robot_code, domain::TargetType target_type,
                            std::string_view target_id) {
  const std::string& text = rendered.pieces.at(piece);
  JsonObject param;
  if (rendered.markdown) {
    param = {{"title", MarkdownTitle(text)}, {"text", text}};
  } else {
    param = {{"content", text}};
  }
  JsonObject body{{"robotCode", robot_code},
                  {"msgKey", rendered.markdown ? "sampleMarkdown" : "sampleText"},
                  {"msgParam", util::SerializeJson(param)}};
  if (target_type == domain::TargetType::kPerson) {
    body["userIds"] = util::JsonArray{Json(target_id)};
  } else {
    body["openConversationId"] = target_id;
  }
  return util::SerializeJson(body);
}

}  // namespace sb::platforms::dingtalk
