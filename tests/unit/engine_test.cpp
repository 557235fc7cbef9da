// The pipeline engine over a fake runner, real SQLite conversation memory and a settable clock:
// stage order, what is ignored and why, commands, failures and output shaping.
#include "pipeline/engine.hpp"

#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <thread>

#include "domain/message_text.hpp"
#include "storage/sqlite/sqlite_storage.hpp"
#include "support/bot_storage.hpp"
#include "util/crypto.hpp"
#include "util/simulated_clock.hpp"
#include "util/utf8.hpp"

namespace sb::pipeline {
namespace {

using util::ErrorCode;

using SettableClock = util::SimulatedClock;

class FixedRandom final : public RandomSource {
 public:
  double Next() override { return value; }
  double value = 0.99;
};

// Answers `reply` (or fails with `error`); records what it was given. With `async` set, answers
// from another thread.
class FakeRunner final : public Runner {
 public:
  void Run(const util::JsonObject&, AgentInput input, std::function<void(const domain::ChatDelta&)>,
           std::function<void(util::Result<AgentReply>)> done) override {
    inputs.push_back(input);
    if (input.on_tool_calls) input.on_tool_calls({"weather", "files_read"});
    auto answer = [this, done = std::move(done)] {
      if (error) {
        done(util::Fail(ErrorCode::kUpstreamFailed, *error));
      } else {
        done(AgentReply{reply, "m-1", {}, {}});
      }
    };
    if (async) {
      std::thread(answer).detach();
    } else {
      answer();
    }
  }
  std::string reply = "hello there";
  std::optional<std::string> error;
  bool async = false;
  std::vector<AgentInput> inputs;
};

std::string TextOf(const AgentInput& in) {
  std::string out;
  for (const auto& p : in.content) {
    if (p.kind == domain::ContentPart::Kind::kText) out += p.text;
  }
  return out;
}

domain::MessageElement Plain(std::string text) {
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::move(text);
  return e;
}

domain::MessageElement At(std::string target) {
  domain::MessageElement e;
  e.type = domain::ElementType::kAt;
  e.target = std::move(target);
  return e;
}

std::string PlainOf(const domain::MessageChain& chain) {
  std::string out;
  for (const auto& e : chain) {
    if (e.type == domain::ElementType::kPlain) out += e.text;
  }
  return out;
}

bool LogHas(const EngineOutcome& o, const std::string& needle) {
  for (const auto& l : o.log) {
    if (l.text.find(needle) != std::string::npos) return true;
  }
  return false;
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<test::BotStorage>("engine");
    storage_ = &db_->storage();
    pipeline_ = db_->pipeline();
    bot_ = db_->bot();
    filter_ = std::make_unique<BanWordFilter>(BanWordList{{"badword"}, "*", ""});
    limiter_ = std::make_unique<RateLimiter>(clock_);
    engine_ = std::make_unique<PipelineEngine>(runner_, storage_->conversations(), *limiter_,
                                               *filter_, random_, clock_);
  }
  void TearDown() override {
    engine_.reset();
    db_.reset();
  }

  std::shared_ptr<const util::JsonObject> Cfg(const std::string& json) {
    auto parsed = util::ParseJson(json);
    EXPECT_TRUE(parsed) << json;
    return std::make_shared<const util::JsonObject>(parsed->as_object());
  }

  Query Person(domain::MessageChain chain, std::shared_ptr<const util::JsonObject> cfg = nullptr) {
    return MakeQuery(bot_.str(), LauncherType::kPerson, "42", "42", std::move(chain), "bot",
                     cfg ? cfg : Cfg("{}"));
  }
  Query Group(domain::MessageChain chain, std::shared_ptr<const util::JsonObject> cfg) {
    return MakeQuery(bot_.str(), LauncherType::kGroup, "g1", "7", std::move(chain), "bot", cfg);
  }

  EngineOutcome Go(Query q) {
    std::optional<EngineOutcome> out;
    int calls = 0;
    engine_->Process(pipeline_, std::move(q), [&](EngineOutcome o) {
      ++calls;
      out = std::move(o);
    });
    EXPECT_EQ(calls, 1);
    return out ? std::move(*out) : EngineOutcome{};
  }

  std::unique_ptr<test::BotStorage> db_;
  SettableClock clock_{util::FromUnixMillis(1'790'000'040'000)};
  FixedRandom random_;
  FakeRunner runner_;
  storage::sqlite::SqliteStorage* storage_ = nullptr;
  std::unique_ptr<BanWordFilter> filter_;
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<PipelineEngine> engine_;
  util::PipelineId pipeline_;
  util::BotId bot_;
};

TEST_F(EngineTest, PrivateMessageGetsTheRunnersReply) {
  auto o = Go(Person({Plain("hi")}));
  EXPECT_EQ(o.kind, OutcomeKind::kReplied);
  EXPECT_EQ(o.session_id, "person_42");
  EXPECT_EQ(PlainOf(o.reply), "hello there");
  ASSERT_EQ(o.reply.size(), 1u);  // no At in private chats
  ASSERT_EQ(runner_.inputs.size(), 1u);
  EXPECT_EQ(TextOf(runner_.inputs[0]), "hi");
  EXPECT_EQ(runner_.inputs[0].conversation.session_id, "person_42");
  EXPECT_EQ(runner_.inputs[0].conversation.pipeline, pipeline_);
  EXPECT_EQ(runner_.inputs[0].conversation.bot, bot_);
  EXPECT_NE(o.made_by.find(" ms"), std::string::npos);
}

TEST_F(EngineTest, AsyncRunnerCompletionCallsDoneOnce) {
  runner_.async = true;
  std::promise<EngineOutcome> p;
  auto f = p.get_future();
  engine_->Process(pipeline_, Person({Plain("hi")}), [&](EngineOutcome o) { p.set_value(o); });
  ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(PlainOf(f.get().reply), "hello there");
}

TEST_F(EngineTest, GroupWithoutAtOrPrefixIsIgnored) {
  auto cfg = Cfg(R"({"trigger":{"group-respond-rules":{"at":true,"prefix":["ai"]}}})");
  auto o = Go(Group({Plain("hello all")}, cfg));
  EXPECT_EQ(o.kind, OutcomeKind::kIgnored);
  EXPECT_EQ(o.reason, IgnoreReason::kNotTriggered);
  EXPECT_TRUE(o.reply.empty());
  EXPECT_TRUE(runner_.inputs.empty());
}

TEST_F(EngineTest, PrefixIsStrippedAndAtSenderAddedInGroups) {
  auto cfg = Cfg(R"({"trigger":{"group-respond-rules":{"at":true,"prefix":["ai"]}}})");
  auto o = Go(Group({Plain("ai what time is it")}, cfg));
  ASSERT_EQ(o.kind, OutcomeKind::kReplied);
  ASSERT_EQ(runner_.inputs.size(), 1u);
  EXPECT_EQ(TextOf(runner_.inputs[0]), "what time is it");
  ASSERT_EQ(o.reply.size(), 2u);
  EXPECT_EQ(o.reply[0].type, domain::ElementType::kAt);
  EXPECT_EQ(o.reply[0].target, "7");
  EXPECT_EQ(o.session_id, "group_g1");

  // at-sender off: no At.
  auto off = Cfg(
      R"({"trigger":{"group-respond-rules":{"at":true}},"output":{"misc":{"at-sender":false}}})");
  auto o2 = Go(Group({At("bot"), Plain(" hi")}, off));
  ASSERT_EQ(o2.kind, OutcomeKind::kReplied);
  ASSERT_EQ(o2.reply.size(), 1u);
  EXPECT_EQ(o2.reply[0].type, domain::ElementType::kPlain);
}

TEST_F(EngineTest, BlacklistedSessionIsIgnored) {
  auto cfg = Cfg(R"({"trigger":{"access-control":{"mode":"blacklist","blacklist":["person_*"]}}})");
  auto o = Go(Person({Plain("hi")}, cfg));
  EXPECT_EQ(o.kind, OutcomeKind::kIgnored);
  EXPECT_EQ(o.reason, IgnoreReason::kAccessDenied);
  EXPECT_TRUE(runner_.inputs.empty());
  // A command from a blacklisted session does not act either.
  auto cmd = Go(Person({Plain("!help")}, cfg));
  EXPECT_EQ(cmd.reason, IgnoreReason::kAccessDenied);
}

TEST_F(EngineTest, IgnoreRuleDropsSilently) {
  auto cfg = Cfg(R"({"trigger":{"ignore-rules":{"prefix":["#"],"regexp":["^skip"]}}})");
  auto o = Go(Person({Plain("# note to self")}, cfg));
  EXPECT_EQ(o.kind, OutcomeKind::kIgnored);
  EXPECT_EQ(o.reason, IgnoreReason::kIgnoreRule);
  EXPECT_TRUE(o.reply.empty());
  EXPECT_EQ(Go(Person({Plain("skip this")}, cfg)).reason, IgnoreReason::kIgnoreRule);
  EXPECT_TRUE(runner_.inputs.empty());
}

TEST_F(EngineTest, BannedWordGivesTheNotice) {
  auto cfg = Cfg(R"({"safety":{"content-filter":{"scope":"all","check-sensitive-words":true}}})");
  auto o = Go(Person({Plain("you badword")}, cfg));
  EXPECT_EQ(o.kind, OutcomeKind::kIgnored);
  EXPECT_EQ(o.reason, IgnoreReason::kBannedWords);
  EXPECT_EQ(PlainOf(o.reply), kBanWordNotice);
  EXPECT_TRUE(runner_.inputs.empty());
}

TEST_F(EngineTest, BannedWordInReplyIsMasked) {
  auto cfg = Cfg(R"({"safety":{"content-filter":{"scope":"all","check-sensitive-words":true}}})");
  runner_.reply = "a badword here";
  auto o = Go(Person({Plain("hi")}, cfg));
  EXPECT_EQ(PlainOf(o.reply), "a ******* here");
}

TEST_F(EngineTest, RateLimitDropsTheMessageOverTheLimit) {
  auto cfg =
      Cfg(R"({"safety":{"rate-limit":{"window-length":60,"limitation":2,"strategy":"drop"}}})");
  EXPECT_EQ(Go(Person({Plain("1")}, cfg)).kind, OutcomeKind::kReplied);
  EXPECT_EQ(Go(Person({Plain("2")}, cfg)).kind, OutcomeKind::kReplied);
  auto third = Go(Person({Plain("3")}, cfg));
  EXPECT_EQ(third.kind, OutcomeKind::kIgnored);
  EXPECT_EQ(third.reason, IgnoreReason::kRateLimited);
  EXPECT_EQ(runner_.inputs.size(), 2u);
  // The next window admits again.
  clock_.Advance(std::chrono::seconds(60));
  EXPECT_EQ(Go(Person({Plain("4")}, cfg)).kind, OutcomeKind::kReplied);
}

TEST_F(EngineTest, RateLimitWaitDefersAndResumes) {
  auto cfg =
      Cfg(R"({"safety":{"rate-limit":{"window-length":60,"limitation":1,"strategy":"wait"}}})");
  EXPECT_EQ(Go(Person({Plain("1")}, cfg)).kind, OutcomeKind::kReplied);
  auto second = Go(Person({Plain("2")}, cfg));
  ASSERT_EQ(second.kind, OutcomeKind::kDeferred);
  EXPECT_GT(second.wait_until, clock_.Now());
  ASSERT_TRUE(second.deferred);
  EXPECT_EQ(runner_.inputs.size(), 1u);
  std::optional<EngineOutcome> resumed;
  engine_->Resume(second.deferred, [&](EngineOutcome o) { resumed = std::move(o); });
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->kind, OutcomeKind::kReplied);
  ASSERT_EQ(runner_.inputs.size(), 2u);
  EXPECT_EQ(TextOf(runner_.inputs[1]), "2");
}

TEST_F(EngineTest, ResetClearsTheSessionsMemory) {
  domain::ConversationKey key{pipeline_, bot_, "person_42"};
  domain::ChatMessage user;
  user.role = "user";
  user.content = {{domain::ContentPart::Kind::kText, "remember me", {}}};
  ASSERT_TRUE(storage_->conversations().Append(key, {{user, clock_.Now()}}, 10));
  ASSERT_EQ(storage_->conversations().Load(key, 10)->size(), 1u);

  auto o = Go(Person({Plain("!reset")}));
  EXPECT_EQ(o.kind, OutcomeKind::kReplied);
  EXPECT_EQ(PlainOf(o.reply), "The conversation has been reset.");
  EXPECT_TRUE(storage_->conversations().Load(key, 10)->empty());
  EXPECT_TRUE(runner_.inputs.empty());
}

TEST_F(EngineTest, HelpAndUnknownCommands) {
  auto help = Go(Person({Plain("!help")}));
  EXPECT_EQ(help.kind, OutcomeKind::kReplied);
  EXPECT_NE(PlainOf(help.reply).find("!reset"), std::string::npos);
  auto unknown = Go(Person({Plain("!frobnicate now")}));
  EXPECT_EQ(unknown.kind, OutcomeKind::kReplied);
  EXPECT_NE(PlainOf(unknown.reply).find("Unknown command"), std::string::npos);
  EXPECT_TRUE(runner_.inputs.empty());
}

TEST_F(EngineTest, TrackedFunctionCallsAreNoticedBeforeTheReply) {
  std::vector<std::string> notices;
  auto notice = [&notices](domain::MessageChain chain) { notices.push_back(PlainOf(chain)); };
  auto tracked = Cfg(R"({"output":{"misc":{"track-function-calls":true}}})");
  std::optional<EngineOutcome> out;
  engine_->Process(
      pipeline_, Person({Plain("hi")}, tracked), [&](EngineOutcome o) { out = std::move(o); },
      nullptr, notice);
  ASSERT_TRUE(out);
  EXPECT_EQ(PlainOf(out->reply), "hello there");
  EXPECT_EQ(notices, (std::vector<std::string>{"Call weather.files_read..."}));
  // Off (LangBot's default), or nowhere to send them: the runner is not told to report.
  notices.clear();
  engine_->Process(
      pipeline_, Person({Plain("hi")}), [&](EngineOutcome) {}, nullptr, notice);
  EXPECT_TRUE(notices.empty());
  EXPECT_FALSE(runner_.inputs.back().on_tool_calls);
  engine_->Process(pipeline_, Person({Plain("hi")}, tracked), [&](EngineOutcome) {});
  EXPECT_FALSE(runner_.inputs.back().on_tool_calls);
}

TEST_F(EngineTest, RunnerFailureFollowsExceptionHandling) {
  runner_.error = "provider answered 500";
  auto hint = Go(Person({Plain("hi")}, Cfg(R"({"output":{"misc":{
      "exception-handling":"show-hint","failure-hint":"Try later."}}})")));
  EXPECT_EQ(hint.kind, OutcomeKind::kReplied);
  EXPECT_TRUE(hint.failed);
  EXPECT_EQ(PlainOf(hint.reply), "Try later.");
  EXPECT_TRUE(LogHas(hint, "provider answered 500"));

  auto error = Go(Person({Plain("hi")}, Cfg(R"({"output":{"misc":{
      "exception-handling":"show-error"}}})")));
  EXPECT_EQ(error.kind, OutcomeKind::kReplied);
  EXPECT_EQ(PlainOf(error.reply), "provider answered 500");

  auto hide = Go(Person({Plain("hi")}, Cfg(R"({"output":{"misc":{
      "exception-handling":"hide"}}})")));
  EXPECT_EQ(hide.kind, OutcomeKind::kIgnored);
  EXPECT_EQ(hide.reason, IgnoreReason::kFailureHidden);
  EXPECT_TRUE(hide.failed);
  EXPECT_TRUE(hide.reply.empty());

  auto defaults = Go(Person({Plain("hi")}));
  EXPECT_EQ(PlainOf(defaults.reply), "Request failed.");
}

TEST_F(EngineTest, UnavailableRunnerIsAFailure) {
  auto o = Go(Person({Plain("hi")}, Cfg(R"({"ai":{"runner":{"runner":"dify-service-api"}},
      "output":{"misc":{"exception-handling":"show-error"}}})")));
  EXPECT_EQ(o.kind, OutcomeKind::kReplied);
  EXPECT_TRUE(o.failed);
  EXPECT_NE(PlainOf(o.reply).find("dify-service-api"), std::string::npos);
  EXPECT_TRUE(runner_.inputs.empty());
}

TEST_F(EngineTest, RemoveThinkApplied) {
  runner_.reply = "<think>let me see</think>\nThe answer is 4.";
  auto on = Go(Person({Plain("2+2")}, Cfg(R"({"output":{"misc":{"remove-think":true}}})")));
  EXPECT_EQ(PlainOf(on.reply), "The answer is 4.");
  auto off = Go(Person({Plain("2+2")}, Cfg(R"({"output":{"misc":{"remove-think":false}}})")));
  EXPECT_NE(PlainOf(off.reply).find("<think>"), std::string::npos);
}

TEST_F(EngineTest, LongTextForwardAsksForAForwardMessage) {
  runner_.reply = std::string(50, 'x');
  auto o = Go(Person({Plain("hi")}, Cfg(R"({"output":{"long-text-processing":{
      "threshold":10,"strategy":"forward"}}})")));
  EXPECT_EQ(PlainOf(o.reply), std::string(50, 'x'));  // the text is kept whole
  EXPECT_EQ(o.form, domain::ReplyForm::kForward);
  EXPECT_TRUE(LogHas(o, "long reply (50 > 10 characters)"));
  // At the threshold it is not long.
  runner_.reply = std::string(10, 'x');
  auto at = Go(Person({Plain("hi")}, Cfg(R"({"output":{"long-text-processing":{
      "threshold":10,"strategy":"forward"}}})")));
  EXPECT_EQ(at.form, domain::ReplyForm::kNormal);
  EXPECT_FALSE(LogHas(at, "long reply"));
}

TEST_F(EngineTest, LongTextNoneAndImageSendNormally) {
  runner_.reply = std::string(50, 'x');
  auto none = Go(Person({Plain("hi")}, Cfg(R"({"output":{"long-text-processing":{
      "threshold":10,"strategy":"none"}}})")));
  EXPECT_EQ(none.form, domain::ReplyForm::kNormal);
  EXPECT_FALSE(LogHas(none, "long reply"));
  auto image = Go(Person({Plain("hi")}, Cfg(R"({"output":{"long-text-processing":{
      "threshold":10,"strategy":"image"}}})")));
  EXPECT_EQ(image.form, domain::ReplyForm::kNormal);
  EXPECT_EQ(PlainOf(image.reply), std::string(50, 'x'));
  bool warned = false;
  for (const auto& l : image.log) {
    warned = warned || (l.level == domain::LogLevel::kWarning &&
                        l.text.find("\"image\" is not supported") != std::string::npos);
  }
  EXPECT_TRUE(warned);
}

TEST_F(EngineTest, QuotedTextGoesToTheRunnerBeforeTheUserText) {
  domain::MessageElement source;
  source.type = domain::ElementType::kSource;
  source.id = "9";
  auto o = Go(Person(
      {source, domain::MakeQuote("5", "the meeting is at 3pm", "77"), Plain("when is it?")}));
  ASSERT_EQ(runner_.inputs.size(), 1u);
  const auto& content = runner_.inputs[0].content;
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(content[0].text, "the meeting is at 3pm");
  EXPECT_EQ(content[1].text, "when is it?");
  EXPECT_EQ(o.kind, OutcomeKind::kReplied);
}

TEST_F(EngineTest, CombineQuoteOffOrAQuoteWithoutTextAddsNothing) {
  Go(Person({domain::MakeQuote("5", "the meeting is at 3pm"), Plain("when is it?")},
            Cfg(R"({"trigger":{"misc":{"combine-quote-message":false}}})")));
  Go(Person({domain::MakeQuote("6", ""), Plain("and now?")}));
  ASSERT_EQ(runner_.inputs.size(), 2u);
  ASSERT_EQ(runner_.inputs[0].content.size(), 1u);
  EXPECT_EQ(runner_.inputs[0].content[0].text, "when is it?");
  ASSERT_EQ(runner_.inputs[1].content.size(), 1u);
  EXPECT_EQ(runner_.inputs[1].content[0].text, "and now?");
}

TEST(MakeQuote, CutsTheQuotedTextAtAUtf8Boundary) {
  std::string long_text;
  for (int i = 0; i < 1000; ++i) long_text += "引🙂";  // 3 + 4 bytes each
  auto quote = domain::MakeQuote("1", long_text, "2");
  EXPECT_EQ(quote.type, domain::ElementType::kQuote);
  EXPECT_EQ(quote.id, "1");
  EXPECT_EQ(quote.target, "2");
  EXPECT_LE(quote.text.size(), domain::kMaxQuotedTextBytes);
  EXPECT_TRUE(quote.text.ends_with("…"));
  EXPECT_TRUE(util::IsValidUtf8(quote.text));
  std::string exact(domain::kMaxQuotedTextBytes, 'a');
  EXPECT_EQ(domain::MakeQuote("1", exact).text, exact);  // at the bound: kept whole
}

}  // namespace
}  // namespace sb::pipeline
