// The WeCom adapters' pure parts (platforms/wecom): the shared callback front door on Tencent's
// published sample and on sealed, forged, stale and wrong-receive-id callbacks; the app codec
// (messages, targets, /message/send bodies); the customer-service codec (kf_msg_or_event,
// sync_msg pages and messages, /kf/send_msg bodies); the outgoing plan (2048-byte text cuts) and
// the API answer helpers.
#include <gtest/gtest.h>

#include <string>

#include "platforms/common/wechat_callback.hpp"
#include "platforms/common/wechat_crypto.hpp"
#include "platforms/wecom/wecom_api.hpp"
#include "platforms/wecom/wecom_callback.hpp"
#include "platforms/wecom/wecom_codec.hpp"
#include "platforms/wecom/wecom_outgoing.hpp"
#include "platforms/wecom/wecomcs_codec.hpp"
#include "platforms/wecom/wecomcs_cursors.hpp"
#include "support/wechat_samples.hpp"
#include "util/json.hpp"

namespace sb::platforms::wecom {
namespace {

using common::WeChatFields;
using domain::ElementType;
using util::ErrorCode;
namespace samples = common::samples;

common::WeChatEndpoint SampleEndpoint() {
  return {.token = samples::kWeComToken,
          .aes_key = common::WeChatAesKey(samples::kWeComAesKey).value(),
          .receive_id = samples::kWeComCorpId};
}

domain::MessageElement Element(ElementType type, std::string text, std::string url = {},
                               std::string base64 = {}, std::string target = {}) {
  domain::MessageElement element;
  element.type = type;
  element.text = std::move(text);
  element.url = std::move(url);
  element.base64 = std::move(base64);
  element.target = std::move(target);
  return element;
}

util::TimePoint At(long long unix_seconds) {
  return util::TimePoint(std::chrono::seconds(unix_seconds));
}

// A callback as WeCom sends it: the inner XML sealed (SealWeChatXml's envelope carries the
// Encrypt, MsgSignature, TimeStamp and Nonce WeCom puts in the body and the query).
domain::PlatformCall Sealed(const common::WeChatEndpoint& endpoint, const std::string& inner,
                            const std::string& timestamp) {
  const std::string envelope = common::SealWeChatXml(endpoint, inner, timestamp, "12345").value();
  const auto fields = common::ParseWeChatXml(envelope).value();
  domain::PlatformCall call;
  call.method = "POST";
  call.query = {{"msg_signature", std::string(common::FieldOr(fields, "MsgSignature"))},
                {"timestamp", timestamp},
                {"nonce", "12345"}};
  call.body = "<xml><ToUserName><![CDATA[" + endpoint.receive_id + "]]></ToUserName><Encrypt>" +
              std::string(common::FieldOr(fields, "Encrypt")) + "</Encrypt></xml>";
  return call;
}

TEST(WeComCallback, OfficialSampleVerificationEcho) {
  domain::PlatformCall call;
  call.method = "GET";
  call.query = {{"msg_signature", samples::kWeComEchoSignature},
                {"timestamp", samples::kWeComEchoTimestamp},
                {"nonce", samples::kWeComEchoNonce},
                {"echostr", samples::kWeComEchoStr}};
  // The echo is answered whatever the clock says: WeCom's console sends it once, right away.
  auto opened = OpenCallback(SampleEndpoint(), call, At(2'000'000'000));
  ASSERT_TRUE(opened.answer);
  EXPECT_EQ(opened.answer->status, 200);
  EXPECT_EQ(opened.answer->body, samples::kWeComEchoPlain);

  call.query[0].second = "0000000000000000000000000000000000000000";
  opened = OpenCallback(SampleEndpoint(), call, At(1476416373));
  ASSERT_TRUE(opened.answer);
  EXPECT_EQ(opened.answer->status, 401);
  EXPECT_FALSE(opened.log.empty());
}

TEST(WeComCallback, OfficialSamplePostOpensWithinTheWindow) {
  domain::PlatformCall call;
  call.method = "POST";
  call.query = {{"msg_signature", samples::kWeComPostSignature},
                {"timestamp", samples::kWeComPostTimestamp},
                {"nonce", samples::kWeComPostNonce}};
  call.body = std::string("<xml><ToUserName><![CDATA[") + samples::kWeComCorpId +
              "]]></ToUserName><Encrypt><![CDATA[" + samples::kWeComPostEncrypt +
              "]]></Encrypt><AgentID><![CDATA[1000002]]></AgentID></xml>";
  auto opened = OpenCallback(SampleEndpoint(), call, At(1476422779 + 60));
  ASSERT_FALSE(opened.answer) << opened.answer->body;
  EXPECT_EQ(common::FieldOr(opened.fields, "FromUserName"), "ChenJiaShun");
  EXPECT_EQ(common::FieldOr(opened.fields, "Content"), "\xe4\xbd\xa0\xe5\xa5\xbd");

  // The same capture replayed an hour later: stale.
  opened = OpenCallback(SampleEndpoint(), call, At(1476422779 + 3600));
  ASSERT_TRUE(opened.answer);
  EXPECT_EQ(opened.answer->status, 401);
}

TEST(WeComCallback, ForgedWrongReceiverMalformedOversizedAndWrongMethod) {
  const auto endpoint = SampleEndpoint();
  const auto now = At(1'800'000'000);
  const std::string inner =
      "<xml><FromUserName>u1</FromUserName><MsgType>text</MsgType><Content>hi</Content>"
      "<MsgId>1</MsgId></xml>";
  auto call = Sealed(endpoint, inner, "1800000000");
  auto opened = OpenCallback(endpoint, call, now);
  ASSERT_FALSE(opened.answer);
  EXPECT_EQ(common::FieldOr(opened.fields, "Content"), "hi");

  auto forged = call;
  forged.query[0].second[0] = forged.query[0].second[0] == 'a' ? 'b' : 'a';
  opened = OpenCallback(endpoint, forged, now);
  ASSERT_TRUE(opened.answer);
  EXPECT_EQ(opened.answer->status, 401);

  auto other = endpoint;
  other.receive_id = "wwsomeoneelse";
  opened = OpenCallback(endpoint, Sealed(other, inner, "1800000000"), now);
  ASSERT_TRUE(opened.answer);
  EXPECT_EQ(opened.answer->status, 401);
  EXPECT_NE(opened.log.find("receive"), std::string::npos) << opened.log;

  opened = OpenCallback(endpoint, Sealed(endpoint, "<xml><a>", "1800000000"), now);
  ASSERT_TRUE(opened.answer);
  EXPECT_EQ(opened.answer->status, 400);

  auto big = call;
  big.body.append(kMaxCallbackBytes, ' ');
  EXPECT_EQ(OpenCallback(endpoint, big, now).answer->status, 413);
  auto put = call;
  put.method = "PUT";
  EXPECT_EQ(OpenCallback(endpoint, put, now).answer->status, 405);
}

TEST(WeComCodec, TextMessageUsesLangBotSessionForm) {
  WeChatFields fields{{"ToUserName", "ww1"},        {"FromUserName", "ChenJiaShun"},
                      {"CreateTime", "1476422779"}, {"MsgType", "text"},
                      {"Content", "hello"},         {"MsgId", "1456453720"},
                      {"AgentID", "1000002"}};
  auto in = DecodeAppMessage(fields).value();
  ASSERT_TRUE(in.message);
  EXPECT_EQ(in.message->chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(in.message->chat_id, "uChenJiaShun");
  EXPECT_EQ(in.message->sender_id, "uChenJiaShun");
  EXPECT_EQ(in.message->message_id, "1456453720");
  ASSERT_EQ(in.message->chain.size(), 2u);
  EXPECT_EQ(in.message->chain[0].type, ElementType::kSource);
  EXPECT_EQ(in.message->chain[1].text, "hello");
  EXPECT_EQ(in.agent_id, "1000002");
  EXPECT_EQ(in.dedupe_key, "m:1456453720");
}

TEST(WeComCodec, ImagesEventsAndBadInput) {
  WeChatFields image{{"FromUserName", "u1"},
                     {"MsgType", "image"},
                     {"MediaId", "m1"},
                     {"PicUrl", "http://p/x"},
                     {"MsgId", "9"}};
  auto in = DecodeAppMessage(image).value();
  ASSERT_TRUE(in.message);
  EXPECT_EQ(in.media_id, "m1");
  EXPECT_EQ(in.message->chain[in.image_element].type, ElementType::kImage);

  WeChatFields event{
      {"FromUserName", "u1"}, {"MsgType", "event"}, {"Event", "enter_agent"}, {"CreateTime", "5"}};
  in = DecodeAppMessage(event).value();
  EXPECT_FALSE(in.message);
  EXPECT_EQ(in.dedupe_key, "e:u1:5:enter_agent");

  WeChatFields voice{{"FromUserName", "u1"}, {"MsgType", "voice"}, {"MsgId", "2"}};
  EXPECT_FALSE(DecodeAppMessage(voice).value().message);

  EXPECT_EQ(DecodeAppMessage({{"MsgType", "text"}}).error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(DecodeAppMessage({{"FromUserName", "u"}, {"MsgType", "text"}}));
  EXPECT_FALSE(DecodeAppMessage({{"FromUserName", "u"}, {"MsgType", "image"}}));
  EXPECT_FALSE(DecodeAppMessage(
      {{"FromUserName", "u"}, {"MsgType", "text"}, {"Content", "x"}, {"AgentID", "12a"}}));
}

TEST(WeComCodec, TargetsAndDeliverability) {
  auto t = ParseAppTarget("zhangsan|1000002").value();
  EXPECT_EQ(t.user_id, "zhangsan");
  EXPECT_EQ(t.agent_id, "1000002");
  t = ParseAppTarget("uzhangsan").value();
  EXPECT_EQ(t.user_id, "zhangsan");
  EXPECT_TRUE(t.agent_id.empty());
  for (const char* bad : {"", "u", "zhangsan", "a|", "|1", "a|x1", "a b|1", "u|1x"}) {
    EXPECT_FALSE(ParseAppTarget(bad)) << bad;
  }
  domain::OutgoingMessage message{domain::TargetType::kPerson, "zhangsan|1000002", {}};
  message.chain.push_back(Element(ElementType::kPlain, "hi"));
  EXPECT_TRUE(CheckAppDeliverable(message));
  message.target_type = domain::TargetType::kGroup;
  EXPECT_NE(CheckAppDeliverable(message).error().message.find("no groups"), std::string::npos);
  message.target_type = domain::TargetType::kPerson;
  message.chain.push_back(Element(ElementType::kVoice, "", "https://x/a.amr"));
  EXPECT_NE(CheckAppDeliverable(message).error().message.find("message_chain[1]"),
            std::string::npos);
}

TEST(WeComCodec, SendBodies) {
  auto text = util::ParseJson(EncodeAppText("zhangsan", "1000002", "hi")).value().as_object();
  EXPECT_EQ(text.at("touser").as_string(), "zhangsan");
  EXPECT_EQ(text.at("msgtype").as_string(), "text");
  EXPECT_EQ(text.at("agentid").as_int64(), 1000002);
  EXPECT_EQ(text.at("text").at("content").as_string(), "hi");
  auto image = util::ParseJson(EncodeAppMedia("a", "7", "image", "MID")).value().as_object();
  EXPECT_EQ(image.at("image").at("media_id").as_string(), "MID");
}

TEST(WeComOutgoing, TextIsCutAt2048BytesOnWholeCharacters) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xe5\xa5\xbd";  // 3000 bytes of CJK
  auto pieces = SplitUtf8Bytes(text, kMaxTextBytes);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].size(), 2046u);  // 682 whole characters
  EXPECT_EQ(pieces[0].size() + pieces[1].size(), text.size());

  domain::MessageChain chain;
  chain.push_back(Element(ElementType::kPlain, std::string(3000, 'a')));
  chain.push_back(Element(ElementType::kAt, "", "", "", "lisi"));
  chain.push_back(Element(ElementType::kImage, "", "", "iVBORw0KGgo="));
  chain.push_back(Element(ElementType::kPlain, "after"));
  chain.push_back(Element(ElementType::kFile, "", "https://h/docs/r.pdf?x=1"));
  auto parts = PlanParts(chain);
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[0].text.size(), 2048u);
  EXPECT_EQ(parts[1].text, std::string(952, 'a') + "@lisi ");
  EXPECT_EQ(parts[2].kind, PartKind::kImage);
  EXPECT_EQ(parts[3].text, "after");
  EXPECT_EQ(parts[4].kind, PartKind::kFile);
  EXPECT_EQ(parts[4].name, "r.pdf");

  EXPECT_TRUE(DecodeImageBase64("data:image/png;base64,iVBORw0KGgo="));
  EXPECT_FALSE(DecodeImageBase64("data:image/png;base64,!!!"));
  EXPECT_FALSE(CheckChain({}));
}

TEST(WeComCsCodec, NudgeSyncRequestAndPage) {
  auto nudge = DecodeKfNudge({{"MsgType", "event"},
                              {"Event", "kf_msg_or_event"},
                              {"Token", "ENCtoken"},
                              {"OpenKfId", "wkAJ2GCAAASSm4"}})
                   .value();
  EXPECT_EQ(nudge.token, "ENCtoken");
  EXPECT_EQ(nudge.open_kfid, "wkAJ2GCAAASSm4");
  EXPECT_FALSE(DecodeKfNudge({{"MsgType", "text"}}));

  auto request = util::ParseJson(EncodeSyncRequest("", "T", "K")).value().as_object();
  EXPECT_FALSE(request.contains("cursor"));
  EXPECT_EQ(request.at("token").as_string(), "T");
  EXPECT_EQ(request.at("limit").as_int64(), 1000);
  EXPECT_EQ(request.at("open_kfid").as_string(), "K");
  request = util::ParseJson(EncodeSyncRequest("C1", "", "")).value().as_object();
  EXPECT_EQ(request.at("cursor").as_string(), "C1");
  EXPECT_FALSE(request.contains("token"));

  // The docs' example answer.
  auto answer = util::ParseJson(R"({"errcode":0,"errmsg":"ok","next_cursor":"4gw7MepFLfgF2VC5npN",
    "has_more":1,"msg_list":[{"msgid":"from_msgid_4622416642169452483",
    "open_kfid":"wkAJ2GCAAASSm4_FhToWMFea0xAFfd3Q","external_userid":"wmAJ2GCAAAme1XQRC-NI-q0_ZM9ukoAw",
    "send_time":1615478585,"origin":3,"msgtype":"text","text":{"content":"hello world","menu_id":"101"}}]})")
                    .value()
                    .as_object();
  auto page = DecodeSyncPage(answer).value();
  EXPECT_EQ(page.next_cursor, "4gw7MepFLfgF2VC5npN");
  EXPECT_TRUE(page.has_more);
  ASSERT_EQ(page.messages.size(), 1u);
  auto in = DecodeKfMessage(page.messages[0]).value();
  ASSERT_TRUE(in.message);
  EXPECT_EQ(in.message->chat_id, "uwmAJ2GCAAAme1XQRC-NI-q0_ZM9ukoAw");
  EXPECT_EQ(in.message->message_id, "from_msgid_4622416642169452483");
  EXPECT_EQ(in.message->chain[1].text, "hello world");
  EXPECT_EQ(in.open_kfid, "wkAJ2GCAAASSm4_FhToWMFea0xAFfd3Q");
  EXPECT_EQ(in.send_time, 1615478585);

  answer["msg_list"] = "x";
  EXPECT_FALSE(DecodeSyncPage(answer));
}

TEST(WeComCsCodec, OriginsImagesTargetsAndBodies) {
  util::JsonObject servicer{{"msgid", "m1"},
                            {"origin", 5},
                            {"msgtype", "text"},
                            {"open_kfid", "wk1"},
                            {"external_userid", "wm1"}};
  EXPECT_FALSE(DecodeKfMessage(servicer).value().message);
  util::JsonObject image{{"msgid", "m2"},
                         {"origin", 3},
                         {"msgtype", "image"},
                         {"open_kfid", "wk1"},
                         {"external_userid", "wm1"},
                         {"image", util::JsonObject{{"media_id", "MEDIA"}}}};
  auto in = DecodeKfMessage(image).value();
  EXPECT_EQ(in.media_id, "MEDIA");
  EXPECT_FALSE(DecodeKfMessage(util::JsonObject{{"origin", 3}}));
  image.erase("external_userid");
  EXPECT_FALSE(DecodeKfMessage(image));

  auto t = ParseKfTarget("wm1|wk1").value();
  EXPECT_EQ(t.external_userid, "wm1");
  EXPECT_EQ(t.open_kfid, "wk1");
  EXPECT_TRUE(ParseKfTarget("uwm1").value().open_kfid.empty());
  EXPECT_FALSE(ParseKfTarget("wm1"));
  auto body = util::ParseJson(EncodeKfText(t, "hi")).value().as_object();
  EXPECT_EQ(body.at("touser").as_string(), "wm1");
  EXPECT_EQ(body.at("open_kfid").as_string(), "wk1");
  EXPECT_EQ(body.at("text").at("content").as_string(), "hi");
  domain::OutgoingMessage group{domain::TargetType::kGroup, "wm1|wk1", {}};
  EXPECT_FALSE(CheckKfDeliverable(group));
}

TEST(WeComCsCursors, KeptPerBotAndAccount) {
  KfCursorStore store;
  EXPECT_EQ(store.Get("bot1", "wk1"), "");
  store.Set("bot1", "wk1", "c1");
  store.Set("bot1", "wk2", "c2");
  store.Set("bot2", "wk1", "c3");
  store.Set("bot1", "wk1", "c4");
  EXPECT_EQ(store.Get("bot1", "wk1"), "c4");
  EXPECT_EQ(store.Get("bot1", "wk2"), "c2");
  EXPECT_EQ(store.Get("bot2", "wk1"), "c3");
  EXPECT_EQ(store.size(), 3u);
}

TEST(WeComApi, AnswersRefusalsAndUploads) {
  net::HttpResponse response;
  response.status = 200;
  response.body = R"({"errcode":42001,"errmsg":"access_token expired"})";
  auto answer = ReadAnswer(response, "message/send").value();
  EXPECT_TRUE(IsTokenRejected(answer.errcode));
  EXPECT_EQ(Refusal("message/send", answer).code, ErrorCode::kUpstreamAuth);
  answer.errcode = 45009;
  EXPECT_EQ(Refusal("x", answer).code, ErrorCode::kUpstreamRateLimited);
  answer.errcode = 40056;
  auto error = Refusal("message/send", answer);
  EXPECT_EQ(error.code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(error.message.find("40056"), std::string::npos);
  response.status = 502;
  EXPECT_FALSE(ReadAnswer(response, "x"));
  response.status = 200;
  response.body = "[]";
  EXPECT_FALSE(ReadAnswer(response, "x"));

  const std::string upload = EncodeUpload("B", "a.png", "xyz");
  EXPECT_NE(upload.find("name=\"media\"; filename=\"a.png\"; filelength=3"), std::string::npos);
  EXPECT_NE(upload.find("\r\n\r\nxyz\r\n--B--\r\n"), std::string::npos);
  EXPECT_EQ(QueryEscape("a b&c/=~"), "a%20b%26c%2F%3D~");
}

}  // namespace
}  // namespace sb::platforms::wecom
