#include "runtime/message_monitor.hpp"

#include "domain/message_text.hpp"
#include "util/ids.hpp"

namespace sb::runtime {

namespace {

// Records are kept for days and listed by the hundred: a long message is cut.
constexpr std::size_t kMaxContentBytes = 4000;

}  // namespace

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

void MessageMonitor::Ignored(const std::string& id) const {
  if (!sink_ || id.empty()) return;
  sink_->ChangeMessageStatus({id, "ignored", "info"});
}

void MessageMonitor::Failed(const domain::Bot& bot, const std::string& id,
                            const std::string& session_id, const std::string& error_type,
                            const std::string& why) const {
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
  if (!sink_) return;
  const std::string id = Received(bot, message, session_id);
  Failed(bot, id, session_id, "refused", why);
}

}  // namespace sb::runtime
