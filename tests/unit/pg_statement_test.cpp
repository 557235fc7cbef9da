// Statements on the real PostgreSQL of the `pg` ctest fixture: every type in and out, integer
// reads of booleans and aggregates, row counts, the statement cache, and the failures a
// repository must recognise (unique, foreign key) with messages that never quote a value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/pg_database_fixture.hpp"

namespace sb::storage::postgres {
namespace {

using sql::Connection;
using test_support::QueryInt;
using test_support::RunSql;
using util::ErrorCode;
using util::Result;
using PgDatabaseTest = test_support::PgDatabaseTest;

std::vector<std::byte> Bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST_F(PgDatabaseTest, EveryTypeRoundTrips) {
  Ddl("CREATE TABLE t (id bigint PRIMARY KEY, i bigint, d double precision, s text, b bytea)");
  struct Row {
    std::int64_t id;
    std::optional<std::int64_t> i;
    std::optional<double> d;
    std::optional<std::string> s;
    std::optional<std::vector<std::byte>> b;
  };
  std::vector<std::byte> every_byte(256);
  for (int v = 0; v < 256; ++v) every_byte[static_cast<std::size_t>(v)] = std::byte(v);
  const std::vector<Row> rows = {
      {1, std::numeric_limits<std::int64_t>::max(), 0.1, "", std::vector<std::byte>{}},
      {2, std::numeric_limits<std::int64_t>::min(), 5e-324, "héllo ✓ 'quoted' ? $1 \\x00",
       every_byte},
      {3, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
      {4, 0, -0.0, std::string(1 << 20, 'x'), std::vector<std::byte>(1 << 20, std::byte{0xAB})},
      {5, -1, std::numeric_limits<double>::max(), "\\x41", Bytes({0})},
      {6, 9007199254740993, 3.141592653589793, "line\nbreak\ttab", Bytes({0x5c, 0x78})},
      {7, 42, 1.0 / 3.0, "x", Bytes({0xff})},
  };
  auto inserted = db_->Write([&](Connection& c) -> Result<void> {
    for (const Row& row : rows) {
      auto insert = c.Prepare("INSERT INTO t (id, i, d, s, b) VALUES (?, ?, ?, ?, ?)");
      if (!insert) return tl::make_unexpected(insert.error());
      insert->Bind(1, row.id).Bind(2, row.i).Bind(3, row.d).Bind(4, row.s);
      if (row.b) {
        insert->BindBlob(5, *row.b);
      } else {
        insert->BindNull(5);
      }
      if (auto done = insert->Run(); !done) return done;
    }
    return util::Ok();
  });
  ASSERT_TRUE(inserted) << inserted.error().message;

  auto checked = db_->Read([&](Connection& c) -> Result<int> {
    auto select = c.Prepare("SELECT id, i, d, s, b FROM t ORDER BY id");
    if (!select) return tl::make_unexpected(select.error());
    int n = 0;
    for (const Row& row : rows) {
      auto step = select->Step();
      if (!step) return tl::make_unexpected(step.error());
      EXPECT_TRUE(*step);
      SCOPED_TRACE("row " + std::to_string(row.id));
      EXPECT_EQ(select->Int64(0), row.id);
      EXPECT_EQ(select->IsNull(1), !row.i);
      if (row.i) {
        EXPECT_EQ(select->Int64(1), *row.i);
      }
      EXPECT_EQ(select->IsNull(2), !row.d);
      if (row.d) {
        EXPECT_EQ(select->Double(2), *row.d);  // exactly: no digits lost on the way
        EXPECT_EQ(std::signbit(select->Double(2)), std::signbit(*row.d));
      }
      EXPECT_EQ(select->IsNull(3), !row.s);  // '' is not NULL
      if (row.s) {
        EXPECT_EQ(select->Text(3), *row.s);
      }
      EXPECT_EQ(select->IsNull(4), !row.b);
      if (row.b) {
        auto blob = select->Blob(4);
        EXPECT_EQ(std::vector<std::byte>(blob.begin(), blob.end()), *row.b);
        EXPECT_EQ(select->Blob(4).data(), blob.data());  // decoded once per row
      } else {
        EXPECT_TRUE(select->Blob(4).empty());
      }
      ++n;
    }
    auto end = select->Step();
    EXPECT_TRUE(end && !*end);
    end = select->Step();  // stepping past the end stays at the end
    EXPECT_TRUE(end && !*end);
    return n;
  });
  ASSERT_TRUE(checked) << checked.error().message;
  EXPECT_EQ(*checked, static_cast<int>(rows.size()));
}

TEST_F(PgDatabaseTest, ReadsBooleansAggregatesAndSpecialDoubles) {
  auto r = db_->Read([](Connection& c) -> Result<void> {
    auto s = c.Prepare(
        "SELECT true, false, sum(v), avg(v), 12.7::numeric, count(*), ?::float8, ?::float8, "
        "?::float8, 'abc'::text, NULL::bigint FROM (VALUES (4::bigint), (8::bigint)) AS x(v)");
    if (!s) return tl::make_unexpected(s.error());
    s->Bind(1, std::numeric_limits<double>::infinity())
        .Bind(2, -std::numeric_limits<double>::infinity())
        .Bind(3, std::nan(""));
    auto row = s->Step();
    if (!row) return tl::make_unexpected(row.error());
    EXPECT_TRUE(*row);
    EXPECT_EQ(s->Int64(0), 1);
    EXPECT_EQ(s->Int64(1), 0);
    EXPECT_EQ(s->Int64(2), 12);  // numeric "12"
    EXPECT_EQ(s->Int64(3), 6);   // numeric "6.0000000000000000"
    EXPECT_EQ(s->Double(3), 6.0);
    EXPECT_EQ(s->Int64(4), 12);  // truncated, as SQLite's integer read of 12.7
    EXPECT_EQ(s->Int(5), 2);
    EXPECT_EQ(s->Double(6), std::numeric_limits<double>::infinity());
    EXPECT_EQ(s->Double(7), -std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isnan(s->Double(8)));
    auto text_as_bytes = s->Blob(9);  // a text column read as a blob is its bytes
    EXPECT_EQ(
        std::string(reinterpret_cast<const char*>(text_as_bytes.data()), text_as_bytes.size()),
        "abc");
    EXPECT_TRUE(s->IsNull(10));
    EXPECT_EQ(s->Int64(10), 0);
    EXPECT_TRUE(s->IsNull(99));  // out of range reads as NULL, not a crash
    EXPECT_EQ(s->Text(99), "");
    return util::Ok();
  });
  ASSERT_TRUE(r) << r.error().message;
}

TEST_F(PgDatabaseTest, BooleanColumnsTakeIntegersAndReadAsIntegers) {
  Ddl("CREATE TABLE flags (id bigint PRIMARY KEY, on_off boolean NOT NULL)");
  auto r = db_->Write([](Connection& c) -> Result<std::int64_t> {
    auto insert = c.Prepare("INSERT INTO flags (id, on_off) VALUES (?, ?)");
    if (!insert) return tl::make_unexpected(insert.error());
    if (auto done = insert->Bind(1, 1).Bind(2, true).Run(); !done) {
      return tl::make_unexpected(done.error());
    }
    return QueryInt(c, "SELECT on_off FROM flags WHERE id = 1");
  });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, 1);
}

TEST_F(PgDatabaseTest, ChangesCountsTheLastInsertUpdateOrDelete) {
  Ddl("CREATE TABLE items (id bigint PRIMARY KEY, v bigint)");
  auto r = db_->Write([](Connection& c) -> Result<void> {
    if (auto done = RunSql(c, "INSERT INTO items VALUES (1, 0), (2, 0), (3, 0)"); !done)
      return done;
    EXPECT_EQ(c.Changes(), 3);
    if (auto done = RunSql(c, "UPDATE items SET v = 1 WHERE id >= 2"); !done) return done;
    EXPECT_EQ(c.Changes(), 2);
    if (auto n = QueryInt(c, "SELECT count(*) FROM items"); !n)
      return tl::make_unexpected(n.error());
    EXPECT_EQ(c.Changes(), 2);  // a SELECT changes nothing
    auto returning = c.Prepare("INSERT INTO items VALUES (?, 7) RETURNING id * 10");
    if (!returning) return tl::make_unexpected(returning.error());
    auto row = returning->Bind(1, 4).Step();
    EXPECT_TRUE(row && *row);
    EXPECT_EQ(returning->Int64(0), 40);
    EXPECT_EQ(c.Changes(), 1);
    if (auto done = c.Exec("DELETE FROM items WHERE v = 0"); !done) return done;
    EXPECT_EQ(c.Changes(), 1);
    return util::Ok();
  });
  ASSERT_TRUE(r) << r.error().message;
}

TEST_F(PgDatabaseTest, PreparesOnceAndGivesALiveStatementsSqlACopy) {
  auto db = OpenDb({.pool_size = 1});  // one connection, so both transactions share its cache
  const char* kSql = "SELECT ?1::bigint * 2";
  for (int round = 0; round < 2; ++round) {
    auto r = db->Read([&](Connection& c) -> Result<void> {
      auto a = c.Prepare(kSql);
      if (!a) return tl::make_unexpected(a.error());
      a->Bind(1, 5);
      auto b = c.Prepare(kSql);  // the cached one is in use: a one-off copy
      if (!b) return tl::make_unexpected(b.error());
      b->Bind(1, 7);
      auto row_b = b->Step();
      auto row_a = a->Step();
      EXPECT_TRUE(row_a && *row_a && row_b && *row_b);
      EXPECT_EQ(a->Int64(0), 10);
      EXPECT_EQ(b->Int64(0), 14);
      return util::Ok();
    });
    ASSERT_TRUE(r) << r.error().message;
  }
  auto prepared = db->Read([](Connection& c) {
    return QueryInt(c,
                    "SELECT count(*) FROM pg_prepared_statements "
                    "WHERE statement = 'SELECT $1::bigint * 2'");
  });
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(*prepared, 1);
}

TEST_F(PgDatabaseTest, StatementErrorsNameTheSqlAndNeverTheValues) {
  auto r = db_->Read([](Connection& c) -> Result<void> {
    auto bad = c.Prepare("SELEC 1");
    EXPECT_FALSE(bad);
    if (!bad) {
      EXPECT_EQ(bad.error().code, ErrorCode::kInternal);
      EXPECT_EQ(bad.error().message.rfind("database error 42601: syntax error", 0), 0u)
          << bad.error().message;
      EXPECT_NE(bad.error().message.find("(in \"SELEC 1\")"), std::string::npos);
    }
    return util::Ok();
  });
  // The failed statement aborted the transaction; a body that carries on is not told otherwise.
  EXPECT_FALSE(r);

  r = db_->Read([](Connection& c) -> Result<void> {
    auto cast = c.Prepare("SELECT ?::bigint");
    if (!cast) return tl::make_unexpected(cast.error());
    auto row = cast->Bind(1, "not-a-number-s3cret").Step();
    EXPECT_FALSE(row);
    if (!row) {
      EXPECT_EQ(row.error().message.find("s3cret"), std::string::npos) << row.error().message;
      EXPECT_EQ(row.error().message.rfind("database error 22P02: invalid input syntax", 0), 0u)
          << row.error().message;
    }
    return util::Ok();
  });
  EXPECT_FALSE(r);

  // Bind mistakes are caught before anything reaches the server: the transaction goes on.
  r = db_->Read([](Connection& c) -> Result<void> {
    auto out_of_range = c.Prepare("SELECT ?::bigint");
    if (!out_of_range) return tl::make_unexpected(out_of_range.error());
    auto row = out_of_range->Bind(2, 1).Step();
    EXPECT_FALSE(row);
    if (!row) {
      EXPECT_NE(row.error().message.find("bind index 2"), std::string::npos);
    }

    auto nul = c.Prepare("SELECT ?::text");
    if (!nul) return tl::make_unexpected(nul.error());
    row = nul->Bind(1, std::string_view("a\0b", 3)).Step();
    EXPECT_FALSE(row);
    if (!row) {
      EXPECT_NE(row.error().message.find("NUL"), std::string::npos);
    }

    auto zero = c.Prepare("SELECT ?0");
    EXPECT_FALSE(zero);
    if (!zero) {
      EXPECT_EQ(zero.error().code, ErrorCode::kInternal);
    }
    return util::Ok();
  });
  EXPECT_TRUE(r);
}

TEST_F(PgDatabaseTest, UniqueAndForeignKeyFailuresAreRecognised) {
  Ddl("CREATE TABLE parent (id bigint PRIMARY KEY, name text UNIQUE);"
      "CREATE TABLE child (id bigint PRIMARY KEY, parent_id bigint REFERENCES parent (id))");
  auto seeded = db_->Write(
      [](Connection& c) { return RunSql(c, "INSERT INTO parent VALUES (1, 'unique-s3cret')"); });
  ASSERT_TRUE(seeded) << seeded.error().message;

  auto duplicate = db_->Write([](Connection& c) -> Result<void> {
    auto insert = c.Prepare("INSERT INTO parent (id, name) VALUES (?, ?)");
    if (!insert) return tl::make_unexpected(insert.error());
    auto done = insert->Bind(1, 2).Bind(2, "unique-s3cret").Run();
    EXPECT_FALSE(done);
    EXPECT_TRUE(insert->FailedOnUnique());
    EXPECT_FALSE(insert->FailedOnForeignKey());
    if (!done) {
      EXPECT_EQ(done.error().code, ErrorCode::kInternal);
      EXPECT_EQ(done.error().message.rfind("database error 23505: duplicate key value", 0), 0u)
          << done.error().message;
      EXPECT_NE(done.error().message.find("(in \"INSERT INTO parent (id, name) VALUES (?, ?)\")"),
                std::string::npos)
          << done.error().message;
      EXPECT_EQ(done.error().message.find("s3cret"), std::string::npos);
    }
    return util::Fail(ErrorCode::kConflict, "name taken");
  });
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.error().code, ErrorCode::kConflict);

  auto orphan = db_->Write([](Connection& c) -> Result<void> {
    auto insert = c.Prepare("INSERT INTO child (id, parent_id) VALUES (?, ?)");
    if (!insert) return tl::make_unexpected(insert.error());
    auto done = insert->Bind(1, 1).Bind(2, 99).Run();
    EXPECT_FALSE(done);
    EXPECT_TRUE(insert->FailedOnForeignKey());
    EXPECT_FALSE(insert->FailedOnUnique());
    return done;
  });
  ASSERT_FALSE(orphan);
  EXPECT_NE(orphan.error().message.find("23503"), std::string::npos);
  EXPECT_EQ(Count("parent"), 1);
  EXPECT_EQ(Count("child"), 0);
}

}  // namespace
}  // namespace sb::storage::postgres
