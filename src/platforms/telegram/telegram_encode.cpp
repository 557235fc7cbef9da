// Outgoing messages encoded as Bot API calls (the outbound half of telegram_codec.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

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

using util::AppendUtf8;

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

}  // namespace sb::platforms::telegram
