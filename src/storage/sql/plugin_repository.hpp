// PluginRepository over SQL (SQLite or PostgreSQL): one row per installed plugin, and its key-value
// storage (removed with it by the foreign key).
#pragma once

#include "domain/plugin.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlPluginRepository final : public domain::PluginRepository {
 public:
  explicit SqlPluginRepository(Database& db) : db_(db) {}

  util::Result<std::vector<domain::InstalledPlugin>> List() override;
  util::Result<domain::InstalledPlugin> Get(const domain::PluginKey& key) override;
  util::Result<void> Put(const domain::InstalledPlugin& plugin) override;
  util::Result<void> Remove(const domain::PluginKey& key) override;
  util::Result<std::optional<std::string>> StorageGet(const domain::PluginKey& key,
                                                      const std::string& item) override;
  util::Result<void> StorageSet(const domain::PluginKey& key, const std::string& item,
                                const std::string& value) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
