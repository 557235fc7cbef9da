#include "platforms/slack/slack_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/text_units.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::slack {
namespace {

using common::AppendAt;
using common::AppendPlain;
using common::Invalid;
using common::ObjectField;
using common::StringField;
using common::StringOr;
using domain::ElementType;
using domain::MessageElement;
using util::ErrorCode;
using util::Json;
using util::JsonObject;

std::string Unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '&') {
      if (text.substr(i, 5) == "&amp;") {
        out.push_back('&');
        i += 5;
        continue;
      }
      if (text.substr(i, 4) == "&lt;") {
        out.push_back('<');
        i += 4;
        continue;
      }
      if (text.substr(i, 4) == "&gt;") {
        out.push_back('>');
        i += 4;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

// One <...> token of Slack's text, without the brackets.
void DecodeToken(domain::MessageChain& chain, std::string_view token) {
  std::string_view target = token;
  std::string_view label;
  if (const auto bar = token.find('|'); bar != std::string_view::npos) {
    target = token.substr(0, bar);
    label = token.substr(bar + 1);
  }
  if (target.size() > 1 && target[0] == '@') {
    AppendAt(chain, std::string(target.substr(1)));
    return;
  }
  if (target == "!here" || target == "!channel" || target == "!everyone") {
    MessageElement all;
    all.type = ElementType::kAtAll;
    chain.push_back(std::move(all));
    return;
  }
  if (!target.empty() && target[0] == '#') {
    std::string channel(1, '#');  // not "#" + string: GCC 12 warns falsely (bug 105329)
    channel += Unescape(label.empty() ? target.substr(1) : label);
    AppendPlain(chain, channel);
    return;
  }
  if (!target.empty() && target[0] == '!') {  // dates, subteams: show what Slack shows
    AppendPlain(chain, Unescape(label.empty() ? target.substr(1) : label));
    return;
  }
  if (label.empty()) {
    AppendPlain(chain, Unescape(target));
  } else {
    AppendPlain(chain, Unescape(label) + " (" + Unescape(target) + ")");
  }
}

bool IsHttpUrl(std::string_view url) {
  return url.starts_with("https://") || url.starts_with("http://");
}

bool PlausibleId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) return false;
  return std::none_of(id.begin(), id.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == '<' || c == '>' || c == '|';
  });
}

// An inline image: "data:<mime>;base64,<data>" or bare base64. nullopt when it does not decode
// or is over kMaxUploadBytes.
std::optional<Upload> DecodeInlineImage(std::string_view base64) {
  std::string_view mime;
  std::string_view data = base64;
  if (base64.starts_with("data:")) {
    const auto comma = base64.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    mime = base64.substr(5, comma - 5);
    if (const auto semi = mime.find(';'); semi != std::string_view::npos) {
      mime = mime.substr(0, semi);
    }
    data = base64.substr(comma + 1);
  }
  if (data.empty() || data.size() > kMaxUploadBytes / 3 * 4 + 4) return std::nullopt;
  std::string compact;
  compact.reserve(data.size());
  for (char c : data) {
    if (c != '\n' && c != '\r' && c != ' ') compact.push_back(c);
  }
  Upload upload;
  if (!util::Base64Decode(compact, upload.bytes) || upload.bytes.empty() ||
      upload.bytes.size() > kMaxUploadBytes) {
    return std::nullopt;
  }
  std::string_view extension = "png";
  if (mime == "image/jpeg" || mime == "image/jpg") extension = "jpg";
  if (mime == "image/gif") extension = "gif";
  if (mime == "image/webp") extension = "webp";
  upload.filename = "image." + std::string(extension);
  return upload;
}

}  // namespace

std::string Sign(std::string_view signing_secret, std::string_view timestamp,
                 std::string_view body) {
  std::string base;
  base.reserve(4 + timestamp.size() + body.size());
  base.append("v0:").append(timestamp).append(":").append(body);
  return "v0=" + common::HmacSha256Hex(signing_secret, base);
}

bool Verify(std::string_view signing_secret, std::string_view body,
            std::string_view signature_header, std::string_view timestamp_header,
            util::TimePoint now, std::chrono::seconds max_skew) {
  if (signing_secret.empty()) return false;
  if (!common::TimestampWithin(timestamp_header, now, max_skew)) return false;
  return util::ConstantTimeEquals(Sign(signing_secret, timestamp_header, body), signature_header);
}

util::Result<Envelope> DecodeEnvelope(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed) return tl::unexpected(parsed.error());
  if (!parsed->is_object()) return Invalid("the body must be a JSON object");
  const JsonObject& root = parsed->get_object();
  Envelope envelope;
  const auto* type = StringField(root, "type");
  if (type == nullptr || type->empty()) return Invalid("type is required");
  envelope.type = std::string(type->data(), type->size());
  if (envelope.type == "url_verification") {
    const auto* challenge = StringField(root, "challenge");
    if (challenge == nullptr || challenge->empty()) return Invalid("challenge is required");
    if (challenge->size() > 1024) return Invalid("challenge must be at most 1024 bytes");
    envelope.kind = Envelope::Kind::kUrlVerification;
    envelope.challenge = std::string(challenge->data(), challenge->size());
    return envelope;
  }
  if (envelope.type == "event_callback") {
    const JsonObject* event = ObjectField(root, "event");
    if (event == nullptr) return Invalid("event must be an object");
    envelope.kind = Envelope::Kind::kEventCallback;
    envelope.event_id = std::string(StringOr(root, "event_id").substr(0, kMaxIdBytes));
    envelope.event = *event;
    return envelope;
  }
  envelope.kind = Envelope::Kind::kOther;
  if (envelope.type.size() > kMaxIdBytes) envelope.type.resize(kMaxIdBytes);
  return envelope;
}

util::Result<ApiResponse> DecodeApiResponse(int http_status, std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object() || !parsed->get_object().contains("ok")) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("Slack answered HTTP {} without a Web API body", http_status));
  }
  ApiResponse response;
  response.body = std::move(parsed->get_object());
  response.ok = common::IsTrue(response.body, "ok");
  if (!response.ok) {
    response.error = std::string(StringOr(response.body, "error").substr(0, 128));
    if (response.error.empty()) response.error = fmt::format("http_{}", http_status);
  }
  return response;
}

util::Result<Identity> DecodeAuthTest(const ApiResponse& response) {
  Identity identity;
  identity.user_id = std::string(StringOr(response.body, "user_id"));
  identity.bot_id = std::string(StringOr(response.body, "bot_id"));
  identity.team = std::string(StringOr(response.body, "team"));
  if (identity.user_id.empty() || identity.user_id.size() > kMaxIdBytes) {
    return util::Fail(ErrorCode::kUpstreamFailed, "auth.test gave no user_id");
  }
  return identity;
}

util::Result<DecodedEvent> DecodeEvent(const Json& value, const Identity& self) {
  if (!value.is_object()) return Invalid("event must be an object");
  const JsonObject& event = value.get_object();
  DecodedEvent decoded;
  const std::string_view type = StringOr(event, "type");
  if (type != "message" && type != "app_mention") {
    decoded.skipped = fmt::format("event type '{}'", type.substr(0, 64));
    return decoded;
  }
  const std::string_view subtype = StringOr(event, "subtype");
  if (!subtype.empty() && subtype != "file_share" && subtype != "thread_broadcast") {
    decoded.skipped = fmt::format("message subtype '{}'", subtype.substr(0, 64));
    return decoded;
  }
  if (event.contains("bot_id") && !event.at("bot_id").is_null()) {
    decoded.skipped = "a bot's message";
    return decoded;
  }
  auto read_id = [&](std::string_view key, std::string& out) -> util::Result<void> {
    const auto* s = StringField(event, key);
    if (s == nullptr || s->empty()) return Invalid("event." + std::string(key) + " is required");
    if (s->size() > kMaxIdBytes) {
      return Invalid(fmt::format("event.{} must be at most {} bytes", key, kMaxIdBytes));
    }
    out.assign(s->data(), s->size());
    return util::Ok();
  };
  std::string user;
  if (auto r = read_id("channel", decoded.channel); !r) return tl::unexpected(r.error());
  if (auto r = read_id("ts", decoded.ts); !r) return tl::unexpected(r.error());
  if (auto r = read_id("user", user); !r) return tl::unexpected(r.error());
  decoded.thread_ts = std::string(StringOr(event, "thread_ts").substr(0, kMaxIdBytes));
  if (!self.user_id.empty() && user == self.user_id) {
    decoded.skipped = "the bot's own message";
    return decoded;
  }
  const std::string_view text = StringOr(event, "text");
  if (text.size() > kMaxEventTextBytes) {
    return Invalid(fmt::format("event.text must be at most {} bytes", kMaxEventTextBytes));
  }
  domain::ReceivedMessage message;
  const std::string_view channel_type = StringOr(event, "channel_type");
  const bool direct =
      channel_type == "im" || (channel_type.empty() && decoded.channel.starts_with('D'));
  message.chat_type = direct ? domain::TargetType::kPerson : domain::TargetType::kGroup;
  message.chat_id = direct ? user : decoded.channel;
  message.sender_id = user;
  message.message_id = decoded.ts;
  MessageElement source;
  source.type = ElementType::kSource;
  source.id = decoded.ts;
  message.chain.push_back(std::move(source));
  for (auto& element : DecodeText(text)) message.chain.push_back(std::move(element));
  if (message.chain.size() == 1) {
    decoded.skipped = "a message without text";
    return decoded;
  }
  decoded.message = std::move(message);
  return decoded;
}

domain::MessageChain DecodeText(std::string_view text) {
  domain::MessageChain chain;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto open = text.find('<', pos);
    if (open == std::string_view::npos) {
      AppendPlain(chain, Unescape(text.substr(pos)));
      break;
    }
    const auto close = text.find('>', open + 1);
    if (close == std::string_view::npos) {
      AppendPlain(chain, Unescape(text.substr(pos)));
      break;
    }
    AppendPlain(chain, Unescape(text.substr(pos, open - pos)));
    DecodeToken(chain, text.substr(open + 1, close - open - 1));
    pos = close + 1;
  }
  return chain;
}

std::string EscapeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!PlausibleId(message.target_id)) {
    return Invalid("target_id must be a Slack user or conversation id (U…, C…, G…, D…)");
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
        if (!PlausibleId(e.target)) return Invalid(where + ": At needs a Slack user id as target");
        shows_something = true;
        break;
      case ElementType::kAtAll:
        shows_something = true;
        break;
      case ElementType::kImage:
        if (!IsHttpUrl(e.url) && !DecodeInlineImage(e.base64)) {
          return Invalid(
              fmt::format("{}: Image needs an http(s) url or valid base64 of at most {} MiB", where,
                          kMaxUploadBytes / (1024 * 1024)));
        }
        shows_something = true;
        break;
      case ElementType::kVoice:
      case ElementType::kFile:
        if (!IsHttpUrl(e.url)) {
          return Invalid(where + ": " + domain::ElementTypeName(e.type) +
                         " needs an http(s) url on Slack (it is sent as a link)");
        }
        shows_something = true;
        break;
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!shows_something) return Invalid("message_chain has nothing Slack can show");
  return util::Ok();
}

std::vector<OutboundCall> EncodeOutgoing(const domain::OutgoingMessage& message,
                                         std::string_view thread_ts) {
  std::vector<OutboundCall> calls;
  auto base = [&]() {
    JsonObject body;
    body["channel"] = message.target_id;
    if (!thread_ts.empty()) body["thread_ts"] = thread_ts;
    return body;
  };
  std::string text;
  auto flush = [&]() {
    // Whitespace alone is no message (Slack answers no_text).
    const bool blank = std::all_of(text.begin(), text.end(), [](char c) {
      return c == ' ' || c == '\n' || c == '\t' || c == '\r';
    });
    if (!blank) {
      for (auto& piece :
           common::SplitKeepingSeparator(text, kMaxTextChars, common::TextUnit::kCodePoint)) {
        OutboundCall call{base(), std::nullopt};
        call.post["text"] = std::move(piece);
        calls.push_back(std::move(call));
      }
    }
    text.clear();
  };
  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
        text += EscapeText(e.text);
        break;
      case ElementType::kAt:
        text += "<@" + e.target + ">";
        break;
      case ElementType::kAtAll:
        text += "<!channel>";
        break;
      case ElementType::kVoice:
      case ElementType::kFile: {
        const std::string label =
            e.name.empty() ? std::string(domain::ElementTypeName(e.type)) : e.name;
        text += "<" + e.url + "|" + EscapeText(label) + ">";
        break;
      }
      case ElementType::kImage: {
        flush();
        OutboundCall call{base(), std::nullopt};
        if (IsHttpUrl(e.url)) {
          call.post["text"] = "image";  // the notification text; the block shows the picture
          JsonObject block{{"type", "image"}, {"image_url", e.url}, {"alt_text", "image"}};
          call.post["blocks"] = util::JsonArray{std::move(block)};
        } else {
          call.upload = DecodeInlineImage(e.base64);
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

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const auto& [key, value] : fields) {
    if (!out.empty()) out.push_back('&');
    for (const std::string* part : {&key, &value}) {
      for (unsigned char c : *part) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
          out.push_back(static_cast<char>(c));
        } else if (c == ' ') {
          out.push_back('+');
        } else {
          out.push_back('%');
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        }
      }
      if (part == &key) out.push_back('=');
    }
  }
  return out;
}

util::Result<UploadTicket> DecodeUploadTicket(const ApiResponse& response) {
  UploadTicket ticket;
  ticket.upload_url = std::string(StringOr(response.body, "upload_url"));
  ticket.file_id = std::string(StringOr(response.body, "file_id").substr(0, kMaxIdBytes));
  if (!IsHttpUrl(ticket.upload_url) || ticket.file_id.empty()) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "files.getUploadURLExternal gave no upload_url or file_id");
  }
  return ticket;
}

std::string SentTs(const ApiResponse& response) {
  return std::string(StringOr(response.body, "ts").substr(0, kMaxIdBytes));
}

}  // namespace sb::platforms::slack
