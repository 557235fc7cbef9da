// PgDatabase's transactions against the real PostgreSQL of the `pg` ctest fixture, one fresh
// database per test: rollback, retry of serialization failures, the pool's bound, Close, and
// the latency of a simple transaction.
#include "storage/postgres/pg_database.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/eventually.hpp"
#include "support/pg_database_fixture.hpp"

namespace sb::storage::postgres {
namespace {

using sql::Connection;
using test_support::QueryInt;
using test_support::RunSql;
using util::ErrorCode;
using util::Result;
using PgDatabaseTest = test_support::PgDatabaseTest;

TEST_F(PgDatabaseTest, WriteRollsBackOnAnErrorResultOrAnException) {
  auto db = OpenDb({.pool_size = 1});  // the same connection must be clean afterwards
  db_ = std::move(db);
  Ddl("CREATE TABLE log (id bigint PRIMARY KEY)");

  auto failed = db_->Write([](Connection& c) -> Result<void> {
    if (auto done = RunSql(c, "INSERT INTO log VALUES (1)"); !done) return done;
    return util::Fail(ErrorCode::kConflict, "changed my mind");
  });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kConflict);
  EXPECT_EQ(Count("log"), 0);

  EXPECT_THROW(db_->Write([](Connection& c) -> Result<void> {
    if (auto done = RunSql(c, "INSERT INTO log VALUES (2)"); !done) return done;
    throw std::runtime_error("boom");
  }),
               std::runtime_error);
  EXPECT_EQ(Count("log"), 0);

  // A body that ignores a failed statement is not told its earlier writes are in.
  auto ignored = db_->Write([](Connection& c) -> Result<void> {
    if (auto done = RunSql(c, "INSERT INTO log VALUES (3)"); !done) return done;
    (void)RunSql(c, "INSERT INTO log VALUES (3)");  // duplicate: the transaction is now aborted
    return util::Ok();
  });
  ASSERT_FALSE(ignored);
  EXPECT_EQ(ignored.error().code, ErrorCode::kInternal);
  EXPECT_EQ(Count("log"), 0);

  auto written = db_->Write([](Connection& c) { return RunSql(c, "INSERT INTO log VALUES (4)"); });
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(Count("log"), 1);
}

TEST_F(PgDatabaseTest, ReadsAreReadOnlyAndSeeOneSnapshot) {
  Ddl("CREATE TABLE snap (id bigint PRIMARY KEY)");
  auto write_in_read =
      db_->Read([](Connection& c) { return RunSql(c, "INSERT INTO snap VALUES (1)"); });
  ASSERT_FALSE(write_in_read);
  EXPECT_NE(write_in_read.error().message.find("25006"), std::string::npos)
      << write_in_read.error().message;

  auto r = db_->Read([&](Connection& c) -> Result<void> {
    auto before = QueryInt(c, "SELECT count(*) FROM snap");
    if (!before) return tl::make_unexpected(before.error());
    std::thread writer([&] {
      auto w = db_->Write([](Connection& wc) { return RunSql(wc, "INSERT INTO snap VALUES (2)"); });
      EXPECT_TRUE(w) << w.error().message;
    });
    writer.join();
    auto after = QueryInt(c, "SELECT count(*) FROM snap");
    if (!after) return tl::make_unexpected(after.error());
    EXPECT_EQ(*before, *after);
    return util::Ok();
  });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Count("snap"), 1);
}

// Both bodies read the row before either writes it, so one of them must fail with 40001 and run
// again: the final value counts both.
TEST_F(PgDatabaseTest, SerializationFailureRunsTheBodyAgain) {
  Ddl("CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL);"
      "INSERT INTO counter VALUES (1, 0)");
  test_support::Rendezvous both_read(2);
  std::atomic<int> runs{0};
  auto increment = [&](bool replace_error) {
    bool first = true;
    return db_->Write([&, first](Connection& c) mutable -> Result<void> {
      ++runs;
      auto n = QueryInt(c, "SELECT n FROM counter WHERE id = 1");
      if (!n) return tl::make_unexpected(n.error());
      if (first) {
        EXPECT_TRUE(both_read.Arrive());
      }
      first = false;
      auto update = c.Prepare("UPDATE counter SET n = ? WHERE id = 1");
      if (!update) return tl::make_unexpected(update.error());
      auto done = update->Bind(1, *n + 1).Run();
      // A repository may turn the error into one of its own; the retry must not depend on it.
      if (!done && replace_error) return util::Fail(ErrorCode::kNotFound, "gone");
      return done;
    });
  };
  Result<void> a, b;
  std::thread ta([&] { a = increment(false); });
  std::thread tb([&] { b = increment(true); });
  ta.join();
  tb.join();
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(runs.load(), 3);
  EXPECT_GE(db_->stats().rerun_count, 1);
  auto n = db_->Read([](Connection& c) { return QueryInt(c, "SELECT n FROM counter"); });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2);
}

TEST_F(PgDatabaseTest, ConcurrentReadModifyWritesAllCount) {
  Ddl("CREATE TABLE counter (id bigint PRIMARY KEY, n bigint NOT NULL);"
      "INSERT INTO counter VALUES (1, 0)");
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = db_->Write([](Connection& c) -> Result<void> {
          auto n = QueryInt(c, "SELECT n FROM counter WHERE id = 1");
          if (!n) return tl::make_unexpected(n.error());
          auto update = c.Prepare("UPDATE counter SET n = ? WHERE id = 1");
          if (!update) return tl::make_unexpected(update.error());
          return update->Bind(1, *n + 1).Run();
        });
        if (!r) {
          ++failures;
          ADD_FAILURE() << r.error().message;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto n = db_->Read([](Connection& c) { return QueryInt(c, "SELECT n FROM counter"); });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, kThreads * kPerThread);
  std::printf("[ figure ] %d read-modify-writes on one row from %d threads: %lld run again\n",
              kThreads * kPerThread, kThreads, static_cast<long long>(db_->stats().rerun_count));
}

TEST_F(PgDatabaseTest, GivesUpAfterTheLastAttemptWithUnavailable) {
  auto db = OpenDb({.max_attempts = 1});
  ASSERT_TRUE(db->Write([](Connection& c) {
    return c.Exec(
        "CREATE TABLE counter (id bigint PRIMARY KEY, n bigint);"
        "INSERT INTO counter VALUES (1, 0)");
  }));
  test_support::Rendezvous both_read(2);
  auto increment = [&] {
    return db->Write([&](Connection& c) -> Result<void> {
      auto n = QueryInt(c, "SELECT n FROM counter WHERE id = 1");
      if (!n) return tl::make_unexpected(n.error());
      EXPECT_TRUE(both_read.Arrive());
      return RunSql(c, "UPDATE counter SET n = n + 1 WHERE id = 1");
    });
  };
  Result<void> a, b;
  std::thread ta([&] { a = increment(); });
  std::thread tb([&] { b = increment(); });
  ta.join();
  tb.join();
  ASSERT_NE(a.has_value(), b.has_value()) << "exactly one must lose the race";
  const util::Error& lost = a ? b.error() : a.error();
  EXPECT_EQ(lost.code, ErrorCode::kUnavailable);
  EXPECT_EQ(lost.message.rfind("database busy:", 0), 0u) << lost.message;
}

TEST_F(PgDatabaseTest, PoolBoundAndAcquireTimeoutAreRespected) {
  const std::string app = "sbt-pool-" + pg_.name();
  auto db = OpenDb(
      {.pool_size = 2, .acquire_timeout = std::chrono::milliseconds(300), .application_name = app});
  test_support::Gate release;
  std::atomic<int> inside{0};
  std::vector<std::thread> holders;
  for (int i = 0; i < 2; ++i) {
    holders.emplace_back([&] {
      auto r = db->Read([&](Connection&) -> Result<void> {
        ++inside;
        EXPECT_TRUE(release.Wait());
        return util::Ok();
      });
      EXPECT_TRUE(r) << r.error().message;
    });
  }
  ASSERT_TRUE(test::Eventually([&] { return inside.load() == 2; }));
  const auto start = std::chrono::steady_clock::now();
  auto third = db->Read([](Connection& c) { return QueryInt(c, "SELECT 1"); });
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(third.error().message.rfind("database busy:", 0), 0u) << third.error().message;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_LT(waited, std::chrono::seconds(3));

  auto seen = db_->Read([&](Connection& c) -> Result<std::int64_t> {
    auto s = c.Prepare("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?");
    if (!s) return tl::make_unexpected(s.error());
    auto row = s->Bind(1, app).Step();
    if (!row) return tl::make_unexpected(row.error());
    return s->Int64(0);
  });
  ASSERT_TRUE(seen) << seen.error().message;
  EXPECT_EQ(*seen, 2);

  release.Open();
  for (auto& holder : holders) holder.join();
  auto after = db->Read([](Connection& c) { return QueryInt(c, "SELECT 1"); });
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_LE(db->stats().open, 2);
}

TEST_F(PgDatabaseTest, CloseWaitsForRunningTransactionsThenRefuses) {
  test_support::Gate started;
  std::atomic<bool> finished{false};
  std::thread runner([&] {
    auto r = db_->Read([&](Connection& c) -> Result<void> {
      started.Open();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a transaction under way
      auto one = QueryInt(c, "SELECT 1");
      finished = true;
      return one ? util::Ok() : tl::make_unexpected(one.error());
    });
    EXPECT_TRUE(r) << r.error().message;
  });
  ASSERT_TRUE(started.Wait());
  db_->Close();
  EXPECT_TRUE(finished.load());
  runner.join();
  db_->Close();  // idempotent
  for (bool write : {false, true}) {
    auto body = [](Connection& c) { return QueryInt(c, "SELECT 1"); };
    auto r = write ? db_->Write(body) : db_->Read(body);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
    EXPECT_EQ(r.error().message.rfind("database unavailable:", 0), 0u) << r.error().message;
  }
  EXPECT_EQ(db_->stats().open, 0);
}

TEST_F(PgDatabaseTest, OptionsOutOfRangeAreRefused) {
  auto db = PgDatabase::Open(pg_.url(), {.pool_size = 0});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
}

// A figure, not a bound: printed for docs/performance.md.
TEST_F(PgDatabaseTest, SimpleTransactionLatencyOnLoopback) {
  Ddl("CREATE TABLE kv (k bigint PRIMARY KEY, v bigint); INSERT INTO kv VALUES (1, 0)");
  constexpr int kRounds = 2000;
  auto time = [&](bool write) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i) {
      auto r = write ? db_->Write([](Connection& c) {
        return RunSql(c, "UPDATE kv SET v = v + 1 WHERE k = 1");
      })
                     : db_->Read([](Connection& c) -> Result<void> {
                         auto v = QueryInt(c, "SELECT v FROM kv WHERE k = 1");
                         return v ? util::Ok() : tl::make_unexpected(v.error());
                       });
      EXPECT_TRUE(r);
    }
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
               .count() /
           kRounds;
  };
  const double read_us = time(false);
  const double write_us = time(true);
  std::printf(
      "[ figure ] one-statement transaction, one thread, loopback: read %.0f us, "
      "write %.0f us\n",
      read_us, write_us);
  RecordProperty("read_us", static_cast<int>(read_us));
  RecordProperty("write_us", static_cast<int>(write_us));
  auto v = db_->Read([](Connection& c) { return QueryInt(c, "SELECT v FROM kv"); });
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, kRounds);

  // The same reads from four threads at once, through the default pool of eight.
  constexpr int kThreads = 4;
  std::atomic<int> failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        auto r =
            db_->Read([](Connection& c) { return QueryInt(c, "SELECT v FROM kv WHERE k = 1"); });
        if (!r) ++failed;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failed.load(), 0);
  std::printf("[ figure ] the same read from %d threads: %.0f transactions/s\n", kThreads,
              kThreads * kRounds / seconds);
}

}  // namespace
}  // namespace sb::storage::postgres
