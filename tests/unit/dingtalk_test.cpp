// The DingTalk codec: Stream-mode frames and acknowledgements as the official Python SDK
// (dingtalk-stream-sdk-python frames.py, handlers.py, stream.py) writes them, robot messages as
// the robot "receive message" document's sample shows them, and the session-webhook and OpenAPI
// bodies going out.
#include <gtest/gtest.h>

#include <string>

#include "platforms/dingtalk/dingtalk_codec.hpp"
#include "util/json.hpp"

namespace sb::platforms::dingtalk {
namespace {

using domain::ElementType;
using domain::TargetType;

util::JsonObject Obj(std::string_view text) { return util::ParseJson(text)->as_object(); }

// The group sample of DingTalk's "receive messages" document (ids shortened).
constexpr std::string_view kGroupSample = R"({
  "conversationId": "cid6KeBBLoveMJOGXoYKF5x7EeiodoA==",
  "atUsers": [{"dingtalkId": "$:LWCP_v1:$Ntfs3NGAkBz"}],
  "chatbotCorpId": "dinge8a565", "chatbotUserId": "$:LWCP_v1:$Ntfs3NGAkBz",
  "msgId": "msgdHuk2F+9vX+7H/XY9ReJIA==", "senderNick": "Yang", "isAdmin": true,
  "senderStaffId": "user123", "sessionWebhookExpiredTime": 1613635652738,
  "createAt": 1613630252678, "senderCorpId": "dinge8a565", "conversationType": "2",
  "senderId": "$:LWCP_v1:$Ff09GIxxxxx", "conversationTitle": "robot test", "isInAtList": true,
  "sessionWebhook": "https://oapi.dingtalk.com/robot/sendBySession?session=xxxxx",
  "text": {"content": " @Helper hello"}, "robotCode": "normal", "msgtype": "text"})";

TEST(DingTalkStream, OpenConnectionSubscribesToRobotMessagesAndEvents) {
  auto body = Obj(EncodeOpenConnection("ding-id", "ding-secret"));
  EXPECT_EQ(body["clientId"], "ding-id");
  EXPECT_EQ(body["clientSecret"], "ding-secret");
  auto subs = body["subscriptions"].as_array();
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0], util::Json(util::JsonObject{{"type", "EVENT"}, {"topic", "*"}}));
  EXPECT_EQ(subs[1], util::Json(util::JsonObject{{"type", "CALLBACK"},
                                                 {"topic", "/v1.0/im/bot/messages/get"}}));
}

TEST(DingTalkStream, ConnectionAndUrl) {
  auto c = DecodeConnection(R"({"endpoint":"wss://wss-open-connection.dingtalk.com:443/connect",
                                "ticket":"a b+c/=="})");
  ASSERT_TRUE(c);
  EXPECT_EQ(StreamUrl(*c),
            "wss://wss-open-connection.dingtalk.com:443/connect?ticket=a+b%2Bc%2F%3D%3D");
  c->endpoint = "ws://127.0.0.1:9/connect?x=1";
  EXPECT_EQ(StreamUrl(*c), "ws://127.0.0.1:9/connect?x=1&ticket=a+b%2Bc%2F%3D%3D");
  EXPECT_FALSE(DecodeConnection(R"({"endpoint":"https://x/connect","ticket":"t"})"));
  EXPECT_FALSE(DecodeConnection(R"({"endpoint":"wss://x/connect"})"));
  EXPECT_FALSE(DecodeConnection("not json"));
}

TEST(DingTalkStream, FramesDecodeAndAcknowledgeAsTheSdkDoes) {
  auto ping = DecodeFrame(R"({"specVersion":"1.0","type":"SYSTEM","headers":{"appId":"a",
      "connectionId":"c","contentType":"application/json","messageId":"m-1","time":"1690000000000",
      "topic":"ping"},"data":"{\"opaque\":\"8ac2\"}"})");
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->type, "SYSTEM");
  EXPECT_EQ(ping->topic, "ping");
  EXPECT_EQ(ping->message_id, "m-1");
  EXPECT_EQ(ping->data, R"({"opaque":"8ac2"})");
  auto ack = Obj(EncodeAck(ping->message_id, AckData(*ping)));
  EXPECT_EQ(ack["code"], 200);
  EXPECT_EQ(ack["headers"].as_object()["messageId"], "m-1");
  EXPECT_EQ(ack["headers"].as_object()["contentType"], "application/json");
  EXPECT_EQ(ack["message"], "OK");
  EXPECT_EQ(ack["data"], R"({"opaque":"8ac2"})");  // a string holding the echoed JSON

  auto callback = DecodeFrame(R"({"specVersion":"1.0","type":"CALLBACK","headers":{
      "messageId":"m-2","topic":"/v1.0/im/bot/messages/get"},"data":"{}"})");
  ASSERT_TRUE(callback);
  EXPECT_EQ(AckData(*callback), R"({"response":"OK"})");

  EXPECT_FALSE(DecodeFrame("[]"));
  EXPECT_FALSE(DecodeFrame(R"({"type":"SYSTEM"})"));
  EXPECT_FALSE(DecodeFrame(R"({"type":"SYSTEM","headers":{},"data":{"x":1}})"));
  EXPECT_FALSE(DecodeFrame("{"));
  auto no_id = DecodeFrame(R"({"type":"EVENT","headers":{"topic":"x"}})");
  ASSERT_TRUE(no_id);
  EXPECT_EQ(no_id->message_id, "");
}

TEST(DingTalkCallback, SignIsHmacSha256OfTimestampAndSecret) {
  // Computed independently with Python's hmac module.
  EXPECT_EQ(CallbackSign("this is secret", "1577262236757"),
            "hmPWwU+7lVdm3ZZz0r9tSfx0L4Q26jWOZr9+Gs6EZQM=");
  const std::int64_t now = 1577262236757;
  const std::string sign = CallbackSign("this is secret", "1577262236757");
  EXPECT_TRUE(VerifyCallback("this is secret", "1577262236757", sign, now));
  EXPECT_TRUE(VerifyCallback("this is secret", "1577262236757", sign, now + 3'599'000));
  EXPECT_FALSE(VerifyCallback("this is secret", "1577262236757", sign, now + 3'601'000));
  EXPECT_FALSE(VerifyCallback("this is secret", "1577262236757", sign, now - 3'601'000));
  EXPECT_FALSE(VerifyCallback("other secret", "1577262236757", sign, now));
  EXPECT_FALSE(VerifyCallback("this is secret", "1577262236758", sign, now));
  EXPECT_FALSE(VerifyCallback("this is secret", "+1577262236757", sign, now));
  EXPECT_FALSE(VerifyCallback("this is secret", "1577262236757", "", now));
  EXPECT_FALSE(VerifyCallback("", "1577262236757", CallbackSign("", "1577262236757"), now));
}

TEST(DingTalkMessage, GroupMentionBecomesAGroupMessageWithTheBotAt) {
  auto m = DecodeBotMessage(kGroupSample, "Helper", "Helper");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->message);
  const auto& msg = *m->message;
  EXPECT_EQ(msg.chat_type, TargetType::kGroup);
  EXPECT_EQ(msg.chat_id, "cid6KeBBLoveMJOGXoYKF5x7EeiodoA==");
  EXPECT_EQ(msg.sender_id, "user123");
  EXPECT_EQ(msg.sender_name, "Yang");
  EXPECT_EQ(msg.message_id, "msgdHuk2F+9vX+7H/XY9ReJIA==");
  ASSERT_EQ(msg.chain.size(), 3u);
  EXPECT_EQ(msg.chain[0].type, ElementType::kSource);
  EXPECT_EQ(msg.chain[1].type, ElementType::kAt);
  EXPECT_EQ(msg.chain[1].target, "Helper");
  EXPECT_EQ(msg.chain[2].text, "hello");
  EXPECT_EQ(m->session_webhook, "https://oapi.dingtalk.com/robot/sendBySession?session=xxxxx");
  EXPECT_EQ(m->session_webhook_expires_ms, 1613635652738);
}

TEST(DingTalkMessage, GroupWithoutMentionIsSkippedAndPrivateIsByStaffId) {
  std::string no_at(kGroupSample);
  no_at.replace(no_at.find("\"isInAtList\": true"), 18, "\"isInAtList\": false");
  auto skipped = DecodeBotMessage(no_at, "Helper", "Helper");
  ASSERT_TRUE(skipped);
  EXPECT_FALSE(skipped->message);
  EXPECT_NE(skipped->skipped, "");

  auto one = DecodeBotMessage(
      R"({"conversationType":"1","msgId":"m1","senderStaffId":"manager1234","senderId":"$:x",
          "conversationId":"cidp","text":{"content":"hi there"},"msgtype":"text",
          "sessionWebhook":"ftp://evil/","sessionWebhookExpiredTime":"1700000000000"})",
      "Helper", "Helper");
  ASSERT_TRUE(one && one->message);
  EXPECT_EQ(one->message->chat_type, TargetType::kPerson);
  EXPECT_EQ(one->message->chat_id, "manager1234");
  EXPECT_EQ(one->message->chain.size(), 2u);  // no At in a private chat
  EXPECT_EQ(one->session_webhook, "");        // only http(s) webhooks are kept
}

TEST(DingTalkMessage, RichTextPicturesAndAudio) {
  auto rich = DecodeBotMessage(
      R"({"conversationType":"1","msgId":"m2","senderStaffId":"u1","msgtype":"richText",
          "content":{"richText":[{"text":"look"},{"type":"picture","downloadCode":"dc1",
          "pictureDownloadCode":"p1"},{"text":"and this"}]}})",
      "Helper", "Helper");
  ASSERT_TRUE(rich && rich->message) << (rich ? rich->skipped : rich.error().message);
  const auto& chain = rich->message->chain;
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[1].text, "look");
  EXPECT_EQ(chain[2].type, ElementType::kImage);
  EXPECT_EQ(chain[3].text, "and this");
  ASSERT_EQ(rich->media.size(), 1u);
  EXPECT_EQ(rich->media[0].element, 2u);
  EXPECT_EQ(rich->media[0].download_code, "dc1");

  auto picture = DecodeBotMessage(
      R"({"conversationType":"1","msgId":"m3","senderStaffId":"u1","msgtype":"picture",
          "content":{"downloadCode":"dc2"}})",
      "Helper", "Helper");
  ASSERT_TRUE(picture && picture->message);
  EXPECT_EQ(picture->media.at(0).download_code, "dc2");

  auto audio = DecodeBotMessage(
      R"({"conversationType":"1","msgId":"m4","senderStaffId":"u1","msgtype":"audio",
          "content":{"downloadCode":"dc3","recognition":"spoken words"}})",
      "Helper", "Helper");
  ASSERT_TRUE(audio && audio->message);
  EXPECT_EQ(audio->message->chain.back().text, "spoken words");

  auto file = DecodeBotMessage(
      R"({"conversationType":"1","msgId":"m5","senderStaffId":"u1","msgtype":"file",
          "content":{"downloadCode":"dc4","fileName":"a.pdf"}})",
      "Helper", "Helper");
  ASSERT_TRUE(file && file->message);
  EXPECT_EQ(file->message->chain.back().type, ElementType::kFile);
  EXPECT_EQ(file->message->chain.back().name, "a.pdf");
  ASSERT_EQ(file->media.size(), 1u);
  EXPECT_TRUE(file->media[0].file);
  EXPECT_EQ(file->media[0].download_code, "dc4");

  auto video = DecodeBotMessage(
      R"({"conversationType":"1","msgId":"m6","senderStaffId":"u1","msgtype":"video",
          "content":{"downloadCode":"dc5"}})",
      "Helper", "Helper");
  ASSERT_TRUE(video);
  EXPECT_FALSE(video->message);
}

TEST(DingTalkMessage, MalformedMessagesNameTheField) {
  EXPECT_FALSE(DecodeBotMessage("{", "b", "b"));
  EXPECT_FALSE(DecodeBotMessage(R"({"conversationType":"1","senderStaffId":"u"})", "b", "b"));
  auto bad_type =
      DecodeBotMessage(R"({"msgId":"m","conversationType":"3","senderStaffId":"u"})", "b", "b");
  ASSERT_FALSE(bad_type);
  EXPECT_NE(bad_type.error().message.find("conversationType"), std::string::npos);
  EXPECT_FALSE(DecodeBotMessage(
      R"({"msgId":"m","conversationType":"2","senderStaffId":"u","isInAtList":true,
          "msgtype":"text","text":{"content":"x"}})",
      "b", "b"));  // a group without conversationId
  EXPECT_FALSE(DecodeBotMessage(
      R"({"msgId":"m","conversationType":"1","senderStaffId":"u","msgtype":"text","text":"x"})",
      "b", "b"));
}

TEST(DingTalkAnswers, TokensErrorsAndWebhookAnswers) {
  auto token = DecodeAccessToken(R"({"accessToken":"fw8ef8we8f76e6f7s8df8s","expireIn":7200})");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->token, "fw8ef8we8f76e6f7s8df8s");
  EXPECT_EQ(token->expires_in_seconds, 7200);
  EXPECT_FALSE(DecodeAccessToken(R"({"expireIn":7200})"));
  EXPECT_EQ(DescribeError(400, R"({"code":"invalidParameter","message":"bad robotCode",
                                   "requestid":"r1"})"),
            "HTTP 400: invalidParameter bad robotCode");
  EXPECT_EQ(DescribeError(200, R"({"errcode":300001,"errmsg":"session expired"})"),
            "HTTP 200: 300001 session expired");
  EXPECT_EQ(DescribeError(502, "<html>"), "HTTP 502");
  EXPECT_TRUE(IsTokenRejected(401, "{}"));
  EXPECT_TRUE(IsTokenRejected(400, R"({"code":"InvalidAuthentication","message":"x"})"));
  EXPECT_FALSE(IsTokenRejected(400, R"({"code":"invalidParameter"})"));
  EXPECT_TRUE(WebhookAccepted(200, R"({"errcode":0,"errmsg":"ok"})"));
  EXPECT_FALSE(WebhookAccepted(200, R"({"errcode":300001,"errmsg":"expired"})"));
  EXPECT_FALSE(WebhookAccepted(404, "{}"));
  EXPECT_EQ(ProcessQueryKey(R"({"processQueryKey":"k1","invalidStaffIdList":[]})"), "k1");
  auto url = DecodeDownloadUrl(R"({"downloadUrl":"https://down.dingtalk.com/a.png"})");
  ASSERT_TRUE(url);
  EXPECT_FALSE(DecodeDownloadUrl(R"({"downloadUrl":"file:///etc/passwd"})"));
}

domain::OutgoingMessage Out(TargetType type, std::string target, domain::MessageChain chain) {
  return {type, std::move(target), std::move(chain)};
}

domain::MessageElement Plain(std::string text) {
  domain::MessageElement e;
  e.text = std::move(text);
  return e;
}

TEST(DingTalkOutgoing, CheckDeliverable) {
  EXPECT_TRUE(CheckDeliverable(Out(TargetType::kPerson, "u1", {Plain("hi")})));
  EXPECT_FALSE(CheckDeliverable(Out(TargetType::kPerson, "", {Plain("hi")})));
  domain::MessageElement image;
  image.type = ElementType::kImage;
  image.base64 = "data:image/png;base64,AAAA";
  auto refused = CheckDeliverable(Out(TargetType::kGroup, "cid", {Plain("x"), image}));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("message_chain[1]"), std::string::npos);
  image.url = "https://example.com/cat.png";
  EXPECT_TRUE(CheckDeliverable(Out(TargetType::kGroup, "cid", {image})));
  domain::MessageElement voice;
  voice.type = ElementType::kVoice;
  EXPECT_FALSE(CheckDeliverable(Out(TargetType::kGroup, "cid", {voice})));
  domain::MessageElement source;
  source.type = ElementType::kSource;
  EXPECT_FALSE(CheckDeliverable(Out(TargetType::kGroup, "cid", {source})));
}

TEST(DingTalkOutgoing, WebhookRepliesAndRobotSends) {
  domain::MessageElement at;
  at.type = ElementType::kAt;
  at.target = "manager1234";
  auto rendered = Render(Out(TargetType::kGroup, "cid1", {at, Plain(" done\nsecond line")}), true);
  ASSERT_EQ(rendered.pieces.size(), 1u);
  auto hook = Obj(EncodeWebhookReply(rendered, 0));
  EXPECT_EQ(hook["msgtype"], "markdown");
  EXPECT_EQ(hook["markdown"].as_object()["text"], "@manager1234 done\nsecond line");
  EXPECT_EQ(hook["markdown"].as_object()["title"], "@manager1234 done");
  EXPECT_EQ(hook["at"].as_object()["atUserIds"].as_array().at(0), "manager1234");

  auto group = Obj(EncodeRobotSend(rendered, 0, "dingrobot", TargetType::kGroup, "cid1"));
  EXPECT_EQ(group["robotCode"], "dingrobot");
  EXPECT_EQ(group["openConversationId"], "cid1");
  EXPECT_EQ(group["msgKey"], "sampleMarkdown");
  auto param = Obj(group["msgParam"].as_string());  // msgParam is a JSON string
  EXPECT_EQ(param["text"], "@manager1234 done\nsecond line");

  auto plain = Render(Out(TargetType::kPerson, "u1", {Plain("hello")}), false);
  auto text_hook = Obj(EncodeWebhookReply(plain, 0));
  EXPECT_EQ(text_hook["msgtype"], "text");
  EXPECT_EQ(text_hook["text"].as_object()["content"], "hello");
  auto person = Obj(EncodeRobotSend(plain, 0, "dingrobot", TargetType::kPerson, "u1"));
  EXPECT_EQ(person["userIds"].as_array().at(0), "u1");
  EXPECT_EQ(person["msgKey"], "sampleText");
  EXPECT_EQ(person["msgParam"], R"({"content":"hello"})");
  EXPECT_FALSE(person.contains("openConversationId"));
}

TEST(DingTalkOutgoing, LongTextIsCutAndImagesBecomeMarkdown) {
  std::string long_text;
  for (int i = 0; i < 1500; ++i) long_text += "word ";
  auto rendered = Render(Out(TargetType::kPerson, "u1", {Plain(long_text)}), false);
  ASSERT_EQ(rendered.pieces.size(), 2u);
  EXPECT_EQ(rendered.pieces[0] + rendered.pieces[1], long_text);
  domain::MessageElement image;
  image.type = ElementType::kImage;
  image.url = "https://example.com/cat.png";
  EXPECT_EQ(Render(Out(TargetType::kPerson, "u1", {Plain("see"), image}), true).pieces.at(0),
            "see\n![image](https://example.com/cat.png)\n");
  EXPECT_EQ(MarkdownTitle(""), "message");
  EXPECT_EQ(MarkdownTitle("## Title here\nbody"), "Title here");
}

}  // namespace
}  // namespace sb::platforms::dingtalk
