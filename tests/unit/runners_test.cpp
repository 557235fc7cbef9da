// The external runners end to end over loopback: real HttpClient, and the fake Dify and n8n of
// tests/fakes/fake_agents.py (speaking the documented service API and webhook protocols) as the
// far side. Checks conversation continuity, streaming, auth headers, reply shapes, error
// classification, timeouts and cancellation.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "runners_fixture.hpp"

namespace sb::runners {
namespace {

using namespace sb::runners::testing;
using pipeline::AgentInput;
using pipeline::AgentReply;
using util::ErrorCode;
using namespace std::chrono_literals;

// ---- Dify -------------------------------------------------------------------------------------

TEST_F(RunnersTest, DifyChatBlockingContinuesTheSessionsConversation) {
  auto config = DifyConfig("chat", "app-chat-1");
  auto first = Run(*dify_, config, Input("hello"));
  ASSERT_TRUE(first.result) << first.result.error().message;
  EXPECT_EQ(first.result->text, "echo(1): hello");
  EXPECT_EQ(first.result->model_uuid, "");
  EXPECT_EQ(first.result->usage.prompt_tokens, 11);
  EXPECT_EQ(first.result->usage.completion_tokens, 7);
  EXPECT_EQ(first.result->usage.total_tokens, 18);
  auto second = Run(*dify_, config, Input("again"));
  ASSERT_TRUE(second.result) << second.result.error().message;
  EXPECT_EQ(second.result->text, "echo(2): again");

  auto reqs = Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].as_object().at("path"), "/v1/chat-messages");
  EXPECT_EQ(Headers(reqs[0]).at("authorization"), "Bearer app-chat-1");
  const auto& body = Body(reqs[0]);
  EXPECT_EQ(body.at("query"), "hello");
  EXPECT_EQ(body.at("response_mode"), "blocking");
  EXPECT_EQ(body.at("user"), "person_42");
  EXPECT_EQ(body.at("inputs"), boost::json::object());
  EXPECT_EQ(body.at("conversation_id"), "");
  EXPECT_NE(Body(reqs[1]).at("conversation_id"), "");
}

TEST_F(RunnersTest, DifySessionsAndBotsHaveSeparateConversations) {
  auto config = DifyConfig("chat", "app-chat-1");
  ASSERT_TRUE(Run(*dify_, config, Input("a1", "person_1")).result);
  auto other_session = Run(*dify_, config, Input("b1", "group_7"));
  ASSERT_TRUE(other_session.result);
  EXPECT_EQ(other_session.result->text, "echo(1): b1");
  bot_ = util::BotId::Generate();
  auto other_bot = Run(*dify_, config, Input("c1", "person_1"));
  ASSERT_TRUE(other_bot.result);
  EXPECT_EQ(other_bot.result->text, "echo(1): c1");
  auto reqs = Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(Body(reqs[1]).at("conversation_id"), "");
  EXPECT_EQ(Body(reqs[1]).at("user"), "group_7");
  EXPECT_EQ(Body(reqs[2]).at("conversation_id"), "");
}

TEST_F(RunnersTest, DifyChatStreamingDeliversDeltasAndKeepsTheConversation) {
  auto config = DifyConfig("chat", "app-chat-1");
  auto first = Run(*dify_, config, Input("stream me"), /*stream=*/true);
  ASSERT_TRUE(first.result) << first.result.error().message;
  EXPECT_EQ(first.result->text, "echo(1): stream me");
  EXPECT_GE(first.deltas.size(), 2u);
  EXPECT_EQ(Joined(first.deltas), first.result->text);
  EXPECT_EQ(first.result->usage.total_tokens, 18);
  auto second = Run(*dify_, config, Input("more"), /*stream=*/true);
  ASSERT_TRUE(second.result) << second.result.error().message;
  EXPECT_EQ(second.result->text, "echo(2): more");
  auto reqs = Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(Body(reqs[0]).at("response_mode"), "streaming");
}

TEST_F(RunnersTest, DifyAgentAlwaysStreams) {
  auto config = DifyConfig("agent", "app-agent-1");
  auto quiet = Run(*dify_, config, Input("plan"));
  ASSERT_TRUE(quiet.result) << quiet.result.error().message;
  EXPECT_EQ(quiet.result->text, "echo(1): plan");
  auto streamed = Run(*dify_, config, Input("act"), /*stream=*/true);
  ASSERT_TRUE(streamed.result) << streamed.result.error().message;
  EXPECT_EQ(streamed.result->text, "echo(2): act");
  EXPECT_EQ(Joined(streamed.deltas), "echo(2): act");
  EXPECT_EQ(Body(Requests()[0]).at("response_mode"), "streaming");
}

TEST_F(RunnersTest, DifyImagesGoAsRemoteUrlFiles) {
  auto r = Run(
      *dify_, DifyConfig("chat", "app-chat-1"),
      Input("look", "person_42", {"https://example.com/cat.png", "data:image/png;base64,AAAA"}));
  ASSERT_TRUE(r.result) << r.result.error().message;
  EXPECT_EQ(r.result->text, "echo(1): look [images: https://example.com/cat.png]");
  auto reqs = Requests();
  const auto& files = Body(reqs[0]).at("files").as_array();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].as_object().at("transfer_method"), "remote_url");
  EXPECT_EQ(files[0].as_object().at("type"), "image");
}

TEST_F(RunnersTest, DifyWorkflowTakesItsOutputs) {
  auto config = DifyConfig("workflow", "app-workflow-1");
  auto r = Run(*dify_, config, Input("sum up"));
  ASSERT_TRUE(r.result) << r.result.error().message;
  EXPECT_EQ(r.result->text, "echo: sum up");
  EXPECT_EQ(r.result->usage.total_tokens, 42);
  auto reqs = Requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].as_object().at("path"), "/v1/workflows/run");
  EXPECT_EQ(Body(reqs[0]).at("inputs").as_object().at("query"), "sum up");
  EXPECT_EQ(Body(reqs[0]).at("response_mode"), "blocking");

  Script(R"({"path":"/v1/workflows/run","body":{"task_id":"t","workflow_run_id":"w","data":{
      "id":"w","status":"succeeded","outputs":{"count":3,"summary":"first string"}}}})");
  auto first_string = Run(*dify_, config, Input("x"));
  ASSERT_TRUE(first_string.result) << first_string.result.error().message;
  EXPECT_EQ(first_string.result->text, "first string");

  Script(R"({"path":"/v1/workflows/run","body":{"task_id":"t","workflow_run_id":"w","data":{
      "id":"w","status":"failed","outputs":{},"error":"node llm failed"}}})");
  auto failed = Run(*dify_, config, Input("x"));
  ASSERT_FALSE(failed.result);
  EXPECT_EQ(failed.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(failed.result.error().message.find("node llm failed"), std::string::npos);
}

TEST_F(RunnersTest, DifyErrorsAreClassifiedWithoutTheKey) {
  auto bad_key = Run(*dify_, DifyConfig("chat", "sk-secret-not-an-app"), Input("hi"));
  ASSERT_FALSE(bad_key.result);
  EXPECT_EQ(bad_key.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_EQ(bad_key.result.error().message, "dify: bad API key");

  auto config = DifyConfig("chat", "app-chat-secret-key");
  Script(R"({"path":"/v1/chat-messages","status":429,
             "body":{"status":429,"code":"too_many_requests","message":"Too many requests."}})");
  auto limited = Run(*dify_, config, Input("hi"));
  ASSERT_FALSE(limited.result);
  EXPECT_EQ(limited.result.error().code, ErrorCode::kUpstreamRateLimited);
  EXPECT_FALSE(limited.result.error().final);

  Script(R"({"path":"/v1/chat-messages","status":500,
             "body":{"status":500,"code":"internal_server_error","message":"Internal Server Error."}})");
  auto failed = Run(*dify_, config, Input("hi"));
  ASSERT_FALSE(failed.result);
  EXPECT_EQ(failed.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(failed.result.error().message, "dify: internal_server_error: Internal Server Error.");

  for (const auto& r : {bad_key, limited, failed}) {
    EXPECT_EQ(r.result.error().message.find("secret"), std::string::npos);
  }
}

TEST_F(RunnersTest, DifyUnknownConversationIsNotFoundAndThenForgotten) {
  auto config = DifyConfig("chat", "app-chat-1");
  ASSERT_TRUE(Run(*dify_, config, Input("one")).result);
  Control("POST", "/_control/reset", "{}");  // Dify lost the conversation
  auto lost = Run(*dify_, config, Input("two"));
  ASSERT_FALSE(lost.result);
  EXPECT_EQ(lost.result.error().code, ErrorCode::kUpstreamNotFound);
  EXPECT_EQ(lost.result.error().message, "dify: Conversation Not Exists.");
  auto fresh = Run(*dify_, config, Input("three"));
  ASSERT_TRUE(fresh.result) << fresh.result.error().message;
  EXPECT_EQ(fresh.result->text, "echo(1): three");
}

TEST_F(RunnersTest, DifyForgetStartsANewConversation) {
  auto config = DifyConfig("chat", "app-chat-1");
  ASSERT_TRUE(Run(*dify_, config, Input("one")).result);
  dify_->Forget({pipeline_, bot_, "person_42"});
  auto again = Run(*dify_, config, Input("two"));
  ASSERT_TRUE(again.result);
  EXPECT_EQ(again.result->text, "echo(1): two");
}

TEST_F(RunnersTest, DifyRemembersABoundedNumberOfConversations) {
  DifyRunner small(io_.get_executor(), client_, 2);
  auto config = DifyConfig("chat", "app-chat-1");
  for (const char* session : {"person_1", "person_2", "person_3"}) {
    ASSERT_TRUE(Run(small, config, Input("hi", session)).result);
  }
  auto oldest = Run(small, config, Input("back", "person_1"));
  ASSERT_TRUE(oldest.result);
  EXPECT_EQ(oldest.result->text, "echo(1): back");  // evicted: a new conversation
  auto newest = Run(small, config, Input("back", "person_3"));
  ASSERT_TRUE(newest.result);
  EXPECT_EQ(newest.result->text, "echo(2): back");
}

TEST_F(RunnersTest, DifyInStreamErrorFails) {
  Script(R"({"path":"/v1/chat-messages","events":[
      "data: {\"event\":\"message\",\"conversation_id\":\"c\",\"answer\":\"par\"}\n\n",
      "data: {\"event\":\"error\",\"conversation_id\":\"c\",\"status\":400,\"code\":\"completion_request_error\",\"message\":\"model overloaded\"}\n\n"]})");
  auto r = Run(*dify_, DifyConfig("agent", "app-agent-1"), Input("hi"), true);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(r.result.error().message, "dify: completion_request_error: model overloaded");
}

TEST_F(RunnersTest, DifyMessageReplaceReplacesTheAnswer) {
  Script(R"({"path":"/v1/chat-messages","events":[
      "data: {\"event\":\"message\",\"conversation_id\":\"c\",\"answer\":\"bad words\"}\n\n",
      "data: {\"event\":\"message_replace\",\"conversation_id\":\"c\",\"answer\":\"[moderated]\"}\n\n",
      "data: {\"event\":\"message_end\",\"conversation_id\":\"c\",\"metadata\":{}}\n\n"]})");
  auto r = Run(*dify_, DifyConfig("chat", "app-chat-1"), Input("hi"), true);
  ASSERT_TRUE(r.result) << r.result.error().message;
  EXPECT_EQ(r.result->text, "[moderated]");
}

TEST_F(RunnersTest, DifyTimeoutIsClassified) {
  Script(R"({"path":"/v1/chat-messages","delay":3,"body":{}})");
  const auto start = std::chrono::steady_clock::now();
  auto r = Run(*dify_, DifyConfig("chat", "app-chat-1", 0.5), Input("hi"));
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms);
}

TEST_F(RunnersTest, DifyUnknownAppTypeIsInvalid) {
  auto r = Run(*dify_, DifyConfig("completion", "app-chat-1"), Input("hi"));
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Requests().empty());
}

TEST_F(RunnersTest, DifyCancelAllEndsCallsInFlight) {
  Script(R"({"path":"/v1/chat-messages","delay":5,"body":{}})");
  std::promise<util::Result<AgentReply>> p;
  dify_->Run(DifyConfig("chat", "app-chat-1", 30), Input("hi"), nullptr,
             [&p](util::Result<AgentReply> r) { p.set_value(std::move(r)); });
  WaitForRequests(1);
  dify_->CancelAll();
  auto f = p.get_future();
  ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
  auto r = f.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
}

// ---- n8n --------------------------------------------------------------------------------------

TEST_F(RunnersTest, N8nJsonReplySendsLangBotsBody) {
  auto r = Run(*n8n_, N8nConfig("none/json"), Input("hello n8n", "group_7"));
  ASSERT_TRUE(r.result) << r.result.error().message;
  EXPECT_EQ(r.result->text, "echo: hello n8n");
  auto reqs = Requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].as_object().at("method"), "POST");
  EXPECT_EQ(Headers(reqs[0]).at("content-type"), "application/json");
  EXPECT_FALSE(Headers(reqs[0]).contains("authorization"));
  const auto& body = Body(reqs[0]);
  EXPECT_EQ(body.at("chatInput"), "hello n8n");
  EXPECT_EQ(body.at("message"), "hello n8n");
  EXPECT_EQ(body.at("user_message_text"), "hello n8n");
  EXPECT_EQ(body.at("session_id"), "group_7");
  EXPECT_EQ(body.at("sessionId"), "group_7");
  EXPECT_EQ(body.at("user_id"), "group_7");
  EXPECT_EQ(body.at("launcher_type"), "group");
  EXPECT_EQ(body.at("launcher_id"), "7");
  EXPECT_TRUE(util::IsUuid(body.at("conversation_id").as_string()));
  EXPECT_TRUE(body.at("msg_create_time").is_int64());

  // The same session keeps its conversation id.
  ASSERT_TRUE(Run(*n8n_, N8nConfig("none/json"), Input("again", "group_7")).result);
  EXPECT_EQ(Body(Requests()[1]).at("conversation_id"), body.at("conversation_id"));
}

TEST_F(RunnersTest, N8nArrayPlainTextAndCustomKeyReplies) {
  auto array = Run(*n8n_, N8nConfig("none/array"), Input("a"));
  ASSERT_TRUE(array.result) << array.result.error().message;
  EXPECT_EQ(array.result->text, "echo: a");
  auto text = Run(*n8n_, N8nConfig("none/text"), Input("b"));
  ASSERT_TRUE(text.result) << text.result.error().message;
  EXPECT_EQ(text.result->text, "echo: b");
  auto custom = Run(*n8n_, N8nConfig("none/output", {{"output-key", "output"}}), Input("c"));
  ASSERT_TRUE(custom.result) << custom.result.error().message;
  EXPECT_EQ(custom.result->text, "echo: c");
}

TEST_F(RunnersTest, N8nStreamedNdjsonDeliversItems) {
  for (const char* mode : {"none/stream", "none/ndjson"}) {
    auto r = Run(*n8n_, N8nConfig(mode), Input("flowing"), /*stream=*/true);
    ASSERT_TRUE(r.result) << mode << ": " << r.result.error().message;
    EXPECT_EQ(r.result->text, "echo: flowing") << mode;
    EXPECT_EQ(r.deltas.size(), 3u) << mode;
    EXPECT_EQ(Joined(r.deltas), "echo: flowing") << mode;
  }
}

TEST_F(RunnersTest, N8nMissingOutputKeyFailsNamingIt) {
  auto r = Run(*n8n_, N8nConfig("none/json", {{"output-key", "answer"}}), Input("x"));
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(r.result.error().message.find("'answer'"), std::string::npos);
  auto started = Run(*n8n_, N8nConfig("none/immediate"), Input("x"));
  ASSERT_FALSE(started.result);
  EXPECT_NE(started.result.error().message.find("Immediately"), std::string::npos);
}

TEST_F(RunnersTest, N8nBasicAuthHeaderIsExact) {
  auto ok = Run(*n8n_,
                N8nConfig("basic/json", {{"auth-type", "basic"},
                                         {"basic-username", "alice"},
                                         {"basic-password", "open sesame"}}),
                Input("hi"));
  ASSERT_TRUE(ok.result) << ok.result.error().message;
  EXPECT_EQ(Headers(Requests()[0]).at("authorization"), "Basic YWxpY2U6b3BlbiBzZXNhbWU=");

  auto wrong = Run(*n8n_,
                   N8nConfig("basic/json", {{"auth-type", "basic"},
                                            {"basic-username", "alice"},
                                            {"basic-password", "wrong-password"}}),
                   Input("hi"));
  ASSERT_FALSE(wrong.result);
  EXPECT_EQ(wrong.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_NE(wrong.result.error().message.find("Authorization data is wrong!"), std::string::npos);
  EXPECT_EQ(wrong.result.error().message.find("wrong-password"), std::string::npos);

  auto missing = Run(*n8n_, N8nConfig("basic/json"), Input("hi"));
  ASSERT_FALSE(missing.result);
  EXPECT_EQ(missing.result.error().code, ErrorCode::kUpstreamAuth);
}

TEST_F(RunnersTest, N8nJwtIsSignedHs256) {
  auto ok =
      Run(*n8n_, N8nConfig("jwt/json", {{"auth-type", "jwt"}, {"jwt-secret", "n8n-jwt-secret"}}),
          Input("hi"));
  ASSERT_TRUE(ok.result) << ok.result.error().message;  // the fake verified the signature
  const std::string auth(Headers(Requests()[0]).at("authorization").as_string());
  ASSERT_TRUE(auth.starts_with("Bearer "));
  const std::string token = auth.substr(7);
  const auto dot1 = token.find('.');
  const auto dot2 = token.find('.', dot1 + 1);
  std::string header;
  std::string claims;
  ASSERT_TRUE(util::Base64UrlDecode(token.substr(0, dot1), header));
  ASSERT_TRUE(util::Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1), claims));
  EXPECT_EQ(boost::json::parse(header).at("alg"), "HS256");
  auto c = boost::json::parse(claims).as_object();
  EXPECT_EQ(c.at("sub"), "n8n-webhook");
  EXPECT_EQ(c.at("exp").as_int64() - c.at("iat").as_int64(), 3600);

  auto wrong =
      Run(*n8n_, N8nConfig("jwt/json", {{"auth-type", "jwt"}, {"jwt-secret", "other-secret"}}),
          Input("hi"));
  ASSERT_FALSE(wrong.result);
  EXPECT_EQ(wrong.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_NE(wrong.result.error().message.find("invalid signature"), std::string::npos);
  EXPECT_EQ(wrong.result.error().message.find("other-secret"), std::string::npos);

  auto rs256 =
      Run(*n8n_,
          N8nConfig("jwt/json",
                    {{"auth-type", "jwt"}, {"jwt-secret", "x"}, {"jwt-algorithm", "RS256"}}),
          Input("hi"));
  ASSERT_FALSE(rs256.result);
  EXPECT_EQ(rs256.result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(rs256.result.error().message.find("RS256"), std::string::npos);
  EXPECT_EQ(Requests().size(), 2u);
}

TEST_F(RunnersTest, N8nHeaderAuthSendsTheCustomHeader) {
  auto ok = Run(*n8n_,
                N8nConfig("header/json", {{"auth-type", "header"},
                                          {"header-name", "X-N8n-Token"},
                                          {"header-value", "tok-123"}}),
                Input("hi"));
  ASSERT_TRUE(ok.result) << ok.result.error().message;
  EXPECT_EQ(Headers(Requests()[0]).at("x-n8n-token"), "tok-123");
  auto wrong = Run(*n8n_,
                   N8nConfig("header/json", {{"auth-type", "header"},
                                             {"header-name", "X-N8n-Token"},
                                             {"header-value", "tok-999"}}),
                   Input("hi"));
  ASSERT_FALSE(wrong.result);
  EXPECT_EQ(wrong.result.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_EQ(wrong.result.error().message.find("tok-999"), std::string::npos);
}

TEST_F(RunnersTest, N8nErrorsAreClassified) {
  auto failed = Run(*n8n_, N8nConfig("none/error"), Input("x"));
  ASSERT_FALSE(failed.result);
  EXPECT_EQ(failed.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(failed.result.error().message, "n8n: 500: There was a problem executing the workflow");
  auto missing = Run(*n8n_, N8nConfig("none/nothing-here"), Input("x"));
  ASSERT_FALSE(missing.result);
  EXPECT_EQ(missing.result.error().code, ErrorCode::kUpstreamNotFound);
  EXPECT_NE(missing.result.error().message.find("is not registered"), std::string::npos);
  Script(R"({"path":"/webhook/none/json","status":429,"body":"slow down"})");
  auto limited = Run(*n8n_, N8nConfig("none/json"), Input("x"));
  ASSERT_FALSE(limited.result);
  EXPECT_EQ(limited.result.error().code, ErrorCode::kUpstreamRateLimited);
  auto unknown = Run(*n8n_, N8nConfig("none/json", {{"auth-type", "oauth"}}), Input("x"));
  ASSERT_FALSE(unknown.result);
  EXPECT_EQ(unknown.result.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(RunnersTest, N8nTimeoutIsClassified) {
  Script(R"({"path":"/webhook/none/json","delay":3,"body":{"response":"late"}})");
  const auto start = std::chrono::steady_clock::now();
  auto r = Run(*n8n_, N8nConfig("none/json", {{"timeout", 0.5}}), Input("x"));
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms);
}

TEST_F(RunnersTest, N8nCancelAllEndsCallsInFlight) {
  Script(R"({"path":"/webhook/none/json","delay":5,"body":{"response":"late"}})");
  std::promise<util::Result<AgentReply>> p;
  n8n_->Run(N8nConfig("none/json"), Input("hi"), nullptr,
            [&p](util::Result<AgentReply> r) { p.set_value(std::move(r)); });
  WaitForRequests(1);
  n8n_->CancelAll();
  auto f = p.get_future();
  ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
  auto r = f.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
}

}  // namespace
}  // namespace sb::runners
