// Task leases and claims on a real database, as two instances sharing it see them: a task is
// claimed by one claimer only, a live lease is never taken, a lapsed or released one is, updates
// are fenced by the owner, and the claimer resumes what it can and fails the rest with a reason.
// Compiled twice: on SQLite (task_claim_test) and, with SB_TASK_CLAIM_PG, on the PostgreSQL of the
// `pg` ctest fixture (pg_task_claim_test), where each "instance" has its own connection pool.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "services/task_claimer.hpp"
#include "services/task_service.hpp"
#include "support/eventually.hpp"
#include "util/crypto.hpp"
#include "util/secret_box.hpp"
#ifdef SB_TASK_CLAIM_PG
#include "storage/postgres/pg_storage.hpp"
#include "storage/sql/sql_storage.hpp"
#include "support/pg_test_database.hpp"
#else
#include "storage/sqlite/sqlite_storage.hpp"
#endif

namespace sb {
namespace {

using namespace std::chrono_literals;
using domain::Task;
using domain::TaskStatus;
using util::ErrorCode;

util::SecretBox Secrets() {
  return util::SecretBox::FromKeyMaterial("task-claim-test-key-material-0123456789");
}

class TaskClaimTest : public testing::Test {
 protected:
  void SetUp() override {
#ifdef SB_TASK_CLAIM_PG
    ASSERT_TRUE(pg_.ok()) << pg_.error();
#else
    dir_ = std::filesystem::temp_directory_path() / ("sb-task-claim-" + util::RandomUrlSafe(8));
#endif
    a_ = Open();
    b_ = Open();
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
#ifndef SB_TASK_CLAIM_PG
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
#endif
  }

  // One more "instance" on the same database.
  std::unique_ptr<domain::Storage> Open() {
#ifdef SB_TASK_CLAIM_PG
    auto st = storage::postgres::PostgresStorage::Open(pg_.url(), 4, Secrets());
#else
    auto st = storage::sqlite::SqliteStorage::Open((dir_ / "db.sqlite").string(), Secrets());
#endif
    EXPECT_TRUE(st) << st.error().message;
    if (!st) return nullptr;
    return std::unique_ptr<domain::Storage>(std::move(*st));
  }

  std::int64_t Insert(domain::TaskRepository& repo, const std::string& owner,
                      const std::string& kind = "plugin-install",
                      TaskStatus status = TaskStatus::kRunning) {
    Task t;
    t.task_type = "plugin-operation";
    t.kind = kind;
    t.status = status;
    t.owner = owner;
    t.result = nullptr;
    t.spec = {{"author", "alice"}, {"name", "echo"}};
    t.created_at = t.updated_at = clock_.Now();
    auto id = repo.Insert(t);
    EXPECT_TRUE(id) << id.error().message;
    return id.value_or(0);
  }

  static std::vector<std::int64_t> Ids(const util::Result<std::vector<Task>>& tasks) {
    EXPECT_TRUE(tasks) << tasks.error().message;
    std::vector<std::int64_t> out;
    if (tasks) {
      for (const auto& t : *tasks) out.push_back(t.id);
    }
    return out;
  }

  domain::TaskRepository& a() { return a_->tasks(); }
  domain::TaskRepository& b() { return b_->tasks(); }

#ifdef SB_TASK_CLAIM_PG
  test_support::PgTestDatabase pg_;
#else
  std::filesystem::path dir_;
#endif
  util::SystemClock clock_;
  std::unique_ptr<domain::Storage> a_;
  std::unique_ptr<domain::Storage> b_;
};

TEST_F(TaskClaimTest, AnOwnedTaskIsNotClaimedWhileItsLeaseLasts) {
  const auto id = Insert(a(), "instance-a");
  EXPECT_TRUE(Ids(b().Claim("instance-b", 5s, 10)).empty());
  auto got = b().Get(id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->owner, "instance-a");
  EXPECT_EQ(got->spec.at("name").as_string(), "echo");
  EXPECT_EQ(got->attempts, 0);
}

TEST_F(TaskClaimTest, ALapsedLeaseIsClaimedOnceAndTheOldOwnerIsFencedOut) {
  const auto id = Insert(a(), "");  // unowned: claimable at once
  auto first = a().Claim("instance-a", 300ms, 10);
  ASSERT_EQ(Ids(first), std::vector<std::int64_t>{id});
  EXPECT_EQ((*first)[0].owner, "instance-a");
  EXPECT_EQ((*first)[0].attempts, 1);
  // Held: neither another instance nor its own owner (which may still run it) claims it.
  EXPECT_TRUE(Ids(b().Claim("instance-b", 5s, 10)).empty());
  // Lapsed (the owner stopped renewing): b takes it.
  std::vector<std::int64_t> taken;
  ASSERT_TRUE(test::Eventually(
      [&] {
        taken = Ids(b().Claim("instance-b", 5s, 10));
        return !taken.empty();
      },
      5s));
  EXPECT_EQ(taken, std::vector<std::int64_t>{id});
  EXPECT_TRUE(Ids(a().Claim("instance-a", 5s, 10)).empty());
  // The old owner's progress no longer lands; the new owner's does.
  Task stale = (*first)[0];
  stale.current_action = "still going";
  auto saved = a().Update(stale);
  ASSERT_FALSE(saved);
  EXPECT_EQ(saved.error().code, ErrorCode::kConflict);
  auto now = b().Get(id);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->owner, "instance-b");
  EXPECT_EQ(now->attempts, 2);
  now->current_action = "resumed";
  EXPECT_TRUE(b().Update(*now));
  EXPECT_EQ(a().Get(id)->current_action, "resumed");
}

TEST_F(TaskClaimTest, ItsOwnLapsedTaskIsNotClaimedByTheOwner) {
  const auto id = Insert(a(), "");
  ASSERT_EQ(Ids(a().Claim("instance-a", 100ms, 10)), std::vector<std::int64_t>{id});
  std::this_thread::sleep_for(250ms);  // past the lease; nothing to wait for but time
  EXPECT_TRUE(Ids(a().Claim("instance-a", 5s, 10)).empty());
  EXPECT_EQ(Ids(b().Claim("instance-b", 5s, 10)), std::vector<std::int64_t>{id});
}

TEST_F(TaskClaimTest, RenewalKeepsTheLease) {
  const auto id = Insert(a(), "");
  ASSERT_EQ(Ids(a().Claim("instance-a", 400ms, 10)), std::vector<std::int64_t>{id});
  const auto end = std::chrono::steady_clock::now() + 1200ms;
  while (std::chrono::steady_clock::now() < end) {
    auto renewed = a().Renew("instance-a", 400ms);
    ASSERT_TRUE(renewed);
    EXPECT_EQ(*renewed, 1);
    EXPECT_TRUE(Ids(b().Claim("instance-b", 5s, 10)).empty());
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(test::Eventually([&] { return !Ids(b().Claim("instance-b", 5s, 10)).empty(); }));
}

TEST_F(TaskClaimTest, ReleasedTasksAreClaimableAtOnceAndFinishedOnesNever) {
  const auto running = Insert(a(), "instance-a");
  const auto pending = Insert(a(), "instance-a", "plugin-delete", TaskStatus::kPending);
  Insert(a(), "instance-a", "plugin-install", TaskStatus::kSucceeded);
  Insert(a(), "", "plugin-install", TaskStatus::kFailed);
  EXPECT_TRUE(Ids(b().Claim("instance-b", 5s, 10)).empty());
  auto released = a().ReleaseAll("instance-a");
  ASSERT_TRUE(released);
  EXPECT_EQ(*released, 2);
  // A restarted instance claims its own former tasks too, once released.
  EXPECT_EQ(Ids(a().Claim("instance-a", 5s, 1)), std::vector<std::int64_t>{running});
  EXPECT_EQ(Ids(b().Claim("instance-b", 5s, 10)), std::vector<std::int64_t>{pending});
  EXPECT_TRUE(Ids(b().Claim("instance-b", 5s, 10)).empty());
}

TEST_F(TaskClaimTest, TwoClaimersNeverGetTheSameTask) {
  constexpr int kTasks = 120;
  // Connections open and statements prepared first, so that both start claiming at once.
  EXPECT_TRUE(Ids(a().Claim("instance-a", 60s, 7)).empty());
  EXPECT_TRUE(Ids(b().Claim("instance-b", 60s, 7)).empty());
  std::set<std::int64_t> all;
  for (int i = 0; i < kTasks; ++i) all.insert(Insert(a(), ""));
  std::mutex mu;
  std::vector<std::int64_t> got_a, got_b;
  std::atomic<int> errors{0};
  std::atomic<int> ready{0};
  auto claimer = [&](domain::TaskRepository& repo, const std::string& me,
                     std::vector<std::int64_t>& out) {
    ++ready;
    while (ready.load() < 2) std::this_thread::yield();  // both start together
    for (int empty_rounds = 0; empty_rounds < 3;) {
      auto claimed = repo.Claim(me, 60s, 7);
      if (!claimed) {
        ++errors;
        continue;
      }
      if (claimed->empty()) {
        ++empty_rounds;
        continue;
      }
      std::lock_guard lock(mu);
      for (const auto& t : *claimed) {
        EXPECT_EQ(t.owner, me);
        out.push_back(t.id);
      }
    }
  };
  std::thread ta([&] { claimer(a(), "instance-a", got_a); });
  std::thread tb([&] { claimer(b(), "instance-b", got_b); });
  ta.join();
  tb.join();
  EXPECT_EQ(errors.load(), 0);
  std::set<std::int64_t> seen;
  for (auto id : got_a) EXPECT_TRUE(seen.insert(id).second) << "task " << id << " claimed twice";
  for (auto id : got_b) EXPECT_TRUE(seen.insert(id).second) << "task " << id << " claimed twice";
  EXPECT_EQ(seen, all);
  // Which claimer took how many is the scheduler's business (SQLite runs one write at a time);
  // the test below pins SKIP LOCKED down on PostgreSQL.
  for (auto id : got_b) EXPECT_EQ(a().Get(id)->owner, "instance-b");
}

#ifdef SB_TASK_CLAIM_PG
TEST_F(TaskClaimTest, AClaimSkipsTasksAnotherClaimHoldsLockedInsteadOfWaiting) {
  const auto first = Insert(a(), "");
  const auto second = Insert(a(), "");
  auto& db = static_cast<storage::sql::SqlStorage&>(*a_).database();
  std::vector<std::int64_t> taken_meanwhile;
  // A's claim transaction holds the oldest task's row lock while B claims.
  auto held = db.Write([&](storage::sql::Connection& c) -> util::Result<void> {
    auto stmt = c.Prepare("SELECT id FROM tasks WHERE id = ? FOR UPDATE");
    if (!stmt) return tl::make_unexpected(stmt.error());
    stmt->Bind(1, first);
    if (auto r = stmt->Run(); !r) return r;
    const auto started = std::chrono::steady_clock::now();
    taken_meanwhile = Ids(b().Claim("instance-b", 5s, 1));
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3s) << "the claim waited for the lock";
    return util::Ok();
  });
  ASSERT_TRUE(held) << held.error().message;
  EXPECT_EQ(taken_meanwhile, std::vector<std::int64_t>{second});
  EXPECT_EQ(Ids(a().Claim("instance-a", 5s, 5)), std::vector<std::int64_t>{first});
}
#endif

TEST_F(TaskClaimTest, TheClaimerResumesWhatItCanAndFailsTheRestWithTheReason) {
  const auto install = Insert(a(), "");
  const auto unknown = Insert(a(), "", "mcp-test");
  const auto refused = Insert(a(), "", "plugin-delete");
  std::vector<Task> resumed;
  services::TaskClaimer claimer(
      b(), clock_,
      {{"plugin-install",
        [&](const Task& t) -> util::Result<void> {
          resumed.push_back(t);
          return util::Ok();
        }},
       {"plugin-delete",
        [](const Task&) -> util::Result<void> {
          return util::Fail(ErrorCode::kUnavailable, "the package was only on the dead instance");
        }}},
      {.instance_id = "instance-b", .ttl = 5s, .scan_interval = 50ms, .batch = 8});
  EXPECT_EQ(claimer.RunOnce(), 3);
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].id, install);
  EXPECT_EQ(resumed[0].owner, "instance-b");
  EXPECT_EQ(resumed[0].spec.at("author").as_string(), "alice");
  auto failed = a().Get(unknown);
  EXPECT_EQ(failed->status, TaskStatus::kFailed);
  EXPECT_NE(failed->exception.find("mcp-test task cannot be resumed"), std::string::npos)
      << failed->exception;
  EXPECT_EQ(a().Get(refused)->exception, "the package was only on the dead instance");
  EXPECT_EQ(a().Get(install)->status, TaskStatus::kRunning);  // the resumer runs it on
  EXPECT_EQ(claimer.RunOnce(), 0);
}

TEST_F(TaskClaimTest, TheClaimerRenewsTheLeasesOfItsOwnTasks) {
  services::TaskService service(a(), clock_, "instance-a");
  Task t;
  t.task_type = "plugin-operation";
  t.kind = "plugin-install";
  t.result = nullptr;
  ASSERT_TRUE(service.Create(t));
  EXPECT_EQ(t.owner, "instance-a");
  services::TaskClaimer claimer(
      a(), clock_, {},
      {.instance_id = "instance-a", .ttl = 300ms, .scan_interval = 50ms, .batch = 8});
  claimer.Start();  // renews every 100 ms
  const auto end = std::chrono::steady_clock::now() + 1s;
  while (std::chrono::steady_clock::now() < end) {
    EXPECT_TRUE(Ids(b().Claim("instance-b", 5s, 10)).empty());
    std::this_thread::sleep_for(50ms);
  }
  claimer.Stop();  // the owner dies: its lease lapses
  std::vector<std::int64_t> taken;
  EXPECT_TRUE(test::Eventually([&] {
    taken = Ids(b().Claim("instance-b", 5s, 10));
    return !taken.empty();
  }));
  EXPECT_EQ(taken, std::vector<std::int64_t>{t.id});
  // Its saves are refused from then on.
  t.current_action = "late";
  auto saved = service.Save(t);
  ASSERT_FALSE(saved);
  EXPECT_EQ(saved.error().code, ErrorCode::kConflict);
}

}  // namespace
}  // namespace sb
