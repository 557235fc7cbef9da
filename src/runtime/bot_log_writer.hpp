// Writes bot event-log entries off the message path: callers queue entries without blocking, and
// one drain at a time on the blocking pool stores them in order. Entries of a bot deleted
// meanwhile are dropped; a storage failure is reported on the process log (never with the text).
//   writer.Append(bot_id, retention, entry);   // any thread, never blocks
//   writer.Flush();                            // at shutdown, after the pools are joined
#pragma once

#include <deque>
#include <mutex>

#include "domain/bot_log.hpp"
#include "util/blocking_executor.hpp"
#include "util/ids.hpp"

namespace sb::runtime {

class BotLogWriter {
 public:
  BotLogWriter(domain::BotLogRepository& repo, util::BlockingExecutor& blocking);

  void Append(const util::BotId& bot, int retention, domain::BotLogEntry entry);

  // Stores what is queued on the calling thread. Only when no drain can be running (the blocking
  // pool is joined), or from tests.
  void Flush();

  // Entries queued and not yet stored.
  std::size_t Pending() const;

 private:
  struct Item {
    util::BotId bot;
    int retention = 1;
    domain::BotLogEntry entry;
  };
  void Drain();
  void Store(std::deque<Item>& items);

  domain::BotLogRepository& repo_;
  util::BlockingExecutor& blocking_;
  mutable std::mutex mu_;
  std::deque<Item> pending_;
  bool draining_ = false;
};

}  // namespace sb::runtime
