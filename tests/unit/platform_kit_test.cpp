// The pieces every adapter shares (platforms/common): lenient config reads and the reconnect
// backoff.
#include <gtest/gtest.h>

#include "platforms/common/config_reader.hpp"
#include "platforms/common/reconnect_backoff.hpp"

namespace sb::platforms::common {
namespace {

using namespace std::chrono_literals;

TEST(ConfigReader, ReadsLenientlyWithFallbacks) {
  auto parsed =
      util::ParseJson(R"({"host":"0.0.0.0","port":"2280","n":7,"d":8.0,"bad":"x","on":true,)"
                      R"("base":"https://api.example.com///"})");
  ASSERT_TRUE(parsed);
  const auto& c = parsed->as_object();
  EXPECT_EQ(ConfigString(c, "host"), "0.0.0.0");
  EXPECT_EQ(ConfigString(c, "missing", "dflt"), "dflt");
  EXPECT_EQ(ConfigString(c, "n", "dflt"), "dflt");  // mistyped
  EXPECT_EQ(ConfigInt(c, "port", 1), 2280);         // a number written as a string
  EXPECT_EQ(ConfigInt(c, "n", 1), 7);
  EXPECT_EQ(ConfigInt(c, "d", 1), 8);
  EXPECT_EQ(ConfigInt(c, "bad", 1), 1);
  EXPECT_TRUE(ConfigBool(c, "on", false));
  EXPECT_FALSE(ConfigBool(c, "host", false));
  EXPECT_EQ(ConfigBaseUrl(c, "base", "x"), "https://api.example.com");
  EXPECT_EQ(ConfigBaseUrl(c, "missing", "https://d.example/"), "https://d.example");
}

TEST(ReconnectBackoff, GrowsWithJitterCapsAndResetsAfterAStableConnection) {
  double unit = 0.5;  // no jitter at 0.5
  ReconnectBackoff backoff({.initial = 1'000ms, .max = 10'000ms, .stable_after = 60'000ms},
                           [&] { return unit; });
  util::TimePoint t = util::FromUnixMillis(0);
  EXPECT_EQ(backoff.NextDelay(t), 1'000ms);
  EXPECT_EQ(backoff.NextDelay(t), 2'000ms);
  EXPECT_EQ(backoff.NextDelay(t), 4'000ms);
  EXPECT_EQ(backoff.NextDelay(t), 8'000ms);
  EXPECT_EQ(backoff.NextDelay(t), 10'000ms);  // capped
  EXPECT_EQ(backoff.attempts(), 5);
  EXPECT_EQ(backoff.Describe(10'000ms), "retrying in 10.0 s (attempt 5)");
  // A connection that drops quickly does not reset the backoff...
  backoff.Connected(t);
  EXPECT_EQ(backoff.NextDelay(t + 1s), 10'000ms);
  // ...one that stayed up for a while does.
  backoff.Connected(t);
  EXPECT_EQ(backoff.NextDelay(t + 61s), 1'000ms);
  unit = 0.0;  // -20 %
  EXPECT_EQ(backoff.NextDelay(t), 1'600ms);
  unit = 0.999999;  // just under +20 %
  EXPECT_NEAR(static_cast<double>(backoff.NextDelay(t).count()), 4'800.0, 1.0);
}

}  // namespace
}  // namespace sb::platforms::common
