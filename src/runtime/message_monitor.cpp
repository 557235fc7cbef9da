#include "runtime/message_monitor.hpp"

#include <algorithm>

#include "domain/message_text.hpp"
#include "util/ids.hpp"

namespace sb::runtime {

namespace {

// Records are kept for days and listed by the hundred: a long message is cut.
constexpr std::size_t kMaxContentBytes = 4000;

}  // namespace

MessageMonitor::MessageMonitor(domain::MonitoringSink* sink, util::MetricsRegistry* metrics,
                               const util::Clock* clock)
    : sink_(sink), clock_(clock) {
  if (metrics) {
    messages_ = &metrics->Counter(
        "switchboard_messages_total",
        "Messages of the running bots: received, then replied, ignored, failed or refused.",
        {"bot", "adapter", "outcome"});
    feedback_ = &metrics->Counter("switchboard_feedback_total",
                                  "Users' ratings of the bots' replies (like, dislike, withdrawn).",
                                  {"bot", "adapter", "type"});
  }
}

// Bots are config entities, so the label set is bounded; the registry folds any excess.
void MessageMonitor::Count(const domain::Bot& bot, const char* outcome) const {
  if (messages_) messages_->Add({bot.uuid.str(), bot.adapter, outcome});
}

domain::MonitoringContext MessageMonitor::ContextOf(const domain::Bot& bot,
                                                    const std::string& session) const {
  domain::MonitoringContext c;
  c.bot_id = bot.uuid.str();
  c.bot_name = bot.name;
  if (bot.use_pipeline_uuid) c.pipeline_id = bot.use_pipeline_uuid->str();
  c.session_id = session;
  return c;
}

std::string MessageMonitor::Received(const domain::Bot& bot, const domain::ReceivedMessage& message,
                                     const std::string& session_id) const {
  Count(bot, "received");
  if (!sink_) return {};
  domain::MonitoredMessage m;
  m.id = util::NewUuid();
  m.timestamp = clock_->Now();
  m.context = ContextOf(bot, session_id);
  m.message_content = domain::TruncateUtf8(domain::DescribeChain(message.chain), kMaxContentBytes);
  m.status = "pending";
  m.level = "info";
  m.platform = bot.adapter;
  m.user_id = message.sender_id;
  m.user_name = message.sender_name;
  std::string id = m.id;
  sink_->RecordMessage(std::move(m));
  return id;
}

void MessageMonitor::Replied(const domain::Bot& bot, const std::string& id,
                             const std::string& session_id, const std::string& reply_text) const {
  Count(bot, "replied");
  if (!sink_ || id.empty()) return;
  sink_->ChangeMessageStatus({id, "success", "info"});
  domain::MonitoredMessage m;
  m.id = util::NewUuid();
  m.timestamp = clock_->Now();
  m.context = ContextOf(bot, session_id);
  m.message_content = domain::TruncateUtf8(reply_text, kMaxContentBytes);
  m.status = "success";
  m.level = "info";
  m.platform = bot.adapter;
  m.role = "assistant";
  sink_->RecordMessage(std::move(m));
}

void MessageMonitor::Ignored(const domain::Bot& bot, const std::string& id) const {
  Count(bot, "ignored");
  if (!sink_ || id.empty()) return;
  sink_->ChangeMessageStatus({id, "ignored", "info"});
}

void MessageMonitor::Failed(const domain::Bot& bot, const std::string& id,
                            const std::string& session_id, const std::string& error_type,
                            const std::string& why) const {
  Count(bot, "failed");
  if (!sink_) return;
  if (!id.empty()) sink_->ChangeMessageStatus({id, "error", "error"});
  domain::MonitoredError e;
  e.id = util::NewUuid();
  e.timestamp = clock_->Now();
  e.context = ContextOf(bot, session_id);
  e.context.message_id = id;
  e.error_type = error_type;
  e.error_message = domain::TruncateUtf8(why, kMaxContentBytes);
  sink_->RecordError(std::move(e));
}

void MessageMonitor::Refused(const domain::Bot& bot, const domain::ReceivedMessage& message,
                             const std::string& session_id, const std::string& why) const {
  Count(bot, "refused");
  if (!sink_) return;
  // Recorded as received and failed, without counting either: the counter says "refused".
  domain::MonitoredMessage m;
  m.id = util::NewUuid();
  m.timestamp = clock_->Now();
  m.context = ContextOf(bot, session_id);
  m.message_content = domain::TruncateUtf8(domain::DescribeChain(message.chain), kMaxContentBytes);
  m.status = "error";
  m.level = "warning";
  m.platform = bot.adapter;
  m.user_id = message.sender_id;
  m.user_name = message.sender_name;
  domain::MonitoredError e;
  e.id = util::NewUuid();
  e.timestamp = m.timestamp;
  e.context = m.context;
  e.context.message_id = m.id;
  e.error_type = "refused";
  e.error_message = why;
  sink_->RecordMessage(std::move(m));
  sink_->RecordError(std::move(e));
}

namespace {

const char* FeedbackTypeName(domain::FeedbackType type) {
  switch (type) {
    case domain::FeedbackType::kLike:
      return "like";
    case domain::FeedbackType::kDislike:
      return "dislike";
    case domain::FeedbackType::kCancel:
      return "withdrawn";
  }
  return "other";
}

// LangBot keeps the reasons as a JSON array of what the platform sent: WeCom's codes are
// integers, so a reason of digits only goes back in as a number.
std::string ReasonsJson(const std::vector<std::string>& reasons) {
  if (reasons.empty()) return {};
  util::JsonArray out;
  for (const auto& r : reasons) {
    const bool code = !r.empty() && r.size() <= 9 &&
                      std::all_of(r.begin(), r.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (code) {
      out.emplace_back(std::stoll(r));
    } else {
      out.emplace_back(r);
    }
  }
  return util::SerializeJson(util::Json(std::move(out)));
}

}  // namespace

void MessageMonitor::Feedback(const domain::Bot& bot, const domain::ReceivedFeedback& feedback,
                              const std::string& session_id) const {
  if (feedback_) feedback_->Add({bot.uuid.str(), bot.adapter, FeedbackTypeName(feedback.type)});
  if (!sink_) return;
  domain::MonitoredFeedback f;
  f.id = util::NewUuid();
  f.timestamp = clock_->Now();
  f.context = ContextOf(bot, session_id);
  f.context.message_id = feedback.message_id;
  f.feedback_id = feedback.feedback_id;
  f.feedback_type = static_cast<int>(feedback.type);
  f.feedback_content = domain::TruncateUtf8(feedback.content, kMaxContentBytes);
  f.inaccurate_reasons = ReasonsJson(feedback.inaccurate_reasons);
  f.stream_id = feedback.stream_id;
  f.user_id = feedback.user_id;
  f.platform = bot.adapter;
  sink_->RecordFeedback(std::move(f));
}

}  // namespace sb::runtime
