// The pieces adapters share (platforms/common): lenient config reads, the reconnect backoff, HMAC
// and base64 with known answers, the replay window, the bounded id memory, text cut by the
// platform's unit, the 429 decision, the message-chain builders and ASCII case folding.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/text_units.hpp"

namespace sb::platforms::common {
namespace {

using namespace std::chrono_literals;

TEST(CommonSignatures, HmacKnownAnswers) {
  // RFC 4231 test case 2.
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // line-bot-sdk-python's SignatureValidator test.
  EXPECT_EQ(HmacSha256Base64("channel_secret", "bodybodybodybody"),
            "/gg9a+LvFevTH1sd7XCQycD7tsWclCsInj7MhBHxN7k=");
}

TEST(CommonSignatures, Base64Padding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("\xff\xfe\xfd"), "//79");
}

TEST(CommonSignatures, TimestampWindow) {
  const util::TimePoint now(std::chrono::seconds(1'700'000'000));
  EXPECT_TRUE(TimestampWithin("1700000000", now, 300s));
  EXPECT_TRUE(TimestampWithin("1699999700", now, 300s));
  EXPECT_TRUE(TimestampWithin("1700000300", now, 300s));
  EXPECT_FALSE(TimestampWithin("1699999699", now, 300s));
  EXPECT_FALSE(TimestampWithin("1700000301", now, 300s));
  for (std::string_view bad : {"", "abc", "-1700000000", "1700000000 ", "17000000000000000"}) {
    EXPECT_FALSE(TimestampWithin(bad, now, 300s)) << bad;
  }
}

TEST(CommonRecentIds, FirstSightingIsBounded) {
  RecentIds ids(2);
  EXPECT_TRUE(ids.FirstSighting("a"));
  EXPECT_FALSE(ids.FirstSighting("a"));
  EXPECT_TRUE(ids.FirstSighting("b"));
  EXPECT_TRUE(ids.FirstSighting("c"));  // "a" falls out
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_TRUE(ids.FirstSighting("a"));
  EXPECT_TRUE(ids.FirstSighting(""));
  EXPECT_TRUE(ids.FirstSighting(""));
  ids.Forget("a");
  EXPECT_TRUE(ids.FirstSighting("a"));
}

TEST(CommonText, LengthsByUnit) {
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x8D\x8E";  // a é 中 🍎
  EXPECT_EQ(TextLength(text, TextUnit::kCodePoint), 4u);
  EXPECT_EQ(TextLength(text, TextUnit::kUtf16), 5u);
  EXPECT_EQ(Utf16ToByteOffset(text, 0), 0u);
  EXPECT_EQ(Utf16ToByteOffset(text, 3), 6u);
  EXPECT_EQ(Utf16ToByteOffset(text, 4), std::string::npos);  // inside the surrogate pair
  EXPECT_EQ(Utf16ToByteOffset(text, 5), text.size());
  EXPECT_EQ(Utf16ToByteOffset(text, 6), std::string::npos);
}

TEST(CommonText, SplitKeepingSeparatorPrefersLinesThenSpacesAndKeepsPairsWhole) {
  EXPECT_TRUE(SplitKeepingSeparator("", 10, TextUnit::kUtf16).empty());
  auto lines = SplitKeepingSeparator("aaaa\nbb cc dd", 8, TextUnit::kCodePoint);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "aaaa\n");
  EXPECT_EQ(lines[1], "bb cc dd");
  auto words = SplitKeepingSeparator("aa bb cc", 5, TextUnit::kCodePoint);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0], "aa ");
  EXPECT_EQ(words[1], "bb cc");
  const std::string apples = "\xF0\x9F\x8D\x8E\xF0\x9F\x8D\x8E\xF0\x9F\x8D\x8E";
  auto pairs = SplitKeepingSeparator(apples, 3, TextUnit::kUtf16);
  ASSERT_EQ(pairs.size(), 3u);
  for (const auto& p : pairs) EXPECT_EQ(p, "\xF0\x9F\x8D\x8E");
  std::string joined;
  for (const auto& p : SplitKeepingSeparator("one two three four five", 7, TextUnit::kCodePoint)) {
    EXPECT_LE(TextLength(p, TextUnit::kCodePoint), 7u);
    joined += p;
  }
  EXPECT_EQ(joined, "one two three four five");
}

TEST(CommonText, Utf16Length) {
  EXPECT_EQ(Utf16Length("abc"), 3u);
  EXPECT_EQ(Utf16Length("你好"), 2u);
  EXPECT_EQ(Utf16Length("👋"), 2u);
  EXPECT_EQ(Utf16Length("a😀你"), 4u);
  EXPECT_EQ(Utf16Length(""), 0u);
}

TEST(CommonText, SplitDroppingSeparatorPrefersLinesThenSpacesThenCodePoints) {
  EXPECT_EQ(SplitDroppingSeparator("aaaa\nbbbb\ncccc", 10),
            (std::vector<std::string>{"aaaa\nbbbb", "cccc"}));
  EXPECT_EQ(SplitDroppingSeparator("aaa bbb ccc", 8), (std::vector<std::string>{"aaa bbb", "ccc"}));
  // Emoji are two units each and never cut in half.
  EXPECT_EQ(SplitDroppingSeparator("😀😀😀", 3), (std::vector<std::string>{"😀", "😀", "😀"}));
  EXPECT_TRUE(SplitDroppingSeparator("", 10).empty());
  // A stray byte counts as one unit and the walk goes on.
  EXPECT_EQ(SplitDroppingSeparator("ab\xff", 2), (std::vector<std::string>{"ab", "\xff"}));
  const std::string big(10000, 'x');
  auto pieces = SplitDroppingSeparator(big, 4096);
  ASSERT_EQ(pieces.size(), 3u);
  for (const auto& p : pieces) EXPECT_LE(Utf16Length(p), 4096u);
}

TEST(CommonText, SplitPrefersParagraphsThenLinesThenSentencesInTheSecondHalf) {
  // A paragraph break in the second half wins over a later line break.
  EXPECT_EQ(SplitKeepingSeparator("aaaaaa\n\nbb\ncc dd", 14, TextUnit::kCodePoint),
            (std::vector<std::string>{"aaaaaa\n\n", "bb\ncc dd"}));
  EXPECT_EQ(SplitDroppingSeparator("aaaaaa\n\nbb\ncc dd", 14),
            (std::vector<std::string>{"aaaaaa", "bb\ncc dd"}));
  // A paragraph break near the start would leave a tiny piece: the later line break is taken.
  EXPECT_EQ(SplitKeepingSeparator("a\n\nbbbbbb\ncc dd", 14, TextUnit::kCodePoint),
            (std::vector<std::string>{"a\n\nbbbbbb\n", "cc dd"}));
  // A sentence end beats a later space.
  EXPECT_EQ(SplitKeepingSeparator("One two three. Four five six", 22, TextUnit::kCodePoint),
            (std::vector<std::string>{"One two three. ", "Four five six"}));
  EXPECT_EQ(SplitDroppingSeparator("One two three. Four five six", 22),
            (std::vector<std::string>{"One two three.", "Four five six"}));
}

TEST(CommonText, SplitCjkAtSentenceEndsAndEmojiWhole) {
  // No spaces in Chinese: the cut is after a 。, never inside a character.
  const std::string text = "第一句话。第二句话！第三句话？第四句话";
  for (std::size_t max : {6u, 7u, 11u}) {
    auto pieces = SplitKeepingSeparator(text, max, TextUnit::kCodePoint);
    std::string joined;
    for (const auto& p : pieces) {
      EXPECT_LE(TextLength(p, TextUnit::kCodePoint), max) << p;
      EXPECT_TRUE(util::IsValidUtf8(p)) << p;
      joined += p;
    }
    EXPECT_EQ(joined, text);
    EXPECT_TRUE(pieces[0].ends_with("。") || pieces[0].ends_with("！")) << pieces[0];
  }
  EXPECT_EQ(SplitDroppingSeparator(text, 10),
            (std::vector<std::string>{"第一句话。第二句话！", "第三句话？第四句话"}));
  // Emoji (two UTF-16 units, four bytes) are never cut in half, whatever the limit.
  std::string emoji;
  for (int i = 0; i < 9; ++i) emoji += "🙂";
  for (std::size_t max : {2u, 3u, 5u}) {
    for (const auto& p : SplitDroppingSeparator(emoji, max)) {
      EXPECT_LE(Utf16Length(p), max);
      EXPECT_TRUE(util::IsValidUtf8(p));
      EXPECT_FALSE(p.empty());
    }
  }
}

TEST(CommonText, SplitAtExactLimits) {
  // Exactly at the limit: one piece; one unit over: two.
  const std::string at_limit(4096, 'x');
  EXPECT_EQ(SplitDroppingSeparator(at_limit, 4096).size(), 1u);
  EXPECT_EQ(SplitDroppingSeparator(at_limit + "y", 4096).size(), 2u);
  std::string cjk;
  for (int i = 0; i < 2000; ++i) cjk += "中";  // 2000 code points, 6000 bytes
  EXPECT_EQ(SplitKeepingSeparator(cjk, 2000, TextUnit::kCodePoint).size(), 1u);
  auto two = SplitKeepingSeparator(cjk + "文", 2000, TextUnit::kCodePoint);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1], "文");
  // UTF-16: an emoji that would straddle the limit moves to the next piece.
  std::string tight(4095, 'a');
  auto straddle = SplitDroppingSeparator(tight + "🙂", 4096);
  ASSERT_EQ(straddle.size(), 2u);
  EXPECT_EQ(straddle[0], tight);
  EXPECT_EQ(straddle[1], "🙂");
}

TEST(CommonText, SplitWeightedDroppingSeparatorPutsAHeavyCodePointAlone) {
  auto weight = [](char32_t cp) -> std::size_t { return cp == U'@' ? 10 : 1; };
  EXPECT_EQ(SplitWeightedDroppingSeparator("ab@cd", 4, weight),
            (std::vector<std::string>{"ab", "@", "cd"}));
}

net::HttpResponse Response(int status, std::string retry_after = {}) {
  net::HttpResponse r;
  r.status = status;
  if (!retry_after.empty()) r.headers.emplace_back("retry-after", retry_after);
  return r;
}

TEST(CommonRetry, OnlyRateLimitsAreRetriedWithinTheBudget) {
  RetryPolicy policy;  // 3 attempts, 30 s at most, 1 s by default
  EXPECT_EQ(RetryDelay(Response(429, "2"), 1, policy), std::chrono::milliseconds(2000));
  EXPECT_EQ(RetryDelay(Response(429), 1, policy), std::chrono::milliseconds(1000));
  EXPECT_EQ(RetryDelay(Response(429, "soon"), 1, policy), std::chrono::milliseconds(1000));
  EXPECT_EQ(RetryDelay(Response(503, "1"), 2, policy), std::chrono::milliseconds(1000));
  EXPECT_FALSE(RetryDelay(Response(503), 1, policy));
  EXPECT_FALSE(RetryDelay(Response(429, "2"), 3, policy));
  EXPECT_FALSE(RetryDelay(Response(429, "31"), 1, policy));
  EXPECT_FALSE(RetryDelay(Response(500), 1, policy));
  EXPECT_FALSE(RetryDelay(Response(200), 1, policy));
  EXPECT_EQ(RetryAfter(Response(429, " 7 ")), std::chrono::seconds(7));
  EXPECT_FALSE(RetryAfter(Response(429, "-1")));
}

TEST(CommonChain, PlainMergesIntoThePlainBeforeItAndSkipsEmptyText) {
  domain::MessageChain chain;
  AppendPlain(chain, "");
  EXPECT_TRUE(chain.empty());
  AppendPlain(chain, "hello ");
  AppendPlain(chain, "world");
  AppendAt(chain, "U1");
  AppendPlain(chain, "!");
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].type, domain::ElementType::kPlain);
  EXPECT_EQ(chain[0].text, "hello world");
  EXPECT_EQ(chain[1].type, domain::ElementType::kAt);
  EXPECT_EQ(chain[1].target, "U1");
  EXPECT_EQ(chain[2].text, "!");
}

TEST(CommonChain, InvalidIsAnInvalidArgument) {
  util::Result<int> r = Invalid("event.user is required");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "event.user is required");
}

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
