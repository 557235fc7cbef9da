// The QQ official adapter in webhook mode against a scripted token host and API: the op 13
// answer, signature checks before anything else, the op 12 acknowledgement and redeliveries,
// passive replies with a growing msg_seq, and an expired token fetched again with the call
// repeated once.
#include "platforms/qqofficial/qqofficial_adapter.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "platforms/common/ed25519.hpp"
#include "support/adapter_harness.hpp"
#include "util/clock.hpp"
#include "util/json.hpp"

namespace sb::platforms::qqofficial {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kAppId = "102000001";
constexpr std::string_view kSecret = "DG5g3B4j9X2KOErG";
constexpr std::string_view kUser = "E4F4AEA33253A2797FB897C50B81D7ED";

class QqWebhookAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http_ = std::make_shared<test::ScriptedHttp>(
        [this](const net::HttpRequest& r) { return Answer(r); });
    adapter_ = MakeQqOfficialAdapter(
        test::HttpAdapterContext(util::JsonObject{{"appid", kAppId},
                                                  {"secret", kSecret},
                                                  {"enable-webhook", true},
                                                  {"api_base_url", "http://qq.test"}},
                                 io_, http_, clock_, host_, "bot-1"));
    adapter_->Start();
    ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  }

  void TearDown() override {
    EXPECT_TRUE(test::StopAndWait(*adapter_));
    host_.stopped = true;
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(host_.after_stop_calls, 0);
  }

  util::Result<net::HttpResponse> Answer(const net::HttpRequest& r) {
    if (r.url == "http://qq.test/app/getAppAccessToken") {
      const int n = ++tokens_;
      return test::Reply(200, fmt::format(R"({{"access_token":"tok-{}","expires_in":"7200"}})", n));
    }
    if (expire_next_.exchange(false)) {
      return test::Reply(401, R"({"code":11244,"message":"token not exist or expire"})");
    }
    return test::Reply(200, R"({"id":"sent-1","timestamp":"2025-01-01T00:00:00+08:00"})");
  }

  static WebhookCall Signed(std::string body, std::string_view secret = kSecret) {
    WebhookCall call;
    call.method = "POST";
    const std::string ts = "1725442341";
    call.headers = {{"x-signature-timestamp", ts},
                    {"x-signature-ed25519", common::QqBotSign(secret, ts + body).value()}};
    call.body = std::move(body);
    return call;
  }

  static std::string C2c(std::string_view event_id, std::string_view msg_id,
                         std::string_view text = "hello") {
    return fmt::format(
        R"({{"op":0,"id":"{}","t":"C2C_MESSAGE_CREATE","d":{{"id":"{}","content":"{}",)"
        R"("timestamp":"2025-01-01T00:00:00+08:00","author":{{"user_openid":"{}"}}}}}})",
        event_id, msg_id, text, kUser);
  }

  std::vector<net::HttpRequest> Sends() { return http_->RequestsTo("/messages"); }

  test::IoThreads io_;
  util::SystemClock clock_;
  test::RecordingHost host_;
  std::shared_ptr<test::ScriptedHttp> http_;
  std::unique_ptr<PlatformAdapter> adapter_;
  std::atomic<int> tokens_{0};
  std::atomic<bool> expire_next_{false};
};

TEST_F(QqWebhookAdapterTest, SignsInWithTheAppIdAsItsAccount) {
  EXPECT_EQ(host_.Read([&] { return host_.connected; }), std::vector<std::string>{"102000001"});
  auto token = http_->RequestsTo("/app/getAppAccessToken");
  ASSERT_EQ(token.size(), 1u);
  auto body = *util::ParseJson(token[0].body);
  EXPECT_EQ(body.at("appId").as_string(), kAppId);
}

TEST_F(QqWebhookAdapterTest, AnswersTheDocsValidationExample) {
  WebhookCall call;
  call.method = "POST";
  call.body = R"({"op":13,"d":{"plain_token":"Arq0D5A61EgUu4OxUvOp","event_ts":"1725442341"}})";
  auto answer = test::CallWebhook(*adapter_, call);
  ASSERT_EQ(answer.status, 200) << answer.body;
  auto body = *util::ParseJson(answer.body);
  EXPECT_EQ(body.at("plain_token").as_string(), "Arq0D5A61EgUu4OxUvOp");
  EXPECT_EQ(body.at("signature").as_string(),
            "87befc99c42c651b3aac0278e71ada338433ae26fcb24307bdc5ad38c1adc2d01bcfcadc0842edac85e852"
            "05028a1132afe09280305f13aa6909ffc2d652c706");
}

TEST_F(QqWebhookAdapterTest, ForgedAndUnsignedCallsAreRefusedBeforeParsing) {
  auto forged = test::CallWebhook(*adapter_, Signed(C2c("e1", "m1"), "another-secret"));
  EXPECT_EQ(forged.status, 401);
  WebhookCall unsigned_call;
  unsigned_call.method = "POST";
  unsigned_call.body = C2c("e2", "m2");
  EXPECT_EQ(test::CallWebhook(*adapter_, unsigned_call).status, 401);
  // A forged signature on garbage is 401, not 400: nothing is parsed first.
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed("{garbage", "another-secret")).status, 401);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed("{garbage")).status, 400);
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(host_.Read([&] { return host_.messages.empty(); }));
}

TEST_F(QqWebhookAdapterTest, DispatchesAreAcknowledgedOnceAndHandedOn) {
  for (int i = 0; i < 2; ++i) {
    auto answer = test::CallWebhook(*adapter_, Signed(C2c("C2C_MESSAGE_CREATE:e1", "m1")));
    EXPECT_EQ(answer.status, 200);
    EXPECT_EQ(answer.body, R"({"op":12,"d":0})");
  }
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  std::this_thread::sleep_for(100ms);
  auto messages = host_.Read([&] { return host_.messages; });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].chat_id, kUser);
  EXPECT_EQ(messages[0].message_id, "m1");
}

TEST_F(QqWebhookAdapterTest, RepliesCarryTheMsgIdAndAGrowingMsgSeq) {
  test::CallWebhook(*adapter_, Signed(C2c("e1", "m1")));
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  domain::OutgoingMessage out;
  out.target_type = domain::TargetType::kPerson;
  out.target_id = std::string(kUser);
  domain::MessageElement text;
  text.text = "first";
  out.chain.push_back(text);
  ASSERT_TRUE(test::SendAndWait(*adapter_, out, "m1"));
  out.chain[0].text = "second";
  auto receipt = test::SendAndWait(*adapter_, out, "m1");
  ASSERT_TRUE(receipt) << receipt.error().message;
  EXPECT_EQ(receipt->message_id, "sent-1");
  auto sends = Sends();
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(sends[0].url, fmt::format("http://qq.test/v2/users/{}/messages", kUser));
  auto first = *util::ParseJson(sends[0].body);
  auto second = *util::ParseJson(sends[1].body);
  EXPECT_EQ(first.at("msg_id").as_string(), "m1");
  EXPECT_EQ(first.at("msg_seq").as_int64(), 1);
  EXPECT_EQ(second.at("msg_seq").as_int64(), 2);
  EXPECT_EQ(test::HeaderOf(sends[0], "Authorization"), "QQBot tok-1");
}

TEST_F(QqWebhookAdapterTest, AnExpiredTokenIsFetchedAgainAndTheCallRepeatedOnce) {
  test::CallWebhook(*adapter_, Signed(C2c("e1", "m1")));
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  expire_next_ = true;
  domain::OutgoingMessage out;
  out.target_id = std::string(kUser);
  domain::MessageElement text;
  text.text = "after expiry";
  out.chain.push_back(text);
  auto receipt = test::SendAndWait(*adapter_, out, "m1");
  ASSERT_TRUE(receipt) << receipt.error().message;
  auto sends = Sends();
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(test::HeaderOf(sends[0], "Authorization"), "QQBot tok-1");
  EXPECT_EQ(test::HeaderOf(sends[1], "Authorization"), "QQBot tok-2");
  EXPECT_EQ(tokens_, 2);
}

}  // namespace
}  // namespace sb::platforms::qqofficial
