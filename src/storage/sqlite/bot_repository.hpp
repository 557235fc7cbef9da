// BotRepository over SQLite. Deleting a bot deletes its log and log sequence through
// ON DELETE CASCADE, in the same statement.
#pragma once

#include "domain/bot.hpp"
#include "storage/sqlite/database.hpp"

namespace sb::storage::sqlite {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqliteBotRepository final : public domain::BotRepository {
 public:
  explicit SqliteBotRepository(Database& db) : db_(db) {}

  util::Result<std::vector<domain::Bot>> List() override;
  util::Result<domain::Bot> Get(const util::BotId& id) override;
  // Also kConflict when the uuid is taken.
  util::Result<void> Insert(const domain::Bot& bot) override;
  util::Result<void> Update(const domain::Bot& bot) override;
  util::Result<void> Delete(const util::BotId& id) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sqlite
