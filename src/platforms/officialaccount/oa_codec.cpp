#include "platforms/officialaccount/oa_codec.hpp"

#include <fmt/format.h>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/text_units.hpp"
#include "util/json.hpp"

namespace sb::platforms::officialaccount {
namespace {

using common::FieldOr;
using common::Invalid;
using domain::ElementType;
using domain::MessageElement;

constexpr std::size_t kMaxIdBytes = 128;
constexpr std::size_t kMaxTextBytes = 64 * 1024;

bool PlausibleOpenId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

util::Result<DecodedCallback> DecodeCallback(const common::WeChatFields& fields) {
  DecodedCallback decoded;
  decoded.user_openid = std::string(FieldOr(fields, "FromUserName"));
  decoded.account_id = std::string(FieldOr(fields, "ToUserName"));
  if (!PlausibleOpenId(decoded.user_openid)) return Invalid("FromUserName is missing or invalid");
  if (decoded.account_id.empty() || decoded.account_id.size() > kMaxIdBytes) {
    return Invalid("ToUserName is missing or invalid");
  }
  const std::string_view type = FieldOr(fields, "MsgType");
  const std::string_view msg_id = FieldOr(fields, "MsgId");
  if (msg_id.size() > kMaxIdBytes) return Invalid("MsgId is too long");
  decoded.delivery_id = msg_id.empty() ? fmt::format("{}@{}", decoded.user_openid,
                                                     FieldOr(fields, "CreateTime").substr(0, 32))
                                       : std::string(msg_id);
  if (type == "event") {
    decoded.skipped = fmt::format("a {} event", FieldOr(fields, "Event").substr(0, 32));
    return decoded;
  }
  if (msg_id.empty()) return Invalid("MsgId is missing");

  domain::ReceivedMessage received;
  received.chat_type = domain::TargetType::kPerson;
  received.chat_id = decoded.user_openid;
  received.sender_id = decoded.user_openid;
  received.sender_name = decoded.user_openid;  // WeChat does not say more without another call
  received.message_id = std::string(msg_id);
  MessageElement source;
  source.type = ElementType::kSource;
  source.id = received.message_id;
  received.chain.push_back(std::move(source));

  if (type == "text") {
    const std::string_view text = FieldOr(fields, "Content");
    if (text.size() > kMaxTextBytes) return Invalid("Content is too long");
    common::AppendPlain(received.chain, text);
  } else if (type == "image") {
    const std::string_view url = FieldOr(fields, "PicUrl");
    if (url.substr(0, 7) != "http://" && url.substr(0, 8) != "https://") {
      return Invalid("an image message needs its PicUrl");
    }
    MessageElement image;
    image.type = ElementType::kImage;
    image.url = std::string(url.substr(0, 2048));
    received.chain.push_back(std::move(image));
  } else if (type == "voice" && !FieldOr(fields, "Recognition").empty()) {
    // Speech recognition, when the account has it on, is what the user said.
    common::AppendPlain(received.chain, FieldOr(fields, "Recognition").substr(0, kMaxTextBytes));
  } else {
    decoded.skipped = fmt::format("a {} message", type.substr(0, 32));
    return decoded;
  }
  if (received.chain.size() < 2) {
    decoded.skipped = "an empty message";
    return decoded;
  }
  decoded.message = std::move(received);
  return decoded;
}

std::string ReplyText(const domain::MessageChain& chain) {
  std::string text;
  for (const MessageElement& e : chain) {
    if (e.type == ElementType::kPlain) text += e.text;
  }
  return text;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (message.target_type != domain::TargetType::kPerson) {
    return Invalid("an Official Account talks to people only: target_type must be person");
  }
  if (!PlausibleOpenId(message.target_id)) return Invalid("target_id must be a user's openid");
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    switch (message.chain[i].type) {
      case ElementType::kImage:
      case ElementType::kVoice:
      case ElementType::kFile:
        return Invalid(fmt::format(
            "message_chain[{}]: {} cannot be sent to an Official Account yet (it needs WeChat's "
            "media upload); send text",
            i, domain::ElementTypeName(message.chain[i].type)));
      default:
        break;
    }
  }
  if (ReplyText(message.chain).empty()) return Invalid("the message has no text to send");
  return util::Ok();
}

std::string PassiveTextReply(std::string_view user_openid, std::string_view account_id,
                             std::int64_t unix_seconds, std::string_view text) {
  return common::BuildWeChatXml({{"ToUserName", std::string(user_openid)},
                                 {"FromUserName", std::string(account_id)},
                                 {"CreateTime", std::to_string(unix_seconds)},
                                 {"MsgType", "text"},
                                 {"Content", std::string(text)}});
}

std::vector<std::string> CustomTextBodies(std::string_view user_openid, std::string_view text) {
  std::vector<std::string> bodies;
  std::size_t start = 0;
  while (start < text.size()) {
    // Whole characters up to the byte limit.
    std::size_t end = start;
    while (end < text.size()) {
      char32_t cp = 0;
      const std::size_t len = common::NextCodePoint(text, end, cp);
      if (end + len - start > kMaxCustomTextBytes) break;
      end += len;
    }
    util::JsonObject body{{"touser", user_openid},
                          {"msgtype", "text"},
                          {"text", util::JsonObject{{"content", text.substr(start, end - start)}}}};
    bodies.push_back(util::SerializeJson(body));
    start = end;
  }
  return bodies;
}

util::Result<ApiStatus> DecodeApiStatus(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return Invalid("the answer is not a JSON object");
  ApiStatus status;
  status.errcode = common::IntField(parsed->as_object(), "errcode").value_or(0);
  status.errmsg = std::string(common::StringOr(parsed->as_object(), "errmsg").substr(0, 200));
  return status;
}

util::Result<common::IssuedToken> DecodeTokenAnswer(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return Invalid("the token answer is not a JSON object");
  const util::JsonObject& obj = parsed->as_object();
  const std::string_view token = common::StringOr(obj, "access_token");
  if (token.empty()) {
    return util::Fail(util::ErrorCode::kUpstreamAuth,
                      fmt::format("WeChat refused the AppID/AppSecret (errcode {}): {}",
                                  common::IntField(obj, "errcode").value_or(-1),
                                  common::StringOr(obj, "errmsg").substr(0, 200)));
  }
  return common::IssuedToken{std::string(token),
                             std::chrono::seconds(common::IntField(obj, "expires_in").value_or(0))};
}

bool IsTokenRefused(std::int64_t errcode) {
  return errcode == 40001 || errcode == 40014 || errcode == 42001;
}

}  // namespace sb::platforms::officialaccount
