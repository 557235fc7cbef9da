// WeChatPadPro (a personal WeChat account driven over the iPad protocol) as the adapter sees it.
// There is no official API documentation; everything here follows how LangBot's `wechatpad`
// adapter and its libs/wechatpad_api client use the service: `?key=<token>` on every call,
// answers `{Code, Data, Text}` with Code 200 for success, message frames on the WebSocket
// `{wechatpad_ws}/GetSyncMsg?key=<token>` shaped `{msg_id, from_user_name{str}, to_user_name{str},
// msg_type, content{str}, msg_source, push_content, create_time, new_msg_id}`. Pure; no I/O.
//   auto frame = DecodeSyncMessage(text, self_wxid);   // a message for the host, or why not
//   auto calls = EncodeOutgoing(message, nicknames);    // SendTextMessage / SendImageMessage
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::wechatpad {

// Where the service is: `api_base_url` (when set) or `wechatpad_url` for HTTP calls, and the
// message socket from `wechatpad_ws` (else the HTTP base as ws/wss + "/ws"). Trailing slashes
// are dropped; the key is not part of either.
struct Endpoints {
  std::string http;  // "http://host:port"
  std::string ws;    // "ws://host:port/ws"
};
Endpoints EndpointsFromConfig(const util::JsonObject& config);

// `<base><path>?key=<percent-encoded token>`.
std::string KeyedUrl(std::string_view base, std::string_view path, std::string_view token);

// An answer `{Code, Data, Text}`: kUpstreamFailed unless it is a JSON object with an integer
// Code. `ok` is Code == 200.
struct Answer {
  std::int64_t code = 0;
  bool ok = false;
  std::string text;  // Text, for messages (may be empty)
  util::Json data;
};
util::Result<Answer> DecodeAnswer(std::string_view body);

// GetLoginStatus's verdict: logged in (Code 200), or why not ("你已退出微信", an unknown key...).
// kUpstreamAuth (final) naming the service's Text when it is not logged in.
util::Result<void> CheckLoginStatus(const Answer& answer);

// GetProfile: Data.userInfo.userName.str (the wxid) and nickName.str. kUpstreamFailed without
// a wxid.
struct Profile {
  std::string wxid;
  std::string nickname;
};
util::Result<Profile> DecodeProfile(const Answer& answer);

// GetChatroomMemberDetail: wxid -> nickname from Data.member_data.chatroom_member_list
// [{user_name, nick_name}]; empty when the shape differs.
std::unordered_map<std::string, std::string> DecodeMemberNicknames(const Answer& answer);

// What a message frame carries for the adapter.
struct DecodedFrame {
  std::optional<domain::ReceivedMessage> message;
  std::string dedupe_key;  // new_msg_id, else msg_id
  std::string skipped;     // why no message, for the log ("" when skipping is normal)
};

// A frame into a message. Chatrooms (from_user_name ending "@chatroom") are groups whose text
// starts "sender_wxid:\n"; the chain is Source{new_msg_id}, AtAll when the text holds "@所有人",
// At{self_wxid} when msg_source's atuserlist names the bot or push_content says "在群聊中@了你",
// At{id} for each other wxid in atuserlist, then the text with the "@nickname" mentions taken
// out. Contacts are private chats keyed by their wxid. Skipped without a message: the bot's own
// messages, official accounts (gh_…), the `weixin` and `newsapp` system senders, message types
// other than text (msg_type 1), and empty texts. kInvalidArgument naming the field for a frame
// that is no JSON object or has no from_user_name.str.
util::Result<DecodedFrame> DecodeSyncMessage(std::string_view text, std::string_view self_wxid);

// One HTTP call that delivers part of a message.
struct OutboundCall {
  std::string path;  // "/message/SendTextMessage" or "/message/SendImageMessage"
  util::JsonObject body;
};

// A chain as LangBot sends it, in order: runs of Plain / At / AtAll become one SendTextMessage
// {MsgItem:[{AtWxIDList, ImageContent:"", MsgType:0, TextContent, ToUserName}]} where an At is
// written "@<nickname>" (from `nicknames`, else the wxid) and listed in AtWxIDList, AtAll
// "@所有人" with "notify@all"; each Image is a SendImageMessage whose ImageContent is the image's
// base64 (without a data: prefix). `images` holds the base64 of the chain's Image elements given
// by URL, in order (the adapter downloads them); base64 images are used as they are.
std::vector<OutboundCall> EncodeOutgoing(
    const domain::OutgoingMessage& message,
    const std::unordered_map<std::string, std::string>& nicknames,
    const std::vector<std::string>& images);

// kInvalidArgument naming "message_chain[i]" for what this adapter cannot send (Voice, File,
// an Image without url or base64, an At without target), a chain with nothing to show, or a
// target_id that is empty, too long or has control characters or spaces.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// True for a chatroom id ("123@chatroom").
bool IsChatroom(std::string_view wxid);

}  // namespace sb::platforms::wechatpad
