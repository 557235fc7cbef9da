// The outgoing webhooks' signature (the receiver's check in docs/webhooks.md, computed here with
// Python's hmac) and the takeover verdict the runtime waits on.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "domain/message_takeover.hpp"
#include "webhooks/webhook_pusher.hpp"

namespace sb::webhooks {
namespace {

TEST(WebhookSignature, MatchesTheDocumentedReceiverCheck) {
  EXPECT_EQ(SignPush("whsec_test", "1700000000", R"({"a":1})"),
            "sha256=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789");
  EXPECT_NE(SignPush("whsec_test", "1700000001", R"({"a":1})"),
            SignPush("whsec_test", "1700000000", R"({"a":1})"));
}

TEST(Takeover, AWaitEndsAtTheWindowOrAtTheFirstAnswer) {
  using namespace std::chrono_literals;
  domain::Takeover undecided;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(undecided.WaitTaken(50ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);

  domain::Takeover declined;
  std::thread decline([&] {
    std::this_thread::sleep_for(20ms);
    declined.Decline();
  });
  EXPECT_FALSE(declined.WaitTaken(5s));
  decline.join();

  domain::Takeover taken;
  std::thread answer([&] { taken.Take("webhook crm"); });
  EXPECT_TRUE(taken.WaitTaken(5s));
  answer.join();
  taken.Decline();  // a later "no" from another receiver does not undo a takeover
  EXPECT_TRUE(taken.Taken());
  EXPECT_EQ(taken.TakenBy(), "webhook crm");
}

}  // namespace
}  // namespace sb::webhooks
