#include "platforms/wecombot/wecombot_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/wechat_crypto.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::wecombot {
namespace {

using common::AppendPlain;
using common::ArrayField;
using common::Invalid;
using common::ObjectField;
using common::StringField;
using common::StringOr;
using domain::ElementType;
using domain::MessageElement;
using util::Json;
using util::JsonObject;

constexpr std::size_t kMaxErrmsgBytes = 200;
constexpr std::size_t kMaxImagesPerMessage = 10;

util::Result<std::string> BoundedId(const JsonObject& obj, std::string_view key,
                                    std::string_view where, bool required) {
  const auto* s = StringField(obj, key);
  if (s == nullptr || s->empty()) {
    if (required) return Invalid(fmt::format("{}{} is required", where, key));
    return std::string();
  }
  if (s->size() > kMaxIdBytes) {
    return Invalid(fmt::format("{}{} must be at most {} bytes", where, key, kMaxIdBytes));
  }
  return std::string(s->data(), s->size());
}

// The `content` of a {"content": ...} object field, e.g. text.content.
std::string_view ContentOf(const JsonObject& obj, std::string_view key) {
  const JsonObject* inner = ObjectField(obj, key);
  return inner == nullptr ? std::string_view() : StringOr(*inner, "content");
}

void AppendImage(domain::ReceivedMessage& message, std::vector<PendingImage>& images,
                 const JsonObject* image) {
  if (image == nullptr || images.size() >= kMaxImagesPerMessage) return;
  const std::string_view url = StringOr(*image, "url");
  if (url.empty()) return;
  MessageElement element;
  element.type = ElementType::kImage;
  message.chain.push_back(std::move(element));
  images.push_back(
      {message.chain.size() - 1, std::string(url), std::string(StringOr(*image, "aeskey"))});
}

std::string QuotedText(const JsonObject& quote) {
  const std::string_view type = StringOr(quote, "msgtype");
  if (type == "text" || type == "voice") return std::string(ContentOf(quote, type));
  if (type == "image") return "[Image]";
  if (type == "file") return "[File]";
  if (type != "mixed") return {};
  std::string out;
  const JsonObject* mixed = ObjectField(quote, "mixed");
  const util::JsonArray* items = mixed ? ArrayField(*mixed, "msg_item") : nullptr;
  if (items == nullptr) return out;
  for (const Json& item : *items) {
    if (!item.is_object() || out.size() > domain::kMaxQuotedTextBytes) continue;
    const std::string_view item_type = StringOr(item.get_object(), "msgtype");
    if (item_type == "text") out += ContentOf(item.get_object(), "text");
    if (item_type == "image") out += "[Image]";
  }
  return out;
}

bool IsHttpUrl(std::string_view url) {
  return url.size() <= 2048 && (url.starts_with("https://") || url.starts_with("http://"));
}

}  // namespace

util::Result<Callback> DecodeCallback(const Json& body, std::string_view bot_id) {
  if (!body.is_object()) return Invalid("the callback is not a JSON object");
  const JsonObject& obj = body.get_object();
  Callback cb;
  auto msgid = BoundedId(obj, "msgid", "", false);
  if (!msgid) return tl::unexpected(msgid.error());
  cb.msgid = std::move(*msgid);
  auto aibotid = BoundedId(obj, "aibotid", "", false);
  if (!aibotid) return tl::unexpected(aibotid.error());
  cb.aibotid = std::move(*aibotid);
  const std::string_view msgtype = StringOr(obj, "msgtype");

  if (msgtype == "stream") {
    const JsonObject* stream = ObjectField(obj, "stream");
    if (stream == nullptr) return Invalid("stream is required in a refresh callback");
    auto id = BoundedId(*stream, "id", "stream.", true);
    if (!id) return tl::unexpected(id.error());
    cb.kind = CallbackKind::kStreamRefresh;
    cb.stream_id = std::move(*id);
    return cb;
  }
  if (msgtype == "event" || ObjectField(obj, "event") != nullptr) {
    cb.kind = CallbackKind::kEvent;
    if (const JsonObject* event = ObjectField(obj, "event")) {
      cb.event_type = std::string(StringOr(*event, "eventtype"));
    }
    return cb;
  }

  cb.kind = CallbackKind::kMessage;
  if (cb.msgid.empty()) return Invalid("msgid is required");
  const std::string_view chattype = StringOr(obj, "chattype");
  const JsonObject* from = ObjectField(obj, "from");
  if (from == nullptr) return Invalid("from is required");
  auto userid = BoundedId(*from, "userid", "from.", true);
  if (!userid) return tl::unexpected(userid.error());

  domain::ReceivedMessage message;
  message.sender_id = *userid;
  message.sender_name = *userid;
  message.message_id = cb.msgid;
  if (chattype == "group") {
    auto chatid = BoundedId(obj, "chatid", "", true);
    if (!chatid) return tl::unexpected(chatid.error());
    message.chat_type = domain::TargetType::kGroup;
    message.chat_id = std::move(*chatid);
  } else if (chattype == "single" || chattype.empty()) {
    message.chat_type = domain::TargetType::kPerson;
    message.chat_id = *userid;
  } else {
    return Invalid(fmt::format("chattype must be single or group, not {:.20}", chattype));
  }

  MessageElement source;
  source.type = ElementType::kSource;
  source.id = cb.msgid;
  message.chain.push_back(std::move(source));
  // WeCom delivers only the messages that @ the bot in groups; the mention is in the text
  // ("@RobotName ..."), with no structured form, so it is stated as an At of the bot.
  const std::string at = bot_id.empty() ? cb.aibotid : std::string(bot_id);
  if (message.chat_type == domain::TargetType::kGroup && !at.empty()) {
    common::AppendAt(message.chain, at);
  }

  if (const JsonObject* quote = ObjectField(obj, "quote")) {
    // A quoted message (接收消息, 引用): text, voice (its transcript), image, mixed or file; it
    // has no id.
    message.chain.push_back(domain::MakeQuote({}, QuotedText(*quote)));
  }
  const std::size_t before = message.chain.size();
  if (msgtype == "text") {
    AppendPlain(message.chain, ContentOf(obj, "text"));
  } else if (msgtype == "markdown") {
    std::string_view text = ContentOf(obj, "markdown");
    AppendPlain(message.chain, text.empty() ? ContentOf(obj, "text") : text);
  } else if (msgtype == "voice") {
    // WeCom transcribes voice messages; the text is what the user said.
    AppendPlain(message.chain, ContentOf(obj, "voice"));
  } else if (msgtype == "image") {
    AppendImage(message, cb.images, ObjectField(obj, "image"));
  } else if (msgtype == "mixed") {
    const JsonObject* mixed = ObjectField(obj, "mixed");
    const util::JsonArray* items = mixed ? ArrayField(*mixed, "msg_item") : nullptr;
    if (items == nullptr) return Invalid("mixed.msg_item is required");
    for (const Json& item : *items) {
      if (!item.is_object()) continue;
      const JsonObject& it = item.get_object();
      const std::string_view type = StringOr(it, "msgtype");
      if (type == "text") {
        AppendPlain(message.chain, ContentOf(it, "text"));
      } else if (type == "image") {
        AppendImage(message, cb.images, ObjectField(it, "image"));
      }
    }
  } else {
    cb.skipped = fmt::format("a {:.20} message, which the bot does not read",
                             msgtype.empty() ? "untyped" : msgtype);
    return cb;
  }
  if (message.chain.size() == before) {
    cb.skipped = "an empty message";
    cb.images.clear();
    return cb;
  }
  cb.message = std::move(message);
  return cb;
}

util::Result<Frame> DecodeFrame(std::string_view text) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return tl::unexpected(parsed.error());
  if (!parsed->is_object()) return Invalid("the frame is not a JSON object");
  const JsonObject& obj = parsed->get_object();
  Frame frame;
  frame.cmd = std::string(StringOr(obj, "cmd"));
  if (const JsonObject* headers = ObjectField(obj, "headers")) {
    auto req_id = BoundedId(*headers, "req_id", "headers.", false);
    if (!req_id) return tl::unexpected(req_id.error());
    frame.req_id = std::move(*req_id);
  }
  frame.errcode = common::IntField(obj, "errcode");
  frame.errmsg = std::string(StringOr(obj, "errmsg"));
  if (frame.errmsg.size() > kMaxErrmsgBytes) frame.errmsg.resize(kMaxErrmsgBytes);
  if (const Json* body = obj.if_contains("body")) frame.body = *body;
  return frame;
}

std::string NewReqId(std::string_view prefix, std::int64_t unix_ms) {
  unsigned char random[4];
  util::RandomBytes(random, sizeof random);
  return fmt::format("{}_{}_{}", prefix, unix_ms,
                     util::HexEncode(std::string_view(reinterpret_cast<char*>(random), 4)));
}

std::string EncodeSubscribe(std::string_view req_id, std::string_view bot_id,
                            std::string_view secret) {
  JsonObject body;
  body["bot_id"] = bot_id;
  body["secret"] = secret;
  return EncodeCommand("aibot_subscribe", req_id, body);
}

std::string EncodePing(std::string_view req_id) {
  JsonObject frame;
  frame["cmd"] = "ping";
  frame["headers"] = JsonObject{{"req_id", req_id}};
  return util::SerializeJson(frame);
}

std::string EncodeCommand(std::string_view cmd, std::string_view req_id, const JsonObject& body) {
  JsonObject frame;
  frame["cmd"] = cmd;
  frame["headers"] = JsonObject{{"req_id", req_id}};
  frame["body"] = body;
  return util::SerializeJson(frame);
}

JsonObject StreamBody(std::string_view stream_id, std::string_view content, bool finish) {
  JsonObject stream;
  stream["id"] = stream_id;
  stream["finish"] = finish;
  stream["content"] = content;
  JsonObject body;
  body["msgtype"] = "stream";
  body["stream"] = std::move(stream);
  return body;
}

JsonObject SendMsgBody(std::string_view chat_id, std::string_view content) {
  JsonObject body;
  body["chatid"] = chat_id;
  body["msgtype"] = "markdown";
  body["markdown"] = JsonObject{{"content", content}};
  return body;
}

std::string DescribeAck(const Frame& ack) {
  const std::int64_t code = ack.errcode.value_or(-1);
  if (ack.errmsg.empty()) return fmt::format("errcode {}", code);
  return fmt::format("errcode {} ({})", code, ack.errmsg);
}

util::Result<std::string> EncodeEnvelope(std::string_view aes_key, std::string_view token,
                                         std::string_view plaintext, std::string_view timestamp,
                                         std::string_view nonce, std::string_view random16) {
  auto encrypt = common::WeChatEncrypt(aes_key, plaintext, "", random16);
  if (!encrypt) return tl::unexpected(encrypt.error());
  JsonObject envelope;
  envelope["encrypt"] = *encrypt;
  envelope["msgsignature"] = common::WeChatSignature(token, timestamp, nonce, *encrypt);
  envelope["timestamp"] = timestamp;
  envelope["nonce"] = nonce;
  return util::SerializeJson(envelope);
}

util::Result<std::string> DecryptMedia(std::string_view aeskey, std::string_view data) {
  std::string padded(aeskey);
  while (padded.size() % 4 != 0) padded.push_back('=');
  std::string key;
  if (!util::Base64Decode(padded, key) || key.size() != 32) {
    return Invalid("the media aeskey is not base64 of 32 bytes");
  }
  if (data.empty() || data.size() % 16 != 0) {
    return Invalid("the encrypted media is not whole AES blocks");
  }
  std::string plain;
  if (!util::Aes256CbcDecrypt(key, std::string_view(key).substr(0, 16), data, plain) ||
      plain.empty()) {
    return Invalid("the media could not be decrypted");
  }
  const auto pad = static_cast<unsigned char>(plain.back());
  if (pad < 1 || pad > 32 || pad > plain.size() ||
      !std::all_of(plain.end() - pad, plain.end(),
                   [pad](char c) { return static_cast<unsigned char>(c) == pad; })) {
    return Invalid("the decrypted media has wrong padding");
  }
  plain.resize(plain.size() - pad);
  return plain;
}

std::string ImageDataUrl(std::string_view bytes) {
  std::string_view mime = "application/octet-stream";
  if (bytes.starts_with("\xff\xd8")) {
    mime = "image/jpeg";
  } else if (bytes.starts_with("\x89PNG")) {
    mime = "image/png";
  } else if (bytes.starts_with("GIF87a") || bytes.starts_with("GIF89a")) {
    mime = "image/gif";
  } else if (bytes.starts_with("RIFF") && bytes.size() > 12 && bytes.substr(8, 4) == "WEBP") {
    mime = "image/webp";
  } else if (bytes.starts_with("BM")) {
    mime = "image/bmp";
  }
  std::string out = fmt::format("data:{};base64,", mime);
  out += common::Base64Encode(bytes);
  return out;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (message.target_id.empty() || message.target_id.size() > kMaxIdBytes) {
    return Invalid("target_id must be a WeCom userid (person) or chatid (group)");
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
      case ElementType::kAtAll:
        break;  // dropped, as LangBot does: replies are already tied to the asker
      case ElementType::kImage:
        if (!IsHttpUrl(e.url)) {
          // Replies are markdown / stream text: an image goes as a link to where it lives.
          return Invalid(where +
                         ": the WeCom AI bot takes images here only as an http(s) url "
                         "(sent as a link in the reply text); send the image's url");
        }
        shows_something = true;
        break;
      case ElementType::kFile:
        if (!IsHttpUrl(e.url)) return Invalid(where + ": File needs an http(s) url on WeCom");
        shows_something = true;
        break;
      case ElementType::kVoice:
        return Invalid(where + ": Voice cannot be sent by the WeCom AI bot adapter");
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!shows_something) return Invalid("message_chain has nothing WeCom can show");
  return util::Ok();
}

std::string RenderMarkdown(const domain::MessageChain& chain) {
  std::string out;
  for (const MessageElement& e : chain) {
    switch (e.type) {
      case ElementType::kPlain:
        out += e.text;
        break;
      case ElementType::kImage:
        if (!out.empty() && out.back() != '\n') out += '\n';
        out += "![image](" + e.url + ")\n";
        break;
      case ElementType::kFile:
        if (!out.empty() && out.back() != '\n') out += '\n';
        out += "[" + (e.name.empty() ? std::string("file") : e.name) + "](" + e.url + ")\n";
        break;
      case ElementType::kAt:
      case ElementType::kAtAll:
      case ElementType::kVoice:
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  return out;
}

std::vector<std::string> SplitBytes(std::string_view text, std::size_t max_bytes) {
  std::vector<std::string> pieces;
  if (max_bytes < 4) max_bytes = 4;  // one UTF-8 character must fit
  while (!text.empty()) {
    if (text.size() <= max_bytes) {
      pieces.emplace_back(text);
      break;
    }
    std::size_t cut = text.rfind('\n', max_bytes - 1);
    if (cut == std::string_view::npos || cut == 0) {
      cut = max_bytes;
      // Back off continuation bytes (10xxxxxx) so a character is never split.
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
      if (cut == 0) cut = max_bytes;
    } else {
      cut += 1;  // the line break stays with its piece
    }
    pieces.emplace_back(text.substr(0, cut));
    text.remove_prefix(cut);
  }
  return pieces;
}

}  // namespace sb::platforms::wecombot
