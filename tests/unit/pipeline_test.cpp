// Table-driven tests of the pipeline's pure decisions against LangBot's behaviour.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/access_control.hpp"
#include "pipeline/command.hpp"
#include "pipeline/config_values.hpp"
#include "pipeline/content_filter.hpp"
#include "pipeline/ignore_rules.hpp"
#include "pipeline/output_rules.hpp"
#include "pipeline/pattern_list.hpp"
#include "pipeline/query.hpp"
#include "pipeline/rate_limiter.hpp"
#include "pipeline/trigger_rules.hpp"
#include "util/simulated_clock.hpp"

namespace sb::pipeline {
namespace {

using domain::ElementType;
using domain::MessageChain;
using domain::MessageElement;

std::shared_ptr<const util::JsonObject> Cfg(std::string_view json) {
  auto parsed = util::ParseJson(json);
  EXPECT_TRUE(parsed.has_value()) << json;
  if (!parsed || !parsed->is_object()) return std::make_shared<util::JsonObject>();
  return std::make_shared<util::JsonObject>(parsed->get_object());
}

MessageElement Plain(std::string text) {
  MessageElement e;
  e.text = std::move(text);
  return e;
}
MessageElement At(std::string target) {
  MessageElement e;
  e.type = ElementType::kAt;
  e.target = std::move(target);
  return e;
}
MessageElement AtAll() {
  MessageElement e;
  e.type = ElementType::kAtAll;
  return e;
}
MessageElement Source(std::string id) {
  MessageElement e;
  e.type = ElementType::kSource;
  e.id = std::move(id);
  return e;
}
MessageElement Image() {
  MessageElement e;
  e.type = ElementType::kImage;
  e.url = "http://x/y.png";
  return e;
}

class FixedRandom final : public RandomSource {
 public:
  explicit FixedRandom(double value) : value_(value) {}
  double Next() override {
    ++calls;
    return value_;
  }
  int calls = 0;

 private:
  double value_;
};

using FakeClock = util::SimulatedClock;

// ---------- query ----------

TEST(Query, MentionTextAndSessionId) {
  auto q = MakeQuery("b", LauncherType::kGroup, "42", "7",
                     {Source("m1"), At("bot"), Plain(" hi "), Plain("there")}, "bot", nullptr);
  EXPECT_TRUE(q.mentioned);
  EXPECT_EQ(q.text, " hi there");
  EXPECT_EQ(q.SessionId(), "group_42");
  EXPECT_TRUE(q.Config().empty());
  EXPECT_TRUE(IsBotMentioned({AtAll()}, "bot"));
  EXPECT_FALSE(IsBotMentioned({At("other")}, "bot"));
  EXPECT_FALSE(IsBotMentioned({At("")}, ""));  // unknown account id never matches
  EXPECT_EQ(SessionId(LauncherType::kPerson, "9"), "person_9");
}

TEST(ConfigValues, DefaultsWhenMissingOrMistyped) {
  auto cfg = Cfg(R"({"a":{"b":"x","n":60.0,"f":1.5,"big":18446744073709551615,"l":["p",3,"q"]}})");
  EXPECT_EQ(GetInt(*cfg, {"a", "n"}, 1), 60);
  EXPECT_EQ(GetInt(*cfg, {"a", "f"}, 1), 1);
  EXPECT_EQ(GetInt(*cfg, {"a", "b"}, 1), 1);
  EXPECT_EQ(GetInt(*cfg, {"a", "big"}, 1), 1);
  EXPECT_EQ(GetBool(*cfg, {"a", "b"}, true), true);
  EXPECT_EQ(GetString(*cfg, {"a", "n"}, "d"), "d");
  EXPECT_EQ(GetString(*cfg, {"a", "b", "deeper"}, "d"), "d");
  EXPECT_DOUBLE_EQ(GetNumber(*cfg, {"a", "f"}, 0), 1.5);
  EXPECT_EQ(GetStringList(*cfg, {"a", "l"}), (std::vector<std::string>{"p", "q"}));
  EXPECT_TRUE(GetStringList(*cfg, {"a", "b"}).empty());
}

// ---------- trigger rules ----------

struct TriggerCase {
  const char* name;
  LauncherType type;
  const char* config;
  MessageChain chain;
  double random;
  bool respond;
  TriggerRule rule;
  const char* text;
  std::size_t warnings;
};

TEST(TriggerRules, Table) {
  const char* kRules = R"({"trigger":{"group-respond-rules":
      {"at":true,"prefix":["ai","/ask"],"regexp":["^hey\\b","[bad"],"random":0.25}}})";
  const std::vector<TriggerCase> cases = {
      {"private always",
       LauncherType::kPerson,
       "{}",
       {Plain("hello")},
       0.9,
       true,
       TriggerRule::kPrivate,
       "hello",
       0},
      {"group no rules",
       LauncherType::kGroup,
       "{}",
       {Plain("hello")},
       0.0,
       false,
       TriggerRule::kNone,
       "hello",
       0},
      {"at bot",
       LauncherType::kGroup,
       kRules,
       {At("bot"), Plain(" hi")},
       0.9,
       true,
       TriggerRule::kAt,
       " hi",
       0},
      {"at all is not an at of the bot",
       LauncherType::kGroup,
       kRules,
       {AtAll(), Plain("hi")},
       0.9,
       false,
       TriggerRule::kNone,
       "hi",
       1},
      {"at other",
       LauncherType::kGroup,
       kRules,
       {At("x"), Plain("hi")},
       0.9,
       false,
       TriggerRule::kNone,
       "hi",
       1},
      {"prefix strips",
       LauncherType::kGroup,
       kRules,
       {Plain("ai what")},
       0.9,
       true,
       TriggerRule::kPrefix,
       " what",
       0},
      {"second prefix after space",
       LauncherType::kGroup,
       kRules,
       {Plain("  /ask x")},
       0.9,
       true,
       TriggerRule::kPrefix,
       " x",
       0},
      {"prefix not in middle",
       LauncherType::kGroup,
       kRules,
       {Plain("say ai")},
       0.9,
       false,
       TriggerRule::kNone,
       "say ai",
       1},
      {"regexp at start",
       LauncherType::kGroup,
       kRules,
       {Plain("hey you")},
       0.9,
       true,
       TriggerRule::kRegexp,
       "hey you",
       1},
      {"regexp is re.match",
       LauncherType::kGroup,
       kRules,
       {Plain("oh hey")},
       0.9,
       false,
       TriggerRule::kNone,
       "oh hey",
       1},
      {"random below",
       LauncherType::kGroup,
       kRules,
       {Plain("x")},
       0.2,
       true,
       TriggerRule::kRandom,
       "x",
       1},
      {"random equal is no",
       LauncherType::kGroup,
       kRules,
       {Plain("x")},
       0.25,
       false,
       TriggerRule::kNone,
       "x",
       1},
      {"at disabled",
       LauncherType::kGroup,
       R"({"trigger":{"group-respond-rules":{"at":false}}})",
       {At("bot"), Plain("x")},
       0.0,
       false,
       TriggerRule::kNone,
       "x",
       0},
      {"mistyped at and random",
       LauncherType::kGroup,
       R"({"trigger":{"group-respond-rules":{"at":"yes","random":"1"}}})",
       {At("bot"), Plain("x")},
       0.0,
       false,
       TriggerRule::kNone,
       "x",
       0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto q = MakeQuery("b", c.type, "g", "u", c.chain, "bot", Cfg(c.config));
    FixedRandom random(c.random);
    TriggerDecision d = DecideTrigger(q, random);
    EXPECT_EQ(d.respond, c.respond);
    EXPECT_EQ(d.rule, c.rule) << TriggerRuleName(d.rule);
    EXPECT_EQ(d.text, c.text);
    EXPECT_EQ(d.warnings.size(), c.warnings);
  }
}

TEST(TriggerRules, AtRemovesBotMentionsFromChainAndPrefixStripsChain) {
  auto cfg = Cfg(R"({"trigger":{"group-respond-rules":{"at":true,"prefix":["ai"]}}})");
  FixedRandom random(0.0);
  auto at = DecideTrigger(MakeQuery("b", LauncherType::kGroup, "g", "u",
                                    {At("bot"), At("bot"), At("other"), Plain("q")}, "bot", cfg),
                          random);
  ASSERT_EQ(at.chain.size(), 2u);
  EXPECT_EQ(at.chain[0].target, "other");

  auto prefix = DecideTrigger(
      MakeQuery("b", LauncherType::kGroup, "g", "u", {Plain("a"), Plain("i go")}, "bot", cfg),
      random);
  EXPECT_TRUE(prefix.respond);
  EXPECT_EQ(PlainText(prefix.chain), " go");
  EXPECT_EQ(random.calls, 0);  // random is only drawn when it could matter
}

// ---------- access control ----------

struct AccessCase {
  const char* name;
  const char* config;
  LauncherType type;
  const char* id;
  bool allowed;
};

TEST(AccessControl, Table) {
  const std::vector<AccessCase> cases = {
      {"default blacklist empty", "{}", LauncherType::kGroup, "1", true},
      {"blacklisted group", R"({"trigger":{"access-control":{"blacklist":["group_1"]}}})",
       LauncherType::kGroup, "1", false},
      {"blacklist other type same id",
       R"({"trigger":{"access-control":{"blacklist":["group_1"]}}})", LauncherType::kPerson, "1",
       true},
      {"blacklist person_*",
       R"({"trigger":{"access-control":{"mode":"blacklist","blacklist":["person_*"]}}})",
       LauncherType::kPerson, "5", false},
      {"blacklist person_* spares groups",
       R"({"trigger":{"access-control":{"blacklist":["person_*"]}}})", LauncherType::kGroup, "5",
       true},
      {"blacklist *", R"({"trigger":{"access-control":{"blacklist":["*"]}}})", LauncherType::kGroup,
       "5", false},
      {"whitelist empty admits none", R"({"trigger":{"access-control":{"mode":"whitelist"}}})",
       LauncherType::kPerson, "5", false},
      {"whitelist exact",
       R"({"trigger":{"access-control":{"mode":"whitelist","whitelist":["person_5"]}}})",
       LauncherType::kPerson, "5", true},
      {"whitelist group_*",
       R"({"trigger":{"access-control":{"mode":"whitelist","whitelist":["group_*"]}}})",
       LauncherType::kGroup, "9", true},
      {"whitelist group_* not person",
       R"({"trigger":{"access-control":{"mode":"whitelist","whitelist":["group_*"]}}})",
       LauncherType::kPerson, "9", false},
      {"whitelist reads whitelist only",
       R"({"trigger":{"access-control":{"mode":"whitelist","blacklist":["person_9"]}}})",
       LauncherType::kPerson, "9", false},
      {"unknown mode is blacklist",
       R"({"trigger":{"access-control":{"mode":"x","blacklist":["person_9"]}}})",
       LauncherType::kPerson, "9", false},
      {"partial id no match", R"({"trigger":{"access-control":{"blacklist":["person_99"]}}})",
       LauncherType::kPerson, "9", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    AccessDecision d = CheckAccess(AccessSettings::Read(*Cfg(c.config)), c.type, c.id);
    EXPECT_EQ(d.allowed, c.allowed);
    EXPECT_EQ(d.session_id, SessionId(c.type, c.id));
  }
}

// ---------- ignore rules ----------

TEST(IgnoreRules, Table) {
  const char* cfg = R"({"trigger":{"ignore-rules":{"prefix":["#","","//"],
                       "regexp":["spam\\d+","(unclosed"]}}})";
  struct Case {
    const char* text;
    bool ignore;
  };
  const std::vector<Case> cases = {
      {"# note", true}, {"  // x", true},   {"buy spam42 now", true},
      {"spam", false},  {"hello #", false}, {"", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    IgnoreDecision d = CheckIgnore(IgnoreSettings::Read(*Cfg(cfg)), c.text);
    EXPECT_EQ(d.ignore, c.ignore);
  }
  // The empty prefix and the invalid regexp are reported, not thrown.
  IgnoreDecision d = CheckIgnore(IgnoreSettings::Read(*Cfg(cfg)), "plain");
  EXPECT_EQ(d.warnings.size(), 2u);
  EXPECT_FALSE(CheckIgnore(IgnoreSettings::Read(*Cfg("{}")), "anything").ignore);
}

// ---------- patterns ----------

TEST(PatternList, InvalidPatternsAreReportedNotThrown) {
  std::vector<std::string> warnings;
  auto list = PatternList::Compile(
      {"(", "[a-", "a{2,1}", "ok", "(?i)HELLO", std::string(2000, 'a')}, warnings);
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(warnings.size(), 4u);
  EXPECT_TRUE(list.Search("say hello"));  // (?i)
  EXPECT_TRUE(list.Search("ok"));
  EXPECT_FALSE(list.Search("nothing"));
}

// Tenant patterns built to blow up a backtracking matcher end as "no match", not as a crash or
// a stuck thread.
TEST(PatternList, HostilePatternsCannotCrashOrHang) {
  std::vector<std::string> warnings;
  auto deep = PatternList::Compile({"(?:a?){30000}a{30000}"}, warnings);
  auto exponential = PatternList::Compile({"(a|a)*x", "(a+)+$"}, warnings);
  auto bare = PatternList::Compile({"(?i)"}, warnings);
  const std::string text(40, 'a');
  const auto start = std::chrono::steady_clock::now();
  (void)deep.Search(text);
  EXPECT_FALSE(exponential.Search(text + "!"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(bare.empty());  // "(?i)" alone would match everything
}

TEST(PatternList, LongInputIsCappedForRegexesOnly) {
  std::vector<std::string> warnings;
  auto regex = PatternList::Compile({"a.*z"}, warnings);
  auto literal = PatternList::Compile({"zz"}, warnings);
  ASSERT_TRUE(warnings.empty());
  // 300,000 characters would overflow the stack inside std::regex; the cap keeps it safe.
  std::string text(300'000, 'a');
  EXPECT_FALSE(regex.Search(text));
  EXPECT_FALSE(regex.MatchAtStart(text));
  text += "zz";
  EXPECT_FALSE(regex.Search(text));   // past kMaxRegexInputBytes: documented miss
  EXPECT_TRUE(literal.Search(text));  // literal patterns see the whole text
  std::string near(kMaxRegexPieceBytes * 3, 'a');
  near += "az";
  EXPECT_TRUE(regex.Search(near));  // inside the cap, within the fourth piece

  BanWordFilter filter({.words = {"a+z", "tail"}, .mask = "#", .mask_word = ""});
  std::string masked = std::string(kMaxRegexPieceBytes, 'b') + "aaz" +
                       std::string(kMaxRegexInputBytes, 'c') + "aaz tail";
  ASSERT_TRUE(filter.Mask(masked));
  EXPECT_EQ(masked, std::string(kMaxRegexPieceBytes, 'b') + "###" +
                        std::string(kMaxRegexInputBytes, 'c') + "aaz ####");
}

TEST(PatternList, CodePoints) {
  EXPECT_EQ(CodePointCount("abc"), 3u);
  EXPECT_EQ(CodePointCount("\xE4\xBD\xA0\xE5\xA5\xBD"), 2u);  // 你好
  EXPECT_EQ(CodePointCount("\xF0\x9F\x98\x80"), 1u);          // emoji
  EXPECT_EQ(CodePointCount("\xE4\xBD"), 2u);                  // truncated: bytes
}

// ---------- content filter ----------

struct FilterCase {
  const char* name;
  const char* config;
  bool incoming;
  MessageChain chain;  // incoming only
  const char* text;
  FilterAction action;
  const char* out;
};

TEST(ContentFilter, BanWordsPerScope) {
  BanWordFilter filter({.words = {"bad", "w[o0]rd", "(broken"}, .mask = "*", .mask_word = ""});
  EXPECT_EQ(filter.warnings().size(), 1u);
  const char* kAll =
      R"({"safety":{"content-filter":{"scope":"all","check-sensitive-words":true}}})";
  const char* kIn =
      R"({"safety":{"content-filter":{"scope":"income-msg","check-sensitive-words":true}}})";
  const char* kOut =
      R"({"safety":{"content-filter":{"scope":"output-msg","check-sensitive-words":true}}})";
  const char* kOff =
      R"({"safety":{"content-filter":{"scope":"all","check-sensitive-words":false}}})";
  const std::vector<FilterCase> cases = {
      {"in all blocks", kAll, true, {Plain("a bad one")}, "a bad one", FilterAction::kBlock, ""},
      {"in clean passes", kAll, true, {Plain("fine")}, "fine", FilterAction::kPass, "fine"},
      {"in scope income", kIn, true, {Plain("w0rd")}, "w0rd", FilterAction::kBlock, ""},
      {"in scope output skips", kOut, true, {Plain("bad")}, "bad", FilterAction::kPass, "bad"},
      {"in disabled", kOff, true, {Plain("bad")}, "bad", FilterAction::kPass, "bad"},
      {"in missing flag off", "{}", true, {Plain("bad")}, "bad", FilterAction::kPass, "bad"},
      {"in with image skips",
       kAll,
       true,
       {Plain("bad"), Image()},
       "bad",
       FilterAction::kPass,
       "bad"},
      {"in with source checks",
       kAll,
       true,
       {Source("1"), Plain("bad")},
       "bad",
       FilterAction::kBlock,
       ""},
      {"out all masks", kAll, false, {}, "  so bad, word!  ", FilterAction::kMask, "so ***, ****!"},
      {"out scope output masks", kOut, false, {}, "bad", FilterAction::kMask, "***"},
      {"out scope income skips", kIn, false, {}, " bad ", FilterAction::kPass, " bad "},
      {"out clean trimmed", kAll, false, {}, " ok ", FilterAction::kPass, "ok"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = Cfg(c.config);
    FilterDecision d = c.incoming
                           ? FilterIncoming(FilterSettings::Read(*cfg), filter, c.chain, c.text)
                           : FilterOutgoing(FilterSettings::Read(*cfg), filter, c.text);
    EXPECT_EQ(d.action, c.action) << FilterActionName(d.action);
    EXPECT_EQ(d.text, c.out);
    EXPECT_EQ(d.user_notice.empty(), d.action != FilterAction::kBlock);
  }
}

TEST(ContentFilter, MaskCountsCharactersAndMaskWordReplacesWholeMatch) {
  BanWordFilter by_char(
      {.words = {"\xE5\x9D\x8F\xE8\x9B\x8B"}, .mask = "*", .mask_word = ""});  // 坏蛋
  std::string text = "\xE4\xBD\xA0\xE5\x9D\x8F\xE8\x9B\x8B";                   // 你坏蛋
  EXPECT_TRUE(by_char.Mask(text));
  EXPECT_EQ(text, "\xE4\xBD\xA0**");
  BanWordFilter by_word({.words = {"x+"}, .mask = "*", .mask_word = "[censored]"});
  text = "axxxb x";
  EXPECT_TRUE(by_word.Mask(text));
  EXPECT_EQ(text, "a[censored]b [censored]");
  BanWordFilter empty_match({.words = {"z*"}, .mask = "*", .mask_word = ""});
  text = "abc";
  EXPECT_FALSE(empty_match.Mask(text));  // empty matches never count as a ban word
  EXPECT_EQ(text, "abc");
}

// ---------- rate limit ----------

TEST(RateLimiter, SettingsFromConfig) {
  auto s = RateLimitSettings::FromConfig(
      *Cfg(R"({"safety":{"rate-limit":{"window-length":10,"limitation":2,"strategy":"wait"}}})"));
  EXPECT_EQ(s.window_seconds, 10);
  EXPECT_EQ(s.limitation, 2);
  EXPECT_EQ(s.strategy, RateStrategy::kWait);
  auto bad = RateLimitSettings::FromConfig(
      *Cfg(R"({"safety":{"rate-limit":{"window-length":0,"limitation":"5","strategy":"x"}}})"));
  EXPECT_EQ(bad.window_seconds, 60);
  EXPECT_EQ(bad.limitation, 60);
  EXPECT_EQ(bad.strategy, RateStrategy::kDrop);
}

struct RateStep {
  std::int64_t at_ms;
  const char* session;
  RateVerdict verdict;
  std::int64_t retry_at_ms;  // for kWait
};

void RunSteps(const RateLimitSettings& settings, const std::vector<RateStep>& steps) {
  FakeClock clock{util::FromUnixMillis(0)};
  RateLimiter limiter(clock);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    clock.AdvanceTo(util::FromUnixMillis(steps[i].at_ms));
    RateDecision d = limiter.Acquire(steps[i].session, settings);
    EXPECT_EQ(d.verdict, steps[i].verdict) << RateVerdictName(d.verdict);
    if (steps[i].verdict == RateVerdict::kWait) {
      EXPECT_EQ(util::ToUnixMillis(d.retry_at), steps[i].retry_at_ms);
    }
  }
}

TEST(RateLimiter, DropAcrossWindowBoundaries) {
  RateLimitSettings s{.window_seconds = 10, .limitation = 2, .strategy = RateStrategy::kDrop};
  RunSteps(s, {
                  {1'000, "a", RateVerdict::kAllow, 0},
                  {2'000, "a", RateVerdict::kAllow, 0},
                  {9'999, "a", RateVerdict::kDrop, 0},
                  {9'999, "b", RateVerdict::kAllow, 0},   // sessions are independent
                  {10'000, "a", RateVerdict::kAllow, 0},  // window aligned to the epoch
                  {15'000, "a", RateVerdict::kAllow, 0},
                  {19'999, "a", RateVerdict::kDrop, 0},
                  {35'000, "a", RateVerdict::kAllow, 0},  // skipped windows start afresh
              });
}

TEST(RateLimiter, WaitReservesSlotsInLaterWindows) {
  RateLimitSettings s{.window_seconds = 10, .limitation = 2, .strategy = RateStrategy::kWait};
  RunSteps(s, {
                  {1'000, "a", RateVerdict::kAllow, 0},
                  {1'000, "a", RateVerdict::kAllow, 0},
                  {2'000, "a", RateVerdict::kWait, 10'000},
                  {3'000, "a", RateVerdict::kWait, 10'000},
                  {4'000, "a", RateVerdict::kWait, 20'000},   // next window already full
                  {10'500, "a", RateVerdict::kWait, 20'000},  // reserved slots count
                  {20'000, "a", RateVerdict::kWait, 30'000},
                  {30'000, "a", RateVerdict::kAllow, 0},
              });
}

TEST(RateLimiter, WaitReservesAtMostTwoWindowsAheadThenDrops) {
  RateLimitSettings s{.window_seconds = 10, .limitation = 1, .strategy = RateStrategy::kWait};
  RunSteps(s, {
                  {1'000, "a", RateVerdict::kAllow, 0},
                  {1'000, "a", RateVerdict::kWait, 10'000},
                  {1'000, "a", RateVerdict::kWait, 20'000},
                  {1'000, "a", RateVerdict::kDrop, 0},  // a third window ahead: refused
                  {1'000, "a", RateVerdict::kDrop, 0},
                  {10'000, "a", RateVerdict::kWait, 30'000},  // the horizon moved on
              });
}

TEST(RateLimiter, ZeroLimitationDropsEvenWhenWaiting) {
  RunSteps({.window_seconds = 10, .limitation = 0, .strategy = RateStrategy::kWait},
           {{0, "a", RateVerdict::kDrop, 0}});
}

TEST(RateLimiter, ExpiredWindowsAreSweptAndMemoryIsBounded) {
  FakeClock clock{util::FromUnixMillis(0)};
  RateLimiter limiter(clock, /*max_sessions=*/4);
  RateLimitSettings s{.window_seconds = 1, .limitation = 1, .strategy = RateStrategy::kDrop};
  for (int i = 0; i < 4; ++i) limiter.Acquire("s" + std::to_string(i), s);
  EXPECT_EQ(limiter.TrackedSessions(), 4u);
  // Full and nothing expired: a new session is admitted untracked.
  EXPECT_EQ(limiter.Acquire("new", s).verdict, RateVerdict::kAllow);
  EXPECT_EQ(limiter.Acquire("new", s).verdict, RateVerdict::kAllow);
  EXPECT_EQ(limiter.TrackedSessions(), 4u);
  clock.AdvanceTo(util::FromUnixMillis(5'000));  // every window has ended
  EXPECT_EQ(limiter.Acquire("new", s).verdict, RateVerdict::kAllow);
  EXPECT_EQ(limiter.TrackedSessions(), 1u);
  EXPECT_EQ(limiter.Acquire("new", s).verdict, RateVerdict::kDrop);
}

TEST(RateLimiter, ThreadSafeCountIsExact) {
  FakeClock clock{util::FromUnixMillis(0)};
  RateLimiter limiter(clock);
  RateLimitSettings s{.window_seconds = 60, .limitation = 1000, .strategy = RateStrategy::kDrop};
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        if (limiter.Acquire("shared", s).verdict == RateVerdict::kAllow) ++allowed;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(allowed.load(), 1000);
}

// ---------- output rules ----------

TEST(OutputRules, RemoveThinkTable) {
  struct Case {
    const char* in;
    const char* out;
  };
  const std::vector<Case> cases = {
      {"no tags", "no tags"},
      {"  keep spacing  ", "  keep spacing  "},
      {"<think>plan</think>\n\nAnswer", "Answer"},
      {"A<think>x</think>B<think>y\nz</think>C", "ABC"},
      {"Answer <think>cut off", "Answer"},
      {"<think>only reasoning", ""},
      {"reasoning without open</think> Answer", "Answer"},
      {"<think>a</think>mid</think>end", "mid</think>end"},
      {"</think>", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    EXPECT_EQ(RemoveThink(c.in), c.out);
  }
  EXPECT_FALSE(OutputSettings::Read(*Cfg("{}")).remove_think);
  EXPECT_TRUE(
      OutputSettings::Read(*Cfg(R"({"output":{"misc":{"remove-think":true}}})")).remove_think);
}

TEST(OutputRules, ReplyPrefix) {
  auto both = Cfg(R"({"output":{"misc":{"at-sender":true,"quote-origin":true}}})");
  auto group =
      MakeQuery("b", LauncherType::kGroup, "g", "u7", {Source("m9"), Plain("x")}, "bot", both);
  MessageChain head = ReplyPrefix(group);
  ASSERT_EQ(head.size(), 2u);
  EXPECT_EQ(head[0].type, ElementType::kQuote);
  EXPECT_EQ(head[0].id, "m9");
  EXPECT_EQ(head[1].type, ElementType::kAt);
  EXPECT_EQ(head[1].target, "u7");

  auto person = MakeQuery("b", LauncherType::kPerson, "u7", "u7", {Source("m9")}, "bot", both);
  head = ReplyPrefix(person);  // no At in private chats
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].type, ElementType::kQuote);

  auto defaults = MakeQuery("b", LauncherType::kGroup, "g", "u7", {Source("m9")}, "bot", nullptr);
  head = ReplyPrefix(defaults);  // at-sender defaults on, quote-origin off
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].type, ElementType::kAt);

  auto no_source = MakeQuery("b", LauncherType::kPerson, "u", "u", {Plain("x")}, "bot", both);
  EXPECT_TRUE(ReplyPrefix(no_source).empty());
}

TEST(OutputRules, LongTextTable) {
  struct Case {
    const char* strategy;
    MessageChain reply;
    LongTextAction action;
  };
  const std::string long_text(11, 'x');
  const std::vector<Case> cases = {
      {"forward", {Plain(long_text)}, LongTextAction::kForward},
      {"forward", {Plain("0123456789")}, LongTextAction::kSend},  // equal is not over
      {"forward", {Plain(long_text), Image()}, LongTextAction::kSend},
      {"none", {Plain(long_text)}, LongTextAction::kSend},
      {"image", {Plain(long_text)}, LongTextAction::kImageUnsupported},
      {"bogus", {Plain(long_text)}, LongTextAction::kSend},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.strategy);
    auto cfg =
        Cfg(std::string(R"({"output":{"long-text-processing":{"threshold":10,"strategy":")") +
            c.strategy + "\"}}}");
    EXPECT_EQ(CheckLongText(OutputSettings::Read(*cfg), c.reply).action, c.action);
  }
  // Characters, not bytes: ten 3-byte characters are not over 10.
  std::string cjk;
  for (int i = 0; i < 10; ++i) cjk += "\xE4\xBD\xA0";
  auto cfg = Cfg(R"({"output":{"long-text-processing":{"threshold":10,"strategy":"forward"}}})");
  EXPECT_EQ(CheckLongText(OutputSettings::Read(*cfg), {Plain(cjk)}).action, LongTextAction::kSend);
  EXPECT_EQ(
      CheckLongText(OutputSettings::Read(*Cfg("{}")), {Plain(std::string(1001, 'x'))}).threshold,
      1000);
}

TEST(OutputRules, FailureReply) {
  EXPECT_EQ(FailureReply(OutputSettings::Read(*Cfg("{}")), "boom"), "Request failed.");
  EXPECT_EQ(
      FailureReply(OutputSettings::Read(*Cfg(R"({"output":{"misc":{"failure-hint":"Oops"}}})")),
                   "boom"),
      "Oops");
  EXPECT_EQ(FailureReply(OutputSettings::Read(
                             *Cfg(R"({"output":{"misc":{"exception-handling":"show-error"}}})")),
                         "boom"),
            "boom");
  EXPECT_EQ(FailureReply(
                OutputSettings::Read(*Cfg(R"({"output":{"misc":{"exception-handling":"hide"}}})")),
                "boom"),
            std::nullopt);
}

// ---------- commands ----------

TEST(Command, Table) {
  struct Case {
    const char* text;
    CommandKind kind;
    const char* name;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"hello", CommandKind::kNotCommand, "", {}},
      {"", CommandKind::kNotCommand, "", {}},
      {"say !help", CommandKind::kNotCommand, "", {}},
      {"!help", CommandKind::kHelp, "help", {}},
      {"  !reset  ", CommandKind::kReset, "reset", {}},
      {"\xEF\xBC\x81reset", CommandKind::kReset, "reset", {}},
      {"\xEF\xBC\x81help me  now", CommandKind::kHelp, "help", {"me", "now"}},
      {"!model set gpt-4", CommandKind::kUnknown, "model", {"set", "gpt-4"}},
      {"!Help", CommandKind::kUnknown, "Help", {}},
      {"!", CommandKind::kUnknown, "", {}},
      {"! help", CommandKind::kUnknown, "", {"help"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    Command command = ParseCommand(c.text);
    EXPECT_EQ(command.kind, c.kind) << CommandKindName(command.kind);
    EXPECT_EQ(command.name, c.name);
    EXPECT_EQ(command.args, c.args);
  }
}

}  // namespace
}  // namespace sb::pipeline
