// What WeChat Official Account callbacks mean in the shared message model, and the two ways a
// reply goes back: the passive XML answer to the callback itself, and the customer-service API
// (`/cgi-bin/message/custom/send`, verified accounts, within 48 h of the user's message). Pure;
// the envelope (signatures, AES, XML) is platforms/common/wechat_callback.hpp.
//   auto decoded = DecodeCallback(fields);        // fields from OpenWeChatXml / ParseWeChatXml
//   std::string xml = PassiveTextReply(openid, account, now_seconds, "hello");
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "platforms/common/access_token.hpp"
#include "platforms/common/wechat_callback.hpp"
#include "util/error.hpp"

namespace sb::platforms::officialaccount {

struct DecodedCallback {
  // What a redelivery of the same callback carries again: MsgId, or for events (which have none)
  // the sender and CreateTime, as WeChat's docs advise.
  std::string delivery_id;
  std::string user_openid;  // FromUserName
  std::string account_id;   // ToUserName, the account's gh_ id (the passive reply's sender)
  std::optional<domain::ReceivedMessage> message;  // absent: nothing for the bot
  std::string skipped;                             // why, when absent ("a location message")
};

// Text, images (by their PicUrl) and voice with WeChat's speech recognition become messages; a
// private chat with the user's openid. kInvalidArgument when a required field is missing.
util::Result<DecodedCallback> DecodeCallback(const common::WeChatFields& fields);

// The text a reply carries: its Plain elements joined (mentions and quotes mean nothing here).
std::string ReplyText(const domain::MessageChain& chain);

// kInvalidArgument unless the target is a person's openid and the chain carries text only:
// images, voice and files would need WeChat's media upload, which this adapter does not do.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// The passive text answer to a callback (plain XML; sealed by the caller in safe mode).
std::string PassiveTextReply(std::string_view user_openid, std::string_view account_id,
                             std::int64_t unix_seconds, std::string_view text);

// Customer-service text message bodies for `/cgi-bin/message/custom/send`, one per piece of at
// most kMaxCustomTextBytes (cut at a whole character).
inline constexpr std::size_t kMaxCustomTextBytes = 2048;
std::vector<std::string> CustomTextBodies(std::string_view user_openid, std::string_view text);

// `{"errcode":…,"errmsg":…}` of an API answer; errcode 0 when absent (a success answer).
struct ApiStatus {
  std::int64_t errcode = 0;
  std::string errmsg;
};
util::Result<ApiStatus> DecodeApiStatus(std::string_view body);

// WeChat's answer to `/cgi-bin/token`; its errcode and errmsg when it refused.
util::Result<common::IssuedToken> DecodeTokenAnswer(std::string_view body);

// errcode 40001 (invalid credential), 40014 (invalid token), 42001 (expired): fetch a new token.
bool IsTokenRefused(std::int64_t errcode);

}  // namespace sb::platforms::officialaccount
