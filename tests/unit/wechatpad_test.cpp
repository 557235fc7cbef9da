// The WeChatPad adapter's pure parts: message frames as LangBot's wechatpad adapter reads them
// (private and chatroom texts, mentions from msg_source's atuserlist and push_content, skipped
// senders and types), the {Code, Data, Text} answers of GetLoginStatus / GetProfile /
// GetChatroomMemberDetail, the send calls of libs/wechatpad_api (SendTextMessage with
// AtWxIDList, SendImageMessage), URLs with the key, and CheckDeliverable. WeChatPadPro publishes
// no API documentation, so LangBot's client is the reference.
#include <gtest/gtest.h>

#include <string>

#include "platforms/wechatpad/wechatpad_codec.hpp"
#include "util/json.hpp"

namespace sb::platforms::wechatpad {
namespace {

using domain::ElementType;
using domain::MessageElement;

constexpr std::string_view kBot = "wxid_bot0001";

std::string Frame(std::string_view from, std::string_view content, int type = 1,
                  std::string_view msg_source = "", std::string_view push = "",
                  std::string_view new_msg_id = "7001") {
  util::JsonObject f{{"msg_id", 101},
                     {"from_user_name", util::JsonObject{{"str", from}}},
                     {"to_user_name", util::JsonObject{{"str", kBot}}},
                     {"msg_type", type},
                     {"content", util::JsonObject{{"str", content}}},
                     {"status", 3},
                     {"create_time", 1700000000},
                     {"msg_source", msg_source},
                     {"push_content", push},
                     {"new_msg_id", new_msg_id}};
  return util::SerializeJson(f);
}

Answer AnswerOf(std::string_view body) { return *DecodeAnswer(body); }

MessageElement Of(ElementType type) {
  MessageElement e;
  e.type = type;
  return e;
}

TEST(WeChatPadFrames, PrivateTextIsAPersonChat) {
  auto f = DecodeSyncMessage(
      Frame("wxid_ann", "  hello there ", 1, "<msgsource/>", "Ann : hello there"), kBot);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->message);
  const auto& m = *f->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "wxid_ann");
  EXPECT_EQ(m.sender_id, "wxid_ann");
  EXPECT_EQ(m.sender_name, "Ann");
  EXPECT_EQ(m.message_id, "7001");
  EXPECT_EQ(f->dedupe_key, "7001");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[1].text, "hello there");
}

TEST(WeChatPadFrames, ChatroomMentionOfTheBot) {
  const std::string source =
      "<msgsource><atuserlist><![CDATA[,wxid_bot0001,wxid_zed]]></atuserlist></msgsource>";
  auto f = DecodeSyncMessage(
      Frame("123@chatroom", "wxid_bob01:\n@Bot\xE2\x80\x85@Zed\xE2\x80\x85 are you there", 1,
            source, "Bob在群聊中@了你"),
      kBot);
  ASSERT_TRUE(f && f->message);
  const auto& m = *f->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "123@chatroom");
  EXPECT_EQ(m.sender_id, "wxid_bob01");
  ASSERT_EQ(m.chain.size(), 4u);
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, kBot);
  EXPECT_EQ(m.chain[2].target, "wxid_zed");
  EXPECT_EQ(m.chain[3].text, "are you there");
}

TEST(WeChatPadFrames, ChatroomWithoutMentionAndAtAll) {
  auto plain = DecodeSyncMessage(Frame("123@chatroom", "wxid_bob01:\njust chatting"), kBot);
  ASSERT_TRUE(plain && plain->message);
  ASSERT_EQ(plain->message->chain.size(), 2u);
  EXPECT_EQ(plain->message->chain[1].text, "just chatting");
  // push_content alone marks a mention (LangBot's rule), "@所有人" is AtAll.
  auto all = DecodeSyncMessage(
      Frame("123@chatroom", "wxid_bob01:\n@所有人 meeting now", 1, "", "Bob在群聊中@了你"), kBot);
  ASSERT_TRUE(all && all->message);
  const auto& chain = all->message->chain;
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[1].type, ElementType::kAtAll);
  EXPECT_EQ(chain[2].target, kBot);
  EXPECT_EQ(chain[3].text, "meeting now");
}

TEST(WeChatPadFrames, SkipsOwnSystemAndNonTextMessages) {
  for (std::string_view from : {std::string_view(kBot), std::string_view("gh_news"),
                                std::string_view("weixin"), std::string_view("newsapp")}) {
    auto f = DecodeSyncMessage(Frame(from, "x"), kBot);
    ASSERT_TRUE(f) << from;
    EXPECT_FALSE(f->message) << from;
    EXPECT_TRUE(f->skipped.empty()) << from;
  }
  auto image = DecodeSyncMessage(Frame("wxid_ann", "<msg><img/></msg>", 3), kBot);
  ASSERT_TRUE(image);
  EXPECT_FALSE(image->message);
  EXPECT_NE(image->skipped.find("type 3"), std::string::npos);
  auto own_in_group = DecodeSyncMessage(Frame("123@chatroom", "wxid_bot0001:\nmine"), kBot);
  ASSERT_TRUE(own_in_group);
  EXPECT_FALSE(own_in_group->message);
  auto no_prefix = DecodeSyncMessage(Frame("123@chatroom", "system notice"), kBot);
  ASSERT_TRUE(no_prefix);
  EXPECT_FALSE(no_prefix->message);
  auto empty = DecodeSyncMessage(Frame("wxid_ann", "   "), kBot);
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->message);
}

TEST(WeChatPadFrames, MalformedFramesNameTheProblem) {
  for (std::string_view bad : {"{", "[]", R"({"msg_type":1})", R"({"from_user_name":"x"})"}) {
    auto r = DecodeSyncMessage(bad, kBot);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  }
}

TEST(WeChatPadAnswers, LoginProfileAndMembers) {
  EXPECT_TRUE(CheckLoginStatus(AnswerOf(R"({"Code":200,"Data":{"loginState":1},"Text":""})")));
  auto out = CheckLoginStatus(AnswerOf(R"({"Code":300,"Data":null,"Text":"你已退出微信"})"));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, util::ErrorCode::kUpstreamAuth);
  EXPECT_TRUE(out.error().final);
  EXPECT_NE(out.error().message.find("你已退出微信"), std::string::npos);
  EXPECT_EQ(DecodeAnswer("nope").error().code, util::ErrorCode::kUpstreamFailed);
  EXPECT_EQ(DecodeAnswer(R"({"Text":"x"})").error().code, util::ErrorCode::kUpstreamFailed);

  auto profile = DecodeProfile(AnswerOf(
      R"({"Code":200,"Data":{"userInfo":{"userName":{"str":"wxid_bot0001"},"nickName":{"str":"Bot"}}}})"));
  ASSERT_TRUE(profile);
  EXPECT_EQ(profile->wxid, "wxid_bot0001");
  EXPECT_EQ(profile->nickname, "Bot");
  EXPECT_FALSE(DecodeProfile(AnswerOf(R"({"Code":200,"Data":{}})")));

  auto nicks = DecodeMemberNicknames(AnswerOf(
      R"({"Code":200,"Data":{"member_data":{"chatroom_member_list":[{"user_name":"wxid_a","nick_name":"A"},{"user_name":"wxid_b"}]}}})"));
  ASSERT_EQ(nicks.size(), 1u);
  EXPECT_EQ(nicks["wxid_a"], "A");
}

TEST(WeChatPadSends, TextWithMentionsAndImagesInOrder) {
  domain::OutgoingMessage m;
  m.target_type = domain::TargetType::kGroup;
  m.target_id = "123@chatroom";
  MessageElement hi;
  hi.text = "hi ";
  m.chain.push_back(hi);
  MessageElement at = Of(ElementType::kAt);
  at.target = "wxid_a";
  m.chain.push_back(at);
  MessageElement at2 = Of(ElementType::kAt);
  at2.target = "wxid_b";
  m.chain.push_back(at2);
  m.chain.push_back(Of(ElementType::kAtAll));
  MessageElement by_url = Of(ElementType::kImage);
  by_url.url = "https://x.test/a.png";
  m.chain.push_back(by_url);
  MessageElement inline_image = Of(ElementType::kImage);
  inline_image.base64 = "data:image/png;base64,iVBORw0KGgo=";
  m.chain.push_back(inline_image);
  MessageElement tail;
  tail.text = "bye";
  m.chain.push_back(tail);
  auto calls = EncodeOutgoing(m, {{"wxid_a", "Ann"}}, {"AAAA"});
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].path, "/message/SendTextMessage");
  EXPECT_EQ(
      util::SerializeJson(calls[0].body),
      R"({"MsgItem":[{"AtWxIDList":["wxid_a","wxid_b","notify@all"],"ImageContent":"",)"
      R"("MsgType":0,"TextContent":"hi @Ann @wxid_b @所有人 ","ToUserName":"123@chatroom"}]})");
  EXPECT_EQ(calls[1].path, "/message/SendImageMessage");
  EXPECT_EQ(calls[1].body.at("MsgItem").at(0).at("ImageContent"), "AAAA");
  EXPECT_EQ(calls[2].body.at("MsgItem").at(0).at("ImageContent"), "iVBORw0KGgo=");
  EXPECT_EQ(calls[3].body.at("MsgItem").at(0).at("TextContent"), "bye");
  EXPECT_EQ(calls[3].body.at("MsgItem").at(0).at("AtWxIDList").as_array().size(), 0u);
}

TEST(WeChatPadConfig, EndpointsAndKeyedUrls) {
  auto e = EndpointsFromConfig(
      util::ParseJson(R"({"wechatpad_url":"http://h:1238/","wechatpad_ws":"ws://h:1238/ws/"})")
          ->get_object());
  EXPECT_EQ(e.http, "http://h:1238");
  EXPECT_EQ(e.ws, "ws://h:1238/ws");
  e = EndpointsFromConfig(util::ParseJson(R"({"wechatpad_url":"http://h:1","wechatpad_ws":"",)"
                                          R"("api_base_url":"https://proxy.test/pad"})")
                              ->get_object());
  EXPECT_EQ(e.http, "https://proxy.test/pad");
  EXPECT_EQ(e.ws, "wss://proxy.test/pad/ws");
  EXPECT_EQ(KeyedUrl("http://h", "/user/GetProfile", "a b&c=d"),
            "http://h/user/GetProfile?key=a%20b%26c%3Dd");
}

TEST(WeChatPadDeliverable, RefusesWhatItCannotSend) {
  domain::OutgoingMessage m;
  m.target_id = "wxid_ann";
  MessageElement hi;
  hi.text = "hi";
  m.chain.push_back(hi);
  EXPECT_TRUE(CheckDeliverable(m));
  m.target_id = "has space";
  EXPECT_FALSE(CheckDeliverable(m));
  m.target_id = "wxid_ann";
  m.chain = {Of(ElementType::kVoice)};
  m.chain[0].url = "https://x.test/v.silk";
  auto r = CheckDeliverable(m);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message.starts_with("message_chain[0]: Voice"));
  m.chain = {Of(ElementType::kImage)};
  EXPECT_FALSE(CheckDeliverable(m));
  m.chain[0].url = "ftp://x/a.png";
  EXPECT_FALSE(CheckDeliverable(m));
  m.chain = {Of(ElementType::kQuote)};
  EXPECT_FALSE(CheckDeliverable(m));
}

}  // namespace
}  // namespace sb::platforms::wechatpad
