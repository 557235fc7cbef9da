// The DashScope application runner against the fake of tests/fakes/fake_hosted_agents.py over
// loopback: the documented completion request, incremental SSE for agent and workflow apps, the
// session kept and forgotten, citations, usage, and errors without the key.
#include <gtest/gtest.h>

#include "runners_fixture.hpp"

namespace sb::runners {
namespace {

using namespace sb::runners::testing;
using util::ErrorCode;

class DashScopeTest : public RunnersTest {
 protected:
  util::JsonObject Config(const std::string& app, const std::string& type = "agent",
                          const std::string& key = "sk-ds-test") {
    return util::JsonObject{
        {"ai", util::JsonObject{
                   {"runner", util::JsonObject{{"runner", "dashscope-app-api"}}},
                   {"dashscope-app-api", util::JsonObject{{"base-url", fake_->base() + "/api/v1/"},
                                                          {"api-key", key},
                                                          {"app-type", type},
                                                          {"app-id", app},
                                                          {"references_quote", "Source:"},
                                                          {"timeout", 5}}}}}};
  }
};

TEST_F(DashScopeTest, AgentStreamsAndKeepsItsSessionUntilForgotten) {
  auto first = Run(*dashscope_, Config("app-agent"), Input("hello"), /*stream=*/true);
  ASSERT_TRUE(first.result) << first.result.error().message;
  EXPECT_EQ(first.result->text, "echo(1): hello");
  EXPECT_EQ(first.deltas.size(), 3u);
  EXPECT_EQ(Joined(first.deltas), "echo(1): hello");
  EXPECT_EQ(first.result->usage.prompt_tokens, 12);
  EXPECT_EQ(first.result->usage.completion_tokens, 8);

  auto second = Run(*dashscope_, Config("app-agent"), Input("again"));
  ASSERT_TRUE(second.result);
  EXPECT_EQ(second.result->text, "echo(2): again");

  const auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].as_object().at("path").as_string(), "/api/v1/apps/app-agent/completion");
  EXPECT_EQ(Headers(requests[0]).at("authorization").as_string(), "Bearer sk-ds-test");
  EXPECT_EQ(Headers(requests[0]).at("x-dashscope-sse").as_string(), "enable");
  const auto& input0 = Body(requests[0]).at("input").as_object();
  EXPECT_EQ(input0.at("prompt").as_string(), "hello");
  EXPECT_FALSE(input0.contains("session_id"));
  EXPECT_TRUE(Body(requests[0]).at("parameters").as_object().at("incremental_output").as_bool());
  EXPECT_FALSE(Body(requests[1]).at("input").as_object().at("session_id").as_string().empty());

  dashscope_->Forget({pipeline_, bot_, "person_42"});
  auto after = Run(*dashscope_, Config("app-agent"), Input("fresh"));
  ASSERT_TRUE(after.result);
  EXPECT_EQ(after.result->text, "echo(1): fresh");
}

TEST_F(DashScopeTest, WorkflowMessagesAndCitations) {
  auto flow = Run(*dashscope_, Config("app-workflow", "workflow"), Input("flow"), true);
  ASSERT_TRUE(flow.result) << flow.result.error().message;
  EXPECT_EQ(flow.result->text, "echo(1): flow");
  EXPECT_EQ(Body(Requests()[0]).at("parameters").as_object().at("flow_stream_mode").as_string(),
            "message_format");

  auto cited = Run(*dashscope_, Config("app-agent"), Input("cite it", "group_1"));
  ASSERT_TRUE(cited.result);
  EXPECT_EQ(cited.result->text, "echo(1): cite it (Source: handbook.pdf)");
}

TEST_F(DashScopeTest, ErrorsAreClassifiedWithoutTheKey) {
  auto refused = Run(*dashscope_, Config("app-agent", "agent", "sk-wrong-secret"), Input("x"));
  ASSERT_FALSE(refused.result);
  EXPECT_EQ(refused.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_EQ(refused.result.error().message.find("sk-wrong-secret"), std::string::npos);

  auto missing = Run(*dashscope_, Config("app-nope"), Input("x"));
  ASSERT_FALSE(missing.result);
  EXPECT_EQ(missing.result.error().code, ErrorCode::kUpstreamNotFound);

  auto failed = Run(*dashscope_, Config("app-fail"), Input("x"), true);
  ASSERT_FALSE(failed.result);
  EXPECT_EQ(failed.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(failed.result.error().message.find("InternalError"), std::string::npos);

  auto bad_type = Run(*dashscope_, Config("app-agent", "chatbot"), Input("x"));
  ASSERT_FALSE(bad_type.result);
  EXPECT_EQ(bad_type.result.error().code, ErrorCode::kInvalidArgument);
  auto bad_id = Run(*dashscope_, Config("../x"), Input("x"));
  ASSERT_FALSE(bad_id.result);
  EXPECT_EQ(bad_id.result.error().code, ErrorCode::kInvalidArgument);

  Script(
      R"({"path": "/api/v1/apps/app-agent/completion", "events": ["id:1\nevent:result\ndata:{\"output\":{\"text\":\"par\",\"finish_reason\":\"null\"}}\n\n"]})");
  auto cut = Run(*dashscope_, Config("app-agent"), Input("x"));
  ASSERT_FALSE(cut.result);
  EXPECT_EQ(cut.result.error().code, ErrorCode::kUpstreamFailed);
}

}  // namespace
}  // namespace sb::runners
