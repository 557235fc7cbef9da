// The SQLite schema as an ordered list of versioned migrations (sql::ApplyMigrations runs them).
//   auto applied = sql::ApplyMigrations(db, SchemaMigrations(), db.path());
#pragma once

#include <span>

#include "storage/sql/migration_runner.hpp"

namespace sb::storage::sqlite {

// Every migration of this build, oldest first.
std::span<const sql::Migration> SchemaMigrations();

}  // namespace sb::storage::sqlite
