// Writes bot event-log entries off the message path: callers queue entries without blocking, and
// one drain at a time on the blocking pool stores them in order, at most one transaction per
// kCommitInterval (a busy server writes many entries per commit instead of a few). Entries of a
// bot deleted meanwhile are dropped; a storage failure is reported on the process log (never with
// the text).
//   writer.Append(bot_id, retention, entry);   // any thread, never blocks
//   writer.Commit();                           // before a read, and at shutdown: blocking
#pragma once

#include <chrono>
#include <deque>
#include <mutex>

#include "domain/bot_log.hpp"
#include "util/blocking_executor.hpp"
#include "util/ids.hpp"

namespace sb::runtime {

class BotLogWriter {
 public:
  static constexpr std::chrono::milliseconds kCommitInterval{20};

  BotLogWriter(domain::BotLogRepository& repo, util::BlockingExecutor& blocking);

  void Append(const util::BotId& bot, int retention, domain::BotLogEntry entry);

  // Stores what is queued now, on the calling thread, in order with any drain under way: a read
  // of the log that follows sees every entry appended before the call.
  void Commit();

  // Entries queued and not yet stored.
  std::size_t Pending() const;

 private:
  struct Item {
    util::BotId bot;
    int retention = 1;
    domain::BotLogEntry entry;
  };
  void Drain();
  void StoreQueued();
  void Store(std::deque<Item>& items);

  domain::BotLogRepository& repo_;
  util::BlockingExecutor& blocking_;
  std::mutex store_mu_;  // one store at a time, so batches reach the database in order
  mutable std::mutex mu_;
  std::deque<Item> pending_;
  bool draining_ = false;
};

}  // namespace sb::runtime
