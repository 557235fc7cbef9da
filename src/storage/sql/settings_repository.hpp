// SettingsRepository over SQL (SQLite or PostgreSQL): a plain key/value table.
// Set inserts or replaces in one statement.
#pragma once

#include "domain/settings.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlSettingsRepository final : public domain::SettingsRepository {
 public:
  explicit SqlSettingsRepository(Database& db) : db_(db) {}

  util::Result<std::optional<std::string>> Get(const std::string& key) override;
  util::Result<void> Set(const std::string& key, const std::string& value) override;
  util::Result<Stored> GetOrCreate(const std::string& key, const std::string& value) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
