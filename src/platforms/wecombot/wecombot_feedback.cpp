#include "platforms/wecombot/wecombot_feedback.hpp"

#include <fmt/format.h>

#include <utility>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/wecombot/wecombot_codec.hpp"

namespace sb::platforms::wecombot {
namespace {

using common::ArrayField;
using common::IntField;
using common::Invalid;
using common::ObjectField;
using common::StringField;
using common::StringOr;
using util::JsonObject;

constexpr char kSeparator = '|';  // never in our stream ids (NewReqId: letters, digits, '_')

util::Result<std::string> Id(const JsonObject& obj, std::string_view key, std::string_view where,
                             bool required) {
  const auto* s = StringField(obj, key);
  if (s == nullptr || s->empty()) {
    if (required) return Invalid(fmt::format("{}{} is required", where, key));
    return std::string();
  }
  if (s->size() > kMaxIdBytes) {
    return Invalid(fmt::format("{}{} must be at most {} bytes", where, key, kMaxIdBytes));
  }
  return std::string(s->data(), s->size());
}

}  // namespace

std::string FeedbackIdFor(std::string_view stream_id, std::string_view msgid) {
  std::string id(stream_id);
  if (!msgid.empty() && stream_id.size() + 1 + msgid.size() <= kMaxIdBytes) {
    id += kSeparator;
    id.append(msgid);
  }
  return id;
}

JsonObject WithFeedback(JsonObject body, std::string_view feedback_id) {
  if (feedback_id.empty()) return body;
  if (auto* stream = body.if_contains("stream"); stream != nullptr && stream->is_object()) {
    stream->get_object()["feedback"] = JsonObject{{"id", feedback_id}};
  }
  return body;
}

util::Result<domain::ReceivedFeedback> DecodeFeedback(const util::Json& body) {
  if (!body.is_object()) return Invalid("the callback is not a JSON object");
  const JsonObject& obj = body.get_object();
  const JsonObject* event = ObjectField(obj, "event");
  if (event == nullptr || StringOr(*event, "eventtype") != kFeedbackEventType) {
    return Invalid("event.eventtype must be feedback_event");
  }
  const JsonObject* fb = ObjectField(*event, "feedback_event");
  if (fb == nullptr) return Invalid("event.feedback_event is required");

  domain::ReceivedFeedback out;
  auto id = Id(*fb, "id", "event.feedback_event.", true);
  if (!id) return tl::unexpected(id.error());
  out.feedback_id = std::move(*id);
  const auto type = IntField(*fb, "type");
  if (!type || *type < 1 || *type > 3) {
    return Invalid("event.feedback_event.type must be 1, 2 or 3");
  }
  out.type = static_cast<domain::FeedbackType>(*type);
  out.content =
      domain::TruncateUtf8(std::string(StringOr(*fb, "content")), kMaxFeedbackContentBytes);
  // WeCom sends reason codes (integers); strings are taken too. Anything else is skipped.
  if (const util::JsonArray* reasons = ArrayField(*fb, "inaccurate_reason_list")) {
    for (const auto& r : *reasons) {
      if (out.inaccurate_reasons.size() >= kMaxInaccurateReasons) break;
      if (r.is_int64() || r.is_uint64()) {
        out.inaccurate_reasons.push_back(util::SerializeJson(r));
      } else if (r.is_string() && !r.get_string().empty()) {
        out.inaccurate_reasons.push_back(domain::TruncateUtf8(
            std::string(r.get_string().data(), r.get_string().size()), kMaxReasonBytes));
      }
    }
  }

  const JsonObject* from = ObjectField(obj, "from");
  if (from == nullptr) return Invalid("from is required");
  auto userid = Id(*from, "userid", "from.", true);
  if (!userid) return tl::unexpected(userid.error());
  out.user_id = std::move(*userid);
  const std::string_view chattype = StringOr(obj, "chattype");
  if (chattype == "group") {
    auto chatid = Id(obj, "chatid", "", true);
    if (!chatid) return tl::unexpected(chatid.error());
    out.chat_type = domain::TargetType::kGroup;
    out.chat_id = std::move(*chatid);
  } else if (chattype == "single" || chattype.empty()) {
    out.chat_type = domain::TargetType::kPerson;
    out.chat_id = out.user_id;
  } else {
    return Invalid(fmt::format("chattype must be single or group, not {:.20}", chattype));
  }

  const std::size_t cut = out.feedback_id.find(kSeparator);
  out.stream_id = out.feedback_id.substr(0, cut);
  if (cut != std::string::npos) out.message_id = out.feedback_id.substr(cut + 1);
  return out;
}

}  // namespace sb::platforms::wecombot
