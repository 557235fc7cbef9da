// The PostgreSQL migration list against the SQLite one, without a PostgreSQL server: shared
// version numbers, and every SQLite table and index created by the PostgreSQL DDL too. Columns,
// types and constraints are compared against a real server by tests/tools/schema_parity.py.
#include "storage/postgres/pg_schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "storage/sqlite/database.hpp"
#include "storage/sqlite/migrations.hpp"
#include "support/temp_dir.hpp"

namespace sb::storage {
namespace {

constexpr int kBaseline = 10;  // the PostgreSQL baseline equals SQLite's migrations 1..10

std::string AllPostgresSql() {
  std::string all;
  for (const auto& m : postgres::PostgresMigrations()) all.append(m.sql).append("\n");
  return all;
}

TEST(PgSchemaTest, VersionsIncreaseAndNameSomething) {
  int previous = 0;
  for (const auto& m : postgres::PostgresMigrations()) {
    EXPECT_GT(m.version, previous);
    EXPECT_FALSE(m.name.empty()) << m.version;
    previous = m.version;
  }
  ASSERT_FALSE(postgres::PostgresMigrations().empty());
  EXPECT_EQ(postgres::PostgresMigrations().front().version, kBaseline);
}

// Each SQLite migration after the baseline has a PostgreSQL one of the same number (with empty
// SQL when it only reshaped SQLite's data), so a schema version means the same on both.
TEST(PgSchemaTest, EverySqliteMigrationAfterTheBaselineHasATwin) {
  std::set<int> sqlite_versions;
  for (const auto& m : sqlite::SchemaMigrations()) {
    if (m.version > kBaseline) sqlite_versions.insert(m.version);
  }
  std::set<int> pg_versions;
  for (const auto& m : postgres::PostgresMigrations()) {
    if (m.version > kBaseline) pg_versions.insert(m.version);
  }
  EXPECT_EQ(sqlite_versions, pg_versions)
      << "add the PostgreSQL twin of each new SQLite migration to storage/postgres/pg_schema.cpp";
}

// A table or index added on the SQLite side only is caught here, before any PostgreSQL runs.
TEST(PgSchemaTest, EverySqliteTableAndIndexIsCreatedOnPostgres) {
  test_support::TempDir dir("pg-schema");
  auto db = sqlite::Database::Open((dir.path() / "schema.db").string());
  ASSERT_TRUE(db) << db.error().message;
  auto applied = sql::ApplyMigrations(**db, sqlite::SchemaMigrations(), "test");
  ASSERT_TRUE(applied) << applied.error().message;
  auto objects = (*db)->Read([](sql::Connection& c) -> util::Result<std::vector<std::string>> {
    // FTS virtual tables and their shadow tables have a PostgreSQL design of their own; the
    // virtual table's name is kept.
    auto stmt = c.Prepare(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index') "
        "AND name NOT LIKE 'sqlite_%' AND sql IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM pragma_table_list WHERE pragma_table_list.name = sqlite_master.name "
        "AND pragma_table_list.type = 'shadow')");
    if (!stmt) return tl::make_unexpected(stmt.error());
    std::vector<std::string> out;
    for (;;) {
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) return out;
      out.push_back(stmt->Text(0) + " " + stmt->Text(1));
    }
  });
  ASSERT_TRUE(objects) << objects.error().message;
  EXPECT_GT(objects->size(), 30u);
  const std::string pg = AllPostgresSql();
  for (const auto& object : *objects) {
    const bool table = object.starts_with("table ");
    const std::string name = object.substr(object.find(' ') + 1);
    // The migration runner (storage/sql/migration_runner.cpp) makes this one on every backend.
    if (name == "schema_migrations") continue;
    const std::vector<std::string> forms =
        table ? std::vector<std::string>{"CREATE TABLE " + name + " (",
                                         "CREATE TABLE IF NOT EXISTS " + name + " ("}
              : std::vector<std::string>{"INDEX " + name + " ON", "INDEX " + name + "\n"};
    const bool found = std::any_of(forms.begin(), forms.end(), [&](const std::string& form) {
      return pg.find(form) != std::string::npos;
    });
    EXPECT_TRUE(found) << object << " has no PostgreSQL twin in storage/postgres/pg_schema.cpp";
  }
}

}  // namespace
}  // namespace sb::storage
