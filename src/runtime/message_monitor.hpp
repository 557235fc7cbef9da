// What the running bots report to monitoring: each received message (pending), then its end
// (replied, ignored, failed) or its refusal (queue full, bot stopped). A few calls at the
// message path's call sites; the sink queues and never blocks. A null sink records nothing.
//   MessageMonitor monitor(sink, clock);
//   std::string id = monitor.Received(bot, pipeline_name, message, session_id);
//   monitor.Replied(bot, id, session_id, reply_text);
#pragma once

#include <string>

#include "domain/bot.hpp"
#include "domain/monitoring.hpp"
#include "domain/received_message.hpp"
#include "util/clock.hpp"

namespace sb::runtime {

// Thread-safe (the sink is); cheap to copy.
class MessageMonitor {
 public:
  MessageMonitor(domain::MonitoringSink* sink, const util::Clock* clock)
      : sink_(sink), clock_(clock) {}

  // Returns the record's id for the later calls; empty when monitoring is off.
  std::string Received(const domain::Bot& bot, const domain::ReceivedMessage& message,
                       const std::string& session_id) const;
  void Replied(const domain::Bot& bot, const std::string& id, const std::string& session_id,
               const std::string& reply_text) const;
  void Ignored(const std::string& id) const;
  // The run or the delivery failed: the message's status and an error record.
  void Failed(const domain::Bot& bot, const std::string& id, const std::string& session_id,
              const std::string& error_type, const std::string& why) const;
  // Never reached the pipeline (the bot's queue was full, or it stopped).
  void Refused(const domain::Bot& bot, const domain::ReceivedMessage& message,
               const std::string& session_id, const std::string& why) const;

 private:
  domain::MonitoringContext ContextOf(const domain::Bot& bot, const std::string& session) const;

  domain::MonitoringSink* sink_;
  const util::Clock* clock_;
};

}  // namespace sb::runtime
