// The WeCom AI bot adapter's pure parts: callbacks shaped as the official SDK's types and LangBot's
// parser read them, the long connection's frames, the encrypted webhook answer, media decryption,
// what a reply can carry, and the webhook reply streams on a fixed time.
#include <gtest/gtest.h>

#include <string>

#include "platforms/common/signatures.hpp"
#include "platforms/common/wechat_crypto.hpp"
#include "platforms/wecombot/wecombot_codec.hpp"
#include "platforms/wecombot/wecombot_streams.hpp"
#include "util/crypto.hpp"
#include "util/json.hpp"

namespace sb::platforms::wecombot {
namespace {

using domain::ElementType;
using namespace std::chrono_literals;

util::Json Parse(std::string_view text) { return *util::ParseJson(text); }

domain::MessageElement Element(ElementType type, std::string text = {}, std::string url = {},
                               std::string target = {}) {
  domain::MessageElement e;
  e.type = type;
  e.text = std::move(text);
  e.url = std::move(url);
  e.target = std::move(target);
  return e;
}

TEST(WeComBotCallback, PrivateTextIsAMessageFromTheSender) {
  auto cb = DecodeCallback(Parse(R"({"msgid":"CAIQ16HMjQYY","aibotid":"AIBOTID",
    "chattype":"single","from":{"userid":"zhangsan"},"response_url":"https://x",
    "msgtype":"text","text":{"content":"hello"}})"));
  ASSERT_TRUE(cb) << cb.error().message;
  EXPECT_EQ(cb->kind, CallbackKind::kMessage);
  ASSERT_TRUE(cb->message);
  const auto& m = *cb->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "zhangsan");
  EXPECT_EQ(m.sender_id, "zhangsan");
  EXPECT_EQ(m.message_id, "CAIQ16HMjQYY");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[0].id, "CAIQ16HMjQYY");
  EXPECT_EQ(m.chain[1].text, "hello");
}

TEST(WeComBotCallback, AQuotedMessageComesAsAQuoteWithItsText) {
  // The shape of 接收消息 (document/path/100719): `quote` beside the message's own fields.
  auto cb = DecodeCallback(Parse(R"({"msgid":"m9","aibotid":"AIBOTID","chattype":"single",
    "from":{"userid":"zhangsan"},"msgtype":"text","text":{"content":"and then?"},
    "quote":{"msgtype":"text","text":{"content":"the build is green"}}})"));
  ASSERT_TRUE(cb && cb->message);
  const auto& m = cb->message->chain;
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1].type, ElementType::kQuote);
  EXPECT_EQ(m[1].text, "the build is green");
  EXPECT_EQ(m[2].text, "and then?");
  auto mixed = DecodeCallback(Parse(R"({"msgid":"m10","aibotid":"A","chattype":"single",
    "from":{"userid":"u"},"msgtype":"text","text":{"content":"what is it?"},
    "quote":{"msgtype":"mixed","mixed":{"msg_item":[{"msgtype":"text","text":{"content":"see "}},
    {"msgtype":"image","image":{"url":"https://x/y"}}]}}})"));
  ASSERT_TRUE(mixed && mixed->message);
  EXPECT_EQ(mixed->message->chain[1].text, "see [Image]");
  EXPECT_TRUE(mixed->images.empty());  // a quoted image is not fetched
  auto voice = DecodeCallback(Parse(R"({"msgid":"m11","aibotid":"A","chattype":"single",
    "from":{"userid":"u"},"msgtype":"text","text":{"content":"really?"},
    "quote":{"msgtype":"voice","voice":{"content":"said aloud"}}})"));
  ASSERT_TRUE(voice && voice->message);
  EXPECT_EQ(voice->message->chain[1].text, "said aloud");
}

TEST(WeComBotCallback, GroupMessageNamesTheChatAndMentionsTheBot) {
  auto cb = DecodeCallback(Parse(R"({"msgid":"m2","aibotid":"AIBOTID","chatid":"wrkGroup",
    "chattype":"group","from":{"userid":"lisi"},"msgtype":"text",
    "text":{"content":"@RobotA what time is it"}})"),
                           "CONFIGURED");
  ASSERT_TRUE(cb && cb->message);
  const auto& m = *cb->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "wrkGroup");
  EXPECT_EQ(m.sender_id, "lisi");
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, "CONFIGURED");  // the account id the adapter reported
  EXPECT_EQ(m.chain[2].text, "@RobotA what time is it");
}

TEST(WeComBotCallback, MixedAndImageMessagesLeaveImagesToFetch) {
  auto cb = DecodeCallback(Parse(R"({"msgid":"m3","chattype":"single","from":{"userid":"u"},
    "msgtype":"mixed","mixed":{"msg_item":[{"msgtype":"text","text":{"content":"look "}},
    {"msgtype":"image","image":{"url":"https://img/1","aeskey":"KEY"}}]}})"));
  ASSERT_TRUE(cb && cb->message);
  ASSERT_EQ(cb->message->chain.size(), 3u);
  EXPECT_EQ(cb->message->chain[2].type, ElementType::kImage);
  ASSERT_EQ(cb->images.size(), 1u);
  EXPECT_EQ(cb->images[0].element, 2u);
  EXPECT_EQ(cb->images[0].url, "https://img/1");
  EXPECT_EQ(cb->images[0].aeskey, "KEY");

  auto image = DecodeCallback(Parse(R"({"msgid":"m4","chattype":"single","from":{"userid":"u"},
    "msgtype":"image","image":{"url":"https://img/2"}})"));
  ASSERT_TRUE(image && image->message);
  ASSERT_EQ(image->images.size(), 1u);
  EXPECT_EQ(image->images[0].aeskey, "");  // webhook mode: EncodingAESKey decrypts it
}

TEST(WeComBotCallback, RefreshesEventsAndOtherKinds) {
  auto refresh = DecodeCallback(Parse(R"({"msgid":"r","aibotid":"A","chattype":"single",
    "from":{"userid":"u"},"msgtype":"stream","stream":{"id":"STREAMID"}})"));
  ASSERT_TRUE(refresh);
  EXPECT_EQ(refresh->kind, CallbackKind::kStreamRefresh);
  EXPECT_EQ(refresh->stream_id, "STREAMID");

  auto event = DecodeCallback(Parse(R"({"msgid":"e","msgtype":"event",
    "event":{"eventtype":"disconnected_event"}})"));
  ASSERT_TRUE(event);
  EXPECT_EQ(event->kind, CallbackKind::kEvent);
  EXPECT_EQ(event->event_type, "disconnected_event");

  auto file = DecodeCallback(Parse(R"({"msgid":"f","chattype":"single","from":{"userid":"u"},
    "msgtype":"file","file":{"url":"https://f"}})"));
  ASSERT_TRUE(file);
  EXPECT_FALSE(file->message);
  EXPECT_NE(file->skipped.find("file"), std::string::npos);

  for (std::string_view bad :
       {R"([])", R"({"msgtype":"text","from":{"userid":"u"}})",
        R"({"msgid":"1","msgtype":"text","text":{"content":"x"}})",
        R"({"msgid":"1","chattype":"group","from":{"userid":"u"},"msgtype":"text"})",
        R"({"msgid":"1","chattype":"channel","from":{"userid":"u"},"msgtype":"text"})",
        R"({"msgtype":"stream","stream":{}})"}) {
    auto r = DecodeCallback(Parse(bad));
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  }
  std::string long_id(300, 'x');
  EXPECT_FALSE(DecodeCallback(Parse(R"({"msgid":")" + long_id + R"("})")));
}

TEST(WeComBotFrames, EncodeAndDecode) {
  auto sub = Parse(EncodeSubscribe("aibot_subscribe_1_ab", "BOT", "SECRET"));
  EXPECT_EQ(sub, Parse(R"({"cmd":"aibot_subscribe","headers":{"req_id":"aibot_subscribe_1_ab"},
    "body":{"bot_id":"BOT","secret":"SECRET"}})"));
  EXPECT_EQ(Parse(EncodePing("ping_1")), Parse(R"({"cmd":"ping","headers":{"req_id":"ping_1"}})"));
  EXPECT_EQ(Parse(EncodeCommand("aibot_respond_msg", "R1", StreamBody("S", "hi", true))),
            Parse(R"({"cmd":"aibot_respond_msg","headers":{"req_id":"R1"},
              "body":{"msgtype":"stream","stream":{"id":"S","finish":true,"content":"hi"}}})"));
  EXPECT_EQ(util::Json(SendMsgBody("wrk1", "x")),
            Parse(R"({"chatid":"wrk1","msgtype":"markdown","markdown":{"content":"x"}})"));

  auto ack = DecodeFrame(R"({"headers":{"req_id":"R1"},"errcode":846608,
    "errmsg":"stream message update expired"})");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->cmd, "");
  EXPECT_EQ(ack->req_id, "R1");
  EXPECT_EQ(ack->errcode, kErrStreamExpired);
  EXPECT_EQ(DescribeAck(*ack), "errcode 846608 (stream message update expired)");
  auto callback = DecodeFrame(R"({"cmd":"aibot_msg_callback","headers":{"req_id":"R2"},
    "body":{"msgid":"m"}})");
  ASSERT_TRUE(callback);
  EXPECT_EQ(callback->cmd, "aibot_msg_callback");
  EXPECT_TRUE(callback->body.is_object());
  EXPECT_FALSE(DecodeFrame("not json"));
  EXPECT_FALSE(DecodeFrame("[1]"));

  const std::string id = NewReqId("ping", 1700000000123);
  EXPECT_TRUE(id.starts_with("ping_1700000000123_"));
  EXPECT_EQ(id.size(), std::string("ping_1700000000123_").size() + 8);
}

TEST(WeComBotEnvelope, EncryptedForTheEmptyReceiveIdAndSigned) {
  auto key = common::WeChatAesKey("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG");
  ASSERT_TRUE(key);
  auto body = EncodeEnvelope(*key, "TOKEN", R"({"msgtype":"stream"})", "1700000000", "nonce1",
                             std::string(16, 'r'));
  ASSERT_TRUE(body);
  auto env = Parse(*body).as_object();
  const std::string encrypt(env.at("encrypt").as_string());
  EXPECT_EQ(env.at("timestamp").as_string(), "1700000000");
  EXPECT_EQ(env.at("nonce").as_string(), "nonce1");
  EXPECT_TRUE(common::WeChatVerifySignature("TOKEN", "1700000000", "nonce1", encrypt,
                                            std::string(env.at("msgsignature").as_string())));
  auto plain = common::WeChatDecrypt(*key, encrypt, "");
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, R"({"msgtype":"stream"})");
  EXPECT_FALSE(common::WeChatDecrypt(*key, encrypt, "corpid"));
}

TEST(WeComBotMedia, DecryptsWithTheBase64KeyPaddedTo32) {
  std::string key(32, '\0');
  for (int i = 0; i < 32; ++i) key[i] = static_cast<char>(i * 7 + 1);
  std::string aeskey = common::Base64Encode(key);
  while (!aeskey.empty() && aeskey.back() == '=') aeskey.pop_back();  // WeCom sends it unpadded
  const std::string data = "\x89PNG fake image bytes";
  std::string padded = data;
  const std::size_t pad = 32 - padded.size() % 32;
  padded.append(pad, static_cast<char>(pad));
  std::string encrypted;
  ASSERT_TRUE(util::Aes256CbcEncrypt(key, key.substr(0, 16), padded, encrypted));
  auto plain = DecryptMedia(aeskey, encrypted);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(*plain, data);
  EXPECT_TRUE(ImageDataUrl(*plain).starts_with("data:image/png;base64,"));
  EXPECT_FALSE(DecryptMedia("short", encrypted));
  EXPECT_FALSE(DecryptMedia(aeskey, encrypted.substr(1)));
  encrypted.back() ^= 1;
  EXPECT_FALSE(DecryptMedia(aeskey, encrypted));
}

TEST(WeComBotOutgoing, CheckRenderAndSplit) {
  domain::OutgoingMessage ok{domain::TargetType::kGroup, "wrk1", {}};
  ok.chain.push_back(Element(ElementType::kAt, "", "", "lisi"));
  ok.chain.push_back(Element(ElementType::kPlain, "hello"));
  ok.chain.push_back(Element(ElementType::kImage, "", "https://x/cat.png"));
  EXPECT_TRUE(CheckDeliverable(ok));
  EXPECT_EQ(RenderMarkdown(ok.chain), "hello\n![image](https://x/cat.png)\n");

  domain::OutgoingMessage b64 = ok;
  b64.chain[2] = Element(ElementType::kImage);
  b64.chain[2].base64 = "data:image/png;base64,AA==";
  auto r = CheckDeliverable(b64);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("message_chain[2]"), std::string::npos);
  domain::OutgoingMessage empty{domain::TargetType::kPerson, "u", {}};
  EXPECT_FALSE(CheckDeliverable(empty));
  domain::OutgoingMessage only_at{domain::TargetType::kGroup, "g", {ok.chain[0]}};
  EXPECT_FALSE(CheckDeliverable(only_at));
  domain::OutgoingMessage no_target{domain::TargetType::kPerson, "", ok.chain};
  EXPECT_FALSE(CheckDeliverable(no_target));

  EXPECT_TRUE(SplitBytes("", 10).empty());
  EXPECT_EQ(SplitBytes("abc\ndef\nghi", 8), (std::vector<std::string>{"abc\ndef\n", "ghi"}));
  // Three-byte characters are never cut.
  auto pieces = SplitBytes("一二三四五", 7);
  EXPECT_EQ(pieces, (std::vector<std::string>{"一二", "三四", "五"}));
}

util::TimePoint At(int ms) { return util::TimePoint(std::chrono::milliseconds(ms)); }

std::shared_ptr<common::SendOnce> Recorder(std::vector<util::Result<domain::SendReceipt>>& out) {
  return common::MakeSendOnce([&out](util::Result<domain::SendReceipt> r) { out.push_back(r); });
}

TEST(WeComBotStreams, AReplyIsHandedOutOnceFinishedAndThenClosed) {
  StreamOptions options;
  options.capacity = 4;
  options.max_lifetime = 60s;
  ReplyStreams streams(options);
  auto opened = streams.Open("msg1", "S1", At(0));
  EXPECT_TRUE(opened.fresh);
  EXPECT_EQ(opened.stream_id, "S1");
  auto again = streams.Open("msg1", "S2", At(10));
  EXPECT_FALSE(again.fresh);  // a redelivery keeps its stream
  EXPECT_EQ(again.stream_id, "S1");

  EXPECT_FALSE(streams.Ready("S1", At(100)));
  auto empty = streams.Take("S1", At(100));
  EXPECT_TRUE(empty.known);
  EXPECT_FALSE(empty.finish);
  EXPECT_EQ(empty.content, "");

  bool woken = false;
  streams.OnChange(
      "S1", [&] { woken = true; }, At(100));
  EXPECT_FALSE(woken);
  std::vector<util::Result<domain::SendReceipt>> sent;
  ASSERT_TRUE(streams.Fill("msg1", "first", Recorder(sent), At(200)));
  EXPECT_TRUE(woken);
  ASSERT_TRUE(streams.Fill("msg1", "second", Recorder(sent), At(210)));
  EXPECT_TRUE(sent.empty());  // not delivered until WeCom fetched it
  EXPECT_TRUE(streams.Ready("S1", At(220)));
  auto done = streams.Take("S1", At(220));
  EXPECT_TRUE(done.finish);
  EXPECT_EQ(done.content, "first\n\nsecond");
  ASSERT_EQ(sent.size(), 2u);
  ASSERT_TRUE(sent[0]);
  EXPECT_EQ(sent[0]->message_id, "S1");

  auto late = streams.Fill("msg1", "third", Recorder(sent), At(300));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, util::ErrorCode::kConflict);
  EXPECT_TRUE(streams.Take("S1", At(300)).finish);  // a repeated refresh: the same finish
  auto unknown = streams.Fill("nope", "x", Recorder(sent), At(300));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, util::ErrorCode::kNotFound);
  EXPECT_FALSE(streams.Take("nope", At(300)).known);
}

TEST(WeComBotStreams, ProgressIsShownUnfinishedUntilTheReplyIsFilled) {
  ReplyStreams streams({.capacity = 4,
                        .max_lifetime = 10s,
                        .placeholder_delay = 0s,
                        .placeholder = "thinking",
                        .max_content_bytes = 20480});
  streams.Open("m1", "S1", At(0));
  bool woken = false;
  streams.OnChange(
      "S1", [&] { woken = true; }, At(0));  // the placeholder is ready at once
  EXPECT_TRUE(woken);
  ASSERT_TRUE(streams.Progress("m1", "Hel", At(10)));
  EXPECT_TRUE(streams.Ready("S1", At(10)));
  auto first = streams.Take("S1", At(10));
  EXPECT_FALSE(first.finish);
  EXPECT_EQ(first.content, "Hel");            // the text so far, not the placeholder
  EXPECT_FALSE(streams.Ready("S1", At(20)));  // nothing new since
  woken = false;
  streams.OnChange(
      "S1", [&] { woken = true; }, At(20));
  ASSERT_TRUE(streams.Progress("m1", "Hello wor", At(30)));
  EXPECT_TRUE(woken);
  EXPECT_EQ(streams.Take("S1", At(30)).content, "Hello wor");
  std::vector<util::Result<domain::SendReceipt>> sent;
  ASSERT_TRUE(streams.Fill("m1", "Hello world", Recorder(sent), At(40)));
  auto done = streams.Take("S1", At(40));
  EXPECT_TRUE(done.finish);
  EXPECT_EQ(done.content, "Hello world");  // the reply replaces the draft
  EXPECT_EQ(streams.Progress("m1", "more", At(50)).error().code, util::ErrorCode::kConflict);

  // A stream that expires while written ends with its text so far.
  streams.Open("m2", "S2", At(0));
  ASSERT_TRUE(streams.Progress("m2", "half", At(100)));
  auto over = streams.Take("S2", At(10'000));
  EXPECT_TRUE(over.finish);
  EXPECT_EQ(over.content, "half");
}

TEST(WeComBotStreams, LifetimePlaceholderCapacityAndClear) {
  ReplyStreams streams({.capacity = 2,
                        .max_lifetime = 10s,
                        .placeholder_delay = 3s,
                        .placeholder = "thinking",
                        .max_content_bytes = 20480});
  streams.Open("m1", "S1", At(0));
  EXPECT_EQ(streams.Take("S1", At(1000)).content, "");
  EXPECT_TRUE(streams.Ready("S1", At(3000)));
  auto waiting = streams.Take("S1", At(3000));
  EXPECT_EQ(waiting.content, "thinking");
  EXPECT_FALSE(waiting.finish);
  // Past the lifetime the stream finishes with what it has, and takes nothing more.
  auto over = streams.Take("S1", At(10'000));
  EXPECT_TRUE(over.finish);
  std::vector<util::Result<domain::SendReceipt>> sent;
  EXPECT_FALSE(streams.Fill("m1", "too late", Recorder(sent), At(10'001)));
  sent.clear();  // the refused send's callback ran when the caller let go of it

  streams.Open("m2", "S2", At(0));
  ASSERT_TRUE(streams.Fill("m2", "kept", Recorder(sent), At(1)));
  streams.Open("m3", "S3", At(2));  // the oldest (S1) goes
  EXPECT_FALSE(streams.Take("S1", At(3)).known);
  streams.Open("m4", "S4", At(4));  // S2 goes, with its undelivered reply
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0]);
  EXPECT_EQ(sent[0].error().code, util::ErrorCode::kUpstreamTimeout);

  ASSERT_TRUE(streams.Fill("m4", "x", Recorder(sent), At(5)));
  streams.Clear();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].error().code, util::ErrorCode::kCancelled);
  EXPECT_EQ(streams.size(), 0u);
}

}  // namespace
}  // namespace sb::platforms::wecombot
