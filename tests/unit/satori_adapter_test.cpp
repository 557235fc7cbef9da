// The Satori adapter's connection life cycle and API calls, driven through the ports it is built
// on: a scripted WebSocketTransport playing the SDK's events socket as events.html describes it
// (IDENTIFY, READY, PING/PONG, EVENT with sn), a scripted HttpClient for the API, and a
// SimulatedClock for the 10 s PING cadence, the silence limit and the reconnect backoff, so no
// test waits for time to pass.
#include "platforms/satori/satori_adapter.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "support/adapter_harness.hpp"
#include "support/scripted_websocket.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::satori {
namespace {

using namespace std::chrono_literals;
using test::ScriptedConnection;

constexpr const char* kToken = "satori-unit-token";
constexpr const char* kReady =
    R"({"op":4,"body":{"logins":[{"sn":1,"platform":"discord","user":{"id":"900"},"status":1},
      {"sn":2,"platform":"llonebot","user":{"id":"10001","name":"sb"},"status":1}],
      "proxy_urls":[]}})";

bool Eventually(const std::function<bool()>& check) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return check();
}

std::string DirectMessage(int sn, const std::string& id, const std::string& text) {
  return util::SerializeJson(util::JsonObject{
      {"op", 0},
      {"body",
       util::JsonObject{{"sn", sn},
                        {"type", "message-created"},
                        {"login", util::JsonObject{{"platform", "llonebot"},
                                                   {"user", util::JsonObject{{"id", "10001"}}}}},
                        {"channel", util::JsonObject{{"id", "private:300"}, {"type", 1}}},
                        {"user", util::JsonObject{{"id", "300"}, {"name", "ann"}}},
                        {"message", util::JsonObject{{"id", id}, {"content", text}}}}}});
}

net::HttpResponse ApiAnswer(const net::HttpRequest& r) {
  if (r.url.ends_with("/user.channel.create")) {
    return test::Reply(200, R"({"id":"private:301","type":1})");
  }
  if (r.url.ends_with("/message.create")) return test::Reply(200, R"([{"id":"m-1"}])");
  return test::Reply(404, "method not found");
}

class SatoriAdapterTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (adapter_) {
      EXPECT_TRUE(test::StopAndWait(*adapter_));
      adapter_.reset();
    }
  }

  void StartAdapter(std::string token = kToken) {
    AdapterContext context;
    context.bot_uuid = "bot-1";
    context.config = util::JsonObject{{"platform", "llonebot"},
                                      {"token", token},
                                      {"satori_api_base_url", "http://sdk.test/v1/"},
                                      {"satori_endpoint", "ws://sdk.test/v1/events"}};
    context.executor = io_.executor();
    context.http = http_;
    context.websockets = transport_;
    context.clock = &clock_;
    context.host = &host_;
    adapter_ = MakeSatoriAdapter(std::move(context));
    adapter_->Start();
  }

  std::shared_ptr<ScriptedConnection> Connection(std::size_t i) {
    EXPECT_TRUE(Eventually([&] { return transport_->count() > i; })) << "no connection " << i;
    return transport_->count() > i ? transport_->at(i) : nullptr;
  }

  // Connection i through IDENTIFY and READY.
  std::shared_ptr<ScriptedConnection> Ready(std::size_t i = 0) {
    auto conn = Connection(i);
    EXPECT_TRUE(Eventually([&] { return conn->WrittenOp(3).size() == 1; }));
    conn->Push(kReady);
    EXPECT_TRUE(host_.WaitFor([&] { return host_.connected.size() == i + 1; }));
    return conn;
  }

  // Moves the clock once the adapter has scheduled its next wait.
  void AdvanceWhenWaiting(util::Duration step) {
    EXPECT_TRUE(Eventually([&] { return clock_.pending() >= 1; }));
    clock_.Advance(step);
  }

  test::IoThreads io_;
  util::SimulatedClock clock_;
  std::shared_ptr<test::ScriptedHttp> http_ = std::make_shared<test::ScriptedHttp>(
      [](const net::HttpRequest& r) -> util::Result<net::HttpResponse> { return ApiAnswer(r); });
  std::shared_ptr<test::ScriptedTransport> transport_ = std::make_shared<test::ScriptedTransport>();
  test::RecordingHost host_;
  std::unique_ptr<PlatformAdapter> adapter_;
};

TEST_F(SatoriAdapterTest, IdentifiesActsAsTheConfiguredLoginAndPingsEveryTenSeconds) {
  StartAdapter();
  auto conn = Ready();
  EXPECT_EQ(conn->url(), "ws://sdk.test/v1/events");
  const util::Json identify = conn->WrittenOp(3).at(0);
  EXPECT_EQ(identify.at("body").at("token"), kToken);
  EXPECT_FALSE(identify.at("body").as_object().contains("sn"));
  EXPECT_EQ(host_.Read([&] { return host_.connected; }), std::vector<std::string>{"10001"});
  for (int beat = 1; beat <= 3; ++beat) {
    AdvanceWhenWaiting(10s);
    EXPECT_TRUE(Eventually([&] { return conn->WrittenOp(1).size() == std::size_t(beat); }));
    conn->Push(R"({"op":2,"body":{}})");
  }
  AdvanceWhenWaiting(10s);
  EXPECT_TRUE(Eventually([&] { return conn->WrittenOp(1).size() == 4; }));
  EXPECT_EQ(transport_->count(), 1u);  // answered PINGs keep the connection
}

TEST_F(SatoriAdapterTest, SilenceEndsTheConnectionAndTheNextIdentifyResumesFromTheLastSn) {
  StartAdapter();
  auto conn = Ready();
  conn->Push(DirectMessage(5, "m5", "hello"));
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() == 1; }));
  EXPECT_EQ(host_.Read([&] { return host_.messages[0].chat_id; }), "300");
  for (int beat = 1; beat <= 3; ++beat) {  // no PONG comes back
    AdvanceWhenWaiting(10s);
    EXPECT_TRUE(Eventually([&] { return conn->WrittenOp(1).size() == std::size_t(beat); }));
  }
  AdvanceWhenWaiting(10s);  // 40 s of silence
  EXPECT_TRUE(Eventually([&] { return conn->aborted(); }));
  EXPECT_TRUE(host_.WaitFor([&] {
    return !host_.troubles.empty() && host_.troubles.back().find("no PING") != std::string::npos;
  }));
  AdvanceWhenWaiting(2s);  // the first backoff step, about 1 s
  auto again = Connection(1);
  ASSERT_TRUE(Eventually([&] { return again->WrittenOp(3).size() == 1; }));
  EXPECT_EQ(again->WrittenOp(3).at(0).at("body").at("sn").as_int64(), 5);
  again->Push(kReady);
  again->Push(DirectMessage(5, "m5", "hello"));  // replayed: not handed on twice
  again->Push(DirectMessage(6, "m6", "missed"));
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() == 2; }));
  EXPECT_EQ(host_.Read([&] { return host_.messages[1].message_id; }), "m6");
}

TEST_F(SatoriAdapterTest, ATokenRefusedAtIdentifyIsFinal) {
  StartAdapter("wrong-token");
  auto conn = Connection(0);
  ASSERT_TRUE(Eventually([&] { return conn->WrittenOp(3).size() == 1; }));
  conn->ServerClose(4004, "invalid token");
  ASSERT_TRUE(host_.WaitFor([&] {
    return !host_.troubles.empty() &&
           host_.troubles.back().find("refused the token") != std::string::npos;
  }));
  EXPECT_EQ(host_.Read([&] { return host_.troubles.back(); }).find("wrong-token"),
            std::string::npos);
  clock_.Advance(120s);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(transport_->count(), 1u);
  EXPECT_TRUE(host_.Read([&] { return host_.connected.empty(); }));
}

TEST_F(SatoriAdapterTest, SendsWithTheLoginHeadersAndOpensADirectChannelOnce) {
  StartAdapter();
  // Before READY there is no login to act as.
  domain::OutgoingMessage early;
  early.target_type = domain::TargetType::kGroup;
  early.target_id = "g1";
  domain::MessageElement hi;
  hi.text = "a < b";
  early.chain.push_back(hi);
  auto refused = test::SendAndWait(*adapter_, early);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, util::ErrorCode::kUnavailable);

  auto conn = Ready();
  auto group = test::SendAndWait(*adapter_, early);
  ASSERT_TRUE(group) << group.error().message;
  EXPECT_EQ(group->message_id, "m-1");
  domain::OutgoingMessage person = early;
  person.target_type = domain::TargetType::kPerson;
  person.target_id = "301";
  ASSERT_TRUE(test::SendAndWait(*adapter_, person));
  ASSERT_TRUE(test::SendAndWait(*adapter_, person));
  EXPECT_EQ(http_->RequestsTo("/user.channel.create").size(), 1u);
  const auto creates = http_->RequestsTo("/message.create");
  ASSERT_EQ(creates.size(), 3u);
  const net::HttpRequest& first = creates[0];
  EXPECT_EQ(first.url, "http://sdk.test/v1/message.create");
  EXPECT_EQ(test::HeaderOf(first, "Authorization"), std::string("Bearer ") + kToken);
  EXPECT_EQ(test::HeaderOf(first, "Satori-Platform"), "llonebot");
  EXPECT_EQ(test::HeaderOf(first, "Satori-User-ID"), "10001");
  EXPECT_EQ(first.body, R"({"channel_id":"g1","content":"a &lt; b"})");
  EXPECT_EQ(util::ParseJson(creates[1].body)->at("channel_id"), "private:301");
  // A person whose direct message arrived is answered in that channel without a lookup.
  conn->Push(DirectMessage(1, "m1", "hi"));
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() == 1; }));
  person.target_id = "300";
  ASSERT_TRUE(test::SendAndWait(*adapter_, person));
  EXPECT_EQ(http_->RequestsTo("/user.channel.create").size(), 1u);
  EXPECT_EQ(util::ParseJson(http_->RequestsTo("/message.create").back().body)->at("channel_id"),
            "private:300");
  // A refusal carries the SDK's reason.
  http_->SetScript([](const net::HttpRequest&) -> util::Result<net::HttpResponse> {
    return test::Reply(403, "login not found");
  });
  auto denied = test::SendAndWait(*adapter_, early);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code, util::ErrorCode::kUpstreamAuth);
  EXPECT_NE(denied.error().message.find("login not found"), std::string::npos);
}

TEST_F(SatoriAdapterTest, StopClosesTheSocketWith1000) {
  StartAdapter();
  auto conn = Ready();
  EXPECT_TRUE(test::StopAndWait(*adapter_));
  adapter_.reset();
  EXPECT_EQ(conn->closed_by_client(), 1000);
}

}  // namespace
}  // namespace sb::platforms::satori
