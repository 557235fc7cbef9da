// The WeCom AI bot's reply feedback: the feedback id a reply carries, and feedback_event callbacks
// shaped as the official SDK's EventMessage (aibot-node-sdk src/types/event.ts) with the
// feedback_event fields of WeCom's callback docs (id, type 1/2/3, content,
// inaccurate_reason_list), read into the platform-neutral ReceivedFeedback. Part of wecombot_test.
#include "platforms/wecombot/wecombot_feedback.hpp"

#include <gtest/gtest.h>

#include <string>

#include "platforms/wecombot/wecombot_codec.hpp"
#include "util/json.hpp"

namespace sb::platforms::wecombot {
namespace {

using domain::FeedbackType;
using domain::TargetType;

util::Json Parse(std::string_view text) { return *util::ParseJson(text); }

// An event callback as WeCom sends it, with `feedback` as its feedback_event object.
std::string Event(std::string_view feedback, std::string_view chat = R"("chattype":"single")") {
  return std::string(R"({"msgid":"EVT1","create_time":1700000000,"aibotid":"AIBOT",)") +
         std::string(chat) +
         R"(,"from":{"userid":"lisi"},"msgtype":"event","event":{"eventtype":"feedback_event",)" +
         R"("feedback_event":)" + std::string(feedback) + "}}";
}

TEST(WeComBotFeedback, TheIdNamesTheStreamAndTheMessageAndFitsWeComsLimit) {
  EXPECT_EQ(FeedbackIdFor("stream_1_ab", "MSG1"), "stream_1_ab|MSG1");
  EXPECT_EQ(FeedbackIdFor("stream_1_ab", ""), "stream_1_ab");
  const std::string long_msgid(kMaxIdBytes, 'm');
  EXPECT_EQ(FeedbackIdFor("stream_1_ab", long_msgid), "stream_1_ab");  // would pass 256 bytes
  EXPECT_LE(FeedbackIdFor("s", std::string(kMaxIdBytes - 2, 'm')).size(), kMaxIdBytes);
}

TEST(WeComBotFeedback, WithFeedbackSetsStreamFeedbackId) {
  auto body = WithFeedback(StreamBody("SID", "", false), "SID|MSG");
  EXPECT_EQ(util::SerializeJson(body),
            R"({"msgtype":"stream","stream":{"id":"SID","finish":false,"content":"",)"
            R"("feedback":{"id":"SID|MSG"}}})");
  // No id: the body is left as it was (no empty feedback object).
  EXPECT_EQ(util::SerializeJson(WithFeedback(StreamBody("SID", "x", true), "")),
            util::SerializeJson(StreamBody("SID", "x", true)));
}

TEST(WeComBotFeedback, ADislikeInAPrivateChat) {
  auto json = Parse(Event(
      R"({"id":"stream_9_cd|MSG42","type":2,"content":"不够详细","inaccurate_reason_list":[2,4]})"));
  // The codec sees an event; the feedback reader reads the rest.
  auto cb = DecodeCallback(json);
  ASSERT_TRUE(cb) << cb.error().message;
  EXPECT_EQ(cb->kind, CallbackKind::kEvent);
  EXPECT_EQ(cb->event_type, kFeedbackEventType);
  auto f = DecodeFeedback(json);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->feedback_id, "stream_9_cd|MSG42");
  EXPECT_EQ(f->type, FeedbackType::kDislike);
  EXPECT_EQ(f->content, "不够详细");
  EXPECT_EQ(f->inaccurate_reasons, (std::vector<std::string>{"2", "4"}));
  EXPECT_EQ(f->user_id, "lisi");
  EXPECT_EQ(f->chat_type, TargetType::kPerson);
  EXPECT_EQ(f->chat_id, "lisi");
  EXPECT_EQ(f->stream_id, "stream_9_cd");
  EXPECT_EQ(f->message_id, "MSG42");
}

TEST(WeComBotFeedback, ALikeInAGroupAndAWithdrawal) {
  auto f = DecodeFeedback(Parse(
      Event(R"({"id":"stream_1_aa|M1","type":1})", R"("chattype":"group","chatid":"wrkG1")")));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->type, FeedbackType::kLike);
  EXPECT_EQ(f->chat_type, TargetType::kGroup);
  EXPECT_EQ(f->chat_id, "wrkG1");
  EXPECT_EQ(f->user_id, "lisi");
  EXPECT_TRUE(f->content.empty());
  EXPECT_TRUE(f->inaccurate_reasons.empty());

  auto w = DecodeFeedback(Parse(Event(R"({"id":"stream_1_aa|M1","type":3})")));
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->type, FeedbackType::kCancel);
}

TEST(WeComBotFeedback, AForeignIdIsKeptWholeAsTheStream) {
  // An id this adapter did not make (another program set it): nothing is split off.
  auto f = DecodeFeedback(Parse(Event(R"({"id":"0b6f-uuid","type":1})")));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->stream_id, "0b6f-uuid");
  EXPECT_TRUE(f->message_id.empty());
}

TEST(WeComBotFeedback, LongTextAndManyReasonsAreCut) {
  std::string reasons = "[";
  for (int i = 0; i < 100; ++i) reasons += std::to_string(i) + ",";
  reasons += R"("text reason", {"x":1}, null, ")" + std::string(1000, 'r') + "\"]";
  auto f =
      DecodeFeedback(Parse(Event(R"({"id":"S|M","type":2,"content":")" + std::string(10000, 'c') +
                                 R"(","inaccurate_reason_list":)" + reasons + "}")));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->content, std::string(kMaxFeedbackContentBytes, 'c') + "…");  // marked as cut
  EXPECT_EQ(f->inaccurate_reasons.size(), kMaxInaccurateReasons);

  auto few = DecodeFeedback(
      Parse(Event(R"({"id":"S|M","type":2,"inaccurate_reason_list":[{"x":1},null,")" +
                  std::string(1000, 'r') + R"(",3]})")));
  ASSERT_TRUE(few) << few.error().message;
  ASSERT_EQ(few->inaccurate_reasons.size(), 2u);  // the object and null are skipped
  EXPECT_EQ(few->inaccurate_reasons[0], std::string(kMaxReasonBytes, 'r') + "…");
  EXPECT_EQ(few->inaccurate_reasons[1], "3");
}

TEST(WeComBotFeedback, BadShapesAreRefusedNamingTheField) {
  auto err = [](const std::string& text) {
    auto f = DecodeFeedback(Parse(text));
    return f ? std::string("accepted") : f.error().message;
  };
  EXPECT_NE(err("[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(err(R"({"event":{"eventtype":"enter_chat"},"from":{"userid":"u"}})").find("eventtype"),
            std::string::npos);
  EXPECT_NE(err(R"({"event":{"eventtype":"feedback_event"},"from":{"userid":"u"}})")
                .find("feedback_event is required"),
            std::string::npos);
  EXPECT_NE(err(Event(R"({"type":1})")).find("feedback_event.id is required"), std::string::npos);
  EXPECT_NE(err(Event(R"({"id":")" + std::string(300, 'i') + R"(","type":1})")).find("256"),
            std::string::npos);
  EXPECT_NE(err(Event(R"({"id":"S","type":7})")).find("type must be 1, 2 or 3"), std::string::npos);
  EXPECT_NE(err(Event(R"({"id":"S","type":"1"})")).find("type"), std::string::npos);
  EXPECT_NE(err(Event(R"({"id":"S","type":1})", R"("chattype":"group")")).find("chatid"),
            std::string::npos);
  EXPECT_NE(err(Event(R"({"id":"S","type":1})", R"("chattype":"weird")")).find("chattype"),
            std::string::npos);
  EXPECT_NE(err(R"({"msgtype":"event","event":{"eventtype":"feedback_event",)"
                R"("feedback_event":{"id":"S","type":1}}})")
                .find("from is required"),
            std::string::npos);
}

}  // namespace
}  // namespace sb::platforms::wecombot
