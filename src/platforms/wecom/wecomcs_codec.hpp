// WeCom customer service (微信客服, `wecomcs`) as its adapter sees it: the kf_msg_or_event
// callback, the /kf/sync_msg pull (request and page), pulled messages turned into
// ReceivedMessages, send_message targets and the /kf/send_msg bodies. Pure, no I/O.
//   auto nudge = DecodeKfNudge(fields);                 // {token, open_kfid}
//   std::string body = EncodeSyncRequest(cursor, nudge->token, nudge->open_kfid);
//   auto page = DecodeSyncPage(answer);                 // {next_cursor, has_more, msg_list}
//   auto in = DecodeKfMessage(page->messages[0]);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "platforms/common/wechat_callback.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::wecom {

// sync_msg returns at most this many messages per page (WeCom's default and maximum).
inline constexpr int kSyncLimit = 1000;
// Messages of these origins are the customer's; 4 is a system event, 5 a human servicer.
inline constexpr std::int64_t kOriginCustomer = 3;

// The callback's content: WeCom only says "there is something to pull".
struct KfNudge {
  std::string token;      // lets sync_msg run without its strict rate limit; valid 10 minutes
  std::string open_kfid;  // the customer-service account concerned
};

// kInvalidArgument unless the fields are MsgType event / Event kf_msg_or_event; `skipped`
// wording for other events is the error message.
util::Result<KfNudge> DecodeKfNudge(const common::WeChatFields& fields);

// The /kf/sync_msg body: {cursor?, token?, limit, voice_format:0, open_kfid?}.
std::string EncodeSyncRequest(std::string_view cursor, std::string_view token,
                              std::string_view open_kfid);

struct SyncPage {
  std::string next_cursor;
  bool has_more = false;
  std::vector<util::JsonObject> messages;
};
// A successful sync_msg answer (errcode already 0). kInvalidArgument when msg_list is not an
// array or holds more than kSyncLimit entries.
util::Result<SyncPage> DecodeSyncPage(const util::JsonObject& answer);

struct KfInbound {
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;  // why `message` is empty (not the customer's, an event, a voice ...)
  std::string msgid;
  std::string open_kfid;
  std::string external_userid;
  std::int64_t send_time = 0;  // unix seconds
  std::string media_id;        // an image still to be fetched through media/get
  std::size_t image_element = 0;
};

// A customer's text or image (origin 3): chat_id and sender_id "u<external_userid>" (LangBot's
// form), message_id the msgid, chain Source then Plain or a pending Image. kInvalidArgument
// naming the field for a message without msgid, or a customer message without external_userid
// or open_kfid, or ids over their bounds.
util::Result<KfInbound> DecodeKfMessage(const util::JsonObject& msg);

struct KfTarget {
  std::string external_userid;
  std::string open_kfid;  // empty: the session form; the account the customer last wrote to
};
// "<external_userid>|<open_kfid>" or "u<external_userid>" (the session form). kInvalidArgument
// otherwise.
util::Result<KfTarget> ParseKfTarget(std::string_view target_id);

// CheckDeliverable of `wecomcs`: a person target in ParseKfTarget's forms and a chain PlanParts
// can carry; customer-service chats have no groups.
util::Result<void> CheckKfDeliverable(const domain::OutgoingMessage& message);

// /kf/send_msg bodies: text, or image / file with an uploaded media id.
std::string EncodeKfText(const KfTarget& to, std::string_view text);
std::string EncodeKfMedia(const KfTarget& to, std::string_view msgtype, std::string_view media_id);

}  // namespace sb::platforms::wecom
