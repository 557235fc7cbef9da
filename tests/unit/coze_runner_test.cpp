// The Coze runner against the fake Coze chat API v3 of tests/fakes/fake_hosted_agents.py over
// loopback: the documented request, the SSE events, conversation continuity and !reset, usage,
// and errors (HTTP, a JSON error instead of a stream, a failed chat) without the token.
#include <gtest/gtest.h>

#include "runners_fixture.hpp"

namespace sb::runners {
namespace {

using namespace sb::runners::testing;
using util::ErrorCode;

class CozeTest : public RunnersTest {
 protected:
  util::JsonObject Config(const std::string& bot, const std::string& key = "pat-coze-test",
                          bool save = true) {
    return util::JsonObject{
        {"ai", util::JsonObject{{"runner", util::JsonObject{{"runner", "coze-api"}}},
                                {"coze-api", util::JsonObject{{"api-base", fake_->base() + "/"},
                                                              {"api-key", key},
                                                              {"bot-id", bot},
                                                              {"auto-save-history", save},
                                                              {"timeout", 5}}}}}};
  }
  static std::string Query(const boost::json::value& request, const char* key) {
    const auto& q = request.as_object().at("query").as_object();
    return q.contains(key) ? std::string(q.at(key).as_string()) : std::string();
  }
};

TEST_F(CozeTest, StreamsAnswersAndContinuesTheConversationUntilForgotten) {
  auto first = Run(*coze_, Config("bot-echo"), Input("hello"), /*stream=*/true);
  ASSERT_TRUE(first.result) << first.result.error().message;
  EXPECT_EQ(first.result->text, "echo(1): hello");
  EXPECT_EQ(first.deltas.size(), 3u);
  EXPECT_EQ(Joined(first.deltas), "echo(1): hello");
  EXPECT_EQ(first.result->usage.prompt_tokens, 20);
  EXPECT_EQ(first.result->usage.completion_tokens, 10);
  EXPECT_EQ(first.result->usage.total_tokens, 30);

  auto second = Run(*coze_, Config("bot-echo"), Input("again"));  // no one wants deltas
  ASSERT_TRUE(second.result) << second.result.error().message;
  EXPECT_EQ(second.result->text, "echo(2): again");

  auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].as_object().at("path").as_string(), "/v3/chat");
  EXPECT_EQ(Query(requests[0], "conversation_id"), "");
  const std::string conversation = Query(requests[1], "conversation_id");
  EXPECT_FALSE(conversation.empty());
  EXPECT_EQ(Headers(requests[0]).at("authorization").as_string(), "Bearer pat-coze-test");
  const auto& body = Body(requests[0]);
  EXPECT_EQ(body.at("bot_id").as_string(), "bot-echo");
  EXPECT_EQ(body.at("user_id").as_string(), "person_42");
  EXPECT_TRUE(body.at("stream").as_bool());
  EXPECT_TRUE(body.at("auto_save_history").as_bool());
  const auto& message = body.at("additional_messages").as_array().at(0).as_object();
  EXPECT_EQ(message.at("role").as_string(), "user");
  EXPECT_EQ(message.at("content").as_string(), "hello");
  EXPECT_EQ(message.at("content_type").as_string(), "text");

  coze_->Forget({pipeline_, bot_, "person_42"});
  auto after = Run(*coze_, Config("bot-echo"), Input("fresh"));
  ASSERT_TRUE(after.result);
  EXPECT_EQ(after.result->text, "echo(1): fresh");
  EXPECT_EQ(Query(Requests().back(), "conversation_id"), "");
}

TEST_F(CozeTest, ImagesGoAsAnObjectString) {
  auto out =
      Run(*coze_, Config("bot-echo"), Input("look", "person_42", {"https://example.com/cat.png"}));
  ASSERT_TRUE(out.result) << out.result.error().message;
  const auto requests = Requests();
  const auto& message = Body(requests[0]).at("additional_messages").as_array()[0].as_object();
  EXPECT_EQ(message.at("content_type").as_string(), "object_string");
  auto parts = boost::json::parse(message.at("content").as_string()).as_array();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].as_object().at("file_url").as_string(), "https://example.com/cat.png");
}

TEST_F(CozeTest, ErrorsAreClassifiedWithoutTheToken) {
  auto refused = Run(*coze_, Config("bot-echo", "pat-wrong-secret"), Input("x"));
  ASSERT_FALSE(refused.result);
  EXPECT_EQ(refused.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_EQ(refused.result.error().message.find("pat-wrong-secret"), std::string::npos);

  auto missing = Run(*coze_, Config("bot-nope"), Input("x"), true);
  ASSERT_FALSE(missing.result);
  EXPECT_EQ(missing.result.error().code, ErrorCode::kUpstreamNotFound);
  EXPECT_NE(missing.result.error().message.find("4200"), std::string::npos);

  auto failed = Run(*coze_, Config("bot-fail"), Input("x"));
  ASSERT_FALSE(failed.result);
  EXPECT_EQ(failed.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(failed.result.error().message.find("event interval error"), std::string::npos);

  auto no_bot = Run(*coze_, Config(""), Input("x"));
  ASSERT_FALSE(no_bot.result);
  EXPECT_EQ(no_bot.result.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(CozeTest, AConversationCozeNoLongerKnowsIsForgotten) {
  ASSERT_TRUE(Run(*coze_, Config("bot-echo"), Input("one")).result);
  Control("POST", "/_control/reset", "{}");  // Coze loses the conversation
  auto lost = Run(*coze_, Config("bot-echo"), Input("two"));
  ASSERT_FALSE(lost.result);
  EXPECT_EQ(lost.result.error().code, ErrorCode::kUpstreamNotFound);
  auto next = Run(*coze_, Config("bot-echo"), Input("three"));
  ASSERT_TRUE(next.result) << next.result.error().message;
  EXPECT_EQ(next.result->text, "echo(1): three");
}

TEST_F(CozeTest, UnsavedHistoryAndAStreamCutShort) {
  auto out = Run(*coze_, Config("bot-echo", "pat-coze-test", false), Input("q"));
  ASSERT_TRUE(out.result);
  EXPECT_FALSE(Body(Requests()[0]).at("auto_save_history").as_bool());

  Script(
      R"({"path": "/v3/chat", "events": ["event:conversation.chat.created\ndata:{\"id\":\"1\",\"conversation_id\":\"9\"}\n\n", "event:conversation.message.delta\ndata:{\"type\":\"answer\",\"content\":\"par\"}\n\n"]})");
  auto cut = Run(*coze_, Config("bot-echo"), Input("x"));
  ASSERT_FALSE(cut.result);
  EXPECT_EQ(cut.result.error().code, ErrorCode::kUpstreamFailed);
}

TEST_F(CozeTest, AConversationIdThatIsNotAPlainTokenIsNotKept) {
  Script(
      R"({"path": "/v3/chat", "events": ["event:conversation.chat.created\ndata:{\"id\":\"1\",\"conversation_id\":\"9&bot_id=evil\"}\n\n", "event:conversation.message.completed\ndata:{\"type\":\"answer\",\"content\":\"ok\"}\n\n", "event:conversation.chat.completed\ndata:{\"id\":\"1\",\"conversation_id\":\"9&bot_id=evil\"}\n\n"]})");
  auto odd = Run(*coze_, Config("bot-echo"), Input("x"));
  ASSERT_TRUE(odd.result) << odd.result.error().message;
  EXPECT_EQ(odd.result->text, "ok");
  auto next = Run(*coze_, Config("bot-echo"), Input("y"));
  ASSERT_TRUE(next.result) << next.result.error().message;
  EXPECT_EQ(Query(Requests().back(), "conversation_id"), "");
  EXPECT_EQ(Query(Requests().back(), "bot_id"), "");
}

}  // namespace
}  // namespace sb::runners
