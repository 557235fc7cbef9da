#include "storage/sql/migration_runner.hpp"

#include <fmt/format.h>

#include "util/clock.hpp"

namespace sb::storage::sql {

namespace {

constexpr const char* kCreateMigrationsTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version     BIGINT PRIMARY KEY NOT NULL,
  applied_at  BIGINT NOT NULL
))sql";

}  // namespace

util::Result<int> ApplyMigrations(Database& db, std::span<const Migration> migrations,
                                  std::string_view what) {
  auto created = db.Exclusive([](Connection& c) { return c.Exec(kCreateMigrationsTable); });
  if (!created) return tl::make_unexpected(created.error());

  const int known = migrations.empty() ? 0 : migrations.back().version;
  auto newest = db.Read([](Connection& c) -> util::Result<int> {
    auto stmt = c.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    return stmt->Int(0);
  });
  if (!newest) return tl::make_unexpected(newest.error());
  if (*newest > known) {
    // Running older code on a newer schema would misread or corrupt rows: refuse to start.
    return util::Fail(util::ErrorCode::kInternal,
                      fmt::format("database {} has schema version {}, newer than this build's {}",
                                  what, *newest, known));
  }

  int applied = 0;
  int previous = 0;
  for (const Migration& m : migrations) {
    if (m.version <= previous) {
      return util::Fail(util::ErrorCode::kInternal,
                        fmt::format("migration versions out of order at {}", m.version));
    }
    previous = m.version;
    // Exclusive: the check and the migration run alone, so two processes (or instances) opening
    // the same new database cannot both apply it.
    auto ran = db.Exclusive([&](Connection& c) -> util::Result<bool> {
      auto seen = c.Prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
      if (!seen) return tl::make_unexpected(seen.error());
      seen->Bind(1, m.version);
      auto row = seen->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (*row) return false;
      if (auto r = m.sql.empty() ? util::Ok() : c.Exec(std::string(m.sql)); !r) {
        util::Error e = r.error();
        e.message = fmt::format("migration {} failed: {}", m.version, e.message);
        return tl::make_unexpected(std::move(e));
      }
      auto record = c.Prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)");
      if (!record) return tl::make_unexpected(record.error());
      record->Bind(1, m.version).Bind(2, util::ToUnixMillis(util::SystemClock().Now()));
      if (auto r = record->Run(); !r) return tl::make_unexpected(r.error());
      return true;
    });
    if (!ran) return tl::make_unexpected(ran.error());
    if (*ran) ++applied;
  }
  return applied;
}

}  // namespace sb::storage::sql
