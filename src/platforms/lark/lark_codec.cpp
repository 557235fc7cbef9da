// The inbound half of the Lark codec: envelopes, message events and the Open API's answers.
// The outbound half (message contents, uploads) is lark_outgoing.cpp.
#include "platforms/lark/lark_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/url/parse.hpp>
#include <charconv>
#include <utility>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/lark_crypto.hpp"

namespace sb::platforms::lark {
namespace {

using common::AppendAt;
using common::AppendPlain;
using common::ArrayField;
using common::IntField;
using common::Invalid;
using common::ObjectField;
using common::StringField;
using common::StringOr;
using domain::ElementType;
using util::ErrorCode;
using util::JsonObject;

constexpr std::size_t kMaxDescribed = 300;

std::string Bounded(std::string_view text) {
  if (text.size() <= kMaxDescribed) return std::string(text);
  std::size_t cut = kMaxDescribed;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

util::Result<JsonObject> ParseObject(std::string_view text, std::string_view what) {
  auto json = util::ParseJson(text);
  if (!json) return Invalid(fmt::format("{} is not JSON", what));
  if (!json->is_object()) return Invalid(fmt::format("{} is not a JSON object", what));
  return std::move(json->as_object());
}

bool PlausibleId(std::string_view id) { return !id.empty() && id.size() <= kMaxIdBytes; }

void AppendElement(domain::MessageChain& chain, ElementType type, std::string id = {}) {
  domain::MessageElement e;
  e.type = type;
  e.id = std::move(id);
  chain.push_back(std::move(e));
}

// The mention keys of a message ("@_user_1") and whom they name.
struct Mention {
  std::string key;
  std::string open_id;
  std::string name;
};

util::Result<std::vector<Mention>> ReadMentions(const JsonObject& message) {
  std::vector<Mention> out;
  const util::JsonArray* mentions = ArrayField(message, "mentions");
  if (mentions == nullptr) return out;
  if (mentions->size() > kMaxMentions) return Invalid("message.mentions: too many");
  for (const auto& m : *mentions) {
    if (!m.is_object()) return Invalid("message.mentions: not an object");
    Mention mention;
    mention.key = std::string(StringOr(m.as_object(), "key"));
    mention.name = std::string(StringOr(m.as_object(), "name"));
    if (const JsonObject* id = ObjectField(m.as_object(), "id")) {
      mention.open_id = std::string(StringOr(*id, "open_id"));
    } else if (const auto* id_text = StringField(m.as_object(), "id")) {
      mention.open_id = std::string(*id_text);  // the long connection's 1.0-style form
    }
    if (mention.key.empty()) continue;
    out.push_back(std::move(mention));
  }
  // Longest keys first, so "@_user_10" is not read as "@_user_1" followed by "0".
  std::sort(out.begin(), out.end(),
            [](const Mention& a, const Mention& b) { return a.key.size() > b.key.size(); });
  return out;
}

// Text with its mention keys turned into At / AtAll elements.
void AppendTextWithMentions(domain::MessageChain& chain, std::string_view text,
                            const std::vector<Mention>& mentions) {
  std::size_t i = 0;
  std::size_t plain_from = 0;
  while (i < text.size()) {
    if (text[i] != '@') {
      ++i;
      continue;
    }
    const std::string_view rest = text.substr(i);
    const Mention* hit = nullptr;
    for (const Mention& m : mentions) {
      if (rest.substr(0, m.key.size()) == m.key) {
        hit = &m;
        break;
      }
    }
    const bool all = hit == nullptr && rest.substr(0, 5) == "@_all";
    if (hit == nullptr && !all) {
      ++i;
      continue;
    }
    AppendPlain(chain, text.substr(plain_from, i - plain_from));
    if (all) {
      AppendElement(chain, ElementType::kAtAll);
      i += 5;
    } else if (!hit->open_id.empty()) {
      AppendAt(chain, hit->open_id);
      i += hit->key.size();
    } else {
      // A mention without an open_id (an external user): keep the name as text.
      AppendPlain(chain, "@" + hit->name);
      i += hit->key.size();
    }
    plain_from = i;
  }
  AppendPlain(chain, text.substr(plain_from));
}

// A post's content: {"title","content":[[{tag...}]]}, sometimes under a language key.
const JsonObject* PostBody(const JsonObject& content) {
  if (ArrayField(content, "content") != nullptr) return &content;
  for (const auto& [key, value] : content) {
    if (value.is_object() && ArrayField(value.as_object(), "content") != nullptr) {
      return &value.as_object();
    }
  }
  return nullptr;
}

util::Result<void> AppendPost(DecodedMessage& out, const JsonObject& content,
                              const std::vector<Mention>& mentions) {
  const JsonObject* post = PostBody(content);
  if (post == nullptr) return Invalid("post content has no content array");
  domain::MessageChain& chain = out.message->chain;
  const std::string_view title = StringOr(*post, "title");
  bool first_line = true;
  if (!title.empty()) {
    AppendPlain(chain, title);
    first_line = false;
  }
  for (const auto& paragraph : *ArrayField(*post, "content")) {
    if (!paragraph.is_array()) return Invalid("post content: a paragraph is not an array");
    if (!first_line) AppendPlain(chain, "\n");
    first_line = false;
    for (const auto& node : paragraph.as_array()) {
      if (!node.is_object()) return Invalid("post content: an element is not an object");
      const JsonObject& e = node.as_object();
      const std::string_view tag = StringOr(e, "tag");
      if (tag == "text" || tag == "md" || tag == "code_block") {
        AppendTextWithMentions(chain, StringOr(e, "text"), mentions);
      } else if (tag == "a") {
        AppendPlain(chain, StringOr(e, "text"));
        const std::string_view href = StringOr(e, "href");
        if (!href.empty()) AppendPlain(chain, fmt::format(" ({})", href));
      } else if (tag == "at") {
        const std::string_view user = StringOr(e, "user_id");
        if (user == "all" || user == "@_all") {
          AppendElement(chain, ElementType::kAtAll);
        } else if (user.substr(0, 3) == "ou_") {
          AppendAt(chain, std::string(user));
        } else {
          AppendTextWithMentions(chain, user, mentions);
        }
      } else if (tag == "img") {
        const std::string_view key = StringOr(e, "image_key");
        if (!PlausibleId(key)) return Invalid("post content: img without an image_key");
        if (out.images.size() >= kMaxImagesPerMessage) continue;
        domain::MessageElement image;
        image.type = ElementType::kImage;
        chain.push_back(std::move(image));
        out.images.push_back({chain.size() - 1, std::string(key)});
      } else if (tag == "emotion") {
        const std::string_view emoji = StringOr(e, "emoji_type");
        if (!emoji.empty()) AppendPlain(chain, fmt::format("[{}]", emoji));
      }
    }
  }
  return util::Ok();
}

int ConfigInt(const JsonObject& obj, std::string_view key, int fallback) {
  auto v = IntField(obj, key);
  if (!v || *v <= 0 || *v > 86'400) return fallback;
  return static_cast<int>(*v);
}

}  // namespace

util::Result<Envelope> DecodeEnvelope(std::string_view body, std::string_view encrypt_key) {
  if (body.size() > kMaxEventBytes) return Invalid("the event is too large");
  auto outer = ParseObject(body, "the body");
  if (!outer) return tl::unexpected(outer.error());
  JsonObject obj;
  if (const auto* encrypted = StringField(*outer, "encrypt")) {
    if (encrypt_key.empty()) {
      return util::Fail(ErrorCode::kUnauthenticated,
                        "an encrypted event arrived but no encrypt-key is configured");
    }
    auto plain = common::LarkDecrypt(encrypt_key, *encrypted);
    if (!plain) {
      return util::Fail(ErrorCode::kUnauthenticated,
                        "the event does not decrypt with the configured encrypt-key");
    }
    auto inner = ParseObject(*plain, "the decrypted event");
    if (!inner) return tl::unexpected(inner.error());
    obj = std::move(*inner);
  } else if (!encrypt_key.empty()) {
    return util::Fail(ErrorCode::kUnauthenticated,
                      "the event is not encrypted though an encrypt-key is configured");
  } else {
    obj = std::move(*outer);
  }

  Envelope envelope;
  if (StringOr(obj, "type") == "url_verification") {
    envelope.kind = Envelope::Kind::kChallenge;
    envelope.challenge = std::string(StringOr(obj, "challenge"));
    envelope.token = std::string(StringOr(obj, "token"));
    if (envelope.challenge.empty()) return Invalid("url_verification without a challenge");
    return envelope;
  }
  if (const JsonObject* header = ObjectField(obj, "header")) {  // schema 2.0
    envelope.event_id = std::string(StringOr(*header, "event_id"));
    envelope.event_type = std::string(StringOr(*header, "event_type"));
    envelope.token = std::string(StringOr(*header, "token"));
  } else {  // schema 1.0
    envelope.event_id = std::string(StringOr(obj, "uuid"));
    envelope.token = std::string(StringOr(obj, "token"));
    if (const JsonObject* event = ObjectField(obj, "event")) {
      envelope.event_type = std::string(StringOr(*event, "type"));
    }
  }
  if (envelope.event_type.empty()) return Invalid("the event has no header.event_type");
  if (envelope.event_id.size() > kMaxIdBytes) return Invalid("header.event_id is too long");
  const JsonObject* event = ObjectField(obj, "event");
  if (event == nullptr) return Invalid("the event has no event object");
  envelope.event = *event;
  return envelope;
}

util::Result<DecodedMessage> DecodeMessageEvent(const JsonObject& event) {
  const JsonObject* message = ObjectField(event, "message");
  if (message == nullptr) return Invalid("event.message is required");
  const JsonObject* sender = ObjectField(event, "sender");
  if (sender == nullptr) return Invalid("event.sender is required");
  DecodedMessage out;
  const std::string_view sender_type = StringOr(*sender, "sender_type");
  if (sender_type == "app" || sender_type == "bot") {
    out.skipped = "sent by an app";
    return out;
  }
  const JsonObject* sender_id = ObjectField(*sender, "sender_id");
  const std::string_view open_id = sender_id ? StringOr(*sender_id, "open_id") : "";
  if (!PlausibleId(open_id)) return Invalid("event.sender.sender_id.open_id is required");
  const std::string_view message_id = StringOr(*message, "message_id");
  if (!PlausibleId(message_id)) return Invalid("event.message.message_id is required");
  const std::string_view chat_type = StringOr(*message, "chat_type");
  const std::string_view chat_id = StringOr(*message, "chat_id");

  domain::ReceivedMessage received;
  if (chat_type == "p2p") {
    received.chat_type = domain::TargetType::kPerson;
    received.chat_id = std::string(open_id);
  } else if (chat_type == "group") {
    if (!PlausibleId(chat_id)) return Invalid("event.message.chat_id is required in a group");
    received.chat_type = domain::TargetType::kGroup;
    received.chat_id = std::string(chat_id);
  } else {
    out.skipped = fmt::format("chat_type \"{}\" is not taken", Bounded(chat_type));
    return out;
  }
  received.sender_id = std::string(open_id);
  received.message_id = std::string(message_id);
  AppendElement(received.chain, ElementType::kSource, std::string(message_id));
  const std::string_view parent = StringOr(*message, "parent_id");
  if (PlausibleId(parent)) AppendElement(received.chain, ElementType::kQuote, std::string(parent));

  auto mentions = ReadMentions(*message);
  if (!mentions) return tl::unexpected(mentions.error());
  const std::string_view type = StringOr(*message, "message_type");
  const auto* content_text = StringField(*message, "content");
  if (content_text == nullptr) return Invalid("event.message.content must be a JSON string");
  auto content = ParseObject(*content_text, "event.message.content");
  if (!content) return tl::unexpected(content.error());
  out.message = std::move(received);
  if (type == "text") {
    AppendTextWithMentions(out.message->chain, StringOr(*content, "text"), *mentions);
  } else if (type == "post") {
    if (auto posted = AppendPost(out, *content, *mentions); !posted) {
      return tl::unexpected(posted.error());
    }
  } else if (type == "image") {
    const std::string_view key = StringOr(*content, "image_key");
    if (!PlausibleId(key)) return Invalid("an image message without an image_key");
    domain::MessageElement image;
    image.type = ElementType::kImage;
    out.message->chain.push_back(std::move(image));
    out.images.push_back({out.message->chain.size() - 1, std::string(key)});
  } else {
    out.message.reset();
    out.skipped = fmt::format("message_type \"{}\" is not taken", Bounded(type));
    return out;
  }
  const bool empty = std::none_of(
      out.message->chain.begin(), out.message->chain.end(), [](const domain::MessageElement& e) {
        return e.type != ElementType::kSource && e.type != ElementType::kQuote;
      });
  if (empty) {
    out.message.reset();
    out.images.clear();
    out.skipped = "the message has no content";
  }
  return out;
}

QuotedMessage DecodeQuotedMessage(const JsonObject& data) {
  QuotedMessage out;
  const util::JsonArray* items = ArrayField(data, "items");
  if (items == nullptr || items->empty() || !(*items)[0].is_object()) return out;
  const JsonObject& item = (*items)[0].as_object();
  if (const JsonObject* sender = ObjectField(item, "sender")) {
    if (const std::string_view id = StringOr(*sender, "id"); PlausibleId(id)) {
      out.sender_id = std::string(id);
    }
  }
  const std::string_view type = StringOr(item, "msg_type");
  const JsonObject* body = ObjectField(item, "body");
  const auto* content_text = body ? StringField(*body, "content") : nullptr;
  auto content = content_text ? ParseObject(*content_text, "body.content")
                              : util::Result<JsonObject>(Invalid("no content"));
  auto mentions = ReadMentions(item);
  std::vector<Mention> none;
  DecodedMessage decoded;
  decoded.message.emplace();
  domain::MessageChain& chain = decoded.message->chain;
  if (type == "text") {
    if (content) {
      AppendTextWithMentions(chain, StringOr(*content, "text"), mentions ? *mentions : none);
    }
  } else if (type == "post") {
    if (!content || !AppendPost(decoded, *content, mentions ? *mentions : none)) chain.clear();
  } else if (type == "image") {
    AppendElement(chain, ElementType::kImage);
  } else if (!type.empty()) {
    AppendPlain(chain, fmt::format("[{}]", Bounded(type)));
  }
  out.text = domain::MakeQuote({}, domain::QuotableText(chain)).text;
  return out;
}

util::Result<ApiAnswer> DecodeApiAnswer(int http_status, std::string_view body) {
  auto obj = util::ParseJson(body);
  if (!obj || !obj->is_object() || !IntField(obj->as_object(), "code")) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("Lark answered HTTP {} without a code", http_status));
  }
  ApiAnswer answer;
  answer.code = *IntField(obj->as_object(), "code");
  answer.msg = Bounded(StringOr(obj->as_object(), "msg"));
  if (const JsonObject* data = ObjectField(obj->as_object(), "data")) answer.data = *data;
  return answer;
}

bool IsTokenError(std::int64_t code) {
  return code == 99991661 || code == 99991663 || code == 99991664 || code == 99991668 ||
         code == 99991671 || code == 99991677;
}

bool IsRateLimited(int http_status, std::int64_t code) {
  return http_status == 429 || code == 99991400;
}

std::string DescribeAnswer(int http_status, const ApiAnswer& answer) {
  if (answer.code == 0) return fmt::format("HTTP {}", http_status);
  return Bounded(fmt::format("code {}: {}", answer.code, answer.msg));
}

util::Result<TenantToken> DecodeTenantToken(int http_status, std::string_view body) {
  auto obj = util::ParseJson(body);
  if (!obj || !obj->is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("the token call answered HTTP {} without JSON", http_status));
  }
  const JsonObject& o = obj->as_object();
  const auto code = IntField(o, "code");
  if (!code || *code != 0) {
    util::Error error{ErrorCode::kUpstreamAuth,
                      fmt::format("Lark refused the app credentials (code {}: {})",
                                  code.value_or(-1), Bounded(StringOr(o, "msg")))};
    error.final = true;
    return tl::unexpected(error);
  }
  TenantToken token;
  token.token = std::string(StringOr(o, "tenant_access_token"));
  token.expire_seconds = IntField(o, "expire").value_or(0);
  if (token.token.empty() || token.expire_seconds <= 0) {
    return util::Fail(ErrorCode::kUpstreamFailed, "the token answer has no token or expire");
  }
  return token;
}

util::Result<BotInfo> DecodeBotInfo(int http_status, std::string_view body) {
  auto answer = DecodeApiAnswer(http_status, body);
  if (!answer) return tl::unexpected(answer.error());
  if (answer->code != 0) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "GET /open-apis/bot/v3/info failed: " + DescribeAnswer(http_status, *answer));
  }
  auto obj = util::ParseJson(body);
  const JsonObject* bot = ObjectField(obj->as_object(), "bot");
  if (bot == nullptr) bot = ObjectField(answer->data, "bot");
  BotInfo info;
  if (bot != nullptr) {
    info.open_id = std::string(StringOr(*bot, "open_id"));
    info.app_name = std::string(StringOr(*bot, "app_name"));
  }
  if (!PlausibleId(info.open_id)) {
    return util::Fail(ErrorCode::kUpstreamFailed, "GET /open-apis/bot/v3/info has no bot.open_id");
  }
  return info;
}

util::Result<WsEndpoint> DecodeWsEndpoint(int http_status, std::string_view body) {
  auto answer = DecodeApiAnswer(http_status, body);
  if (!answer) return tl::unexpected(answer.error());
  if (answer->code == 1 || answer->code == 1000040343) {
    return util::Fail(ErrorCode::kUpstreamFailed, "Lark's long-connection endpoint is busy: " +
                                                      DescribeAnswer(http_status, *answer));
  }
  if (answer->code != 0) {
    util::Error error{ErrorCode::kUpstreamAuth,
                      "Lark refused the long connection: " + DescribeAnswer(http_status, *answer)};
    error.final = true;
    return tl::unexpected(error);
  }
  WsEndpoint endpoint;
  endpoint.url = std::string(StringOr(answer->data, "URL"));
  auto url = boost::urls::parse_uri(endpoint.url);
  if (!url || (url->scheme() != "ws" && url->scheme() != "wss")) {
    return util::Fail(ErrorCode::kUpstreamFailed, "the long-connection endpoint has no ws URL");
  }
  for (const auto& param : url->params()) {
    if (param.key == "service_id") {
      int id = 0;
      auto [end, ec] =
          std::from_chars(param.value.data(), param.value.data() + param.value.size(), id);
      if (ec == std::errc() && end == param.value.data() + param.value.size()) {
        endpoint.service_id = id;
      }
    } else if (param.key == "device_id") {
      endpoint.device_id = param.value;
    }
  }
  if (const JsonObject* config = ObjectField(answer->data, "ClientConfig")) {
    ApplyClientConfig(util::SerializeJson(*config), endpoint.config);
  }
  return endpoint;
}

void ApplyClientConfig(std::string_view json, ClientConfig& config) {
  auto obj = util::ParseJson(json);
  if (!obj || !obj->is_object()) return;
  const JsonObject& o = obj->as_object();
  if (auto v = IntField(o, "ReconnectCount"); v && *v != 0) {
    config.reconnect_count = static_cast<int>(std::clamp<std::int64_t>(*v, -1, 1'000'000));
  }
  config.reconnect_interval_s = ConfigInt(o, "ReconnectInterval", config.reconnect_interval_s);
  config.reconnect_nonce_s = ConfigInt(o, "ReconnectNonce", config.reconnect_nonce_s);
  config.ping_interval_s = ConfigInt(o, "PingInterval", config.ping_interval_s);
}

bool IsPlainId(std::string_view id) {
  return !id.empty() && id.size() <= kMaxIdBytes && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

}  // namespace sb::platforms::lark
