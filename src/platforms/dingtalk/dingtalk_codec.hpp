// DingTalk as the adapter sees it: the Stream-mode frames (the gateway ticket, downstream frames,
// acknowledgements), robot messages turned into ReceivedMessages, the shared message model turned
// into session-webhook replies and OpenAPI robot messages, and DingTalk's answers (access token,
// errors). Pure functions, no I/O; dingtalk_adapter.cpp and dingtalk_openapi.cpp make the calls.
//   auto frame = DecodeFrame(text);                     // {type, topic, message_id, data}
//   conn->Write(EncodeAck(frame->message_id, AckData(*frame)));
//   auto bot = DecodeBotMessage(frame->data, "my robot");
//   auto rendered = Render(outgoing, /*markdown=*/true);  // pieces of text, mentions
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"

namespace sb::platforms::dingtalk {

// The robot message topic the adapter subscribes to as CALLBACK (besides EVENT "*").
inline constexpr std::string_view kBotMessageTopic = "/v1.0/im/bot/messages/get";
// A reply text piece, in code points: msgParam is limited to 15,000 bytes, and a CJK code point
// takes 3 bytes in UTF-8, so 4,000 leave room for the JSON around it.
inline constexpr std::size_t kMaxTextCodePoints = 4000;
// Bounds on what one robot message may make us hold.
inline constexpr std::size_t kMaxIdBytes = 256;
inline constexpr std::size_t kMaxUrlBytes = 4096;
inline constexpr std::size_t kMaxMediaPerMessage = 8;

// ---- Stream mode ----

// The body of POST /v1.0/gateway/connections/open: clientId, clientSecret, the subscriptions
// (EVENT "*" and CALLBACK kBotMessageTopic), ua and localIp.
std::string EncodeOpenConnection(std::string_view client_id, std::string_view client_secret);

struct Connection {
  std::string endpoint;  // ws:// or wss://
  std::string ticket;
};
// {endpoint, ticket}; kUpstreamFailed when either is missing or the endpoint is no ws(s) URL.
util::Result<Connection> DecodeConnection(std::string_view body);
// `endpoint?ticket=<quote_plus(ticket)>` (`&` when the endpoint already has a query).
std::string StreamUrl(const Connection& connection);

// A downstream frame: {"specVersion","type","headers":{messageId, topic, ...},"data":"<JSON>"}.
struct StreamFrame {
  std::string type;  // SYSTEM, EVENT or CALLBACK
  std::string topic;
  std::string message_id;
  std::string data;  // the JSON text inside the `data` string ("" when absent)
};
// kInvalidArgument for a frame that is not such an object (no type, no headers object, data not
// a string). A frame without messageId decodes with message_id "".
util::Result<StreamFrame> DecodeFrame(std::string_view text);

// The acknowledgement of a frame: {"code":200,"headers":{"messageId","contentType":
// "application/json"},"message":"OK","data":<data_json as a JSON string>}.
std::string EncodeAck(std::string_view message_id, std::string_view data_json, int code = 200,
                      std::string_view message = "OK");
// What the SDKs put in `data`: a SYSTEM or EVENT frame's own data echoed (a ping carries an
// opaque value that must come back), {"response":"OK"} for a CALLBACK (what the SDK's chatbot
// handler answers).
std::string AckData(const StreamFrame& frame);

// ---- HTTP callback mode ----

// The `sign` header of a robot's HTTP-mode call: base64(HMAC-SHA256(key = app secret,
// timestamp + "\n" + app secret)), `timestamp` being the header's milliseconds as sent.
std::string CallbackSign(std::string_view app_secret, std::string_view timestamp);
// True only for a non-empty secret, a `timestamp` of plain decimal milliseconds within an hour of
// `now_ms` either way, and a `sign` equal to CallbackSign (constant time).
bool VerifyCallback(std::string_view app_secret, std::string_view timestamp, std::string_view sign,
                    std::int64_t now_ms);

// ---- Robot messages ----

// An image or file of the message whose downloadCode still has to be turned into a
// downloadUrl through /v1.0/robot/messageFiles/download (and, for an image, fetched).
struct PendingMedia {
  std::size_t element = 0;  // index into the message's chain
  std::string download_code;
  bool file = false;  // a File keeps the (temporary) downloadUrl; an Image gets its bytes
};

struct BotMessage {
  // Empty for messages the bot does not take (a group message that does not @-mention the
  // bot, audio without a transcript, videos, ...), with `skipped` saying why.
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;
  std::string msg_id;
  std::string conversation_id;  // the openConversationId of a group
  std::string session_webhook;  // "" when absent or not an http(s) URL
  std::int64_t session_webhook_expires_ms = 0;
  std::vector<PendingMedia> media;
};

// Turns the `data` of a kBotMessageTopic callback into a ReceivedMessage. conversationType "1"
// is a private chat (chat id = senderStaffId, else senderId), "2" a group (chat id =
// conversationId) taken only when isInAtList is true. The chain is Source{msgId}, At{bot} when
// the bot was mentioned, then the text (with "@<robot_name>" taken out and the leading space
// DingTalk leaves trimmed): text.content, richText's text items and pictures, picture
// (content.downloadCode), file (a File named content.fileName whose url is still to come),
// audio by its content.recognition transcript. kInvalidArgument naming the
// field for a wrong shape.
util::Result<BotMessage> DecodeBotMessage(std::string_view data, std::string_view bot_account_id,
                                          std::string_view robot_name);

// ---- OpenAPI answers ----

struct AccessToken {
  std::string token;
  std::int64_t expires_in_seconds = 0;
};
// POST /v1.0/oauth2/accessToken's answer {accessToken, expireIn}; kUpstreamFailed otherwise.
util::Result<AccessToken> DecodeAccessToken(std::string_view body);
// messageFiles/download's answer {downloadUrl}; kUpstreamFailed unless it is an http(s) URL.
util::Result<std::string> DecodeDownloadUrl(std::string_view body);

// DingTalk's error body as one bounded sentence: {"code","message"} (api.dingtalk.com) or
// {"errcode","errmsg"} (session webhooks); "HTTP <status>" when the body is neither.
std::string DescribeError(int http_status, std::string_view body);
// True for an answer that says the access token is invalid or expired (HTTP 401, or the code
// InvalidAuthentication), so the token is fetched again and the call repeated once.
bool IsTokenRejected(int http_status, std::string_view body);
// True for a session-webhook answer that took the message: HTTP 200 with errcode 0 or none.
bool WebhookAccepted(int http_status, std::string_view body);
// The processQueryKey of a robot send answer; empty when absent.
std::string ProcessQueryKey(std::string_view body);

// ---- Outgoing ----

// kInvalidArgument naming "message_chain[i]" for what DingTalk cannot carry here (a Voice; an
// Image or File without an http(s) url: uploading media is not done), "target_id" for an empty
// or oversized id, or a chain with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// A message as DingTalk shows it: text pieces (cut at kMaxTextCodePoints), markdown or plain,
// and whom it mentions. Each At becomes "@<id>" in the text and an entry of at_user_ids; AtAll
// "@all" and is_at_all; an Image `![image](url)` in markdown, its URL on its own line otherwise;
// a File "name: url". Source and Quote are dropped.
struct Rendered {
  std::vector<std::string> pieces;
  bool markdown = false;
  std::vector<std::string> at_user_ids;
  bool at_all = false;
};
Rendered Render(const domain::OutgoingMessage& message, bool markdown);

// The title DingTalk shows in notifications for a markdown piece: its first line, at most 30
// code points, "message" when empty.
std::string MarkdownTitle(std::string_view text);

// The session-webhook body of one piece: {"msgtype":"text","text":{"content"},"at":{...}} or
// {"msgtype":"markdown","markdown":{"title","text"},"at":{...}}.
std::string EncodeWebhookReply(const Rendered& rendered, std::size_t piece);

// The OpenAPI body of one piece: batchSend {robotCode, userIds:[target], msgKey, msgParam} for a
// person, groupMessages/send {robotCode, openConversationId, msgKey, msgParam} for a group, with
// msgKey sampleText {content} or sampleMarkdown {title, text} and msgParam a JSON string.
std::string EncodeRobotSend(const Rendered& rendered, std::size_t piece,
                            std::string_view robot_code, domain::TargetType target_type,
                            std::string_view target_id);

}  // namespace sb::platforms::dingtalk
