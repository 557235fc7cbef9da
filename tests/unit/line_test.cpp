// The LINE adapter: its codec (the signature with line-bot-sdk's example, webhook events as the
// Messaging API reference and line-bot-sdk's recorded payloads show them, message objects out)
// as pure functions, and the adapter's webhook, reply-then-push and media paths against a
// scripted Messaging API.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "platforms/line/line_adapter.hpp"
#include "platforms/line/line_codec.hpp"
#include "support/adapter_harness.hpp"
#include "util/clock.hpp"
#include "util/json.hpp"

namespace sb::platforms::line {
namespace {

using domain::ElementType;
using namespace std::chrono_literals;

util::Json Parse(std::string_view text) { return *util::ParseJson(text); }

constexpr std::string_view kBot = "U0000000000000000000000000000b0t";

TEST(LineSignature, MatchesTheSdkExample) {
  EXPECT_EQ(Sign("channel_secret", "bodybodybodybody"),
            "/gg9a+LvFevTH1sd7XCQycD7tsWclCsInj7MhBHxN7k=");
  EXPECT_TRUE(
      Verify("channel_secret", "bodybodybodybody", "/gg9a+LvFevTH1sd7XCQycD7tsWclCsInj7MhBHxN7k="));
  EXPECT_FALSE(Verify("channel_secret", "bodybodybodybody", "invalid_signature"));
  EXPECT_FALSE(
      Verify("channel_secret", "bodybodybodybodY", "/gg9a+LvFevTH1sd7XCQycD7tsWclCsInj7MhBHxN7k="));
  EXPECT_FALSE(Verify("channel_secret", "bodybodybodybody", ""));
  EXPECT_FALSE(Verify("", "x", Sign("", "x")));
}

TEST(LineWebhook, VerifyCallAndShapes) {
  auto verify = DecodeWebhook(R"({"destination":"Uxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","events":[]})");
  ASSERT_TRUE(verify);
  EXPECT_TRUE(verify->events.empty());
  EXPECT_EQ(verify->destination, "Uxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
  for (std::string_view bad : {"{x", "[]", R"({"destination":"U1"})", R"({"events":{}})"}) {
    auto r = DecodeWebhook(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  }
  std::string many = R"({"events":[)";
  for (int i = 0; i < 101; ++i) many += std::string(i ? "," : "") + "{}";
  EXPECT_FALSE(DecodeWebhook(many + "]}"));
}

// line-bot-sdk-python tests/v3/text/webhook.json, the first event.
constexpr std::string_view kUserText = R"({"replyToken":"nHuyWiB7yP5Zw52FIkcQobQuGDXCTA",
  "type":"message","mode":"active","timestamp":1462629479859,
  "source":{"type":"user","userId":"U206d25c2ea6bd87c17655609a1c37cb8"},
  "webhookEventId":"testwebhookeventid","deliveryContext":{"isRedelivery":false},
  "message":{"id":"325708","type":"text","text":"Hello, world","quoteToken":"quoteToken"}})";

TEST(LineEvent, UserTextIsAPrivateMessage) {
  EXPECT_EQ(EventId(Parse(kUserText)), "testwebhookeventid");
  auto decoded = DecodeEvent(Parse(kUserText), kBot);
  ASSERT_TRUE(decoded && decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(decoded->reply_token, "nHuyWiB7yP5Zw52FIkcQobQuGDXCTA");
  EXPECT_EQ(m.chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "U206d25c2ea6bd87c17655609a1c37cb8");
  EXPECT_EQ(m.sender_id, "U206d25c2ea6bd87c17655609a1c37cb8");
  EXPECT_EQ(m.message_id, "325708");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[1].text, "Hello, world");
}

TEST(LineEvent, GroupMentionsBecomeAtsAtUtf16Offsets) {
  // "🍎@Bot hi @Ann and @All" — the apple is two UTF-16 units, so "@Bot" starts at 2.
  auto decoded = DecodeEvent(Parse(R"({"type":"message","mode":"active","replyToken":"rt",
      "webhookEventId":"E1","source":{"type":"group","groupId":"Ca56f94637cc4347f90a25382909b24b9",
      "userId":"U206d25c2ea6bd87c17655609a1c37cb8"},
      "message":{"id":"444","type":"text","text":"\ud83c\udf4e@Bot hi @Ann and @All",
      "quotedMessageId":"400","mention":{"mentionees":[
        {"index":10,"length":4,"type":"user","userId":"U1111"},
        {"index":2,"length":4,"type":"user","isSelf":true},
        {"index":19,"length":4,"type":"all"},
        {"index":3,"length":2,"type":"user","userId":"Uoverlap"},
        {"index":90,"length":4,"type":"user","userId":"Ubeyond"}]}}})"),
                             kBot);
  ASSERT_TRUE(decoded && decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "Ca56f94637cc4347f90a25382909b24b9");
  ASSERT_EQ(m.chain.size(), 8u);
  EXPECT_EQ(m.chain[1].type, ElementType::kQuote);
  EXPECT_EQ(m.chain[1].id, "400");
  EXPECT_EQ(m.chain[2].text, "\xF0\x9F\x8D\x8E");
  EXPECT_EQ(m.chain[3].type, ElementType::kAt);
  EXPECT_EQ(m.chain[3].target, kBot);
  EXPECT_EQ(m.chain[4].text, " hi ");
  EXPECT_EQ(m.chain[5].target, "U1111");
  EXPECT_EQ(m.chain[6].text, " and ");
  EXPECT_EQ(m.chain[7].type, ElementType::kAtAll);
}

TEST(LineEvent, BotIdMentionCountsAsSelfAndRoomsAreGroups) {
  auto decoded = DecodeEvent(Parse(std::string(R"({"type":"message","source":{"type":"room",
      "roomId":"Ra8dbf4673c4c812cd491258042226c99"},"message":{"id":"1","type":"text",
      "text":"@Bot","mention":{"mentionees":[{"index":0,"length":4,"type":"user","userId":")") +
                                   std::string(kBot) + R"("}]}}})"),
                             kBot);
  ASSERT_TRUE(decoded && decoded->message);
  EXPECT_EQ(decoded->message->chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(decoded->message->chat_id, "Ra8dbf4673c4c812cd491258042226c99");
  EXPECT_EQ(decoded->message->sender_id, "unknown");
  ASSERT_EQ(decoded->message->chain.size(), 2u);
  EXPECT_EQ(decoded->message->chain[1].target, kBot);
}

TEST(LineEvent, ImagesExternalOrToFetch) {
  // line-bot-sdk-python tests/v3/text/webhook.json: an external and a LINE-hosted image.
  auto external = DecodeEvent(Parse(R"({"replyToken":"r","type":"message","mode":"active",
      "source":{"type":"room","roomId":"Ra8dbf4673c4c812cd491258042226c99"},
      "message":{"id":"325708","type":"image","contentProvider":{"type":"external",
      "originalContentUrl":"https://example.com","previewImageUrl":"https://example.com"}}})"),
                              kBot);
  ASSERT_TRUE(external && external->message);
  EXPECT_FALSE(external->content);
  EXPECT_EQ(external->message->chain.back().type, ElementType::kImage);
  EXPECT_EQ(external->message->chain.back().url, "https://example.com");
  auto hosted = DecodeEvent(Parse(R"({"type":"message","message":{"type":"image",
      "id":"354718705033693861","contentProvider":{"type":"line"},
      "imageSet":{"id":"E005D41A7288F41B655","index":2,"total":2},"quoteToken":"q"},
      "timestamp":1627356924722,"source":{"type":"user","userId":"U206d25c2ea6bd87c17655609a1c37cb8"},
      "webhookEventId":"w","deliveryContext":{"isRedelivery":false},"replyToken":"fbf9","mode":"active"})"),
                            kBot);
  ASSERT_TRUE(hosted && hosted->message && hosted->content);
  EXPECT_EQ(hosted->content->message_id, "354718705033693861");
  EXPECT_EQ(hosted->message->chain[hosted->content->element].type, ElementType::kImage);
}

TEST(LineEvent, OtherEventsStandbyAndStickersAreSkipped) {
  for (std::string_view json :
       {R"({"type":"follow","source":{"type":"user","userId":"U1"},"replyToken":"r"})",
        R"({"type":"message","mode":"standby","source":{"type":"user","userId":"U1"},
               "message":{"id":"1","type":"text","text":"x"}})",
        R"({"type":"message","source":{"type":"user","userId":"U1"},
               "message":{"id":"1","type":"sticker","packageId":"1","stickerId":"1"}})",
        R"({"type":"message","source":{"type":"user","userId":"U1"},
               "message":{"id":"1","type":"text","text":""}})"}) {
    auto d = DecodeEvent(Parse(json), kBot);
    ASSERT_TRUE(d) << json;
    EXPECT_FALSE(d->message) << json;
    EXPECT_FALSE(d->skipped.empty()) << json;
  }
  auto bad = DecodeEvent(Parse(R"({"type":"message","source":{"type":"user"},
      "message":{"id":"1","type":"text","text":"x"}})"),
                         kBot);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("source.userId"), std::string::npos);
  EXPECT_FALSE(
      DecodeEvent(Parse(R"({"type":"message","source":{"type":"user","userId":"U1"}})"), kBot));
}

TEST(LineApi, BotInfoAndErrors) {
  auto info =
      DecodeBotInfo(R"({"userId":"Ub9952f8...","basicId":"@216ru...","displayName":"Example name",
      "pictureUrl":"https://profile.line-scdn.net/...","chatMode":"chat","markAsReadMode":"manual"})");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->user_id, "Ub9952f8...");
  EXPECT_FALSE(DecodeBotInfo("{}"));
  EXPECT_TRUE(IsInvalidReplyToken(400, R"({"message":"Invalid reply token"})"));
  EXPECT_FALSE(IsInvalidReplyToken(400, R"j({"message":"The request body has 1 error(s)"})j"));
  EXPECT_FALSE(IsInvalidReplyToken(401, R"({"message":"Invalid reply token"})"));
  EXPECT_EQ(DescribeError(400, R"j({"message":"The request body has 2 error(s)","details":[
      {"message":"May not be empty","property":"messages[0].text"},
      {"message":"Must be one of the following values: [text, image]",
       "property":"messages[1].type"}]})j"),
            "The request body has 2 error(s): messages[0].text: May not be empty; "
            "messages[1].type: Must be one of the following values: [text, image]");
  EXPECT_EQ(DescribeError(502, "<html>"), "HTTP 502");
  EXPECT_EQ(SentMessageId(R"({"sentMessages":[{"id":"461230966842064897","quoteToken":"q"}]})"),
            "461230966842064897");
}

domain::OutgoingMessage Outgoing(std::string target, domain::MessageChain chain) {
  domain::OutgoingMessage m;
  m.target_type = domain::TargetType::kGroup;
  m.target_id = std::move(target);
  m.chain = std::move(chain);
  return m;
}

domain::MessageElement Element(ElementType type, std::string value = {}) {
  domain::MessageElement e;
  e.type = type;
  if (type == ElementType::kPlain) e.text = value;
  if (type == ElementType::kAt) e.target = value;
  if (type == ElementType::kImage || type == ElementType::kFile) e.url = value;
  if (type == ElementType::kSource || type == ElementType::kQuote) e.id = value;
  return e;
}

TEST(LineEncode, TextMentionsAndImages) {
  auto plain = EncodeMessages(Outgoing(
      "U1", {Element(ElementType::kSource, "1"), Element(ElementType::kPlain, "hello {you}")}));
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(util::SerializeJson(plain[0]), R"({"type":"text","text":"hello {you}"})");
  auto mixed = EncodeMessages(
      Outgoing("C1", {Element(ElementType::kAt, "U7"), Element(ElementType::kPlain, " hi {x} "),
                      Element(ElementType::kAtAll), Element(ElementType::kImage, "https://i/x.png"),
                      Element(ElementType::kPlain, "after")}));
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_EQ(
      util::SerializeJson(mixed[0]),
      R"({"type":"textV2","text":"{m0} hi )"
      "\xEF\xBD\x9Bx\xEF\xBD\x9D"
      R"( {m1}","substitution":{"m0":{"type":"mention","mentionee":{"type":"user","userId":"U7"}},"m1":{"type":"mention","mentionee":{"type":"all"}}}})");
  EXPECT_EQ(
      util::SerializeJson(mixed[1]),
      R"({"type":"image","originalContentUrl":"https://i/x.png","previewImageUrl":"https://i/x.png"})");
  EXPECT_EQ(util::SerializeJson(mixed[2]), R"({"type":"text","text":"after"})");
}

TEST(LineEncode, LongTextIsCutInUtf16Units) {
  std::string apples;
  for (int i = 0; i < 3000; ++i) apples += "\xF0\x9F\x8D\x8E";  // 6000 units
  auto messages = EncodeMessages(Outgoing("U1", {Element(ElementType::kPlain, apples)}));
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].at("text").as_string().size(), 2500u * 4);
  EXPECT_EQ(messages[1].at("text").as_string().size(), 500u * 4);
}

TEST(LineCheckDeliverable, RefusesWhatLineCannotCarry) {
  domain::MessageElement b64 = Element(ElementType::kImage);
  b64.base64 = "data:image/png;base64,iVBORw0KGgo=";
  auto r = CheckDeliverable(Outgoing("U1", {Element(ElementType::kPlain, "x"), b64}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("message_chain[1]"), std::string::npos);
  EXPECT_NE(r.error().message.find("hosting"), std::string::npos);
  EXPECT_FALSE(CheckDeliverable(
      Outgoing("U1", {Element(ElementType::kImage, "http://plain.example/x.png")})));
  EXPECT_FALSE(CheckDeliverable(Outgoing("U1", {Element(ElementType::kVoice)})));
  EXPECT_FALSE(CheckDeliverable(Outgoing("U-1", {Element(ElementType::kPlain, "x")})));
  EXPECT_FALSE(CheckDeliverable(Outgoing("U1", {Element(ElementType::kSource, "1")})));
  EXPECT_TRUE(CheckDeliverable(Outgoing("C1", {Element(ElementType::kAt, "U2")})));
}

TEST(LineAdapterSignIn, ARefusedTokenIsTroubleWithoutRetries) {
  test::IoThreads io;
  util::SystemClock clock;
  test::RecordingHost host;
  auto http = std::make_shared<test::ScriptedHttp>([](const net::HttpRequest&) {
    return test::Reply(
        401,
        R"({"message":"Authentication failed. Confirm that the access token in the authorization header is valid."})");
  });
  auto adapter = MakeLineAdapter(
      test::HttpAdapterContext(util::JsonObject{{"channel_access_token", "revoked-line-token"},
                                                {"channel_secret", "s"},
                                                {"api_base_url", "http://line.test"}},
                               io, http, clock, host));
  adapter->Start();
  ASSERT_TRUE(host.WaitFor([&] { return !host.troubles.empty(); }));
  std::this_thread::sleep_for(200ms);
  const auto troubles = host.Read([&] { return host.troubles; });
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_NE(troubles[0].find("401"), std::string::npos);
  EXPECT_EQ(troubles[0].find("revoked-line-token"), std::string::npos);
  EXPECT_EQ(http->Requests().size(), 1u);
  EXPECT_TRUE(test::StopAndWait(*adapter));
}

// The adapter against a scripted Messaging API.
class LineAdapterTest : public ::testing::Test {
 protected:
  static constexpr std::string_view kSecret = "channel-secret-1";
  static constexpr std::string_view kUser = "U206d25c2ea6bd87c17655609a1c37cb8";

  void SetUp() override {
    http_ = std::make_shared<test::ScriptedHttp>(
        [this](const net::HttpRequest& r) { return Answer(r); });
    adapter_ = MakeLineAdapter(
        test::HttpAdapterContext(util::JsonObject{{"channel_access_token", "line-token"},
                                                  {"channel_secret", kSecret},
                                                  {"api_base_url", "http://line.test"}},
                                 io_, http_, clock_, host_, "bot-1"));
    adapter_->Start();
    ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  }

  void TearDown() override { EXPECT_TRUE(test::StopAndWait(*adapter_)); }

  util::Result<net::HttpResponse> Answer(const net::HttpRequest& r) {
    if (r.url.ends_with("/v2/bot/info")) {
      return test::Reply(
          200, std::string(R"({"userId":")") + std::string(kBot) + R"(","displayName":"Bot"})");
    }
    if (r.url.ends_with("/content")) {
      return test::Reply(200, "\x89PNG", {{"content-type", "image/png"}});
    }
    if (r.url.ends_with("/reply") && expired_) {
      return test::Reply(400, R"({"message":"Invalid reply token"})");
    }
    return test::Reply(200, R"({"sentMessages":[{"id":"777","quoteToken":"q"}]})");
  }

  WebhookCall Signed(std::string body) {
    WebhookCall call;
    call.method = "POST";
    call.headers = {{"x-line-signature", Sign(kSecret, body)}};
    call.body = std::move(body);
    return call;
  }

  std::string TextEvent(std::string_view event_id, std::string_view message_id,
                        std::string_view text = "hello") {
    return fmt::format(
        R"({{"destination":"{}","events":[{{"type":"message","mode":"active","replyToken":"rt-{}",
        "webhookEventId":"{}","deliveryContext":{{"isRedelivery":false}},
        "source":{{"type":"user","userId":"{}"}},"message":{{"id":"{}","type":"text","text":"{}"}}}}]}})",
        kBot, message_id, event_id, kUser, message_id, text);
  }

  test::IoThreads io_;
  util::SystemClock clock_;
  test::RecordingHost host_;
  std::shared_ptr<test::ScriptedHttp> http_;
  std::unique_ptr<PlatformAdapter> adapter_;
  std::atomic<bool> expired_{false};
};

TEST_F(LineAdapterTest, SignsInWithBotInfo) {
  EXPECT_EQ(host_.Read([&] { return host_.connected; }),
            std::vector<std::string>{std::string(kBot)});
  auto calls = http_->RequestsTo("/v2/bot/info");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].method, "GET");
  EXPECT_EQ(test::HeaderOf(calls[0], "Authorization"), "Bearer line-token");
}

TEST_F(LineAdapterTest, SignatureFirstThenVerifyCallAndMalformedBodies) {
  WebhookCall forged = Signed("{x");
  forged.headers[0].second = Sign("other-secret", "{x");
  EXPECT_EQ(test::CallWebhook(*adapter_, forged).status, 401);
  WebhookCall unsigned_call = Signed("{}");
  unsigned_call.headers.clear();
  EXPECT_EQ(test::CallWebhook(*adapter_, unsigned_call).status, 401);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed("{x")).status, 400);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(R"({"destination":"U1","events":[]})")).status,
            200);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(std::string(2 * 1024 * 1024, ' '))).status, 413);
  EXPECT_TRUE(host_.Read([&] { return host_.messages.empty(); }));
}

TEST_F(LineAdapterTest, RedeliveryIsHandledOnceAndTheReplyUsesTheToken) {
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(TextEvent("E1", "100"))).status, 200);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(TextEvent("E1", "100"))).status, 200);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(host_.Read([&] { return host_.messages.size(); }), 1u);
  domain::OutgoingMessage out;
  out.target_id = std::string(kUser);
  out.chain = {Element(ElementType::kPlain, "answer")};
  auto sent = test::SendAndWait(*adapter_, out, "100");
  ASSERT_TRUE(sent) << sent.error().message;
  EXPECT_EQ(sent->message_id, "777");
  auto replies = http_->RequestsTo("/v2/bot/message/reply");
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].body,
            R"({"replyToken":"rt-100","messages":[{"type":"text","text":"answer"}]})");
  // The token is spent: a second answer to the same message is pushed, with a retry key.
  ASSERT_TRUE(test::SendAndWait(*adapter_, out, "100"));
  auto pushes = http_->RequestsTo("/v2/bot/message/push");
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].body, std::string(R"({"to":")") + std::string(kUser) +
                                R"(","messages":[{"type":"text","text":"answer"}]})");
  EXPECT_EQ(test::HeaderOf(pushes[0], "X-Line-Retry-Key").size(), 36u);
}

TEST_F(LineAdapterTest, AnExpiredReplyTokenFallsBackToPush) {
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(TextEvent("E2", "200"))).status, 200);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  expired_ = true;
  domain::OutgoingMessage out;
  out.target_id = std::string(kUser);
  out.chain = {Element(ElementType::kPlain, "late answer")};
  auto sent = test::SendAndWait(*adapter_, out, "200");
  ASSERT_TRUE(sent) << sent.error().message;
  EXPECT_EQ(http_->RequestsTo("/v2/bot/message/reply").size(), 1u);
  EXPECT_EQ(http_->RequestsTo("/v2/bot/message/push").size(), 1u);
}

TEST_F(LineAdapterTest, PushErrorsAreReportedWithLinesReason) {
  http_->SetScript([](const net::HttpRequest&) {
    return test::Reply(
        400,
        R"j({"message":"The property, 'to', in the request body is invalid (line: -, column: -)"})j");
  });
  domain::OutgoingMessage out;
  out.target_id = "Unknown1";
  out.chain = {Element(ElementType::kPlain, "x")};
  auto sent = test::SendAndWait(*adapter_, out);
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error().code, util::ErrorCode::kUpstreamFailed);
  EXPECT_NE(sent.error().message.find("'to'"), std::string::npos);
  EXPECT_EQ(sent.error().message.find("line-token"), std::string::npos);
}

TEST_F(LineAdapterTest, HostedImagesAreFetchedIntoTheMessage) {
  std::string body = fmt::format(
      R"({{"destination":"{}","events":[{{"type":"message","replyToken":"r","webhookEventId":"E3",
      "source":{{"type":"user","userId":"{}"}},"message":{{"id":"300","type":"image",
      "contentProvider":{{"type":"line"}}}}}}]}})",
      kBot, kUser);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(body)).status, 200);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  auto message = host_.Read([&] { return host_.messages[0]; });
  ASSERT_EQ(message.chain.size(), 2u);
  EXPECT_EQ(message.chain[1].type, ElementType::kImage);
  EXPECT_EQ(message.chain[1].base64, "data:image/png;base64,iVBORw==");
  ASSERT_EQ(http_->RequestsTo("/v2/bot/message/300/content").size(), 1u);
}

}  // namespace
}  // namespace sb::platforms::line
