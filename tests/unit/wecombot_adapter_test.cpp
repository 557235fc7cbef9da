// The WeCom AI bot adapter driven through its ports: a scripted WebSocketTransport playing WeCom's
// long connection (subscription acks, pings, callbacks, reply acks) on a SimulatedClock, so the
// 30 s pings, the two-missed-pings rule, the 10 s subscription wait, the 5 s reply acks and the
// backoff run without sleeping; and the webhook mode's calls built with the WXBizMsgCrypt helpers.
#include "platforms/wecombot/wecombot_adapter.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "platforms/common/wechat_crypto.hpp"
#include "support/adapter_harness.hpp"
#include "support/eventually.hpp"
#include "support/scripted_websocket.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::wecombot {
namespace {

using namespace std::chrono_literals;
using test::Eventually;
using util::ErrorCode;

constexpr const char* kBotId = "aibTestBot";
constexpr const char* kSecret = "wecombot-test-secret-42";
constexpr const char* kToken = "wecombottoken";
constexpr const char* kAesKey = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";

util::JsonObject Frame(const std::string& text) { return util::ParseJson(text)->as_object(); }

std::string ReqId(const util::JsonObject& frame) {
  return std::string(frame.at("headers").at("req_id").as_string());
}

std::string Ack(const std::string& req_id, int errcode = 0, std::string errmsg = "ok") {
  return fmt::format(R"({{"headers":{{"req_id":"{}"}},"errcode":{},"errmsg":"{}"}})", req_id,
                     errcode, errmsg);
}

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

class WeComBotSocketTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (adapter_) {
      EXPECT_TRUE(test::StopAndWait(*adapter_));
    }
  }

  void Start(std::string secret = kSecret) {
    AdapterContext context;
    context.bot_uuid = "bot-1";
    context.config = util::JsonObject{{"BotId", kBotId},
                                      {"Secret", secret},
                                      {"enable-webhook", false},
                                      {"ws_url", "ws://wecom.test"}};
    context.executor = io_.executor();
    context.websockets = transport_;
    context.clock = &clock_;
    context.host = &host_;
    adapter_ = MakeWeComBotAdapter(std::move(context));
    adapter_->Start();
  }

  // The frames connection `conn` wrote with `cmd`, waiting until there are at least `n`.
  std::vector<util::JsonObject> Frames(test::ScriptedConnection& conn, std::string_view cmd,
                                       std::size_t n = 1) {
    std::vector<util::JsonObject> out;
    Eventually([&] {
      out.clear();
      for (const auto& w : conn.Written()) {
        auto f = Frame(w);
        if (f.at("cmd").as_string() == cmd) out.push_back(std::move(f));
      }
      return out.size() >= n;
    });
    return out;
  }

  // Connection i, through an acknowledged subscription.
  std::shared_ptr<test::ScriptedConnection> Subscribed(std::size_t i = 0) {
    auto conn = transport_->WaitFor(i);
    EXPECT_TRUE(conn);
    if (!conn) return nullptr;
    auto subscribe = Frames(*conn, "aibot_subscribe");
    EXPECT_EQ(subscribe.size(), 1u);
    EXPECT_EQ(util::Json(subscribe.at(0).at("body")),
              util::Json(util::JsonObject{{"bot_id", kBotId}, {"secret", kSecret}}));
    const std::size_t before = host_.Read([&] { return host_.connected.size(); });
    conn->Push(Ack(ReqId(subscribe.at(0))));
    EXPECT_TRUE(host_.WaitFor([&] { return host_.connected.size() > before; }));
    return conn;
  }

  // Moves the clock once the adapter has scheduled `timers` waits.
  void Advance(util::Duration step, std::size_t timers = 1) {
    EXPECT_TRUE(Eventually([&] { return clock_.pending() >= timers; }));
    clock_.Advance(step);
  }

  // The I/O threads first, so that they outlive the clock: its pending timers hold executors.
  test::IoThreads io_;
  util::SimulatedClock clock_;
  std::shared_ptr<test::ScriptedTransport> transport_ = std::make_shared<test::ScriptedTransport>();
  test::RecordingHost host_;
  std::unique_ptr<PlatformAdapter> adapter_;
};

TEST_F(WeComBotSocketTest, PingsEvery30sAndTwoUnansweredEndTheLink) {
  Start();
  auto conn = Subscribed();
  ASSERT_TRUE(conn);
  EXPECT_EQ(conn->url(), "ws://wecom.test");
  EXPECT_EQ(host_.Read([&] { return host_.connected; }), std::vector<std::string>{kBotId});
  Advance(30s);
  auto pings = Frames(*conn, "ping");
  ASSERT_EQ(pings.size(), 1u);
  EXPECT_TRUE(ReqId(pings[0]).starts_with("ping_"));
  conn->Push(Ack(ReqId(pings[0])));
  // The read loop takes the ack on another thread; nothing shows when it has.
  std::this_thread::sleep_for(100ms);
  Advance(30s);  // acked: the next ping goes out
  ASSERT_EQ(Frames(*conn, "ping", 2).size(), 2u);
  Advance(30s);  // the second went unanswered; a third still goes
  ASSERT_EQ(Frames(*conn, "ping", 3).size(), 3u);
  EXPECT_FALSE(conn->aborted());
  Advance(30s);  // two in a row unanswered: dead link
  EXPECT_TRUE(Eventually([&] { return conn->aborted(); }));
  EXPECT_TRUE(host_.WaitFor([&] {
    return !host_.troubles.empty() &&
           host_.troubles.back().find("did not answer 2 pings") != std::string::npos;
  }));
  Advance(2s);  // the first backoff step, 1 s +-20 %
  ASSERT_TRUE(Subscribed(1));
}

TEST_F(WeComBotSocketTest, ARefusedSubscriptionIsAnErrorWithoutTheSecretAndNotRetried) {
  Start("wrong-secret-value-77");
  auto conn = transport_->WaitFor(0);
  ASSERT_TRUE(conn);
  auto subscribe = Frames(*conn, "aibot_subscribe");
  ASSERT_EQ(subscribe.size(), 1u);
  conn->Push(Ack(ReqId(subscribe[0]), 40058, "invalid secret wrong-secret-value-77"));
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  const std::string why = host_.Read([&] { return host_.troubles.back(); });
  EXPECT_NE(why.find("aibot_subscribe"), std::string::npos) << why;
  EXPECT_NE(why.find("40058"), std::string::npos) << why;
  EXPECT_EQ(why.find("wrong-secret-value-77"), std::string::npos) << why;
  clock_.Advance(10min);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(transport_->count(), 1u);
  EXPECT_TRUE(host_.Read([&] { return host_.connected.empty(); }));
}

TEST_F(WeComBotSocketTest, NoSubscriptionAckWithin10sReconnects) {
  Start();
  auto conn = transport_->WaitFor(0);
  ASSERT_TRUE(conn);
  Frames(*conn, "aibot_subscribe");
  Advance(10s);
  EXPECT_TRUE(Eventually([&] { return conn->aborted(); }));
  Advance(2s);
  ASSERT_TRUE(Subscribed(1));
}

TEST_F(WeComBotSocketTest, RepliesGoOnTheCallbacksReqIdAndLaterOnesAsNewMessages) {
  Start();
  auto conn = Subscribed();
  ASSERT_TRUE(conn);
  conn->Push(R"({"cmd":"aibot_msg_callback","headers":{"req_id":"REQ-1"},"body":{
    "msgid":"m1","aibotid":"aibTestBot","chattype":"single","from":{"userid":"u1"},
    "msgtype":"text","text":{"content":"hi"}}})");
  // The same msgid again (a redelivery) is not handed on twice.
  conn->Push(R"({"cmd":"aibot_msg_callback","headers":{"req_id":"REQ-2"},"body":{
    "msgid":"m1","aibotid":"aibTestBot","chattype":"single","from":{"userid":"u1"},
    "msgtype":"text","text":{"content":"hi"}}})");
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() == 1; }));
  EXPECT_EQ(host_.Read([&] { return host_.messages[0].chat_id; }), "u1");

  auto first = std::async(std::launch::async, [&] {
    return test::SendAndWait(*adapter_, Text(domain::TargetType::kPerson, "u1", "answer"), "m1");
  });
  auto respond = Frames(*conn, "aibot_respond_msg");
  ASSERT_EQ(respond.size(), 1u);
  EXPECT_EQ(ReqId(respond[0]), "REQ-1");
  const auto& stream = respond[0].at("body").at("stream").as_object();
  EXPECT_EQ(stream.at("content").as_string(), "answer");
  EXPECT_TRUE(stream.at("finish").as_bool());
  conn->Push(Ack("REQ-1"));
  auto receipt = first.get();
  ASSERT_TRUE(receipt) << receipt.error().message;
  EXPECT_EQ(*receipt->message_id, std::string(stream.at("id").as_string()));

  // The stream is finished: a second reply is a proactive message to the same chat, and one
  // WeCom never acknowledges fails after 5 s.
  auto second = std::async(std::launch::async, [&] {
    return test::SendAndWait(*adapter_, Text(domain::TargetType::kPerson, "u1", "more"), "m1");
  });
  auto sends = Frames(*conn, "aibot_send_msg");
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(util::Json(sends[0].at("body")),
            util::Json(util::JsonObject{{"chatid", "u1"},
                                        {"msgtype", "markdown"},
                                        {"markdown", util::JsonObject{{"content", "more"}}}}));
  Advance(5s, 2);  // the ack wait, besides the next ping
  auto timed_out = second.get();
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().code, ErrorCode::kUpstreamTimeout);
}

TEST_F(WeComBotSocketTest, ARefusedReplyFailsWithItsErrcodeAndStopCloses) {
  Start();
  auto conn = Subscribed();
  ASSERT_TRUE(conn);
  auto sent = std::async(std::launch::async, [&] {
    return test::SendAndWait(*adapter_, Text(domain::TargetType::kGroup, "wrkG", "hello"));
  });
  auto sends = Frames(*conn, "aibot_send_msg");
  ASSERT_EQ(sends.size(), 1u);
  conn->Push(Ack(ReqId(sends[0]), 40058, "chatid not found"));
  auto refused = sent.get();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(refused.error().message.find("40058"), std::string::npos);
  ASSERT_TRUE(test::StopAndWait(*adapter_));
  adapter_.reset();
  EXPECT_EQ(conn->closed_by_client(), 1000);
}

// ---- webhook mode ----

class WeComBotWebhookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AdapterContext context;
    context.bot_uuid = "bot-2";
    context.config = util::JsonObject{{"BotId", kBotId},
                                      {"enable-webhook", true},
                                      {"Token", kToken},
                                      {"EncodingAESKey", kAesKey},
                                      {"PullPollTimeoutMs", 0}};
    context.executor = io_.executor();
    context.clock = &clock_;
    context.host = &host_;
    adapter_ = MakeWeComBotAdapter(std::move(context));
    adapter_->Start();
    key_ = *common::WeChatAesKey(kAesKey);
  }
  void TearDown() override { EXPECT_TRUE(test::StopAndWait(*adapter_)); }

  WebhookCall Post(const std::string& plaintext, std::string token = kToken) {
    auto encrypt = *common::WeChatEncrypt(key_, plaintext, "", std::string(16, 'x'));
    WebhookCall call;
    call.method = "POST";
    call.query = {{"msg_signature", common::WeChatSignature(token, "1700000000", "n1", encrypt)},
                  {"timestamp", "1700000000"},
                  {"nonce", "n1"}};
    call.body = util::SerializeJson(util::JsonObject{{"encrypt", encrypt}});
    return call;
  }

  // The decrypted JSON of an answer, after checking its signature.
  util::JsonObject Open(const WebhookAnswer& answer) {
    EXPECT_EQ(answer.status, 200) << answer.body;
    auto env = util::ParseJson(answer.body)->as_object();
    const std::string encrypt(env.at("encrypt").as_string());
    EXPECT_TRUE(common::WeChatVerifySignature(kToken, std::string(env.at("timestamp").as_string()),
                                              "n1", encrypt,
                                              std::string(env.at("msgsignature").as_string())));
    return util::ParseJson(*common::WeChatDecrypt(key_, encrypt, ""))->as_object();
  }

  // The I/O threads first, so that they outlive the clock: its pending timers hold executors.
  test::IoThreads io_;
  util::SimulatedClock clock_;
  test::RecordingHost host_;
  std::unique_ptr<PlatformAdapter> adapter_;
  std::string key_;
};

TEST_F(WeComBotWebhookTest, AMessageOpensAStreamThatSendFillsAndARefreshFinishes) {
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  auto first = Open(test::CallWebhook(*adapter_, Post(R"({"msgid":"w1","aibotid":"aibTestBot",
    "chattype":"group","chatid":"wrkG","from":{"userid":"u2"},"msgtype":"text",
    "text":{"content":"@bot hi"}})")));
  const std::string sid(first.at("stream").at("id").as_string());
  EXPECT_FALSE(first.at("stream").at("finish").as_bool());
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() == 1; }));
  EXPECT_EQ(host_.Read([&] { return host_.messages[0].chat_id; }), "wrkG");

  const std::string refresh = fmt::format(
      R"({{"msgid":"r1","chattype":"group","from":{{"userid":"u2"}},"msgtype":"stream",
         "stream":{{"id":"{}"}}}})",
      sid);
  auto empty = Open(test::CallWebhook(*adapter_, Post(refresh)));
  EXPECT_EQ(empty.at("stream").at("content").as_string(), "");
  EXPECT_FALSE(empty.at("stream").at("finish").as_bool());

  auto sent = std::async(std::launch::async, [&] {
    return test::SendAndWait(*adapter_, Text(domain::TargetType::kGroup, "wrkG", "the answer"),
                             "w1");
  });
  EXPECT_EQ(sent.wait_for(200ms), std::future_status::timeout);  // not fetched yet
  auto done = Open(test::CallWebhook(*adapter_, Post(refresh)));
  EXPECT_EQ(done.at("stream").at("content").as_string(), "the answer");
  EXPECT_TRUE(done.at("stream").at("finish").as_bool());
  auto receipt = sent.get();
  ASSERT_TRUE(receipt) << receipt.error().message;
  EXPECT_EQ(*receipt->message_id, sid);

  auto late = test::SendAndWait(*adapter_, Text(domain::TargetType::kGroup, "wrkG", "x"), "w1");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ErrorCode::kConflict);
  auto proactive = test::SendAndWait(*adapter_, Text(domain::TargetType::kGroup, "wrkG", "x"));
  ASSERT_FALSE(proactive);
  EXPECT_EQ(proactive.error().code, ErrorCode::kInvalidArgument);
}

// The first answer sets the reply's feedback id; a feedback_event naming it reaches the host
// (answered with an empty object), a malformed one is logged and goes nowhere.
TEST_F(WeComBotWebhookTest, RepliesCarryAFeedbackIdAndFeedbackEventsReachTheHost) {
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  auto first = Open(test::CallWebhook(*adapter_, Post(R"({"msgid":"fb1","aibotid":"aibTestBot",
    "chattype":"single","from":{"userid":"u3"},"msgtype":"text","text":{"content":"hi"}})")));
  const std::string sid(first.at("stream").at("id").as_string());
  const std::string fid(first.at("stream").at("feedback").at("id").as_string());
  EXPECT_EQ(fid, sid + "|fb1");

  auto answer = Open(
      test::CallWebhook(*adapter_, Post(R"({"msgid":"e1","aibotid":"aibTestBot","chattype":"single",
        "from":{"userid":"u3"},"msgtype":"event","event":{"eventtype":"feedback_event",
        "feedback_event":{"id":")" + fid +
                                        R"(","type":2,"content":"meh",
        "inaccurate_reason_list":[3]}}})")));
  EXPECT_TRUE(answer.empty());
  ASSERT_TRUE(host_.WaitFor([&] { return host_.feedback.size() == 1; }));
  auto f = host_.Read([&] { return host_.feedback[0]; });
  EXPECT_EQ(f.type, domain::FeedbackType::kDislike);
  EXPECT_EQ((std::vector<std::string>{f.user_id, f.chat_id, f.message_id, f.stream_id, f.content}),
            (std::vector<std::string>{"u3", "u3", "fb1", sid, "meh"}));

  auto bad = Open(test::CallWebhook(*adapter_, Post(R"({"msgtype":"event","from":{"userid":"u3"},
    "event":{"eventtype":"feedback_event","feedback_event":{"id":"x","type":0}}})")));
  EXPECT_TRUE(bad.empty());
  ASSERT_TRUE(host_.WaitFor([&] {
    for (const auto& l : host_.logs) {
      if (l.find("malformed feedback_event") != std::string::npos) return true;
    }
    return false;
  }));
  EXPECT_EQ(host_.Read([&] { return host_.feedback.size(); }), 1u);
}

TEST_F(WeComBotWebhookTest, ForgedAndMalformedCallsAreRefusedBeforeAnyWork) {
  auto forged = test::CallWebhook(*adapter_, Post(R"({"msgid":"f"})", "not-the-token"));
  EXPECT_EQ(forged.status, 401);
  WebhookCall unsigned_call = Post(R"({"msgid":"f"})");
  unsigned_call.query.clear();
  EXPECT_EQ(test::CallWebhook(*adapter_, unsigned_call).status, 401);
  WebhookCall not_json = Post(R"({"msgid":"f"})");
  not_json.body = "{oops";
  EXPECT_EQ(test::CallWebhook(*adapter_, not_json).status, 400);
  EXPECT_EQ(test::CallWebhook(*adapter_, Post(R"({"msgtype":"text"})")).status, 400);
  WebhookCall big = Post(R"({"msgid":"f"})");
  big.body.assign(2 * 1024 * 1024, ' ');
  EXPECT_EQ(test::CallWebhook(*adapter_, big).status, 413);
  WebhookCall put = Post("{}");
  put.method = "PUT";
  EXPECT_EQ(test::CallWebhook(*adapter_, put).status, 405);
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(host_.Read([&] { return host_.messages.empty(); }));
  for (const auto& line : host_.Read([&] { return host_.logs; })) {
    EXPECT_EQ(line.find(kToken), std::string::npos) << line;
    EXPECT_EQ(line.find(kAesKey), std::string::npos) << line;
  }
}

TEST_F(WeComBotWebhookTest, UrlVerificationAnswersThePlaintext) {
  auto echostr = *common::WeChatEncrypt(key_, "echo-123", "", std::string(16, 'e'));
  WebhookCall call;
  call.method = "GET";
  call.query = {{"msg_signature", common::WeChatSignature(kToken, "1", "n", echostr)},
                {"timestamp", "1"},
                {"nonce", "n"},
                {"echostr", echostr}};
  auto answer = test::CallWebhook(*adapter_, call);
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "echo-123");
  call.query[0].second = common::WeChatSignature("other", "1", "n", echostr);
  EXPECT_EQ(test::CallWebhook(*adapter_, call).status, 401);
}

}  // namespace
}  // namespace sb::platforms::wecombot
