// Tests of the OneBot v11 wire format (the aiocqhttp adapter's codec): event frames, CQ strings,
// action frames and responses, from payloads shaped as NapCat and the standard send them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/websocket.hpp"
#include "platforms/onebot/onebot_adapter.hpp"
#include "platforms/onebot/onebot_codec.hpp"
#include "platforms/onebot/onebot_upgrade.hpp"
#include "support/adapter_harness.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::onebot {
namespace {

using domain::ElementType;
using domain::MessageElement;
using domain::OutgoingMessage;
using domain::TargetType;
using util::ErrorCode;

// A NapCat group message (messagePostFormat "array") that mentions the bot.
constexpr std::string_view kGroupAtBot =
    R"({"self_id":10001,"user_id":20002,"time":1760000000,"message_id":1843256,)"
    R"("message_seq":1843256,"real_id":1843256,"real_seq":"5120","message_type":"group",)"
    R"("sender":{"user_id":20002,"nickname":"Bob","card":"","role":"member"},)"
    R"("raw_message":"[CQ:at,qq=10001] 在吗","font":14,"sub_type":"normal",)"
    R"("message":[{"type":"at","data":{"qq":"10001"}},{"type":"text","data":{"text":" 在吗"}}],)"
    R"("message_format":"array","post_type":"message","group_id":123456,"group_name":"G"})";

constexpr std::string_view kPrivate =
    R"({"time":1760000001,"self_id":10001,"post_type":"message","message_type":"private",)"
    R"("sub_type":"friend","message_id":77,"user_id":20002,"font":0,"raw_message":"hi",)"
    R"("message":[{"type":"text","data":{"text":"hi"}}],)"
    R"("sender":{"user_id":20002,"nickname":"Bob","sex":"unknown","age":0}})";

Frame MustDecode(std::string_view text, std::string_view bot = "10001") {
  auto r = DecodeFrame(text, bot);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message);
  return r ? *r : Frame{};
}

void ExpectInvalid(std::string_view text, std::string_view starts_with) {
  auto r = DecodeFrame(text, "10001");
  ASSERT_FALSE(r.has_value()) << text;
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << text;
  EXPECT_EQ(r.error().message.rfind(starts_with, 0), 0u)
      << "'" << r.error().message << "' should start with '" << starts_with << "'";
}

std::string PrivateWith(std::string_view message_json) {
  return std::string(R"({"time":1,"self_id":10001,"post_type":"message","message_type":"private",)"
                     R"("sub_type":"friend","message_id":5,"user_id":20002,"message":)") +
         std::string(message_json) + "}";
}

TEST(OneBotDecode, GroupMessageMentioningTheBot) {
  Frame f = MustDecode(kGroupAtBot);
  ASSERT_EQ(f.kind, FrameKind::kMessage);
  EXPECT_EQ(f.self_id, "10001");
  const auto& m = *f.message;
  EXPECT_EQ(m.chat_type, TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "123456");
  EXPECT_EQ(m.sender_id, "20002");
  EXPECT_EQ(m.sender_name, "Bob");  // card empty: the nickname
  EXPECT_EQ(m.message_id, "1843256");
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[0].id, "1843256");
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, "10001");  // the bot's id: the pipeline's mention rule matches
  EXPECT_EQ(m.chain[2].type, ElementType::kPlain);
  EXPECT_EQ(m.chain[2].text, " 在吗");
}

TEST(OneBotDecode, PrivateMessage) {
  Frame f = MustDecode(kPrivate);
  ASSERT_EQ(f.kind, FrameKind::kMessage);
  EXPECT_EQ(f.message->chat_type, TargetType::kPerson);
  EXPECT_EQ(f.message->chat_id, "20002");
  EXPECT_EQ(f.message->sender_id, "20002");
  ASSERT_EQ(f.message->chain.size(), 2u);
  EXPECT_EQ(f.message->chain[1].text, "hi");
}

TEST(OneBotDecode, GroupCardWinsOverNickname) {
  std::string text(kGroupAtBot);
  text.replace(text.find(R"("card":"")"), 9, R"("card":"Bobby")");
  EXPECT_EQ(MustDecode(text).message->sender_name, "Bobby");
}

TEST(OneBotDecode, AllSegmentKinds) {
  Frame f = MustDecode(PrivateWith(
      R"([{"type":"reply","data":{"id":"-2147483000"}},)"
      R"({"type":"text","data":{"text":"a"}},{"type":"face","data":{"id":"178"}},)"
      R"({"type":"face","data":{"id":"14","raw":{"faceText":"/微笑"}}},)"
      R"({"type":"text","data":{"text":"b"}},)"
      R"({"type":"image","data":{"file":"abc.image","url":"https://multimedia.nt.qq.com.cn/x?a=1",)"
      R"("summary":"[图片]","file_size":"1234"}},)"
      R"({"type":"record","data":{"file":"v.amr","url":"http://voice.example/v.amr"}},)"
      R"({"type":"at","data":{"qq":"all"}},{"type":"at","data":{"qq":30003}},)"
      R"({"type":"file","data":{"file":"https://f.example/r.pdf","name":"r.pdf"}},)"
      R"({"type":"json","data":{"data":"{}"}},{"type":"video","data":{"file":"v.mp4"}}])"));
  ASSERT_EQ(f.kind, FrameKind::kMessage);
  const auto& c = f.message->chain;
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0].type, ElementType::kSource);
  EXPECT_EQ(c[1].type, ElementType::kQuote);
  EXPECT_EQ(c[1].id, "-2147483000");
  EXPECT_EQ(c[2].type, ElementType::kPlain);
  EXPECT_EQ(c[2].text, "a[face:178]/微笑b");  // adjacent text and faces joined
  EXPECT_EQ(c[3].type, ElementType::kImage);
  EXPECT_EQ(c[3].url, "https://multimedia.nt.qq.com.cn/x?a=1");
  EXPECT_EQ(c[4].type, ElementType::kVoice);
  EXPECT_EQ(c[4].url, "http://voice.example/v.amr");
  EXPECT_EQ(c[5].type, ElementType::kAtAll);
  EXPECT_EQ(c[6].type, ElementType::kAt);
  EXPECT_EQ(c[6].target, "30003");  // a number where the standard says string: accepted
  EXPECT_EQ(c[7].type, ElementType::kFile);
  EXPECT_EQ(c[7].name, "r.pdf");
}

TEST(OneBotDecode, CqStringMessage) {
  Frame f = MustDecode(
      PrivateWith(R"("[CQ:reply,id=9][CQ:at,qq=10001] &#91;x&#93; a&amp;b [CQ:face,id=178])"
                  R"([CQ:image,file=a.jpg,url=https://i.example/a.jpg?x=1&amp;y=2&#44;3]")"));
  ASSERT_EQ(f.kind, FrameKind::kMessage);
  const auto& c = f.message->chain;
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[1].type, ElementType::kQuote);
  EXPECT_EQ(c[1].id, "9");
  EXPECT_EQ(c[2].type, ElementType::kAt);
  EXPECT_EQ(c[3].text, " [x] a&b [face:178]");
  EXPECT_EQ(c[4].type, ElementType::kImage);
  EXPECT_EQ(c[4].url, "https://i.example/a.jpg?x=1&y=2,3");
}

TEST(OneBotDecode, SingleSegmentObjectAndNullData) {
  Frame f = MustDecode(PrivateWith(R"({"type":"text","data":{"text":"one"}})"));
  ASSERT_EQ(f.kind, FrameKind::kMessage);
  EXPECT_EQ(f.message->chain[1].text, "one");
  Frame g = MustDecode(PrivateWith(R"([{"type":"shake","data":null}])"));
  EXPECT_EQ(g.kind, FrameKind::kIgnored);  // nothing the bot can read
}

TEST(OneBotDecode, IdsAsStrings) {
  Frame f = MustDecode(
      R"({"self_id":"10001","post_type":"message","message_type":"group","message_id":"31",)"
      R"("user_id":"20002","group_id":"123","message":"hi"})");
  ASSERT_EQ(f.kind, FrameKind::kMessage);
  EXPECT_EQ(f.message->chat_id, "123");
  EXPECT_EQ(f.message->message_id, "31");
  // A string that is no number is refused rather than guessed at.
  ExpectInvalid(R"({"self_id":1,"post_type":"message","message_type":"group","message_id":"x1",)"
                R"("user_id":2,"group_id":3,"message":"hi"})",
                "message_id must be an integer");
}

TEST(OneBotDecode, OwnMessagesAndMessageSentAreIgnored) {
  Frame own = MustDecode(
      R"({"self_id":10001,"post_type":"message","message_type":"private","message_id":1,)"
      R"("user_id":10001,"message":"loop"})");
  EXPECT_EQ(own.kind, FrameKind::kIgnored);
  EXPECT_EQ(own.ignored, "the bot's own message");
  // No X-Self-ID: the event's own self_id decides.
  Frame own2 = MustDecode(
      R"({"self_id":10001,"post_type":"message","message_type":"private","message_id":1,)"
      R"("user_id":10001,"message":"loop"})",
      "");
  EXPECT_EQ(own2.kind, FrameKind::kIgnored);
  Frame sent = MustDecode(
      R"({"self_id":10001,"post_type":"message_sent","message_type":"private","message_id":2,)"
      R"("user_id":10001,"target_id":20002,"message":[{"type":"text","data":{"text":"x"}}]})");
  EXPECT_EQ(sent.kind, FrameKind::kIgnored);
  EXPECT_EQ(sent.ignored, "message_sent");
}

TEST(OneBotDecode, NoticesRequestsAndOtherMessageTypesAreIgnored) {
  EXPECT_EQ(MustDecode(R"({"time":1,"self_id":1,"post_type":"notice","notice_type":"group_recall",)"
                       R"("group_id":1,"user_id":2,"operator_id":2,"message_id":3})")
                .kind,
            FrameKind::kIgnored);
  EXPECT_EQ(MustDecode(R"({"time":1,"self_id":1,"post_type":"request","request_type":"friend",)"
                       R"("user_id":2,"comment":"hi","flag":"f"})")
                .kind,
            FrameKind::kIgnored);
  EXPECT_EQ(MustDecode(R"({"self_id":1,"post_type":"message","message_type":"guild",)"
                       R"("user_id":2,"message":"x"})")
                .kind,
            FrameKind::kIgnored);
  EXPECT_EQ(MustDecode(R"({"self_id":1,"post_type":"something_new"})").kind, FrameKind::kIgnored);
}

TEST(OneBotDecode, MetaEvents) {
  Frame life = MustDecode(R"({"time":1760000000,"self_id":10001,"post_type":"meta_event",)"
                          R"("meta_event_type":"lifecycle","sub_type":"connect"})");
  ASSERT_EQ(life.kind, FrameKind::kMeta);
  EXPECT_EQ(life.meta.kind, MetaKind::kLifecycle);
  EXPECT_EQ(life.meta.sub_type, "connect");
  EXPECT_EQ(life.self_id, "10001");
  Frame beat = MustDecode(
      R"({"time":1760000000,"self_id":10001,"post_type":"meta_event",)"
      R"("meta_event_type":"heartbeat","status":{"online":true,"good":true},"interval":30000})");
  ASSERT_EQ(beat.kind, FrameKind::kMeta);
  EXPECT_EQ(beat.meta.kind, MetaKind::kHeartbeat);
  EXPECT_EQ(beat.meta.interval_ms, 30000);
  Frame neg = MustDecode(
      R"({"self_id":1,"post_type":"meta_event","meta_event_type":"heartbeat","interval":-5})");
  EXPECT_EQ(neg.meta.interval_ms, 0);
}

TEST(OneBotDecode, ActionResponses) {
  Frame ok = MustDecode(
      R"({"status":"ok","retcode":0,"data":{"message_id":1001},"message":"","wording":"",)"
      R"("echo":"sb:7","stream":"normal-action"})");
  ASSERT_EQ(ok.kind, FrameKind::kResponse);
  EXPECT_TRUE(ok.response.ok);
  EXPECT_EQ(ok.response.echo, "sb:7");
  EXPECT_EQ(ok.response.message_id, "1001");
  EXPECT_EQ(ok.response.failure, "");

  Frame failed = MustDecode(
      R"({"status":"failed","retcode":1400,"data":null,"message":"bad","wording":"群不存在",)"
      R"("echo":{"seq":3}})");
  EXPECT_FALSE(failed.response.ok);
  EXPECT_EQ(failed.response.retcode, 1400);
  EXPECT_EQ(failed.response.failure, "群不存在");
  EXPECT_EQ(failed.response.echo, R"({"seq":3})");

  Frame async = MustDecode(R"({"status":"async","retcode":1,"data":null,"echo":"e"})");
  EXPECT_TRUE(async.response.ok);
  Frame no_retcode = MustDecode(R"({"status":"ok","echo":"e"})");
  EXPECT_FALSE(no_retcode.response.ok);
  Frame login = MustDecode(
      R"({"status":"ok","retcode":0,"data":{"user_id":10001,"nickname":"Bot"},"echo":"x"})");
  EXPECT_EQ(login.response.user_id, "10001");
  EXPECT_EQ(login.response.nickname, "Bot");
  // An implementation-specific failure with only a status: not ok.
  EXPECT_FALSE(MustDecode(R"({"status":"failed","retcode":0,"echo":"e"})").response.ok);
}

TEST(OneBotDecode, GetMsgAnswerGivesTheQuotedText) {
  Frame got = MustDecode(
      R"({"status":"ok","retcode":0,"echo":"sb:9","data":{"time":1,"message_type":"group",)"
      R"("message_id":55,"real_id":55,"sender":{"user_id":20003,"nickname":"Cy"},)"
      R"("message":[{"type":"reply","data":{"id":"54"}},{"type":"text","data":{"text":"会议"}},)"
      R"({"type":"image","data":{"url":"https://x/y.png"}},{"type":"text","data":{"text":" at 3"}}]}})");
  EXPECT_TRUE(got.response.ok);
  EXPECT_EQ(got.response.message_text, "会议[Image] at 3");
  EXPECT_EQ(got.response.sender_id, "20003");
  // The CQ-string form; an image alone is described.
  Frame cq = MustDecode(
      R"({"status":"ok","retcode":0,"echo":"e","data":{"message":"a &#91;b&#93;[CQ:face,id=1]"}})");
  EXPECT_EQ(cq.response.message_text, "a [b][face:1]");
  Frame image =
      MustDecode(R"({"status":"ok","retcode":0,"echo":"e","data":{"message":[{"type":"image",)"
                 R"("data":{"url":"https://x/y.png"}}]}})");
  EXPECT_EQ(image.response.message_text, "[Image]");
  // A long message is cut; a bad shape gives no text, not an error.
  std::string big(10000, 'z');
  Frame cut =
      MustDecode(R"({"status":"ok","retcode":0,"echo":"e","data":{"message":")" + big + R"("}})");
  EXPECT_LE(cut.response.message_text.size(), domain::kMaxQuotedTextBytes);
  Frame bad = MustDecode(R"({"status":"ok","retcode":0,"echo":"e","data":{"message":42}})");
  EXPECT_TRUE(bad.response.ok);
  EXPECT_EQ(bad.response.message_text, "");
}

TEST(OneBotDecode, MalformedFrames) {
  ExpectInvalid("not json", "malformed JSON");
  ExpectInvalid("", "malformed JSON");
  ExpectInvalid(R"([1,2])", "a frame must be a JSON object");
  ExpectInvalid(R"("text")", "a frame must be a JSON object");
  ExpectInvalid(R"({"hello":1})", "a frame must have post_type");
  ExpectInvalid(R"({"post_type":5})", "post_type must be a string");
  ExpectInvalid(R"({"post_type":"message","self_id":{}})", "self_id must be an integer");
  ExpectInvalid(R"({"post_type":"message","message_type":"private","message":"x"})",
                "user_id is required");
  ExpectInvalid(R"({"post_type":"message","message_type":7})", "message_type must be a string");
  ExpectInvalid(R"({"post_type":"message","message_type":"private","user_id":"abc","message":"x"})",
                "user_id must be an integer");
  ExpectInvalid(R"({"post_type":"message","message_type":"group","user_id":2,"message":"x"})",
                "group_id is required");
  ExpectInvalid(R"({"post_type":"message","message_type":"private","user_id":2})",
                "message is required");
  ExpectInvalid(PrivateWith("42"), "message must be a segment array or a CQ string");
  ExpectInvalid(PrivateWith("[1]"), "message[0] must be an object");
  ExpectInvalid(PrivateWith(R"([{"data":{}}])"), "message[0].type must be a string");
  ExpectInvalid(PrivateWith(R"([{"type":"text","data":"x"}])"),
                "message[0].data must be an object");
  ExpectInvalid(R"({"post_type":"meta_event"})", "meta_event_type must be a string");
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxSegments; ++i) many += R"({"type":"text","data":{"text":"x"}},)";
  many.back() = ']';
  ExpectInvalid(PrivateWith(many), "message has too many segments");
  ExpectInvalid(PrivateWith("\"" + std::string(kMaxCqStringBytes + 1, 'a') + "\""),
                "message is over the CQ string limit");
}

TEST(OneBotCq, ParseFollowsTheStandard) {
  // message/string.md: the name runs to the first ',' or ']', parameters split on ',' and each at
  // its first '='.
  auto segs = ParseCqString("[CQ:share,title=标题中有=等号,url=http://baidu.com]");
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].type, "share");
  EXPECT_EQ(segs[0].Get("title"), "标题中有=等号");
  EXPECT_EQ(segs[0].Get("url"), "http://baidu.com");
  auto shake = ParseCqString("[CQ:shake]x");
  ASSERT_EQ(shake.size(), 2u);
  EXPECT_EQ(shake[0].type, "shake");
  EXPECT_EQ(shake[1].Get("text"), "x");
  auto open = ParseCqString("a [CQ:at,qq=1");  // no closing bracket: text
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].Get("text"), "a [CQ:at,qq=1");
  EXPECT_TRUE(ParseCqString("").empty());
}

TEST(OneBotCq, EscapeRoundTrip) {
  const std::string text = "- [x] 使用 `&data`, 获取地址 &#91;";
  EXPECT_EQ(EscapeCq("- [x] 使用 `&data` 获取地址"), "- &#91;x&#93; 使用 `&amp;data` 获取地址");
  EXPECT_EQ(UnescapeCq(EscapeCq(text)), text);
  EXPECT_EQ(EscapeCq("震惊,小伙", true), "震惊&#44;小伙");
  EXPECT_EQ(UnescapeCq(EscapeCq(text, true), true), text);
  EXPECT_EQ(UnescapeCq("a&#44;b"), "a&#44;b");  // only parameters unescape commas
  EXPECT_EQ(UnescapeCq("&am"), "&am");
}

OutgoingMessage Out(TargetType type, std::string target, domain::MessageChain chain) {
  OutgoingMessage m;
  m.target_type = type;
  m.target_id = std::move(target);
  m.chain = std::move(chain);
  return m;
}

MessageElement Plain(std::string text) {
  MessageElement e;
  e.text = std::move(text);
  return e;
}

MessageElement El(ElementType type) {
  MessageElement e;
  e.type = type;
  return e;
}

TEST(OneBotEncode, PrivatePlain) {
  auto action = EncodeSend(Out(TargetType::kPerson, "20002", {Plain("hello [x]")}));
  ASSERT_TRUE(action.has_value());
  EXPECT_EQ(action->action, "send_private_msg");
  EXPECT_EQ(EncodeActionFrame(*action, "sb:1"),
            R"({"action":"send_private_msg","params":{"user_id":20002,"message":)"
            R"([{"type":"text","data":{"text":"hello [x]"}}]},"echo":"sb:1"})");
}

TEST(OneBotEncode, GetMsgTakesAnIntegerId) {
  EXPECT_EQ(EncodeActionFrame(EncodeGetMsg("1843256"), "sb:2"),
            R"({"action":"get_msg","params":{"message_id":1843256},"echo":"sb:2"})");
  EXPECT_EQ(EncodeActionFrame(EncodeGetMsg("abc"), "e"),
            R"({"action":"get_msg","params":{"message_id":"abc"},"echo":"e"})");
}

TEST(OneBotEncode, ForwardPutsTheTextInOneNode) {
  MessageElement at;
  at.type = ElementType::kAt;
  at.target = "20002";
  OutgoingMessage group = Out(TargetType::kGroup, "123456", {at, Plain("长文本"), Plain(" 🙂")});
  EXPECT_FALSE(WantsForward(group));  // only when the pipeline asks
  group.form = domain::ReplyForm::kForward;
  ASSERT_TRUE(WantsForward(group));
  auto action = EncodeForward(group, "10001", "Bot");
  ASSERT_TRUE(action.has_value());
  EXPECT_EQ(EncodeActionFrame(*action, "sb:3"),
            R"({"action":"send_group_forward_msg","params":{"group_id":123456,"messages":)"
            R"([{"type":"node","data":{"user_id":"10001","nickname":"Bot","uin":"10001",)"
            R"("name":"Bot","content":[{"type":"text","data":{"text":"长文本 🙂"}}]}}]},)"
            R"("echo":"sb:3"})");
  OutgoingMessage person = Out(TargetType::kPerson, "20002", {Plain("x")});
  person.form = domain::ReplyForm::kForward;
  auto private_action = EncodeForward(person, "10001", "Bot");
  ASSERT_TRUE(private_action.has_value());
  EXPECT_EQ(private_action->action, "send_private_forward_msg");
  EXPECT_EQ(util::SerializeJson(private_action->params.at("user_id")), "20002");
  // An image is no text for a forward message; nor is a chain without text.
  MessageElement image;
  image.type = ElementType::kImage;
  image.url = "https://x/y.png";
  OutgoingMessage with_image = Out(TargetType::kGroup, "1", {Plain("x"), image});
  with_image.form = domain::ReplyForm::kForward;
  EXPECT_FALSE(WantsForward(with_image));
  EXPECT_FALSE(EncodeForward(with_image, "10001", "Bot").has_value());
  OutgoingMessage only_at = Out(TargetType::kGroup, "1", {at});
  only_at.form = domain::ReplyForm::kForward;
  EXPECT_FALSE(WantsForward(only_at));
}

TEST(OneBotEncode, GroupWithEveryElement) {
  MessageElement at = El(ElementType::kAt);
  at.target = "20002";
  MessageElement image = El(ElementType::kImage);
  image.url = "https://i.example/a.png";
  MessageElement image64 = El(ElementType::kImage);
  image64.base64 = "data:image/png;base64,iVBORw0K";
  MessageElement voice = El(ElementType::kVoice);
  voice.base64 = "AAAA";
  MessageElement quote = El(ElementType::kQuote);
  quote.id = "1843256";
  MessageElement source = El(ElementType::kSource);
  source.id = "9";
  MessageElement file = El(ElementType::kFile);
  file.url = "https://f.example/r.pdf";
  file.name = "r.pdf";
  auto action = EncodeSend(
      Out(TargetType::kGroup, "123456",
          {source, at, Plain(" hi"), El(ElementType::kAtAll), image, image64, voice, quote, file}));
  ASSERT_TRUE(action.has_value()) << action.error().message;
  EXPECT_EQ(action->action, "send_group_msg");
  auto expected = util::ParseJson(
      R"({"group_id":123456,"message":[{"type":"reply","data":{"id":"1843256"}},)"
      R"({"type":"at","data":{"qq":"20002"}},{"type":"text","data":{"text":" hi"}},)"
      R"({"type":"at","data":{"qq":"all"}},{"type":"image","data":{"file":"https://i.example/a.png"}},)"
      R"({"type":"image","data":{"file":"base64://iVBORw0K"}},)"
      R"({"type":"record","data":{"file":"base64://AAAA"}},)"
      R"({"type":"file","data":{"file":"https://f.example/r.pdf","name":"r.pdf"}}]})");
  EXPECT_EQ(util::Json(action->params), *expected);
}

void ExpectUndeliverable(const OutgoingMessage& m, std::string_view starts_with) {
  auto r = CheckDeliverable(m);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message.rfind(starts_with, 0), 0u) << r.error().message;
  EXPECT_FALSE(EncodeSend(m).has_value());
}

TEST(OneBotEncode, Undeliverable) {
  ExpectUndeliverable(Out(TargetType::kPerson, "bob", {Plain("x")}), "target_id");
  ExpectUndeliverable(Out(TargetType::kPerson, "-5", {Plain("x")}), "target_id");
  ExpectUndeliverable(Out(TargetType::kPerson, "99999999999999999999", {Plain("x")}), "target_id");
  ExpectUndeliverable(Out(TargetType::kPerson, "1", {}), "message_chain has nothing");
  ExpectUndeliverable(Out(TargetType::kPerson, "1", {Plain("")}), "message_chain has nothing");
  MessageElement quote = El(ElementType::kQuote);
  quote.id = "5";
  ExpectUndeliverable(Out(TargetType::kPerson, "1", {quote}), "message_chain has nothing");
  ExpectUndeliverable(Out(TargetType::kPerson, "1", {El(ElementType::kImage)}),
                      "message_chain[0]: Image needs");
  ExpectUndeliverable(Out(TargetType::kPerson, "1", {Plain("a"), El(ElementType::kAt)}),
                      "message_chain[1]: At needs");
  ExpectUndeliverable(Out(TargetType::kPerson, "1", {El(ElementType::kAtAll)}),
                      "message_chain[0]: AtAll only");
  ExpectUndeliverable(Out(TargetType::kGroup, "1", {El(ElementType::kFile)}),
                      "message_chain[0]: File needs");
  ExpectUndeliverable(Out(TargetType::kGroup, "1", {Plain("a"), El(ElementType::kQuote)}),
                      "message_chain[1]: Quote needs");
  EXPECT_TRUE(CheckDeliverable(Out(TargetType::kGroup, "1", {El(ElementType::kAtAll)})));
}

TEST(OneBotUpgrade, PathsAndRoles) {
  EXPECT_EQ(CheckUpgrade("/ws", "", "10001", "Universal", "").status, 0);
  EXPECT_EQ(CheckUpgrade("/ws/", "", "10001", "universal", "").status, 0);
  EXPECT_EQ(CheckUpgrade("/ws/api/", "", "", "", "").role, ClientRole::kApi);
  EXPECT_EQ(CheckUpgrade("/ws/event?x=1", "", "", "", "").role, ClientRole::kEvent);
  EXPECT_EQ(CheckUpgrade("/ws", "", "", "API", "").role, ClientRole::kApi);
  EXPECT_EQ(CheckUpgrade("/ws", "", "", "", "").role, ClientRole::kUniversal);
  EXPECT_EQ(CheckUpgrade("/ws", "", "10001", "", "").self_id, "10001");
  EXPECT_EQ(CheckUpgrade("/", "", "1", "Universal", "").status, 404);
  EXPECT_EQ(CheckUpgrade("/wsx", "", "1", "Universal", "").status, 404);
  EXPECT_EQ(CheckUpgrade("/ws//", "", "1", "Universal", "").status, 404);
  EXPECT_EQ(CheckUpgrade("/ws", "", "1", "Robot", "").status, 400);
  EXPECT_EQ(CheckUpgrade("/ws", "", "abc", "Universal", "").status, 400);
}

TEST(OneBotUpgrade, AccessToken) {
  const std::string_view t = "s3cr3t";
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer s3cr3t", "1", "Universal", t).status, 0);
  EXPECT_EQ(CheckUpgrade("/ws", "Token s3cr3t", "1", "Universal", t).status, 0);
  EXPECT_EQ(CheckUpgrade("/ws", "bearer s3cr3t", "1", "Universal", t).status, 0);
  EXPECT_EQ(CheckUpgrade("/ws?access_token=s3cr3t", "", "1", "Universal", t).status, 0);
  EXPECT_EQ(CheckUpgrade("/ws?a=b&access_token=s3%63r3t", "", "1", "Universal", t).status, 0);
  EXPECT_EQ(CheckUpgrade("/ws", "", "1", "Universal", t).status, 401);
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer ", "1", "Universal", t).status, 401);  // NapCat, no token
  EXPECT_EQ(CheckUpgrade("/ws", "Basic czNjcjN0", "1", "Universal", t).status, 401);
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer s3cr3t x", "1", "Universal", t).status, 401);
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer wrong", "1", "Universal", t).status, 403);
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer s3cr3", "1", "Universal", t).status, 403);
  EXPECT_EQ(CheckUpgrade("/ws?access_token=nope", "", "1", "Universal", t).status, 403);
  // No token configured: anything goes, NapCat's empty "Bearer " included.
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer ", "1", "Universal", "").status, 0);
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer whatever", "1", "Universal", "").status, 0);
  // Refusals never echo the token.
  EXPECT_EQ(CheckUpgrade("/ws", "Bearer badtok", "1", "Universal", t).body.find("badtok"),
            std::string::npos);
}

// ---- the adapter, over the real WebSocket transport on loopback, on a simulated clock ----------

using namespace std::chrono_literals;
namespace asio = boost::asio;
using ConnPtr = std::shared_ptr<net::WebSocketConnection>;
using domain::ReceivedMessage;

using test::RecordingHost;

class OneBotAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_.emplace(io_.get_executor());
    for (auto& t : threads_) t = std::thread([this] { io_.run(); });
    transport_ = net::MakeWebSocketTransport(io_.get_executor(), {});
  }

  void TearDown() override {
    for (auto& c : clients_) c->Abort();
    StopAdapter();
    adapter_.reset();
    if (blocker_) StopListener(blocker_);
    clients_.clear();
    work_.reset();
    io_.stop();  // client sockets may still wait out their close handshake
    for (auto& t : threads_) t.join();
  }

  template <typename T>
  std::optional<T> Await(asio::awaitable<T> op, std::chrono::milliseconds limit = 5s) {
    auto future = asio::co_spawn(io_, std::move(op), asio::use_future);
    if (future.wait_for(limit) != std::future_status::ready) return std::nullopt;
    try {
      return future.get();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the awaited operation ended with " << e.what();
      return std::nullopt;
    }
  }

  void Start(std::string token = "", int port = 0, std::string host = "127.0.0.1") {
    AdapterContext context;
    context.bot_uuid = "bot-1";
    context.config = util::JsonObject{
        {"host", std::move(host)}, {"port", port}, {"access-token", std::move(token)}};
    context.executor = io_.get_executor();
    context.websockets = transport_;
    context.clock = &clock_;
    context.host = &host_;
    adapter_ = MakeOneBotAdapter(std::move(context));
    adapter_->Start();
  }

  // The port the adapter listens on, from its "listening ... ws://127.0.0.1:<port>/ws" log.
  int Port() {
    int port = 0;
    host_.WaitFor([&] {
      for (const auto& line : host_.logs) {
        auto at = line.find("ws://127.0.0.1:");
        if (at != std::string::npos) port = std::stoi(line.substr(at + 15));
      }
      return port != 0;
    });
    return port;
  }

  util::Result<ConnPtr> Dial(std::vector<std::pair<std::string, std::string>> headers,
                             std::string path = "/ws") {
    net::WebSocketConnectRequest request;
    request.url = "ws://127.0.0.1:" + std::to_string(Port()) + path;
    request.headers = std::move(headers);
    auto conn = Await(transport_->Connect(std::move(request)));
    if (!conn) return util::Fail(ErrorCode::kInternal, "Connect never completed");
    if (*conn) clients_.push_back(**conn);
    return std::move(*conn);
  }

  ConnPtr DialAs(std::string self_id) {
    auto conn = Dial({{"X-Self-ID", self_id}, {"X-Client-Role", "Universal"}});
    EXPECT_TRUE(conn.has_value()) << (conn ? "" : conn.error().message);
    return conn ? *conn : nullptr;
  }

  // The next text frame the adapter sent on `conn`, parsed; null when none came in time.
  util::Json NextFrame(const ConnPtr& conn) {
    auto message = Await(conn->Read());
    if (!message || !*message) return nullptr;
    auto json = util::ParseJson((*message)->data);
    return json ? *json : util::Json(nullptr);
  }

  void Write(const ConnPtr& conn, std::string text) {
    auto written = Await(conn->Write(std::move(text)));
    ASSERT_TRUE(written && *written);
  }

  using SendResult = util::Result<domain::SendReceipt>;
  std::future<SendResult> Send(std::string target, std::string text) {
    OutgoingMessage m = Out(TargetType::kPerson, std::move(target), {Plain(std::move(text))});
    auto promise = std::make_shared<std::promise<SendResult>>();
    auto calls = std::make_shared<std::atomic<int>>(0);
    adapter_->Send(std::move(m), "", [promise, calls](SendResult r) {
      // Exactly once: a second call would throw here and fail the test.
      EXPECT_EQ(calls->fetch_add(1), 0);
      promise->set_value(std::move(r));
    });
    return promise->get_future();
  }

  static SendResult Get(std::future<SendResult>& f) {
    if (f.wait_for(5s) != std::future_status::ready) {
      return util::Fail(ErrorCode::kInternal, "Send never completed");
    }
    return f.get();
  }

  bool StopAdapter() {
    if (!adapter_ || stop_requested_) return true;
    stop_requested_ = true;
    auto count = std::make_shared<std::atomic<int>>(0);
    auto done = std::make_shared<std::promise<void>>();
    auto future = done->get_future();
    adapter_->Stop([this, count, done] {
      host_.stopped = true;
      if (count->fetch_add(1) == 0) done->set_value();
    });
    adapter_->Stop([count] { count->fetch_add(100); });  // idempotent: never runs
    const bool in_time = future.wait_for(5s) == std::future_status::ready;
    std::this_thread::sleep_for(50ms);
    return in_time && count->load() == 1;
  }

  static void StopListener(const std::shared_ptr<net::WebSocketListener>& listener) {
    std::promise<void> done;
    listener->Stop([&done] { done.set_value(); });
    done.get_future().wait_for(5s);
  }

  bool Connected(const std::string& account) {
    return host_.WaitFor([&] {
      return std::find(host_.connected.begin(), host_.connected.end(), account) !=
             host_.connected.end();
    });
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread threads_[2];
  std::shared_ptr<net::WebSocketTransport> transport_;
  std::shared_ptr<net::WebSocketListener> blocker_;
  util::SimulatedClock clock_;
  RecordingHost host_;
  std::unique_ptr<PlatformAdapter> adapter_;
  std::vector<ConnPtr> clients_;
  bool stop_requested_ = false;
};

TEST_F(OneBotAdapterTest, ReceivesAMessageAndMatchesTheAnswerByEcho) {
  Start();
  ConnPtr conn = DialAs("10001");
  ASSERT_TRUE(conn);
  ASSERT_TRUE(Connected("10001"));
  Write(conn, std::string(kPrivate));
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  EXPECT_EQ(host_.messages[0].sender_id, "20002");

  auto sent = Send("20002", "hi back");
  util::Json action = NextFrame(conn);
  ASSERT_TRUE(action.is_object()) << "no action frame";
  EXPECT_EQ(action.at("action"), "send_private_msg");
  const std::string echo(action.at("echo").as_string());
  // An answer to someone else's echo is not ours; then ours.
  Write(conn, R"({"status":"ok","retcode":0,"data":{"message_id":1},"echo":"other"})");
  Write(conn, R"({"status":"ok","retcode":0,"data":{"message_id":4242},"echo":")" + echo + R"("})");
  auto result = Get(sent);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->message_id, "4242");
}

TEST_F(OneBotAdapterTest, RefusalTimeoutAndStopEndSends) {
  Start();
  ConnPtr conn = DialAs("10001");
  ASSERT_TRUE(Connected("10001"));

  auto refused = Send("20002", "x");
  util::Json action = NextFrame(conn);
  ASSERT_TRUE(action.is_object());
  Write(conn, R"({"status":"failed","retcode":100,"data":null,"message":"m",)"
              R"("wording":"群已被禁言","echo":")" +
                  std::string(action.at("echo").as_string()) + R"("})");
  auto r1 = Get(refused);
  ASSERT_FALSE(r1.has_value());
  EXPECT_EQ(r1.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(r1.error().message.find("群已被禁言"), std::string::npos) << r1.error().message;
  EXPECT_NE(r1.error().message.find("100"), std::string::npos);

  auto silent = Send("20002", "y");
  ASSERT_TRUE(NextFrame(conn).is_object());
  clock_.Advance(29s);
  EXPECT_EQ(silent.wait_for(200ms), std::future_status::timeout);
  clock_.Advance(2s);
  auto r2 = Get(silent);
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().code, ErrorCode::kUpstreamTimeout) << r2.error().message;

  auto pending = Send("20002", "z");
  ASSERT_TRUE(NextFrame(conn).is_object());
  EXPECT_TRUE(StopAdapter());
  auto r3 = Get(pending);
  ASSERT_FALSE(r3.has_value());
  EXPECT_EQ(r3.error().code, ErrorCode::kCancelled);
  // The socket is closed with the listener (1001) and no host call follows the stop.
  auto after = Await(conn->Read());
  ASSERT_TRUE(after.has_value());
  EXPECT_FALSE(after->has_value());
  EXPECT_EQ(host_.after_stop_calls.load(), 0);
  auto late = Send("20002", "after stop");
  auto r4 = Get(late);
  ASSERT_FALSE(r4.has_value());
  EXPECT_EQ(r4.error().code, ErrorCode::kCancelled);
}

TEST_F(OneBotAdapterTest, NoConnectionIsUnreachableAndBadTargetsAreRefused) {
  Start();
  Port();
  auto none = Send("20002", "x");
  auto r = Get(none);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamUnreachable);
  auto bad = Send("not-a-number", "x");
  auto r2 = Get(bad);
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(OneBotAdapterTest, TokenIsCheckedAtTheUpgrade) {
  Start("s3cret");
  auto none = Dial({{"X-Self-ID", "10001"}});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("401"), std::string::npos) << none.error().message;
  auto wrong = Dial({{"X-Self-ID", "10001"}, {"Authorization", "Bearer nope"}});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message.find("403"), std::string::npos) << wrong.error().message;
  auto query = Dial({{"X-Self-ID", "10001"}}, "/ws/?access_token=s3cret");
  EXPECT_TRUE(query.has_value());
  auto header = Dial({{"X-Self-ID", "10002"}, {"Authorization", "Token s3cret"}}, "/ws/api");
  EXPECT_TRUE(header.has_value());
  auto path = Dial({{"X-Self-ID", "10003"}, {"Authorization", "Bearer s3cret"}}, "/other");
  ASSERT_FALSE(path.has_value());
  EXPECT_NE(path.error().message.find("404"), std::string::npos) << path.error().message;
  host_.WaitFor([&] { return host_.logs.size() >= 3; });
  std::lock_guard lock(host_.mu);
  for (const auto& line : host_.logs) EXPECT_EQ(line.find("s3cret"), std::string::npos) << line;
}

TEST_F(OneBotAdapterTest, ANewerConnectionReplacesTheOlder) {
  Start();
  ConnPtr first = DialAs("10001");
  ASSERT_TRUE(Connected("10001"));
  ConnPtr second = DialAs("10001");
  ASSERT_TRUE(second);
  auto ended = Await(first->Read());
  ASSERT_TRUE(ended.has_value());
  EXPECT_FALSE(ended->has_value());
  EXPECT_EQ(first->close_info().code, 1000);
  // Sends go through the newer one.
  auto sent = Send("20002", "x");
  util::Json action = NextFrame(second);
  ASSERT_TRUE(action.is_object());
  Write(second, R"({"status":"ok","retcode":0,"data":{"message_id":7},"echo":")" +
                    std::string(action.at("echo").as_string()) + R"("})");
  EXPECT_TRUE(Get(sent).has_value());
  std::lock_guard lock(host_.mu);
  EXPECT_TRUE(host_.troubles.empty()) << host_.troubles[0];  // a replacement is no trouble
}

TEST_F(OneBotAdapterTest, MissingHeartbeatsDropTheConnection) {
  Start();
  ConnPtr conn = DialAs("10001");
  ASSERT_TRUE(Connected("10001"));
  Write(conn, R"({"time":1,"self_id":10001,"post_type":"meta_event",)"
              R"("meta_event_type":"heartbeat","status":{},"interval":5000})");
  // Frames are read in order: once the message after it arrived, the heartbeat has been read.
  Write(conn, std::string(kPrivate));
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  clock_.Advance(10s);  // two intervals have not passed (with the slack): still alive
  EXPECT_FALSE(host_.WaitFor([&] { return !host_.troubles.empty(); }, 300ms));
  // Frames and ticks are handled on the I/O threads, a little after the clock moves: time goes
  // on in steps until the silence is noticed (two intervals and the slack after the heartbeat).
  // (The drop itself is reported after it, as a disconnection.)
  auto dropped = [&] {
    return std::any_of(host_.troubles.begin(), host_.troubles.end(), [](const std::string& t) {
      return t.find("no heartbeat") != std::string::npos;
    });
  };
  for (int step = 0; step < 10 && !host_.WaitFor(dropped, 200ms); ++step) clock_.Advance(1s);
  ASSERT_TRUE(dropped());
  auto ended = Await(conn->Read());
  ASSERT_TRUE(ended.has_value());
  EXPECT_FALSE(ended->has_value());
}

TEST_F(OneBotAdapterTest, WithoutXSelfIdTheAccountComesFromGetLoginInfo) {
  Start();
  auto conn = Dial({{"X-Client-Role", "Universal"}});
  ASSERT_TRUE(conn.has_value());
  util::Json action = NextFrame(*conn);
  ASSERT_TRUE(action.is_object());
  EXPECT_EQ(action.at("action"), "get_login_info");
  Write(*conn, R"({"status":"ok","retcode":0,"data":{"user_id":10009,"nickname":"B"},"echo":")" +
                   std::string(action.at("echo").as_string()) + R"("})");
  EXPECT_TRUE(Connected("10009"));
}

TEST_F(OneBotAdapterTest, APortInUseIsTroubleRetriedOnTheClock) {
  net::WebSocketListenOptions options;
  options.host = "127.0.0.1";
  auto blocker = transport_->Listen(
      options,
      [](const net::WebSocketUpgrade&) {
        return net::WebSocketVerdict{404, ""};
      },
      [](ConnPtr, net::WebSocketUpgrade) {});
  ASSERT_TRUE(blocker.has_value());
  blocker_ = *blocker;
  const int port = blocker_->port();
  Start("", port);
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  {
    std::lock_guard lock(host_.mu);
    EXPECT_NE(host_.troubles[0].find(std::to_string(port)), std::string::npos) << host_.troubles[0];
    EXPECT_NE(host_.troubles[0].find("retrying"), std::string::npos) << host_.troubles[0];
    EXPECT_TRUE(host_.connected.empty());
  }
  StopListener(blocker_);
  blocker_.reset();
  clock_.Advance(2s);  // the first retry comes within ~1.2 s
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
  EXPECT_TRUE(DialAs("10001"));
}

TEST_F(OneBotAdapterTest, AHostThatIsNoAddressIsTroubleWithoutRetries) {
  Start("", 0, "qq.example.com");
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  clock_.Advance(120s);
  std::this_thread::sleep_for(50ms);
  std::lock_guard lock(host_.mu);
  EXPECT_EQ(host_.troubles.size(), 1u);
  EXPECT_NE(host_.troubles[0].find("IP address"), std::string::npos) << host_.troubles[0];
  EXPECT_TRUE(host_.connected.empty());
}

TEST_F(OneBotAdapterTest, LocalhostListensOnLoopback) {
  Start("", 0, "localhost");
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.connected.empty(); }));
}

}  // namespace
}  // namespace sb::platforms::onebot
