// The WeCom AI bot's reply feedback (点赞/点踩), pure and I/O-free. A reply carries
// `stream.feedback.id` in its first frame; WeCom then shows the user like/dislike buttons and,
// when one is pressed, sends an event callback (webhook POST, or `aibot_event_callback` on the
// long connection) whose `event` is {"eventtype": "feedback_event", "feedback_event": {"id",
// "type" (1 accurate, 2 inaccurate, 3 withdrawn), "content"?, "inaccurate_reason_list"?}} and
// whose `from.userid` (and `chatid` in groups) say who rated it where.
// The feedback id names the reply itself (its stream id and the message it answers), so a rating
// that comes hours later, or after a restart, still finds what it rates without any state.
//   body = WithFeedback(StreamBody(stream_id, "", false), FeedbackIdFor(stream_id, msgid));
//   if (cb->event_type == kFeedbackEventType) host.OnFeedback(*DecodeFeedback(json));
#pragma once

#include <string>
#include <string_view>

#include "domain/received_feedback.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::wecombot {

inline constexpr std::string_view kFeedbackEventType = "feedback_event";

// Bounds on what a feedback event may carry into a record; longer text is cut, more reasons
// are dropped.
constexpr std::size_t kMaxFeedbackContentBytes = 2000;
constexpr std::size_t kMaxInaccurateReasons = 16;
constexpr std::size_t kMaxReasonBytes = 200;

// "<stream id>|<msgid>", or the stream id alone when both would pass WeCom's 256 bytes.
std::string FeedbackIdFor(std::string_view stream_id, std::string_view msgid);

// `body` (a StreamBody) with stream.feedback = {"id": feedback_id}; unchanged for an empty id.
util::JsonObject WithFeedback(util::JsonObject body, std::string_view feedback_id);

// Reads a decrypted feedback_event callback. The chat is the group (`chattype` group, `chatid`)
// or the user's private chat; message_id and stream_id come from a feedback id of
// FeedbackIdFor's form (else stream_id is the whole id and message_id empty). kInvalidArgument
// naming the field for a wrong shape or an unknown `type`.
util::Result<domain::ReceivedFeedback> DecodeFeedback(const util::Json& body);

}  // namespace sb::platforms::wecombot
