// The Lark adapter's long connection, driven through the ports it is built on: a scripted Open
// API (token, bot info, the endpoint with its ClientConfig), a scripted WebSocket playing Lark's
// frames, and a SimulatedClock for pings and reconnect backoff, so no test sleeps for time to
// pass.
#include "platforms/lark/lark_adapter.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "platforms/lark/lark_frame.hpp"
#include "support/adapter_harness.hpp"
#include "support/scripted_websocket.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::lark {
namespace {

using namespace std::chrono_literals;

bool Eventually(const std::function<bool()>& check) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return check();
}

std::string MessageEvent(std::string_view event_id, std::string_view text) {
  return fmt::format(
      R"({{"schema":"2.0","header":{{"event_id":"{}","event_type":"im.message.receive_v1"}},
      "event":{{"sender":{{"sender_id":{{"open_id":"ou_a"}},"sender_type":"user"}},
      "message":{{"message_id":"om_{}","chat_id":"oc_1","chat_type":"p2p","message_type":"text",
      "content":"{{\"text\":\"{}\"}}"}}}}}})",
      event_id, event_id, text);
}

Frame EventFrame(std::string_view message_id, std::string payload, int sum = 1, int seq = 0) {
  Frame f;
  f.seq_id = 11;
  f.log_id = 22;
  f.service = 4242;
  f.method = kMethodData;
  f.headers = {{"type", "event"},
               {"message_id", std::string(message_id)},
               {"sum", std::to_string(sum)},
               {"seq", std::to_string(seq)},
               {"trace_id", "tr"}};
  f.payload = std::move(payload);
  return f;
}

class LarkLongConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http_ = std::make_shared<test::ScriptedHttp>(
        [this](const net::HttpRequest& r) { return Answer(r); });
    ws_ = std::make_shared<test::ScriptedTransport>();
    auto context = test::HttpAdapterContext(util::JsonObject{{"app_id", "cli_1"},
                                                             {"app_secret", "secret-1"},
                                                             {"enable-webhook", false},
                                                             {"api_base_url", "http://lark.test"}},
                                            io_, http_, clock_, host_, "bot-1");
    context.websockets = ws_;
    adapter_ = MakeLarkAdapter(std::move(context));
    adapter_->Start();
    ASSERT_TRUE(Eventually([&] { return ws_->count() == 1; }));
    ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  }

  void TearDown() override {
    if (adapter_) {
      EXPECT_TRUE(test::StopAndWait(*adapter_));
    }
  }

  util::Result<net::HttpResponse> Answer(const net::HttpRequest& r) {
    if (r.url.ends_with("/tenant_access_token/internal")) {
      return test::Reply(200, R"({"code":0,"msg":"ok","tenant_access_token":"t-1","expire":7200})");
    }
    if (r.url.ends_with("/bot/v3/info")) {
      return test::Reply(200, R"({"code":0,"msg":"ok","bot":{"app_name":"B","open_id":"ou_bot"}})");
    }
    if (r.url.ends_with("/callback/ws/endpoint")) {
      const int n = ++endpoints_;
      return test::Reply(
          200,
          fmt::format(R"({{"code":0,"msg":"ok","data":{{"URL":"ws://ws.test/ws/v2?device_id=d{}&)"
                      R"(service_id=4242&ticket=t{}","ClientConfig":{{"PingInterval":30}}}}}})",
                      n, n));
    }
    if (r.url.find("/im/v1/messages") != std::string::npos) {
      return test::Reply(200, R"({"code":0,"msg":"success","data":{"message_id":"om_sent"}})",
                         {{"content-type", "application/json"}});
    }
    return test::Reply(404, R"({"code":404,"msg":"not found"})");
  }

  std::vector<Frame> Frames(std::size_t conn = 0) {
    std::vector<Frame> out;
    for (const auto& m : ws_->at(conn)->Messages()) {
      EXPECT_TRUE(m.binary);
      auto f = DecodeFrame(m.data);
      EXPECT_TRUE(f) << (f ? "" : f.error().message);
      if (f) out.push_back(std::move(*f));
    }
    return out;
  }
  std::size_t Count(std::string_view type, std::size_t conn = 0) {
    std::size_t n = 0;
    for (const auto& f : Frames(conn)) n += f.Header("type") == type;
    return n;
  }
  // The adapter's next wait on the clock has begun (it starts a moment after what precedes it).
  void WaitForTimer() {
    ASSERT_TRUE(Eventually([&] { return clock_.pending() >= 1; }));
  }
  void Advance(util::Duration step) {
    clock_.Advance(step);
    std::this_thread::sleep_for(20ms);
  }

  test::IoThreads io_;
  util::SimulatedClock clock_;
  test::RecordingHost host_;
  std::shared_ptr<test::ScriptedHttp> http_;
  std::shared_ptr<test::ScriptedTransport> ws_;
  std::unique_ptr<PlatformAdapter> adapter_;
  std::atomic<int> endpoints_{0};
};

TEST_F(LarkLongConnectionTest, ConnectsToTheEndpointsUrlAndPingsOnItsInterval) {
  EXPECT_EQ(ws_->at(0)->url(), "ws://ws.test/ws/v2?device_id=d1&service_id=4242&ticket=t1");
  auto endpoint = http_->RequestsTo("/callback/ws/endpoint");
  ASSERT_EQ(endpoint.size(), 1u);
  EXPECT_EQ(util::ParseJson(endpoint[0].body)->as_object().at("AppSecret"), "secret-1");
  EXPECT_EQ(host_.Read([&] { return host_.connected; }), std::vector<std::string>{"ou_bot"});
  ASSERT_TRUE(Eventually([&] { return Count("ping") == 1; }));
  const Frame ping = Frames()[0];
  EXPECT_EQ(ping.service, 4242);
  EXPECT_EQ(ping.method, kMethodControl);
  WaitForTimer();
  Advance(29s);
  EXPECT_EQ(Count("ping"), 1u);
  Advance(1s);
  ASSERT_TRUE(Eventually([&] { return Count("ping") == 2; }));
  // A pong may carry a new ClientConfig.
  Frame pong = PingFrame(4242);
  pong.headers = {{"type", "pong"}};
  pong.payload = R"({"PingInterval":5})";
  ws_->at(0)->Push(EncodeFrame(pong), true);
  std::this_thread::sleep_for(50ms);
  WaitForTimer();
  Advance(30s);  // the wait already running ends; the next one is 5 s
  ASSERT_TRUE(Eventually([&] { return Count("ping") == 3; }));
  WaitForTimer();
  Advance(5s);
  ASSERT_TRUE(Eventually([&] { return Count("ping") == 4; }));
}

TEST_F(LarkLongConnectionTest, EventsInPartsAreJoinedAcknowledgedAndHandledOnce) {
  const std::string payload = MessageEvent("e1", "hello over ws");
  const std::size_t half = payload.size() / 2;
  ws_->at(0)->Push(EncodeFrame(EventFrame("m1", payload.substr(half), 2, 1)), true);
  ws_->at(0)->Push(EncodeFrame(EventFrame("m1", payload.substr(0, half), 2, 0)), true);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  EXPECT_EQ(host_.Read([&] { return host_.messages[0].chain.back().text; }), "hello over ws");
  ASSERT_TRUE(Eventually([&] { return Count("event") == 1; }));
  Frame ack;
  for (const auto& f : Frames()) {
    if (f.Header("type") == "event") ack = f;
  }
  EXPECT_EQ(ack.method, kMethodData);
  EXPECT_EQ(ack.seq_id, 11u);
  EXPECT_EQ(ack.Header("message_id"), "m1");
  EXPECT_EQ(ack.Header("seq"), "0");
  EXPECT_EQ(ack.payload, R"({"code":200})");
  EXPECT_EQ(ack.Header("biz_rt"), "0");
  // Lark redelivers an event it saw no answer for: answered again, handled once.
  ws_->at(0)->Push(EncodeFrame(EventFrame("m2", payload)), true);
  ASSERT_TRUE(Eventually([&] { return Count("event") == 2; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(host_.Read([&] { return host_.messages.size(); }), 1u);
}

TEST_F(LarkLongConnectionTest, MalformedFramesAreSkippedAndUnreadableEventsAnswered500) {
  ws_->at(0)->Push("{\"not\":\"binary\"}", false);
  ws_->at(0)->Push(std::string("\x08", 1), true);
  ws_->at(0)->Push(EncodeFrame(EventFrame("m3", "{broken")), true);
  ASSERT_TRUE(Eventually([&] { return Count("event") == 1; }));
  for (const auto& f : Frames()) {
    if (f.Header("type") == "event") {
      EXPECT_EQ(f.payload, R"({"code":500})");
    }
  }
  const auto logs = host_.Read([&] { return host_.logs; });
  EXPECT_NE(fmt::format("{}", fmt::join(logs, "\n")).find("malformed long-connection frame"),
            std::string::npos);
  ws_->at(0)->Push(EncodeFrame(EventFrame("m4", MessageEvent("e4", "still here"))), true);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  EXPECT_EQ(ws_->count(), 1u);
}

TEST_F(LarkLongConnectionTest, ADroppedConnectionIsReopenedWithAFreshEndpointAfterBackoff) {
  ASSERT_TRUE(Eventually([&] { return Count("ping") == 1; }));
  WaitForTimer();
  ws_->at(0)->ServerClose(1006);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  const auto troubles = host_.Read([&] { return host_.troubles; });
  EXPECT_NE(troubles[0].find("long connection was lost"), std::string::npos) << troubles[0];
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ws_->count(), 1u);  // the backoff waits on the clock
  // The first step is 1 s, +-20 %; the wait may begin a moment after the trouble is reported.
  ASSERT_TRUE(Eventually([&] {
    Advance(100ms);
    return ws_->count() == 2;
  }));
  EXPECT_EQ(ws_->at(1)->url(), "ws://ws.test/ws/v2?device_id=d2&service_id=4242&ticket=t2");
  EXPECT_EQ(endpoints_.load(), 2);
  ASSERT_TRUE(Eventually([&] { return Count("ping", 1) == 1; }));
  ws_->at(1)->Push(EncodeFrame(EventFrame("m5", MessageEvent("e5", "after"))), true);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
}

TEST_F(LarkLongConnectionTest, TheTokenIsKeptThenRenewedInItsLastHalfHour) {
  domain::OutgoingMessage m;
  m.target_id = "ou_a";
  m.chain.push_back(domain::MessageElement{});
  m.chain.back().text = "hi";
  const auto tokens = [&] { return http_->RequestsTo("/tenant_access_token/internal").size(); };
  ASSERT_EQ(tokens(), 1u);
  ASSERT_TRUE(test::SendAndWait(*adapter_, m));
  EXPECT_EQ(tokens(), 1u);
  Advance(89min);  // 7200 s tokens are kept for 90 minutes
  ASSERT_TRUE(test::SendAndWait(*adapter_, m));
  EXPECT_EQ(tokens(), 1u);
  Advance(1min);
  ASSERT_TRUE(test::SendAndWait(*adapter_, m));
  EXPECT_EQ(tokens(), 2u);
  auto sends = http_->RequestsTo("/open-apis/im/v1/messages?receive_id_type=open_id");
  ASSERT_EQ(sends.size(), 3u);
  EXPECT_EQ(test::HeaderOf(sends[2], "Authorization"), "Bearer t-1");
}

TEST_F(LarkLongConnectionTest, StopClosesTheConnectionWith1000) {
  auto conn = ws_->at(0);
  EXPECT_TRUE(test::StopAndWait(*adapter_));
  adapter_.reset();
  EXPECT_EQ(conn->closed_by_client(), 1000);
}

}  // namespace
}  // namespace sb::platforms::lark
