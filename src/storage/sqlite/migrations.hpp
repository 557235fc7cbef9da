// The SQLite schema as an ordered list of versioned migrations, and the runner that brings a
// database file up to date at open. Applied versions are recorded in `schema_migrations`.
//   auto applied = ApplyMigrations(db);  // number of migrations run now (0 when up to date)
#pragma once

#include <span>
#include <vector>

#include "storage/sqlite/database.hpp"
#include "util/error.hpp"

namespace sb::storage::sqlite {

struct Migration {
  int version;      // strictly increasing, never reused or edited once released
  const char* sql;  // one or more statements
};

// Every migration of this build, oldest first.
std::span<const Migration> SchemaMigrations();

// Runs each migration of `migrations` whose version is not yet recorded, each in its own write
// transaction together with its record, so a crash leaves either all of a migration or none.
// Returns how many ran. kInternal when a migration fails or the file was written by a newer build
// (a version above the last one known here).
util::Result<int> ApplyMigrations(Database& db,
                                  std::span<const Migration> migrations = SchemaMigrations());

}  // namespace sb::storage::sqlite
