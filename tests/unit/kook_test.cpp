// The KOOK adapter's pure parts: gateway signals (the websocket doc's examples), the sn order of
// events, message events (event/message.md's examples) turned into chains, chains turned into
// create calls, and the REST envelope. The connection itself is tested end to end against
// tests/fakes/fake_kook.py (tests/api/test_bot_kook.py).
#include <gtest/gtest.h>

#include <string>

#include "platforms/common/rest_call.hpp"
#include "platforms/kook/kook_codec.hpp"
#include "platforms/kook/kook_signals.hpp"
#include "platforms/kook/kook_sn_order.hpp"
#include "util/json.hpp"

namespace sb::platforms::kook {
namespace {

using domain::ElementType;
using domain::MessageElement;
using namespace std::chrono_literals;

util::Json Parse(std::string_view text) { return *util::ParseJson(text); }

constexpr std::string_view kBot = "3861577071";

MessageElement Plain(std::string text) {
  MessageElement e;
  e.text = std::move(text);
  return e;
}

MessageElement Typed(ElementType type, std::string MessageElement::*field, std::string value) {
  MessageElement e;
  e.type = type;
  e.*field = std::move(value);
  return e;
}

TEST(KookSignals, DecodesTheDocsExamples) {
  auto hello = DecodeSignal(R"({"s":1,"d":{"code":0,"session_id":"xxxx"}})");
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->s, kSignalHello);
  EXPECT_FALSE(hello->sn);
  Hello h = DecodeHello(hello->d);
  EXPECT_EQ(h.code, 0);
  EXPECT_EQ(h.session_id, "xxxx");
  auto refused = DecodeSignal(R"({"s":1,"d":{"code":40103}})");
  EXPECT_EQ(DecodeHello(refused->d).code, 40103);
  EXPECT_FALSE(HelloCodeIsFatal(40103));
  EXPECT_TRUE(HelloCodeIsFatal(40101));
  EXPECT_TRUE(HelloCodeIsFatal(40100));
  EXPECT_NE(DescribeHelloCode(40101).find("40101"), std::string::npos);
  auto event = DecodeSignal(R"({"s":0,"d":{},"sn":1000})");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->sn, 1000);
  auto reconnect = DecodeSignal(R"({"s":5,"d":{"code":41008,"err":"Missing params"}})");
  EXPECT_EQ(DescribeReconnect(reconnect->d), "code 41008: Missing params");
  EXPECT_EQ(DecodeSignal(R"({"s":3})")->s, kSignalPong);
  EXPECT_EQ(DecodeHello(util::Json(nullptr)).code, -1);
  for (std::string_view bad :
       {"{x", "[]", R"({"d":{}})", R"({"s":"1"})", R"({"s":0,"sn":-1})", R"({"s":0,"sn":"5"})"}) {
    auto r = DecodeSignal(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  }
}

TEST(KookSignals, PingResumeAndUrls) {
  EXPECT_EQ(EncodePing(6), R"({"s":2,"sn":6})");
  EXPECT_EQ(EncodeResume(100), R"({"s":4,"sn":100})");
  const std::string url = "wss://ws.example:8888/gateway?compress=0&token=SECRET";
  EXPECT_EQ(GatewayConnectUrl(url, "", 5), url);
  EXPECT_EQ(GatewayConnectUrl(url, "20ae-1fa4", 5), url + "&resume=1&sn=5&session_id=20ae-1fa4");
  EXPECT_EQ(GatewayConnectUrl("ws://h/g", "a b&c", 0),
            "ws://h/g?resume=1&sn=0&session_id=a%20b%26c");
  EXPECT_EQ(DescribeGatewayHost(url), "wss://ws.example:8888");
  EXPECT_EQ(DescribeGatewayHost("nonsense"), "the gateway");
  EXPECT_EQ(*DecodeGatewayUrl(Parse(R"({"url":"wss://xxxx"})")), "wss://xxxx");
  EXPECT_FALSE(DecodeGatewayUrl(Parse(R"({"url":"https://xxxx"})")));
  EXPECT_FALSE(DecodeGatewayUrl(Parse("[]")));
}

std::string Unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

TEST(KookSignals, InflatesCompressedFrames) {
  // Python's zlib.compress of a HELLO, as KOOK sends frames with compress=1.
  const std::string hello = Unhex(
      "789cab562a56b232d4514a51b2aa564ace4f4955b232d0512a4e2d2ececccf8bcf040a2b550081526d2d00090d"
      "0d68");
  auto text = InflateFrame(hello, 1 << 20);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, R"({"s":1,"d":{"code":0,"session_id":"xxxx"}})");
  // 100,033 bytes from 152: several output chunks, and a limit below the size refuses it.
  const std::string big = Unhex(
      "789cedc2ab11c0200005b05d9e46b4966dfab35480e3d8bd6b54e492999eba95f496ba97dca933d7dbc6d3466a"
      "8e1300000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "0000000000000000f8abacf5012b6bd835");
  auto large = InflateFrame(big, 1 << 20);
  ASSERT_TRUE(large) << large.error().message;
  EXPECT_EQ(large->size(), 100033u);
  EXPECT_FALSE(InflateFrame(big, 50000));
  EXPECT_FALSE(InflateFrame(hello.substr(0, hello.size() / 2), 1 << 20));  // truncated
  EXPECT_FALSE(InflateFrame(R"({"s":3})", 1 << 20));                       // not zlib
  EXPECT_FALSE(InflateFrame("", 1 << 20));
}

std::vector<std::string> Contents(const std::vector<util::Json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.emplace_back(e.as_object().at("c").as_string());
  return out;
}

util::Json Ev(std::string c) { return util::JsonObject{{"c", c}}; }

TEST(KookSnOrder, InOrderEarlyAndDuplicate) {
  SnOrder order;
  const util::TimePoint t0{};
  EXPECT_EQ(Contents(order.Accept(1, Ev("a"), t0)), std::vector<std::string>{"a"});
  EXPECT_TRUE(order.Accept(3, Ev("c"), t0).empty());  // early: held for 2
  EXPECT_EQ(order.held(), 1u);
  EXPECT_EQ(order.last(), 1);
  EXPECT_TRUE(order.Accept(1, Ev("a again"), t0).empty());  // handled already
  EXPECT_TRUE(order.Accept(3, Ev("c again"), t0).empty());  // held already
  EXPECT_EQ(Contents(order.Accept(2, Ev("b"), t0)), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(order.last(), 3);
  EXPECT_EQ(order.held(), 0u);
  order.Reset();
  EXPECT_EQ(order.last(), 0);
  EXPECT_EQ(Contents(order.Accept(1, Ev("new"), t0)), std::vector<std::string>{"new"});
}

TEST(KookSnOrder, GivesUpAGapAfterAWhileOrWhenTooMuchIsHeld) {
  SnOrder order(3, 40s);
  const util::TimePoint t0{};
  EXPECT_TRUE(order.Accept(2, Ev("b"), t0).empty());
  EXPECT_TRUE(order.Expire(t0 + 39s).empty());
  EXPECT_EQ(Contents(order.Expire(t0 + 40s)), std::vector<std::string>{"b"});
  EXPECT_EQ(order.last(), 2);
  EXPECT_TRUE(order.Accept(4, Ev("d"), t0).empty());
  EXPECT_TRUE(order.Accept(5, Ev("e"), t0).empty());
  EXPECT_TRUE(order.Accept(7, Ev("g"), t0).empty());
  // A fourth held event is one too many: the gap before 4 is given up, 4 and 5 go, 7 waits.
  EXPECT_EQ(Contents(order.Accept(8, Ev("h"), t0)), (std::vector<std::string>{"d", "e"}));
  EXPECT_EQ(order.held(), 2u);
  EXPECT_EQ(Contents(order.Accept(6, Ev("f"), t0)), (std::vector<std::string>{"f", "g", "h"}));
}

// event/message.md's text message example, with the ids filled in.
constexpr std::string_view kGroupText = R"({"channel_type":"GROUP","type":1,
  "target_id":"9100000001","author_id":"2000000001","content":"dddd",
  "msg_id":"67637d4c-0000-0000-0000-000000000001","msg_timestamp":1607674740160,"nonce":"",
  "extra":{"type":1,"guild_id":"5000000001","channel_name":"文字频道","mention":[],
  "mention_all":false,"mention_roles":[],"mention_here":false,"code":"",
  "author":{"identify_num":"1234","avatar":"https://img.kaiheila.cn/avatars/r0j9.jpg/icon",
  "username":"ann","id":"2000000001","nickname":"Ann","roles":[]},"channel_type":1}})";

TEST(KookEvent, AGroupTextIsAGroupMessageOfTheChannel) {
  auto decoded = DecodeMessageEvent(Parse(kGroupText), kBot);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_TRUE(decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "9100000001");
  EXPECT_EQ(m.sender_id, "2000000001");
  EXPECT_EQ(m.sender_name, "Ann");
  EXPECT_EQ(m.message_id, "67637d4c-0000-0000-0000-000000000001");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[1].text, "dddd");
}

TEST(KookEvent, KMarkdownMentionsBecomeAtElements) {
  auto d = Parse(kGroupText);
  auto& o = d.as_object();
  o["type"] = kTypeKMarkdown;
  o["content"] = "(met)3861577071(met) hi \\*there\\* (rol)42(rol)(met)all(met)(chn)7(chn)";
  o["extra"].as_object()["mention"] = util::JsonArray{"3861577071"};
  auto decoded = DecodeMessageEvent(d, kBot);
  ASSERT_TRUE(decoded && decoded->message);
  const auto& chain = decoded->message->chain;
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[1].type, ElementType::kAt);
  EXPECT_EQ(chain[1].target, kBot);
  EXPECT_EQ(chain[2].text, " hi *there* ");
  EXPECT_EQ(chain[3].type, ElementType::kAtAll);
}

TEST(KookEvent, AMentionListedButNotWrittenStillAddressesTheBot) {
  auto d = Parse(kGroupText);
  d.as_object()["extra"].as_object()["mention"] = util::JsonArray{"3861577071"};
  auto decoded = DecodeMessageEvent(d, kBot);
  ASSERT_TRUE(decoded && decoded->message);
  const auto& chain = decoded->message->chain;
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[1].type, ElementType::kAt);
  EXPECT_EQ(chain[1].target, kBot);
}

TEST(KookEvent, DirectMessagesImagesQuotesAndWhatIsSkipped) {
  auto d = Parse(kGroupText);
  auto& o = d.as_object();
  o["channel_type"] = "PERSON";
  o["target_id"] = std::string(kBot);
  o["type"] = kTypeImage;
  o["content"] = "https://img.kaiheila.cn/assets/2020-12/asasd.jpg";
  o["extra"].as_object()["quote"] =
      util::JsonObject{{"id", "q-1"},
                       {"rong_id", "q-rong"},
                       {"type", 1},
                       {"content", "the quoted words"},
                       {"author", util::JsonObject{{"id", "2000000002"}, {"username", "amy"}}}};
  auto decoded = DecodeMessageEvent(d, kBot);
  ASSERT_TRUE(decoded && decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "2000000001");
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[1].type, ElementType::kQuote);
  EXPECT_EQ(m.chain[1].id, "q-rong");
  EXPECT_EQ(m.chain[1].text, "the quoted words");  // KOOK sends the quoted content along
  EXPECT_EQ(m.chain[1].target, "2000000002");
  EXPECT_EQ(m.chain[2].type, ElementType::kImage);
  EXPECT_EQ(m.chain[2].url, "https://img.kaiheila.cn/assets/2020-12/asasd.jpg");

  auto own = Parse(kGroupText);
  own.as_object()["author_id"] = std::string(kBot);
  auto skipped = DecodeMessageEvent(own, kBot);
  ASSERT_TRUE(skipped);
  EXPECT_FALSE(skipped->message);
  EXPECT_EQ(skipped->msg_id, "67637d4c-0000-0000-0000-000000000001");
  auto other_bot = Parse(kGroupText);
  other_bot.as_object()["extra"].as_object()["author"].as_object()["bot"] = true;
  EXPECT_FALSE(DecodeMessageEvent(other_bot, kBot)->message);
  for (auto [key, value] : {std::pair<const char*, util::Json>{"type", kTypeSystem},
                            {"type", kTypeCard},
                            {"channel_type", "BROADCAST"},
                            {"content", "   "}}) {
    auto e = Parse(kGroupText);
    e.as_object()[key] = value;
    auto r = DecodeMessageEvent(e, kBot);
    ASSERT_TRUE(r) << key;
    EXPECT_FALSE(r->message) << key;
  }
  for (auto key : {"author_id", "target_id", "msg_id", "channel_type", "type"}) {
    auto e = Parse(kGroupText);
    e.as_object().erase(key);
    auto r = DecodeMessageEvent(e, kBot);
    ASSERT_FALSE(r) << key;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(DecodeMessageEvent(Parse("[]"), kBot));
}

TEST(KookOutgoing, TextsMentionsAndImagesInOrder) {
  domain::OutgoingMessage m;
  m.target_type = domain::TargetType::kGroup;
  m.target_id = "9100000005";
  m.chain = {
      Plain("hi "),
      Typed(ElementType::kAt, &MessageElement::target, "2000000004"),
      Plain(" (met)all(met)"),
      Typed(ElementType::kImage, &MessageElement::base64, "data:image/png;base64,iVBORw0KGgo="),
      Typed(ElementType::kImage, &MessageElement::url, "https://x.example/cat.png"),
      Plain("bye"),
      Typed(ElementType::kQuote, &MessageElement::id, "m-1")};
  ASSERT_TRUE(CheckDeliverable(m));
  auto calls = EncodeOutgoing(m);
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].type, kTypeKMarkdown);
  EXPECT_EQ(calls[0].content, "hi (met)2000000004(met) \\(met\\)all\\(met\\)");
  EXPECT_EQ(calls[1].type, kTypeImage);
  EXPECT_EQ(calls[1].image_mime, "image/png");
  EXPECT_EQ(calls[1].image_bytes.substr(0, 4), "\x89PNG");
  EXPECT_EQ(calls[2].image_url, "https://x.example/cat.png");
  EXPECT_EQ(calls[3].content, "bye");
  EXPECT_EQ(QuotedId(m.chain), "m-1");
  EXPECT_EQ(util::SerializeJson(EncodeCreateBody("9100000005", calls[0], "x", "m-1")),
            R"({"target_id":"9100000005","content":"x","type":9,"quote":"m-1"})");
  EXPECT_EQ(util::SerializeJson(EncodeCreateBody("1", calls[1], "https://a", "")),
            R"({"target_id":"1","content":"https://a","type":2})");
}

TEST(KookOutgoing, LongTextsAreCut) {
  domain::OutgoingMessage m;
  m.target_id = "2000000001";
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "word ";
  m.chain = {Plain(text)};
  auto calls = EncodeOutgoing(m);
  ASSERT_EQ(calls.size(), 2u);
  for (const auto& c : calls) EXPECT_LE(c.content.size(), kMaxContentChars);
}

TEST(KookOutgoing, WhatCannotBeDelivered) {
  domain::OutgoingMessage m;
  m.target_id = "2000000001";
  m.chain = {Plain("ok")};
  EXPECT_TRUE(CheckDeliverable(m));
  m.target_id = "general channel";
  EXPECT_FALSE(CheckDeliverable(m));
  m.target_id = "2000000001";
  m.chain = {Typed(ElementType::kImage, &MessageElement::base64, "not base64!")};
  auto bad = CheckDeliverable(m);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("message_chain[0]"), std::string::npos);
  m.chain = {Typed(ElementType::kVoice, &MessageElement::base64, "AAAA")};
  EXPECT_FALSE(CheckDeliverable(m));
  m.chain = {Plain("  "), Typed(ElementType::kQuote, &MessageElement::id, "x")};
  EXPECT_FALSE(CheckDeliverable(m));
}

TEST(KookEnvelope, DataOrTheRefusal) {
  auto ok = DecodeEnvelope(200, R"({"code":0,"message":"操作成功","data":{"msg_id":"m1"}})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*DecodeMsgId(*ok), "m1");
  auto auth = DecodeEnvelope(401, R"({"code":401,"message":"你的用户凭证不正确","data":[]})");
  ASSERT_FALSE(auth);
  EXPECT_EQ(auth.error().code, util::ErrorCode::kUpstreamAuth);
  EXPECT_TRUE(auth.error().final);
  EXPECT_NE(auth.error().message.find("401"), std::string::npos);
  auto refused = DecodeEnvelope(200, R"({"code":40000,"message":"频道不存在","data":[]})");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, util::ErrorCode::kUpstreamFailed);
  EXPECT_NE(refused.error().message.find("频道不存在"), std::string::npos);
  EXPECT_EQ(DecodeEnvelope(429, "{}").error().code, util::ErrorCode::kUpstreamRateLimited);
  EXPECT_EQ(DecodeEnvelope(200, "<html>").error().code, util::ErrorCode::kUpstreamFailed);
  auto me = DecodeUserMe(Parse(R"({"id":"57655610","username":"test","bot":true})"));
  ASSERT_TRUE(me);
  EXPECT_EQ(me->id, "57655610");
  EXPECT_FALSE(DecodeUserMe(Parse(R"({"username":"x"})")));
  EXPECT_EQ(*DecodeAssetUrl(Parse(R"({"url":"https://img.kaiheila.cn/a.txt"})")),
            "https://img.kaiheila.cn/a.txt");
  EXPECT_FALSE(DecodeAssetUrl(Parse(R"({})")));
  EXPECT_FALSE(DecodeMsgId(Parse("[]")));
}

TEST(KookOutgoing, AssetUploadIsOneFilePart) {
  const std::string body = EncodeAssetUpload("PNGDATA", "image/png", "B");
  EXPECT_EQ(body,
            "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"image.png\"\r\n"
            "Content-Type: image/png\r\n\r\nPNGDATA\r\n--B--\r\n");
}

TEST(KookRateLimit, SendWithRetryWaitsAsXRateLimitResetSays) {
  common::RetryPolicy policy;
  policy.wait_header = "x-rate-limit-reset";
  net::HttpResponse limited;
  limited.status = 429;
  limited.headers = {{"x-rate-limit-remaining", "0"}, {"x-rate-limit-reset", "3"}};
  EXPECT_EQ(common::RetryDelay(limited, 1, policy), std::chrono::milliseconds(3000));
  EXPECT_EQ(common::RetryDelay(limited, 3, policy), std::nullopt);  // attempts used up
  limited.headers = {{"x-rate-limit-reset", "0"}};
  EXPECT_EQ(common::RetryDelay(limited, 1, policy), std::chrono::milliseconds(1000));
  limited.headers = {{"x-rate-limit-reset", "600"}};
  EXPECT_EQ(common::RetryDelay(limited, 1, policy), std::nullopt);  // longer than max_wait
  limited.headers = {{"retry-after", "2"}, {"x-rate-limit-reset", "5"}};
  EXPECT_EQ(common::RetryDelay(limited, 1, policy), std::chrono::milliseconds(2000));
  // Without wait_header the kit behaves as before: the default wait.
  limited.headers = {{"x-rate-limit-reset", "5"}};
  EXPECT_EQ(common::RetryDelay(limited, 1, common::RetryPolicy{}), std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace sb::platforms::kook
