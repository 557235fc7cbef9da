// Discord's Gateway v10 and REST v10 as the adapter sees them: gateway frames, MESSAGE_CREATE
// turned into ReceivedMessages, the shared message model turned into Create Message calls, REST
// errors and the close-code policy. Pure functions, no I/O (discord_codec.cpp for messages,
// discord_gateway_codec.cpp for frames); discord_adapter.cpp and discord_rest.cpp do the I/O.
//   auto frame = DecodeFrame(text);  // kInvalidArgument naming what is wrong
//   if (frame->op == kOpDispatch && frame->t == "MESSAGE_CREATE") DecodeMessageCreate(frame->d,
//   me); auto calls = EncodeOutgoing(message, reply_to);  // JSON or payload_json + files[n]
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::discord {

// Create Message's `content` limit, in characters; the adapter counts UTF-16 units, never fewer.
inline constexpr std::size_t kMaxContentChars = 2000;
// Embeds and files[n] allowed in one message.
inline constexpr std::size_t kMaxEmbeds = 10;
inline constexpr std::size_t kMaxFiles = 10;

// Gateway opcodes (topics/opcodes-and-status-codes.mdx).
inline constexpr int kOpDispatch = 0;
inline constexpr int kOpHeartbeat = 1;
inline constexpr int kOpIdentify = 2;
inline constexpr int kOpResume = 6;
inline constexpr int kOpReconnect = 7;
inline constexpr int kOpInvalidSession = 9;
inline constexpr int kOpHello = 10;
inline constexpr int kOpHeartbeatAck = 11;

// GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT (privileged).
inline constexpr std::int64_t kIntents = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);

// {op, d, s, t}: `s` and `t` are set for dispatches (op 0) only.
struct GatewayFrame {
  int op = -1;
  util::Json d = nullptr;
  std::optional<std::int64_t> s;
  std::string t;
};

// kInvalidArgument for text that is no JSON object with an integer `op`, or with a `s` that is
// neither null nor an integer, or a `t` that is neither null nor a string.
util::Result<GatewayFrame> DecodeFrame(std::string_view text);

// HELLO's heartbeat_interval; kInvalidArgument unless it is an integer in [1 ms, 10 min].
util::Result<std::chrono::milliseconds> DecodeHello(const util::Json& d);

// What READY gives: the bot's own user and what a later RESUME needs.
struct ReadyInfo {
  std::string user_id;
  std::string username;
  std::string session_id;
  std::string resume_gateway_url;  // may be empty: then the cached gateway URL is used
};
// kInvalidArgument naming the field when user.id or session_id is missing.
util::Result<ReadyInfo> DecodeReady(const util::Json& d);

// INVALID_SESSION's `d`: whether the session may be resumed (false for anything but true).
bool DecodeInvalidSession(const util::Json& d);

std::string EncodeHeartbeat(std::optional<std::int64_t> last_sequence);
std::string EncodeIdentify(std::string_view token);
std::string EncodeResume(std::string_view token, std::string_view session_id,
                         std::optional<std::int64_t> last_sequence);

// Get Gateway Bot: where to connect and how many new sessions (IDENTIFYs) Discord still allows.
struct GatewayBot {
  std::string url;                          // ws:// or wss://
  std::optional<std::int64_t> remaining;    // session_start_limit.remaining, when given
  std::chrono::milliseconds reset_after{};  // session_start_limit.reset_after
};
// kUpstreamFailed when the body has no ws:// or wss:// `url`; a malformed session_start_limit is
// treated as absent.
util::Result<GatewayBot> DecodeGatewayBot(std::string_view body);

// `<url>/?v=10&encoding=json` for a gateway URL as Discord gives it ("wss://gateway.discord.gg").
std::string GatewayConnectUrl(std::string_view url);

// What to do after the gateway closed with `code` (1006 when it dropped without a close frame).
enum class CloseAction {
  kResume,    // reconnect and RESUME the session, if there is one
  kIdentify,  // the session is gone: reconnect and IDENTIFY
  kFatal,     // do not reconnect (4004 and 4010-4014): the configuration must change first
};
CloseAction ClassifyClose(int code);
// A sentence for the bot's status: "authentication failed (4004): the token was refused".
std::string DescribeClose(int code, std::string_view reason);

// A MESSAGE_CREATE for the host. `message` is empty for messages the bot does not take: its own
// and other bots' messages, system messages (joins, pins, ...) and messages with nothing in them.
struct DecodedMessage {
  std::optional<domain::ReceivedMessage> message;
  std::string channel_id;  // where replies go (a DM's channel for a person)
};

// Turns MESSAGE_CREATE's `d` into a ReceivedMessage: a DM (no guild_id) is a private chat whose
// chat_id is the author; a guild message is a group chat whose chat_id is the channel. The chain
// is Source{id}, Quote{referenced id} for a reply, At{bot} when `mentions` names the bot but the
// content does not (a reply that pings the bot), the content split around
// `<@id>` / `<@!id>` mentions (each an At{id}), then Image{url} per image attachment and File{url,
// name} per other attachment. kInvalidArgument whose message starts with the field ("d.author.id
// must be a string") when the event has the wrong shape.
util::Result<DecodedMessage> DecodeMessageCreate(const util::Json& d, std::string_view bot_user_id);

// kInvalidArgument naming "message_chain[i]" for an element Discord cannot carry (Image or Voice
// without an http(s) url or valid base64, File without url, At without a snowflake target), or a
// target id that is not a snowflake, or a chain with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// A file sent as files[n] of a multipart body.
struct Upload {
  std::string filename;
  std::string mime_type;
  std::string bytes;
};

// One Create Message call, in order. With uploads the body is multipart (payload_json + files[n],
// `payload.attachments` naming them); without, `payload` is the JSON body.
struct OutboundCall {
  util::JsonObject payload;
  std::vector<Upload> uploads;
};

// The calls that deliver `message` (which passed CheckDeliverable). Plain, At (`<@id>`), AtAll
// (`@everyone`) and the links of File and URL-only Voice elements make one text, split into
// pieces of at most kMaxContentChars; images given by URL become embeds, base64 images and voices
// uploads, on the last call (further calls when there are more than 10). The first Quote{id}, or
// else `reply_to_message_id` for a group, becomes message_reference of the first call.
// allowed_mentions lets users (and @everyone only for an AtAll) be pinged, never roles.
util::Result<std::vector<OutboundCall>> EncodeOutgoing(const domain::OutgoingMessage& message,
                                                       std::string_view reply_to_message_id);

// A multipart/form-data body: part `payload_json`, then `files[n]` per upload. The Content-Type is
// "multipart/form-data; boundary=<boundary>".
std::string EncodeMultipart(const OutboundCall& call, std::string_view boundary);

// A REST answer that is not 2xx: {"message", "code", "retry_after", "global"}.
struct RestError {
  int status = 0;
  int code = 0;            // Discord's JSON error code; 0 when absent
  std::string message;     // Discord's message, or "HTTP <status>" when the body has none
  double retry_after = 0;  // seconds, for 429: the body's, else the Retry-After header's
  bool global = false;
};
RestError DecodeRestError(int status, std::string_view retry_after_header, std::string_view body);

// The `id` of a created Message or an opened DM channel. kUpstreamFailed when absent.
util::Result<std::string> DecodeId(std::string_view body);

// Snowflakes are decimal integers of up to 20 digits.
bool IsSnowflake(std::string_view s);

}  // namespace sb::platforms::discord
