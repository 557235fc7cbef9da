// RunReconnecting (platforms/common/reconnect_loop.hpp): a retry reports the trouble with the
// delay and waits it out on the clock, a pass that goes again does not wait, a fatal refusal is
// reported once and then nothing happens until the coroutine is cancelled, and cancellation ends
// the loop during a wait.
#include "platforms/common/reconnect_loop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "platforms/coroutine_group.hpp"
#include "support/adapter_harness.hpp"
#include "support/eventually.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::common {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test::Eventually;

class ReconnectLoopTest : public ::testing::Test {
 protected:
  ~ReconnectLoopTest() override { CloseGroup(); }

  // Runs the loop with `script[i]` as the outcome of pass i (the last one repeats).
  void Run(std::vector<Attempt> script) {
    script_ = std::move(script);
    ASSERT_TRUE(group_->Spawn([this]() { return Loop(); }));
  }

  asio::awaitable<void> Loop() {
    co_await RunReconnecting(
        clock_,
        [this](const std::string& why) {
          std::lock_guard lock(mu_);
          troubles_.push_back(why);
        },
        [this](ReconnectBackoff&) { return Pass(); });
    ended_ = true;
  }

  asio::awaitable<Attempt> Pass() {
    const std::size_t pass = static_cast<std::size_t>(passes_++);
    co_return script_[std::min(pass, script_.size() - 1)];
  }

  // Cancels the loop and waits until it has ended.
  void CloseGroup() {
    if (closing_) return;
    closing_ = true;
    std::atomic<bool> closed{false};
    group_->Close([&] { closed = true; });
    EXPECT_TRUE(Eventually([&] { return closed.load(); }));
  }

  std::vector<std::string> Troubles() {
    std::lock_guard lock(mu_);
    return troubles_;
  }

  test::IoThreads io_;
  util::SimulatedClock clock_;
  std::shared_ptr<CoroutineGroup> group_ = CoroutineGroup::Make(io_.executor());
  std::vector<Attempt> script_;
  bool closing_ = false;
  std::atomic<int> passes_{0};
  std::atomic<bool> ended_{false};
  std::mutex mu_;
  std::vector<std::string> troubles_;  // guarded by mu_
};

TEST_F(ReconnectLoopTest, ARetryIsReportedWithItsDelayAndWaitedOutOnTheClock) {
  Run({Attempt::Retry("connection lost")});
  ASSERT_TRUE(Eventually([&] { return clock_.pending() == 1; }));
  EXPECT_EQ(passes_.load(), 1);
  const auto troubles = Troubles();
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_TRUE(troubles[0].starts_with("connection lost; retrying in")) << troubles[0];
  clock_.Advance(2s);  // past the first step (about 1 s)
  EXPECT_TRUE(Eventually([&] { return passes_.load() == 2; }));
  EXPECT_FALSE(ended_.load());
}

TEST_F(ReconnectLoopTest, AgainGoesStraightToTheNextPass) {
  Run({Attempt::Again(), Attempt::Again(), Attempt::Retry("dropped")});
  ASSERT_TRUE(Eventually([&] { return clock_.pending() == 1; }));
  EXPECT_EQ(passes_.load(), 3);
  EXPECT_EQ(Troubles().size(), 1u);
}

TEST_F(ReconnectLoopTest, AFatalRefusalIsReportedOnceAndNotRetried) {
  Run({Attempt::Fatal("the token was refused")});
  ASSERT_TRUE(Eventually([&] { return Troubles().size() == 1; }));
  EXPECT_EQ(Troubles()[0], "the token was refused");
  clock_.Advance(10min);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(passes_.load(), 1);
  EXPECT_FALSE(ended_.load());  // waits for the cancellation (the destructor's Close)
}

TEST_F(ReconnectLoopTest, CancelledEndsTheLoop) {
  Run({Attempt::Cancelled()});
  EXPECT_TRUE(Eventually([&] { return ended_.load(); }));
  EXPECT_EQ(passes_.load(), 1);
  EXPECT_TRUE(Troubles().empty());
}

TEST_F(ReconnectLoopTest, ClosingTheGroupDuringABackoffEndsTheLoop) {
  Run({Attempt::Retry("dropped")});
  ASSERT_TRUE(Eventually([&] { return clock_.pending() == 1; }));
  CloseGroup();
  EXPECT_TRUE(ended_.load());
  EXPECT_EQ(passes_.load(), 1);
}

}  // namespace
}  // namespace sb::platforms::common
