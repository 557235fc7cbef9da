// Feedback records in the SQLite repository (part of monitoring_test): one row per rated reply and
// user, a later rating by the same user replacing the earlier one, and the stats the
// /monitoring/feedback/stats route reads (likes, dislikes, by bot).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "services/monitoring_recorder.hpp"
#include "storage/sql/monitoring_repository.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/migrations.hpp"
#include "util/ids.hpp"
#include "util/simulated_clock.hpp"

namespace sb {
namespace {

using domain::MonitoringTable;

domain::MonitoredFeedback Feedback(const std::string& feedback_id, const std::string& user,
                                   int type, util::TimePoint at, const std::string& bot = "a") {
  domain::MonitoredFeedback f;
  f.id = util::NewUuid();
  f.timestamp = at;
  f.context.bot_id = bot;
  f.context.bot_name = "name-" + bot;
  f.context.pipeline_id = "pipe-" + bot;
  f.context.session_id = "group_g1";
  f.context.message_id = "MSG-" + feedback_id;
  f.feedback_id = feedback_id;
  f.feedback_type = type;
  f.stream_id = "stream-" + feedback_id;
  f.user_id = user;
  f.platform = "wecombot";
  return f;
}

class FeedbackRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("feedback-" + util::NewUuid() + ".db");
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

TEST_F(FeedbackRepositoryTest, OneRowPerReplyAndUserTheLatestRatingWins) {
  const auto t0 = util::FromUnixMillis(1'700'000'000'000);
  domain::MonitoringBatch batch;
  auto first = Feedback("F1", "u1", 1, t0);
  first.feedback_content = "good";
  batch.feedback.push_back(first);
  batch.feedback.push_back(Feedback("F1", "u2", 2, t0));  // another group member, same reply
  batch.feedback.push_back(Feedback("F2", "u1", 2, t0, "b"));
  ASSERT_TRUE(repo_->Write(batch));

  auto stats = repo_->Feedback({});
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->total, 3);
  EXPECT_EQ(stats->likes, 1);
  EXPECT_EQ(stats->dislikes, 2);
  EXPECT_EQ(stats->by_bot.size(), 2u);

  // u1 changes their mind on F1: a dislike with reasons replaces the like (same row).
  domain::MonitoringBatch later;
  auto changed = Feedback("F1", "u1", 2, t0 + std::chrono::minutes(1));
  changed.feedback_content = "wrong";
  changed.inaccurate_reasons = "[2,4]";
  later.feedback.push_back(changed);
  ASSERT_TRUE(repo_->Write(later));
  stats = repo_->Feedback({});
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->total, 3);
  EXPECT_EQ(stats->likes, 0);
  EXPECT_EQ(stats->dislikes, 3);

  domain::MonitoringFilter f;
  f.bot_ids = {"a"};
  auto page = repo_->Page(MonitoringTable::kFeedback, f);
  ASSERT_TRUE(page) << page.error().message;
  ASSERT_EQ(page->total, 2);
  const auto& newest = page->rows.front();  // newest first: the changed rating
  EXPECT_EQ(newest.at("feedback_id").as_string(), "F1");
  EXPECT_EQ(newest.at("user_id").as_string(), "u1");
  EXPECT_EQ(newest.at("feedback_type").as_int64(), 2);
  EXPECT_EQ(newest.at("feedback_content").as_string(), "wrong");
  EXPECT_EQ(newest.at("inaccurate_reasons").as_string(), "[2,4]");
  EXPECT_EQ(newest.at("message_id").as_string(), "MSG-F1");
  EXPECT_EQ(newest.at("stream_id").as_string(), "stream-F1");
  EXPECT_EQ(newest.at("session_id").as_string(), "group_g1");
  EXPECT_EQ(newest.at("id").as_string(), first.id);  // the row kept its id

  // A withdrawal (type 3) counts as neither.
  domain::MonitoringBatch withdrawn;
  withdrawn.feedback.push_back(Feedback("F2", "u1", 3, t0 + std::chrono::minutes(2), "b"));
  ASSERT_TRUE(repo_->Write(withdrawn));
  stats = repo_->Feedback({});
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->total, 3);
  EXPECT_EQ(stats->dislikes, 2);
  domain::MonitoringFilter dislikes;
  dislikes.feedback_type = 2;
  EXPECT_EQ(repo_->Page(MonitoringTable::kFeedback, dislikes)->total, 2);
}

TEST_F(FeedbackRepositoryTest, TheRecorderWritesFeedbackAndRetentionPrunesIt) {
  util::SimulatedClock clock(util::FromUnixMillis(1'700'000'000'000));
  services::MonitoringRecorder recorder(*repo_, clock, {});
  recorder.RecordFeedback(Feedback("F9", "u9", 1, clock.Now()));
  recorder.Flush();
  EXPECT_EQ(repo_->Page(MonitoringTable::kFeedback, {})->total, 1);
  EXPECT_EQ(recorder.Stats().written, 1u);
  recorder.Stop();
  auto removed = repo_->Prune(clock.Now() + std::chrono::hours(2));
  ASSERT_TRUE(removed);
  EXPECT_EQ(repo_->Page(MonitoringTable::kFeedback, {})->total, 0);
}

}  // namespace
}  // namespace sb
