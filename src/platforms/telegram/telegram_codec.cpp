#include "platforms/telegram/telegram_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/text_units.hpp"
#include "util/ascii.hpp"
#include "util/crypto.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::telegram {
namespace {

using common::AppendAt;
using common::AppendPlain;
using common::Invalid;
using domain::ElementType;
using domain::MessageElement;
using util::EqualsIgnoreCase;
using util::ErrorCode;
using util::Json;
using util::JsonArray;
using util::JsonObject;

using common::NextCodePoint;
using common::SplitWeightedDroppingSeparator;
using common::Utf16Length;

std::size_t Units(char32_t cp) { return common::Utf16Units(cp); }

using util::AppendUtf8;

// byte_at[u] = the byte offset where UTF-16 unit u starts; npos for the second half of a pair.
// One entry past the end, so an entity may end at the text's end.
std::vector<std::size_t> UnitToByte(std::string_view s) {
  std::vector<std::size_t> byte_at;
  byte_at.reserve(s.size() + 1);
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp;
    const std::size_t n = NextCodePoint(s, i, cp);
    byte_at.push_back(i);
    if (Units(cp) == 2) byte_at.push_back(std::string_view::npos);
    i += n;
  }
  byte_at.push_back(s.size());
  return byte_at;
}

std::optional<std::int64_t> AsInt(const Json* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(v->get_uint64());
  }
  return std::nullopt;
}

util::Result<std::int64_t> RequireInt(const JsonObject& o, std::string_view key,
                                      const std::string& where) {
  const Json* v = o.if_contains(key);
  if (v == nullptr) return Invalid(where + std::string(key) + " is required");
  auto i = AsInt(v);
  if (!i) {
    return Invalid(where + std::string(key) + " must be an integer, not " + util::JsonKindName(*v));
  }
  return *i;
}

// Absent or null: empty. Another type: an error naming the field.
util::Result<std::string> OptionalString(const JsonObject& o, std::string_view key,
                                         const std::string& where) {
  const Json* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::string();
  if (!v->is_string()) {
    return Invalid(where + std::string(key) + " must be a string, not " + util::JsonKindName(*v));
  }
  return std::string(v->get_string());
}

util::Result<const JsonObject*> OptionalObject(const JsonObject& o, std::string_view key,
                                               const std::string& where) {
  const Json* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return nullptr;
  if (!v->is_object()) {
    return Invalid(where + std::string(key) + " must be an object, not " + util::JsonKindName(*v));
  }
  return &v->get_object();
}

util::Result<const JsonArray*> OptionalArray(const JsonObject& o, std::string_view key,
                                             const std::string& where) {
  const Json* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return nullptr;
  if (!v->is_array()) {
    return Invalid(where + std::string(key) + " must be an array, not " + util::JsonKindName(*v));
  }
  return &v->get_array();
}

struct Entity {
  std::string type;
  std::size_t begin = 0;  // bytes
  std::size_t end = 0;
  std::string user_id;  // text_mention
};

util::Result<std::vector<Entity>> ReadEntities(const JsonArray* raw, std::string_view text,
                                               const std::string& where) {
  std::vector<Entity> entities;
  if (raw == nullptr) return entities;
  const auto byte_at = UnitToByte(text);
  for (std::size_t i = 0; i < raw->size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    const Json& value = (*raw)[i];
    if (!value.is_object()) {
      return Invalid(at + " must be an object, not " + util::JsonKindName(value));
    }
    const JsonObject& o = value.get_object();
    auto type = OptionalString(o, "type", at + ".");
    if (!type) return tl::unexpected(type.error());
    auto offset = RequireInt(o, "offset", at + ".");
    if (!offset) return tl::unexpected(offset.error());
    auto length = RequireInt(o, "length", at + ".");
    if (!length) return tl::unexpected(length.error());
    if (*type != "mention" && *type != "text_mention" && *type != "bot_command") continue;
    // Outside the text or through the middle of a surrogate pair: nothing we can cut at.
    if (*offset < 0 || *length <= 0 ||
        static_cast<std::uint64_t>(*offset) + static_cast<std::uint64_t>(*length) >=
            byte_at.size()) {
      continue;
    }
    const std::size_t b = byte_at[static_cast<std::size_t>(*offset)];
    const std::size_t e = byte_at[static_cast<std::size_t>(*offset + *length)];
    if (b == std::string_view::npos || e == std::string_view::npos) continue;
    Entity entity;
    entity.type = std::move(*type);
    entity.begin = b;
    entity.end = e;
    if (entity.type == "text_mention") {
      auto user = OptionalObject(o, "user", at + ".");
      if (!user) return tl::unexpected(user.error());
      if (*user == nullptr) return Invalid(at + ".user is required for text_mention");
      auto id = RequireInt(**user, "id", at + ".user.");
      if (!id) return tl::unexpected(id.error());
      entity.user_id = std::to_string(*id);
    }
    entities.push_back(std::move(entity));
  }
  std::stable_sort(entities.begin(), entities.end(),
                   [](const Entity& a, const Entity& b) { return a.begin < b.begin; });
  return entities;
}

// The text with mentions of the bot and text_mentions as At elements, the rest as Plain.
void AppendText(domain::MessageChain& chain, std::string_view text,
                const std::vector<Entity>& entities, const BotIdentity& bot, bool group) {
  const std::string bot_id = std::to_string(bot.id);
  std::size_t pos = 0;
  for (const Entity& entity : entities) {
    if (entity.begin < pos) continue;  // overlaps one already taken
    const std::string_view slice = text.substr(entity.begin, entity.end - entity.begin);
    if (entity.type == "text_mention") {
      AppendPlain(chain, text.substr(pos, entity.begin - pos));
      AppendAt(chain, entity.user_id);
      pos = entity.end;
    } else if (entity.type == "mention") {
      if (bot.username.empty() || slice.size() < 2 ||
          !EqualsIgnoreCase(slice.substr(1), bot.username)) {
        continue;  // someone else: stays in the text
      }
      AppendPlain(chain, text.substr(pos, entity.begin - pos));
      AppendAt(chain, bot_id);
      pos = entity.end;
    } else if (entity.type == "bot_command") {
      const auto at = slice.find('@');
      if (at == std::string_view::npos || bot.username.empty() ||
          !EqualsIgnoreCase(slice.substr(at + 1), bot.username)) {
        continue;
      }
      AppendPlain(chain, text.substr(pos, entity.begin - pos));
      if (group) AppendAt(chain, bot_id);
      AppendPlain(chain, slice.substr(0, at));
      pos = entity.end;
    }
  }
  AppendPlain(chain, text.substr(pos));
}

std::string DisplayName(const JsonObject& user) {
  auto first = OptionalString(user, "first_name", "");
  auto last = OptionalString(user, "last_name", "");
  std::string name = first ? *first : std::string();
  if (last && !last->empty()) name += (name.empty() ? "" : " ") + *last;
  if (name.empty()) {
    auto username = OptionalString(user, "username", "");
    if (username) name = *username;
  }
  return name;
}

// One media element and the file to fetch for it; false when the message has none.
util::Result<bool> ReadMedia(const JsonObject& msg, domain::MessageChain& chain,
                             std::vector<PendingFile>& files) {
  auto add = [&](ElementType type, const JsonObject& file, const std::string& where,
                 std::string default_mime, std::string name) -> util::Result<bool> {
    auto file_id = OptionalString(file, "file_id", where);
    if (!file_id) return tl::unexpected(file_id.error());
    if (file_id->empty()) return Invalid(where + "file_id is required");
    auto mime = OptionalString(file, "mime_type", where);
    if (!mime) return tl::unexpected(mime.error());
    PendingFile pending;
    pending.element = chain.size();
    pending.file_id = std::move(*file_id);
    pending.file_size = AsInt(file.if_contains("file_size")).value_or(0);
    pending.mime_type = mime->empty() ? std::move(default_mime) : std::move(*mime);
    files.push_back(std::move(pending));
    MessageElement e;
    e.type = type;
    e.name = std::move(name);
    chain.push_back(std::move(e));
    return true;
  };
  auto photo = OptionalArray(msg, "photo", "message.");
  if (!photo) return tl::unexpected(photo.error());
  if (*photo != nullptr && !(*photo)->empty()) {
    // Ascending sizes: the last is the largest.
    const Json& largest = (*photo)->back();
    const std::string where = fmt::format("message.photo[{}]", (*photo)->size() - 1);
    if (!largest.is_object()) {
      return Invalid(where + " must be an object, not " + util::JsonKindName(largest));
    }
    return add(ElementType::kImage, largest.get_object(), where + ".", "image/jpeg", "");
  }
  auto voice = OptionalObject(msg, "voice", "message.");
  if (!voice) return tl::unexpected(voice.error());
  if (*voice != nullptr)
    return add(ElementType::kVoice, **voice, "message.voice.", "audio/ogg", "");
  auto document = OptionalObject(msg, "document", "message.");
  if (!document) return tl::unexpected(document.error());
  if (*document != nullptr) {
    auto name = OptionalString(**document, "file_name", "message.document.");
    if (!name) return tl::unexpected(name.error());
    return add(ElementType::kFile, **document, "message.document.", "application/octet-stream",
               name->empty() ? "file" : *name);
  }
  return false;
}

bool IsInteger(std::string_view s) {
  std::int64_t value = 0;
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

bool IsChannelName(std::string_view s) {
  if (s.size() < 2 || s[0] != '@') return false;
  return std::all_of(s.begin() + 1, s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

Json ChatIdJson(const std::string& target_id) {
  if (IsInteger(target_id)) {
    std::int64_t value = 0;
    std::from_chars(target_id.data(), target_id.data() + target_id.size(), value);
    return value;
  }
  return Json(target_id);
}

// Splits "data:<mime>;base64,<data>" into mime and data; raw base64 gives an empty mime.
std::pair<std::string_view, std::string_view> SplitDataUrl(std::string_view base64) {
  if (!base64.starts_with("data:")) return {{}, base64};
  const auto comma = base64.find(',');
  if (comma == std::string_view::npos) return {{}, {}};
  std::string_view head = base64.substr(5, comma - 5);
  if (const auto semi = head.find(';'); semi != std::string_view::npos) head = head.substr(0, semi);
  return {head, base64.substr(comma + 1)};
}

bool DecodeBase64Payload(std::string_view base64, std::string& mime, std::string& bytes) {
  auto [m, data] = SplitDataUrl(base64);
  std::string compact;
  compact.reserve(data.size());
  for (char c : data) {
    if (c != '\n' && c != '\r' && c != ' ') compact.push_back(c);
  }
  if (compact.empty() || !util::Base64Decode(compact, bytes) || bytes.empty()) return false;
  mime = std::string(m);
  return true;
}

std::string SniffImageMime(std::string_view bytes) {
  if (bytes.starts_with("\x89PNG")) return "image/png";
  if (bytes.starts_with("GIF8")) return "image/gif";
  if (bytes.size() > 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP") {
    return "image/webp";
  }
  return "image/jpeg";
}

std::string Extension(std::string_view mime) {
  if (mime == "image/png") return "png";
  if (mime == "image/gif") return "gif";
  if (mime == "image/webp") return "webp";
  if (mime == "image/jpeg") return "jpg";
  if (mime == "audio/mpeg") return "mp3";
  if (mime == "audio/mp4" || mime == "audio/x-m4a") return "m4a";
  if (mime == "audio/ogg") return "ogg";
  return "bin";
}

// Mentions inside a text run stand in as one private-use code point each until rendering, so
// that splitting never cuts one and Markdown conversion never touches it.
constexpr char32_t kPlaceholderBase = 0xE000;
constexpr std::size_t kMaxPlaceholders = 0x1000;

struct TextRun {
  std::string text;
  std::vector<std::string> mentions;  // At targets, by placeholder index
};

struct Rendered {
  std::string text;
  JsonArray entities;
};

std::string MentionName(const std::string& target, const EncodeOptions& options) {
  std::string name;
  if (options.display_name) name = options.display_name(target);
  return "@" + (name.empty() ? target : name);
}

std::optional<std::size_t> PlaceholderIndex(char32_t cp, const TextRun& run) {
  if (cp < kPlaceholderBase || cp >= kPlaceholderBase + run.mentions.size()) return std::nullopt;
  return static_cast<std::size_t>(cp - kPlaceholderBase);
}

// Plain text, numeric mentions as text_mention entities.
Rendered RenderPlain(std::string_view chunk, const TextRun& run, const EncodeOptions& options) {
  Rendered out;
  std::size_t units = 0;
  for (std::size_t i = 0; i < chunk.size();) {
    char32_t cp;
    const std::size_t n = NextCodePoint(chunk, i, cp);
    if (auto k = PlaceholderIndex(cp, run)) {
      const std::string& target = run.mentions[*k];
      const std::string shown = MentionName(target, options);
      if (IsInteger(target)) {
        std::int64_t id = 0;
        std::from_chars(target.data(), target.data() + target.size(), id);
        const std::size_t len = Utf16Length(shown);
        out.entities.push_back(JsonObject{
            {"type", "text_mention"},
            {"offset", units},
            {"length", len},
            {"user", JsonObject{{"id", id}, {"is_bot", false}, {"first_name", shown.substr(1)}}}});
      }
      out.text += shown;
      units += Utf16Length(shown);
    } else {
      out.text.append(chunk.substr(i, n));
      units += Units(cp);
    }
    i += n;
  }
  return out;
}

std::string RenderMarkdown(std::string_view chunk, const TextRun& run,
                           const EncodeOptions& options) {
  const std::string converted = MarkdownToMarkdownV2(chunk);
  std::string out;
  out.reserve(converted.size());
  for (std::size_t i = 0; i < converted.size();) {
    char32_t cp;
    const std::size_t n = NextCodePoint(converted, i, cp);
    if (auto k = PlaceholderIndex(cp, run)) {
      const std::string& target = run.mentions[*k];
      const std::string shown = EscapeMarkdownV2(MentionName(target, options));
      out += IsInteger(target) ? "[" + shown + "](tg://user?id=" + target + ")" : shown;
    } else {
      out.append(converted, i, n);
    }
    i += n;
  }
  return out;
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool AllSpace(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

util::Result<ApiResponse> DecodeApiResponse(int http_status, std::string_view body) {
  auto malformed = [&] {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("telegram answered HTTP {} without a Bot API body", http_status));
  };
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return malformed();
  const JsonObject& o = parsed->get_object();
  const Json* ok = o.if_contains("ok");
  if (ok == nullptr || !ok->is_bool()) return malformed();
  ApiResponse r;
  r.ok = ok->get_bool();
  if (r.ok) {
    if (const Json* result = o.if_contains("result")) r.result = *result;
    return r;
  }
  r.error_code = static_cast<int>(AsInt(o.if_contains("error_code")).value_or(http_status));
  if (const Json* d = o.if_contains("description"); d != nullptr && d->is_string()) {
    r.description = std::string(d->get_string());
  }
  if (const Json* p = o.if_contains("parameters"); p != nullptr && p->is_object()) {
    r.retry_after = static_cast<int>(std::clamp<std::int64_t>(
        AsInt(p->get_object().if_contains("retry_after")).value_or(0), 0, 24 * 3600));
  }
  return r;
}

util::Result<BotIdentity> DecodeBotIdentity(const Json& result) {
  if (!result.is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed, "getMe answered something that is not a User");
  }
  auto id = AsInt(result.get_object().if_contains("id"));
  if (!id) return util::Fail(ErrorCode::kUpstreamFailed, "getMe answered a User without an id");
  BotIdentity bot;
  bot.id = *id;
  if (const Json* u = result.get_object().if_contains("username"); u != nullptr && u->is_string()) {
    bot.username = std::string(u->get_string());
  }
  return bot;
}

std::optional<std::int64_t> ReadUpdateId(const Json& update) {
  if (!update.is_object()) return std::nullopt;
  return AsInt(update.get_object().if_contains("update_id"));
}

util::Result<DecodedUpdate> DecodeUpdate(const Json& update, const BotIdentity& bot) {
  if (!update.is_object()) {
    return Invalid(std::string("update must be an object, not ") + util::JsonKindName(update));
  }
  const JsonObject& u = update.get_object();
  DecodedUpdate out;
  auto update_id = RequireInt(u, "update_id", "");
  if (!update_id) return tl::unexpected(update_id.error());
  out.update_id = *update_id;
  auto message = OptionalObject(u, "message", "");
  if (!message) return tl::unexpected(message.error());
  if (*message == nullptr) return out;  // another kind of update
  const JsonObject& msg = **message;

  auto message_id = RequireInt(msg, "message_id", "message.");
  if (!message_id) return tl::unexpected(message_id.error());
  auto chat = OptionalObject(msg, "chat", "message.");
  if (!chat) return tl::unexpected(chat.error());
  if (*chat == nullptr) return Invalid("message.chat is required");
  auto chat_id = RequireInt(**chat, "id", "message.chat.");
  if (!chat_id) return tl::unexpected(chat_id.error());
  auto chat_type = OptionalString(**chat, "type", "message.chat.");
  if (!chat_type) return tl::unexpected(chat_type.error());

  ReceivedMessage received;
  if (*chat_type == "private") {
    received.chat_type = domain::TargetType::kPerson;
  } else if (*chat_type == "group" || *chat_type == "supergroup") {
    received.chat_type = domain::TargetType::kGroup;
  } else if (*chat_type == "channel") {
    return out;
  } else {
    return Invalid("message.chat.type must be private, group, supergroup or channel");
  }
  const bool group = received.chat_type == domain::TargetType::kGroup;
  received.chat_id = std::to_string(*chat_id);
  received.message_id = std::to_string(*message_id);

  auto from = OptionalObject(msg, "from", "message.");
  if (!from) return tl::unexpected(from.error());
  if (*from != nullptr) {
    auto from_id = RequireInt(**from, "id", "message.from.");
    if (!from_id) return tl::unexpected(from_id.error());
    if (*from_id == bot.id) return out;  // our own message echoed back
    received.sender_id = std::to_string(*from_id);
    received.sender_name = DisplayName(**from);
  } else {
    // Sent on behalf of a chat (anonymous admin, linked channel): the chat is the sender.
    auto sender_chat = OptionalObject(msg, "sender_chat", "message.");
    if (!sender_chat) return tl::unexpected(sender_chat.error());
    if (*sender_chat == nullptr) return Invalid("message.from is required");
    auto id = RequireInt(**sender_chat, "id", "message.sender_chat.");
    if (!id) return tl::unexpected(id.error());
    received.sender_id = std::to_string(*id);
    auto title = OptionalString(**sender_chat, "title", "message.sender_chat.");
    if (title) received.sender_name = *title;
  }

  auto text = OptionalString(msg, "text", "message.");
  if (!text) return tl::unexpected(text.error());
  auto entities = OptionalArray(msg, "entities", "message.");
  if (!entities) return tl::unexpected(entities.error());
  std::string entities_field = "message.entities";
  if (text->empty()) {
    text = OptionalString(msg, "caption", "message.");
    if (!text) return tl::unexpected(text.error());
    entities = OptionalArray(msg, "caption_entities", "message.");
    if (!entities) return tl::unexpected(entities.error());
    entities_field = "message.caption_entities";
  }
  auto parsed_entities = ReadEntities(*entities, *text, entities_field);
  if (!parsed_entities) return tl::unexpected(parsed_entities.error());

  domain::MessageChain& chain = received.chain;
  MessageElement source;
  source.type = ElementType::kSource;
  source.id = received.message_id;
  chain.push_back(std::move(source));

  auto reply = OptionalObject(msg, "reply_to_message", "message.");
  if (!reply) return tl::unexpected(reply.error());
  if (*reply != nullptr) {
    auto reply_id = RequireInt(**reply, "message_id", "message.reply_to_message.");
    if (!reply_id) return tl::unexpected(reply_id.error());
    MessageElement quote;
    quote.type = ElementType::kQuote;
    quote.id = std::to_string(*reply_id);
    chain.push_back(std::move(quote));
    const Json* reply_from = (*reply)->if_contains("from");
    if (group && reply_from != nullptr && reply_from->is_object() &&
        AsInt(reply_from->get_object().if_contains("id")) == bot.id) {
      AppendAt(chain, std::to_string(bot.id));
    }
  }

  const std::size_t before_text = chain.size();
  AppendText(chain, *text, *parsed_entities, bot, group);
  const bool has_text = chain.size() > before_text;
  auto media = ReadMedia(msg, chain, out.files);
  if (!media) return tl::unexpected(media.error());
  if (!has_text && !*media) return out;  // a sticker, a service message, ...
  out.message = std::move(received);
  return out;
}

util::Result<FileInfo> DecodeFileInfo(const Json& result) {
  FileInfo info;
  if (result.is_object()) {
    const Json* path = result.get_object().if_contains("file_path");
    if (path != nullptr && path->is_string()) info.file_path = std::string(path->get_string());
    info.file_size = AsInt(result.get_object().if_contains("file_size")).value_or(0);
  }
  if (info.file_path.empty()) {
    return util::Fail(ErrorCode::kUpstreamFailed, "getFile answered without a file_path");
  }
  return info;
}

std::string DataUrl(std::string_view mime_type, std::string_view bytes) {
  std::string b64 = util::Base64UrlEncode(bytes);
  for (char& c : b64) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (b64.size() % 4 != 0) b64.push_back('=');
  return fmt::format("data:{};base64,{}", mime_type, b64);
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!IsInteger(message.target_id) && !IsChannelName(message.target_id)) {
    return Invalid("target id must be a Telegram chat id (an integer) or @channelname");
  }
  bool visible = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    const std::string where = fmt::format("message_chain[{}]", i);
    switch (e.type) {
      case ElementType::kPlain:
      case ElementType::kAtAll:
        visible = true;
        break;
      case ElementType::kAt:
        if (e.target.empty()) return Invalid(where + ": At needs a target");
        visible = true;
        break;
      case ElementType::kImage:
      case ElementType::kVoice: {
        const char* name = e.type == ElementType::kImage ? "Image" : "Voice";
        if (e.url.empty() && e.base64.empty()) {
          return Invalid(fmt::format("{}: {} needs a url or base64", where, name));
        }
        if (e.url.empty()) {
          std::string mime, bytes;
          if (!DecodeBase64Payload(e.base64, mime, bytes)) {
            return Invalid(fmt::format("{}: {} base64 is not valid base64", where, name));
          }
        }
        visible = true;
        break;
      }
      case ElementType::kFile:
        if (e.url.empty()) return Invalid(where + ": File needs a url");
        visible = true;
        break;
      case ElementType::kQuote:
        if (!IsInteger(e.id)) return Invalid(where + ": Quote needs a numeric message id");
        break;
      case ElementType::kSource:
        break;
    }
  }
  if (!visible) return Invalid("message_chain has nothing Telegram can show");
  return util::Ok();
}

util::Result<std::vector<OutboundCall>> EncodeOutgoing(const domain::OutgoingMessage& message,
                                                       std::string_view reply_to_message_id,
                                                       const EncodeOptions& options) {
  if (auto ok = CheckDeliverable(message); !ok) return tl::unexpected(ok.error());
  const Json chat_id = ChatIdJson(message.target_id);
  std::string reply_to;
  for (const auto& e : message.chain) {
    if (e.type == ElementType::kQuote) {
      reply_to = e.id;
      break;
    }
  }
  if (reply_to.empty() && message.target_type == domain::TargetType::kGroup &&
      IsInteger(reply_to_message_id)) {
    reply_to = std::string(reply_to_message_id);
  }

  std::vector<OutboundCall> calls;
  auto add_call = [&](OutboundCall call) {
    if (calls.empty() && !reply_to.empty()) {
      std::int64_t id = 0;
      std::from_chars(reply_to.data(), reply_to.data() + reply_to.size(), id);
      const JsonObject reply{{"message_id", id}, {"allow_sending_without_reply", true}};
      call.params["reply_parameters"] = reply;
      if (call.plain_params) (*call.plain_params)["reply_parameters"] = reply;
    }
    calls.push_back(std::move(call));
  };

  TextRun run;
  bool after_mention = false;
  auto flush_run = [&] {
    auto weight = [&](char32_t cp) -> std::size_t {
      if (auto k = PlaceholderIndex(cp, run)) {
        return Utf16Length(MentionName(run.mentions[*k], options));
      }
      return Units(cp);
    };
    for (const std::string& chunk :
         SplitWeightedDroppingSeparator(run.text, kMaxTextUnits, weight)) {
      if (AllSpace(chunk)) continue;
      Rendered plain = RenderPlain(chunk, run, options);
      JsonObject plain_params{{"chat_id", chat_id}, {"text", plain.text}};
      if (!plain.entities.empty()) plain_params["entities"] = std::move(plain.entities);
      OutboundCall call;
      call.method = "sendMessage";
      if (options.markdown) {
        call.params = JsonObject{{"chat_id", chat_id},
                                 {"text", RenderMarkdown(chunk, run, options)},
                                 {"parse_mode", "MarkdownV2"}};
        call.plain_params = std::move(plain_params);
      } else {
        call.params = std::move(plain_params);
      }
      add_call(std::move(call));
    }
    run = TextRun();
    after_mention = false;
  };
  auto add_text = [&](std::string_view text) {
    if (text.empty()) return;
    if (after_mention && !IsSpace(text.front())) run.text.push_back(' ');
    run.text += text;
    after_mention = false;
  };

  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
        add_text(e.text);
        break;
      case ElementType::kAt:
        if (!run.text.empty() && !IsSpace(run.text.back())) run.text.push_back(' ');
        if (run.mentions.size() < kMaxPlaceholders) {
          AppendUtf8(run.text, kPlaceholderBase + static_cast<char32_t>(run.mentions.size()));
          run.mentions.push_back(e.target);
        } else {
          run.text += "@" + e.target;
        }
        after_mention = true;
        break;
      case ElementType::kAtAll:
        add_text("@all");
        after_mention = true;
        break;
      case ElementType::kImage:
      case ElementType::kVoice:
      case ElementType::kFile: {
        flush_run();
        const bool image = e.type == ElementType::kImage;
        const bool voice = e.type == ElementType::kVoice;
        OutboundCall call;
        call.method = image ? "sendPhoto" : voice ? "sendVoice" : "sendDocument";
        const std::string field = image ? "photo" : voice ? "voice" : "document";
        call.params = JsonObject{{"chat_id", chat_id}};
        if (!e.url.empty()) {
          call.params[field] = e.url;
        } else {
          Upload upload;
          upload.field = field;
          std::string mime;
          DecodeBase64Payload(e.base64, mime, upload.bytes);  // checked above
          if (mime.empty()) mime = image ? SniffImageMime(upload.bytes) : "audio/ogg";
          upload.mime_type = mime;
          upload.filename = (image ? "image." : "voice.") + Extension(mime);
          call.upload = std::move(upload);
        }
        add_call(std::move(call));
        break;
      }
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  flush_run();
  return calls;
}

std::string EncodeMultipart(const JsonObject& params, const Upload& upload,
                            std::string_view boundary) {
  std::string body;
  body.reserve(upload.bytes.size() + 512);
  for (const auto& [key, value] : params) {
    body += fmt::format("--{}\r\nContent-Disposition: form-data; name=\"{}\"\r\n\r\n", boundary,
                        std::string_view(key));
    if (value.is_string()) {
      body += value.get_string();
    } else {
      util::AppendJson(body, value);
    }
    body += "\r\n";
  }
  body += fmt::format(
      "--{}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\n"
      "Content-Type: {}\r\n\r\n",
      boundary, upload.field, upload.filename, upload.mime_type);
  body += upload.bytes;
  body += fmt::format("\r\n--{}--\r\n", boundary);
  return body;
}

util::Result<std::string> DecodeSentMessageId(const Json& result) {
  std::optional<std::int64_t> id;
  if (result.is_object()) id = AsInt(result.get_object().if_contains("message_id"));
  if (!id) {
    return util::Fail(ErrorCode::kUpstreamFailed, "telegram answered a send without a message_id");
  }
  return std::to_string(*id);
}

bool IsEntityParseError(const ApiResponse& response) {
  return !response.ok && response.error_code == 400 &&
         response.description.find("can't parse entities") != std::string::npos;
}

}  // namespace sb::platforms::telegram
