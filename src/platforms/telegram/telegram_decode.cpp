// Telegram Bot API answers and Updates decoded (the inbound half of telegram_codec.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"
#include "platforms/common/text_units.hpp"
#include "platforms/telegram/telegram_codec.hpp"
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

// What the user answered: the part of the replied-to message they selected (`quote`, Bot API
// TextQuote), else that message's text or caption. Wrong shapes give nothing: a quote is context,
// never a reason to drop the message.
std::string QuotedText(const JsonObject& msg, const JsonObject& replied) {
  auto string_of = [](const JsonObject& o, std::string_view key) -> std::string {
    const Json* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  if (const Json* quote = msg.if_contains("quote"); quote != nullptr && quote->is_object()) {
    if (std::string text = string_of(quote->get_object(), "text"); !text.empty()) return text;
  }
  std::string text = string_of(replied, "text");
  return text.empty() ? string_of(replied, "caption") : text;
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
    const Json* reply_from = (*reply)->if_contains("from");
    std::string quoted_sender;
    if (reply_from != nullptr && reply_from->is_object()) {
      if (auto id = AsInt(reply_from->get_object().if_contains("id"))) {
        quoted_sender = std::to_string(*id);
      }
    }
    chain.push_back(domain::MakeQuote(std::to_string(*reply_id), QuotedText(msg, **reply),
                                      std::move(quoted_sender)));
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
