// What the running bots report to monitoring: each received message (pending), then its end
// (replied, ignored, failed) or its refusal (queue full, bot stopped). A few calls at the
// message path's call sites; the sink queues and never blocks. A null sink records nothing;
// the counter switchboard_messages_total{bot,adapter,outcome} counts with or without it.
//   MessageMonitor monitor(sink, metrics, clock);
//   std::string id = monitor.Received(bot, pipeline_name, message, session_id);
//   monitor.Replied(bot, id, session_id, reply_text);
#pragma once

#include <string>

#include "domain/bot.hpp"
#include "domain/monitoring.hpp"
#include "domain/received_feedback.hpp"
#include "domain/received_message.hpp"
#include "util/clock.hpp"
#include "util/metrics_registry.hpp"

namespace sb::runtime {

// Thread-safe (the sink is); cheap to copy.
class MessageMonitor {
 public:
  // `sink` and `metrics` may be null (that part off); both outlive this object.
  MessageMonitor(domain::MonitoringSink* sink, util::MetricsRegistry* metrics,
                 const util::Clock* clock);

  // Returns the record's id for the later calls; empty when monitoring is off.
  std::string Received(const domain::Bot& bot, const domain::ReceivedMessage& message,
                       const std::string& session_id) const;
  void Replied(const domain::Bot& bot, const std::string& id, const std::string& session_id,
               const std::string& reply_text) const;
  void Ignored(const domain::Bot& bot, const std::string& id) const;
  // The run or the delivery failed: the message's status and an error record.
  void Failed(const domain::Bot& bot, const std::string& id, const std::string& session_id,
              const std::string& error_type, const std::string& why) const;
  // Never reached the pipeline (the bot's queue was full, or it stopped).
  void Refused(const domain::Bot& bot, const domain::ReceivedMessage& message,
               const std::string& session_id, const std::string& why) const;
  // A user rated one of the bot's replies (in the chat of `session_id`).
  void Feedback(const domain::Bot& bot, const domain::ReceivedFeedback& feedback,
                const std::string& session_id) const;

 private:
  domain::MonitoringContext ContextOf(const domain::Bot& bot, const std::string& session) const;
  void Count(const domain::Bot& bot, const char* outcome) const;

  domain::MonitoringSink* sink_;
  util::MetricFamily* messages_ = nullptr;  // null without a registry
  util::MetricFamily* feedback_ = nullptr;  // null without a registry
  const util::Clock* clock_;
};

}  // namespace sb::runtime
