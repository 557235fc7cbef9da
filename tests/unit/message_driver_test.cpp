// The message driver on simulated time: aggregation windows, forced delays and rate-limit waits
// are tested by advancing the clock, with an inline blocking executor, so nothing sleeps.
#include "pipeline/message_driver.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "pipeline/content_filter.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/rate_limiter.hpp"
#include "runtime/in_memory_conversations.hpp"
#include "util/simulated_clock.hpp"

namespace sb::pipeline {
namespace {

using namespace std::chrono_literals;

class InlineExecutor final : public util::BlockingExecutor {
 public:
  void Post(std::function<void()> task) override { task(); }
};

class FixedRandom final : public RandomSource {
 public:
  double Next() override { return 0.5; }
};

// Echoes the text it is given; with `hold`, keeps the answers until Release.
class EchoRunner final : public Runner {
 public:
  void Run(const util::JsonObject&, AgentInput input, std::function<void(const domain::ChatDelta&)>,
           std::function<void(util::Result<AgentReply>)> done) override {
    std::string text;
    for (const auto& p : input.content) text += p.text;
    auto answer = [text, done = std::move(done)] {
      done(AgentReply{"echo: " + text, "m", {}, {}});
    };
    if (hold) return held.push_back(std::move(answer));
    answer();
  }
  void Release() {
    hold = false;
    auto now = std::move(held);
    for (auto& answer : now) answer();
  }
  bool hold = false;
  std::vector<std::function<void()>> held;
};

// What came out of the driver for one origin.
struct Record {
  std::mutex mu;
  std::vector<std::string> replies;
  std::vector<std::string> refused;  // "busy <session>" / "stopped <session>"
  std::vector<std::string> log;
};

class RecordingTurn final : public Turn {
 public:
  RecordingTurn(Record& record, bool& answering) : record_(record), answering_(answering) {}
  void Log(domain::LogLevel, std::string text) override {
    std::lock_guard lock(record_.mu);
    record_.log.push_back(std::move(text));
  }
  bool Answering() override { return answering_; }
  void Deliver(domain::MessageChain reply, std::string, domain::ReplyForm,
               std::function<void()> done) override {
    std::string text;
    for (const auto& e : reply) text += e.text;
    {
      std::lock_guard lock(record_.mu);
      record_.replies.push_back(std::move(text));
    }
    done();
  }

 private:
  Record& record_;
  bool& answering_;
};

class RecordingOrigin final : public MessageOrigin {
 public:
  RecordingOrigin(Record& record, std::shared_ptr<const PipelineSnapshot> pipeline)
      : record_(record), pipeline_(std::move(pipeline)) {}
  std::string scope() const override { return "bot-1"; }
  std::string bot_id() const override { return "bot-1"; }
  std::string account_id() const override { return "me"; }
  std::shared_ptr<const PipelineSnapshot> CachedPipeline() override { return pipeline_; }
  util::Result<std::shared_ptr<const PipelineSnapshot>> LoadPipeline() override {
    return pipeline_;
  }
  void Refused(const domain::ReceivedMessage&, const std::string& session, bool busy) override {
    std::lock_guard lock(record_.mu);
    record_.refused.push_back((busy ? "busy " : "stopped ") + session);
  }
  std::shared_ptr<Turn> Begin(const domain::ReceivedMessage&, const std::string&) override {
    if (!answering) return nullptr;
    return std::make_shared<RecordingTurn>(record_, answering);
  }
  bool answering = true;

 private:
  Record& record_;
  std::shared_ptr<const PipelineSnapshot> pipeline_;
};

class MessageDriverTest : public ::testing::Test {
 protected:
  void Make(const std::string& config_json, DriverOptions options = {}) {
    domain::Pipeline pipeline;
    pipeline.uuid = util::PipelineId::FromTrusted("00000000-0000-4000-8000-000000000001");
    auto parsed = util::ParseJson(config_json);
    ASSERT_TRUE(parsed && parsed->is_object()) << config_json;
    pipeline.config = parsed->as_object();
    origin_ = std::make_shared<RecordingOrigin>(record_, PipelineSnapshot::From(pipeline));
    driver_ = MessageDriver::Make(engine_, pool_, clock_, random_, options);
  }

  void Say(const std::string& chat, const std::string& text) {
    domain::ReceivedMessage m;
    m.chat_id = chat;
    m.sender_id = chat;
    m.message_id = "m-" + text;
    domain::MessageElement e;
    e.text = text;
    m.chain.push_back(e);
    driver_->Submit(origin_, std::move(m));
  }

  std::vector<std::string> Replies() {
    std::lock_guard lock(record_.mu);
    return record_.replies;
  }

  // At the start of a minute, so the rate limiter's fixed windows end a whole minute later.
  util::SimulatedClock clock_{util::FromUnixMillis(1'699'999'980'000)};
  FixedRandom random_;
  InlineExecutor pool_;
  EchoRunner runner_;
  runtime::InMemoryConversations memory_;
  RateLimiter limiter_{clock_};
  BanWordFilter filter_{BanWordList{{}, "*", ""}};
  PipelineEngine engine_{runner_, memory_, limiter_, filter_, random_, clock_};
  Record record_;
  std::shared_ptr<RecordingOrigin> origin_;
  std::shared_ptr<MessageDriver> driver_;
};

TEST_F(MessageDriverTest, WithoutDelaysTheReplyGoesOutAtOnce) {
  Make("{}");
  Say("42", "hi");
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: hi"}));
  EXPECT_EQ(driver_->InFlight(), 0u);
}

TEST_F(MessageDriverTest, ABurstWithinTheAggregationWindowIsAnsweredOnce) {
  Make(R"({"trigger":{"message-aggregation":{"enabled":true,"delay":2}}})");
  Say("42", "a");
  clock_.Advance(1s);
  Say("42", "b");  // restarts the wait
  clock_.Advance(1900ms);
  EXPECT_TRUE(Replies().empty());
  Say("7", "other chat");  // another session aggregates on its own
  clock_.Advance(200ms);
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: a\nb"}));
  clock_.Advance(2s);
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: a\nb", "echo: other chat"}));
}

TEST_F(MessageDriverTest, TheForcedDelayHoldsTheReplyAndFreesTheGlobalSlot) {
  Make(R"({"output":{"force-delay":{"min":2,"max":4}}})", {.max_in_flight = 1, .max_queued = 5});
  Say("1", "first");
  Say("2", "second");  // runs while the first reply waits: the pause is not work
  EXPECT_TRUE(Replies().empty());
  clock_.Advance(2999ms);  // FixedRandom 0.5: 2 s + 0.5 × 2 s
  EXPECT_TRUE(Replies().empty());
  clock_.Advance(1ms);
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: first", "echo: second"}));
}

TEST_F(MessageDriverTest, ARateLimitWaitResumesWhenTheWindowOpens) {
  Make(R"({"safety":{"rate-limit":{"window-length":60,"limitation":1,"strategy":"wait"}}})");
  Say("42", "one");
  Say("42", "two");
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: one"}));
  Say("42", "three");  // waits behind the held run: the session's turn stays taken
  clock_.Advance(59s);
  EXPECT_EQ(Replies().size(), 1u);
  clock_.Advance(1s);
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: one", "echo: two"}));
  clock_.Advance(60s);
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: one", "echo: two", "echo: three"}));
  EXPECT_EQ(driver_->InFlight(), 0u);
}

TEST_F(MessageDriverTest, AHeldRunOfAStoppedOriginIsDropped) {
  Make(R"({"safety":{"rate-limit":{"window-length":60,"limitation":1,"strategy":"wait"}}})");
  Say("42", "one");
  Say("42", "two");
  origin_->answering = false;
  clock_.Advance(60s);
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: one"}));
  EXPECT_EQ(driver_->InFlight(), 0u);
  Say("42", "three");
  std::lock_guard lock(record_.mu);
  EXPECT_EQ(record_.refused, (std::vector<std::string>{"stopped person_42"}));
  EXPECT_EQ(record_.log.back(), "the bot stopped: a rate-limited message was dropped");
}

TEST_F(MessageDriverTest, BeyondTheQueueAMessageIsRefusedAsBusy) {
  Make("{}", {.max_in_flight = 1, .max_queued = 1});
  runner_.hold = true;
  Say("1", "running");
  Say("2", "waiting");
  Say("3", "refused");
  {
    std::lock_guard lock(record_.mu);
    EXPECT_EQ(record_.refused, (std::vector<std::string>{"busy person_3"}));
  }
  runner_.Release();
  EXPECT_EQ(Replies(), (std::vector<std::string>{"echo: running", "echo: waiting"}));
}

TEST_F(MessageDriverTest, CloseDropsDelayedReplies) {
  Make(R"({"output":{"force-delay":{"min":2,"max":2}}})");
  Say("42", "hi");
  driver_->Close();
  clock_.Advance(5s);
  EXPECT_TRUE(Replies().empty());
  EXPECT_EQ(driver_->InFlight(), 0u);
  std::lock_guard lock(record_.mu);
  EXPECT_EQ(record_.log.back(), "the bot stopped: a delayed reply was dropped");
}

TEST_F(MessageDriverTest, CloseDropsHeldMessages) {
  Make(R"({"trigger":{"message-aggregation":{"enabled":true,"delay":1}}})");
  Say("42", "held");
  driver_->Close();
  clock_.Advance(5s);
  Say("42", "after close");
  EXPECT_TRUE(Replies().empty());
}

TEST(DriverSettings, ReadsAndClampsTheConfig) {
  auto parsed = util::ParseJson(R"({"trigger":{"message-aggregation":{"enabled":true,"delay":99}},)"
                                R"("output":{"force-delay":{"min":5,"max":1}}})");
  ASSERT_TRUE(parsed);
  auto s = DriverSettings::Read(parsed->as_object());
  EXPECT_TRUE(s.aggregate);
  EXPECT_EQ(s.aggregation_delay, 10s);
  EXPECT_EQ(s.force_delay_min, 5s);
  EXPECT_EQ(s.force_delay_max, 5s);  // max below min is min
  EXPECT_EQ(s.ForceDelay(0.9), 5s);
  auto none = DriverSettings::Read(util::JsonObject{});
  EXPECT_FALSE(none.aggregate);
  EXPECT_EQ(none.ForceDelay(0.5), 0ms);
}

}  // namespace
}  // namespace sb::pipeline
