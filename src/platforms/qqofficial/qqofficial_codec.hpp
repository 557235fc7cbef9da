// The QQ official bot API v2 as the adapter sees it: callback and gateway payloads `{id, op, d,
// s, t}`, the op 13 validation, the four message events turned into ReceivedMessages, the app
// access token, gateway frames, and the shared message model turned into send calls. Pure
// functions, no I/O (qqofficial_codec.cpp for messages and sends, qqofficial_frames.cpp for the
// token and the gateway); qqofficial_adapter.cpp, qqofficial_rest.cpp and qqofficial_gateway.cpp
// do the I/O.
//   auto payload = DecodePayload(call.body);                    // kInvalidArgument when malformed
//   auto event = DecodeEvent(payload->t, payload->d, appid, bot_user_id);
//   auto parts = EncodeParts(outgoing, RouteFor(outgoing.target_type, outgoing.target_id));
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::qqofficial {

// Opcodes (bot-docs interface-framework/event-emit.md; botpy gateway.py).
inline constexpr int kOpDispatch = 0;
inline constexpr int kOpHeartbeat = 1;
inline constexpr int kOpIdentify = 2;
inline constexpr int kOpResume = 6;
inline constexpr int kOpReconnect = 7;
inline constexpr int kOpInvalidSession = 9;
inline constexpr int kOpHello = 10;
inline constexpr int kOpHeartbeatAck = 11;
inline constexpr int kOpCallbackAck = 12;
inline constexpr int kOpValidation = 13;

// LangBot's FULL_INTENTS: GUILDS, GUILD_MEMBERS, DIRECT_MESSAGE (1<<12), GROUP_AND_C2C_EVENT
// (1<<25), INTERACTION (1<<26), PUBLIC_GUILD_MESSAGES (1<<30). GUILD_MESSAGES (1<<9, every guild
// message, private bots only) is not asked for: the bot answers @-mentions.
inline constexpr std::int64_t kIntents =
    (1LL << 0) | (1LL << 1) | (1LL << 12) | (1LL << 25) | (1LL << 26) | (1LL << 30);

// Passive replies per received message: QQ takes at most 5 with one msg_id.
inline constexpr int kMaxPassiveReplies = 5;
// How long a received msg_id can be replied to: C2C 60 min, groups and guilds 5 min.
inline constexpr std::chrono::minutes kC2cReplyWindow{60};
inline constexpr std::chrono::minutes kGroupReplyWindow{5};

// Bounds on what one payload may make us hold.
inline constexpr std::size_t kMaxIdBytes = 128;
inline constexpr std::size_t kMaxTextBytes = 64 * 1024;
inline constexpr std::size_t kMaxAttachments = 20;

// {id?, op, d?, s?, t?}: `id` is the event id of dispatches (the callback's dedupe key), `s` and
// `t` are set for dispatches only.
struct Payload {
  int op = -1;
  std::string id;
  util::Json d = nullptr;
  std::optional<std::int64_t> s;
  std::string t;
};
// kInvalidArgument for text that is no JSON object with a small integer `op`, an `id` or `t`
// that is neither absent, null nor a string, or an `s` that is neither absent, null nor an
// integer.
util::Result<Payload> DecodePayload(std::string_view text);

// op 13's d. Only what QQ sends is taken: event_ts decimal digits (at most 20), plain_token
// letters, digits, '-' and '_' (at most 128). Anything else is kInvalidArgument: the answer signs
// event_ts + plain_token with the bot's key, the very key that signs callbacks over timestamp +
// body, so an unchecked op 13 would sign a forged body for anyone who asks.
struct Validation {
  std::string plain_token;
  std::string event_ts;
};
util::Result<Validation> DecodeValidation(const util::Json& d);
// {"plain_token": ..., "signature": ...}
std::string EncodeValidationAnswer(std::string_view plain_token, std::string_view signature);
// {"op":12,"d":0}: the callback ACK for a dispatch.
std::string EncodeCallbackAck();

// Where a conversation lives on QQ, and so which endpoint answers it.
enum class Route {
  kC2c,      // a private chat with a user: /v2/users/{user_openid}
  kGroup,    // a QQ group: /v2/groups/{group_openid}
  kChannel,  // a guild text channel: /channels/{channel_id}
  kDirect,   // a guild direct message: /dms/{guild_id}
};
const char* RouteName(Route route);

// For a target the bot has never heard from: guild ids and channel ids are decimal numbers,
// openids are 32 hex digits, so a number is a guild channel (group) or a guild DM (person).
Route RouteFor(domain::TargetType type, std::string_view target_id);

struct DecodedEvent {
  // Empty for dispatches the bot does not take (READY, a guild MESSAGE_CREATE without a mention,
  // interactions, joins ...), with `skipped` saying why.
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;
  Route route = Route::kC2c;
};

// Turns a message dispatch into a ReceivedMessage in LangBot's forms:
//   C2C_MESSAGE_CREATE       person, chat = author.user_openid
//   DIRECT_MESSAGE_CREATE    person, chat = guild_id (the DM's own guild), sender = author.id
//   GROUP_AT_MESSAGE_CREATE  group, chat = group_openid, sender = author.member_openid
//   AT_MESSAGE_CREATE        group, chat = channel_id, sender = author.id
// The chain is Source{d.id}; At{bot_account_id} for the two @ events (QQ delivers group
// messages only when the bot is mentioned); the content without its leading space, with guild
// mentions `<@!id>` of the bot (`bot_user_id` from READY, else the `mentions` entry marked bot)
// dropped and of others turned into At{id}; then Image{url} per
// image attachment and File{url, name} per other attachment (scheme-less URLs get https://).
// kInvalidArgument naming the field ("d.author.user_openid must be a string") for a wrong shape.
util::Result<DecodedEvent> DecodeEvent(std::string_view t, const util::Json& d,
                                       std::string_view bot_account_id,
                                       std::string_view bot_user_id);

// ---- the app access token (qqofficial_frames.cpp) ----

// POST {token base}/app/getAppAccessToken's body: {"appId": ..., "clientSecret": ...}.
std::string EncodeTokenRequest(std::string_view appid, std::string_view secret);
struct AccessToken {
  std::string token;
  std::chrono::seconds expires_in{7200};
};
// {"access_token", "expires_in": "7200"} (a string, or a number). kUpstreamFailed with QQ's
// message (never the secret) for any other answer; `final` when QQ named the credentials wrong.
util::Result<AccessToken> DecodeAccessToken(int http_status, std::string_view body);

// ---- the gateway (qqofficial_frames.cpp) ----

// GET /gateway's {"url": "wss://..."}; kUpstreamFailed without a ws:// or wss:// url.
util::Result<std::string> DecodeGatewayUrl(std::string_view body);
// HELLO's heartbeat_interval; kInvalidArgument unless an integer in [1 ms, 10 min].
util::Result<std::chrono::milliseconds> DecodeHello(const util::Json& d);
struct ReadyInfo {
  std::string session_id;
  std::string user_id;
  std::string username;
};
// kInvalidArgument naming the field when session_id or user.id is missing.
util::Result<ReadyInfo> DecodeReady(const util::Json& d);

std::string EncodeIdentify(std::string_view access_token, std::int64_t intents);
std::string EncodeResume(std::string_view access_token, std::string_view session_id,
                         std::int64_t seq);
std::string EncodeHeartbeat(std::optional<std::int64_t> last_seq);

// What to do after the gateway closed with `code` (1006: dropped without a close frame).
enum class CloseAction {
  kResume,    // reconnect and RESUME
  kIdentify,  // the session is gone: reconnect and IDENTIFY
  kNewToken,  // 4004: the access token was refused; fetch a new one, then IDENTIFY
  kWait,      // 4008: sending too fast; wait longer before reconnecting
  kFatal,     // 4013 / 4014 intents refused, 4914 offline or sandbox only, 4915 banned: do not
              // reconnect
};
CloseAction ClassifyClose(int code);
// "invalid session (4009)" and the like, for the bot's status.
std::string DescribeClose(int code, std::string_view reason);

// ---- sends (qqofficial_codec.cpp) ----

// kInvalidArgument naming "target_id" for an id QQ cannot have, or "message_chain[i]" for an
// element QQ cannot carry: an Image or Voice without an http(s) url or base64, a File without
// url, an At without target; or a chain with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// One send call of a message, in order.
struct Part {
  std::string text;    // a text message (msg_type 0); empty for media
  int file_type = 0;   // media: 1 image, 3 voice (the files API's numbering)
  std::string url;     // media by URL
  std::string base64;  // media by bytes (v2 routes only), without any data: prefix
};
// The parts that deliver `message` on `route`: runs of Plain / At / AtAll / File links become one
// text (At as `<@id>` and AtAll as `@everyone` in guild channels; dropped on v2 routes, which
// have no mention syntax), each Image or Voice a media part. Source and Quote are dropped.
// kInvalidArgument when guild routes would need media they cannot take (voice, or an image
// without a URL).
util::Result<std::vector<Part>> EncodeParts(const domain::OutgoingMessage& message, Route route);

// "/v2/users/{id}/messages", "/v2/groups/{id}/messages", "/channels/{id}/messages",
// "/dms/{id}/messages".
std::string MessagesPath(Route route, std::string_view target);
// "/v2/users/{id}/files" or "/v2/groups/{id}/files" (v2 routes only).
std::string FilesPath(Route route, std::string_view target);

// A text message: {content, msg_type 0, msg_id?, msg_seq?}; v2 routes carry msg_seq, guild
// routes only msg_id. An empty `msg_id` makes it a proactive message.
std::string EncodeText(Route route, std::string_view text, std::string_view msg_id, int msg_seq);
// The files API's body: {file_type, url | file_data, srv_send_msg: false}.
std::string EncodeUpload(const Part& part);
// The upload's answer {file_uuid, file_info, ttl}: file_info; kUpstreamFailed when absent.
util::Result<std::string> DecodeFileInfo(std::string_view body);
// {content: " ", msg_type 7, media {file_info}, msg_id?, msg_seq}.
std::string EncodeMedia(std::string_view file_info, std::string_view msg_id, int msg_seq);
// A guild image by URL: {image, msg_id?}.
std::string EncodeChannelImage(std::string_view url, std::string_view msg_id);

// QQ's error body {"message", "code", "err_code"?, "trace_id"?} as one bounded sentence
// ("code 22009: msg limit exceed"); the HTTP status when it is no such object.
std::string DescribeError(int http_status, std::string_view body);
// QQ's `code` in an error body, 0 when absent.
std::int64_t ErrorCodeOf(std::string_view body);
// True for the answers that mean the access token expired or is unknown (401, code 11244).
bool IsTokenRejected(int http_status, std::string_view body);
// The id of a sent message ({"id", "timestamp"}); empty when absent.
std::string SentMessageId(std::string_view body);

}  // namespace sb::platforms::qqofficial
