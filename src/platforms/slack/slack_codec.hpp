// Slack's Events API and Web API as the adapter sees them: the v0 request signature, the event
// envelope, message events turned into ReceivedMessages, and the shared message model turned into
// chat.postMessage bodies. Pure functions, no I/O; slack_adapter.cpp makes the calls.
//   if (!Verify(secret, call.body, sig_header, ts_header, clock.Now())) return 401;
//   auto envelope = DecodeEnvelope(call.body);    // url_verification, event_callback, other
//   auto event = DecodeEvent(envelope->event, self);  // a message for the host, or a skip reason
//   auto calls = EncodeOutgoing(message, thread_ts);  // chat.postMessage bodies and uploads
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::slack {

// Slack rejects nothing older, but its SDKs refuse requests more than five minutes off (replay).
inline constexpr std::chrono::seconds kMaxSkew{300};
// chat.postMessage: Slack advises at most 4,000 characters per message (it truncates at 40,000).
inline constexpr std::size_t kMaxTextChars = 4000;
// Bounds on what one event may make us hold.
inline constexpr std::size_t kMaxIdBytes = 64;
inline constexpr std::size_t kMaxEventTextBytes = 64 * 1024;

// "v0=" + lowercase hex HMAC-SHA256(signing_secret, "v0:" + timestamp + ":" + body).
std::string Sign(std::string_view signing_secret, std::string_view timestamp,
                 std::string_view body);

// True only when the secret is not empty, `timestamp_header` is decimal unix seconds within
// `max_skew` of `now`, and `signature_header` equals Sign(...) (compared in constant time).
bool Verify(std::string_view signing_secret, std::string_view body,
            std::string_view signature_header, std::string_view timestamp_header,
            util::TimePoint now, std::chrono::seconds max_skew = kMaxSkew);

// The outer body Slack posts to the Request URL.
struct Envelope {
  enum class Kind { kUrlVerification, kEventCallback, kOther };
  Kind kind = Kind::kOther;
  std::string type;       // as sent ("app_rate_limited", ...)
  std::string challenge;  // kUrlVerification
  std::string event_id;   // kEventCallback; empty when absent
  util::Json event;       // kEventCallback: the inner event object
};

// kInvalidArgument naming the field for malformed JSON, a body that is no object, a missing
// `type`, a url_verification without `challenge`, or an event_callback without an `event` object.
util::Result<Envelope> DecodeEnvelope(std::string_view body);

// The bot itself, from auth.test.
struct Identity {
  std::string user_id;  // U…: what <@…> mentions of the bot carry; the bot's account id
  std::string bot_id;   // B…: what the bot's own messages carry as bot_id
  std::string team;
};

// A Web API answer: {"ok":true,...} or {"ok":false,"error":"channel_not_found"}.
struct ApiResponse {
  bool ok = false;
  std::string error;  // when !ok; "http_<status>" when Slack gave no error name
  util::JsonObject body;
};

// kUpstreamFailed naming the HTTP status when `body` is no Web API answer (a proxy's HTML page).
util::Result<ApiResponse> DecodeApiResponse(int http_status, std::string_view body);

// auth.test's answer (already ok). kUpstreamFailed when it has no user_id.
util::Result<Identity> DecodeAuthTest(const ApiResponse& response);

// A message event, decoded. `message` is empty for events the bot does not take, with `skipped`
// saying why (for the bot's debug log).
struct DecodedEvent {
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;
  std::string channel;    // C…, G… or D…: where a reply goes
  std::string ts;         // the message's id
  std::string thread_ts;  // the thread it belongs to; empty outside threads
  // "<channel>:<ts>": the same message arrives as `message` and as `app_mention`.
  std::string DedupeKey() const { return channel + ":" + ts; }
};

// Decodes a `message` or `app_mention` event. Skips other types, message subtypes other than
// file_share and thread_broadcast (edits, deletions, joins, bot_message), anything with a bot_id,
// and messages from `self.user_id`. Direct messages (channel_type "im", or a D… channel when the
// event has no channel_type) are private chats with the sender as chat id; everything else is a
// group chat named by its channel. The chain is Source{ts} then DecodeText(text).
// kInvalidArgument naming the field when `channel`, `ts` or `user` is missing or not a string.
util::Result<DecodedEvent> DecodeEvent(const util::Json& event, const Identity& self);

// Slack's message text as chain elements: <@U…> and <@U…|name> become At{U…}, <!here>,
// <!channel> and <!everyone> AtAll, <#C…|name> "#name", <url|label> "label (url)", <url> the url;
// &amp; &lt; &gt; are decoded. Adjacent text is merged into one Plain.
domain::MessageChain DecodeText(std::string_view text);

// `&`, `<`, `>` as &amp; &lt; &gt;: the only escaping Slack's text needs.
std::string EscapeText(std::string_view text);

// Inline (base64) images are uploaded as files; larger ones are refused.
inline constexpr std::size_t kMaxUploadBytes = 20 * 1024 * 1024;

// kInvalidArgument naming "message_chain[i]" for what Slack cannot carry here (an Image with
// neither an http(s) url nor valid base64 of at most kMaxUploadBytes; a Voice or File without
// url; an At without target), "target_id" for an empty id or one with spaces or control
// characters, or a chain with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// An inline image to upload with files.getUploadURLExternal, a POST of the bytes to the
// upload_url, and files.completeUploadExternal.
struct Upload {
  std::string filename;  // "image.png", by the data URL's type
  std::string bytes;
};

// One step of delivering a message: a chat.postMessage body, or (with `upload`) a file shared
// into `post`'s channel and thread.
struct OutboundCall {
  util::JsonObject post;  // {"channel", "thread_ts"?, "text"?, "blocks"?}
  std::optional<Upload> upload;
};

// The calls that deliver `message` (which passed CheckDeliverable), in order: each run of text
// (Plain escaped, At as <@id>, AtAll as <!channel>, File and Voice as links) in pieces of at most
// kMaxTextChars, each Image with a url as an image block, each inline Image as an upload. The
// channel is the target id (a user id posts into the app's DM with that user). `thread_ts`, when
// not empty, puts every call in that thread. Source and Quote elements are dropped (Slack has no
// quote reply).
std::vector<OutboundCall> EncodeOutgoing(const domain::OutgoingMessage& message,
                                         std::string_view thread_ts);

// application/x-www-form-urlencoded, the form files.getUploadURLExternal and
// files.completeUploadExternal take their arguments in.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

// files.getUploadURLExternal's answer: where to POST the bytes and the file's id. kUpstreamFailed
// when either is missing.
struct UploadTicket {
  std::string upload_url;
  std::string file_id;
};
util::Result<UploadTicket> DecodeUploadTicket(const ApiResponse& response);

// The `ts` of a chat.postMessage answer; empty when absent.
std::string SentTs(const ApiResponse& response);

}  // namespace sb::platforms::slack
