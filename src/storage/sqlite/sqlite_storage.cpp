#include "storage/sqlite/sqlite_storage.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "storage/sqlite/migrations.hpp"
#include "util/private_files.hpp"

namespace sb::storage::sqlite {

util::Result<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    if (auto r = util::CreatePrivateDirectories(parent); !r) return tl::make_unexpected(r.error());
  }
  auto db = Database::Open(path);
  if (!db) return tl::make_unexpected(db.error());
  auto migrated = ApplyMigrations(**db);
  if (!migrated) return tl::make_unexpected(migrated.error());
  return std::unique_ptr<SqliteStorage>(new SqliteStorage(std::move(*db)));
}

SqliteStorage::SqliteStorage(std::unique_ptr<Database> db)
    : db_(std::move(db)),
      providers_(*db_),
      models_(*db_),
      bots_(*db_),
      bot_logs_(*db_),
      conversations_(*db_),
      pipelines_(*db_),
      tasks_(*db_),
      users_(*db_),
      api_keys_(*db_),
      settings_(*db_),
      plugins_(*db_) {}

SqliteStorage::~SqliteStorage() { Close(); }

void SqliteStorage::Close() { db_->Close(); }

}  // namespace sb::storage::sqlite
