// AdapterCore (platforms/common/adapter_core.hpp): Start reports the first unmet requirement or
// starts the work, Stop closes the group once and runs OnStopping first, Abandon after Stop does
// nothing, a send spawned while running runs and one asked for after Stop settles with
// kCancelled, and Log/Trouble go through the Core's scrubber.
#include "platforms/common/adapter_core.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>

#include "support/adapter_harness.hpp"
#include "support/eventually.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::common {
namespace {

namespace asio = boost::asio;
using test::Eventually;

class Core : public AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context) : AdapterCore(std::move(context)) {}

  // A send that succeeds with message id "m1".
  void Send(std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = MakeSendOnce(std::move(done));
    SpawnSend(once, [once]() -> asio::awaitable<void> {
      domain::SendReceipt receipt;
      receipt.message_id = "m1";
      (*once)(receipt);
      co_return;
    });
  }
  void Say(const std::string& text) { Log(domain::LogLevel::kInfo, text); }
  void Complain(const std::string& text) { Trouble(text); }
  bool Stopping() const { return stopping(); }
  void StartWith(bool first, bool second) {
    StartIfMet({{first, "first unmet"}, {second, "second unmet"}},
               [this]() -> asio::awaitable<void> {
                 ++runs;
                 co_return;
               });
  }

  std::atomic<int> runs{0};

  std::atomic<int> stopping_calls{0};

 private:
  std::string Scrub(std::string text) const override {
    for (auto at = text.find("secret"); at != std::string::npos; at = text.find("secret")) {
      text.replace(at, 6, "***");
    }
    return text;
  }
  void OnStopping() override { ++stopping_calls; }
};

class AdapterCoreTest : public ::testing::Test {
 protected:
  util::Result<domain::SendReceipt> SendAndWait() {
    auto promise = std::make_shared<std::promise<util::Result<domain::SendReceipt>>>();
    auto future = promise->get_future();
    core_->Send([promise](util::Result<domain::SendReceipt> r) { promise->set_value(r); });
    EXPECT_EQ(future.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    return future.get();
  }

  test::IoThreads io_;
  util::SimulatedClock clock_;
  test::RecordingHost host_;
  std::shared_ptr<Core> core_ = std::make_shared<Core>(
      test::HttpAdapterContext(util::JsonObject{}, io_, nullptr, clock_, host_));
};

TEST_F(AdapterCoreTest, SendsRunWhileRunningAndAreCancelledAfterStop) {
  auto sent = SendAndWait();
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->message_id, "m1");
  std::atomic<int> stopped{0};
  core_->Stop([&] { ++stopped; });
  EXPECT_TRUE(Eventually([&] { return stopped.load() == 1; }));
  EXPECT_TRUE(core_->Stopping());
  auto late = SendAndWait();
  ASSERT_FALSE(late.has_value());
  EXPECT_EQ(late.error().code, util::ErrorCode::kCancelled);
}

TEST_F(AdapterCoreTest, StopAndAbandonCloseOnceAndRunOnStoppingOnce) {
  std::atomic<int> stopped{0};
  core_->Stop([&] { ++stopped; });
  core_->Stop([&] { ++stopped; });
  core_->Abandon();
  EXPECT_TRUE(Eventually([&] { return stopped.load() == 1; }));
  EXPECT_EQ(core_->stopping_calls.load(), 1);
  EXPECT_EQ(stopped.load(), 1);
}

TEST_F(AdapterCoreTest, StartReportsTheFirstUnmetRequirementOrStartsTheWork) {
  core_->StartWith(false, false);
  core_->StartWith(true, false);
  EXPECT_EQ(host_.Read([&] { return host_.troubles; }),
            (std::vector<std::string>{"first unmet", "second unmet"}));
  core_->StartWith(true, true);
  EXPECT_TRUE(Eventually([&] { return core_->runs.load() == 1; }));
  EXPECT_EQ(host_.Read([&] { return host_.troubles.size(); }), 2u);
  core_->Abandon();
}

TEST_F(AdapterCoreTest, LogAndTroubleAreScrubbed) {
  core_->Say("token secret here");
  core_->Complain("refused secret");
  EXPECT_EQ(host_.Read([&] { return host_.logs; }), std::vector<std::string>{"token *** here"});
  EXPECT_EQ(host_.Read([&] { return host_.troubles; }), std::vector<std::string>{"refused ***"});
  core_->Abandon();
}

}  // namespace
}  // namespace sb::platforms::common
