// The WeChat/WeCom callback envelope (platforms/common/wechat_callback): Tencent's published WeCom
// sample opened end to end, the passive-reply envelope sealed and reopened, and hostile XML, forged
// signatures and stale timestamps coming back as error values.
#include "platforms/common/wechat_callback.hpp"

#include <gtest/gtest.h>

#include <string>

#include "platforms/common/wechat_crypto.hpp"
#include "support/wechat_samples.hpp"

namespace sb::platforms::common {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): test constants
using util::ErrorCode;

WeChatEndpoint SampleEndpoint() {
  return {.token = kWeComToken,
          .aes_key = WeChatAesKey(kWeComAesKey).value(),
          .receive_id = kWeComCorpId};
}

WeChatQuery Query(std::string msg_signature, std::string timestamp, std::string nonce,
                  std::string echostr = {}) {
  WeChatQuery query;
  query.msg_signature = std::move(msg_signature);
  query.timestamp = std::move(timestamp);
  query.nonce = std::move(nonce);
  query.echostr = std::move(echostr);
  return query;
}

WeChatQuery PostQuery() { return Query(kWeComPostSignature, kWeComPostTimestamp, kWeComPostNonce); }

std::string SamplePostBody() {
  return std::string("<xml><ToUserName><![CDATA[") + kWeComCorpId +
         "]]></ToUserName><Encrypt><![CDATA[" + kWeComPostEncrypt +
         "]]></Encrypt><AgentID><![CDATA[1000002]]></AgentID></xml>";
}

TEST(WeChatCallback, ReadsTheQuery) {
  domain::PlatformCall call;
  call.query = {{"msg_signature", "abc"}, {"timestamp", "1"},      {"nonce", "n"},
                {"echostr", "e"},         {"encrypt_type", "aes"}, {"openid", "o"},
                {"signature", "s"},       {"timestamp", "2"}};
  const WeChatQuery q = ReadWeChatQuery(call);
  EXPECT_EQ(q.msg_signature, "abc");
  EXPECT_EQ(q.timestamp, "1");  // the first of a repeated parameter
  EXPECT_EQ(q.nonce, "n");
  EXPECT_EQ(q.echostr, "e");
  EXPECT_EQ(q.encrypt_type, "aes");
  EXPECT_EQ(q.openid, "o");
  EXPECT_EQ(q.signature, "s");
}

TEST(WeChatCallback, OfficialSampleVerifyEcho) {
  const WeChatQuery q =
      Query(kWeComEchoSignature, kWeComEchoTimestamp, kWeComEchoNonce, kWeComEchoStr);
  EXPECT_EQ(WeChatEchoFromVerify(SampleEndpoint(), q).value(), kWeComEchoPlain);

  WeChatQuery forged = q;
  forged.nonce = "47744684";
  EXPECT_EQ(WeChatEchoFromVerify(SampleEndpoint(), forged).error().code,
            ErrorCode::kUnauthenticated);
  WeChatQuery no_echo = q;
  no_echo.echostr.clear();
  EXPECT_EQ(WeChatEchoFromVerify(SampleEndpoint(), no_echo).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(WeChatCallback, OfficialSamplePostOpens) {
  const auto fields = OpenWeChatXml(SampleEndpoint(), PostQuery(), SamplePostBody()).value();
  EXPECT_EQ(FieldOr(fields, "FromUserName"), "ChenJiaShun");
  EXPECT_EQ(FieldOr(fields, "MsgType"), "text");
  EXPECT_EQ(FieldOr(fields, "Content"), "\xe4\xbd\xa0\xe5\xa5\xbd");
  EXPECT_EQ(FieldOr(fields, "MsgId"), "1456453720");
  EXPECT_EQ(FieldOr(fields, "AgentID"), "1000002");
  EXPECT_EQ(FieldOr(fields, "Missing"), "");
}

TEST(WeChatCallback, ForgedOrMisaddressedPostsAreUnauthenticated) {
  WeChatQuery forged = PostQuery();
  forged.timestamp = "1476422780";
  EXPECT_EQ(OpenWeChatXml(SampleEndpoint(), forged, SamplePostBody()).error().code,
            ErrorCode::kUnauthenticated);
  WeChatEndpoint other_corp = SampleEndpoint();
  other_corp.receive_id = "ww0000000000000000";
  EXPECT_EQ(OpenWeChatXml(other_corp, PostQuery(), SamplePostBody()).error().code,
            ErrorCode::kUnauthenticated);
  WeChatEndpoint wrong_token = SampleEndpoint();
  wrong_token.token = "another-token";
  EXPECT_EQ(OpenWeChatXml(wrong_token, PostQuery(), SamplePostBody()).error().code,
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(OpenWeChatXml(SampleEndpoint(), PostQuery(), "<xml><ToUserName>x</ToUserName></xml>")
                .error()
                .code,
            ErrorCode::kInvalidArgument);
}

TEST(WeChatCallback, SealedReplyReopens) {
  const WeChatEndpoint endpoint = SampleEndpoint();
  const std::string inner = BuildWeChatXml(
      {{"ToUserName", "ChenJiaShun"}, {"MsgType", "text"}, {"Content", "a ]]> b <c> & d"}});
  const std::string sealed =
      SealWeChatXml(endpoint, inner, "1700000000", "nonce-1", "0123456789abcdef").value();
  const auto outer = ParseWeChatXml(sealed).value();
  EXPECT_EQ(FieldOr(outer, "TimeStamp"), "1700000000");
  EXPECT_EQ(FieldOr(outer, "Nonce"), "nonce-1");
  EXPECT_EQ(FieldOr(outer, "MsgSignature"),
            WeChatSignature(endpoint.token, "1700000000", "nonce-1", FieldOr(outer, "Encrypt")));
  const WeChatQuery query =
      Query(std::string(FieldOr(outer, "MsgSignature")), "1700000000", "nonce-1");
  const auto reopened = OpenWeChatXml(endpoint, query, sealed).value();
  EXPECT_EQ(FieldOr(reopened, "Content"), "a ]]> b <c> & d");
  EXPECT_EQ(FieldOr(reopened, "ToUserName"), "ChenJiaShun");
  // A fresh random prefix each time.
  EXPECT_NE(SealWeChatXml(endpoint, inner, "1", "n").value(),
            SealWeChatXml(endpoint, inner, "1", "n").value());
}

TEST(WeChatCallback, HostileXmlIsRefused) {
  for (const char* bad : {"", "not xml", "<xml><a>1</a>", "<root><a>1</a></root>", "<xml/><xml/>",
                          "<?xml version=\"1.0\"?><!DOCTYPE xml [<!ENTITY e "
                          "\"boom\">]><xml><a>&e;</a></xml>"}) {
    auto parsed = ParseWeChatXml(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ParseWeChatXml("<xml><a>" + std::string(kMaxWeChatXmlBytes, 'x') + "</a></xml>"));
  // An entity XML does not define is kept as text, never looked up anywhere.
  EXPECT_EQ(FieldOr(ParseWeChatXml("<xml><a>&undefined;</a></xml>").value(), "a"), "&undefined;");
}

TEST(WeChatCallback, ParsesPlainTextEntitiesAndNesting) {
  const auto fields =
      ParseWeChatXml(
          "<?xml version=\"1.0\"?>\n<xml>\n <A>1 &lt; 2 &amp; 3</A><B><![CDATA[x]]></B>"
          "<C><D>in</D>side</C><A>second</A><E/></xml>")
          .value();
  EXPECT_EQ(FieldOr(fields, "A"), "1 < 2 & 3");
  EXPECT_EQ(FieldOr(fields, "B"), "x");
  EXPECT_EQ(FieldOr(fields, "C"), "inside");
  EXPECT_EQ(FieldOr(fields, "E"), "");
  EXPECT_EQ(fields.count("E"), 1u);
}

TEST(WeChatCallback, TimestampFreshness) {
  const util::TimePoint now = util::FromUnixMillis(1'700'000'000'000);
  const auto window = std::chrono::seconds(300);
  EXPECT_TRUE(WeChatTimestampFresh("1700000000", now, window));
  EXPECT_TRUE(WeChatTimestampFresh("1699999700", now, window));
  EXPECT_TRUE(WeChatTimestampFresh("1700000300", now, window));
  EXPECT_FALSE(WeChatTimestampFresh("1699999699", now, window));
  EXPECT_FALSE(WeChatTimestampFresh("1700000301", now, window));
  for (const char* bad : {"", "abc", "17e8", "-", "1700000000 ", "99999999999999999999999"}) {
    EXPECT_FALSE(WeChatTimestampFresh(bad, now, window)) << bad;
  }
}

}  // namespace
}  // namespace sb::platforms::common
