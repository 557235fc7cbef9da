#include "platforms/line/line_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/text_units.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::line {
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

// A string field that must be there, bounded.
util::Result<std::string> RequiredId(const JsonObject& obj, std::string_view key,
                                     std::string_view where) {
  const auto* s = StringField(obj, key);
  if (s == nullptr || s->empty()) return Invalid(fmt::format("{}{} is required", where, key));
  if (s->size() > kMaxIdBytes) {
    return Invalid(fmt::format("{}{} must be at most {} bytes", where, key, kMaxIdBytes));
  }
  return std::string(s->data(), s->size());
}

struct Mention {
  std::size_t begin = 0;  // byte offsets into the text
  std::size_t end = 0;
  MessageElement element;
};

// The mentionees of a text message that can be placed, in text order, without overlaps.
std::vector<Mention> ReadMentions(const JsonObject& message, std::string_view text,
                                  std::string_view bot_user_id) {
  std::vector<Mention> mentions;
  const JsonObject* mention = ObjectField(message, "mention");
  const util::JsonArray* list = mention ? ArrayField(*mention, "mentionees") : nullptr;
  if (list == nullptr) return mentions;
  for (const Json& value : *list) {
    if (!value.is_object() || mentions.size() >= 100) continue;
    const JsonObject& m = value.get_object();
    const auto index = common::IntField(m, "index");
    const auto length = common::IntField(m, "length");
    if (!index || !length || *index < 0 || *length <= 0) continue;
    const std::size_t begin = common::Utf16ToByteOffset(text, static_cast<std::size_t>(*index));
    const std::size_t end =
        common::Utf16ToByteOffset(text, static_cast<std::size_t>(*index + *length));
    if (begin == std::string_view::npos || end == std::string_view::npos) continue;
    Mention placed{begin, end, {}};
    const std::string_view type = StringOr(m, "type");
    const std::string_view user = StringOr(m, "userId");
    if (type == "all") {
      placed.element.type = ElementType::kAtAll;
    } else if (common::IsTrue(m, "isSelf") || (!user.empty() && user == bot_user_id)) {
      placed.element.type = ElementType::kAt;
      placed.element.target = std::string(bot_user_id);
    } else if (!user.empty() && user.size() <= kMaxIdBytes) {
      placed.element.type = ElementType::kAt;
      placed.element.target = std::string(user);
    } else {
      continue;  // a user who did not consent to sharing their id: leave the text as it is
    }
    if (placed.element.type == ElementType::kAt && placed.element.target.empty()) continue;
    mentions.push_back(std::move(placed));
  }
  std::sort(mentions.begin(), mentions.end(),
            [](const Mention& a, const Mention& b) { return a.begin < b.begin; });
  std::vector<Mention> kept;
  for (auto& m : mentions) {
    if (!kept.empty() && m.begin < kept.back().end) continue;
    kept.push_back(std::move(m));
  }
  return kept;
}

bool IsHttpsUrl(std::string_view url) {
  return url.starts_with("https://") && url.size() > 8 &&
         common::TextLength(url, common::TextUnit::kUtf16) <= kMaxUrlChars;
}

bool PlausibleTarget(std::string_view id) {
  if (id.size() < 2 || id.size() > kMaxIdBytes) return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// `text` with { and } as their full-width forms: textV2 reads every {...} as a placeholder, and
// LINE documents no escape for a literal brace.
std::string ReplaceBraces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '{') {
      out += "\xEF\xBD\x9B";  // U+FF5B
    } else if (c == '}') {
      out += "\xEF\xBD\x9D";  // U+FF5D
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string Sign(std::string_view channel_secret, std::string_view body) {
  return common::HmacSha256Base64(channel_secret, body);
}

bool Verify(std::string_view channel_secret, std::string_view body,
            std::string_view signature_header) {
  if (channel_secret.empty() || signature_header.empty()) return false;
  return util::ConstantTimeEquals(Sign(channel_secret, body), signature_header);
}

util::Result<Webhook> DecodeWebhook(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed) return tl::unexpected(parsed.error());
  if (!parsed->is_object()) return Invalid("the body must be a JSON object");
  JsonObject& root = parsed->get_object();
  Webhook hook;
  hook.destination = std::string(StringOr(root, "destination").substr(0, kMaxIdBytes));
  util::Json* events = root.if_contains("events");
  if (events == nullptr || !events->is_array()) return Invalid("events must be an array");
  if (events->get_array().size() > kMaxEvents) {
    return Invalid(fmt::format("events must hold at most {} events", kMaxEvents));
  }
  for (auto& event : events->get_array()) hook.events.push_back(std::move(event));
  return hook;
}

std::string EventId(const Json& event) {
  if (!event.is_object()) return {};
  return std::string(StringOr(event.get_object(), "webhookEventId").substr(0, kMaxIdBytes));
}

util::Result<DecodedEvent> DecodeEvent(const Json& value, std::string_view bot_user_id) {
  if (!value.is_object()) return Invalid("event must be an object");
  const JsonObject& event = value.get_object();
  DecodedEvent decoded;
  const std::string_view type = StringOr(event, "type");
  if (type != "message") {
    decoded.skipped = fmt::format("event type '{}'", type.substr(0, 64));
    return decoded;
  }
  if (StringOr(event, "mode") == "standby") {
    decoded.skipped = "standby mode (another channel answers this chat)";
    return decoded;
  }
  decoded.reply_token = std::string(StringOr(event, "replyToken").substr(0, kMaxIdBytes));
  const JsonObject* source = ObjectField(event, "source");
  if (source == nullptr) return Invalid("source must be an object");
  const JsonObject* message = ObjectField(event, "message");
  if (message == nullptr) return Invalid("message must be an object");

  domain::ReceivedMessage received;
  const std::string_view source_type = StringOr(*source, "type");
  const std::string_view user = StringOr(*source, "userId");
  if (user.size() > kMaxIdBytes) return Invalid("source.userId is too long");
  if (source_type == "user") {
    auto id = RequiredId(*source, "userId", "source.");
    if (!id) return tl::unexpected(id.error());
    received.chat_type = domain::TargetType::kPerson;
    received.chat_id = *id;
  } else if (source_type == "group" || source_type == "room") {
    auto id = RequiredId(*source, source_type == "group" ? "groupId" : "roomId", "source.");
    if (!id) return tl::unexpected(id.error());
    received.chat_type = domain::TargetType::kGroup;
    received.chat_id = *id;
  } else {
    return Invalid("source.type must be user, group or room");
  }
  // In groups the sender's id is there only if they consented to share it.
  received.sender_id = user.empty() ? std::string("unknown") : std::string(user);

  auto id = RequiredId(*message, "id", "message.");
  if (!id) return tl::unexpected(id.error());
  received.message_id = *id;
  MessageElement source_element;
  source_element.type = ElementType::kSource;
  source_element.id = *id;
  received.chain.push_back(std::move(source_element));
  if (const auto quoted = StringOr(*message, "quotedMessageId");
      !quoted.empty() && quoted.size() <= kMaxIdBytes) {
    MessageElement quote;
    quote.type = ElementType::kQuote;
    quote.id = std::string(quoted);
    received.chain.push_back(std::move(quote));
  }

  const std::string_view message_type = StringOr(*message, "type");
  if (message_type == "text") {
    const auto* text_field = StringField(*message, "text");
    if (text_field == nullptr) return Invalid("message.text is required");
    const std::string_view text(text_field->data(), text_field->size());
    if (text.size() > kMaxTextBytes) {
      return Invalid(fmt::format("message.text must be at most {} bytes", kMaxTextBytes));
    }
    std::size_t pos = 0;
    for (auto& m : ReadMentions(*message, text, bot_user_id)) {
      AppendPlain(received.chain, text.substr(pos, m.begin - pos));
      received.chain.push_back(std::move(m.element));
      pos = m.end;
    }
    AppendPlain(received.chain, text.substr(pos));
  } else if (message_type == "image") {
    const JsonObject* provider = ObjectField(*message, "contentProvider");
    const std::string_view provider_type = provider ? StringOr(*provider, "type") : "line";
    MessageElement image;
    image.type = ElementType::kImage;
    if (provider_type == "external") {
      const std::string_view url = StringOr(*provider, "originalContentUrl");
      if (!IsHttpsUrl(url)) return Invalid("message.contentProvider.originalContentUrl is invalid");
      image.url = std::string(url);
    } else {
      decoded.content = PendingContent{received.chain.size(), *id};
    }
    received.chain.push_back(std::move(image));
  } else {
    decoded.skipped = fmt::format("a {} message", message_type.substr(0, 32));
    return decoded;
  }
  if (received.chain.back().type == ElementType::kSource ||
      received.chain.back().type == ElementType::kQuote) {
    decoded.skipped = "an empty message";
    return decoded;
  }
  decoded.message = std::move(received);
  return decoded;
}

util::Result<BotInfo> DecodeBotInfo(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    BotInfo info;
    info.user_id = std::string(StringOr(parsed->get_object(), "userId"));
    info.display_name =
        std::string(StringOr(parsed->get_object(), "displayName").substr(0, kMaxIdBytes));
    if (!info.user_id.empty() && info.user_id.size() <= kMaxIdBytes) return info;
  }
  return util::Fail(ErrorCode::kUpstreamFailed, "GET /v2/bot/info gave no userId");
}

std::string DescribeError(int http_status, std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return fmt::format("HTTP {}", http_status);
  const JsonObject& root = parsed->get_object();
  std::string text(StringOr(root, "message").substr(0, 200));
  if (text.empty()) text = fmt::format("HTTP {}", http_status);
  if (const auto* details = ArrayField(root, "details")) {
    std::size_t shown = 0;
    for (const Json& d : *details) {
      if (!d.is_object() || shown == 3) break;
      const std::string_view property = StringOr(d.get_object(), "property");
      const std::string_view message = StringOr(d.get_object(), "message");
      text += shown == 0 ? ": " : "; ";
      if (!property.empty()) text += std::string(property.substr(0, 64)) + ": ";
      text += message.substr(0, 200);
      ++shown;
    }
  }
  return text;
}

bool IsInvalidReplyToken(int http_status, std::string_view body) {
  if (http_status != 400) return false;
  auto parsed = util::ParseJson(body);
  return parsed && parsed->is_object() &&
         StringOr(parsed->get_object(), "message") == "Invalid reply token";
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!PlausibleTarget(message.target_id)) {
    return Invalid("target_id must be a LINE user, group or room id (U…, C…, R…)");
  }
  bool shows_something = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    const std::string where = fmt::format("message_chain[{}]", i);
    switch (e.type) {
      case ElementType::kPlain:
        if (!e.text.empty()) shows_something = true;
        break;
      case ElementType::kAt:
        if (!PlausibleTarget(e.target)) return Invalid(where + ": At needs a LINE user id");
        shows_something = true;
        break;
      case ElementType::kAtAll:
        shows_something = true;
        break;
      case ElementType::kImage:
        if (!IsHttpsUrl(e.url)) {
          return Invalid(where +
                         ": LINE takes images only by https url (at most 2000 characters); a "
                         "base64 image would need hosting, which this server does not do");
        }
        shows_something = true;
        break;
      case ElementType::kVoice:
        return Invalid(where + ": Voice cannot be sent to LINE (audio needs its duration)");
      case ElementType::kFile:
        if (!IsHttpsUrl(e.url)) return Invalid(where + ": File needs an https url on LINE");
        shows_something = true;
        break;
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!shows_something) return Invalid("message_chain has nothing LINE can show");
  return util::Ok();
}

std::vector<JsonObject> EncodeMessages(const domain::OutgoingMessage& message) {
  std::vector<JsonObject> out;
  // A run of text: literal pieces and mentions, in order.
  std::vector<const MessageElement*> run;
  auto flush = [&]() {
    const bool has_mentions = std::any_of(run.begin(), run.end(), [](const MessageElement* e) {
      return e->type != ElementType::kPlain;
    });
    std::string plain;  // the run as plain text (mentions as @id)
    std::string v2;     // the run as textV2 text
    JsonObject substitution;
    for (const MessageElement* e : run) {
      if (e->type == ElementType::kPlain) {
        plain += e->text;
        v2 += ReplaceBraces(e->text);
        continue;
      }
      const std::string key = fmt::format("m{}", substitution.size());
      JsonObject mentionee;
      if (e->type == ElementType::kAt) {
        mentionee = {{"type", "user"}, {"userId", e->target}};
        plain += "@" + e->target;
      } else {
        mentionee = {{"type", "all"}};
        plain += "@All";
      }
      substitution[key] = JsonObject{{"type", "mention"}, {"mentionee", std::move(mentionee)}};
      v2 += "{" + key + "}";
    }
    run.clear();
    const bool blank = std::all_of(plain.begin(), plain.end(), [](char c) {
      return c == ' ' || c == '\n' || c == '\t' || c == '\r';
    });
    if (blank) return;
    if (has_mentions && common::TextLength(v2, common::TextUnit::kUtf16) <= kMaxTextUnits) {
      out.push_back(JsonObject{{"type", "textV2"}, {"text", v2}, {"substitution", substitution}});
      return;
    }
    // Too long for one textV2: the mentions go as plain "@id" text, cut to size.
    for (auto& piece :
         common::SplitKeepingSeparator(plain, kMaxTextUnits, common::TextUnit::kUtf16)) {
      out.push_back(JsonObject{{"type", "text"}, {"text", std::move(piece)}});
    }
  };
  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
      case ElementType::kAt:
      case ElementType::kAtAll:
        run.push_back(&e);
        break;
      case ElementType::kImage:
        flush();
        out.push_back(JsonObject{
            {"type", "image"}, {"originalContentUrl", e.url}, {"previewImageUrl", e.url}});
        break;
      case ElementType::kFile: {
        flush();
        const std::string label = e.name.empty() ? std::string("file") : e.name;
        out.push_back(JsonObject{{"type", "text"}, {"text", label + ": " + e.url}});
        break;
      }
      case ElementType::kVoice:
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  flush();
  return out;
}

std::string SentMessageId(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return {};
  const auto* sent = ArrayField(parsed->get_object(), "sentMessages");
  if (sent == nullptr || sent->empty() || !sent->front().is_object()) return {};
  return std::string(StringOr(sent->front().get_object(), "id").substr(0, kMaxIdBytes));
}

}  // namespace sb::platforms::line
