// A fresh database on the `pg` fixture's cluster and a PgDatabase on it, for the PostgreSQL
// backend's tests (pg_database_test.cpp, pg_statement_test.cpp).
//   TEST_F(PgDatabaseTest, Something) { Ddl("CREATE TABLE t (id bigint)"); ... db_->Read(...); }
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "pg_test_database.hpp"
#include "pg_test_helpers.hpp"
#include "storage/postgres/pg_database.hpp"

namespace sb::test_support {

class PgDatabaseTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pg_.ok()) << pg_.error();
    db_ = OpenDb({});
    ASSERT_NE(db_, nullptr);
  }

  std::unique_ptr<storage::postgres::PgDatabase> OpenDb(storage::postgres::PgOptions options) {
    auto db = storage::postgres::PgDatabase::Open(pg_.url(), std::move(options));
    EXPECT_TRUE(db) << db.error().message;
    return db ? std::move(*db) : nullptr;
  }

  void Ddl(const std::string& sql) {
    auto done = db_->Write([&](storage::sql::Connection& c) { return c.Exec(sql); });
    ASSERT_TRUE(done) << done.error().message;
  }

  std::int64_t Count(const std::string& table) {
    auto n = db_->Read(
        [&](storage::sql::Connection& c) { return QueryInt(c, "SELECT count(*) FROM " + table); });
    EXPECT_TRUE(n) << n.error().message;
    return n.value_or(-1);
  }

  test_support::PgTestDatabase pg_;  // declared first: the database outlives the pool
  std::unique_ptr<storage::postgres::PgDatabase> db_;
};

}  // namespace sb::test_support
