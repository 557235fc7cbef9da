// BotLeaseRepository over SQL (SQLite or PostgreSQL). Times are the database's, so instances whose
// clocks disagree still agree on when a lease lapses.
#pragma once

#include "domain/bot_lease.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlBotLeaseRepository final : public domain::BotLeaseRepository {
 public:
  explicit SqlBotLeaseRepository(Database& db) : db_(db) {}

  util::Result<std::optional<std::int64_t>> Acquire(const util::BotId& bot,
                                                    const std::string& owner,
                                                    const std::string& owner_url,
                                                    std::chrono::milliseconds ttl) override;
  util::Result<std::vector<domain::BotLease>> Renew(const std::string& owner,
                                                    std::chrono::milliseconds ttl) override;
  util::Result<void> Release(const util::BotId& bot, const std::string& owner) override;
  util::Result<std::optional<domain::BotLease>> Holder(const util::BotId& bot) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
