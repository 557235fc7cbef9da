// OneBot v11 as the `aiocqhttp` adapter sees it on a reverse WebSocket: event and action-response
// frames decoded, messages (segment arrays or CQ strings) turned into the shared message model, and
// outgoing messages turned into send_private_msg / send_group_msg action frames. Pure, no I/O;
// onebot_adapter.cpp owns the sockets. Protocol notes: shared/protocols/platforms.md, Part 3.
//   auto frame = DecodeFrame(text, "10001");  // kInvalidArgument naming the field on a bad shape
//   if (frame->kind == FrameKind::kMessage) host.OnMessage(std::move(*frame->message));
//   auto action = EncodeSend(outgoing);  std::string out = EncodeActionFrame(*action, "sb:1");
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::onebot {

// Bounds on what one event may carry; a frame beyond them is refused as malformed.
inline constexpr std::size_t kMaxSegments = 256;
inline constexpr std::size_t kMaxCqStringBytes = 256 * 1024;

enum class FrameKind {
  kMessage,   // a private or group message for the bot
  kMeta,      // lifecycle or heartbeat (or another meta event)
  kResponse,  // the answer to one of our actions
  kIgnored,   // valid, but nothing for the bot: notices, requests, its own messages, ...
};

enum class MetaKind { kLifecycle, kHeartbeat, kOther };

struct MetaEvent {
  MetaKind kind = MetaKind::kOther;
  std::string sub_type;          // lifecycle: "connect", "enable", "disable"
  std::int64_t interval_ms = 0;  // heartbeat: the time to the next one; 0 when absent
};

// {"status","retcode","data","echo"} plus NapCat's "message"/"wording".
struct ActionResponse {
  // The echo as we sent it: a string as it is, any other JSON value as its compact JSON text;
  // empty when absent or null.
  std::string echo;
  bool ok = false;  // status "ok" or "async" with retcode 0 or 1
  std::int64_t retcode = 0;
  std::string status;
  std::string message_id;  // data.message_id in decimal; empty when absent
  std::string user_id;     // data.user_id in decimal (get_login_info); empty when absent
  std::string nickname;    // data.nickname (get_login_info)
  // get_msg: data.message as text (domain::QuotableText: "@id" for at, "[Image]" for an image),
  // cut to domain::kMaxQuotedTextBytes, and data.sender.user_id; empty when absent.
  std::string message_text;
  std::string sender_id;
  // Why it failed, from "wording", else "message", else "msg"; empty when none. Bounded.
  std::string failure;
};

struct Frame {
  FrameKind kind = FrameKind::kIgnored;
  std::string self_id;  // events: the event's self_id in decimal; empty when absent
  std::optional<domain::ReceivedMessage> message;  // kMessage
  MetaEvent meta;                                  // kMeta
  ActionResponse response;                         // kResponse
  std::string ignored;  // kIgnored: why ("notice", "message_sent", "the bot's own message", ...)
};

// One text frame from the implementation. An object with `post_type` is an event, any other
// object an action response. `bot_id` is the account the connection belongs to (X-Self-ID; the
// event's own self_id when empty): messages whose user_id is the bot are ignored, as are
// `message_sent` echoes. A message becomes Source{message_id} followed by the segments: text ->
// Plain (adjacent runs joined), at -> At{qq} or AtAll, image -> Image{url}, record -> Voice{url},
// reply -> Quote{id}, face -> Plain (its text, else "[face:<id>]"), file -> File; other segments
// are dropped, and a message with nothing left is ignored. Fails with kInvalidArgument whose
// message starts with the offending field ("user_id must be an integer") on a wrong shape.
util::Result<Frame> DecodeFrame(std::string_view text, std::string_view bot_id);

// One segment, as in the array form: {"type", "data": {key: value}} with string values.
struct Segment {
  std::string type;
  std::vector<std::pair<std::string, std::string>> data;
  std::string_view Get(std::string_view key) const;  // empty when absent
};

// The CQ-code string form (message/string.md): text with `&amp;`, `&#91;`, `&#93;` unescaped
// becomes "text" segments, `[CQ:type,key=value,...]` one segment each (values also unescape
// `&#44;`). A `[CQ:` without its closing `]` stays text.
std::vector<Segment> ParseCqString(std::string_view text);
// The escaping of message/string.md: `&`, `[`, `]` (and `,` inside a CQ parameter).
std::string EscapeCq(std::string_view text, bool in_parameter = false);
std::string UnescapeCq(std::string_view text, bool in_parameter = false);

// kInvalidArgument naming "message_chain[i]" for an element OneBot cannot carry (Image or Voice
// without url or base64, At without a numeric target, Quote without an id, File without url), or
// for a target id that is not a number (QQ ids are integers), or a chain with nothing to send.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

struct Action {
  std::string action;  // "send_private_msg", "send_group_msg"
  util::JsonObject params;
};

// send_private_msg {user_id, message} or send_group_msg {group_id, message}, the message as a
// segment array: Plain -> text, At -> at{qq}, AtAll -> at{qq:"all"}, Image -> image{file: url or
// base64://...}, Voice -> record, File -> file{file, name}, the first Quote -> reply{id} put first;
// Source is dropped. kInvalidArgument for what CheckDeliverable refuses.
util::Result<Action> EncodeSend(const domain::OutgoingMessage& message);

// get_msg {message_id} (an integer when the id is decimal, as the standard types it) for a
// received reply segment's id.
Action EncodeGetMsg(std::string_view message_id);

// True when `message` asks to be a forward message (ReplyForm::kForward) and holds text to put in
// one: Plain elements (At, Quote and Source are left out of a forward message).
bool WantsForward(const domain::OutgoingMessage& message);

// The long-text strategy "forward": send_group_forward_msg {group_id, messages} or
// send_private_forward_msg {user_id, messages} (go-cqhttp's extension, also served by NapCat and
// Lagrange), `messages` one custom node holding the Plain text, as LangBot sends it. The node names
// the sender both ways implementations read it: user_id/nickname (OneBot 11 message/segment.md)
// and uin/name (go-cqhttp). `self_id` is the bot's account, `nickname` the name shown.
// kInvalidArgument when !WantsForward(message) or the target is not a number.
util::Result<Action> EncodeForward(const domain::OutgoingMessage& message, std::string_view self_id,
                                   std::string_view nickname);

// {"action","params","echo"} as compact JSON; `echo` goes out as a JSON string.
std::string EncodeActionFrame(const Action& action, std::string_view echo);

// Decimal digits of an int64 (QQ ids, group ids, message ids), without sign or leading '+'.
bool IsDecimalId(std::string_view s);

}  // namespace sb::platforms::onebot
