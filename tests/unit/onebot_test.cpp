// Tests of the OneBot v11 wire format (the aiocqhttp adapter's codec): event frames, CQ strings,
// action frames and responses, from payloads shaped as NapCat and the standard send them.
#include <gtest/gtest.h>

#include <string>

#include "platforms/onebot/onebot_codec.hpp"
#include "util/json.hpp"

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

}  // namespace
}  // namespace sb::platforms::onebot
