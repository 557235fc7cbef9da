// The runner that brings a database up to date at open, from an ordered list of versioned
// migrations (each backend has its own list). Applied versions are recorded in
// `schema_migrations`.
//   auto applied = ApplyMigrations(db, sqlite::SchemaMigrations(), path);  // 0 when up to date
#pragma once

#include <span>
#include <string_view>

#include "storage/sql/database.hpp"
#include "util/error.hpp"

namespace sb::storage::sql {

struct Migration {
  int version;           // strictly increasing, never reused or edited once released
  std::string_view sql;  // one or more statements without parameters; may be empty
};

// Runs each migration of `migrations` whose version is not yet recorded, each in its own write
// transaction together with its record, so a crash leaves either all of a migration or none.
// Several processes may run it at once on one database (Database::Exclusive). Returns how many ran.
// kInternal when a migration fails or the database was written by a newer build (a version above
// the last one known here); `what` names the database in that message.
util::Result<int> ApplyMigrations(Database& db, std::span<const Migration> migrations,
                                  std::string_view what);

}  // namespace sb::storage::sql
