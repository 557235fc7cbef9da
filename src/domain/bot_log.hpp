// The event log of a bot: received messages, replies, errors and lifecycle changes. Entries are
// numbered by a per-bot sequence that never restarts, and only the newest N are retained.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"

namespace sb::domain {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

const char* LogLevelName(LogLevel level);  // "debug", "info", "warning", "error"

struct BotLogEntry {
  std::int64_t seq_id = 0;  // assigned by the repository
  util::TimePoint timestamp;
  LogLevel level = LogLevel::kInfo;
  std::string text;
  std::vector<std::string> images;
  std::string message_session_id;  // "person_<id>" / "group_<id>" or empty
};

struct BotLogPage {
  std::vector<BotLogEntry> entries;  // oldest first
  std::int64_t total_count = 0;      // entries retained
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class BotLogRepository {
 public:
  virtual ~BotLogRepository() = default;
  // Assigns the next seq_id, stores the entry and drops entries beyond `retention` (newest kept).
  // Returns the seq_id given.
  virtual util::Result<std::int64_t> Append(const util::BotId& bot, const BotLogEntry& entry,
                                            int retention) = 0;
  // Entries of several bots, in order, as one write where the storage allows: the event log of
  // busy bots costs one transaction per batch, not per entry. Entries of bots that no longer
  // exist are skipped. The default appends one by one.
  struct BatchItem {
    util::BotId bot;
    BotLogEntry entry;
    int retention = 1;
  };
  virtual util::Result<void> AppendBatch(const std::vector<BatchItem>& items) {
    for (const auto& item : items) {
      auto r = Append(item.bot, item.entry, item.retention);
      if (!r && r.error().code != util::ErrorCode::kNotFound) return tl::unexpected(r.error());
    }
    return {};
  }
  // Up to `max_count` entries with seq_id <= from_index (-1: the newest), oldest first.
  virtual util::Result<BotLogPage> Page(const util::BotId& bot, std::int64_t from_index,
                                        int max_count) = 0;
};

}  // namespace sb::domain
