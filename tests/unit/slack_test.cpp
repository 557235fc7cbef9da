// The Slack adapter: its codec (the v0 signature with Slack's published example, Events API
// payloads as Slack documents them, chat.postMessage bodies) as pure functions, and the adapter's
// webhook and send paths against a scripted Web API.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "platforms/slack/slack_adapter.hpp"
#include "platforms/slack/slack_codec.hpp"
#include "support/adapter_harness.hpp"
#include "util/clock.hpp"
#include "util/json.hpp"

namespace sb::platforms::slack {
namespace {

using domain::ElementType;
using namespace std::chrono_literals;

util::Json Parse(std::string_view text) { return *util::ParseJson(text); }

util::TimePoint At(std::int64_t unix_seconds) {
  return util::TimePoint(std::chrono::seconds(unix_seconds));
}

// https://docs.slack.dev/authentication/verifying-requests-from-slack/ (as in slack_sdk's tests)
constexpr std::string_view kDocSecret = "8f742231b10e8888abcd99yyyzzz85a5";
constexpr std::string_view kDocTimestamp = "1531420618";
constexpr std::string_view kDocBody =
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id="
    "G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-"
    "collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F3977008855"
    "54%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121."
    "803a0bc887a14d10d2c447fce8b6703c";
constexpr std::string_view kDocSignature =
    "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

TEST(SlackSignature, MatchesSlacksPublishedExample) {
  EXPECT_EQ(Sign(kDocSecret, kDocTimestamp, kDocBody), kDocSignature);
  EXPECT_TRUE(Verify(kDocSecret, kDocBody, kDocSignature, kDocTimestamp, At(1531420618)));
}

TEST(SlackSignature, RefusesStaleWrongAndEmpty) {
  const auto now = At(1531420618);
  EXPECT_TRUE(Verify(kDocSecret, kDocBody, kDocSignature, kDocTimestamp, now + 300s));
  EXPECT_FALSE(Verify(kDocSecret, kDocBody, kDocSignature, kDocTimestamp, now + 301s));
  EXPECT_FALSE(Verify(kDocSecret, kDocBody, kDocSignature, kDocTimestamp, now - 301s));
  EXPECT_FALSE(Verify(kDocSecret, std::string(kDocBody) + "x", kDocSignature, kDocTimestamp, now));
  EXPECT_FALSE(Verify("other", kDocBody, kDocSignature, kDocTimestamp, now));
  EXPECT_FALSE(Verify(kDocSecret, kDocBody, "", kDocTimestamp, now));
  EXPECT_FALSE(Verify(kDocSecret, kDocBody, kDocSignature, "", now));
  EXPECT_FALSE(Verify(kDocSecret, kDocBody, kDocSignature, "1531420618.0", now));
  EXPECT_FALSE(Verify(kDocSecret, kDocBody, kDocSignature, "-1531420618", now));
  EXPECT_FALSE(Verify("", kDocBody, Sign("", kDocTimestamp, kDocBody), kDocTimestamp, now));
}

TEST(SlackEnvelope, UrlVerificationEventCallbackAndOthers) {
  auto challenge = DecodeEnvelope(
      R"({"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"})");
  ASSERT_TRUE(challenge);
  EXPECT_EQ(challenge->kind, Envelope::Kind::kUrlVerification);
  EXPECT_EQ(challenge->challenge, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P");

  auto callback = DecodeEnvelope(R"({"token":"XXYYZZ","team_id":"T123ABC456",
      "api_app_id":"A123ABC456","event":{"type":"app_mention","user":"U123ABC456",
      "text":"<@U0LAN0Z89> is it everything a river should be?","ts":"1515449522.000016",
      "channel":"C123ABC456","event_ts":"1515449522000016"},"type":"event_callback",
      "event_id":"Ev123ABC456","event_time":1515449522000016,
      "authorizations":[{"team_id":"T123ABC456","user_id":"U0LAN0Z89","is_bot":true}]})");
  ASSERT_TRUE(callback);
  EXPECT_EQ(callback->kind, Envelope::Kind::kEventCallback);
  EXPECT_EQ(callback->event_id, "Ev123ABC456");
  EXPECT_TRUE(callback->event.is_object());

  auto other = DecodeEnvelope(R"({"type":"app_rate_limited","minute_rate_limited":1518467820})");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->kind, Envelope::Kind::kOther);

  for (std::string_view bad : {"{not json", "[]", R"({"type":"url_verification"})",
                               R"({"type":"event_callback","event":"x"})", R"({"event":{}})"}) {
    auto r = DecodeEnvelope(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(SlackEvent, ChannelMentionIsAGroupMessageWithAnAtOfTheBot) {
  Identity self{"U0LAN0Z89", "B111", "team"};
  auto decoded = DecodeEvent(Parse(R"({"type":"app_mention","user":"U123ABC456",
      "text":"<@U0LAN0Z89> is it everything a river should be?","ts":"1515449522.000016",
      "channel":"C123ABC456","event_ts":"1515449522000016"})"),
                             self);
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "C123ABC456");
  EXPECT_EQ(m.sender_id, "U123ABC456");
  EXPECT_EQ(m.message_id, "1515449522.000016");
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[0].id, "1515449522.000016");
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, "U0LAN0Z89");
  EXPECT_EQ(m.chain[2].text, " is it everything a river should be?");
  EXPECT_EQ(decoded->DedupeKey(), "C123ABC456:1515449522.000016");
}

TEST(SlackEvent, DirectMessageIsPrivateWithTheSenderAsChat) {
  auto decoded = DecodeEvent(Parse(R"({"type":"message","channel":"D024BE91L","user":"U2147483697",
      "text":"Hello hello can you hear me?","ts":"1355517523.000005","event_ts":"1355517523.000005",
      "channel_type":"im"})"),
                             Identity{"UBOT", "BBOT", ""});
  ASSERT_TRUE(decoded && decoded->message);
  EXPECT_EQ(decoded->message->chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(decoded->message->chat_id, "U2147483697");
  EXPECT_EQ(decoded->channel, "D024BE91L");
  // An app_mention has no channel_type: a D… channel is still a direct message.
  auto mention = DecodeEvent(Parse(R"({"type":"app_mention","channel":"D024BE91L",
      "user":"U2147483697","text":"hi","ts":"1.2"})"),
                             Identity{});
  ASSERT_TRUE(mention && mention->message);
  EXPECT_EQ(mention->message->chat_type, domain::TargetType::kPerson);
}

TEST(SlackEvent, OwnBotEditedAndOtherEventsAreSkipped) {
  Identity self{"UBOT", "BBOT", ""};
  auto skipped = [&](std::string_view json) {
    auto d = DecodeEvent(Parse(json), self);
    return d && !d->message && !d->skipped.empty();
  };
  EXPECT_TRUE(skipped(R"({"type":"message","channel":"C1","user":"UBOT","text":"mine","ts":"1"})"));
  EXPECT_TRUE(skipped(
      R"({"type":"message","channel":"C1","user":"U2","bot_id":"B9","text":"a bot","ts":"1"})"));
  EXPECT_TRUE(skipped(
      R"({"type":"message","subtype":"bot_message","channel":"C1","text":"x","ts":"1","bot_id":"B1"})"));
  EXPECT_TRUE(skipped(R"({"type":"message","subtype":"message_changed","channel":"C1",
      "message":{"text":"x"},"ts":"1"})"));
  EXPECT_TRUE(skipped(R"({"type":"reaction_added","user":"U1","reaction":"thumbsup"})"));
  EXPECT_TRUE(skipped(R"({"type":"message","channel":"C1","user":"U2","text":"","ts":"1"})"));
  // A file share with text is still a message.
  auto share = DecodeEvent(Parse(R"({"type":"message","subtype":"file_share","channel":"C1",
      "user":"U2","text":"look","ts":"1","thread_ts":"0.5"})"),
                           self);
  ASSERT_TRUE(share && share->message);
  EXPECT_EQ(share->thread_ts, "0.5");
}

TEST(SlackEvent, WrongShapesNameTheField) {
  auto missing =
      DecodeEvent(Parse(R"({"type":"message","channel":"C1","user":"U2","text":"x"})"), Identity{});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, util::ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.error().message.find("event.ts"), std::string::npos);
  auto typed =
      DecodeEvent(Parse(R"({"type":"message","channel":7,"user":"U2","ts":"1"})"), Identity{});
  ASSERT_FALSE(typed);
  EXPECT_NE(typed.error().message.find("event.channel"), std::string::npos);
  EXPECT_FALSE(DecodeEvent(Parse("[]"), Identity{}));
}

TEST(SlackText, MentionsLinksAndEscapes) {
  auto chain = DecodeText(
      "hey <@U1|ann> &lt;3 &amp; <!here> see <https://x.example/a|the site> in <#C9|general> "
      "<https://y.example>");
  ASSERT_EQ(chain.size(), 5u);
  EXPECT_EQ(chain[0].text, "hey ");
  EXPECT_EQ(chain[1].type, ElementType::kAt);
  EXPECT_EQ(chain[1].target, "U1");
  EXPECT_EQ(chain[2].text, " <3 & ");
  EXPECT_EQ(chain[3].type, ElementType::kAtAll);
  EXPECT_EQ(chain[4].text, " see the site (https://x.example/a) in #general https://y.example");
  auto open = DecodeText("a < b and c");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].text, "a < b and c");
}

domain::OutgoingMessage Outgoing(std::string target, domain::MessageChain chain) {
  domain::OutgoingMessage m;
  m.target_type = domain::TargetType::kGroup;
  m.target_id = std::move(target);
  m.chain = std::move(chain);
  return m;
}

domain::MessageElement Plain(std::string text) {
  domain::MessageElement e;
  e.text = std::move(text);
  return e;
}

domain::MessageElement Element(ElementType type, std::string value = {}) {
  domain::MessageElement e;
  e.type = type;
  if (type == ElementType::kAt) e.target = value;
  if (type == ElementType::kImage || type == ElementType::kFile) e.url = value;
  if (type == ElementType::kSource || type == ElementType::kQuote) e.id = value;
  return e;
}

TEST(SlackEncode, TextMentionsAndImagesInOrder) {
  auto bodies = EncodeOutgoing(
      Outgoing("C1", {Element(ElementType::kSource, "1.1"), Element(ElementType::kAt, "U7"),
                      Plain(" 1 < 2 & 3"), Element(ElementType::kAtAll),
                      Element(ElementType::kImage, "https://i/x.png"), Plain("after")}),
      "");
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(util::SerializeJson(bodies[0].post),
            R"({"channel":"C1","text":"<@U7> 1 &lt; 2 &amp; 3<!channel>"})");
  EXPECT_EQ(
      util::SerializeJson(bodies[1].post),
      R"({"channel":"C1","text":"image","blocks":[{"type":"image","image_url":"https://i/x.png","alt_text":"image"}]})");
  EXPECT_EQ(util::SerializeJson(bodies[2].post), R"({"channel":"C1","text":"after"})");
}

TEST(SlackEncode, ThreadAndLongText) {
  std::string para(3000, 'a');
  auto bodies = EncodeOutgoing(Outgoing("U5", {Plain(para + "\n" + para)}), "171.5");
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0].post.at("thread_ts").as_string(), "171.5");
  EXPECT_EQ(bodies[0].post.at("text").as_string(), para + "\n");
  EXPECT_EQ(bodies[1].post.at("text").as_string(), para);
}

TEST(SlackCheckDeliverable, NamesTheElement) {
  domain::MessageElement bad = Element(ElementType::kImage);
  bad.base64 = "data:image/png;base64,!!not base64!!";
  auto r = CheckDeliverable(Outgoing("C1", {Plain("x"), bad}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("message_chain[1]"), std::string::npos);
  domain::MessageElement good = Element(ElementType::kImage);
  good.base64 = "data:image/png;base64,iVBORw0KGgo=";
  EXPECT_TRUE(CheckDeliverable(Outgoing("C1", {good})));
  EXPECT_FALSE(CheckDeliverable(Outgoing("", {Plain("x")})));
  EXPECT_FALSE(CheckDeliverable(Outgoing("C 1", {Plain("x")})));
  EXPECT_FALSE(CheckDeliverable(Outgoing("C1", {Element(ElementType::kSource, "1")})));
  EXPECT_FALSE(CheckDeliverable(Outgoing("C1", {Element(ElementType::kVoice)})));
  EXPECT_TRUE(CheckDeliverable(Outgoing("U1", {Element(ElementType::kAt, "U2")})));
  EXPECT_TRUE(CheckDeliverable(Outgoing("C1", {Element(ElementType::kImage, "https://i/x")})));
}

TEST(SlackEncode, InlineImagesBecomeUploads) {
  domain::MessageElement jpeg = Element(ElementType::kImage);
  jpeg.base64 = "data:image/jpeg;base64,/9j/4AA=";
  auto calls = EncodeOutgoing(Outgoing("C1", {Plain("look"), jpeg}), "5.5");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_FALSE(calls[0].upload);
  ASSERT_TRUE(calls[1].upload);
  EXPECT_EQ(calls[1].upload->filename, "image.jpg");
  EXPECT_EQ(calls[1].upload->bytes, std::string("\xFF\xD8\xFF\xE0\x00", 5));
  EXPECT_EQ(util::SerializeJson(calls[1].post), R"({"channel":"C1","thread_ts":"5.5"})");
}

TEST(SlackEncode, FormEncoding) {
  EXPECT_EQ(FormEncode({{"filename", "a b&c.png"}, {"files", R"([{"id":"F1"}])"}}),
            "filename=a+b%26c.png&files=%5B%7B%22id%22%3A%22F1%22%7D%5D");
}

TEST(SlackApi, OkErrorsAndNonApiBodies) {
  auto ok = DecodeApiResponse(200, R"({"ok":true,"channel":"C1","ts":"1503435956.000247"})");
  ASSERT_TRUE(ok && ok->ok);
  EXPECT_EQ(SentTs(*ok), "1503435956.000247");
  auto refused = DecodeApiResponse(200, R"({"ok":false,"error":"channel_not_found"})");
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->ok);
  EXPECT_EQ(refused->error, "channel_not_found");
  auto html = DecodeApiResponse(502, "<html>bad gateway</html>");
  ASSERT_FALSE(html);
  EXPECT_EQ(html.error().code, util::ErrorCode::kUpstreamFailed);
  auto me = DecodeAuthTest(*DecodeApiResponse(
      200, R"({"ok":true,"url":"https://subarachnoid.slack.com/","team":"Subarachnoid Workspace",
      "user":"grace","team_id":"T12345678","user_id":"W12345678","bot_id":"B1"})"));
  ASSERT_TRUE(me);
  EXPECT_EQ(me->user_id, "W12345678");
  EXPECT_EQ(me->bot_id, "B1");
  EXPECT_FALSE(DecodeAuthTest(*DecodeApiResponse(200, R"({"ok":true})")));
}

// The adapter against a scripted Web API.
class SlackAdapterTest : public ::testing::Test {
 protected:
  static constexpr std::string_view kSecret = "signing-secret-1";

  void SetUp() override {
    http_ = std::make_shared<test::ScriptedHttp>(
        [this](const net::HttpRequest& r) { return Answer(r); });
    adapter_ = MakeSlackAdapter(
        test::HttpAdapterContext(util::JsonObject{{"bot_token", "xoxb-test-token"},
                                                  {"signing_secret", kSecret},
                                                  {"api_base_url", "http://slack.test/api/"}},
                                 io_, http_, clock_, host_, "bot-1"));
    adapter_->Start();
    ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  }

  void TearDown() override { EXPECT_TRUE(test::StopAndWait(*adapter_)); }

  util::Result<net::HttpResponse> Answer(const net::HttpRequest& r) {
    if (r.url.ends_with("/auth.test")) {
      return test::Reply(200, R"({"ok":true,"team":"T","user":"bot","team_id":"T1",
                                  "user_id":"UBOT","bot_id":"BBOT"})");
    }
    std::lock_guard lock(mu_);
    if (!post_answers_.empty()) {
      auto next = post_answers_.front();
      post_answers_.erase(post_answers_.begin());
      return next;
    }
    return test::Reply(200, R"({"ok":true,"channel":"C1","ts":"99.1"})");
  }

  WebhookCall Signed(std::string body, std::int64_t skew_seconds = 0) {
    const std::string ts = std::to_string(util::ToUnixSeconds(clock_.Now()) + skew_seconds);
    WebhookCall call;
    call.method = "POST";
    call.headers = {{"x-slack-request-timestamp", ts},
                    {"x-slack-signature", Sign(kSecret, ts, body)},
                    {"content-type", "application/json"}};
    call.body = std::move(body);
    return call;
  }

  static std::string Event(std::string_view event_id, std::string_view type, std::string_view ts,
                           std::string_view user = "U2") {
    return fmt::format(
        R"({{"type":"event_callback","event_id":"{}","team_id":"T1","event":{{"type":"{}",
        "channel":"C1","channel_type":"channel","user":"{}","text":"<@UBOT> hi","ts":"{}"}}}})",
        event_id, type, user, ts);
  }

  test::IoThreads io_;
  util::SystemClock clock_;
  test::RecordingHost host_;
  std::shared_ptr<test::ScriptedHttp> http_;
  std::unique_ptr<PlatformAdapter> adapter_;
  std::mutex mu_;
  std::vector<util::Result<net::HttpResponse>> post_answers_;  // guarded by mu_
};

TEST(SlackAdapterSignIn, ARefusedTokenIsTroubleWithoutRetries) {
  test::IoThreads io;
  util::SystemClock clock;
  test::RecordingHost host;
  auto http = std::make_shared<test::ScriptedHttp>([](const net::HttpRequest&) {
    return test::Reply(200, R"({"ok":false,"error":"invalid_auth"})");
  });
  auto adapter = MakeSlackAdapter(
      test::HttpAdapterContext(util::JsonObject{{"bot_token", "xoxb-revoked-token"},
                                                {"signing_secret", "s"},
                                                {"api_base_url", "http://slack.test/api"}},
                               io, http, clock, host));
  adapter->Start();
  ASSERT_TRUE(host.WaitFor([&] { return !host.troubles.empty(); }));
  std::this_thread::sleep_for(200ms);
  const auto troubles = host.Read([&] { return host.troubles; });
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_NE(troubles[0].find("invalid_auth"), std::string::npos);
  EXPECT_EQ(troubles[0].find("xoxb"), std::string::npos);
  EXPECT_EQ(http->Requests().size(), 1u);
  EXPECT_TRUE(host.Read([&] { return host.connected.empty(); }));
  EXPECT_TRUE(test::StopAndWait(*adapter));
}

TEST_F(SlackAdapterTest, SignsInWithAuthTest) {
  EXPECT_EQ(host_.Read([&] { return host_.connected; }), std::vector<std::string>{"UBOT"});
  auto calls = http_->RequestsTo("/api/auth.test");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(test::HeaderOf(calls[0], "Authorization"), "Bearer xoxb-test-token");
}

TEST_F(SlackAdapterTest, SignatureIsCheckedBeforeTheBodyIsRead) {
  WebhookCall forged = Signed("{not json");
  forged.headers[1].second = "v0=" + std::string(64, '0');
  EXPECT_EQ(test::CallWebhook(*adapter_, forged).status, 401);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed("{not json", -301)).status, 401);
  WebhookCall unsigned_call = Signed("{}");
  unsigned_call.headers.clear();
  EXPECT_EQ(test::CallWebhook(*adapter_, unsigned_call).status, 401);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed("{not json")).status, 400);
  WebhookCall get = Signed("");
  get.method = "GET";
  EXPECT_EQ(test::CallWebhook(*adapter_, get).status, 405);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(std::string(2 * 1024 * 1024, ' '))).status, 413);
  EXPECT_TRUE(host_.Read([&] { return host_.messages.empty(); }));
}

TEST_F(SlackAdapterTest, UrlVerificationEchoesTheChallenge) {
  auto answer = test::CallWebhook(
      *adapter_, Signed(R"({"token":"t","challenge":"abc123","type":"url_verification"})"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "abc123");
}

TEST_F(SlackAdapterTest, RetriesAndTheDoubleMentionAreHandledOnce) {
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(Event("Ev1", "message", "10.1"))).status, 200);
  WebhookCall retry = Signed(Event("Ev1", "message", "10.1"));
  retry.headers.emplace_back("x-slack-retry-num", "1");
  retry.headers.emplace_back("x-slack-retry-reason", "http_timeout");
  EXPECT_EQ(test::CallWebhook(*adapter_, retry).status, 200);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(Event("Ev2", "app_mention", "10.1"))).status, 200);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(Event("Ev3", "app_mention", "11.1"))).status, 200);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(Event("Ev4", "message", "12.1", "UBOT"))).status,
            200);
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() >= 2; }));
  std::this_thread::sleep_for(100ms);  // nothing more may arrive
  auto messages = host_.Read([&] { return host_.messages; });
  ASSERT_EQ(messages.size(), 2u);
  // Each event is handled after its own acknowledgement, on any I/O thread: two events may reach
  // the host in either order (a loaded full run failed here once, likely on that order).
  std::sort(messages.begin(), messages.end(),
            [](const auto& a, const auto& b) { return a.message_id < b.message_id; });
  EXPECT_EQ(messages[0].message_id, "10.1");
  EXPECT_EQ(messages[1].message_id, "11.1");
  EXPECT_EQ(messages[0].chain[1].target, "UBOT");
}

TEST_F(SlackAdapterTest, SendPostsAndClassifiesErrors) {
  auto sent = test::SendAndWait(*adapter_, Outgoing("C1", {Plain("hello")}));
  ASSERT_TRUE(sent) << sent.error().message;
  EXPECT_EQ(sent->message_id, "99.1");
  auto posts = http_->RequestsTo("/api/chat.postMessage");
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].body, R"({"channel":"C1","text":"hello"})");
  EXPECT_EQ(test::HeaderOf(posts[0], "Authorization"), "Bearer xoxb-test-token");
  EXPECT_EQ(test::HeaderOf(posts[0], "Content-Type"), "application/json; charset=utf-8");
  {
    std::lock_guard lock(mu_);
    post_answers_.push_back(test::Reply(200, R"({"ok":false,"error":"channel_not_found"})"));
  }
  auto refused = test::SendAndWait(*adapter_, Outgoing("C404", {Plain("x")}));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, util::ErrorCode::kUpstreamFailed);
  EXPECT_NE(refused.error().message.find("channel_not_found"), std::string::npos);
  EXPECT_EQ(refused.error().message.find("xoxb"), std::string::npos);
}

TEST_F(SlackAdapterTest, RateLimitIsWaitedOutThenReported) {
  {
    std::lock_guard lock(mu_);
    post_answers_.push_back(test::Reply(429, "", {{"retry-after", "0"}}));
  }
  auto sent = test::SendAndWait(*adapter_, Outgoing("C1", {Plain("once limited")}));
  ASSERT_TRUE(sent) << sent.error().message;
  EXPECT_EQ(http_->RequestsTo("/api/chat.postMessage").size(), 2u);
  {
    std::lock_guard lock(mu_);
    for (int i = 0; i < 3; ++i)
      post_answers_.push_back(test::Reply(429, "", {{"retry-after", "0"}}));
  }
  auto limited = test::SendAndWait(*adapter_, Outgoing("C1", {Plain("always limited")}));
  ASSERT_FALSE(limited);
  EXPECT_EQ(limited.error().code, util::ErrorCode::kUpstreamRateLimited);
  // A ban longer than the budget is not waited for.
  {
    std::lock_guard lock(mu_);
    post_answers_.push_back(test::Reply(429, "", {{"retry-after", "3600"}}));
  }
  auto banned = test::SendAndWait(*adapter_, Outgoing("C1", {Plain("banned")}));
  ASSERT_FALSE(banned);
  EXPECT_EQ(banned.error().code, util::ErrorCode::kUpstreamRateLimited);
}

TEST_F(SlackAdapterTest, ReplyToAThreadedMessageStaysInTheThread) {
  std::string body = R"({"type":"event_callback","event_id":"EvT","event":{"type":"message",
      "channel":"C1","channel_type":"channel","user":"U2","text":"in thread","ts":"20.2",
      "thread_ts":"20.0"}})";
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(body)).status, 200);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  ASSERT_TRUE(test::SendAndWait(*adapter_, Outgoing("C1", {Plain("answer")}), "20.2"));
  auto posts = http_->RequestsTo("/api/chat.postMessage");
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].body, R"({"channel":"C1","thread_ts":"20.0","text":"answer"})");
}

TEST_F(SlackAdapterTest, InlineImagesAreUploadedIntoTheChannel) {
  http_->SetScript([this](const net::HttpRequest& r) -> util::Result<net::HttpResponse> {
    if (r.url.ends_with("/files.getUploadURLExternal")) {
      return test::Reply(
          200, R"({"ok":true,"upload_url":"http://files.test/upload/F1","file_id":"F1"})");
    }
    if (r.url == "http://files.test/upload/F1") return test::Reply(200, "OK - 5");
    if (r.url.ends_with("/files.completeUploadExternal")) {
      return test::Reply(200, R"({"ok":true,"files":[{"id":"F1","title":"image.png"}]})");
    }
    return Answer(r);
  });
  domain::MessageElement png = Element(ElementType::kImage);
  png.base64 = "iVBORw0KGgo=";
  auto sent = test::SendAndWait(*adapter_, Outgoing("C1", {png}));
  ASSERT_TRUE(sent) << sent.error().message;
  auto ticket = http_->RequestsTo("/api/files.getUploadURLExternal");
  ASSERT_EQ(ticket.size(), 1u);
  EXPECT_EQ(ticket[0].body, "filename=image.png&length=8");
  EXPECT_EQ(test::HeaderOf(ticket[0], "Content-Type"), "application/x-www-form-urlencoded");
  auto bytes = http_->RequestsTo("/upload/F1");
  ASSERT_EQ(bytes.size(), 1u);
  EXPECT_EQ(bytes[0].body, std::string("\x89PNG\r\n\x1A\n", 8));
  EXPECT_EQ(test::HeaderOf(bytes[0], "Authorization"), "");
  auto complete = http_->RequestsTo("/api/files.completeUploadExternal");
  ASSERT_EQ(complete.size(), 1u);
  EXPECT_EQ(complete[0].body,
            "files=%5B%7B%22id%22%3A%22F1%22%2C%22title%22%3A%22image.png%22%7D%5D&channel_id=C1");
}

}  // namespace
}  // namespace sb::platforms::slack
