// Bot leases shared by "instances" (BotOwnership objects) on one real SQLite database: each bot
// runs on exactly one, a released or lapsed lease moves, a lost lease stops the bot and fences its
// sends at once.
#include "runtime/bot_ownership.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "support/bot_storage.hpp"

namespace sb::runtime {
namespace {

using namespace std::chrono_literals;

// The runtime as the ownership drives it: which bots it has been told to run.
class RecordingRuntime final : public domain::BotRuntime {
 public:
  std::optional<domain::RuntimeStatus> Status(const util::BotId&) override { return std::nullopt; }
  void Apply(const domain::Bot& bot) override {
    std::lock_guard lock(mu_);
    if (bot.enable) {
      running_.insert(bot.uuid.str());
      last_name_[bot.uuid.str()] = bot.name;
    } else {
      running_.erase(bot.uuid.str());
    }
  }
  void Remove(const util::BotId& id) override {
    std::lock_guard lock(mu_);
    running_.erase(id.str());
  }
  void CommitLogs() override {}
  void Send(const util::BotId&, const domain::OutgoingMessage&,
            std::function<void(util::Result<domain::SendReceipt>)> done) override {
    done(domain::SendReceipt{});
  }
  void HandlePlatformCall(const util::BotId&, domain::PlatformCall,
                          std::function<void(util::Result<domain::PlatformAnswer>)>) override {}

  std::set<std::string> running() const {
    std::lock_guard lock(mu_);
    return running_;
  }
  std::string name_of(const util::BotId& id) const {
    std::lock_guard lock(mu_);
    auto it = last_name_.find(id.str());
    return it == last_name_.end() ? "" : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> running_;
  std::map<std::string, std::string> last_name_;
};

// Leases whose renewals can be made to fail, as when the database cannot be reached.
class FlakyLeases final : public domain::BotLeaseRepository {
 public:
  explicit FlakyLeases(domain::BotLeaseRepository& real) : real_(real) {}
  std::atomic<bool> down{false};

  util::Result<std::optional<std::int64_t>> Acquire(const util::BotId& bot,
                                                    const std::string& owner,
                                                    const std::string& url,
                                                    std::chrono::milliseconds ttl) override {
    if (down) return util::Fail(util::ErrorCode::kUnavailable, "database unavailable");
    return real_.Acquire(bot, owner, url, ttl);
  }
  util::Result<std::vector<domain::BotLease>> Renew(const std::string& owner,
                                                    std::chrono::milliseconds ttl) override {
    if (down) return util::Fail(util::ErrorCode::kUnavailable, "database unavailable");
    return real_.Renew(owner, ttl);
  }
  util::Result<void> Release(const util::BotId& bot, const std::string& owner) override {
    return real_.Release(bot, owner);
  }
  util::Result<std::optional<domain::BotLease>> Holder(const util::BotId& bot) override {
    return real_.Holder(bot);
  }

 private:
  domain::BotLeaseRepository& real_;
};

class BotOwnershipTest : public ::testing::Test {
 protected:
  BotOwnershipTest() : db_("ownership") {}

  domain::Storage& st() { return db_.storage(); }

  util::BotId AddBot(const std::string& name, bool enable = true) {
    domain::Bot b;
    b.uuid = util::BotId::Generate();
    b.name = name;
    b.adapter = "webhook";
    b.enable = enable;
    b.use_pipeline_uuid = db_.pipeline();
    EXPECT_TRUE(st().bots().Insert(b));
    return b.uuid;
  }

  OwnershipOptions Options(const std::string& id, std::chrono::milliseconds ttl = 3000ms) {
    OwnershipOptions o;
    o.instance_id = id;
    o.ttl = ttl;
    o.scan_interval = 200ms;
    return o;
  }

  template <typename Pred>
  static bool Eventually(Pred pred, std::chrono::milliseconds within = 5000ms) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < until) {
      if (pred()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return pred();
  }

  test::BotStorage db_;
};

TEST_F(BotOwnershipTest, EveryEnabledBotRunsOnExactlyOneInstance) {
  // The fixture's own bot is disabled: only enabled bots take leases.
  std::vector<util::BotId> bots;
  for (int i = 0; i < 6; ++i) bots.push_back(AddBot("bot" + std::to_string(i)));
  RecordingRuntime ra, rb;
  BotOwnership a(ra, st().bots(), st().bot_leases(), Options("a"));
  BotOwnership b(rb, st().bots(), st().bot_leases(), Options("b"));
  a.Start();
  b.Start();
  EXPECT_EQ(a.Owned().size(), 6u);  // the first to start takes every free lease
  EXPECT_TRUE(b.Owned().empty());
  for (const auto& id : bots) {
    EXPECT_TRUE(ra.running().contains(id.str()));
    EXPECT_TRUE(a.MaySend(id));
    EXPECT_FALSE(b.MaySend(id));
  }
  EXPECT_TRUE(rb.running().empty());
  // A send through the instance that does not run the bot is refused, not delivered twice.
  std::optional<util::Result<domain::SendReceipt>> sent;
  b.Send(bots[0], {}, [&](util::Result<domain::SendReceipt> r) { sent = std::move(r); });
  ASSERT_TRUE(sent && !*sent);
  EXPECT_EQ(sent->error().code, util::ErrorCode::kUnavailable);
  a.Stop();  // releases: the other instance takes every bot at its next scan
  EXPECT_TRUE(Eventually([&] { return b.Owned().size() == 6u; }));
  EXPECT_EQ(rb.running().size(), 6u);
}

TEST_F(BotOwnershipTest, ADeadOwnersLeasesAreTakenOnceTheyLapse) {
  const auto bot = AddBot("orphan");
  // An instance that took the lease and died: nobody renews it.
  ASSERT_TRUE(*st().bot_leases().Acquire(bot, "dead", "", 600ms));
  RecordingRuntime r;
  BotOwnership live(r, st().bots(), st().bot_leases(), Options("live"));
  live.Start();
  EXPECT_FALSE(r.running().contains(bot.str()));  // still held by the dead one
  EXPECT_TRUE(Eventually([&] { return r.running().contains(bot.str()); }, 3000ms));
  auto holder = st().bot_leases().Holder(bot);
  ASSERT_TRUE(holder && *holder);
  EXPECT_EQ((*holder)->owner, "live");
  EXPECT_EQ((*holder)->generation, 2);  // a new owner, a new generation
}

TEST_F(BotOwnershipTest, AnOwnerThatCannotRenewStopsItsBotsBeforeTheLeaseLapses) {
  const auto bot = AddBot("cut-off");
  FlakyLeases flaky(st().bot_leases());
  RecordingRuntime r;
  BotOwnership owner(r, st().bots(), flaky, Options("cut-off", 1500ms));
  owner.Start();
  ASSERT_TRUE(owner.MaySend(bot));
  const auto cut = std::chrono::steady_clock::now();
  flaky.down = true;
  // Local validity is the lease's time to live less a margin: sends stop before anyone else may
  // take the bot, and the bot is stopped.
  EXPECT_TRUE(Eventually([&] { return !owner.MaySend(bot); }, 3000ms));
  EXPECT_LT(std::chrono::steady_clock::now() - cut, 1500ms);
  EXPECT_TRUE(Eventually([&] { return !r.running().contains(bot.str()); }, 2000ms));
  // Back: the lapsed lease is taken again, with a new generation.
  flaky.down = false;
  EXPECT_TRUE(Eventually([&] { return owner.MaySend(bot); }, 5000ms));
  EXPECT_TRUE(r.running().contains(bot.str()));
}

TEST_F(BotOwnershipTest, ALeaseTakenOverWhileTheOwnerWasAwayIsNotRenewed) {
  const auto bot = AddBot("contested");
  FlakyLeases flaky(st().bot_leases());
  RecordingRuntime ra, rb;
  BotOwnership a(ra, st().bots(), flaky, Options("a", 1500ms));
  a.Start();
  ASSERT_TRUE(a.MaySend(bot));
  flaky.down = true;  // `a` is cut off; its lease lapses and `b` takes it
  BotOwnership b(rb, st().bots(), st().bot_leases(), Options("b", 1500ms));
  b.Start();
  EXPECT_TRUE(Eventually([&] { return b.MaySend(bot); }, 5000ms));
  EXPECT_FALSE(a.MaySend(bot));
  flaky.down = false;  // `a` is back: it must not take the bot back while `b` renews it
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(a.MaySend(bot));
  EXPECT_FALSE(ra.running().contains(bot.str()));
  EXPECT_TRUE(rb.running().contains(bot.str()));
}

TEST_F(BotOwnershipTest, ChangesMadeThroughAnotherInstanceReachTheOwner) {
  const auto bot = AddBot("renamed");
  RecordingRuntime ra, rb;
  BotOwnership a(ra, st().bots(), st().bot_leases(), Options("a"));
  BotOwnership b(rb, st().bots(), st().bot_leases(), Options("b"));
  a.Start();
  b.Start();
  auto stored = st().bots().Get(bot);
  ASSERT_TRUE(stored);
  stored->name = "new name";
  stored->updated_at = stored->updated_at + 1s;
  ASSERT_TRUE(st().bots().Update(*stored));
  b.Apply(*stored);  // the service on `b` saved it; `a` runs it
  EXPECT_TRUE(rb.running().empty());
  EXPECT_TRUE(Eventually([&] { return ra.name_of(bot) == "new name"; }));
  stored->enable = false;
  ASSERT_TRUE(st().bots().Update(*stored));
  b.Apply(*stored);
  EXPECT_TRUE(Eventually([&] { return !ra.running().contains(bot.str()); }));
  EXPECT_TRUE(a.Owned().empty());
}

}  // namespace
}  // namespace sb::runtime
