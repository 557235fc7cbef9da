// The LINE Messaging API as the adapter sees it: the X-Line-Signature check, webhook bodies and
// message events turned into ReceivedMessages, the shared message model turned into LINE message
// objects for reply and push, and LINE's error bodies. Pure functions, no I/O; line_adapter.cpp
// makes the calls.
//   if (!Verify(channel_secret, call.body, call.Header("x-line-signature"))) return 401;
//   auto hook = DecodeWebhook(call.body);             // {destination, events}; events may be []
//   auto event = DecodeEvent(hook->events[0], bot_user_id);
//   auto messages = EncodeMessages(outgoing);          // reply/push take at most 5 per call
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::line {

// A text message's limit, in UTF-16 code units (what LINE counts).
inline constexpr std::size_t kMaxTextUnits = 5000;
// reply and push take 1 to 5 message objects per call.
inline constexpr std::size_t kMaxMessagesPerCall = 5;
// Image URLs: https, at most 2000 characters.
inline constexpr std::size_t kMaxUrlChars = 2000;
// Bounds on what one webhook call may make us hold.
inline constexpr std::size_t kMaxEvents = 100;
inline constexpr std::size_t kMaxIdBytes = 128;
inline constexpr std::size_t kMaxTextBytes = 64 * 1024;

// base64(HMAC-SHA256(channel_secret, body)): the X-Line-Signature of `body`.
std::string Sign(std::string_view channel_secret, std::string_view body);
// True only for a non-empty secret and a header equal to Sign(secret, body) (constant time).
bool Verify(std::string_view channel_secret, std::string_view body,
            std::string_view signature_header);

// A webhook body: {"destination": bot user id, "events": [...]}. The console's Verify button
// sends no events.
struct Webhook {
  std::string destination;
  std::vector<util::Json> events;
};
// kInvalidArgument naming the field for malformed JSON, a non-object, `events` missing or not
// an array, or more than kMaxEvents events.
util::Result<Webhook> DecodeWebhook(std::string_view body);

// The webhookEventId of an event, when it has one (even if the rest is malformed).
std::string EventId(const util::Json& event);

// A media element still to be fetched from /v2/bot/message/{id}/content.
struct PendingContent {
  std::size_t element = 0;  // index into the message's chain
  std::string message_id;
};

struct DecodedEvent {
  // Empty for events the bot does not take (other event types, standby mode, stickers, video,
  // audio, files, locations), with `skipped` saying why.
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;
  std::string reply_token;  // empty when the event has none
  std::optional<PendingContent> content;
};

// Turns a `message` event into a ReceivedMessage. Source user is a private chat (chat id = user
// id); group and room are group chats (chat id = groupId / roomId). The chain is Source{id},
// Quote{quotedMessageId} when it quotes, then the text cut around its mentionees (UTF-16
// offsets): isSelf, or a userId equal to `bot_user_id`, becomes At{bot_user_id}; another user
// with a userId At{userId}; type "all" AtAll. An image is Image{url} for an external provider, or
// an Image whose bytes are still to be fetched (`content`). kInvalidArgument naming the field for
// a wrong shape.
util::Result<DecodedEvent> DecodeEvent(const util::Json& event, std::string_view bot_user_id);

// GET /v2/bot/info's answer. kUpstreamFailed when it has no userId.
struct BotInfo {
  std::string user_id;
  std::string display_name;
};
util::Result<BotInfo> DecodeBotInfo(std::string_view body);

// LINE's error body {"message","details":[{"message","property"}]} as one bounded sentence
// ("The request body has 1 error(s): messages[0].text: May not be empty"); the HTTP status when
// the body is no such object.
std::string DescribeError(int http_status, std::string_view body);
// True for the 400 "Invalid reply token" answer to a reply: the token expired or was used.
bool IsInvalidReplyToken(int http_status, std::string_view body);

// kInvalidArgument naming "message_chain[i]" for what LINE cannot carry (an Image without an
// https url: base64 images would need hosting, LINE has no upload; a Voice, which LINE needs a
// duration for; a File without an https url; an At without target), "target_id" for an id that
// is not a LINE user, group or room id, or a chain with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// The message objects that deliver `message` (which passed CheckDeliverable), in order: each run
// of text a `text` message (cut at kMaxTextUnits), or a `textV2` with mention substitutions when
// it holds At or AtAll (its literal braces then shown as full-width ｛ ｝, since textV2 reads
// {...} as placeholders); each Image an `image` message; a File a text line with its link. Source
// and Quote are dropped.
std::vector<util::JsonObject> EncodeMessages(const domain::OutgoingMessage& message);

// The id of the first sent message in a reply/push answer ({"sentMessages":[{"id"}]}); empty
// when absent.
std::string SentMessageId(std::string_view body);

}  // namespace sb::platforms::line
