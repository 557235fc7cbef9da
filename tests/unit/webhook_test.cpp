// Tests of the webhook adapter's wire format: signatures, inbound decoding, outbound encoding.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "domain/message_json.hpp"
#include "domain/message_text.hpp"
#include "platforms/webhook/webhook_codec.hpp"
#include "util/crypto.hpp"
#include "util/json.hpp"

namespace sb::platforms::webhook {
namespace {

using domain::ElementType;
using domain::MessageElement;
using domain::OutgoingMessage;
using domain::TargetType;
using util::ErrorCode;

constexpr std::string_view kSecret = "whsec_test";
constexpr std::int64_t kNow = 1700000000;

util::TimePoint At(std::int64_t unix_seconds) {
  return util::TimePoint(std::chrono::seconds(unix_seconds));
}

// Fails the test unless `body` decodes to kInvalidArgument whose message starts with `field`.
void ExpectInvalid(const std::string& body, const std::string& field) {
  auto r = DecodeInbound(body);
  ASSERT_FALSE(r.has_value()) << body;
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << body;
  EXPECT_EQ(r.error().message.rfind(field, 0), 0u)
      << "message '" << r.error().message << "' should start with " << field;
}

// An inbound body whose message_chain is `chain` (JSON text) and is otherwise valid.
std::string WithChain(const std::string& chain) {
  return R"({"message_id":"m1","sender":{"id":"u1","name":"Ann"},)"
         R"("chat":{"type":"group","id":"g1"},"message_chain":)" +
         chain + "}";
}

TEST(WebhookSign, MatchesHmacSha256Hex) {
  EXPECT_EQ(Sign(kSecret, "body"), "sha256=" + util::HexEncode(util::HmacSha256(kSecret, "body")));
  EXPECT_EQ(SignTimestamped(kSecret, kNow, "body"), Sign(kSecret, "1700000000.body"));
}

// RFC 4231 test case 2 pins the primitive to the standard, independent of our own crypto code.
TEST(WebhookSign, KnownAnswer) {
  EXPECT_EQ(Sign("Jefe", "what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(WebhookVerify, RoundTrip) {
  const std::string body = R"({"hello":"world"})";
  const std::string sig = SignTimestamped(kSecret, kNow, body);
  EXPECT_TRUE(Verify(kSecret, body, sig, "1700000000", At(kNow)));
}

TEST(WebhookVerify, RefusesTamperedBodyWrongSecretAndOtherTimestamp) {
  const std::string body = R"({"n":1})";
  const std::string sig = SignTimestamped(kSecret, kNow, body);
  EXPECT_FALSE(Verify(kSecret, R"({"n":2})", sig, "1700000000", At(kNow)));
  EXPECT_FALSE(Verify("other", body, sig, "1700000000", At(kNow)));
  // The timestamp is signed: moving it, even within the window, breaks the signature.
  EXPECT_FALSE(Verify(kSecret, body, sig, "1700000001", At(kNow)));
}

TEST(WebhookVerify, RefusesMalformedSignatureHeader) {
  const std::string body = "x";
  const std::string sig = SignTimestamped(kSecret, kNow, body);
  EXPECT_FALSE(Verify(kSecret, body, "", "1700000000", At(kNow)));
  EXPECT_FALSE(Verify(kSecret, body, sig.substr(7), "1700000000", At(kNow)));  // no "sha256="
  EXPECT_FALSE(Verify(kSecret, body, "sha1=" + sig.substr(7), "1700000000", At(kNow)));
  EXPECT_FALSE(Verify(kSecret, body, sig + "00", "1700000000", At(kNow)));
  EXPECT_FALSE(Verify(kSecret, body, sig.substr(0, sig.size() - 1), "1700000000", At(kNow)));
}

TEST(WebhookVerify, RefusesEmptySecret) {
  const std::string body = "x";
  EXPECT_FALSE(Verify("", body, SignTimestamped("", kNow, body), "1700000000", At(kNow)));
}

TEST(WebhookVerify, SkewWindowIsInclusive) {
  const std::string body = "x";
  for (std::int64_t ts : {kNow - 300, kNow + 300}) {
    EXPECT_TRUE(
        Verify(kSecret, body, SignTimestamped(kSecret, ts, body), std::to_string(ts), At(kNow)))
        << ts;
  }
}

TEST(WebhookVerify, RefusesStaleAndFutureTimestamps) {
  const std::string body = "x";
  for (std::int64_t ts : {kNow - 301, kNow + 301, std::int64_t{0}}) {
    EXPECT_FALSE(
        Verify(kSecret, body, SignTimestamped(kSecret, ts, body), std::to_string(ts), At(kNow)))
        << ts;
  }
  // A custom window applies.
  const std::string sig = SignTimestamped(kSecret, kNow - 10, body);
  EXPECT_FALSE(
      Verify(kSecret, body, sig, std::to_string(kNow - 10), At(kNow), std::chrono::seconds(5)));
  EXPECT_TRUE(
      Verify(kSecret, body, sig, std::to_string(kNow - 10), At(kNow), std::chrono::seconds(10)));
}

TEST(WebhookVerify, RefusesMissingOrMalformedTimestamp) {
  const std::string body = "x";
  const std::string sig = SignTimestamped(kSecret, kNow, body);
  for (std::string_view ts :
       {"", " 1700000000", "1700000000 ", "+1700000000", "-1700000000", "1700000000.0",
        "0x6553f100", "abc", "1700000000000000000000", "99999999999999999999999999"}) {
    EXPECT_FALSE(Verify(kSecret, body, sig, ts, At(kNow))) << "'" << ts << "'";
  }
  // A signature made with the decorated form is still refused: the header must be plain digits.
  EXPECT_FALSE(Verify(kSecret, body, Sign(kSecret, "+1700000000.x"), "+1700000000", At(kNow)));
}

TEST(WebhookDecode, FullMessage) {
  auto r = DecodeInbound(
      R"({"message_id":"m1","sender":{"id":"u1","name":"Ann"},"chat":{"type":"group","id":"g1"},)"
      R"("message_chain":[{"type":"Plain","text":"hi"}],"timestamp":1700000000,"extra":true})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->message_id, "m1");
  EXPECT_EQ(r->sender_id, "u1");
  EXPECT_EQ(r->sender_name, "Ann");
  EXPECT_EQ(r->chat_type, TargetType::kGroup);
  EXPECT_EQ(r->chat_id, "g1");
  EXPECT_EQ(r->timestamp, 1700000000);
  ASSERT_EQ(r->chain.size(), 1u);
  EXPECT_EQ(r->chain[0].type, ElementType::kPlain);
  EXPECT_EQ(r->chain[0].text, "hi");
}

TEST(WebhookDecode, PersonChatWithoutOptionalFields) {
  auto r =
      DecodeInbound(R"({"message_id":"m2","sender":{"id":"u1"},"chat":{"type":"person","id":"u1"},)"
                    R"("message_chain":[{"type":"AtAll"}]})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->chat_type, TargetType::kPerson);
  EXPECT_EQ(r->sender_name, "");
  EXPECT_EQ(r->timestamp, 0);
}

TEST(WebhookDecode, EveryElementType) {
  auto r = DecodeInbound(WithChain(
      R"([{"type":"Plain","text":"hi"},{"type":"Image","url":"https://x/i.png"},)"
      R"({"type":"Image","base64":"aGk="},{"type":"At","target":"bot"},{"type":"AtAll"},)"
      R"({"type":"Voice","url":"https://x/v.ogg"},{"type":"Voice","base64":"dm8="},)"
      R"({"type":"Quote","id":"m0"},{"type":"File","url":"https://x/f.pdf","name":"f.pdf"},)"
      R"({"type":"File","url":"https://x/g"}])"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& c = r->chain;
  ASSERT_EQ(c.size(), 10u);
  EXPECT_EQ(c[0].type, ElementType::kPlain);
  EXPECT_EQ(c[0].text, "hi");
  EXPECT_EQ(c[1].type, ElementType::kImage);
  EXPECT_EQ(c[1].url, "https://x/i.png");
  EXPECT_EQ(c[2].type, ElementType::kImage);
  EXPECT_EQ(c[2].base64, "aGk=");
  EXPECT_EQ(c[3].type, ElementType::kAt);
  EXPECT_EQ(c[3].target, "bot");
  EXPECT_EQ(c[4].type, ElementType::kAtAll);
  EXPECT_EQ(c[5].type, ElementType::kVoice);
  EXPECT_EQ(c[5].url, "https://x/v.ogg");
  EXPECT_EQ(c[6].type, ElementType::kVoice);
  EXPECT_EQ(c[6].base64, "dm8=");
  EXPECT_EQ(c[7].type, ElementType::kQuote);
  EXPECT_EQ(c[7].id, "m0");
  EXPECT_EQ(c[8].type, ElementType::kFile);
  EXPECT_EQ(c[8].url, "https://x/f.pdf");
  EXPECT_EQ(c[8].name, "f.pdf");
  EXPECT_EQ(c[9].name, "");
}

TEST(WebhookDecode, AQuoteMayCarryItsOriginAsLangBotSendsIt) {
  auto r = DecodeInbound(WithChain(
      R"([{"type":"Quote","id":"m0","sender_id":"u7","origin":[{"type":"Plain","text":"old "},)"
      R"({"type":"Image","url":"https://x/i.png"},{"type":"Plain","text":"words"}]},)"
      R"({"type":"Plain","text":"and?"}])"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->chain[0].text, "old words");
  EXPECT_EQ(r->chain[0].target, "u7");
  std::string big(5000, 'w');
  auto cut = DecodeInbound(WithChain(R"([{"type":"Quote","id":"m0","origin":[{"type":"Plain",)"
                                     R"("text":")" +
                                     big + R"("}]},{"type":"Plain","text":"x"}])"));
  ASSERT_TRUE(cut.has_value()) << cut.error().message;
  EXPECT_LE(cut->chain[0].text.size(), domain::kMaxQuotedTextBytes);
  ExpectInvalid(WithChain(R"([{"type":"Quote","id":"m0","origin":"text"}])"),
                "message_chain[0].origin must be an array");
  ExpectInvalid(WithChain(R"([{"type":"Quote","id":"m0","origin":[1]}])"),
                "message_chain[0].origin holds a value that is not an object");
  // What Switchboard writes of a Quote reads back the same.
  MessageElement quote = domain::MakeQuote("m1", "the quoted words", "u7");
  auto back =
      DecodeInbound(WithChain("[" + util::SerializeJson(domain::EncodeMessageElement(quote)) +
                              R"(,{"type":"Plain","text":"x"}])"));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->chain[0].id, "m1");
  EXPECT_EQ(back->chain[0].target, "u7");
  EXPECT_EQ(back->chain[0].text, "the quoted words");
}

TEST(WebhookDecode, EmptyPlainTextIsAllowed) {
  auto r = DecodeInbound(WithChain(R"([{"type":"Plain","text":""}])"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->chain[0].text, "");
}

TEST(WebhookDecode, FieldsOfOtherTypesAreIgnored) {
  // Only the fields a type uses are read, so a stray one cannot smuggle data through.
  auto r = DecodeInbound(WithChain(R"([{"type":"At","target":"u2","text":"x","url":5}])"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->chain[0].text, "");
  EXPECT_EQ(r->chain[0].url, "");
}

TEST(WebhookDecode, TopLevelErrors) {
  auto malformed = DecodeInbound("{not json");
  ASSERT_FALSE(malformed.has_value());
  EXPECT_EQ(malformed.error().code, ErrorCode::kInvalidArgument);
  ExpectInvalid("[]", "body must be a JSON object");
  const std::string sender = R"("sender":{"id":"u1"})";
  const std::string chat = R"("chat":{"type":"group","id":"g1"})";
  const std::string chain = R"("message_chain":[{"type":"AtAll"}])";
  const std::string mid = R"("message_id":"m1")";
  ExpectInvalid("{" + sender + "," + chat + "," + chain + "}", "message_id is required");
  ExpectInvalid(R"({"message_id":7,)" + sender + "," + chat + "," + chain + "}",
                "message_id must be a string");
  ExpectInvalid(R"({"message_id":"",)" + sender + "," + chat + "," + chain + "}",
                "message_id must not be empty");
  ExpectInvalid("{" + mid + "," + chat + "," + chain + "}", "sender is required");
  ExpectInvalid("{" + mid + R"(,"sender":"u1",)" + chat + "," + chain + "}",
                "sender must be an object");
  ExpectInvalid("{" + mid + R"(,"sender":{},)" + chat + "," + chain + "}", "sender.id");
  ExpectInvalid("{" + mid + R"(,"sender":{"id":1},)" + chat + "," + chain + "}",
                "sender.id must be a string");
  ExpectInvalid("{" + mid + R"(,"sender":{"id":"u1","name":[]},)" + chat + "," + chain + "}",
                "sender.name must be a string");
  ExpectInvalid("{" + mid + "," + sender + "," + chain + "}", "chat is required");
  ExpectInvalid("{" + mid + "," + sender + R"(,"chat":{"id":"g1"},)" + chain + "}",
                "chat.type is required");
  ExpectInvalid("{" + mid + "," + sender + R"(,"chat":{"type":"channel","id":"g1"},)" + chain + "}",
                "chat.type must be person or group");
  ExpectInvalid("{" + mid + "," + sender + R"(,"chat":{"type":"group"},)" + chain + "}",
                "chat.id is required");
  ExpectInvalid("{" + mid + "," + sender + "," + chat + "}", "message_chain is required");
  ExpectInvalid("{" + mid + "," + sender + "," + chat + R"(,"message_chain":{}})",
                "message_chain must be an array");
  ExpectInvalid("{" + mid + "," + sender + "," + chat + R"(,"message_chain":[]})",
                "message_chain must hold at least one element");
  ExpectInvalid("{" + mid + "," + sender + "," + chat + "," + chain + R"(,"timestamp":"1"})",
                "timestamp must be a non-negative integer");
  ExpectInvalid("{" + mid + "," + sender + "," + chat + "," + chain + R"(,"timestamp":-1})",
                "timestamp must be a non-negative integer");
  ExpectInvalid("{" + mid + "," + sender + "," + chat + "," + chain + R"(,"timestamp":1.5})",
                "timestamp must be a non-negative integer");
}

TEST(WebhookDecode, ElementErrorsNameTheField) {
  const std::string ok = R"({"type":"AtAll"},{"type":"AtAll"},)";
  ExpectInvalid(WithChain("[" + ok + R"("x"])"), "message_chain[2] must be an object");
  ExpectInvalid(WithChain("[" + ok + R"({}])"), "message_chain[2].type is required");
  ExpectInvalid(WithChain("[" + ok + R"({"type":3}])"), "message_chain[2].type must be a string");
  ExpectInvalid(WithChain("[" + ok + R"({"type":"Sticker"}])"),
                "message_chain[2].type 'Sticker' is not one of");
  // Source is ours to add; the message id travels as message_id.
  ExpectInvalid(WithChain("[" + ok + R"({"type":"Source","id":"m1"}])"),
                "message_chain[2].type 'Source' is not one of");
  ExpectInvalid(WithChain(R"([{"type":"Plain"}])"), "message_chain[0].text is required for Plain");
  ExpectInvalid(WithChain(R"([{"type":"Plain","text":5}])"),
                "message_chain[0].text must be a string");
  ExpectInvalid(WithChain(R"([{"type":"Image"}])"), "message_chain[0] (Image) needs url or base64");
  ExpectInvalid(WithChain(R"([{"type":"Voice","url":""}])"),
                "message_chain[0] (Voice) needs url or base64");
  ExpectInvalid(WithChain(R"([{"type":"Image","url":true}])"),
                "message_chain[0].url must be a string");
  ExpectInvalid(WithChain(R"([{"type":"Image","base64":1}])"),
                "message_chain[0].base64 must be a string");
  ExpectInvalid(WithChain(R"([{"type":"At"}])"), "message_chain[0].target is required");
  ExpectInvalid(WithChain(R"([{"type":"At","target":""}])"),
                "message_chain[0].target must not be empty");
  ExpectInvalid(WithChain(R"([{"type":"Quote"}])"), "message_chain[0].id is required");
  ExpectInvalid(WithChain(R"([{"type":"File","name":"f"}])"), "message_chain[0].url is required");
  ExpectInvalid(WithChain(R"([{"type":"File","url":"u","name":{}}])"),
                "message_chain[0].name must be a string");
}

TEST(WebhookDecode, SizeBounds) {
  // Elements: 100 pass, 101 fail.
  std::string hundred = "[";
  for (int i = 0; i < 100; ++i) hundred += std::string(i ? "," : "") + R"({"type":"AtAll"})";
  EXPECT_TRUE(DecodeInbound(WithChain(hundred + "]")).has_value());
  ExpectInvalid(WithChain(hundred + R"(,{"type":"AtAll"}])"),
                "message_chain must hold at most 100 elements");

  // Text: 64 KiB passes, one byte more fails.
  const std::string text(kMaxTextBytes, 'a');
  EXPECT_TRUE(DecodeInbound(WithChain(R"([{"type":"Plain","text":")" + text + R"("}])")));
  ExpectInvalid(WithChain(R"([{"type":"Plain","text":")" + text + R"(b"}])"),
                "message_chain[0].text must be at most 65536 bytes");

  // Ids: 256 bytes pass, 257 fail, wherever they are.
  const std::string id(kMaxIdBytes, 'i');
  const std::string long_id = id + "i";
  auto body = [](const std::string& mid, const std::string& sid, const std::string& cid,
                 const std::string& element) {
    return R"({"message_id":")" + mid + R"(","sender":{"id":")" + sid +
           R"("},"chat":{"type":"group","id":")" + cid + R"("},"message_chain":[)" + element + "]}";
  };
  const std::string at_all = R"({"type":"AtAll"})";
  EXPECT_TRUE(DecodeInbound(body(id, id, id, R"({"type":"At","target":")" + id + R"("})")));
  ExpectInvalid(body(long_id, "u", "g", at_all), "message_id must be at most 256 bytes");
  ExpectInvalid(body("m", long_id, "g", at_all), "sender.id must be at most 256 bytes");
  ExpectInvalid(body("m", "u", long_id, at_all), "chat.id must be at most 256 bytes");
  ExpectInvalid(body("m", "u", "g", R"({"type":"At","target":")" + long_id + R"("})"),
                "message_chain[0].target must be at most 256 bytes");
  ExpectInvalid(body("m", "u", "g", R"({"type":"Quote","id":")" + long_id + R"("})"),
                "message_chain[0].id must be at most 256 bytes");
  ExpectInvalid(
      WithChain(R"([{"type":"Image","url":")" + std::string(kMaxUrlBytes + 1, 'u') + R"("}])"),
      "message_chain[0].url must be at most 8192 bytes");
}

OutgoingMessage EveryKindOfReply() {
  OutgoingMessage msg;
  msg.target_type = TargetType::kGroup;
  msg.target_id = "g1";
  auto add = [&msg](ElementType type, auto fill) {
    MessageElement e;
    e.type = type;
    fill(e);
    msg.chain.push_back(e);
  };
  add(ElementType::kPlain, [](MessageElement& e) { e.text = "héllo \"world\"\n"; });
  add(ElementType::kPlain, [](MessageElement&) {});
  add(ElementType::kImage, [](MessageElement& e) { e.url = "https://x/i.png"; });
  add(ElementType::kImage, [](MessageElement& e) { e.base64 = "aGk="; });
  add(ElementType::kAt, [](MessageElement& e) { e.target = "u1"; });
  add(ElementType::kAtAll, [](MessageElement&) {});
  add(ElementType::kVoice, [](MessageElement& e) {
    e.url = "https://x/v.ogg";
    e.base64 = "dm8=";
  });
  add(ElementType::kQuote, [](MessageElement& e) { e.id = "m0"; });
  add(ElementType::kFile, [](MessageElement& e) {
    e.url = "https://x/f.pdf";
    e.name = "f.pdf";
  });
  return msg;
}

void ExpectSameElement(const MessageElement& a, const MessageElement& b, std::size_t i) {
  EXPECT_EQ(a.type, b.type) << i;
  EXPECT_EQ(a.text, b.text) << i;
  EXPECT_EQ(a.url, b.url) << i;
  EXPECT_EQ(a.base64, b.base64) << i;
  EXPECT_EQ(a.target, b.target) << i;
  EXPECT_EQ(a.name, b.name) << i;
  EXPECT_EQ(a.id, b.id) << i;
}

TEST(WebhookEncode, Shape) {
  OutgoingMessage msg;
  msg.target_type = TargetType::kPerson;
  msg.target_id = "u1";
  MessageElement e;
  e.text = "hi";
  e.url = "ignored: Plain carries text only";
  msg.chain.push_back(e);
  EXPECT_EQ(EncodeOutbound(msg, "b-uuid", "m1"),
            R"({"bot_uuid":"b-uuid","target":{"type":"person","id":"u1"},"reply_to":"m1",)"
            R"("message_chain":[{"type":"Plain","text":"hi"}]})");
  EXPECT_EQ(EncodeOutbound(msg, "b-uuid", ""),
            R"({"bot_uuid":"b-uuid","target":{"type":"person","id":"u1"},)"
            R"("message_chain":[{"type":"Plain","text":"hi"}]})");
}

TEST(WebhookEncode, RoundTripThroughDecodeOutbound) {
  const OutgoingMessage msg = EveryKindOfReply();
  ASSERT_TRUE(CheckDeliverable(msg).has_value());
  auto r = DecodeOutbound(EncodeOutbound(msg, "b-uuid", "m9"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->bot_uuid, "b-uuid");
  EXPECT_EQ(r->reply_to, "m9");
  EXPECT_EQ(r->message.target_type, TargetType::kGroup);
  EXPECT_EQ(r->message.target_id, "g1");
  ASSERT_EQ(r->message.chain.size(), msg.chain.size());
  for (std::size_t i = 0; i < msg.chain.size(); ++i) {
    ExpectSameElement(r->message.chain[i], msg.chain[i], i);
  }
}

TEST(WebhookEncode, ChainIsReadableByTheInboundDecoder) {
  // The two directions share one element shape: an integrator can echo our chain back to us.
  const OutgoingMessage msg = EveryKindOfReply();
  auto out = util::ParseJson(EncodeOutbound(msg, "b", ""));
  ASSERT_TRUE(out.has_value());
  util::JsonObject inbound;
  inbound["message_id"] = "m1";
  inbound["sender"] = util::JsonObject{{"id", "u1"}};
  inbound["chat"] = util::JsonObject{{"type", "group"}, {"id", "g1"}};
  inbound["message_chain"] = out->as_object().at("message_chain");
  auto r = DecodeInbound(util::SerializeJson(inbound));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->chain.size(), msg.chain.size());
  for (std::size_t i = 0; i < msg.chain.size(); ++i)
    ExpectSameElement(r->chain[i], msg.chain[i], i);
}

TEST(WebhookDeliverable, EveryCarriedTypeIsFine) {
  EXPECT_TRUE(CheckDeliverable(EveryKindOfReply()).has_value());
}

TEST(WebhookDeliverable, RefusalsNameTheElement) {
  auto expect = [](OutgoingMessage msg, const std::string& field) {
    auto r = CheckDeliverable(msg);
    ASSERT_FALSE(r.has_value()) << field;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().message.rfind(field, 0), 0u) << r.error().message;
  };
  auto with = [](ElementType type) {
    OutgoingMessage msg = EveryKindOfReply();
    MessageElement e;
    e.type = type;
    msg.chain.push_back(e);
    return msg;
  };
  expect(with(ElementType::kImage), "message_chain[9] (Image) needs url or base64");
  expect(with(ElementType::kVoice), "message_chain[9] (Voice) needs url or base64");
  expect(with(ElementType::kFile), "message_chain[9].url is required for File");
  expect(with(ElementType::kAt), "message_chain[9].target is required for At");
  expect(with(ElementType::kQuote), "message_chain[9].id is required for Quote");
  expect(with(ElementType::kSource), "message_chain[9] (Source) cannot be sent");
  OutgoingMessage no_target = EveryKindOfReply();
  no_target.target_id.clear();
  expect(no_target, "target.id must not be empty");
  OutgoingMessage empty = EveryKindOfReply();
  empty.chain.clear();
  expect(empty, "message_chain must hold at least one element");
}

}  // namespace
}  // namespace sb::platforms::webhook
