// The QQ official adapter's codec as pure functions: callback payloads and the op 13 validation
// (the bot-docs worked example), the four message events as bot-docs event.md shows them, the
// token answer, gateway frames and close codes, and the send bodies.
#include <gtest/gtest.h>

#include <string>

#include "platforms/common/ed25519.hpp"
#include "platforms/qqofficial/qqofficial_codec.hpp"
#include "util/json.hpp"

namespace sb::platforms::qqofficial {
namespace {

using domain::ElementType;
using domain::TargetType;
using util::ErrorCode;

util::Json Parse(std::string_view text) { return *util::ParseJson(text); }

domain::MessageElement Text(std::string text) {
  domain::MessageElement e;
  e.text = std::move(text);
  return e;
}

domain::MessageElement At(std::string target) {
  domain::MessageElement e;
  e.type = ElementType::kAt;
  e.target = std::move(target);
  return e;
}

domain::MessageElement Image(std::string url, std::string base64 = {}) {
  domain::MessageElement e;
  e.type = ElementType::kImage;
  e.url = std::move(url);
  e.base64 = std::move(base64);
  return e;
}

constexpr std::string_view kAppId = "102000001";
constexpr std::string_view kUser = "E4F4AEA33253A2797FB897C50B81D7ED";
constexpr std::string_view kGroup = "C9F778FE6ADF9D1D1DBE395BF744A33A";
constexpr std::string_view kMember = "C9F778FE6ADF9D1D1DBE395BF744A33B";

TEST(QqPayload, DecodesDispatchesAndRefusesMalformedOnes) {
  auto p = DecodePayload(
      R"({"op":0,"id":"C2C_MESSAGE_CREATE:abc","s":3,"t":"C2C_MESSAGE_CREATE","d":{"id":"m"}})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->op, kOpDispatch);
  EXPECT_EQ(p->id, "C2C_MESSAGE_CREATE:abc");
  EXPECT_EQ(p->s, 3);
  EXPECT_EQ(p->t, "C2C_MESSAGE_CREATE");
  EXPECT_TRUE(p->d.is_object());
  EXPECT_EQ(DecodePayload("{not json").error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(DecodePayload("[]"));
  EXPECT_FALSE(DecodePayload(R"({"op":"0"})"));
  EXPECT_FALSE(DecodePayload(R"({"op":0,"s":"1"})"));
  EXPECT_FALSE(DecodePayload(R"({"op":0,"t":5})"));
  EXPECT_TRUE(DecodePayload(R"({"op":11})"));
}

// bot-docs interface-framework/event-emit.md: secret DG5g3B4j9X2KOErG, the op 13 example.
TEST(QqValidation, AnswersTheDocsExample) {
  auto v =
      DecodeValidation(Parse(R"({"plain_token":"Arq0D5A61EgUu4OxUvOp","event_ts":"1725442341"})"));
  ASSERT_TRUE(v);
  auto sig = common::QqBotSign("DG5g3B4j9X2KOErG", v->event_ts + v->plain_token);
  ASSERT_TRUE(sig);
  EXPECT_EQ(*sig,
            "87befc99c42c651b3aac0278e71ada338433ae26fcb24307bdc5ad38c1adc2d01bcfcadc0842edac85e852"
            "05028a1132afe09280305f13aa6909ffc2d652c706");
  auto answer = Parse(EncodeValidationAnswer(v->plain_token, *sig));
  EXPECT_EQ(answer.at("plain_token").as_string(), "Arq0D5A61EgUu4OxUvOp");
  EXPECT_EQ(answer.at("signature").as_string(), *sig);
  EXPECT_EQ(Parse(EncodeCallbackAck()).at("op").as_int64(), kOpCallbackAck);
}

TEST(QqValidation, RefusesWhatCouldMakeItASigningOracle) {
  // A forged body as plain_token would get us to sign timestamp + body.
  EXPECT_FALSE(DecodeValidation(Parse(R"({"plain_token":"{\"op\":0}","event_ts":"1725442341"})")));
  EXPECT_FALSE(DecodeValidation(Parse(R"({"plain_token":"abc","event_ts":"17x"})")));
  EXPECT_FALSE(DecodeValidation(Parse(R"({"plain_token":"","event_ts":"1"})")));
  EXPECT_FALSE(DecodeValidation(Parse(R"({"plain_token":"abc"})")));
  EXPECT_FALSE(DecodeValidation(Parse("[]")));
}

TEST(QqEvents, C2cIsAPrivateChatWithTheUser) {
  auto d = Parse(
      R"({"id":"ROBOT1.0_c2c.1","content":"hello there","timestamp":"2023-11-06T13:37:18+08:00",
    "author":{"user_openid":"E4F4AEA33253A2797FB897C50B81D7ED"},
    "attachments":[{"content_type":"image/png","url":"multimedia.nt.qq.com/x.png","filename":"x.png"},
                   {"content_type":"file","url":"https://f.qq.com/a.pdf","filename":"a.pdf"}]})");
  auto e = DecodeEvent("C2C_MESSAGE_CREATE", d, kAppId, "");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_TRUE(e->message);
  EXPECT_EQ(e->route, Route::kC2c);
  const auto& m = *e->message;
  EXPECT_EQ(m.chat_type, TargetType::kPerson);
  EXPECT_EQ(m.chat_id, kUser);
  EXPECT_EQ(m.sender_id, kUser);
  EXPECT_EQ(m.message_id, "ROBOT1.0_c2c.1");
  ASSERT_EQ(m.chain.size(), 4u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[1].text, "hello there");
  EXPECT_EQ(m.chain[2].type, ElementType::kImage);
  EXPECT_EQ(m.chain[2].url, "https://multimedia.nt.qq.com/x.png");
  EXPECT_EQ(m.chain[3].type, ElementType::kFile);
  EXPECT_EQ(m.chain[3].name, "a.pdf");
}

TEST(QqEvents, GroupAtMentionsTheBotAndLosesItsLeadingSpace) {
  auto d = Parse(
      R"({"id":"ROBOT1.0_g.1","content":" what time is it","group_openid":"C9F778FE6ADF9D1D1DBE395BF744A33A",
    "author":{"member_openid":"C9F778FE6ADF9D1D1DBE395BF744A33B"},"timestamp":"2023-11-06T13:37:18+08:00"})");
  auto e = DecodeEvent("GROUP_AT_MESSAGE_CREATE", d, kAppId, "");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_TRUE(e->message);
  EXPECT_EQ(e->route, Route::kGroup);
  const auto& m = *e->message;
  EXPECT_EQ(m.chat_type, TargetType::kGroup);
  EXPECT_EQ(m.chat_id, kGroup);
  EXPECT_EQ(m.sender_id, kMember);
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, kAppId);
  EXPECT_EQ(m.chain[2].text, "what time is it");
}

TEST(QqEvents, GuildAtAndDirectMessages) {
  auto at = Parse(
      R"({"id":"08e0","channel_id":"100010","guild_id":"200020","content":"<@!9988> hi <@!77> and you",
    "author":{"id":"5566","username":"ann","bot":false},"mentions":[{"id":"9988","bot":true}]})");
  auto e = DecodeEvent("AT_MESSAGE_CREATE", at, kAppId, "9988");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_TRUE(e->message);
  EXPECT_EQ(e->route, Route::kChannel);
  const auto& m = *e->message;
  EXPECT_EQ(m.chat_type, TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "100010");
  EXPECT_EQ(m.sender_id, "5566");
  EXPECT_EQ(m.sender_name, "ann");
  ASSERT_EQ(m.chain.size(), 5u);
  EXPECT_EQ(m.chain[1].target, kAppId);
  EXPECT_EQ(m.chain[2].text, "hi ");
  EXPECT_EQ(m.chain[3].type, ElementType::kAt);
  EXPECT_EQ(m.chain[3].target, "77");
  EXPECT_EQ(m.chain[4].text, " and you");

  // Webhook mode has no READY: the mention marked bot names the bot.
  auto hooked = DecodeEvent("AT_MESSAGE_CREATE", at, kAppId, "");
  ASSERT_TRUE(hooked && hooked->message);
  ASSERT_EQ(hooked->message->chain.size(), 5u);
  EXPECT_EQ(hooked->message->chain[2].text, "hi ");

  auto dm = Parse(R"({"id":"08e1","channel_id":"300030","guild_id":"400040","content":"psst",
    "author":{"id":"5566","username":"ann"},"direct_message":true,"src_guild_id":"200020"})");
  auto e2 = DecodeEvent("DIRECT_MESSAGE_CREATE", dm, kAppId, "9988");
  ASSERT_TRUE(e2 && e2->message);
  EXPECT_EQ(e2->route, Route::kDirect);
  EXPECT_EQ(e2->message->chat_type, TargetType::kPerson);
  EXPECT_EQ(e2->message->chat_id, "400040");
  EXPECT_EQ(e2->message->chain.back().text, "psst");
}

TEST(QqEvents, OtherEventsAreSkippedAndWrongShapesNamed) {
  auto plain = DecodeEvent("MESSAGE_CREATE", Parse(R"({"id":"1"})"), kAppId, "");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->message);
  EXPECT_NE(plain->skipped.find("does not mention"), std::string::npos);
  auto bad = DecodeEvent("C2C_MESSAGE_CREATE", Parse(R"({"id":"1","content":"x","author":{}})"),
                         kAppId, "");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("d.author.user_openid"), std::string::npos);
  EXPECT_FALSE(DecodeEvent("GROUP_AT_MESSAGE_CREATE",
                           Parse(R"({"id":"1","content":"x","author":{"member_openid":"A"}})"),
                           kAppId, ""));
  EXPECT_FALSE(DecodeEvent("C2C_MESSAGE_CREATE",
                           Parse(R"({"id":"../x","content":"x","author":{"user_openid":"A"}})"),
                           kAppId, ""));
}

TEST(QqToken, ExpiresInAsAStringAndRefusals) {
  auto t = DecodeAccessToken(200, R"({"access_token":"tok","expires_in":"7200"})");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->token, "tok");
  EXPECT_EQ(t->expires_in.count(), 7200);
  EXPECT_EQ(DecodeAccessToken(200, R"({"access_token":"t","expires_in":60})")->expires_in.count(),
            60);
  auto refused = DecodeAccessToken(200, R"({"code":100016,"message":"invalid appid"})");
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().final);
  EXPECT_NE(refused.error().message.find("code 100016: invalid appid"), std::string::npos);
  EXPECT_FALSE(DecodeAccessToken(502, "bad gateway").error().final);
  EXPECT_EQ(Parse(EncodeTokenRequest("1", "s")).at("clientSecret").as_string(), "s");
}

TEST(QqGateway, FramesAndCloseCodes) {
  EXPECT_EQ(*DecodeGatewayUrl(R"({"url":"wss://api.sgroup.qq.com/websocket"})"),
            "wss://api.sgroup.qq.com/websocket");
  EXPECT_FALSE(DecodeGatewayUrl(R"({"url":"http://x"})"));
  EXPECT_EQ(DecodeHello(Parse(R"({"heartbeat_interval":41250})"))->count(), 41250);
  EXPECT_FALSE(DecodeHello(Parse(R"({})")));
  auto ready = DecodeReady(Parse(
      R"({"version":1,"session_id":"s-1","user":{"id":"9988","username":"bot","bot":true},"shard":[0,1]})"));
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->user_id, "9988");
  EXPECT_FALSE(DecodeReady(Parse(R"({"user":{"id":"1"}})")));
  auto identify = Parse(EncodeIdentify("tok", kIntents));
  EXPECT_EQ(identify.at("op").as_int64(), kOpIdentify);
  EXPECT_EQ(identify.at("d").at("token").as_string(), "QQBot tok");
  EXPECT_EQ(identify.at("d").at("intents").as_int64(),
            (1 << 0) | (1 << 1) | (1 << 12) | (1 << 25) | (1 << 26) | (1 << 30));
  auto resume = Parse(EncodeResume("tok", "s-1", 7));
  EXPECT_EQ(resume.at("op").as_int64(), kOpResume);
  EXPECT_EQ(resume.at("d").at("seq").as_int64(), 7);
  EXPECT_EQ(EncodeHeartbeat(5), R"({"op":1,"d":5})");
  EXPECT_EQ(EncodeHeartbeat(std::nullopt), R"({"op":1,"d":null})");
  EXPECT_EQ(ClassifyClose(1006), CloseAction::kResume);
  EXPECT_EQ(ClassifyClose(4004), CloseAction::kNewToken);
  EXPECT_EQ(ClassifyClose(4009), CloseAction::kIdentify);
  EXPECT_EQ(ClassifyClose(4008), CloseAction::kWait);
  EXPECT_EQ(ClassifyClose(4915), CloseAction::kFatal);
  EXPECT_EQ(ClassifyClose(4014), CloseAction::kFatal);
  EXPECT_EQ(ClassifyClose(4902), CloseAction::kIdentify);
  EXPECT_NE(DescribeClose(4014, "").find("intents"), std::string::npos);
}

TEST(QqSend, RoutesAndBodies) {
  EXPECT_EQ(RouteFor(TargetType::kPerson, kUser), Route::kC2c);
  EXPECT_EQ(RouteFor(TargetType::kGroup, kGroup), Route::kGroup);
  EXPECT_EQ(RouteFor(TargetType::kGroup, "100010"), Route::kChannel);
  EXPECT_EQ(RouteFor(TargetType::kPerson, "400040"), Route::kDirect);
  EXPECT_EQ(MessagesPath(Route::kC2c, "U"), "/v2/users/U/messages");
  EXPECT_EQ(MessagesPath(Route::kGroup, "G"), "/v2/groups/G/messages");
  EXPECT_EQ(MessagesPath(Route::kChannel, "1"), "/channels/1/messages");
  EXPECT_EQ(MessagesPath(Route::kDirect, "2"), "/dms/2/messages");
  EXPECT_EQ(FilesPath(Route::kGroup, "G"), "/v2/groups/G/files");

  auto text = Parse(EncodeText(Route::kGroup, "hi", "m1", 2));
  EXPECT_EQ(text.at("msg_type").as_int64(), 0);
  EXPECT_EQ(text.at("msg_id").as_string(), "m1");
  EXPECT_EQ(text.at("msg_seq").as_int64(), 2);
  auto channel = Parse(EncodeText(Route::kChannel, "hi", "m1", 2));
  EXPECT_FALSE(channel.as_object().contains("msg_seq"));
  auto proactive = Parse(EncodeText(Route::kC2c, "hi", "", 1));
  EXPECT_FALSE(proactive.as_object().contains("msg_id"));
  auto media = Parse(EncodeMedia("FI", "m1", 3));
  EXPECT_EQ(media.at("msg_type").as_int64(), 7);
  EXPECT_EQ(media.at("media").at("file_info").as_string(), "FI");
  EXPECT_EQ(media.at("content").as_string(), " ");
  EXPECT_EQ(*DecodeFileInfo(R"({"file_uuid":"u","file_info":"FI","ttl":3600})"), "FI");

  domain::OutgoingMessage out{TargetType::kGroup,
                              std::string(kGroup),
                              {At("x"), Text("look"), Image("https://e.com/c.png"),
                               Image("", "data:image/png;base64,AAAA")}};
  ASSERT_TRUE(CheckDeliverable(out));
  auto parts = EncodeParts(out, Route::kGroup);
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].text, "look");
  EXPECT_EQ((*parts)[1].url, "https://e.com/c.png");
  EXPECT_EQ((*parts)[2].base64, "AAAA");
  auto upload = Parse(EncodeUpload((*parts)[1]));
  EXPECT_EQ(upload.at("file_type").as_int64(), 1);
  EXPECT_FALSE(upload.at("srv_send_msg").as_bool());
  EXPECT_FALSE(EncodeParts(out, Route::kChannel));  // a base64 image cannot go to a guild
  auto guild = EncodeParts({TargetType::kGroup, "1", {At("77"), Text(" hi")}}, Route::kChannel);
  ASSERT_TRUE(guild);
  EXPECT_EQ((*guild)[0].text, "<@77> hi");

  EXPECT_FALSE(CheckDeliverable({TargetType::kPerson, "a/b", {Text("x")}}));
  EXPECT_FALSE(CheckDeliverable({TargetType::kPerson, "..", {Text("x")}}));
  EXPECT_FALSE(CheckDeliverable({TargetType::kPerson, "A", {Image("")}}));
  EXPECT_FALSE(CheckDeliverable({TargetType::kPerson, "A", {}}));
}

TEST(QqErrors, DescribedWithQqsCode) {
  EXPECT_EQ(DescribeError(400, R"({"message":"msg limit exceed","code":22009})"),
            "code 22009: msg limit exceed");
  EXPECT_EQ(DescribeError(502, "<html>"), "HTTP 502");
  EXPECT_TRUE(IsTokenRejected(401, "{}"));
  EXPECT_TRUE(IsTokenRejected(200, R"({"code":11244,"message":"token not exist or expire"})"));
  EXPECT_FALSE(IsTokenRejected(400, R"({"code":22009})"));
  EXPECT_EQ(SentMessageId(R"({"id":"abc","timestamp":1})"), "abc");
}

}  // namespace
}  // namespace sb::platforms::qqofficial
