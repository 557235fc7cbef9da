// BotLogRepository over SQL (SQLite or PostgreSQL): a per-bot sequence row hands out seq_ids, so
// they keep increasing after retention has deleted the oldest entries.
#pragma once

#include "domain/bot_log.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlBotLogRepository final : public domain::BotLogRepository {
 public:
  explicit SqlBotLogRepository(Database& db) : db_(db) {}

  // kNotFound when the bot does not exist; kInvalidArgument when retention < 1.
  util::Result<std::int64_t> Append(const util::BotId& bot, const domain::BotLogEntry& entry,
                                    int retention) override;
  // One transaction for the whole batch.
  util::Result<void> AppendBatch(const std::vector<BatchItem>& items) override;
  // Any negative from_index means the newest. An unknown bot has an empty log.
  util::Result<domain::BotLogPage> Page(const util::BotId& bot, std::int64_t from_index,
                                        int max_count) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
