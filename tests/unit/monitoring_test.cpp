// Monitoring: the writer (batches, drops when full, retention), the SQLite repository's filters
// and pages over a real database file, and the metrics registry's rendering and label cap.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "services/monitoring_recorder.hpp"
#include "storage/sql/monitoring_repository.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/migrations.hpp"
#include "util/ids.hpp"
#include "util/metrics_registry.hpp"
#include "util/simulated_clock.hpp"

namespace sb {
namespace {

using domain::MonitoringTable;
using services::MonitoringRecorder;
using services::MonitoringRecorderOptions;

domain::MonitoredMessage Message(const std::string& bot, util::TimePoint at,
                                 const std::string& session = "person_u1") {
  domain::MonitoredMessage m;
  m.id = util::NewUuid();
  m.timestamp = at;
  m.context.bot_id = bot;
  m.context.bot_name = "name-" + bot;
  m.context.pipeline_id = "pipe-" + bot;
  m.context.session_id = session;
  m.message_content = "hello";
  m.status = "pending";
  m.level = "info";
  return m;
}

// Records each batch; can hold writes until released, to fill the queue behind it.
class RecordingRepository : public domain::MonitoringRepository {
 public:
  util::Result<void> Write(const domain::MonitoringBatch& batch) override {
    std::unique_lock lock(mu_);
    held_cv_.wait(lock, [&] { return !hold_; });
    sizes_.push_back(batch.size());
    return util::Ok();
  }
  util::Result<std::int64_t> Prune(util::TimePoint before) override {
    std::lock_guard lock(mu_);
    prunes_.push_back(before);
    return 0;
  }
  util::Result<domain::MonitoringPage> Page(MonitoringTable,
                                            const domain::MonitoringFilter&) override {
    return domain::MonitoringPage{};
  }
  util::Result<domain::MonitoringOverview> Overview(const domain::MonitoringFilter&) override {
    return domain::MonitoringOverview{};
  }
  util::Result<domain::FeedbackStats> Feedback(const domain::MonitoringFilter&) override {
    return domain::FeedbackStats{};
  }
  util::Result<std::optional<util::JsonObject>> Find(MonitoringTable, const std::string&) override {
    return std::nullopt;
  }
  util::Result<std::vector<util::JsonObject>> OfMessage(MonitoringTable,
                                                        const std::string&) override {
    return std::vector<util::JsonObject>{};
  }

  void Hold(bool on) {
    {
      std::lock_guard lock(mu_);
      hold_ = on;
    }
    held_cv_.notify_all();
  }
  std::vector<std::size_t> sizes() {
    std::lock_guard lock(mu_);
    return sizes_;
  }
  std::vector<util::TimePoint> prunes() {
    std::lock_guard lock(mu_);
    return prunes_;
  }

 private:
  std::mutex mu_;
  std::condition_variable held_cv_;
  bool hold_ = false;
  std::vector<std::size_t> sizes_;
  std::vector<util::TimePoint> prunes_;
};

TEST(MonitoringRecorderTest, WritesInBatchesOfAtMostBatchSize) {
  RecordingRepository repo;
  util::SimulatedClock clock;
  // A long interval: only full batches and Flush write.
  MonitoringRecorder recorder(
      repo, clock,
      {.queue_bound = 1000, .batch_size = 10, .flush_interval = std::chrono::hours(1)});
  repo.Hold(true);  // everything queues up behind the first write
  for (int i = 0; i < 25; ++i) recorder.RecordMessage(Message("b", clock.Now()));
  repo.Hold(false);
  recorder.Flush();
  std::size_t total = 0;
  for (auto n : repo.sizes()) {
    EXPECT_LE(n, 10u);
    total += n;
  }
  EXPECT_EQ(total, 25u);
  EXPECT_GE(repo.sizes().size(), 3u);
  auto stats = recorder.Stats();
  EXPECT_EQ(stats.written, 25u);
  EXPECT_EQ(stats.dropped, 0u);
  EXPECT_EQ(stats.depth, 0u);
}

TEST(MonitoringRecorderTest, DropsAndCountsWhenTheQueueIsFull) {
  RecordingRepository repo;
  util::SimulatedClock clock;
  MonitoringRecorder recorder(
      repo, clock, {.queue_bound = 5, .batch_size = 100, .flush_interval = std::chrono::hours(1)});
  repo.Hold(true);
  for (int i = 0; i < 12; ++i) recorder.RecordMessage(Message("b", clock.Now()));
  auto stats = recorder.Stats();
  EXPECT_EQ(stats.depth, 5u);
  EXPECT_EQ(stats.dropped, 7u);
  repo.Hold(false);
  recorder.Flush();
  EXPECT_EQ(recorder.Stats().written, 5u);
  EXPECT_EQ(recorder.Stats().depth, 0u);
}

TEST(MonitoringRecorderTest, StopWritesWhatIsQueuedAndDropsLaterRecords) {
  RecordingRepository repo;
  util::SimulatedClock clock;
  MonitoringRecorder recorder(repo, clock, {.flush_interval = std::chrono::hours(1)});
  for (int i = 0; i < 3; ++i) recorder.RecordMessage(Message("b", clock.Now()));
  recorder.Stop();
  EXPECT_EQ(recorder.Stats().written, 3u);
  recorder.RecordMessage(Message("b", clock.Now()));
  EXPECT_EQ(recorder.Stats().dropped, 1u);
}

TEST(MonitoringRecorderTest, PrunesWithTheRetentionOnTheClock) {
  RecordingRepository repo;
  util::SimulatedClock clock;
  MonitoringRecorder recorder(repo, clock,
                              {.flush_interval = std::chrono::hours(1), .retention_days = 7});
  recorder.PruneNow();
  ASSERT_FALSE(repo.prunes().empty());
  EXPECT_EQ(repo.prunes().back(), clock.Now() - std::chrono::hours(24 * 7));
}

class MonitoringRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("monitoring-" + util::NewUuid() + ".db");
    auto db = storage::sqlite::Database::Open(path_.string());
    ASSERT_TRUE(db) << db.error().message;
    db_ = std::move(*db);
    auto applied = storage::sql::ApplyMigrations(*db_, storage::sqlite::SchemaMigrations(), "test");
    ASSERT_TRUE(applied) << applied.error().message;
    repo_ = std::make_unique<storage::sql::SqlMonitoringRepository>(*db_);
  }
  void TearDown() override {
    repo_.reset();
    db_.reset();
    std::error_code ec;
    for (auto suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix, ec);
  }

  std::filesystem::path path_;
  std::unique_ptr<storage::sqlite::Database> db_;
  std::unique_ptr<storage::sql::SqlMonitoringRepository> repo_;
};

TEST_F(MonitoringRepositoryTest, FiltersPagesAndSessions) {
  const auto t0 = util::FromUnixMillis(1'700'000'000'000);
  domain::MonitoringBatch batch;
  for (int i = 0; i < 6; ++i) {
    batch.messages.push_back(
        Message(i < 4 ? "a" : "b", t0 + std::chrono::minutes(i), i % 2 ? "person_u1" : "g_1"));
  }
  batch.status_changes.push_back({batch.messages[0].id, "success", "info"});
  ASSERT_TRUE(repo_->Write(batch));
  // The same record again: its id exists, nothing doubles.
  domain::MonitoringBatch again;
  again.messages.push_back(batch.messages[0]);
  ASSERT_TRUE(repo_->Write(again));

  domain::MonitoringFilter f;
  auto all = repo_->Page(MonitoringTable::kMessages, f);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->total, 6);
  EXPECT_EQ(all->rows.front().at("id").as_string(), batch.messages[5].id);  // newest first

  f.bot_ids = {"a"};
  f.limit = 2;
  f.offset = 1;
  auto a = repo_->Page(MonitoringTable::kMessages, f);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->total, 4);
  ASSERT_EQ(a->rows.size(), 2u);
  EXPECT_EQ(a->rows[0].at("id").as_string(), batch.messages[2].id);

  domain::MonitoringFilter range;
  range.start_ms = util::ToUnixMillis(t0 + std::chrono::minutes(2));
  range.end_ms = util::ToUnixMillis(t0 + std::chrono::minutes(3));
  EXPECT_EQ(repo_->Page(MonitoringTable::kMessages, range)->total, 2);

  auto sessions = repo_->Page(MonitoringTable::kSessions, {});
  ASSERT_TRUE(sessions);
  EXPECT_EQ(sessions->total, 4);  // (a, g_1) (a, person_u1) (b, g_1) (b, person_u1)
  std::int64_t counted = 0;
  for (const auto& row : sessions->rows) counted += row.at("message_count").as_int64();
  EXPECT_EQ(counted, 6);
  auto overview = repo_->Overview({});
  ASSERT_TRUE(overview);
  EXPECT_EQ(overview->total_messages, 6);
  EXPECT_EQ(overview->success_messages, 1);
  EXPECT_EQ(overview->active_sessions, 4);
}

TEST_F(MonitoringRepositoryTest, PruneDeletesOnlyOlderRecords) {
  const auto t0 = util::FromUnixMillis(1'700'000'000'000);
  domain::MonitoringBatch batch;
  batch.messages.push_back(Message("a", t0, "old"));
  batch.messages.push_back(Message("a", t0 + std::chrono::hours(48), "new"));
  domain::MonitoredLlmCall call;
  call.id = util::NewUuid();
  call.timestamp = t0;
  call.model_name = "m";
  call.status = "success";
  batch.llm_calls.push_back(call);
  ASSERT_TRUE(repo_->Write(batch));
  auto removed = repo_->Prune(t0 + std::chrono::hours(24));
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 3);  // one message, one call, the "old" session
  EXPECT_EQ(repo_->Page(MonitoringTable::kMessages, {})->total, 1);
  EXPECT_EQ(repo_->Page(MonitoringTable::kLlmCalls, {})->total, 0);
  EXPECT_EQ(repo_->Page(MonitoringTable::kSessions, {})->total, 1);
}

// Totals come from the hourly rollup plus the partial hours at the range's edges; a session
// filter makes the repository count rows instead, which is the reference here.
TEST_F(MonitoringRepositoryTest, RollupTotalsMatchCountingRows) {
  const auto t0 = util::FromUnixMillis(1'700'000'000'000);
  domain::MonitoringBatch batch;
  for (int i = 0; i < 300; ++i) {
    auto m = Message(i % 3 ? "a" : "b", t0 + std::chrono::minutes(7 * i), "s");
    m.status = i % 4 ? "success" : "pending";
    batch.messages.push_back(std::move(m));
  }
  ASSERT_TRUE(repo_->Write(batch));
  domain::MonitoringBatch change;
  change.status_changes.push_back({batch.messages[0].id, "success", "info"});
  ASSERT_TRUE(repo_->Write(change));
  for (int k = 0; k < 40; ++k) {
    domain::MonitoringFilter f;
    if (k % 5) f.start_ms = util::ToUnixMillis(t0) + 1'234'567LL * k;
    if (k % 3) f.end_ms = util::ToUnixMillis(t0) + 2'345'678LL * (k + 3);
    if (k % 2) f.bot_ids = {"a"};
    domain::MonitoringFilter rows = f;
    rows.session_ids = {"s"};
    auto fast = repo_->Page(MonitoringTable::kMessages, f);
    auto slow = repo_->Page(MonitoringTable::kMessages, rows);
    ASSERT_TRUE(fast && slow);
    EXPECT_EQ(fast->total, slow->total) << "case " << k;
  }
  auto overview = repo_->Overview({});
  ASSERT_TRUE(overview);
  EXPECT_EQ(overview->total_messages, 300);
  EXPECT_EQ(overview->success_messages, 226);  // 225 plus the one changed to success
  ASSERT_TRUE(repo_->Prune(t0 + std::chrono::hours(10)));
  domain::MonitoringFilter rows;
  rows.session_ids = {"s"};
  EXPECT_EQ(repo_->Page(MonitoringTable::kMessages, {})->total,
            repo_->Page(MonitoringTable::kMessages, rows)->total);
}

TEST(MetricsRegistryTest, RendersCountersGaugesAndCumulativeHistograms) {
  util::MetricsRegistry registry;
  auto& c = registry.Counter("sb_messages_total", "Messages.", {"bot", "outcome"});
  c.Add({"b1", "replied"});
  c.Add({"b1", "replied"}, 2);
  auto& g = registry.Gauge("sb_depth", "Depth.", {});
  g.Set({}, 7);
  auto& h = registry.Histogram("sb_seconds", "Time.", {"model"}, {0.1, 1});
  h.Observe({"m"}, 0.05);
  h.Observe({"m"}, 0.5);
  h.Observe({"m"}, 5);
  registry.AddCollector([](util::MetricsWriter& w) {
    w.Header("sb_bots", "gauge", "Bots.");
    w.Sample("sb_bots", {"status"}, {"run\"ning"}, 2);
  });
  const std::string text = registry.Render();
  EXPECT_NE(text.find("# TYPE sb_messages_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("sb_messages_total{bot=\"b1\",outcome=\"replied\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("sb_depth 7\n"), std::string::npos);
  EXPECT_NE(text.find("sb_seconds_bucket{model=\"m\",le=\"0.1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("sb_seconds_bucket{model=\"m\",le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("sb_seconds_bucket{model=\"m\",le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("sb_seconds_sum{model=\"m\"} 5.55\n"), std::string::npos);
  EXPECT_NE(text.find("sb_seconds_count{model=\"m\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("sb_bots{status=\"run\\\"ning\"} 2\n"), std::string::npos);
}

TEST(MetricsRegistryTest, FoldsLabelSetsPastTheCapIntoOther) {
  util::MetricsRegistry registry;
  auto& c = registry.Counter("sb_total", "T.", {"bot"}, /*max_series=*/3);
  for (int i = 0; i < 10; ++i) c.Add({"bot" + std::to_string(i)});
  c.Add({"bot0"});  // an existing series keeps counting on its own
  const std::string text = registry.Render();
  EXPECT_NE(text.find("sb_total{bot=\"bot0\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("sb_total{bot=\"bot1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("sb_total{bot=\"other\"} 8\n"), std::string::npos);
  EXPECT_EQ(text.find("bot2\""), std::string::npos);
}

}  // namespace
}  // namespace sb
