#include "storage/postgres/pg_storage.hpp"

#include <utility>
#include <vector>

#include "storage/postgres/pg_database.hpp"
#include "storage/postgres/pg_schema.hpp"
#include "storage/postgres/pg_url.hpp"
#include "storage/sql/migration_runner.hpp"

namespace sb::storage::postgres {

util::Result<std::unique_ptr<PostgresStorage>> PostgresStorage::Open(const std::string& url,
                                                                     int pool_size,
                                                                     util::SecretBox secrets) {
  PgOptions options;
  options.pool_size = pool_size;
  auto db = PgDatabase::Open(url, options);
  if (!db) return tl::make_unexpected(db.error());
  std::vector<sql::Migration> migrations;
  for (const PgMigration& m : PostgresMigrations()) migrations.push_back({m.version, m.sql});
  auto migrated = sql::ApplyMigrations(**db, migrations, MaskPassword(url));
  if (!migrated) return tl::make_unexpected(migrated.error());
  return std::unique_ptr<PostgresStorage>(new PostgresStorage(std::move(*db), std::move(secrets)));
}

}  // namespace sb::storage::postgres
