// The Discord adapter's gateway life cycle and REST calls, driven through the ports it is built on:
// a scripted WebSocketTransport playing the gateway as the docs describe it (HELLO, READY, op 1,
// 7, 9, close codes), a scripted HttpClient for REST, and a SimulatedClock for heartbeats,
// backoff and rate-limit waits, so no test sleeps for time to pass.
#include "platforms/discord/discord_adapter.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.hpp"
#include "net/websocket.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::discord {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using util::ErrorCode;
using util::Json;

constexpr const char* kToken = "MTAwMDAw.fake.discord-token";
constexpr const char* kBotId = "1100000000000000001";

// Polls `check` until it holds or 5 s of real time pass (the adapter runs on another thread).
bool Eventually(const std::function<bool()>& check) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return check();
}

class ScriptedConnection final : public net::WebSocketConnection {
 public:
  explicit ScriptedConnection(std::string url) : url_(std::move(url)) {}

  asio::awaitable<util::Result<net::WebSocketMessage>> Read() override {
    auto executor = co_await asio::this_coro::executor;
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (!inbox_.empty()) {
          net::WebSocketMessage m{std::move(inbox_.front()), false};
          inbox_.pop_front();
          co_return m;
        }
        if (closed_) co_return util::Fail(ErrorCode::kUpstreamFailed, "closed");
        timer_ =
            std::make_shared<asio::steady_timer>(executor, asio::steady_timer::time_point::max());
      }
      auto timer = timer_;
      co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
      auto state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) {
        co_return util::Fail(ErrorCode::kCancelled, "cancelled");
      }
    }
  }

  asio::awaitable<util::Result<void>> Write(std::string data, bool) override {
    std::lock_guard lock(mu_);
    if (closed_) co_return util::Fail(ErrorCode::kUpstreamFailed, "closed");
    written_.push_back(std::move(data));
    co_return util::Ok();
  }

  asio::awaitable<void> Close(int code, std::string reason) override {
    std::lock_guard lock(mu_);
    if (!closed_) {
      closed_ = true;
      close_ = {code, std::move(reason)};
      closed_by_client_ = code;
    }
    co_return;
  }

  void Abort() override {
    std::lock_guard lock(mu_);
    aborted_ = true;
    if (!closed_) {
      closed_ = true;
      close_ = {1006, ""};
    }
  }

  net::WebSocketClose close_info() const override {
    std::lock_guard lock(mu_);
    return close_;
  }
  std::string remote_address() const override { return "127.0.0.1:1"; }

  // --- the gateway's side ---
  void Push(std::string frame) {
    std::lock_guard lock(mu_);
    inbox_.push_back(std::move(frame));
    Wake();
  }
  void ServerClose(int code) {
    std::lock_guard lock(mu_);
    closed_ = true;
    close_ = {code, "closed by the test"};
    Wake();
  }
  std::vector<Json> Written() const {
    std::lock_guard lock(mu_);
    std::vector<Json> frames;
    for (const auto& w : written_) frames.push_back(util::ParseJson(w).value());
    return frames;
  }
  std::vector<Json> WrittenOp(int op) const {
    std::vector<Json> frames;
    for (auto& f : Written()) {
      if (f.at("op").as_int64() == op) frames.push_back(f);
    }
    return frames;
  }
  int closed_by_client() const {
    std::lock_guard lock(mu_);
    return closed_by_client_;
  }
  bool aborted() const {
    std::lock_guard lock(mu_);
    return aborted_;
  }
  const std::string& url() const { return url_; }

 private:
  void Wake() {  // under mu_
    if (timer_) {
      auto timer = timer_;
      asio::post(timer->get_executor(), [timer] { timer->cancel(); });
    }
  }

  const std::string url_;
  mutable std::mutex mu_;
  std::deque<std::string> inbox_;              // guarded by mu_
  std::vector<std::string> written_;           // guarded by mu_
  std::shared_ptr<asio::steady_timer> timer_;  // guarded by mu_
  bool closed_ = false;                        // guarded by mu_
  bool aborted_ = false;                       // guarded by mu_
  int closed_by_client_ = 0;                   // guarded by mu_
  net::WebSocketClose close_;                  // guarded by mu_
};

class ScriptedTransport final : public net::WebSocketTransport {
 public:
  asio::awaitable<util::Result<std::shared_ptr<net::WebSocketConnection>>> Connect(
      net::WebSocketConnectRequest request) override {
    auto conn = std::make_shared<ScriptedConnection>(request.url);
    std::lock_guard lock(mu_);
    conns_.push_back(conn);
    co_return conn;
  }
  util::Result<std::shared_ptr<net::WebSocketListener>> Listen(net::WebSocketListenOptions,
                                                               net::WebSocketAcceptor,
                                                               net::WebSocketOpened) override {
    return util::Fail(ErrorCode::kUnavailable, "not in this test");
  }
  std::size_t count() const {
    std::lock_guard lock(mu_);
    return conns_.size();
  }
  std::shared_ptr<ScriptedConnection> at(std::size_t i) const {
    std::lock_guard lock(mu_);
    return conns_.at(i);
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<ScriptedConnection>> conns_;  // guarded by mu_
};

class ScriptedHttp final : public net::HttpClient {
 public:
  struct Call {
    std::string method;
    std::string url;
    std::string authorization;
    std::string body;
  };

  asio::awaitable<util::Result<net::HttpResponse>> Send(net::HttpRequest request,
                                                        net::BodySink) override {
    Call call{request.method, request.url, "", request.body};
    for (const auto& [name, value] : request.headers) {
      if (name == "Authorization") call.authorization = value;
    }
    net::HttpResponse response;
    {
      std::lock_guard lock(mu_);
      calls_.push_back(call);
      if (!call.authorization.ends_with(token_)) {
        response.status = 401;
        response.body = R"({"message":"401: Unauthorized","code":0})";
      } else if (limited_ > 0 && call.url.ends_with("/messages")) {
        --limited_;
        response.status = 429;
        response.headers.emplace_back("retry-after", "3");
        response.body =
            R"({"message":"You are being rate limited.","retry_after":2.5,"global":false})";
      } else if (call.url.ends_with("/gateway/bot") && gateway_failures_ > 0) {
        --gateway_failures_;
        response.status = 502;
        response.body = "<html>bad gateway</html>";
      } else if (call.url.ends_with("/gateway/bot")) {
        response.status = 200;
        response.body = fmt::format(
            R"({{"url":"ws://gw.test","shards":1,"session_start_limit":{{"total":1000,
                "remaining":{},"reset_after":60000,"max_concurrency":1}}}})",
            exhausted_ > 0 ? 0 : 999);
        if (exhausted_ > 0) --exhausted_;
      } else if (call.url.ends_with("/users/@me/channels")) {
        response.status = 200;
        response.body = R"({"id":"1300000000000000077","type":1})";
      } else if (call.url.ends_with("/messages")) {
        response.status = 200;
        response.body = fmt::format(R"({{"id":"{}"}})", 1500000000000000000 + calls_.size());
      } else {
        response.status = 404;
        response.body = R"({"message":"404: Not Found","code":0})";
      }
    }
    co_return response;
  }

  void set_token(std::string token) {
    std::lock_guard lock(mu_);
    token_ = std::move(token);
  }
  void exhaust_sessions(int n) {
    std::lock_guard lock(mu_);
    exhausted_ = n;
  }
  void fail_gateway(int n) {
    std::lock_guard lock(mu_);
    gateway_failures_ = n;
  }
  void limit_next_sends(int n) {
    std::lock_guard lock(mu_);
    limited_ = n;
  }
  std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Call> calls_;     // guarded by mu_
  std::string token_ = kToken;  // guarded by mu_
  int limited_ = 0;             // guarded by mu_
  int gateway_failures_ = 0;    // guarded by mu_
  int exhausted_ = 0;           // guarded by mu_
};

class RecordingHost final : public AdapterHost {
 public:
  void OnMessage(ReceivedMessage message) override {
    std::lock_guard lock(mu_);
    messages.push_back(std::move(message));
  }
  void OnConnected(std::string id) override {
    std::lock_guard lock(mu_);
    connected.push_back(std::move(id));
  }
  void OnTrouble(std::string why) override {
    std::lock_guard lock(mu_);
    troubles.push_back(std::move(why));
  }
  void Log(domain::LogLevel, std::string text) override {
    std::lock_guard lock(mu_);
    logs.push_back(std::move(text));
  }
  template <typename F>
  auto With(F f) {
    std::lock_guard lock(mu_);
    return f(*this);
  }
  std::vector<ReceivedMessage> messages;
  std::vector<std::string> connected;
  std::vector<std::string> troubles;
  std::vector<std::string> logs;

 private:
  std::mutex mu_;
};

domain::OutgoingMessage Text(domain::TargetType type, std::string target, std::string text) {
  domain::OutgoingMessage m;
  m.target_type = type;
  m.target_id = std::move(target);
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::move(text);
  m.chain.push_back(std::move(e));
  return m;
}

std::string Dispatch(int s, const std::string& t, const std::string& d) {
  return fmt::format(R"({{"op":0,"s":{},"t":"{}","d":{}}})", s, t, d);
}

std::string Ready(int s) {
  return Dispatch(s, "READY",
                  fmt::format(R"({{"v":10,"user":{{"id":"{}","username":"sb",
      "bot":true}},"guilds":[],"session_id":"sess-1","resume_gateway_url":"ws://resume.test"}})",
                              kBotId));
}

class DiscordAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_.emplace(asio::make_work_guard(io_));
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (adapter_) StopAdapter();
    work_.reset();
    thread_.join();
  }

  void StartAdapter(std::string token = kToken) {
    AdapterContext context;
    context.bot_uuid = "bot-1";
    context.config = util::JsonObject{
        {"token", token}, {"client_id", "1"}, {"api_base_url", "http://rest.test/api/"}};
    context.executor = io_.get_executor();
    context.http = http_;
    context.websockets = transport_;
    context.clock = &clock_;
    context.host = &host_;
    adapter_ = MakeDiscordAdapter(std::move(context));
    adapter_->Start();
  }

  void StopAdapter() {
    std::promise<void> stopped;
    adapter_->Stop([&] { stopped.set_value(); });
    ASSERT_EQ(stopped.get_future().wait_for(10s), std::future_status::ready);
    adapter_.reset();
  }

  std::shared_ptr<ScriptedConnection> Connection(std::size_t i) {
    EXPECT_TRUE(Eventually([&] { return transport_->count() > i; })) << "no connection " << i;
    return transport_->count() > i ? transport_->at(i) : nullptr;
  }

  // Connection i, through HELLO (heartbeat every second) to READY with sequence 1.
  std::shared_ptr<ScriptedConnection> Identified(std::size_t i = 0) {
    auto conn = Connection(i);
    conn->Push(R"({"op":10,"d":{"heartbeat_interval":1000},"s":null,"t":null})");
    EXPECT_TRUE(Eventually([&] { return conn->WrittenOp(2).size() == 1; }));
    conn->Push(Ready(1));
    EXPECT_TRUE(
        Eventually([&] { return host_.With([](auto& h) { return !h.connected.empty(); }); }));
    return conn;
  }

  // Waits until the adapter's (single) I/O thread has finished what it is running, so that a
  // timer it schedules right after a write the test saw is on the clock.
  void Settle() {
    std::promise<void> drained;
    asio::post(io_, [&] { drained.set_value(); });
    drained.get_future().wait_for(5s);
  }

  void Advance(util::Duration step) {
    Settle();
    clock_.Advance(step);
    Settle();
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
  util::SimulatedClock clock_;
  std::shared_ptr<ScriptedHttp> http_ = std::make_shared<ScriptedHttp>();
  std::shared_ptr<ScriptedTransport> transport_ = std::make_shared<ScriptedTransport>();
  RecordingHost host_;
  std::unique_ptr<PlatformAdapter> adapter_;
};

TEST_F(DiscordAdapterTest, IdentifiesAndHeartbeatsWithTheLastSequence) {
  StartAdapter();
  auto conn = Identified();
  EXPECT_EQ(conn->url(), "ws://gw.test/?v=10&encoding=json");
  const auto calls = http_->calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0].url, "http://rest.test/api/v10/gateway/bot");
  EXPECT_EQ(calls[0].authorization, std::string("Bot ") + kToken);
  const Json identify = conn->WrittenOp(2).at(0);
  EXPECT_EQ(identify.at("d").at("token"), kToken);
  EXPECT_EQ(identify.at("d").at("intents").as_int64(), 1 | 512 | 4096 | 32768);
  EXPECT_EQ(host_.With([](auto& h) { return h.connected; }), std::vector<std::string>{kBotId});

  // The first beat comes within one interval (jitter), carrying the last sequence.
  Advance(1000ms);
  ASSERT_TRUE(Eventually([&] { return conn->WrittenOp(1).size() == 1; }));
  EXPECT_EQ(conn->WrittenOp(1)[0].at("d"), 1);
  conn->Push(R"({"op":11})");
  conn->Push(Dispatch(2, "MESSAGE_CREATE", R"({"id":"7","channel_id":"8","guild_id":"9",
      "author":{"id":"2000"},"content":"hi"})"));
  ASSERT_TRUE(
      Eventually([&] { return host_.With([](auto& h) { return h.messages.size(); }) == 1; }));
  Advance(1000ms);
  ASSERT_TRUE(Eventually([&] { return conn->WrittenOp(1).size() == 2; }));
  EXPECT_EQ(conn->WrittenOp(1)[1].at("d"), 2);
}

TEST_F(DiscordAdapterTest, DeliversMessagesAndAnswersAHeartbeatRequestAtOnce) {
  StartAdapter();
  auto conn = Identified();
  conn->Push(Dispatch(2, "MESSAGE_CREATE", R"({"id":"1200000000000000010",
      "channel_id":"1300000000000000001","author":{"id":"2000","username":"ann"},
      "content":"hello","type":0})"));
  conn->Push(Dispatch(3, "MESSAGE_CREATE", R"({"id":"1200000000000000011",
      "channel_id":"1300000000000000001","author":{"id":"1100000000000000001"},
      "content":"my own"})"));
  conn->Push(R"({"op":1,"d":null})");
  ASSERT_TRUE(Eventually([&] { return conn->WrittenOp(1).size() == 1; }));
  EXPECT_EQ(conn->WrittenOp(1)[0].at("d"), 3);
  auto messages = host_.With([](auto& h) { return h.messages; });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].chat_id, "2000");

  // A reply to the DM goes to its channel without opening it again.
  std::promise<util::Result<domain::SendReceipt>> sent;
  adapter_->Send(Text(domain::TargetType::kPerson, "2000", "hi"), "1200000000000000010",
                 [&](auto r) { sent.set_value(std::move(r)); });
  auto receipt = sent.get_future().get();
  ASSERT_TRUE(receipt) << receipt.error().message;
  auto calls = http_->calls();
  EXPECT_EQ(calls.back().url, "http://rest.test/api/v10/channels/1300000000000000001/messages");
  for (const auto& call : calls) EXPECT_FALSE(call.url.ends_with("/users/@me/channels"));
}

TEST_F(DiscordAdapterTest, MalformedAndUnknownFramesAreLoggedAndTheConnectionStays) {
  StartAdapter();
  auto conn = Identified();
  conn->Push("{not json");
  conn->Push(R"({"op":42,"d":null})");
  conn->Push(Dispatch(2, "MESSAGE_CREATE", R"({"id":"1","author":{"id":"3"}})"));
  conn->Push(Dispatch(3, "MESSAGE_CREATE", R"({"id":"4","channel_id":"5",
      "author":{"id":"6"},"content":"still here"})"));
  ASSERT_TRUE(
      Eventually([&] { return host_.With([](auto& h) { return h.messages.size(); }) == 1; }));
  auto logs = host_.With([](auto& h) { return h.logs; });
  auto has = [&](std::string_view s) {
    return std::any_of(logs.begin(), logs.end(),
                       [&](const std::string& l) { return l.find(s) != std::string::npos; });
  };
  EXPECT_TRUE(has("malformed gateway frame"));
  EXPECT_TRUE(has("unknown opcode 42"));
  EXPECT_TRUE(has("d.channel_id"));
  EXPECT_EQ(transport_->count(), 1u);
}

TEST_F(DiscordAdapterTest, AMissingAckIsAZombieThatResumes) {
  StartAdapter();
  auto conn = Identified();
  Advance(1000ms);  // first beat, never acknowledged
  ASSERT_TRUE(Eventually([&] { return conn->WrittenOp(1).size() == 1; }));
  Advance(1000ms);  // the next beat finds no ACK
  ASSERT_TRUE(Eventually([&] { return conn->aborted(); }));
  ASSERT_TRUE(Eventually([&] { return !host_.With([](auto& h) { return h.troubles; }).empty(); }));
  // The reconnect waits for the backoff (about a second), then resumes on resume_gateway_url.
  Advance(2000ms);
  auto next = Connection(1);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->url(), "ws://resume.test/?v=10&encoding=json");
  next->Push(R"({"op":10,"d":{"heartbeat_interval":1000}})");
  ASSERT_TRUE(Eventually([&] { return next->WrittenOp(6).size() == 1; }));
  EXPECT_EQ(
      next->WrittenOp(6)[0],
      util::ParseJson(
          fmt::format(R"({{"op":6,"d":{{"token":"{}","session_id":"sess-1","seq":1}}}})", kToken))
          .value());
  EXPECT_TRUE(next->WrittenOp(2).empty());
  next->Push(Dispatch(2, "RESUMED", "{}"));
  ASSERT_TRUE(
      Eventually([&] { return host_.With([](auto& h) { return h.connected.size(); }) == 2; }));
  auto troubles = host_.With([](auto& h) { return h.troubles; });
  ASSERT_FALSE(troubles.empty());
  EXPECT_NE(troubles[0].find("zombie"), std::string::npos);
  EXPECT_NE(troubles[0].find("retrying in"), std::string::npos);
}

TEST_F(DiscordAdapterTest, OpSevenReconnectsAtOnceAndOpNineFalseIdentifiesAgain) {
  StartAdapter();
  auto conn = Identified();
  conn->Push(R"({"op":7,"d":null})");
  auto resumed = Connection(1);  // no clock advance needed
  ASSERT_TRUE(resumed);
  EXPECT_EQ(conn->closed_by_client(), 4000);  // not 1000: the session stays resumable
  EXPECT_EQ(resumed->url(), "ws://resume.test/?v=10&encoding=json");
  resumed->Push(R"({"op":10,"d":{"heartbeat_interval":1000}})");
  ASSERT_TRUE(Eventually([&] { return resumed->WrittenOp(6).size() == 1; }));
  resumed->Push(Dispatch(2, "RESUMED", "{}"));
  ASSERT_TRUE(
      Eventually([&] { return host_.With([](auto& h) { return h.connected.size(); }) == 2; }));
  resumed->Push(R"({"op":9,"d":false})");
  ASSERT_TRUE(Eventually([&] { return resumed->closed_by_client() != 0; }));
  EXPECT_EQ(transport_->count(), 2u);  // waits 1-5 s first
  Advance(5000ms);
  auto fresh = Connection(2);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->url(), "ws://gw.test/?v=10&encoding=json");
  fresh->Push(R"({"op":10,"d":{"heartbeat_interval":1000}})");
  ASSERT_TRUE(Eventually([&] { return fresh->WrittenOp(2).size() == 1; }));
  EXPECT_TRUE(fresh->WrittenOp(6).empty());
}

TEST_F(DiscordAdapterTest, ADropResumesAfterBackoffAndFatalCodesStopTheLoop) {
  StartAdapter();
  auto conn = Identified();
  conn->ServerClose(4000);
  ASSERT_TRUE(Eventually([&] { return !host_.With([](auto& h) { return h.troubles; }).empty(); }));
  EXPECT_EQ(transport_->count(), 1u);
  Advance(2000ms);
  auto next = Connection(1);
  ASSERT_TRUE(next);
  next->Push(R"({"op":10,"d":{"heartbeat_interval":1000}})");
  ASSERT_TRUE(Eventually([&] { return next->WrittenOp(6).size() == 1; }));
  next->ServerClose(4014);
  ASSERT_TRUE(
      Eventually([&] { return host_.With([](auto& h) { return h.troubles.size(); }) == 2; }));
  EXPECT_NE(host_.With([](auto& h) { return h.troubles[1]; }).find("MESSAGE CONTENT"),
            std::string::npos);
  Advance(10min);
  EXPECT_EQ(transport_->count(), 2u);
}

TEST_F(DiscordAdapterTest, AnInvalidSeqCloseStartsANewSession) {
  StartAdapter();
  auto conn = Identified();
  conn->ServerClose(4007);
  // The trouble is reported just before the backoff is put on the clock.
  ASSERT_TRUE(Eventually([&] { return !host_.With([](auto& h) { return h.troubles; }).empty(); }));
  Advance(2000ms);
  auto next = Connection(1);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->url(), "ws://gw.test/?v=10&encoding=json");
  next->Push(R"({"op":10,"d":{"heartbeat_interval":1000}})");
  ASSERT_TRUE(Eventually([&] { return next->WrittenOp(2).size() == 1; }));
  EXPECT_TRUE(next->WrittenOp(6).empty());
}

TEST_F(DiscordAdapterTest, AnUnavailableGatewayEndpointIsRetriedWithBackoff) {
  http_->fail_gateway(2);
  StartAdapter();
  ASSERT_TRUE(
      Eventually([&] { return host_.With([](auto& h) { return h.troubles.size(); }) == 1; }));
  EXPECT_NE(host_.With([](auto& h) { return h.troubles[0]; }).find("retrying in"),
            std::string::npos);
  EXPECT_EQ(http_->calls().size(), 1u);
  Advance(1300ms);  // the first step is 1 s, +-20 %
  ASSERT_TRUE(Eventually([&] { return http_->calls().size() == 2; }));
  // The second step (2 s +-20 %) counts from when the first timer fired, which the simulated
  // clock may still report as its own deadline (0.8 s at the earliest): due at 2.4 s at the
  // earliest and 3.7 s at the latest.
  Advance(1000ms);  // t = 2.3 s: not yet
  EXPECT_EQ(http_->calls().size(), 2u);
  Advance(1500ms);  // t = 3.8 s
  ASSERT_TRUE(Eventually([&] { return transport_->count() == 1; }));
  EXPECT_EQ(http_->calls().size(), 3u);
}

TEST_F(DiscordAdapterTest, NoIdentifyWhileTheSessionStartLimitIsSpent) {
  http_->exhaust_sessions(1);
  StartAdapter();
  ASSERT_TRUE(
      Eventually([&] { return host_.With([](auto& h) { return h.troubles.size(); }) == 1; }));
  EXPECT_NE(host_.With([](auto& h) { return h.troubles[0]; }).find("session start limit"),
            std::string::npos);
  Advance(59s);
  EXPECT_EQ(transport_->count(), 0u);
  Advance(1s);  // reset_after
  auto conn = Identified();
  EXPECT_EQ(http_->calls().size(), 2u);
  // A resume needs no new session, so it does not ask again.
  conn->Push(R"({"op":7,"d":null})");
  auto resumed = Connection(1);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(http_->calls().size(), 2u);
}

TEST_F(DiscordAdapterTest, ARefusedTokenIsReportedOnceWithoutTheToken) {
  http_->set_token("the-right-one");
  StartAdapter();
  ASSERT_TRUE(Eventually([&] { return !host_.With([](auto& h) { return h.troubles; }).empty(); }));
  const std::string trouble = host_.With([](auto& h) { return h.troubles[0]; });
  EXPECT_NE(trouble.find("401"), std::string::npos);
  EXPECT_EQ(trouble.find(kToken), std::string::npos);
  Advance(10min);
  EXPECT_EQ(http_->calls().size(), 1u);
  EXPECT_EQ(transport_->count(), 0u);
}

TEST_F(DiscordAdapterTest, SendsOpenTheDmChannelOnceAndWaitOutA429) {
  StartAdapter();
  Identified();
  auto send = [&](domain::TargetType type, std::string target) {
    auto result = std::make_shared<std::promise<util::Result<domain::SendReceipt>>>();
    adapter_->Send(Text(type, std::move(target), "hello"), "",
                   [result](auto r) { result->set_value(std::move(r)); });
    return result->get_future();
  };
  ASSERT_TRUE(send(domain::TargetType::kPerson, "3000").get());
  ASSERT_TRUE(send(domain::TargetType::kPerson, "3000").get());
  auto calls = http_->calls();
  EXPECT_EQ(std::count_if(calls.begin(), calls.end(),
                          [](auto& c) { return c.url.ends_with("/users/@me/channels"); }),
            1);
  EXPECT_EQ(calls.back().url, "http://rest.test/api/v10/channels/1300000000000000077/messages");

  http_->limit_next_sends(1);
  auto limited = send(domain::TargetType::kGroup, "1300000000000000002");
  ASSERT_TRUE(Eventually([&] {
    return host_.With([](auto& h) { return h.logs; }).back().find("rate limits") !=
           std::string::npos;
  }));
  EXPECT_EQ(limited.wait_for(50ms), std::future_status::timeout);
  Advance(2400ms);
  EXPECT_EQ(limited.wait_for(50ms), std::future_status::timeout);  // 2.5 s asked
  Advance(200ms);
  ASSERT_EQ(limited.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(limited.get());
}

TEST_F(DiscordAdapterTest, StopClosesWith1000AndCancelsWaitingSends) {
  StartAdapter();
  auto conn = Identified();
  http_->limit_next_sends(1);
  std::promise<util::Result<domain::SendReceipt>> sent;
  adapter_->Send(Text(domain::TargetType::kGroup, "1300000000000000002", "hello"), "",
                 [&](auto r) { sent.set_value(std::move(r)); });
  ASSERT_TRUE(Eventually([&] { return http_->calls().size() == 2; }));
  StopAdapter();
  EXPECT_EQ(conn->closed_by_client(), 1000);
  auto result = sent.get_future().get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
}

}  // namespace
}  // namespace sb::platforms::discord
