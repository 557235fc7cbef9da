#include "platforms/webhook/webhook_codec.hpp"

#include <charconv>
#include <limits>
#include <optional>
#include <utility>

#include "domain/message_json.hpp"
#include "platforms/common/chain_builder.hpp"
#include "util/crypto.hpp"
#include "util/json.hpp"

namespace sb::platforms::webhook {
namespace {

constexpr std::string_view kSignaturePrefix = "sha256=";

// Decimal digits only: a sign, spaces or a fraction would give one request several spellings of
// the same signed time, and 12 digits reach the year 33658 without any risk of overflow below.
std::optional<std::int64_t> ParseUnixSeconds(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  if (text.size() > 1 && text[0] == '0') return std::nullopt;  // one spelling per time
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

using common::Invalid;
using util::Json;
using util::JsonObject;

constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

// Reads the string member `key` of `obj` into `out`. Absent is fine unless `required`; a present
// member of another JSON type, an empty required one, or one over `max_bytes` is an error naming
// `where` + key.
util::Result<bool> ReadString(const JsonObject& obj, std::string_view key, const std::string& where,
                              bool required, std::size_t max_bytes, std::string& out) {
  const std::string field = where + std::string(key);
  const Json* value = obj.if_contains(key);
  if (value == nullptr || value->is_null()) {
    if (required) return Invalid(field + " is required");
    return false;
  }
  if (!value->is_string()) {
    return Invalid(field + " must be a string, not " + util::JsonKindName(*value));
  }
  const auto& s = value->get_string();
  if (required && s.empty()) return Invalid(field + " must not be empty");
  if (s.size() > max_bytes) {
    return Invalid(field + " must be at most " + std::to_string(max_bytes) + " bytes");
  }
  out.assign(s.data(), s.size());
  return true;
}

util::Result<const JsonObject*> ReadObject(const JsonObject& obj, std::string_view key) {
  const Json* value = obj.if_contains(key);
  if (value == nullptr) return Invalid(std::string(key) + " is required");
  if (!value->is_object()) {
    return Invalid(std::string(key) + " must be an object, not " + util::JsonKindName(*value));
  }
  return &value->get_object();
}

util::Result<domain::TargetType> ParseTargetType(const JsonObject& obj, const std::string& where) {
  std::string type;
  if (auto r = ReadString(obj, "type", where, true, kMaxIdBytes, type); !r) {
    return tl::unexpected(r.error());
  }
  if (type == "person") return domain::TargetType::kPerson;
  if (type == "group") return domain::TargetType::kGroup;
  return Invalid(where + "type must be person or group");
}

const char* TargetTypeName(domain::TargetType type) {
  return type == domain::TargetType::kGroup ? "group" : "person";
}

// The chain of an inbound message with the inbound bounds.
domain::ChainBounds InboundBounds() {
  return {kMaxElements, kMaxTextBytes, kMaxIdBytes, kMaxNameBytes, kMaxUrlBytes};
}

util::Result<JsonObject> ParseRoot(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed) return tl::unexpected(parsed.error());
  if (!parsed->is_object()) {
    return Invalid(std::string("body must be a JSON object, not ") + util::JsonKindName(*parsed));
  }
  return std::move(parsed->get_object());
}

}  // namespace

std::string Sign(std::string_view secret, std::string_view body) {
  return std::string(kSignaturePrefix) + util::HexEncode(util::HmacSha256(secret, body));
}

std::string SignTimestamped(std::string_view secret, std::int64_t unix_seconds,
                            std::string_view body) {
  std::string payload = std::to_string(unix_seconds);
  payload += '.';
  payload += body;
  return Sign(secret, payload);
}

bool Verify(std::string_view secret, std::string_view body, std::string_view signature_header,
            std::string_view timestamp_header, util::TimePoint now, std::chrono::seconds max_skew) {
  if (secret.empty()) return false;
  const auto timestamp = ParseUnixSeconds(timestamp_header);
  if (!timestamp) return false;
  const std::int64_t skew = util::ToUnixSeconds(now) - *timestamp;
  if (skew > max_skew.count() || -skew > max_skew.count()) return false;
  // The expected value is compared whole, prefix included, so a header of another scheme or
  // length fails without a separate, timing-visible branch on its content.
  return util::ConstantTimeEquals(SignTimestamped(secret, *timestamp, body), signature_header);
}

util::Result<InboundMessage> DecodeInbound(std::string_view body) {
  auto root = ParseRoot(body);
  if (!root) return tl::unexpected(root.error());
  InboundMessage msg;
  if (auto r = ReadString(*root, "message_id", "", true, kMaxIdBytes, msg.message_id); !r) {
    return tl::unexpected(r.error());
  }
  auto sender = ReadObject(*root, "sender");
  if (!sender) return tl::unexpected(sender.error());
  if (auto r = ReadString(**sender, "id", "sender.", true, kMaxIdBytes, msg.sender_id); !r) {
    return tl::unexpected(r.error());
  }
  if (auto r = ReadString(**sender, "name", "sender.", false, kMaxNameBytes, msg.sender_name); !r) {
    return tl::unexpected(r.error());
  }
  auto chat = ReadObject(*root, "chat");
  if (!chat) return tl::unexpected(chat.error());
  auto chat_type = ParseTargetType(**chat, "chat.");
  if (!chat_type) return tl::unexpected(chat_type.error());
  msg.chat_type = *chat_type;
  if (auto r = ReadString(**chat, "id", "chat.", true, kMaxIdBytes, msg.chat_id); !r) {
    return tl::unexpected(r.error());
  }
  auto chain = domain::DecodeMessageChain(*root, "message_chain", InboundBounds());
  if (!chain) return tl::unexpected(chain.error());
  msg.chain = std::move(*chain);
  if (const Json* ts = root->if_contains("timestamp"); ts != nullptr && !ts->is_null()) {
    if (ts->is_int64() && ts->get_int64() >= 0) {
      msg.timestamp = ts->get_int64();
    } else if (ts->is_uint64() &&
               ts->get_uint64() <=
                   static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      msg.timestamp = static_cast<std::int64_t>(ts->get_uint64());
    } else {
      return Invalid("timestamp must be a non-negative integer (unix seconds)");
    }
  }
  return msg;
}

std::string EncodeOutbound(const domain::OutgoingMessage& msg, std::string_view bot_uuid,
                           std::string_view reply_to_message_id) {
  JsonObject root;
  root["bot_uuid"] = bot_uuid;
  JsonObject target;
  target["type"] = TargetTypeName(msg.target_type);
  target["id"] = msg.target_id;
  root["target"] = std::move(target);
  if (!reply_to_message_id.empty()) root["reply_to"] = reply_to_message_id;
  util::JsonArray chain;
  chain.reserve(msg.chain.size());
  for (const auto& e : msg.chain) chain.push_back(domain::EncodeMessageElement(e));
  root["message_chain"] = std::move(chain);
  return util::SerializeJson(root);
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& msg) {
  if (msg.target_id.empty()) return Invalid("target.id must not be empty");
  if (msg.chain.empty()) return Invalid("message_chain must hold at least one element");
  using domain::ElementType;
  for (std::size_t i = 0; i < msg.chain.size(); ++i) {
    const auto& e = msg.chain[i];
    const std::string where = "message_chain[" + std::to_string(i) + "]";
    const std::string type = domain::ElementTypeName(e.type);
    switch (e.type) {
      case ElementType::kSource:
        return Invalid(where + " (Source) cannot be sent through the webhook adapter");
      case ElementType::kImage:
      case ElementType::kVoice:
        if (e.url.empty() && e.base64.empty()) {
          return Invalid(where + " (" + type + ") needs url or base64");
        }
        break;
      case ElementType::kFile:
        if (e.url.empty()) return Invalid(where + ".url is required for File");
        break;
      case ElementType::kAt:
        if (e.target.empty()) return Invalid(where + ".target is required for At");
        break;
      case ElementType::kQuote:
        if (e.id.empty()) return Invalid(where + ".id is required for Quote");
        break;
      case ElementType::kPlain:
      case ElementType::kAtAll:
        break;
    }
  }
  return util::Ok();
}

util::Result<OutboundMessage> DecodeOutbound(std::string_view body) {
  auto root = ParseRoot(body);
  if (!root) return tl::unexpected(root.error());
  OutboundMessage out;
  if (auto r = ReadString(*root, "bot_uuid", "", true, kUnbounded, out.bot_uuid); !r) {
    return tl::unexpected(r.error());
  }
  if (auto r = ReadString(*root, "reply_to", "", false, kUnbounded, out.reply_to); !r) {
    return tl::unexpected(r.error());
  }
  auto target = ReadObject(*root, "target");
  if (!target) return tl::unexpected(target.error());
  auto type = ParseTargetType(**target, "target.");
  if (!type) return tl::unexpected(type.error());
  out.message.target_type = *type;
  if (auto r = ReadString(**target, "id", "target.", true, kUnbounded, out.message.target_id); !r) {
    return tl::unexpected(r.error());
  }
  auto chain = domain::DecodeMessageChain(*root, "message_chain", domain::ChainBounds::Unbounded());
  if (!chain) return tl::unexpected(chain.error());
  out.message.chain = std::move(*chain);
  return out;
}

}  // namespace sb::platforms::webhook
