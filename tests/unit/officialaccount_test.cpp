// The WeChat Official Account codec (platforms/officialaccount/oa_codec) and the shared access
// token cache (platforms/common/access_token): callbacks into messages, what can be sent, the
// customer-service bodies cut at WeChat's byte limit, and token answers and renewal.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "platforms/common/access_token.hpp"
#include "platforms/officialaccount/oa_codec.hpp"
#include "util/json.hpp"

namespace sb::platforms::officialaccount {
namespace {

using domain::ElementType;
using util::ErrorCode;

common::WeChatFields TextMessage(std::string content) {
  return {{"ToUserName", "gh_account"},    {"FromUserName", "oUser1"},
          {"CreateTime", "1700000000"},    {"MsgType", "text"},
          {"Content", std::move(content)}, {"MsgId", "42"}};
}

TEST(OfficialAccountCodec, TextBecomesAPrivateMessage) {
  const auto decoded = DecodeCallback(TextMessage("hello")).value();
  EXPECT_EQ(decoded.delivery_id, "42");
  EXPECT_EQ(decoded.user_openid, "oUser1");
  EXPECT_EQ(decoded.account_id, "gh_account");
  ASSERT_TRUE(decoded.message);
  EXPECT_EQ(decoded.message->chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(decoded.message->chat_id, "oUser1");
  EXPECT_EQ(decoded.message->message_id, "42");
  ASSERT_EQ(decoded.message->chain.size(), 2u);
  EXPECT_EQ(decoded.message->chain[0].type, ElementType::kSource);
  EXPECT_EQ(decoded.message->chain[1].text, "hello");
}

TEST(OfficialAccountCodec, ImagesVoiceAndEvents) {
  auto image = TextMessage("");
  image["MsgType"] = "image";
  image["PicUrl"] = "http://mmbiz.qpic.cn/x";
  EXPECT_EQ(DecodeCallback(image).value().message->chain[1].url, "http://mmbiz.qpic.cn/x");
  image["PicUrl"] = "file:///etc/passwd";
  EXPECT_EQ(DecodeCallback(image).error().code, ErrorCode::kInvalidArgument);

  auto voice = TextMessage("");
  voice["MsgType"] = "voice";
  EXPECT_FALSE(DecodeCallback(voice).value().message);  // no recognition: nothing to read
  voice["Recognition"] = "spoken words";
  EXPECT_EQ(DecodeCallback(voice).value().message->chain[1].text, "spoken words");

  common::WeChatFields event{{"ToUserName", "gh_account"},
                             {"FromUserName", "oUser1"},
                             {"CreateTime", "1700000000"},
                             {"MsgType", "event"},
                             {"Event", "subscribe"}};
  const auto decoded = DecodeCallback(event).value();
  EXPECT_FALSE(decoded.message);
  EXPECT_EQ(decoded.delivery_id, "oUser1@1700000000");
  EXPECT_EQ(decoded.skipped, "a subscribe event");
  EXPECT_FALSE(DecodeCallback(TextMessage("")).value().message);  // empty text
}

TEST(OfficialAccountCodec, MissingOrHostileFieldsAreRefused) {
  for (const char* field : {"FromUserName", "ToUserName", "MsgId"}) {
    auto fields = TextMessage("x");
    fields.erase(field);
    EXPECT_EQ(DecodeCallback(fields).error().code, ErrorCode::kInvalidArgument) << field;
  }
  auto fields = TextMessage("x");
  fields["FromUserName"] = "o<script>";
  EXPECT_FALSE(DecodeCallback(fields));
  EXPECT_FALSE(DecodeCallback(TextMessage(std::string(65 * 1024, 'x'))));
}

domain::MessageElement Element(ElementType type, std::string value) {
  domain::MessageElement e;
  e.type = type;
  (type == ElementType::kPlain ? e.text
   : type == ElementType::kAt  ? e.target
                               : e.url) = std::move(value);
  return e;
}

TEST(OfficialAccountCodec, OnlyTextToPeopleCanBeSent) {
  domain::OutgoingMessage message;
  message.target_id = "oUser1";
  message.chain = {Element(ElementType::kPlain, "a"), Element(ElementType::kAt, "x"),
                   Element(ElementType::kPlain, "b")};
  EXPECT_TRUE(CheckDeliverable(message));
  EXPECT_EQ(ReplyText(message.chain), "ab");
  message.target_type = domain::TargetType::kGroup;
  EXPECT_FALSE(CheckDeliverable(message));
  message.target_type = domain::TargetType::kPerson;
  message.chain.push_back(Element(ElementType::kImage, "https://x/y.png"));
  const auto refused = CheckDeliverable(message);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("message_chain[3]"), std::string::npos);
  message.chain = {Element(ElementType::kAt, "x")};
  EXPECT_FALSE(CheckDeliverable(message));  // nothing to show
}

TEST(OfficialAccountCodec, PassiveReplyAndCustomBodies) {
  const auto reply = common::ParseWeChatXml(PassiveTextReply("oUser1", "gh_a", 7, "hi")).value();
  EXPECT_EQ(common::FieldOr(reply, "ToUserName"), "oUser1");
  EXPECT_EQ(common::FieldOr(reply, "FromUserName"), "gh_a");
  EXPECT_EQ(common::FieldOr(reply, "CreateTime"), "7");
  EXPECT_EQ(common::FieldOr(reply, "MsgType"), "text");
  EXPECT_EQ(common::FieldOr(reply, "Content"), "hi");

  // 1000 three-byte characters: 3000 bytes, cut at 2046 (682 whole characters).
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xe4\xbd\xa0";
  const auto bodies = CustomTextBodies("oUser1", text);
  ASSERT_EQ(bodies.size(), 2u);
  std::string joined;
  for (const auto& body : bodies) {
    const auto json = util::ParseJson(body).value().as_object();
    EXPECT_EQ(json.at("touser").as_string(), "oUser1");
    EXPECT_EQ(json.at("msgtype").as_string(), "text");
    const auto content = json.at("text").as_object().at("content").as_string();
    EXPECT_LE(content.size(), kMaxCustomTextBytes);
    joined += std::string(content);
  }
  EXPECT_EQ(joined, text);
  EXPECT_TRUE(CustomTextBodies("oUser1", "").empty());
}

TEST(OfficialAccountCodec, TokenAndStatusAnswers) {
  const auto token = DecodeTokenAnswer(R"({"access_token":"T1","expires_in":7200})").value();
  EXPECT_EQ(token.token, "T1");
  EXPECT_EQ(token.expires_in.count(), 7200);
  const auto refused = DecodeTokenAnswer(R"({"errcode":40125,"errmsg":"invalid appsecret"})");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_NE(refused.error().message.find("40125"), std::string::npos);
  EXPECT_FALSE(DecodeTokenAnswer("<html>"));
  EXPECT_EQ(DecodeApiStatus(R"({"errcode":42001,"errmsg":"expired"})").value().errcode, 42001);
  EXPECT_EQ(DecodeApiStatus("{}").value().errcode, 0);
  EXPECT_TRUE(IsTokenRefused(40001) && IsTokenRefused(40014) && IsTokenRefused(42001));
  EXPECT_FALSE(IsTokenRefused(48001));
}

class SteppedClock : public util::Clock {
 public:
  util::TimePoint Now() const override { return now; }
  util::TimerHandle After(util::Duration, std::function<void()>) const override { return {}; }
  util::TimePoint now = util::FromUnixMillis(1'700'000'000'000);
};

TEST(AccessTokenCache, FetchesOnceRenewsBeforeExpiryAndForgetsARefusedToken) {
  SteppedClock clock;
  int fetches = 0;
  common::AccessTokenCache cache(
      clock, [&]() -> boost::asio::awaitable<util::Result<common::IssuedToken>> {
        ++fetches;
        co_return common::IssuedToken{"T" + std::to_string(fetches), std::chrono::seconds(7200)};
      });
  boost::asio::io_context io;
  auto get = [&] {
    auto future = boost::asio::co_spawn(io, cache.Get(), boost::asio::use_future);
    io.restart();
    io.run();
    return future.get().value();
  };
  EXPECT_EQ(get(), "T1");
  EXPECT_EQ(get(), "T1");
  clock.now += std::chrono::seconds(7200 - 301);
  EXPECT_EQ(get(), "T1");
  clock.now += std::chrono::seconds(2);  // inside the 300 s margin: renewed
  EXPECT_EQ(get(), "T2");
  cache.Invalidate("T1");  // an older token refused: the newer one stays
  EXPECT_EQ(get(), "T2");
  cache.Invalidate("T2");
  EXPECT_EQ(get(), "T3");
  EXPECT_EQ(fetches, 3);
}

}  // namespace
}  // namespace sb::platforms::officialaccount
