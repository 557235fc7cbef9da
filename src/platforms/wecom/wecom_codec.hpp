// The WeCom internal application (`wecom`) as its adapter sees it: a decrypted callback's fields
// turned into a ReceivedMessage, send_message targets, and the JSON bodies of /message/send.
// Pure, no I/O. A WeCom app chat is one user with the app: there are no groups and no mentions.
//   auto inbound = DecodeAppMessage(fields);       // text and image; events and others skipped
//   auto target = ParseAppTarget("zhangsan|1000002");
//   std::string body = EncodeAppText(target, agent_id, "hello");
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "platforms/common/wechat_callback.hpp"
#include "util/error.hpp"

namespace sb::platforms::wecom {

// LangBot's sender id for WeCom users is "u" + userid, so sessions are "person_u<userid>".
inline constexpr char kUserPrefix = 'u';
// Received text is capped (WeCom's own limit is 2048 bytes).
inline constexpr std::size_t kMaxReceivedTextBytes = 16 * 1024;
inline constexpr std::size_t kMaxIdBytes = 128;

struct AppInbound {
  // Empty for what the bot does not take (events, voice, video, location, link), with `skipped`
  // saying why.
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;
  // What makes a redelivery recognisable: MsgId, or for an event its sender, time and name.
  std::string dedupe_key;
  std::string user_id;   // FromUserName
  std::string agent_id;  // AgentID, decimal
  // An image still to be fetched: by media id through media/get, else from PicUrl.
  std::string media_id;
  std::string pic_url;
  std::size_t image_element = 0;  // index of the Image in the chain
};

// chat_id and sender_id "u<userid>", message_id the MsgId; the chain is Source{MsgId} then
// Plain{Content} or an Image whose bytes are still to be fetched. kInvalidArgument naming the
// field when FromUserName or MsgType is missing, an id is over kMaxIdBytes, or a text/image
// message lacks Content / MediaId and PicUrl.
util::Result<AppInbound> DecodeAppMessage(const common::WeChatFields& fields);

struct AppTarget {
  std::string user_id;
  std::string agent_id;  // empty: the session form, the agent is the one the callbacks name
};

// "<userid>|<agentid>" (LangBot's send_message form) or "u<userid>" (the session form, what a
// reply addresses). kInvalidArgument otherwise.
util::Result<AppTarget> ParseAppTarget(std::string_view target_id);

// CheckDeliverable of the `wecom` adapter: a person target in one of ParseAppTarget's forms and
// a chain PlanParts can carry. A group target is refused: WeCom app chats have no groups.
util::Result<void> CheckAppDeliverable(const domain::OutgoingMessage& message);

// /message/send bodies. `agent_id` is decimal (sent as a number).
std::string EncodeAppText(std::string_view user_id, std::string_view agent_id,
                          std::string_view text);
// msgtype image or file with an uploaded media id.
std::string EncodeAppMedia(std::string_view user_id, std::string_view agent_id,
                           std::string_view msgtype, std::string_view media_id);

}  // namespace sb::platforms::wecom
