// The PostgreSQL schema as an ordered list of versioned migrations, the twin of
// storage/sqlite/migrations.cpp: after every migration of both lists, both databases have the same
// tables, columns, keys, constraints and indexes (tests/tools/schema_parity.py checks it).
//   for (const PgMigration& m : PostgresMigrations()) { /* run m.sql unless m.version recorded */ }
#pragma once

#include <span>
#include <string_view>

namespace sb::storage::postgres {

// Version numbers are shared with the SQLite list: a PostgreSQL migration carries the number of
// the SQLite migration whose schema it brings, so "schema version N" means the same tables on both.
// The first one (10) is the baseline equal to SQLite's migrations 1..10 together. Every later
// SQLite migration gets a twin here with the same version (tests/unit/pg_schema_test.cpp checks
// it); the twin of one that only reshapes SQLite data or works around an SQLite limit (a table
// rebuilt to change a constraint) has what PostgreSQL needs for the same end, or empty SQL.
struct PgMigration {
  int version;            // strictly increasing, never reused or edited once released
  std::string_view name;  // for logs and errors
  std::string_view sql;   // statements without parameters, run in one transaction; may be empty
};

// Every migration of this build, oldest first.
std::span<const PgMigration> PostgresMigrations();

}  // namespace sb::storage::postgres
