// The change feed's wire form and its round trip through a real PostgreSQL (the `pg` fixture):
// what one instance publishes reaches the others' handlers, never its own; malformed or foreign
// payloads are ignored.
#include "storage/postgres/pg_change_feed.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "storage/postgres/pg_database.hpp"
#include "storage/postgres/pg_listener.hpp"
#include "support/eventually.hpp"
#include "support/pg_test_database.hpp"

namespace sb::storage::postgres {
namespace {

using domain::ChangeKind;

TEST(PgChangeFeedFormat, RoundTripsEveryKindAndKeepsBarsInTheId) {
  for (auto kind : {ChangeKind::kApiKeys, ChangeKind::kUsers, ChangeKind::kProviders,
                    ChangeKind::kPipelines, ChangeKind::kBots, ChangeKind::kSystem,
                    ChangeKind::kWebhooks, ChangeKind::kPipelineMemory}) {
    auto parsed = ParseChange(FormatChange("inst", kind, "a|b"));
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed->instance, "inst");
    EXPECT_EQ(parsed->kind, kind);
    EXPECT_EQ(parsed->id, "a|b");
  }
  EXPECT_EQ(FormatChange("i", ChangeKind::kUsers, "admin"), "i|users|admin");
}

TEST(PgChangeFeedFormat, AnIdTooLongForNotifyIsSentEmpty) {
  const std::string payload = FormatChange("i", ChangeKind::kUsers, std::string(9000, 'u'));
  EXPECT_EQ(payload, "i|users|");
  EXPECT_LT(payload.size(), 8000u);
  const std::string fits(kMaxChangePayload - 8, 'u');
  EXPECT_EQ(FormatChange("i", ChangeKind::kUsers, fits).size(), kMaxChangePayload);
}

TEST(PgChangeFeedFormat, RefusesMalformedAndUnknownPayloads) {
  for (const char* bad : {"", "nobars", "|users|x", "i|users", "i|teapots|x", "i||x"}) {
    auto parsed = ParseChange(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code, util::ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(ParseChange("i|users|" + std::string(8000, 'x')));
}

struct Received {
  std::mutex mu;
  std::vector<std::pair<ChangeKind, std::string>> changes;
  int missed = 0;
  void Add(ChangeKind k, const std::string& id) {
    std::lock_guard lock(mu);
    changes.emplace_back(k, id);
  }
  std::vector<std::pair<ChangeKind, std::string>> Snapshot() {
    std::lock_guard lock(mu);
    return changes;
  }
};

TEST(PgChangeFeed, ReachesOtherInstancesOnlyAndIgnoresGarbage) {
  test_support::PgTestDatabase pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  auto db = PgDatabase::Open(pg.url(), {});
  ASSERT_TRUE(db) << db.error().message;
  Received at_a, at_b;
  auto listen = [&](const char* instance, Received& into) {
    auto l = PgChangeListener::Start(
        pg.url(), instance,
        {.on_change = [&into](ChangeKind k, const std::string& id) { into.Add(k, id); },
         .on_missed = [&into] { ++into.missed; }});
    EXPECT_TRUE(l) << l.error().message;
    EXPECT_TRUE((*l)->WaitUntilListening(std::chrono::seconds(10)));
    return std::move(*l);
  };
  auto a = listen("a", at_a);
  auto b = listen("b", at_b);

  PgChangeFeed feed_a(**db, "a");
  // Garbage on the channel first: ignored, and what follows still arrives in order.
  ASSERT_TRUE((*db)->Notify(kChangeChannel, "not a change"));
  ASSERT_TRUE((*db)->Notify(kChangeChannel, "c|teapots|x"));
  feed_a.Publish(ChangeKind::kApiKeys, "");
  feed_a.Publish(ChangeKind::kPipelines, "p-1");
  ASSERT_TRUE(test::Eventually([&] { return at_b.Snapshot().size() == 2; }));
  const std::vector<std::pair<ChangeKind, std::string>> expected = {
      {ChangeKind::kApiKeys, ""}, {ChangeKind::kPipelines, "p-1"}};
  EXPECT_EQ(at_b.Snapshot(), expected);
  // A's own changes are not handed back to it (it applied them already); B's reach A.
  PgChangeFeed feed_b(**db, "b");
  feed_b.Publish(ChangeKind::kUsers, "admin");
  ASSERT_TRUE(test::Eventually([&] { return !at_a.Snapshot().empty(); }));
  const std::vector<std::pair<ChangeKind, std::string>> from_b = {{ChangeKind::kUsers, "admin"}};
  EXPECT_EQ(at_a.Snapshot(), from_b);
  EXPECT_EQ(at_b.Snapshot().size(), 2u);
  EXPECT_EQ(at_a.missed + at_b.missed, 0);

  // After Stop no handler runs; a publish with nobody listening is no error.
  a->Stop();
  b->Stop();
  feed_a.Publish(ChangeKind::kSystem, "");
  EXPECT_EQ(at_b.Snapshot().size(), 2u);
}

}  // namespace
}  // namespace sb::storage::postgres
