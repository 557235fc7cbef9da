// The Lark adapter: its long-connection frame codec (pbbp2.Frame bytes as the Go SDK writes them,
// hostile bytes), event envelopes plain and encrypted, message events as Lark's docs show them,
// outgoing contents, and the adapter's webhook path and token handling against a scripted Open API.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "platforms/common/lark_crypto.hpp"
#include "platforms/lark/lark_adapter.hpp"
#include "platforms/lark/lark_codec.hpp"
#include "platforms/lark/lark_frame.hpp"
#include "support/adapter_harness.hpp"
#include "util/clock.hpp"
#include "util/crypto.hpp"
#include "util/json.hpp"

namespace sb::platforms::lark {
namespace {

using domain::ElementType;
using util::ErrorCode;
using namespace std::chrono_literals;

util::JsonObject Obj(std::string_view text) { return util::ParseJson(text)->as_object(); }

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// ---- frames ----

TEST(LarkFrame, PingIsWhatTheGoSdkWrites) {
  // gogo-protobuf MarshalToSizedBuffer: required varints, headers, then the optional strings
  // (always written), no payload when nil.
  const std::string expected =
      Bytes({0x08, 0x00, 0x10, 0x00, 0x18, 0x07, 0x20, 0x00, 0x2a, 0x0c, 0x0a, 0x04}) + "type" +
      Bytes({0x12, 0x04}) + "ping" + Bytes({0x32, 0x00, 0x3a, 0x00, 0x4a, 0x00});
  EXPECT_EQ(EncodeFrame(PingFrame(7)), expected);
  auto back = DecodeFrame(expected);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->service, 7);
  EXPECT_EQ(back->method, kMethodControl);
  EXPECT_EQ(back->Header("type"), "ping");
  EXPECT_TRUE(back->payload.empty());
}

TEST(LarkFrame, DataFramesRoundTripWithBigIdsAndAcks) {
  Frame frame;
  frame.seq_id = 0xFFFFFFFFFFFFFFFFull;
  frame.log_id = 1234567890123ull;
  frame.service = -3;  // sign-extended, ten bytes
  frame.method = kMethodData;
  frame.headers = {{"type", "event"}, {"message_id", "m1"}, {"sum", "1"}, {"seq", "0"}};
  frame.payload = std::string("{\"a\":1}\0x", 9);
  frame.log_id_new = "log-new";
  auto back = DecodeFrame(EncodeFrame(frame));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->seq_id, frame.seq_id);
  EXPECT_EQ(back->log_id, frame.log_id);
  EXPECT_EQ(back->service, -3);
  EXPECT_EQ(back->payload, frame.payload);
  EXPECT_EQ(back->log_id_new, "log-new");
  EXPECT_EQ(back->IntHeader("sum"), 1);
  auto ack = DecodeFrame(EncodeFrame(AckFrame(*back, R"({"code":200})", 12)));
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->seq_id, frame.seq_id);
  EXPECT_EQ(ack->Header("message_id"), "m1");
  EXPECT_EQ(ack->Header("biz_rt"), "12");
  EXPECT_EQ(ack->payload, R"({"code":200})");
}

TEST(LarkFrame, UnknownFieldsAreSkippedAndHostileBytesRefused) {
  std::string good = EncodeFrame(PingFrame(1));
  // An unknown varint field 15, a fixed32 field 16 and a fixed64 field 17 are skipped.
  std::string extended =
      good + Bytes({0x78, 0x05, 0x85, 0x01, 1, 2, 3, 4, 0x89, 0x01, 1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(DecodeFrame(extended));
  const std::vector<std::string> bad = {
      Bytes({0x08}),                                                             // truncated varint
      Bytes({0x08, 0x00, 0x10, 0x00, 0x18, 0x00}),                               // method missing
      Bytes({0x08, 0x00, 0x10, 0x00, 0x18, 0x00, 0x20, 0x00, 0x42, 0x10, 'x'}),  // past the end
      Bytes({0x0a, 0x00}),                                                       // SeqID as bytes
      Bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),  // 11 bytes
      good + Bytes({0x7b}),                    // group start (wire type 3)
      good + Bytes({0x2a, 0x02, 0x0a, 0x00}),  // header without a value
      good + Bytes({0x00, 0x00}),              // field number 0
  };
  for (const auto& b : bad) {
    auto r = DecodeFrame(b);
    ASSERT_FALSE(r) << util::HexEncode(b);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  std::string many = good;
  for (int i = 0; i < 65; ++i) many += Bytes({0x2a, 0x04, 0x0a, 0x00, 0x12, 0x00});
  EXPECT_FALSE(DecodeFrame(many));
  EXPECT_FALSE(DecodeFrame(std::string(kMaxFrameBytes + 1, '\0')));
}

Frame Part(std::string id, int sum, int seq, std::string payload) {
  Frame f;
  f.method = kMethodData;
  f.headers = {{"type", "event"},
               {"message_id", std::move(id)},
               {"sum", std::to_string(sum)},
               {"seq", std::to_string(seq)}};
  f.payload = std::move(payload);
  return f;
}

TEST(LarkFrame, PartsAreJoinedInSeqOrderAndBounded) {
  FrameAssembler assembler;
  const util::TimePoint t0{};
  auto whole = assembler.Add(Part("a", 1, 0, "single"), t0);
  ASSERT_TRUE(whole && *whole);
  EXPECT_EQ(**whole, "single");
  EXPECT_FALSE(*assembler.Add(Part("b", 3, 2, "C"), t0));
  EXPECT_FALSE(*assembler.Add(Part("b", 3, 0, "A"), t0));
  auto done = assembler.Add(Part("b", 3, 1, "B"), t0);
  ASSERT_TRUE(done && *done);
  EXPECT_EQ(**done, "ABC");
  EXPECT_EQ(assembler.pending(), 0u);
  EXPECT_FALSE(assembler.Add(Part("c", 2, 2, "x"), t0));  // seq outside 0..sum-1
  EXPECT_FALSE(assembler.Add(Part("c", 1000, 0, "x"), t0));
  // A part left alone expires after the ttl.
  EXPECT_FALSE(*assembler.Add(Part("d", 2, 0, "x"), t0));
  EXPECT_FALSE(*assembler.Add(Part("e", 2, 0, "y"), t0 + 10s));
  EXPECT_EQ(assembler.pending(), 1u);
  FrameAssembler small(FrameAssembler::Limits{.max_bytes = 4});
  EXPECT_FALSE(*small.Add(Part("f", 2, 0, "abc"), t0));
  EXPECT_FALSE(small.Add(Part("f", 2, 1, "de"), t0));
  EXPECT_EQ(small.pending(), 0u);
}

// ---- envelopes and events ----

// The receive-message event of Lark's im.message.receive_v1 page, a group text with a mention.
constexpr std::string_view kGroupEvent = R"({"schema":"2.0","header":{
  "event_id":"5e3702a84e847582be8db7fb73283c02","event_type":"im.message.receive_v1",
  "create_time":"1608725989000","token":"rvaYgkR1Nq5WxqFyrfoaibRQvOc3NINH",
  "app_id":"cli_9f5343c580712544","tenant_key":"2ca1d211f64f6438"},
  "event":{"sender":{"sender_id":{"union_id":"on_8ed6aa67826108097d9ee143816345",
  "user_id":"e33ggbyz","open_id":"ou_84aad35d084aa403a838cf73ee18467"},
  "sender_type":"user","tenant_key":"736588c9260f175e"},
  "message":{"message_id":"om_5ce6d572455d361153b7cb51da133945",
  "root_id":"om_5ce6d572455d361153b7cb5xxfsdfsdfdsf","parent_id":"om_5ce6d572455d361153b7cb5xxfsdfsdfdsf",
  "create_time":"1609073151345","chat_id":"oc_5ce6d572455d361153b7xx51da133945",
  "chat_type":"group","message_type":"text",
  "content":"{\"text\":\"@_user_1 hello @_user_10 and @_all\"}",
  "mentions":[{"key":"@_user_1","id":{"union_id":"on_8ed6aa67826108097d9ee143816345",
  "user_id":"e33ggbyz","open_id":"ou_bot"},"name":"Bot","tenant_key":"736588c9260f175e"},
  {"key":"@_user_10","id":{"open_id":"ou_other"},"name":"Ann"}]}}})";

TEST(LarkEnvelope, ChallengePlainAndEncrypted) {
  auto plain = DecodeEnvelope(
      R"({"challenge":"ajls384kdjx98XX","token":"xxxxxx","type":"url_verification"})", "");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->kind, Envelope::Kind::kChallenge);
  EXPECT_EQ(plain->challenge, "ajls384kdjx98XX");
  EXPECT_EQ(plain->token, "xxxxxx");
  const std::string inner = R"({"challenge":"c-1","token":"tok","type":"url_verification"})";
  const std::string body =
      R"({"encrypt":")" + common::LarkEncrypt("ek", inner, "0123456789abcdef").value() + R"("})";
  auto decrypted = DecodeEnvelope(body, "ek");
  ASSERT_TRUE(decrypted);
  EXPECT_EQ(decrypted->challenge, "c-1");
  EXPECT_EQ(DecodeEnvelope(body, "other").error().code, ErrorCode::kUnauthenticated);
  EXPECT_EQ(DecodeEnvelope(body, "").error().code, ErrorCode::kUnauthenticated);
  // With a key set, plain bodies are refused: Lark encrypts everything then.
  EXPECT_EQ(DecodeEnvelope(inner, "ek").error().code, ErrorCode::kUnauthenticated);
}

TEST(LarkEnvelope, EventsOfBothSchemasAndMalformedBodies) {
  auto v2 = DecodeEnvelope(kGroupEvent, "");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->kind, Envelope::Kind::kEvent);
  EXPECT_EQ(v2->event_id, "5e3702a84e847582be8db7fb73283c02");
  EXPECT_EQ(v2->event_type, "im.message.receive_v1");
  EXPECT_EQ(v2->token, "rvaYgkR1Nq5WxqFyrfoaibRQvOc3NINH");
  auto v1 = DecodeEnvelope(
      R"({"uuid":"u-1","token":"t","ts":"1","type":"event_callback","event":{"type":"message"}})",
      "");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->event_id, "u-1");
  EXPECT_EQ(v1->event_type, "message");
  for (std::string_view bad :
       {"{x", "[]", R"({"schema":"2.0","header":{}})",
        R"({"schema":"2.0","header":{"event_type":"x"}})", R"({"type":"url_verification"})"}) {
    auto r = DecodeEnvelope(bad, "");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(LarkQuoted, TheGetMessageAnswerGivesTheTextAndSender) {
  // As GET /open-apis/im/v1/messages/{id} answers (data.items, mentions with a string id).
  auto text = DecodeQuotedMessage(Obj(
      R"({"items":[{"message_id":"om_1","msg_type":"text","sender":{"id":"ou_amy",)"
      R"("id_type":"open_id","sender_type":"user"},"body":{"content":"{\"text\":\"@_user_1 ship it\"}"},)"
      R"("mentions":[{"key":"@_user_1","id":"ou_bob","id_type":"open_id","name":"Bob"}]}]})"));
  EXPECT_EQ(text.text, "@ou_bob ship it");  // the mention as "@id"
  EXPECT_EQ(text.sender_id, "ou_amy");
  auto post = DecodeQuotedMessage(Obj(
      R"({"items":[{"msg_type":"post","body":{"content":"{\"title\":\"T\",\"content\":)"
      R"([[{\"tag\":\"text\",\"text\":\"line 1\"}],[{\"tag\":\"text\",\"text\":\"line 2\"}]]}"}}]})"));
  EXPECT_EQ(post.text, "T\nline 1\nline 2");
  EXPECT_EQ(
      DecodeQuotedMessage(Obj(R"({"items":[{"msg_type":"image","body":{"content":"{}"}}]})")).text,
      "[Image]");
  EXPECT_EQ(DecodeQuotedMessage(Obj(R"({"items":[{"msg_type":"sticker"}]})")).text, "[sticker]");
  // Wrong shapes give nothing, never an error.
  EXPECT_EQ(DecodeQuotedMessage(Obj(R"({})")).text, "");
  EXPECT_EQ(DecodeQuotedMessage(Obj(R"({"items":[1]})")).text, "");
  EXPECT_EQ(
      DecodeQuotedMessage(Obj(R"({"items":[{"msg_type":"text","body":{"content":"not json"}}]})"))
          .text,
      "");
  std::string big(5000, 'q');
  auto cut = DecodeQuotedMessage(
      Obj(R"({"items":[{"msg_type":"text","body":{"content":"{\"text\":\")" + big + R"(\"}"}}]})"));
  EXPECT_LE(cut.text.size(), domain::kMaxQuotedTextBytes);
}

TEST(LarkEvent, GroupTextMentionsBecomeAts) {
  auto envelope = DecodeEnvelope(kGroupEvent, "");
  auto decoded = DecodeMessageEvent(envelope->event);
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "oc_5ce6d572455d361153b7xx51da133945");
  EXPECT_EQ(m.sender_id, "ou_84aad35d084aa403a838cf73ee18467");
  EXPECT_EQ(m.message_id, "om_5ce6d572455d361153b7cb51da133945");
  ASSERT_EQ(m.chain.size(), 7u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[1].type, ElementType::kQuote);
  EXPECT_EQ(m.chain[2].type, ElementType::kAt);
  EXPECT_EQ(m.chain[2].target, "ou_bot");
  EXPECT_EQ(m.chain[3].text, " hello ");
  EXPECT_EQ(m.chain[4].target, "ou_other");  // @_user_10 is not @_user_1 then "0"
  EXPECT_EQ(m.chain[5].text, " and ");
  EXPECT_EQ(m.chain[6].type, ElementType::kAtAll);
}

TEST(LarkEvent, P2pPostImagesAndSkips) {
  auto event = [](std::string_view type, std::string_view content,
                  std::string_view sender_type = "user", std::string_view chat = "p2p") {
    return Obj(fmt::format(
        R"({{"sender":{{"sender_id":{{"open_id":"ou_a"}},"sender_type":"{}"}},
        "message":{{"message_id":"om_1","chat_id":"oc_1","chat_type":"{}","message_type":"{}",
        "content":{}}}}})",
        sender_type, chat, type, util::SerializeJson(util::Json(content))));
  };
  auto text = DecodeMessageEvent(event("text", R"({"text":"hi"})"));
  ASSERT_TRUE(text && text->message);
  EXPECT_EQ(text->message->chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(text->message->chat_id, "ou_a");
  EXPECT_EQ(text->message->chain.back().text, "hi");

  auto post = DecodeMessageEvent(event(
      "post",
      R"({"title":"T","content":[[{"tag":"text","text":"line one "},{"tag":"at","user_id":"ou_b","user_name":"B"}],
         [{"tag":"img","image_key":"img_v2_1"},{"tag":"a","text":"link","href":"https://x.test"}]]})"));
  ASSERT_TRUE(post && post->message);
  const auto& chain = post->message->chain;
  EXPECT_EQ(chain[1].text, "T\nline one ");
  EXPECT_EQ(chain[2].target, "ou_b");
  EXPECT_EQ(chain[3].text, "\n");
  EXPECT_EQ(chain[4].type, ElementType::kImage);
  EXPECT_EQ(chain[5].text, "link (https://x.test)");
  ASSERT_EQ(post->images.size(), 1u);
  EXPECT_EQ(post->images[0].element, 4u);
  EXPECT_EQ(post->images[0].image_key, "img_v2_1");

  auto image = DecodeMessageEvent(event("image", R"({"image_key":"img_2"})"));
  ASSERT_TRUE(image && image->message);
  EXPECT_EQ(image->images[0].image_key, "img_2");

  EXPECT_FALSE(DecodeMessageEvent(event("text", R"({"text":"x"})", "app"))->message);
  EXPECT_FALSE(DecodeMessageEvent(event("sticker", R"({"file_key":"f"})"))->message);
  EXPECT_FALSE(DecodeMessageEvent(event("text", R"({"text":""})"))->message);
  EXPECT_FALSE(DecodeMessageEvent(event("text", "not json")));
  EXPECT_FALSE(DecodeMessageEvent(Obj(R"({"message":{}})")));
}

// ---- answers ----

TEST(LarkApiAnswers, TokenBotInfoEndpointAndErrors) {
  auto token = DecodeTenantToken(
      200,
      R"({"code":0,"msg":"ok","tenant_access_token":"t-caecc734c2e3328a62489fe0648c4b98779515d3","expire":7200})");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->expire_seconds, 7200);
  auto refused = DecodeTenantToken(400, R"({"code":10014,"msg":"app secret invalid"})");
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().final);

  auto bot = DecodeBotInfo(200, R"({"code":0,"msg":"ok","bot":{"activate_status":2,
      "app_name":"name","avatar_url":"https://x","ip_white_list":[],"open_id":"ou_e6ad"}})");
  ASSERT_TRUE(bot);
  EXPECT_EQ(bot->open_id, "ou_e6ad");

  auto endpoint = DecodeWsEndpoint(200, R"({"code":0,"msg":"ok","data":{
      "URL":"wss://msg-frontier.feishu.cn/ws/v2?fpid=493&aid=552564&device_id=7402&access_key=x&service_id=33554678&ticket=y",
      "ClientConfig":{"ReconnectCount":-1,"ReconnectInterval":120,"ReconnectNonce":30,"PingInterval":90}}})");
  ASSERT_TRUE(endpoint);
  EXPECT_EQ(endpoint->service_id, 33554678);
  EXPECT_EQ(endpoint->device_id, "7402");
  EXPECT_EQ(endpoint->config.ping_interval_s, 90);
  ClientConfig config = endpoint->config;
  ApplyClientConfig(R"({"PingInterval":5})", config);
  EXPECT_EQ(config.ping_interval_s, 5);
  auto busy = DecodeWsEndpoint(200, R"({"code":1,"msg":"system busy"})");
  ASSERT_FALSE(busy);
  EXPECT_FALSE(busy.error().final);
  auto denied = DecodeWsEndpoint(200, R"({"code":10003,"msg":"invalid app"})");
  ASSERT_FALSE(denied);
  EXPECT_TRUE(denied.error().final);
  EXPECT_TRUE(IsTokenError(99991663));
  EXPECT_FALSE(IsTokenError(230002));
}

// ---- outgoing ----

domain::MessageElement Plain(std::string text) {
  domain::MessageElement e;
  e.text = std::move(text);
  return e;
}

TEST(LarkOutgoing, StreamCardsAreSharedMarkdownCardsOfTheText) {
  auto card = util::ParseJson(StreamCardContent("**so far** \"quoted\""));
  ASSERT_TRUE(card);
  const auto& obj = card->as_object();
  EXPECT_EQ(obj.at("config").as_object().at("update_multi"), true);  // PATCH needs a shared card
  const auto& element = obj.at("elements").as_array().at(0).as_object();
  EXPECT_EQ(element.at("tag"), "markdown");
  EXPECT_EQ(element.at("content"), "**so far** \"quoted\"");
  auto body = util::ParseJson(PatchBody(StreamCardContent("x")));
  ASSERT_TRUE(body);
  EXPECT_TRUE(body->as_object().at("content").is_string());  // the card as a JSON string

  domain::MessageChain chain{Plain("hi ")};
  domain::MessageElement at;
  at.type = ElementType::kAt;
  at.target = "ou_x";
  chain.push_back(at);
  domain::MessageElement image;
  image.type = ElementType::kImage;
  image.url = "https://example.com/a.png";
  chain.push_back(image);
  chain.push_back(Plain(" bye"));
  EXPECT_EQ(StreamCardText(chain), "hi <at id=ou_x></at> bye");  // images follow the card
}

TEST(LarkOutgoing, TextPostAndImages) {
  domain::OutgoingMessage m;
  m.target_id = "oc_1";
  m.chain.push_back(Plain("hello"));
  domain::MessageElement image;
  image.type = ElementType::kImage;
  image.base64 = "data:image/png;base64,iVBORw0KGgo=";
  m.chain.push_back(image);
  domain::MessageElement at;
  at.type = ElementType::kAt;
  at.target = "ou_x";
  m.chain.push_back(at);
  m.chain.push_back(Plain(" first\nsecond"));
  ASSERT_TRUE(CheckDeliverable(m));
  auto parts = EncodeOutgoing(m);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].msg_type, "text");
  EXPECT_EQ(parts[0].content, R"({"text":"hello"})");
  EXPECT_EQ(parts[1].msg_type, "image");
  EXPECT_EQ(parts[1].upload_element, 1u);
  EXPECT_EQ(parts[2].msg_type, "post");
  EXPECT_EQ(parts[2].content,
            R"({"zh_cn":{"title":"","content":[[{"tag":"at","user_id":"ou_x"},)"
            R"({"tag":"text","text":" first"}],[{"tag":"text","text":"second"}]]}})");
  EXPECT_EQ(ImageBytes(image).value(), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(SendBody("oc_1", "text", R"({"text":"a"})", "u-1"),
            R"({"receive_id":"oc_1","msg_type":"text","content":"{\"text\":\"a\"}","uuid":"u-1"})");

  domain::OutgoingMessage voice;
  voice.target_id = "ou_1";
  domain::MessageElement audio;
  audio.type = ElementType::kVoice;
  voice.chain.push_back(audio);
  EXPECT_NE(CheckDeliverable(voice).error().message.find("message_chain[0]"), std::string::npos);
  domain::OutgoingMessage empty;
  empty.target_id = "ou_1";
  EXPECT_FALSE(CheckDeliverable(empty));
  domain::OutgoingMessage no_target;
  no_target.chain.push_back(Plain("x"));
  EXPECT_FALSE(CheckDeliverable(no_target));
}

// ---- the adapter against a scripted Open API ----

class LarkWebhookTest : public ::testing::Test {
 protected:
  static constexpr std::string_view kKey = "encrypt-key-1";

  void SetUp() override {
    http_ = std::make_shared<test::ScriptedHttp>(
        [this](const net::HttpRequest& r) { return Answer(r); });
    adapter_ = MakeLarkAdapter(
        test::HttpAdapterContext(util::JsonObject{{"app_id", "cli_1"},
                                                  {"app_secret", "secret-1"},
                                                  {"enable-webhook", true},
                                                  {"encrypt-key", kKey},
                                                  {"verification-token", "vt-1"},
                                                  {"api_base_url", "http://lark.test"}},
                                 io_, http_, clock_, host_, "bot-1"));
    adapter_->Start();
    ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  }

  void TearDown() override { EXPECT_TRUE(test::StopAndWait(*adapter_)); }

  util::Result<net::HttpResponse> Answer(const net::HttpRequest& r) {
    if (r.url.ends_with("/tenant_access_token/internal")) {
      const int n = ++tokens_;
      return test::Reply(200, fmt::format(R"({{"code":0,"msg":"ok","tenant_access_token":"t-{}",)"
                                          R"("expire":7200}})",
                                          n));
    }
    if (r.url.ends_with("/bot/v3/info")) {
      return test::Reply(200, R"({"code":0,"msg":"ok","bot":{"app_name":"B","open_id":"ou_bot"}})");
    }
    if (r.url.find("/resources/") != std::string::npos) {
      return test::Reply(200, "\x89PNG", {{"content-type", "image/png"}});
    }
    if (r.url.find("/im/v1/messages") != std::string::npos) {
      if (stale_token_.exchange(false)) {
        return test::Reply(400,
                           R"({"code":99991663,"msg":"Invalid access token for authorization"})",
                           {{"content-type", "application/json"}});
      }
      return test::Reply(200, R"({"code":0,"msg":"success","data":{"message_id":"om_sent"}})",
                         {{"content-type", "application/json"}});
    }
    return test::Reply(404, R"({"code":404,"msg":"not found"})");
  }

  WebhookCall Signed(const std::string& inner, bool good_signature = true) {
    WebhookCall call;
    call.method = "POST";
    call.body =
        R"({"encrypt":")" + common::LarkEncrypt(kKey, inner, "fedcba9876543210").value() + R"("})";
    const std::string sig = common::LarkSignature("1700000000", "n-1", kKey, call.body);
    call.headers = {{"x-lark-request-timestamp", "1700000000"},
                    {"x-lark-request-nonce", "n-1"},
                    {"x-lark-signature", good_signature ? sig : std::string(64, '0')}};
    return call;
  }

  static std::string TextEvent(std::string_view event_id, std::string_view token = "vt-1") {
    return fmt::format(
        R"({{"schema":"2.0","header":{{"event_id":"{}","event_type":"im.message.receive_v1",
        "token":"{}"}},"event":{{"sender":{{"sender_id":{{"open_id":"ou_a"}},"sender_type":"user"}},
        "message":{{"message_id":"om_in","chat_id":"oc_1","chat_type":"p2p","message_type":"text",
        "content":"{{\"text\":\"hello\"}}"}}}}}})",
        event_id, token);
  }

  test::IoThreads io_;
  util::SystemClock clock_;
  test::RecordingHost host_;
  std::shared_ptr<test::ScriptedHttp> http_;
  std::unique_ptr<PlatformAdapter> adapter_;
  std::atomic<int> tokens_{0};
  std::atomic<bool> stale_token_{false};
};

TEST_F(LarkWebhookTest, SignsInWithTheTenantTokenAndBotInfo) {
  EXPECT_EQ(host_.Read([&] { return host_.connected; }), std::vector<std::string>{"ou_bot"});
  auto info = http_->RequestsTo("/open-apis/bot/v3/info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(test::HeaderOf(info[0], "Authorization"), "Bearer t-1");
}

TEST_F(LarkWebhookTest, ChallengeSignatureTokenAndRedeliveries) {
  auto challenge = test::CallWebhook(
      *adapter_, Signed(R"({"challenge":"c-9","token":"vt-1","type":"url_verification"})"));
  EXPECT_EQ(challenge.status, 200);
  EXPECT_EQ(challenge.body, R"({"challenge":"c-9"})");
  // Unsigned but encrypted (only Lark has the key): taken too.
  WebhookCall unsigned_call =
      Signed(R"({"challenge":"c-10","token":"vt-1","type":"url_verification"})");
  unsigned_call.headers.clear();
  EXPECT_EQ(test::CallWebhook(*adapter_, unsigned_call).body, R"({"challenge":"c-10"})");
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(TextEvent("e-1"), false)).status, 401);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(TextEvent("e-1", "other"))).status, 401);
  WebhookCall plain;
  plain.method = "POST";
  plain.body = TextEvent("e-1");
  EXPECT_EQ(test::CallWebhook(*adapter_, plain).status, 401);
  WebhookCall garbage = Signed("{not json");
  EXPECT_EQ(test::CallWebhook(*adapter_, garbage).status, 400);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(TextEvent("e-1"))).status, 200);
  EXPECT_EQ(test::CallWebhook(*adapter_, Signed(TextEvent("e-1"))).status, 200);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(host_.Read([&] { return host_.messages.size(); }), 1u);
  EXPECT_EQ(host_.Read([&] { return host_.messages[0].chat_id; }), "ou_a");
}

TEST_F(LarkWebhookTest, AnInvalidTokenMidSendIsRefetchedOnce) {
  domain::OutgoingMessage m;
  m.target_id = "ou_a";
  m.chain.push_back(Plain("hi"));
  stale_token_ = true;
  auto receipt = test::SendAndWait(*adapter_, m, "om_in");
  ASSERT_TRUE(receipt) << receipt.error().message;
  EXPECT_EQ(receipt->message_id, "om_sent");
  auto replies = http_->RequestsTo("/open-apis/im/v1/messages/om_in/reply");
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(test::HeaderOf(replies[0], "Authorization"), "Bearer t-1");
  EXPECT_EQ(test::HeaderOf(replies[1], "Authorization"), "Bearer t-2");
  EXPECT_EQ(util::ParseJson(replies[0].body)->as_object().at("uuid"),
            util::ParseJson(replies[1].body)->as_object().at("uuid"));
  // A proactive send to a group names chat_id.
  m.target_type = domain::TargetType::kGroup;
  m.target_id = "oc_1";
  ASSERT_TRUE(test::SendAndWait(*adapter_, m));
  auto sends = http_->RequestsTo("/open-apis/im/v1/messages?receive_id_type=chat_id");
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(test::HeaderOf(sends[0], "Authorization"), "Bearer t-2");
}

}  // namespace
}  // namespace sb::platforms::lark
