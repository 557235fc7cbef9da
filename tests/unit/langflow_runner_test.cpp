// The Langflow runner against the fake Langflow of tests/fakes/fake_hosted_agents.py over
// loopback: the documented run request, session continuity and !reset, token streaming, the
// result shapes, and error classification without the key.
#include <gtest/gtest.h>

#include "runners_fixture.hpp"

namespace sb::runners {
namespace {

using namespace sb::runners::testing;
using util::ErrorCode;

class LangflowTest : public RunnersTest {
 protected:
  util::JsonObject Config(const std::string& flow, const std::string& key = "lf-test-key",
                          util::Json tweaks = "{}") {
    return util::JsonObject{
        {"ai", util::JsonObject{{"runner", util::JsonObject{{"runner", "langflow-api"}}},
                                {"langflow-api", util::JsonObject{{"base-url", fake_->base() + "/"},
                                                                  {"api-key", key},
                                                                  {"flow-id", flow},
                                                                  {"input-type", "chat"},
                                                                  {"output-type", "chat"},
                                                                  {"tweaks", tweaks},
                                                                  {"timeout", 5}}}}}};
  }
};

TEST_F(LangflowTest, BlockingRunKeepsTheSessionUntilForgotten) {
  auto first = Run(*langflow_, Config("echo-flow"), Input("hello"));
  ASSERT_TRUE(first.result) << first.result.error().message;
  EXPECT_EQ(first.result->text, "echo(1): hello");
  auto second = Run(*langflow_, Config("echo-flow"), Input("again"));
  ASSERT_TRUE(second.result);
  EXPECT_EQ(second.result->text, "echo(2): again");

  auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  const auto& r0 = requests[0].as_object();
  EXPECT_EQ(r0.at("path").as_string(), "/api/v1/run/echo-flow");
  EXPECT_EQ(r0.at("query").as_object().at("stream").as_string(), "false");
  EXPECT_EQ(Headers(requests[0]).at("x-api-key").as_string(), "lf-test-key");
  EXPECT_EQ(Body(requests[0]).at("input_value").as_string(), "hello");
  EXPECT_EQ(Body(requests[0]).at("input_type").as_string(), "chat");
  EXPECT_FALSE(Body(requests[0]).contains("tweaks"));  // "{}" adds nothing
  const auto session = Body(requests[0]).at("session_id").as_string();
  EXPECT_FALSE(session.empty());
  EXPECT_EQ(Body(requests[1]).at("session_id").as_string(), session);

  // Another chat session has its own Langflow session.
  auto other = Run(*langflow_, Config("echo-flow"), Input("hi", "group_7"));
  ASSERT_TRUE(other.result);
  EXPECT_EQ(other.result->text, "echo(1): hi");

  langflow_->Forget({pipeline_, bot_, "person_42"});
  auto after = Run(*langflow_, Config("echo-flow"), Input("fresh"));
  ASSERT_TRUE(after.result);
  EXPECT_EQ(after.result->text, "echo(1): fresh");
  EXPECT_NE(Body(Requests().back()).at("session_id").as_string(), session);
}

TEST_F(LangflowTest, StreamingDeliversTokensAndTheWholeAnswer) {
  auto out = Run(*langflow_, Config("echo-flow"), Input("stream me"), /*stream=*/true);
  ASSERT_TRUE(out.result) << out.result.error().message;
  EXPECT_EQ(out.result->text, "echo(1): stream me");
  EXPECT_EQ(out.deltas.size(), 3u);
  EXPECT_EQ(Joined(out.deltas), "echo(1): stream me");
  EXPECT_EQ(Requests()[0].as_object().at("query").as_object().at("stream").as_string(), "true");
}

TEST_F(LangflowTest, TweaksGoAsAnObject) {
  auto out = Run(
      *langflow_,
      Config("echo-flow", "lf-test-key", R"({"ChatOutput-1": {"should_store_message": false}})"),
      Input("t"));
  ASSERT_TRUE(out.result);
  EXPECT_TRUE(Body(Requests()[0]).at("tweaks").as_object().contains("ChatOutput-1"));
  auto bad = Run(*langflow_, Config("echo-flow", "lf-test-key", "[1"), Input("t"));
  ASSERT_FALSE(bad.result);
  EXPECT_EQ(bad.result.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LangflowTest, ErrorsAreClassifiedWithoutTheKey) {
  auto refused = Run(*langflow_, Config("echo-flow", "lf-wrong-secret-key"), Input("x"));
  ASSERT_FALSE(refused.result);
  EXPECT_EQ(refused.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_EQ(refused.result.error().message.find("lf-wrong-secret-key"), std::string::npos);

  auto missing = Run(*langflow_, Config("no-such-flow"), Input("x"));
  ASSERT_FALSE(missing.result);
  EXPECT_EQ(missing.result.error().code, ErrorCode::kUpstreamNotFound);

  auto failed = Run(*langflow_, Config("fail-flow"), Input("x"));
  ASSERT_FALSE(failed.result);
  EXPECT_EQ(failed.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(failed.result.error().message.find("component error"), std::string::npos);

  auto failed_stream = Run(*langflow_, Config("fail-flow"), Input("x"), true);
  ASSERT_FALSE(failed_stream.result);
  EXPECT_EQ(failed_stream.result.error().code, ErrorCode::kUpstreamFailed);

  auto bad_id = Run(*langflow_, Config("../admin"), Input("x"));
  ASSERT_FALSE(bad_id.result);
  EXPECT_EQ(bad_id.result.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LangflowTest, TimeoutAndUnreachable) {
  Script(R"({"path": "/api/v1/run/echo-flow", "delay": 3, "body": {}})");
  auto config = Config("echo-flow");
  config["ai"].as_object()["langflow-api"].as_object()["timeout"] = 0.3;
  auto slow = Run(*langflow_, config, Input("x"));
  ASSERT_FALSE(slow.result);
  EXPECT_EQ(slow.result.error().code, ErrorCode::kUpstreamTimeout);

  config["ai"].as_object()["langflow-api"].as_object()["base-url"] = "http://127.0.0.1:1";
  auto down = Run(*langflow_, config, Input("x"));
  ASSERT_FALSE(down.result);
  EXPECT_EQ(down.result.error().code, ErrorCode::kUpstreamUnreachable);
}

}  // namespace
}  // namespace sb::runners
