// The Tbox (百宝箱) runner against the fake of tests/fakes/fake_hosted_agents.py over loopback:
// the documented /api/chat request with the raw token, the SSE message stream (header, chunks
// with JSON-text payloads), the conversation kept and forgotten, and errors without the token.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include "runners_fixture.hpp"

namespace sb::runners {
namespace {

using namespace sb::runners::testing;
using util::ErrorCode;

class TboxTest : public RunnersTest {
 protected:
  util::JsonObject Config(const std::string& app, const std::string& token = "tbox-test-token") {
    return util::JsonObject{
        {"ai", util::JsonObject{{"runner", util::JsonObject{{"runner", "tbox-app-api"}}},
                                {"tbox-app-api", util::JsonObject{{"base-url", fake_->base() + "/"},
                                                                  {"api-key", token},
                                                                  {"app-id", app},
                                                                  {"timeout", 5}}}}}};
  }

  // A scripted /api/chat stream of "message" events with these JSON bodies.
  void ScriptMessages(const std::vector<std::string>& datas) {
    boost::json::array events;
    for (const auto& data : datas) events.emplace_back("event:message\ndata:" + data + "\n\n");
    Script(boost::json::serialize(
        boost::json::object{{"path", "/api/chat"}, {"events", std::move(events)}}));
  }
};

TEST_F(TboxTest, StreamsAndKeepsItsConversationUntilForgotten) {
  auto first = Run(*tbox_, Config("app-echo"), Input("hello"), /*stream=*/true);
  ASSERT_TRUE(first.result) << first.result.error().message;
  EXPECT_EQ(first.result->text, "echo(1): hello");
  EXPECT_EQ(first.deltas.size(), 3u);
  EXPECT_EQ(Joined(first.deltas), "echo(1): hello");

  auto second = Run(*tbox_, Config("app-echo"), Input("again"));  // nobody streams: same call
  ASSERT_TRUE(second.result) << second.result.error().message;
  EXPECT_EQ(second.result->text, "echo(2): again");

  const auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].as_object().at("path").as_string(), "/api/chat");
  EXPECT_EQ(Headers(requests[0]).at("authorization").as_string(), "tbox-test-token");
  EXPECT_EQ(Headers(requests[0]).at("accept").as_string(), "text/event-stream");
  const auto& body0 = Body(requests[0]);
  EXPECT_EQ(body0.at("appId").as_string(), "app-echo");
  EXPECT_EQ(body0.at("query").as_string(), "hello");
  EXPECT_EQ(body0.at("userId").as_string(), "person_42");
  EXPECT_TRUE(body0.at("stream").as_bool());
  EXPECT_FALSE(body0.contains("conversationId"));
  const std::string conversation(Body(requests[1]).at("conversationId").as_string());
  EXPECT_FALSE(conversation.empty());

  auto other = Run(*tbox_, Config("app-echo"), Input("hi", "group_7"));
  ASSERT_TRUE(other.result);
  EXPECT_EQ(other.result->text, "echo(1): hi");
  EXPECT_FALSE(Body(Requests().back()).contains("conversationId"));

  tbox_->Forget({pipeline_, bot_, "person_42"});
  auto after = Run(*tbox_, Config("app-echo"), Input("fresh"));
  ASSERT_TRUE(after.result);
  EXPECT_EQ(after.result->text, "echo(1): fresh");
  EXPECT_FALSE(Body(Requests().back()).contains("conversationId"));
}

TEST_F(TboxTest, ErrorsAreClassifiedWithoutTheToken) {
  auto refused = Run(*tbox_, Config("app-echo", "tbox-wrong-secret"), Input("x"));
  ASSERT_FALSE(refused.result);
  EXPECT_EQ(refused.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_EQ(refused.result.error().message.find("tbox-wrong-secret"), std::string::npos);

  auto missing = Run(*tbox_, Config("app-nope"), Input("x"), true);
  ASSERT_FALSE(missing.result);
  EXPECT_EQ(missing.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(missing.result.error().message.find("APP_NOT_FOUND"), std::string::npos);

  auto failed = Run(*tbox_, Config("app-fail"), Input("x"), true);
  ASSERT_FALSE(failed.result);
  EXPECT_EQ(failed.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(failed.result.error().message.find("the agent failed"), std::string::npos);
  EXPECT_EQ(failed.deltas.size(), 1u);  // the piece before the error reached the user

  auto no_app = Run(*tbox_, Config(""), Input("x"));
  ASSERT_FALSE(no_app.result);
  EXPECT_EQ(no_app.result.error().code, ErrorCode::kInvalidArgument);
  auto no_text = Run(*tbox_, Config("app-echo"), Input(""));
  ASSERT_FALSE(no_text.result);
  EXPECT_EQ(no_text.result.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(TboxTest, AConversationTboxNoLongerKnowsIsForgotten) {
  ASSERT_TRUE(Run(*tbox_, Config("app-echo"), Input("one")).result);
  Control("POST", "/_control/reset", "{}");  // Tbox loses the conversation
  auto lost = Run(*tbox_, Config("app-echo"), Input("two"));
  ASSERT_FALSE(lost.result);
  EXPECT_NE(lost.result.error().message.find("CONVERSATION_NOT_FOUND"), std::string::npos);
  auto next = Run(*tbox_, Config("app-echo"), Input("three"));
  ASSERT_TRUE(next.result) << next.result.error().message;
  EXPECT_EQ(next.result->text, "echo(1): three");
}

TEST_F(TboxTest, LanesEndMessagesInlineErrorsAndEmptyStreams) {
  // An image lane is no part of the text; an `end` message ends the answer.
  ScriptMessages(
      {R"({"lane":"default","type":"header","payload":"{\"mediaType\":\"text\"}"})",
       R"({"lane":"pic","type":"header","payload":"{\"mediaType\":\"image\"}"})",
       R"({"lane":"pic","type":"chunk","payload":"{\"text\":\"IMG\"}"})",
       R"({"lane":"default","type":"chunk","payload":"{\"conversationId\":\"c-9\",\"text\":\"ok\"}"})",
       R"({"type":"thinking","payload":"{\"ext_data\":{\"text\":\"hmm\"}}"})",
       R"({"type":"end","payload":"{}"})",
       R"({"lane":"default","type":"chunk","payload":"{\"text\":\" late\"}"})"});
  auto lanes = Run(*tbox_, Config("app-echo"), Input("x"), true);
  ASSERT_TRUE(lanes.result) << lanes.result.error().message;
  EXPECT_EQ(lanes.result->text, "ok");

  ScriptMessages({R"({"type":"error","status_code":500,"message":"model overloaded"})"});
  auto inline_error = Run(*tbox_, Config("app-echo"), Input("x", "person_8"));
  ASSERT_FALSE(inline_error.result);
  EXPECT_NE(inline_error.result.error().message.find("model overloaded"), std::string::npos);

  // A stream without text fails, with or without an `end`.
  for (const char* last : {R"({"type":"meta","payload":"{}"})", R"({"type":"end"})"}) {
    ScriptMessages(
        {R"({"lane":"default","type":"header","payload":"{\"mediaType\":\"text\"}"})", last});
    auto empty = Run(*tbox_, Config("app-echo"), Input("x", "person_8"));
    ASSERT_FALSE(empty.result) << last;
    EXPECT_EQ(empty.result.error().code, ErrorCode::kUpstreamFailed);
    EXPECT_NE(empty.result.error().message.find("without a text answer"), std::string::npos);
  }

  Script(
      R"({"path": "/api/chat", "status": 429, "body": {"errorCode": "LIMIT", "errorMsg": "slow down"}})");
  auto limited = Run(*tbox_, Config("app-echo"), Input("x", "person_8"));
  ASSERT_FALSE(limited.result);
  EXPECT_EQ(limited.result.error().code, ErrorCode::kUpstreamRateLimited);
  EXPECT_NE(limited.result.error().message.find("slow down"), std::string::npos);
}

TEST_F(TboxTest, AnEventOverTheLimitFailsTheCall) {
  // 5 MiB in one event, beyond the SSE parser's 4 MiB and within the 8 MiB response cap.
  ScriptMessages({R"({"type":"chunk","payload":")" + std::string(5 * 1024 * 1024, 'a') + "\"}"});
  auto big = Run(*tbox_, Config("app-echo"), Input("x"));
  ASSERT_FALSE(big.result);
  EXPECT_EQ(big.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(big.result.error().message.find("too big"), std::string::npos);
}

}  // namespace
}  // namespace sb::runners
