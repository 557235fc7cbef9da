// The bot runtime: the session scheduler's limits, and the manager's lifecycle over a fake
// adapter (starts, restarts only on relevant changes, never two adapters of one bot at once,
// stops deterministically), the message path through the real engine and SQLite storage, the
// busy notice and the event log.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "pipeline/content_filter.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/message_driver.hpp"
#include "pipeline/pipeline_snapshot.hpp"
#include "pipeline/rate_limiter.hpp"
#include "pipeline/session_scheduler.hpp"
#include "runtime/bot_log_writer.hpp"
#include "runtime/bot_runtime_manager.hpp"
#include "runtime/write_behind_conversations.hpp"
#include "support/bot_storage.hpp"
#include "support/eventually.hpp"

namespace sb::runtime {
namespace {

using namespace std::chrono_literals;
using pipeline::SessionScheduler;

// Polls `pred` for up to two seconds.
template <typename Pred>
bool Eventually(Pred pred) {
  return test::Eventually(pred, 2s);
}

// ---- SessionScheduler -------------------------------------------------------------------------

struct ManualLaunch {
  std::mutex mu;
  std::vector<std::function<void()>> jobs;
  SessionScheduler::Launch launch() {
    return [this](std::function<void()> job) {
      std::lock_guard lock(mu);
      jobs.push_back(std::move(job));
    };
  }
  void RunAll() {
    std::vector<std::function<void()>> now;
    {
      std::lock_guard lock(mu);
      now.swap(jobs);
    }
    for (auto& job : now) job();
  }
};

TEST(SessionScheduler, OneAtATimePerSessionAndAGlobalLimit) {
  ManualLaunch pool;
  SessionScheduler s(2, 100, pool.launch());
  std::vector<SessionScheduler::Finished> running;
  std::vector<std::string> order;
  auto job = [&](std::string name) {
    return [&, name](SessionScheduler::Finished f) {
      order.push_back(name);
      running.push_back(std::move(f));
    };
  };
  EXPECT_TRUE(s.Submit("a", job("a1")));
  EXPECT_TRUE(s.Submit("a", job("a2")));
  EXPECT_TRUE(s.Submit("b", job("b1")));
  EXPECT_TRUE(s.Submit("c", job("c1")));
  pool.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1"}));  // a2 waits for a1, c1 for a slot
  EXPECT_EQ(s.InFlight(), 2u);
  EXPECT_EQ(s.Queued(), 2u);
  running[0]();  // a1 done: c1 had waited longer than a2 became ready
  pool.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "c1"}));
  running[0]();  // a second call of the same `finished` frees nothing more
  pool.RunAll();
  EXPECT_EQ(s.InFlight(), 2u);
  running[1]();  // b1 done
  pool.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "c1", "a2"}));
  running[2]();
  running[3]();
  EXPECT_EQ(s.InFlight(), 0u);
  EXPECT_EQ(s.Queued(), 0u);
}

TEST(SessionScheduler, RefusesBeyondTheQueueButNeverAJobThatStartsAtOnce) {
  ManualLaunch pool;
  SessionScheduler s(1, 1, pool.launch());
  std::vector<SessionScheduler::Finished> running;
  auto job = [&](SessionScheduler::Finished f) { running.push_back(std::move(f)); };
  EXPECT_TRUE(s.Submit("a", job));   // starts
  EXPECT_TRUE(s.Submit("b", job));   // waits (queue 1/1)
  EXPECT_FALSE(s.Submit("c", job));  // refused
  EXPECT_FALSE(s.Submit("a", job));  // refused
  pool.RunAll();
  running[0]();
  pool.RunAll();
  EXPECT_EQ(running.size(), 2u);
  EXPECT_TRUE(s.Submit("c", job));  // room again
}

TEST(SessionScheduler, AYieldingJobFreesItsSlotButKeepsTheSessionTurn) {
  ManualLaunch pool;
  SessionScheduler s(1, 10, pool.launch());
  std::vector<SessionScheduler::Finished> running;
  std::vector<std::string> order;
  auto job = [&](std::string name) {
    return [&, name](SessionScheduler::Finished f) {
      order.push_back(name);
      running.push_back(std::move(f));
    };
  };
  EXPECT_TRUE(s.Submit("a", job("a1")));
  EXPECT_TRUE(s.Submit("a", job("a2")));
  EXPECT_TRUE(s.Submit("b", job("b1")));
  pool.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a1"}));
  s.Yield("a");  // a1 waits (rate limit): b1 may run, a2 may not
  s.Yield("a");
  pool.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_EQ(s.InFlight(), 1u);
  running[0]();  // a1 done: frees no slot (it gave it back), hands the turn to a2
  pool.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1"}));  // a2 waits for b1's slot
  running[1]();
  pool.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "a2"}));
  running[2]();
  EXPECT_EQ(s.InFlight(), 0u);
}

// ---- BotRuntimeManager -------------------------------------------------------------------------

class Pool final : public util::BlockingExecutor {
 public:
  void Post(std::function<void()> task) override { boost::asio::post(pool_, std::move(task)); }
  void Join() { pool_.join(); }

 private:
  boost::asio::thread_pool pool_{2};
};

class ReplyRunner final : public pipeline::Runner {
 public:
  void Run(const util::JsonObject&, pipeline::AgentInput input,
           std::function<void(const domain::ChatDelta&)> on_delta,
           std::function<void(util::Result<pipeline::AgentReply>)> done) override {
    std::string text;
    for (const auto& p : input.content) text += p.text;
    if (on_delta) {  // streamed in two pieces, as a model would
      on_delta(domain::ChatDelta{"echo: "});
      on_delta(domain::ChatDelta{text});
    }
    if (hold) {
      std::unique_lock lock(mu);
      cv.wait_for(lock, 3s, [&] { return !hold.load(); });
    }
    done(pipeline::AgentReply{"echo: " + text, "m", {}, {}});
  }
  std::atomic<bool> hold{false};
  std::mutex mu;
  std::condition_variable cv;
  void Release() {
    hold = false;
    cv.notify_all();
  }
};

// Everything the fake adapters did, across incarnations.
struct Journal {
  std::mutex mu;
  std::vector<std::string> events;  // "start <n>", "stop <n>", "stopped <n>"
  std::vector<domain::OutgoingMessage> sent;
  std::vector<int> sent_by;  // which adapter sent each
  std::atomic<int> live{0};  // started and not yet stopped
  std::atomic<int> max_live{0};
  void Add(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
  std::vector<std::string> Events() {
    std::lock_guard lock(mu);
    return events;
  }
  std::vector<domain::OutgoingMessage> Sent() {
    std::lock_guard lock(mu);
    return sent;
  }
};

// A stream that writes what it is asked into the journal ("update <text>", "finish <text>").
class JournalStream final : public platforms::ReplyStream {
 public:
  explicit JournalStream(Journal& journal) : journal_(journal) {}
  void Update(std::string text, std::function<void(util::Result<void>)> done) override {
    journal_.Add("update " + text);
    done(util::Ok());
  }
  void Finish(domain::OutgoingMessage message,
              std::function<void(util::Result<domain::SendReceipt>)> done) override {
    journal_.Add("finish " + message.chain.back().text);
    done(domain::SendReceipt{"streamed-1"});
  }
  void Abandon() override { journal_.Add("abandon"); }

 private:
  Journal& journal_;
};

class FakeAdapter final : public platforms::PlatformAdapter {
 public:
  FakeAdapter(platforms::AdapterContext ctx, Journal& journal, int n)
      : ctx_(std::move(ctx)), journal_(journal), n_(n) {}
  void Start() override {
    started_ = true;
    journal_.Add("start " + std::to_string(n_));
    const int live = ++journal_.live;
    int seen = journal_.max_live;
    while (live > seen && !journal_.max_live.compare_exchange_weak(seen, live)) {
    }
    ctx_.host->OnConnected("acct-" + std::to_string(n_));
  }
  void Stop(std::function<void()> stopped) override {
    if (!started_) return stopped();  // never connected: nothing to close
    journal_.Add("stop " + std::to_string(n_));
    // Stopping takes a while, as closing a real connection does.
    std::thread([this, stopped = std::move(stopped)] {
      std::this_thread::sleep_for(50ms);
      journal_.Add("stopped " + std::to_string(n_));
      --journal_.live;
      stopped();  // the manager waits for this (StopAll), so the fixture outlives the thread
    }).detach();
  }
  util::Result<void> CheckDeliverable(const domain::OutgoingMessage& m) const override {
    for (const auto& e : m.chain) {
      if (e.type == domain::ElementType::kVoice) {
        return util::Fail(util::ErrorCode::kInvalidArgument, "message_chain: no Voice here");
      }
    }
    return util::Ok();
  }
  void Send(domain::OutgoingMessage message, std::string,
            std::function<void(util::Result<domain::SendReceipt>)> done) override {
    {
      std::lock_guard lock(journal_.mu);
      journal_.sent.push_back(message);
      journal_.sent_by.push_back(n_);
    }
    done(domain::SendReceipt{"sent-1"});
  }
  // Streams when its config says "stream": true.
  std::shared_ptr<platforms::ReplyStream> BeginStream(domain::TargetType, std::string,
                                                      std::string) override {
    auto it = ctx_.config.find("stream");
    if (it == ctx_.config.end() || !it->value().is_bool() || !it->value().as_bool()) return nullptr;
    return std::make_shared<JournalStream>(journal_);
  }
  platforms::AdapterHost& host() { return *ctx_.host; }

 private:
  platforms::AdapterContext ctx_;
  Journal& journal_;
  int n_;
  bool started_ = false;
};

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<test::BotStorage>("runtime");
    limiter_ = std::make_unique<pipeline::RateLimiter>(clock_);
    engine_ = std::make_unique<pipeline::PipelineEngine>(runner_, db_->storage().conversations(),
                                                         *limiter_, filter_, random_, clock_);
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (manager_) manager_->StopAll(2s);
    pool_.Join();  // tasks of the manager finish while it still exists
    manager_.reset();
    driver_.reset();
    work_.reset();
    io_thread_.join();
    engine_.reset();
    db_.reset();
  }

  void Make(RuntimeOptions options = {}, pipeline::DriverOptions driver_options = {}) {
    cache_ = std::make_unique<pipeline::PipelineCache>(db_->storage().pipelines());
    driver_ = pipeline::MessageDriver::Make(*engine_, pool_, clock_, random_, driver_options);
    RuntimeDeps deps;
    deps.executor = io_.get_executor();
    deps.blocking = &pool_;
    deps.driver = driver_;
    deps.pipelines = cache_.get();
    deps.logs = &db_->storage().bot_logs();
    deps.clock = &clock_;
    deps.adapters["fake"] = [this](platforms::AdapterContext ctx) {
      auto adapter = std::make_unique<FakeAdapter>(std::move(ctx), journal_, ++made_);
      last_ = adapter.get();
      return adapter;
    };
    manager_ = std::make_unique<BotRuntimeManager>(std::move(deps), std::move(options));
  }

  domain::Bot Bot(bool enable = true) {
    auto bot = db_->storage().bots().Get(db_->bot());
    EXPECT_TRUE(bot);
    bot->adapter = "fake";
    bot->enable = enable;
    return *bot;
  }

  domain::RuntimeState State() {
    auto s = manager_->Status(db_->bot());
    return s ? s->state : domain::RuntimeState::kStopped;
  }

  domain::ReceivedMessage Message(std::string chat, std::string text) {
    domain::ReceivedMessage m;
    m.chat_id = chat;
    m.sender_id = chat;
    m.message_id = "mid-" + chat;
    domain::MessageElement e;
    e.text = std::move(text);
    m.chain.push_back(e);
    return m;
  }

  util::Result<domain::SendReceipt> Send(const domain::OutgoingMessage& m) {
    std::promise<util::Result<domain::SendReceipt>> sent;
    auto future = sent.get_future();
    manager_->Send(db_->bot(), m,
                   [&sent](util::Result<domain::SendReceipt> r) { sent.set_value(std::move(r)); });
    return future.get();
  }

  std::vector<domain::BotLogEntry> Logs() {
    manager_->CommitLogs();
    auto page = db_->storage().bot_logs().Page(db_->bot(), -1, 1000);
    EXPECT_TRUE(page);
    return page ? page->entries : std::vector<domain::BotLogEntry>{};
  }

  std::unique_ptr<test::BotStorage> db_;
  util::SystemClock clock_;
  pipeline::UniformRandomSource random_;
  pipeline::BanWordFilter filter_;
  ReplyRunner runner_;
  std::unique_ptr<pipeline::RateLimiter> limiter_;
  std::unique_ptr<pipeline::PipelineEngine> engine_;
  std::unique_ptr<pipeline::PipelineCache> cache_;
  std::shared_ptr<pipeline::MessageDriver> driver_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::thread io_thread_;
  Pool pool_;
  Journal journal_;
  std::atomic<int> made_{0};
  FakeAdapter* last_ = nullptr;
  std::unique_ptr<BotRuntimeManager> manager_;
};

TEST_F(RuntimeTest, StartsRestartsOnlyOnRelevantChangesAndStops) {
  Make();
  EXPECT_FALSE(manager_->Status(db_->bot()));
  manager_->Apply(Bot());
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  EXPECT_EQ(manager_->Status(db_->bot())->bot_account_id, "acct-1");

  auto renamed = Bot();
  renamed.name = "another name";
  renamed.log_retention = 5;
  manager_->Apply(renamed);  // not relevant to the adapter
  EXPECT_EQ(made_.load(), 1);

  auto changed = Bot();
  changed.adapter_config["token"] = "new";
  manager_->Apply(changed);
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning && made_ == 2; }));
  // The new adapter started only after the old one had stopped.
  EXPECT_EQ(journal_.Events(),
            (std::vector<std::string>{"start 1", "stop 1", "stopped 1", "start 2"}));
  EXPECT_EQ(journal_.max_live.load(), 1);

  manager_->Apply(Bot(false));
  EXPECT_EQ(State(), domain::RuntimeState::kStopped);
  ASSERT_TRUE(Eventually([&] { return journal_.live == 0; }));
  auto logs = Logs();
  ASSERT_FALSE(logs.empty());
  EXPECT_EQ(logs.back().text, "stopped");
}

TEST_F(RuntimeTest, RapidChangesNeverRunTwoAdaptersOfOneBot) {
  Make();
  for (int i = 0; i < 10; ++i) {
    auto bot = Bot();
    bot.adapter_config["round"] = i;
    manager_->Apply(bot);
  }
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(journal_.max_live.load(), 1);
  EXPECT_EQ(journal_.live.load(), 1);
  manager_->Remove(db_->bot());
  EXPECT_FALSE(manager_->Status(db_->bot()));
  ASSERT_TRUE(Eventually([&] { return journal_.live == 0; }));
}

TEST_F(RuntimeTest, AMessageGoesThroughThePipelineAndIsLogged) {
  Make();
  manager_->Apply(Bot());
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  last_->host().OnMessage(Message("42", "hi"));
  ASSERT_TRUE(Eventually([&] { return journal_.Sent().size() == 1; }));
  auto sent = journal_.Sent()[0];
  EXPECT_EQ(sent.target_id, "42");
  EXPECT_EQ(sent.chain.back().text, "echo: hi");
  ASSERT_TRUE(Eventually([&] {
    for (const auto& e : Logs()) {
      // "reply (model <uuid>, <n> ms): echo: hi": the delivered reply and how it was made.
      if (e.text.starts_with("reply (model ") && e.text.ends_with("ms): echo: hi")) {
        return e.message_session_id == "person_42";
      }
    }
    return false;
  }));
}

TEST_F(RuntimeTest, AStreamingAdapterGetsTheReplyWhileWrittenAndFinishesItOnce) {
  Make();
  auto bot = Bot();
  bot.adapter_config["stream"] = true;
  manager_->Apply(bot);
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  last_->host().OnMessage(Message("42", "hi"));
  auto finished = [&] {
    for (const auto& e : journal_.Events()) {
      if (e.starts_with("finish ")) return true;
    }
    return false;
  };
  ASSERT_TRUE(Eventually(finished));
  std::vector<std::string> streamed;
  for (const auto& e : journal_.Events()) {
    if (e.starts_with("update ") || e.starts_with("finish ") || e == "abandon") {
      streamed.push_back(e);
    }
  }
  // The first piece at once; the second came within the interval, so the final reply ends it.
  EXPECT_EQ(streamed, (std::vector<std::string>{"update echo: ", "finish echo: hi"}));
  EXPECT_TRUE(journal_.Sent().empty());  // not sent a second time
  ASSERT_TRUE(Eventually([&] {
    for (const auto& e : Logs()) {
      if (e.text.starts_with("reply streamed (model ") && e.text.ends_with("echo: hi")) return true;
    }
    return false;
  }));
}

TEST_F(RuntimeTest, AnAdapterThatDoesNotStreamGetsTheWholeReply) {
  Make();
  manager_->Apply(Bot());  // no "stream": BeginStream answers null
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  last_->host().OnMessage(Message("42", "hi"));
  ASSERT_TRUE(Eventually([&] { return journal_.Sent().size() == 1; }));
  for (const auto& e : journal_.Events()) EXPECT_FALSE(e.starts_with("update ")) << e;
}

TEST_F(RuntimeTest, AReplyInFlightDuringARestartGoesOutThroughTheNewAdapter) {
  Make();
  manager_->Apply(Bot());
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  runner_.hold = true;
  last_->host().OnMessage(Message("7", "slow one"));
  ASSERT_TRUE(Eventually([&] { return manager_->InFlight() == 1; }));
  auto changed = Bot();
  changed.adapter_config["token"] = "rotated";
  manager_->Apply(changed);
  ASSERT_TRUE(Eventually([&] { return made_ == 2 && State() == domain::RuntimeState::kRunning; }));
  runner_.Release();
  ASSERT_TRUE(Eventually([&] { return journal_.Sent().size() == 1; }));
  std::lock_guard lock(journal_.mu);
  EXPECT_EQ(journal_.sent_by.at(0), 2);
  EXPECT_EQ(journal_.sent.at(0).chain.back().text, "echo: slow one");
}

TEST_F(RuntimeTest, SendChecksTheAdapterAndTheState) {
  Make();
  domain::OutgoingMessage m;
  m.target_id = "1";
  m.chain.push_back(domain::MessageElement{});
  EXPECT_EQ(Send(m).error().code, util::ErrorCode::kConflict);
  manager_->Apply(Bot());
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  auto ok = Send(m);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->message_id, "sent-1");
  domain::MessageElement voice;
  voice.type = domain::ElementType::kVoice;
  m.chain = {voice};
  EXPECT_EQ(Send(m).error().code, util::ErrorCode::kInvalidArgument);
}

TEST_F(RuntimeTest, AMessageRefusedForLoadGetsTheBusyNotice) {
  RuntimeOptions options;
  options.busy_notice = "busy!";
  Make(options, {.max_in_flight = 1, .max_queued = 0});
  manager_->Apply(Bot());
  ASSERT_TRUE(Eventually([&] { return State() == domain::RuntimeState::kRunning; }));
  runner_.hold = true;
  last_->host().OnMessage(Message("1", "slow"));
  ASSERT_TRUE(Eventually([&] { return manager_->InFlight() == 1; }));
  last_->host().OnMessage(Message("2", "refused"));
  ASSERT_TRUE(Eventually([&] { return journal_.Sent().size() == 1; }));
  EXPECT_EQ(journal_.Sent()[0].chain[0].text, "busy!");
  EXPECT_EQ(journal_.Sent()[0].target_id, "2");
  runner_.Release();
  ASSERT_TRUE(Eventually([&] { return journal_.Sent().size() == 2; }));
  bool logged = false;
  for (const auto& e : Logs()) {
    logged |= e.level == domain::LogLevel::kWarning && e.message_session_id == "person_2";
  }
  EXPECT_TRUE(logged);
}

// ---- WriteBehindConversations ------------------------------------------------------------------

class CountingMemory final : public domain::ConversationRepository {
 public:
  explicit CountingMemory(domain::ConversationRepository& inner) : inner_(inner) {}
  util::Result<std::vector<domain::ConversationTurn>> Load(const domain::ConversationKey& k,
                                                           int r) override {
    ++loads;
    return inner_.Load(k, r);
  }
  util::Result<void> Append(const domain::ConversationKey& k,
                            const std::vector<domain::ConversationTurn>& t, int r) override {
    return inner_.Append(k, t, r);
  }
  std::vector<util::Result<void>> AppendBatch(const std::vector<AppendItem>& items) override {
    ++batches;
    return inner_.AppendBatch(items);
  }
  util::Result<void> Clear(const domain::ConversationKey& k) override { return inner_.Clear(k); }
  util::Result<void> ClearPipeline(const util::PipelineId& p) override {
    return inner_.ClearPipeline(p);
  }
  util::Result<void> ClearBot(const util::BotId& b) override { return inner_.ClearBot(b); }
  std::atomic<int> loads{0};
  std::atomic<int> batches{0};

 private:
  domain::ConversationRepository& inner_;
};

// Runs nothing until told: the test decides when the background drain happens.
class HeldExecutor final : public util::BlockingExecutor {
 public:
  void Post(std::function<void()> task) override { tasks.push_back(std::move(task)); }
  void RunAll() {
    auto now = std::move(tasks);
    tasks.clear();
    for (auto& t : now) t();
  }
  std::vector<std::function<void()>> tasks;
};

std::vector<domain::ConversationTurn> Round(const std::string& user, const std::string& reply) {
  auto turn = [](std::string role, std::string text) {
    domain::ConversationTurn t;
    t.message.role = std::move(role);
    t.message.content.push_back({domain::ContentPart::Kind::kText, std::move(text), {}});
    return t;
  };
  return {turn("user", user), turn("assistant", reply)};
}

std::string Texts(const std::vector<domain::ConversationTurn>& turns) {
  std::string out;
  for (const auto& t : turns) out += t.message.content.at(0).text + ";";
  return out;
}

class WriteBehindTest : public ::testing::Test {
 protected:
  test::BotStorage db_{"writebehind"};
  CountingMemory backing_{db_.storage().conversations()};
  HeldExecutor executor_;
  domain::ConversationKey key_{db_.pipeline(), db_.bot(), "person_1"};
};

TEST_F(WriteBehindTest, TheNextTurnReadsTheCopyWhileTheWriteIsStillQueued) {
  WriteBehindConversations memory(backing_, executor_);
  ASSERT_TRUE(memory.Load(key_, 2));  // first turn: from the database (empty)
  EXPECT_EQ(backing_.loads, 1);
  ASSERT_TRUE(memory.Append(key_, Round("q1", "a1"), 2));
  ASSERT_TRUE(memory.Append(key_, Round("q2", "a2"), 2));
  ASSERT_TRUE(memory.Append(key_, Round("q3", "a3"), 2));
  EXPECT_EQ(memory.Pending(), 3u);
  auto turns = memory.Load(key_, 2);
  ASSERT_TRUE(turns);
  EXPECT_EQ(Texts(*turns), "q2;a2;q3;a3;");  // trimmed to max-round like the database
  EXPECT_EQ(backing_.loads, 1);
  // Not yet in the database; one batch writes all three.
  EXPECT_EQ(Texts(*db_.storage().conversations().Load(key_, 2)), "");
  executor_.RunAll();
  EXPECT_EQ(backing_.batches, 1);
  EXPECT_EQ(Texts(*db_.storage().conversations().Load(key_, 2)), "q2;a2;q3;a3;");
}

TEST_F(WriteBehindTest, MoreRoundsThanTheCopyHoldsFlushAndReadTheDatabase) {
  ASSERT_TRUE(db_.storage().conversations().Append(key_, Round("old", "x"), 10));
  WriteBehindConversations memory(backing_, executor_);
  ASSERT_TRUE(memory.Append(key_, Round("new", "y"), 10));  // a copy knowing one round only
  auto turns = memory.Load(key_, 10);
  ASSERT_TRUE(turns);
  EXPECT_EQ(Texts(*turns), "old;x;new;y;");
  EXPECT_EQ(backing_.loads, 1);
  EXPECT_EQ(memory.Pending(), 0u);  // flushed before reading
  ASSERT_TRUE(memory.Load(key_, 10));
  EXPECT_EQ(backing_.loads, 1);  // now the copy is complete
}

TEST_F(WriteBehindTest, ClearWritesWhatWasQueuedFirstAndSurvivesANewInstance) {
  WriteBehindConversations memory(backing_, executor_);
  ASSERT_TRUE(memory.Append(key_, Round("q1", "a1"), 10));
  ASSERT_TRUE(memory.Clear(key_));
  EXPECT_EQ(Texts(*memory.Load(key_, 10)), "");
  ASSERT_TRUE(memory.Append(key_, Round("q2", "a2"), 10));
  memory.Flush();
  executor_.RunAll();  // the drain posted earlier finds nothing left
  WriteBehindConversations fresh(db_.storage().conversations(), executor_);
  EXPECT_EQ(Texts(*fresh.Load(key_, 10)), "q2;a2;");
}

TEST_F(WriteBehindTest, EvictionKeepsCopiesWithQueuedWrites) {
  WriteBehindConversations memory(backing_, executor_, {.max_sessions = 1});
  domain::ConversationKey other{db_.pipeline(), db_.bot(), "person_2"};
  ASSERT_TRUE(memory.Append(key_, Round("k1", "r1"), 10));
  ASSERT_TRUE(memory.Append(other, Round("o1", "p1"), 10));
  // Both copies stay while their writes are queued, so neither turn can be missed.
  EXPECT_EQ(Texts(*memory.Load(key_, 1)), "k1;r1;");
  EXPECT_EQ(Texts(*memory.Load(other, 1)), "o1;p1;");
  EXPECT_EQ(backing_.loads, 0);
  executor_.RunAll();
  EXPECT_EQ(Texts(*memory.Load(key_, 1)), "k1;r1;");  // evicted or not, the answer holds
}

TEST_F(WriteBehindTest, TheByteBudgetEvictsTheLeastRecentlyUsedAndStorageGivesItBack) {
  auto session = [&](int i) {
    return domain::ConversationKey{db_.pipeline(), db_.bot(), "person_" + std::to_string(i)};
  };
  auto big_round = [](int i) {
    return Round("q" + std::to_string(i) + std::string(4000, 'x'),
                 "a" + std::to_string(i) + std::string(4000, 'y'));
  };
  std::size_t per_session = 0;
  {
    WriteBehindConversations probe(backing_, executor_);
    ASSERT_TRUE(probe.Append(session(999), big_round(999), 10));
    probe.Flush();
    per_session = probe.CachedBytes();
  }
  executor_.tasks.clear();  // the probe's background drain: it flushed already, and it is gone
  ASSERT_GT(per_session, 8000u);                   // the text is counted
  const std::size_t budget = per_session * 9 / 2;  // room for four sessions
  WriteBehindConversations memory(backing_, executor_, {.max_bytes = budget});
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(memory.Append(session(i), big_round(i), 10));
    memory.Flush();
  }
  EXPECT_EQ(memory.CachedSessions(), 4u);
  ASSERT_TRUE(memory.Load(session(0), 1));  // session 0 is now the most recently used
  ASSERT_TRUE(memory.Append(session(4), big_round(4), 10));
  memory.Flush();
  EXPECT_EQ(memory.CachedSessions(), 4u);
  EXPECT_LE(memory.CachedBytes(), budget);
  EXPECT_EQ(backing_.loads, 0);
  ASSERT_TRUE(memory.Load(session(0), 1));
  EXPECT_EQ(backing_.loads, 0);  // kept: it was used after session 1
  // Session 1, the least recently used, was dropped: its history comes back from the database.
  auto evicted = memory.Load(session(1), 1);
  ASSERT_TRUE(evicted);
  EXPECT_EQ(backing_.loads, 1);
  ASSERT_EQ(evicted->size(), 2u);
  EXPECT_EQ(evicted->at(0).message.content.at(0).text.substr(0, 3), "q1x");
  EXPECT_EQ(evicted->at(1).message.content.at(0).text.substr(0, 3), "a1y");
  for (int i = 5; i < 40; ++i) {
    ASSERT_TRUE(memory.Append(session(i), big_round(i), 10));
    memory.Flush();
    EXPECT_LE(memory.CachedBytes(), budget) << "after session " << i;
  }
  EXPECT_LE(memory.CachedSessions(), 4u);
  // Queued writes keep their copies past the budget until written, then the budget holds again.
  for (int i = 40; i < 50; ++i) ASSERT_TRUE(memory.Append(session(i), big_round(i), 10));
  EXPECT_GE(memory.CachedSessions(), 10u);
  EXPECT_GT(memory.CachedBytes(), budget);
  executor_.RunAll();
  EXPECT_LE(memory.CachedBytes(), budget);
  EXPECT_EQ(Texts(*memory.Load(session(40), 1)).substr(0, 3), "q40");
}

// ---- BotLogWriter ------------------------------------------------------------------------------

domain::BotLogEntry Entry(std::string text) {
  domain::BotLogEntry e;
  e.text = std::move(text);
  return e;
}

std::string Texts(const domain::BotLogPage& page) {
  std::string out;
  for (const auto& e : page.entries) out += e.text + ";";
  return out;
}

TEST(BotLogWriter, CommitMakesQueuedEntriesReadableInOrderBeforeTheDrain) {
  test::BotStorage db{"logwriter"};
  HeldExecutor executor;
  BotLogWriter writer(db.storage().bot_logs(), executor);
  writer.Append(db.bot(), 100, Entry("one"));
  writer.Append(db.bot(), 100, Entry("two"));
  EXPECT_EQ(writer.Pending(), 2u);
  EXPECT_EQ(executor.tasks.size(), 1u);  // one drain for the whole group
  EXPECT_EQ(Texts(*db.storage().bot_logs().Page(db.bot(), -1, 10)), "");
  writer.Commit();
  EXPECT_EQ(writer.Pending(), 0u);
  EXPECT_EQ(Texts(*db.storage().bot_logs().Page(db.bot(), -1, 10)), "one;two;");
  writer.Append(db.bot(), 100, Entry("three"));
  executor.RunAll();  // the drain stores what came after the commit, and stops
  EXPECT_EQ(Texts(*db.storage().bot_logs().Page(db.bot(), -1, 10)), "one;two;three;");
  EXPECT_TRUE(executor.tasks.empty());
}

}  // namespace
}  // namespace sb::runtime
