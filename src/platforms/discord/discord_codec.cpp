// Discord messages both ways: MESSAGE_CREATE turned into a ReceivedMessage (content, mentions,
// attachments, replies) and the shared message model turned into Create Message calls, plus REST
// error bodies. The gateway's own frames are in discord_gateway_codec.cpp.
#include "platforms/discord/discord_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"
#include "platforms/common/text_units.hpp"
#include "platforms/discord/discord_fields.hpp"
#include "util/crypto.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::discord {
namespace {

using domain::ElementType;
using domain::MessageElement;
using util::ErrorCode;
using util::Json;
using util::JsonArray;
using util::JsonObject;

constexpr std::size_t kMaxAttachmentsRead = 10;

using common::AppendAt;
using common::AppendPlain;
using common::Invalid;

// The user id of a `<@id>` / `<@!id>` mention starting at `i`, and its length; nullopt otherwise.
std::optional<std::pair<std::string, std::size_t>> MentionAt(std::string_view s, std::size_t i) {
  if (s.substr(i, 2) != "<@") return std::nullopt;
  std::size_t j = i + 2;
  if (j < s.size() && s[j] == '!') ++j;
  const std::size_t digits = j;
  while (j < s.size() && j - digits <= 20 && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  if (j == digits || j - digits > 20 || j >= s.size() || s[j] != '>') return std::nullopt;
  return std::make_pair(std::string(s.substr(digits, j - digits)), j + 1 - i);
}

// The content as Plain runs and At elements; true when it mentions `bot`.
bool AppendContent(domain::MessageChain& chain, std::string_view content, std::string_view bot) {
  bool mentions_bot = false;
  std::size_t plain_from = 0;
  for (std::size_t i = content.find("<@"); i != std::string_view::npos; i = content.find("<@", i)) {
    auto mention = MentionAt(content, i);
    if (!mention) {
      i += 2;
      continue;
    }
    AppendPlain(chain, content.substr(plain_from, i - plain_from));
    if (!bot.empty() && mention->first == bot) mentions_bot = true;
    AppendAt(chain, std::move(mention->first));
    i += mention->second;
    plain_from = i;
  }
  AppendPlain(chain, content.substr(plain_from));
  return mentions_bot;
}

bool IsImage(std::string_view content_type, std::string_view filename) {
  if (content_type.starts_with("image/")) return true;
  if (!content_type.empty()) return false;
  std::string lower(filename);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view ext : {".png", ".jpg", ".jpeg", ".gif", ".webp"}) {
    if (lower.ends_with(ext)) return true;
  }
  return false;
}

util::Result<void> AppendAttachments(domain::MessageChain& chain, const JsonObject& d) {
  const Json* raw = Find(d, "attachments");
  if (raw == nullptr || raw->is_null()) return util::Ok();
  if (!raw->is_array()) return Invalid("d.attachments must be an array");
  std::size_t taken = 0;
  for (const Json& a : raw->get_array()) {
    if (taken == kMaxAttachmentsRead) break;
    if (!a.is_object()) return Invalid("d.attachments[] must be objects");
    const JsonObject& o = a.get_object();
    auto url = RequireString(o, "url", "d.attachments[]");
    if (!url) return tl::unexpected(url.error());
    auto filename = OptionalString(o, "filename", "d.attachments[]");
    if (!filename) return tl::unexpected(filename.error());
    auto content_type = OptionalString(o, "content_type", "d.attachments[]");
    if (!content_type) return tl::unexpected(content_type.error());
    MessageElement e;
    e.url = std::move(*url);
    if (IsImage(*content_type, *filename)) {
      e.type = ElementType::kImage;
    } else {
      e.type = ElementType::kFile;
      e.name = Truncated(*filename, kMaxNameBytes);
    }
    chain.push_back(std::move(e));
    ++taken;
  }
  return util::Ok();
}

bool MentionsListNames(const JsonObject& d, std::string_view bot) {
  const Json* raw = Find(d, "mentions");
  if (bot.empty() || raw == nullptr || !raw->is_array()) return false;
  for (const Json& m : raw->get_array()) {
    const Json* id = m.is_object() ? m.get_object().if_contains("id") : nullptr;
    if (id != nullptr && id->is_string() && id->get_string() == bot) return true;
  }
  return false;
}

// The id a reply quotes: message_reference of a default (not forward) reference, else
// referenced_message.id.
std::string QuotedId(const JsonObject& d) {
  if (const Json* ref = Find(d, "message_reference"); ref != nullptr && ref->is_object()) {
    const JsonObject& r = ref->get_object();
    const Json* type = r.if_contains("type");
    const bool forward = type != nullptr && type->is_int64() && type->get_int64() != 0;
    const Json* id = r.if_contains("message_id");
    if (!forward && id != nullptr && id->is_string()) return std::string(id->get_string());
    if (forward) return {};
  }
  if (const Json* ref = Find(d, "referenced_message"); ref != nullptr && ref->is_object()) {
    const Json* id = ref->get_object().if_contains("id");
    if (id != nullptr && id->is_string()) return std::string(id->get_string());
  }
  return {};
}

// The content and author id of the replied-to message (`referenced_message`, which Discord sends
// with a reply), when it is the quoted one; empty when absent or null (deleted, or the content
// withheld without the message content intent).
std::pair<std::string, std::string> ReferencedContent(const JsonObject& d,
                                                      std::string_view quoted_id) {
  const Json* ref = Find(d, "referenced_message");
  if (ref == nullptr || !ref->is_object()) return {};
  const JsonObject& r = ref->get_object();
  const Json* id = r.if_contains("id");
  if (id == nullptr || !id->is_string() || id->get_string() != quoted_id) return {};
  std::pair<std::string, std::string> out;
  if (const Json* content = r.if_contains("content"); content != nullptr && content->is_string()) {
    out.first = std::string(content->get_string());
  }
  if (const Json* author = r.if_contains("author"); author != nullptr && author->is_object()) {
    const Json* author_id = author->get_object().if_contains("id");
    if (author_id != nullptr && author_id->is_string()) {
      out.second = std::string(author_id->get_string());
    }
  }
  return out;
}

std::string SenderName(const JsonObject& d, const JsonObject& author) {
  if (const Json* member = Find(d, "member"); member != nullptr && member->is_object()) {
    const Json* nick = member->get_object().if_contains("nick");
    if (nick != nullptr && nick->is_string() && !nick->get_string().empty()) {
      return Truncated(nick->get_string(), kMaxNameBytes);
    }
  }
  for (std::string_view key : {"global_name", "username"}) {
    const Json* v = author.if_contains(key);
    if (v != nullptr && v->is_string() && !v->get_string().empty()) {
      return Truncated(v->get_string(), kMaxNameBytes);
    }
  }
  return {};
}

// --- outgoing ---

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

std::string SniffMime(std::string_view bytes, std::string_view fallback) {
  if (bytes.starts_with("\x89PNG")) return "image/png";
  if (bytes.starts_with("\xFF\xD8\xFF")) return "image/jpeg";
  if (bytes.starts_with("GIF8")) return "image/gif";
  if (bytes.size() > 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP") {
    return "image/webp";
  }
  if (bytes.starts_with("OggS")) return "audio/ogg";
  return std::string(fallback);
}

std::string Extension(std::string_view mime) {
  if (mime == "image/png") return "png";
  if (mime == "image/jpeg") return "jpg";
  if (mime == "image/gif") return "gif";
  if (mime == "image/webp") return "webp";
  if (mime == "audio/ogg") return "ogg";
  if (mime == "audio/mpeg") return "mp3";
  if (mime == "audio/wav" || mime == "audio/x-wav") return "wav";
  return "bin";
}

bool Deliverable(const MessageElement& e) {
  std::string mime;
  std::string bytes;
  switch (e.type) {
    case ElementType::kImage:
    case ElementType::kVoice:
      return IsHttpUrl(e.url) || DecodeBase64Payload(e.base64, mime, bytes);
    case ElementType::kFile:
      return IsHttpUrl(e.url);
    case ElementType::kAt:
      return IsSnowflake(e.target);
    default:
      return true;
  }
}

const char* WhatIsWrong(const MessageElement& e) {
  switch (e.type) {
    case ElementType::kImage:
      return "Image needs an http(s) url or valid base64";
    case ElementType::kVoice:
      return "Voice needs an http(s) url or valid base64";
    case ElementType::kFile:
      return "File needs an http(s) url";
    case ElementType::kAt:
      return "At needs a Discord user id as target";
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

JsonObject AllowedMentions(bool everyone) {
  JsonArray parse{"users"};
  if (everyone) parse.emplace_back("everyone");
  return JsonObject{{"parse", std::move(parse)}, {"replied_user", true}};
}

}  // namespace

util::Result<DecodedMessage> DecodeMessageCreate(const Json& d, std::string_view bot_user_id) {
  if (!d.is_object()) return Invalid("d must be an object");
  const JsonObject& o = d.get_object();
  auto id = RequireString(o, "id", "d");
  if (!id) return tl::unexpected(id.error());
  auto channel = RequireString(o, "channel_id", "d");
  if (!channel) return tl::unexpected(channel.error());
  auto guild = OptionalString(o, "guild_id", "d");
  if (!guild) return tl::unexpected(guild.error());
  const Json* author_json = o.if_contains("author");
  if (author_json == nullptr || !author_json->is_object()) {
    return Invalid("d.author must be an object");
  }
  const JsonObject& author = author_json->get_object();
  auto author_id = RequireString(author, "id", "d.author");
  if (!author_id) return tl::unexpected(author_id.error());
  auto content = OptionalString(o, "content", "d");
  if (!content) return tl::unexpected(content.error());

  DecodedMessage decoded;
  decoded.channel_id = *channel;
  if (TrueField(author, "bot") || *author_id == bot_user_id) return decoded;
  if (const Json* type = o.if_contains("type"); type != nullptr) {
    // 0 DEFAULT and 19 REPLY carry what a person wrote; the others are system messages.
    if (!type->is_int64()) return Invalid("d.type must be an integer");
    if (type->get_int64() != 0 && type->get_int64() != 19) return decoded;
  }

  domain::ReceivedMessage m;
  if (guild->empty()) {
    m.chat_type = domain::TargetType::kPerson;
    m.chat_id = *author_id;
  } else {
    m.chat_type = domain::TargetType::kGroup;
    m.chat_id = *channel;
  }
  m.sender_id = *author_id;
  m.sender_name = SenderName(o, author);
  m.message_id = *id;
  MessageElement source;
  source.type = ElementType::kSource;
  source.id = *id;
  m.chain.push_back(std::move(source));
  if (std::string quoted = QuotedId(o); !quoted.empty()) {
    auto [text, author_of_quoted] = ReferencedContent(o, quoted);
    m.chain.push_back(
        domain::MakeQuote(std::move(quoted), std::move(text), std::move(author_of_quoted)));
  }
  domain::MessageChain body;
  const bool content_mentions = AppendContent(body, *content, bot_user_id);
  if (!content_mentions && MentionsListNames(o, bot_user_id)) {
    AppendAt(m.chain, std::string(bot_user_id));
  }
  if (auto attached = AppendAttachments(body, o); !attached) {
    return tl::unexpected(attached.error());
  }
  if (body.empty()) return decoded;  // nothing a model could read (an embed-only message)
  for (auto& e : body) m.chain.push_back(std::move(e));
  decoded.message = std::move(m);
  return decoded;
}

bool IsSnowflake(std::string_view s) {
  return !s.empty() && s.size() <= 20 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!IsSnowflake(message.target_id)) {
    return Invalid("target_id must be a Discord id (a snowflake: digits only)");
  }
  bool shows = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    if (!Deliverable(e)) return Invalid(fmt::format("message_chain[{}]: {}", i, WhatIsWrong(e)));
    shows = shows || Shows(e);
  }
  if (!shows) return Invalid("message_chain has nothing Discord can show");
  return util::Ok();
}

util::Result<std::vector<OutboundCall>> EncodeOutgoing(const domain::OutgoingMessage& message,
                                                       std::string_view reply_to_message_id) {
  if (auto ok = CheckDeliverable(message); !ok) return tl::unexpected(ok.error());
  std::string text;
  std::string quote;
  bool everyone = false;
  JsonArray embeds;
  std::vector<Upload> uploads;
  auto append_line = [&text](std::string_view line) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += line;
  };
  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
        text += e.text;
        break;
      case ElementType::kAt:
        text += fmt::format("<@{}>", e.target);
        break;
      case ElementType::kAtAll:
        text += "@everyone";
        everyone = true;
        break;
      case ElementType::kQuote:
        if (quote.empty() && IsSnowflake(e.id)) quote = e.id;
        break;
      case ElementType::kSource:
        break;
      case ElementType::kFile:
        append_line(e.url);
        break;
      case ElementType::kImage:
      case ElementType::kVoice: {
        Upload upload;
        std::string mime;
        if (!e.base64.empty() && DecodeBase64Payload(e.base64, mime, upload.bytes)) {
          const bool image = e.type == ElementType::kImage;
          upload.mime_type =
              SniffMime(upload.bytes, !mime.empty() ? std::string_view(mime)
                                                    : (image ? "image/png" : "audio/ogg"));
          upload.filename = fmt::format("{}{}.{}", image ? "image" : "voice", uploads.size(),
                                        Extension(upload.mime_type));
          uploads.push_back(std::move(upload));
        } else if (e.type == ElementType::kImage) {
          embeds.emplace_back(JsonObject{{"image", JsonObject{{"url", e.url}}}});
        } else {
          append_line(e.url);
        }
        break;
      }
    }
  }
  if (quote.empty() && message.target_type == domain::TargetType::kGroup &&
      IsSnowflake(reply_to_message_id)) {
    quote = std::string(reply_to_message_id);
  }

  std::vector<OutboundCall> calls;
  auto new_call = [&]() -> OutboundCall& {
    OutboundCall call;
    call.payload["allowed_mentions"] = AllowedMentions(everyone);
    if (calls.empty() && !quote.empty()) {
      call.payload["message_reference"] =
          JsonObject{{"message_id", quote}, {"fail_if_not_exists", false}};
    }
    calls.push_back(std::move(call));
    return calls.back();
  };
  for (std::string& piece : common::SplitDroppingSeparator(text, kMaxContentChars)) {
    if (piece.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    new_call().payload["content"] = std::move(piece);
  }
  // Media ride on the last text call, then on calls of their own, 10 of each kind per call.
  std::size_t next_embed = 0;
  std::size_t next_upload = 0;
  bool reuse_last = !calls.empty();
  while (next_embed < embeds.size() || next_upload < uploads.size()) {
    OutboundCall& call = reuse_last ? calls.back() : new_call();
    reuse_last = false;
    if (next_embed < embeds.size()) {
      JsonArray part;
      for (; next_embed < embeds.size() && part.size() < kMaxEmbeds; ++next_embed) {
        part.push_back(embeds[next_embed]);
      }
      call.payload["embeds"] = std::move(part);
    }
    if (next_upload < uploads.size()) {
      JsonArray attachments;
      for (; next_upload < uploads.size() && call.uploads.size() < kMaxFiles; ++next_upload) {
        attachments.emplace_back(
            JsonObject{{"id", call.uploads.size()}, {"filename", uploads[next_upload].filename}});
        call.uploads.push_back(std::move(uploads[next_upload]));
      }
      call.payload["attachments"] = std::move(attachments);
    }
  }
  if (calls.empty()) return Invalid("message_chain has nothing Discord can show");
  return calls;
}

std::string EncodeMultipart(const OutboundCall& call, std::string_view boundary) {
  std::string body;
  body += fmt::format(
      "--{}\r\nContent-Disposition: form-data; name=\"payload_json\"\r\n"
      "Content-Type: application/json\r\n\r\n",
      boundary);
  body += util::SerializeJson(call.payload);
  body += "\r\n";
  for (std::size_t i = 0; i < call.uploads.size(); ++i) {
    const Upload& u = call.uploads[i];
    body += fmt::format(
        "--{}\r\nContent-Disposition: form-data; name=\"files[{}]\"; filename=\"{}\"\r\n"
        "Content-Type: {}\r\n\r\n",
        boundary, i, u.filename, u.mime_type);
    body += u.bytes;
    body += "\r\n";
  }
  body += fmt::format("--{}--\r\n", boundary);
  return body;
}

RestError DecodeRestError(int status, std::string_view retry_after_header, std::string_view body) {
  RestError error;
  error.status = status;
  auto parsed = util::ParseJson(body);
  if (parsed && parsed->is_object()) {
    const JsonObject& o = parsed->get_object();
    if (const Json* m = o.if_contains("message"); m != nullptr && m->is_string()) {
      error.message = Truncated(util::ToValidUtf8(m->get_string()), 300);
    }
    if (const Json* c = o.if_contains("code"); c != nullptr && c->is_int64()) {
      error.code = static_cast<int>(std::clamp<std::int64_t>(c->get_int64(), -1, 1'000'000));
    }
    if (const Json* r = o.if_contains("retry_after"); r != nullptr && r->is_number()) {
      const double seconds = r->to_number<double>();
      if (std::isfinite(seconds) && seconds > 0) error.retry_after = seconds;
    }
    error.global = TrueField(o, "global");
  }
  if (error.retry_after <= 0 && !retry_after_header.empty()) {
    try {
      const double seconds = std::stod(std::string(retry_after_header.substr(0, 32)));
      if (std::isfinite(seconds) && seconds > 0) error.retry_after = seconds;
    } catch (const std::exception&) {
      // An unreadable header leaves retry_after at 0: the caller's own backoff applies.
    }
  }
  if (error.message.empty()) error.message = fmt::format("HTTP {}", status);
  return error;
}

util::Result<std::string> DecodeId(std::string_view body) {
  auto parsed = util::ParseJson(body);
  const Json* id = parsed && parsed->is_object() ? parsed->get_object().if_contains("id") : nullptr;
  if (id == nullptr || !id->is_string() || !IsSnowflake(id->get_string())) {
    return util::Fail(ErrorCode::kUpstreamFailed, "Discord answered without an id");
  }
  return std::string(id->get_string());
}

}  // namespace sb::platforms::discord
