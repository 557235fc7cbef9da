// A user's rating of one of the bot's replies (thumbs up or down, with an optional comment), as a
// chat platform reported it: what an adapter hands to the runtime (AdapterHost::OnFeedback) and
// what monitoring records. Platform-neutral; only some platforms report feedback (WeCom AI bot).
#pragma once

#include <string>
#include <vector>

#include "domain/message.hpp"

namespace sb::domain {

// LangBot's feedback_type values; the platform's own codes are mapped onto these.
enum class FeedbackType { kLike = 1, kDislike = 2, kCancel = 3 };

struct ReceivedFeedback {
  // The platform's id of the rated reply's feedback slot (WeCom: the `feedback.id` the bot set on
  // its reply). One user's later feedback on the same reply replaces the earlier one.
  std::string feedback_id;
  FeedbackType type = FeedbackType::kLike;
  std::string content;                          // the user's comment; may be empty
  std::vector<std::string> inaccurate_reasons;  // why a reply was rated down; may be empty
  std::string user_id;                          // who rated
  TargetType chat_type = TargetType::kPerson;
  std::string chat_id;     // the person (private chat) or the group
  std::string message_id;  // the platform id of the received message the reply answered
  std::string stream_id;   // the platform id of the reply (WeCom: its stream id); may be empty
};

}  // namespace sb::domain
