// KOOK messages both ways (kook_codec.hpp): message events into the shared chain, chains into
// create calls, and the REST envelope.
#include "platforms/kook/kook_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/text_units.hpp"
#include "util/crypto.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::kook {
namespace {

using domain::ElementType;
using domain::MessageChain;
using domain::MessageElement;
using util::Json;
using util::JsonObject;

constexpr std::size_t kMaxNameBytes = 256;

// An element of `type` with one string field set (MessageElement's strings have no initializers,
// so designated initializers would leave the rest unnamed).
MessageElement Element(ElementType type, std::string MessageElement::*field = nullptr,
                       std::string value = {}) {
  MessageElement e;
  e.type = type;
  if (field != nullptr) e.*field = std::move(value);
  return e;
}
constexpr std::size_t kMaxIdBytes = 128;
constexpr std::size_t kMaxContentBytes = 64 * 1024;

std::string Truncated(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut));
}

// A string field that must be there (possibly empty when `allow_empty`).
util::Result<std::string> RequireString(const JsonObject& o, std::string_view key,
                                        bool allow_empty = false) {
  const auto* value = common::StringField(o, key);
  if (value == nullptr) return common::Invalid(fmt::format("d.{} must be a string", key));
  if (!allow_empty && value->empty()) return common::Invalid(fmt::format("d.{} is empty", key));
  return std::string(value->data(), value->size());
}

// KMarkdown's `\x` shows x as it is; the model gets the text a person saw.
std::string Unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() &&
        std::ispunct(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
    }
    out += text[i];
  }
  return out;
}

// The KMarkdown mention-like tags: (met)id(met), (rol)id(rol), (chn)id(chn).
constexpr std::array<std::string_view, 3> kTags = {"(met)", "(rol)", "(chn)"};

struct Tag {
  std::string_view tag;
  std::string_view id;
  std::size_t length = 0;  // of the whole `(tag)id(tag)`
};

std::optional<Tag> TagAt(std::string_view content, std::size_t i) {
  for (std::string_view tag : kTags) {
    if (content.compare(i, tag.size(), tag) != 0) continue;
    const std::size_t start = i + tag.size();
    const std::size_t end = content.find(tag, start);
    if (end == std::string_view::npos || end == start || end - start > kMaxIdBytes) continue;
    std::string_view id = content.substr(start, end - start);
    if (!IsKookId(id)) continue;
    return Tag{tag, id, end + tag.size() - i};
  }
  return std::nullopt;
}

// The content as Plain runs and At elements; true when it mentions `bot`.
bool AppendContent(MessageChain& chain, std::string_view content, std::string_view bot,
                   bool kmarkdown) {
  bool mentions_bot = false;
  std::size_t run = 0;
  auto flush = [&](std::size_t end) {
    std::string_view text = content.substr(run, end - run);
    common::AppendPlain(chain, kmarkdown ? Unescape(text) : std::string(text));
  };
  for (std::size_t i = 0; i < content.size();) {
    if (content[i] != '(') {
      ++i;
      continue;
    }
    auto tag = TagAt(content, i);
    if (!tag) {
      ++i;
      continue;
    }
    flush(i);
    if (tag->tag == "(met)") {
      if (tag->id == "all" || tag->id == "here") {
        chain.push_back(Element(ElementType::kAtAll));
      } else {
        if (!bot.empty() && tag->id == bot) mentions_bot = true;
        common::AppendAt(chain, std::string(tag->id));
      }
    }
    i += tag->length;
    run = i;
  }
  flush(content.size());
  return mentions_bot;
}

bool MentionListNames(const JsonObject& extra, std::string_view bot) {
  if (bot.empty()) return false;
  const auto* mentions = common::ArrayField(extra, "mention");
  if (mentions == nullptr) return false;
  return std::any_of(mentions->begin(), mentions->end(), [&](const Json& m) {
    if (m.is_string()) return m.get_string() == bot;
    if (m.is_int64()) return std::to_string(m.get_int64()) == bot;
    return false;
  });
}

std::string AuthorName(const JsonObject* extra) {
  if (extra == nullptr) return {};
  const JsonObject* author = common::ObjectField(*extra, "author");
  if (author == nullptr) return {};
  for (std::string_view key : {"nickname", "username"}) {
    std::string_view name = common::StringOr(*author, key);
    if (!name.empty()) return util::ToValidUtf8(Truncated(name, kMaxNameBytes));
  }
  return {};
}

bool AuthorIsBot(const JsonObject* extra) {
  if (extra == nullptr) return false;
  const JsonObject* author = common::ObjectField(*extra, "author");
  return author != nullptr && common::IsTrue(*author, "bot");
}

std::string QuoteId(const JsonObject* extra) {
  if (extra == nullptr) return {};
  const JsonObject* quote = common::ObjectField(*extra, "quote");
  if (quote == nullptr) return {};
  for (std::string_view key : {"rong_id", "id"}) {
    std::string_view id = common::StringOr(*quote, key);
    if (!id.empty() && id.size() <= kMaxIdBytes) return std::string(id);
  }
  return {};
}

bool IsHttpUrl(std::string_view url) {
  return url.starts_with("https://") || url.starts_with("http://");
}

// The bytes and MIME type of an element's base64 ("data:<mime>;base64,<b64>" or bare base64).
bool DecodeBase64Payload(std::string_view base64, std::string& mime, std::string& bytes) {
  std::string_view data = base64;
  mime.clear();
  if (data.starts_with("data:")) {
    const auto comma = data.find(',');
    if (comma == std::string_view::npos) return false;
    std::string_view head = data.substr(5, comma - 5);
    if (!head.ends_with(";base64")) return false;
    mime = std::string(head.substr(0, head.size() - 7));
    data = data.substr(comma + 1);
  }
  return !data.empty() && util::Base64Decode(data, bytes) && !bytes.empty();
}

std::string SniffImageMime(std::string_view bytes, std::string_view fallback) {
  if (bytes.starts_with("\x89PNG")) return "image/png";
  if (bytes.starts_with("\xFF\xD8\xFF")) return "image/jpeg";
  if (bytes.starts_with("GIF8")) return "image/gif";
  if (bytes.size() > 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP") {
    return "image/webp";
  }
  return fallback.starts_with("image/") ? std::string(fallback) : "image/png";
}

bool Deliverable(const MessageElement& e) {
  std::string mime;
  std::string bytes;
  switch (e.type) {
    case ElementType::kImage:
      return IsHttpUrl(e.url) || DecodeBase64Payload(e.base64, mime, bytes);
    case ElementType::kVoice:
    case ElementType::kFile:
      return IsHttpUrl(e.url);
    case ElementType::kAt:
      return IsKookId(e.target);
    default:
      return true;
  }
}

const char* WhatIsWrong(const MessageElement& e) {
  switch (e.type) {
    case ElementType::kImage:
      return "Image needs an http(s) url or valid base64";
    case ElementType::kVoice:
      return "Voice needs an http(s) url (KOOK takes no voice uploads here)";
    case ElementType::kFile:
      return "File needs an http(s) url";
    case ElementType::kAt:
      return "At needs a KOOK user id as target";
    default:
      return "cannot be carried";
  }
}

bool Shows(const MessageElement& e) {
  switch (e.type) {
    case ElementType::kPlain:
      return e.text.find_first_not_of(" \t\r\n") != std::string::npos;
    case ElementType::kQuote:
    case ElementType::kSource:
      return false;
    default:
      return true;
  }
}

// Plain text in KMarkdown, with the mention tags broken so that a reply cannot ping anyone
// (a model told to write "(met)all(met)" writes it, it does not @everyone).
std::string EscapeTags(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool tag = false;
    for (std::string_view t : {"(met)", "(rol)", "(chn)", "(emj)"}) {
      if (text.compare(i, t.size(), t) == 0) {
        out += "\\(";
        out += t.substr(1, 3);
        out += "\\)";
        i += t.size() - 1;
        tag = true;
        break;
      }
    }
    if (!tag) out += text[i];
  }
  return out;
}

}  // namespace

bool IsKookId(std::string_view s) {
  return !s.empty() && s.size() <= kMaxIdBytes && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
  });
}

util::Result<DecodedEvent> DecodeMessageEvent(const Json& d, std::string_view bot_id) {
  if (!d.is_object()) return common::Invalid("d must be an object");
  const JsonObject& o = d.get_object();
  DecodedEvent decoded;
  decoded.msg_id = Truncated(common::StringOr(o, "msg_id"), kMaxIdBytes);
  auto channel_type = RequireString(o, "channel_type");
  if (!channel_type) return tl::unexpected(channel_type.error());
  const auto type = common::IntField(o, "type");
  if (!type) return common::Invalid("d.type must be an integer");
  const bool person = *channel_type == "PERSON";
  if ((!person && *channel_type != "GROUP") || *type == kTypeSystem || *type == kTypeCard) {
    return decoded;  // BROADCAST, system events and cards are not messages for the bot
  }
  auto author = RequireString(o, "author_id");
  if (!author) return tl::unexpected(author.error());
  auto target = RequireString(o, "target_id");
  if (!target) return tl::unexpected(target.error());
  auto content = RequireString(o, "content", true);
  if (!content) return tl::unexpected(content.error());
  if (decoded.msg_id.empty()) return common::Invalid("d.msg_id must be a non-empty string");
  if (!IsKookId(*author) || !IsKookId(*target)) {
    return common::Invalid("d.author_id and d.target_id must be KOOK ids");
  }
  if (content->size() > kMaxContentBytes) content->resize(kMaxContentBytes);
  *content = util::ToValidUtf8(*content);
  const JsonObject* extra = common::ObjectField(o, "extra");
  // The bot's own messages come back through the gateway; other bots' replies would start
  // bot-to-bot loops (the docs warn of both); author 1 is KOOK's system.
  if (*author == bot_id || *author == "1" || AuthorIsBot(extra)) return decoded;

  domain::ReceivedMessage message;
  message.chat_type = person ? domain::TargetType::kPerson : domain::TargetType::kGroup;
  message.chat_id = person ? *author : *target;
  message.sender_id = *author;
  message.sender_name = AuthorName(extra);
  message.message_id = decoded.msg_id;
  message.chain.push_back(Element(ElementType::kSource, &MessageElement::id, decoded.msg_id));
  if (std::string quote = QuoteId(extra); !quote.empty()) {
    // KOOK's quote object carries the quoted message's content and author.
    const JsonObject* q = common::ObjectField(*extra, "quote");
    const JsonObject* quoted_author = common::ObjectField(*q, "author");
    message.chain.push_back(domain::MakeQuote(
        std::move(quote),
        util::ToValidUtf8(
            Truncated(common::StringOr(*q, "content"), domain::kMaxQuotedTextBytes * 2)),
        quoted_author ? Truncated(common::StringOr(*quoted_author, "id"), kMaxIdBytes) : ""));
  }
  const std::size_t body_start = message.chain.size();
  switch (*type) {
    case kTypeText:
    case kTypeKMarkdown: {
      MessageChain body;
      const bool named = AppendContent(body, *content, bot_id, *type == kTypeKMarkdown);
      if (!named && extra != nullptr && MentionListNames(*extra, bot_id)) {
        common::AppendAt(message.chain, std::string(bot_id));
      }
      for (auto& e : body) message.chain.push_back(std::move(e));
      break;
    }
    case kTypeImage:
      if (IsHttpUrl(*content)) {
        message.chain.push_back(Element(ElementType::kImage, &MessageElement::url, *content));
      }
      break;
    case kTypeVideo:
    case kTypeFile: {
      if (!IsHttpUrl(*content)) break;
      std::string name;
      if (extra != nullptr) {
        if (const JsonObject* att = common::ObjectField(*extra, "attachments")) {
          name = util::ToValidUtf8(Truncated(common::StringOr(*att, "name"), kMaxNameBytes));
        }
      }
      MessageElement file = Element(ElementType::kFile, &MessageElement::url, *content);
      file.name = std::move(name);
      message.chain.push_back(std::move(file));
      break;
    }
    case kTypeAudio:
      if (IsHttpUrl(*content)) {
        message.chain.push_back(Element(ElementType::kVoice, &MessageElement::url, *content));
      }
      break;
    default:
      if (!content->empty()) common::AppendPlain(message.chain, *content);
      break;
  }
  const bool shows = std::any_of(message.chain.begin() + static_cast<std::ptrdiff_t>(body_start),
                                 message.chain.end(), Shows);
  if (shows) decoded.message = std::move(message);
  return decoded;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!IsKookId(message.target_id)) {
    return common::Invalid("target_id must be a KOOK user or channel id");
  }
  bool shows = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    if (!Deliverable(e)) {
      return common::Invalid(fmt::format("message_chain[{}]: {}", i, WhatIsWrong(e)));
    }
    shows = shows || Shows(e);
  }
  if (!shows) return common::Invalid("message_chain has nothing KOOK can show");
  return util::Ok();
}

std::vector<OutboundCall> EncodeOutgoing(const domain::OutgoingMessage& message) {
  std::vector<OutboundCall> calls;
  std::string text;
  auto flush = [&] {
    if (text.find_first_not_of(" \t\r\n") != std::string::npos) {
      for (std::string& piece : common::SplitDroppingSeparator(text, kMaxContentChars)) {
        calls.push_back(OutboundCall{.type = kTypeKMarkdown, .content = std::move(piece)});
      }
    }
    text.clear();
  };
  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
        text += EscapeTags(e.text);
        break;
      case ElementType::kAt:
        text += "(met)" + e.target + "(met)";
        break;
      case ElementType::kAtAll:
        text += "(met)all(met)";
        break;
      case ElementType::kFile:
        text += e.name.empty() ? e.url : fmt::format("[{}]({})", e.name, e.url);
        break;
      case ElementType::kVoice:
        text += e.url;
        break;
      case ElementType::kImage: {
        flush();
        OutboundCall call{.type = kTypeImage};
        std::string mime;
        if (IsHttpUrl(e.url)) {
          call.image_url = e.url;
        } else if (DecodeBase64Payload(e.base64, mime, call.image_bytes)) {
          call.image_mime = SniffImageMime(call.image_bytes, mime);
        } else {
          break;
        }
        calls.push_back(std::move(call));
        break;
      }
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  flush();
  return calls;
}

JsonObject EncodeCreateBody(std::string_view target_id, const OutboundCall& call,
                            std::string_view content, std::string_view quote) {
  JsonObject body{{"target_id", target_id}, {"content", content}, {"type", call.type}};
  if (!quote.empty()) body["quote"] = quote;
  return body;
}

std::string QuotedId(const MessageChain& chain) {
  for (const MessageElement& e : chain) {
    if (e.type == ElementType::kQuote && !e.id.empty()) return e.id;
  }
  return {};
}

std::string EncodeAssetUpload(std::string_view bytes, std::string_view mime,
                              std::string_view boundary) {
  std::string extension = "png";
  if (mime == "image/jpeg") extension = "jpg";
  if (mime == "image/gif") extension = "gif";
  if (mime == "image/webp") extension = "webp";
  std::string body = fmt::format(
      "--{}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"image.{}\"\r\n"
      "Content-Type: {}\r\n\r\n",
      boundary, extension, mime.empty() ? "application/octet-stream" : mime);
  body += bytes;
  body += fmt::format("\r\n--{}--\r\n", boundary);
  return body;
}

util::Result<Json> DecodeEnvelope(int status, std::string_view body) {
  auto parsed = util::ParseJson(body);
  std::optional<std::int64_t> code;
  std::string message;
  Json data = nullptr;
  if (parsed && parsed->is_object()) {
    JsonObject& o = parsed->get_object();
    code = common::IntField(o, "code");
    message = util::ToValidUtf8(Truncated(common::StringOr(o, "message"), 300));
    if (Json* d = o.if_contains("data")) data = std::move(*d);
  }
  if (status >= 200 && status < 300 && code && *code == 0) return data;
  const std::string what =
      message.empty() ? fmt::format("HTTP {}", status)
                      : fmt::format("{} (HTTP {}, code {})", message, status, code.value_or(0));
  if (status == 401 || status == 403 || (code && (*code == 401 || *code == 403))) {
    util::Error error{util::ErrorCode::kUpstreamAuth, "KOOK refused the bot token: " + what};
    error.final = true;
    return tl::unexpected(error);
  }
  if (status == 429) {
    return util::Fail(util::ErrorCode::kUpstreamRateLimited,
                      "KOOK is rate limiting the bot: " + what);
  }
  if (status >= 200 && status < 300 && !parsed) {
    return util::Fail(util::ErrorCode::kUpstreamFailed, "KOOK answered with malformed JSON");
  }
  return util::Fail(util::ErrorCode::kUpstreamFailed, "KOOK refused: " + what);
}

util::Result<BotUser> DecodeUserMe(const Json& data) {
  if (data.is_object()) {
    const JsonObject& o = data.get_object();
    std::string id(common::StringOr(o, "id"));
    if (IsKookId(id)) {
      return BotUser{std::move(id),
                     util::ToValidUtf8(Truncated(common::StringOr(o, "username"), kMaxNameBytes))};
    }
  }
  return util::Fail(util::ErrorCode::kUpstreamFailed, "KOOK's user/me answer has no user id");
}

util::Result<std::string> DecodeMsgId(const Json& data) {
  if (data.is_object()) {
    std::string_view id = common::StringOr(data.get_object(), "msg_id");
    if (!id.empty()) return Truncated(id, kMaxIdBytes);
  }
  return util::Fail(util::ErrorCode::kUpstreamFailed, "KOOK's answer has no msg_id");
}

util::Result<std::string> DecodeAssetUrl(const Json& data) {
  if (data.is_object()) {
    std::string_view url = common::StringOr(data.get_object(), "url");
    if (IsHttpUrl(url)) return std::string(url);
  }
  return util::Fail(util::ErrorCode::kUpstreamFailed, "KOOK's asset/create answer has no url");
}

}  // namespace sb::platforms::kook
