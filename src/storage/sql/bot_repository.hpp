// BotRepository over SQL (SQLite or PostgreSQL). Deleting a bot deletes its log and log sequence
// through ON DELETE CASCADE, in the same statement.
#pragma once

#include "domain/bot.hpp"
#include "storage/sql/database.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sql {

// The stored form of a bot's adapter config (it holds the platform's tokens and secrets): sealed
// under the bot's uuid.
std::string SealBotConfig(const util::SecretBox& secrets, const util::BotId& id,
                          const std::string& config_text);

// Thread-safe; every method is one transaction on `db`. `db` and `secrets` (which seals the
// adapter configs at rest) must outlive this object.
class SqlBotRepository final : public domain::BotRepository {
 public:
  SqlBotRepository(Database& db, const util::SecretBox& secrets) : db_(db), secrets_(secrets) {}

  util::Result<std::vector<domain::Bot>> List() override;
  util::Result<domain::Bot> Get(const util::BotId& id) override;
  // Also kConflict when the uuid is taken.
  util::Result<void> Insert(const domain::Bot& bot) override;
  util::Result<void> Update(const domain::Bot& bot) override;
  util::Result<void> Delete(const util::BotId& id) override;

 private:
  Database& db_;
  const util::SecretBox& secrets_;
};

}  // namespace sb::storage::sql
