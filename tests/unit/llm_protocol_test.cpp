// The three wire protocols against payloads shaped as in docs/protocols/llm.md (sections 1-3):
// request bodies compared as JSON values, responses and streams parsed from recorded shapes.

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "llm/protocol_support.hpp"
#include "llm/wire_protocol.hpp"

namespace sb::llm {
namespace {

using domain::ChatMessage;
using domain::ChatRequest;
using domain::ChatResult;
using domain::ContentPart;
using domain::ToolCall;
using util::ErrorCode;
using util::Json;

Json J(std::string_view text) {
  auto parsed = util::ParseJson(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed ? *parsed : Json();
}

util::JsonObject Obj(std::string_view text) { return J(text).as_object(); }

ContentPart Text(std::string text) {
  return ContentPart{ContentPart::Kind::kText, std::move(text), {}};
}
ContentPart Image(std::string url) {
  return ContentPart{ContentPart::Kind::kImage, {}, std::move(url)};
}

ChatMessage Msg(std::string role, std::vector<ContentPart> content) {
  ChatMessage message;
  message.role = std::move(role);
  message.content = std::move(content);
  return message;
}

ChatMessage ToolResult(std::string call_id, std::string text) {
  ChatMessage message = Msg("tool", {Text(std::move(text))});
  message.tool_call_id = std::move(call_id);
  return message;
}

ChatMessage AssistantCalls(std::string text, std::vector<ToolCall> calls) {
  ChatMessage message = Msg("assistant", {});
  if (!text.empty()) message.content.push_back(Text(std::move(text)));
  message.tool_calls = std::move(calls);
  return message;
}

domain::ToolSpec WeatherTool() {
  return domain::ToolSpec{
      "get_weather", "",
      Obj(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})")};
}

std::string HeaderOf(const net::HttpRequest& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (key == name) return value;
  }
  return "<absent>";
}

net::HttpResponse Response(int status, std::string body) {
  net::HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

std::string Describe(const ChatResult& result) {
  std::string out = "content=" + result.content + "|reasoning=" + result.reasoning +
                    "|finish=" + result.finish_reason +
                    "|usage=" + std::to_string(result.usage.prompt_tokens) + "/" +
                    std::to_string(result.usage.completion_tokens) + "/" +
                    std::to_string(result.usage.total_tokens);
  for (const auto& call : result.tool_calls) {
    out += "|call(" + call.id + "," + call.name + "," + call.arguments + ")";
  }
  return out;
}

struct StreamOutcome {
  std::vector<std::string> deltas;
  std::optional<util::Error> feed_error;
  util::Result<ChatResult> result = util::Fail(ErrorCode::kInternal, "not run");

  std::string Summary() const {
    std::string out;
    for (const auto& delta : deltas) out += "[" + delta + "]";
    if (feed_error) out += " feed:" + std::string(util::ErrorCodeName(feed_error->code));
    out += result ? " ok:" + Describe(*result)
                  : " err:" + std::string(util::ErrorCodeName(result.error().code)) + ":" +
                        result.error().message;
    return out;
  }
};

StreamOutcome RunStream(const WireProtocol& protocol, std::string_view body, std::size_t chunk) {
  StreamOutcome out;
  auto stream = protocol.NewChatStream();
  for (std::size_t i = 0; i < body.size(); i += chunk) {
    auto fed = stream->Feed(body.substr(i, chunk), [&](const domain::ChatDelta& delta) {
      out.deltas.push_back(delta.content);
    });
    if (!fed) {
      out.feed_error = fed.error();
      break;
    }
  }
  out.result = stream->Finish();
  return out;
}

// Feeds the body whole, byte by byte and in 7-byte pieces; all three must agree.
StreamOutcome StreamAllWays(const WireProtocol& protocol, std::string_view body) {
  StreamOutcome whole = RunStream(protocol, body, body.size() + 1);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}}) {
    EXPECT_EQ(RunStream(protocol, body, chunk).Summary(), whole.Summary()) << "chunk " << chunk;
  }
  return whole;
}

// OpenAI ----------------------------------------------------------------------------------------

class OpenAiTest : public ::testing::Test {
 protected:
  std::unique_ptr<WireProtocol> protocol_ = MakeOpenAiProtocol();
};

TEST_F(OpenAiTest, BuildsPlainChat) {
  ChatRequest request;
  request.model = "gpt-4o-mini";
  request.messages = {Msg("system", {Text("You are terse.")}), Msg("user", {Text("Hi")})};
  auto http = protocol_->BuildChat("https://api.openai.com/v1", "sk-test", request);
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(http->method, "POST");
  EXPECT_EQ(http->url, "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(HeaderOf(*http, "Authorization"), "Bearer sk-test");
  EXPECT_EQ(HeaderOf(*http, "Content-Type"), "application/json");
  // The exact text pins key order too: model, messages, stream.
  EXPECT_EQ(http->body,
            R"({"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},)"
            R"({"role":"user","content":"Hi"}],"stream":false})");
}

TEST_F(OpenAiTest, OmitsAuthorizationWithoutKey) {
  ChatRequest request;
  request.model = "local";
  auto http = protocol_->BuildChat("http://127.0.0.1:1234/v1", "", request);
  ASSERT_TRUE(http);
  EXPECT_EQ(HeaderOf(*http, "Authorization"), "<absent>");
}

TEST_F(OpenAiTest, StreamingAsksForUsageAndExtraArgsMergeLast) {
  ChatRequest request;
  request.model = "gpt-4o-mini";
  request.stream = true;
  request.messages = {Msg("user", {Text("Hi")})};
  request.extra_args = Obj(
      R"({"temperature":0.5,"stream_options":{"include_obfuscation":false},"model":"override"})");
  auto http = protocol_->BuildChat("https://x/v1", "k", request);
  ASSERT_TRUE(http);
  EXPECT_EQ(J(http->body), J(R"({"model":"override","messages":[{"role":"user","content":"Hi"}],
      "stream":true,"stream_options":{"include_usage":true,"include_obfuscation":false},
      "temperature":0.5})"));
}

TEST_F(OpenAiTest, BuildsVisionToolCallsAndToolResults) {
  // The request of llm.md 1.3.
  ChatRequest request;
  request.model = "gpt-4o-mini";
  request.messages = {
      Msg("system", {Text("You are terse.")}),
      Msg("user", {Text("What is in this picture?"), Image("data:image/png;base64,iVBOR")}),
      AssistantCalls("", {ToolCall{"call_1", "get_weather", R"({"city":"Tokyo"})"}}),
      ToolResult("call_1", R"({"temp_c":21})")};
  request.tools = {WeatherTool()};
  auto http = protocol_->BuildChat("https://x/v1", "k", request);
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(J(http->body), J(R"({"model":"gpt-4o-mini","stream":false,
 "messages":[
  {"role":"system","content":"You are terse."},
  {"role":"user","content":[
     {"type":"text","text":"What is in this picture?"},
     {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBOR"}}]},
  {"role":"assistant","content":null,"tool_calls":[
     {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Tokyo\"}"}}]},
  {"role":"tool","tool_call_id":"call_1","content":"{\"temp_c\":21}"}],
 "tools":[{"type":"function","function":{"name":"get_weather","parameters":
   {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]})"));
}

TEST_F(OpenAiTest, AssistantTextBesideToolCallsAndToolDescription) {
  ChatRequest request;
  request.model = "m";
  request.messages = {AssistantCalls("Checking.", {ToolCall{"c", "f", ""}})};
  request.tools = {domain::ToolSpec{"f", "Does f.", {}}};
  auto http = protocol_->BuildChat("https://x/v1", "k", request);
  ASSERT_TRUE(http);
  EXPECT_EQ(J(http->body), J(R"({"model":"m","stream":false,"messages":[{"role":"assistant",
      "content":"Checking.","tool_calls":[{"id":"c","type":"function",
      "function":{"name":"f","arguments":"{}"}}]}],"tools":[{"type":"function","function":
      {"name":"f","description":"Does f.","parameters":{"type":"object","properties":{}}}}]})"));
}

TEST_F(OpenAiTest, RejectsRequestsItCannotExpress) {
  struct Case {
    const char* name;
    ChatMessage message;
  };
  const Case cases[] = {
      {"unknown role", Msg("developer", {Text("x")})},
      {"tool without id", ToolResult("", "x")},
      {"image in system", Msg("system", {Image("https://x/a.png")})},
  };
  for (const auto& c : cases) {
    ChatRequest request;
    request.model = "m";
    request.messages = {c.message};
    auto http = protocol_->BuildChat("https://x/v1", "k", request);
    ASSERT_FALSE(http) << c.name;
    EXPECT_EQ(http.error().code, ErrorCode::kInvalidArgument) << c.name;
  }
}

TEST_F(OpenAiTest, ParsesToolCallAnswerWithNullContent) {
  // llm.md 1.4.
  auto result =
      protocol_->ParseChat(Response(200, R"({"id":"chatcmpl-abc","object":"chat.completion",
 "created":1700000000,"model":"gpt-4o-mini-2024-07-18",
 "choices":[{"index":0,"finish_reason":"tool_calls","logprobs":null,
   "message":{"role":"assistant","content":null,"refusal":null,
     "tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Tokyo\"}"}}]}}],
 "usage":{"prompt_tokens":31,"completion_tokens":18,"total_tokens":49,
   "prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}})"));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(
      Describe(*result),
      R"(content=|reasoning=|finish=tool_calls|usage=31/18/49|call(call_1,get_weather,{"city":"Tokyo"}))");
}

TEST_F(OpenAiTest, ParsesContentReasoningAndFinishReasons) {
  struct Case {
    const char* message;
    const char* finish;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"content":"Hi"})", R"("stop")", "content=Hi|reasoning=|finish=stop|usage=1/2/3"},
      {R"({"content":"Hi","reasoning_content":"hmm"})", R"("length")",
       "content=Hi|reasoning=hmm|finish=length|usage=1/2/3"},
      {R"({"content":"Hi","reasoning":"hmm"})", R"("content_filter")",
       "content=Hi|reasoning=hmm|finish=content_filter|usage=1/2/3"},
      {R"({"content":"Hi"})", R"("function_call")",
       "content=Hi|reasoning=|finish=tool_calls|usage=1/2/3"},
      {R"({"content":"Hi"})", R"("eos")", "content=Hi|reasoning=|finish=other|usage=1/2/3"},
      {R"({"content":"Hi"})", "null", "content=Hi|reasoning=|finish=other|usage=1/2/3"},
      // Compatible servers that report "stop" after calling a tool.
      {R"({"content":null,"tool_calls":[{"id":"a","function":{"name":"f","arguments":{"x":1}}}]})",
       R"("stop")", R"(content=|reasoning=|finish=tool_calls|usage=1/2/3|call(a,f,{"x":1}))"},
  };
  for (const auto& c : cases) {
    const std::string body = std::string(R"({"choices":[{"index":0,"message":)") + c.message +
                             R"(,"finish_reason":)" + c.finish +
                             R"(}],"usage":{"prompt_tokens":1,"completion_tokens":2}})";
    auto result = protocol_->ParseChat(Response(200, body));
    ASSERT_TRUE(result) << body << ": " << result.error().message;
    EXPECT_EQ(Describe(*result), c.expected) << body;
  }
}

TEST_F(OpenAiTest, MalformedBodiesFailAsUpstream) {
  for (const char* body :
       {"", "{", R"({"choices":[{"message":{"content":"Hi")", "[]", "null", R"({"choices":[]})",
        R"({"choices":null})", R"({"choices":[{"message":"text"}]})",
        R"({"choices":[{"message":{"tool_calls":[{"id":"x"}]}}]})"}) {
    auto result = protocol_->ParseChat(Response(200, body));
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().code, ErrorCode::kUpstreamFailed) << body;
  }
}

TEST_F(OpenAiTest, ErrorObjectInA200IsAnError) {
  // LM Studio on an unknown path.
  auto result = protocol_->ParseChat(
      Response(200, R"j({"error":"Unexpected endpoint or method. (POST /chat/completions)"})j"));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(result.error().message.find("Unexpected endpoint"), std::string::npos);
}

TEST_F(OpenAiTest, NullErrorBesideAnAnswerIsNoError) {
  auto result = protocol_->ParseChat(Response(
      200, R"({"error":null,"choices":[{"message":{"content":"Hi"},"finish_reason":"stop"}]})"));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->content, "Hi");
}

constexpr std::string_view kOpenAiTextStream =
    R"(data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}

: OPENROUTER PROCESSING

data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"lo","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"xyz"}

data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}

data: [DONE]

)";

TEST_F(OpenAiTest, StreamsTextAndUsage) {
  auto outcome = StreamAllWays(*protocol_, kOpenAiTextStream);
  EXPECT_EQ(outcome.Summary(), "[Hel][lo] ok:content=Hello|reasoning=|finish=stop|usage=9/2/11");
}

TEST_F(OpenAiTest, StreamWithCrLfLineEndsAndReasoning) {
  const std::string body =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think \"}}]}\r\n\r\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"more\"}}]}\r\n\r\n"
      "data: "
      "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"A\"},\"finish_reason\":\"length\"}]}"
      "\r\n\r\n"
      // vLLM's usage chunk says choices:null.
      "data: {\"choices\":null,\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\r\n\r\n"
      "data: [DONE]\r\n\r\n";
  auto outcome = StreamAllWays(*protocol_, body);
  EXPECT_EQ(outcome.Summary(), "[A] ok:content=A|reasoning=think more|finish=length|usage=3/1/4");
}

TEST_F(OpenAiTest, StreamAssemblesParallelToolCallsFromFragments) {
  constexpr std::string_view body =
      R"(data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}

data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\":\"UTC\"}"}}]},"finish_reason":null}]}

data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Tokyo\"}"}}]},"finish_reason":null}]}

data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

)";
  auto outcome = StreamAllWays(*protocol_, body);
  EXPECT_EQ(
      outcome.Summary(),
      R"( ok:content=|reasoning=|finish=tool_calls|usage=0/0/0|call(call_1,get_weather,{"city":"Tokyo"})|call(call_2,get_time,{"tz":"UTC"}))");
}

TEST_F(OpenAiTest, StreamDoneWithoutFinalBlankLineIsComplete) {
  auto outcome = StreamAllWays(*protocol_,
                               "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},"
                               "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]");
  EXPECT_EQ(outcome.Summary(), "[x] ok:content=x|reasoning=|finish=stop|usage=0/0/0");
}

TEST_F(OpenAiTest, StreamEndingEarlyFails) {
  const std::string body(kOpenAiTextStream.substr(0, kOpenAiTextStream.find("data: [DONE]")));
  auto outcome = StreamAllWays(*protocol_, body);
  ASSERT_FALSE(outcome.result);
  EXPECT_EQ(outcome.result.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(outcome.result.error().message, "stream ended early");
  EXPECT_EQ(outcome.deltas, (std::vector<std::string>{"Hel", "lo"}));
}

TEST_F(OpenAiTest, StreamInBandErrors) {
  struct Case {
    const char* event;
    ErrorCode code;
    const char* message;
  };
  const Case cases[] = {
      {R"({"error":{"message":"Upstream model down","code":502}})", ErrorCode::kUpstreamFailed,
       "provider stream error: Upstream model down"},
      {R"({"error":{"message":"Rate limited","type":"requests","code":"rate_limit_exceeded"}})",
       ErrorCode::kUpstreamRateLimited, "provider stream error: Rate limited"},
      {R"({"error":{"message":"No provider","code":429}})", ErrorCode::kUpstreamRateLimited,
       "provider stream error: No provider"},
      {R"({"error":"boom"})", ErrorCode::kUpstreamFailed, "provider stream error: boom"},
      {R"({"choices":[{"delta":)", ErrorCode::kUpstreamFailed, nullptr},
  };
  for (const auto& c : cases) {
    const std::string body =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: " +
        std::string(c.event) +
        "\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"}}]}\n\n";
    auto outcome = StreamAllWays(*protocol_, body);
    ASSERT_TRUE(outcome.feed_error) << c.event;
    EXPECT_EQ(outcome.feed_error->code, c.code) << c.event;
    ASSERT_FALSE(outcome.result) << c.event;
    EXPECT_EQ(outcome.result.error().code, c.code) << c.event;
    if (c.message != nullptr) {
      EXPECT_EQ(outcome.result.error().message, c.message);
    }
    EXPECT_EQ(outcome.deltas, std::vector<std::string>{"Hi"}) << c.event;
  }
}

TEST_F(OpenAiTest, EmptyStreamFails) {
  auto outcome = StreamAllWays(*protocol_, "");
  ASSERT_FALSE(outcome.result);
  EXPECT_EQ(outcome.result.error().code, ErrorCode::kUpstreamFailed);
}

TEST_F(OpenAiTest, BuildsEmbeddings) {
  domain::EmbeddingRequest request{
      "text-embedding-3-small", {"a", "b"}, Obj(R"({"dimensions":8})")};
  auto http = protocol_->BuildEmbedding("https://api.openai.com/v1", "sk-test", request);
  ASSERT_TRUE(http);
  EXPECT_EQ(http->url, "https://api.openai.com/v1/embeddings");
  EXPECT_EQ(HeaderOf(*http, "Authorization"), "Bearer sk-test");
  EXPECT_EQ(http->body,
            R"({"model":"text-embedding-3-small","input":["a","b"],"encoding_format":"float",)"
            R"("dimensions":8})");

  request.inputs.clear();
  auto empty = protocol_->BuildEmbedding("https://x/v1", "k", request);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(OpenAiTest, ParsesEmbeddingsInIndexOrderFloatAndBase64) {
  auto result = protocol_->ParseEmbedding(Response(200, R"({"object":"list","model":"m",
   "data":[{"object":"embedding","index":1,"embedding":"AACAPwAAAEA="},
           {"object":"embedding","index":0,"embedding":[0.5,-0.25,1]}],
   "usage":{"prompt_tokens":8,"total_tokens":8}})"));
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->vectors.size(), 2u);
  EXPECT_EQ(result->vectors[0], (std::vector<float>{0.5f, -0.25f, 1.0f}));
  EXPECT_EQ(result->vectors[1], (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(result->usage.prompt_tokens, 8);
  EXPECT_EQ(result->usage.total_tokens, 8);
}

TEST_F(OpenAiTest, MalformedEmbeddingsFail) {
  for (const char* body : {"{", R"({"data":[{"index":0}]})", R"({"data":[{"embedding":"A*=="}]})",
                           R"({"data":[{"embedding":"AACA"}]})",
                           R"({"data":[{"embedding":["x"]}]})", R"({"object":"list"})"}) {
    auto result = protocol_->ParseEmbedding(Response(200, body));
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().code, ErrorCode::kUpstreamFailed) << body;
  }
}

struct ErrorCase {
  int status;
  const char* body;
  ErrorCode code;
  const char* message;
};

void ExpectClassified(const WireProtocol& protocol, const ErrorCase& c) {
  const auto error = protocol.ClassifyError(Response(c.status, c.body));
  EXPECT_EQ(util::ErrorCodeName(error.code), std::string(util::ErrorCodeName(c.code)))
      << c.status << " " << c.body;
  EXPECT_EQ(error.message, c.message) << c.status << " " << c.body;
}

TEST_F(OpenAiTest, ClassifiesErrors) {
  const ErrorCase cases[] = {
      {401,
       R"({"error":{"message":"Incorrect API key provided: sk-proj-abc1*****************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})",
       ErrorCode::kUpstreamAuth,
       "provider answered 401: Incorrect API key provided: [redacted]. You can find your API key "
       "at https://platform.openai.com/account/api-keys."},
      {403,
       R"({"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","param":null,"code":"unsupported_country_region_territory"}})",
       ErrorCode::kUpstreamAuth,
       "provider answered 403: Country, region, or territory not supported"},
      {404,
       R"({"error":{"message":"The model `x` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}})",
       ErrorCode::kUpstreamNotFound,
       "provider answered 404: The model `x` does not exist or you do not have access to it."},
      {400,
       R"({"error":{"message":"no such model","type":"invalid_request_error","code":"model_not_found"}})",
       ErrorCode::kUpstreamNotFound, "provider answered 400: no such model"},
      {429,
       R"({"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}})",
       ErrorCode::kUpstreamRateLimited, "provider answered 429: Rate limit reached"},
      {429,
       R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})",
       ErrorCode::kUpstreamRateLimited, "provider answered 429: You exceeded your current quota"},
      {402,
       R"({"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}})",
       ErrorCode::kUpstreamRateLimited, "provider answered 402: Insufficient Balance"},
      {400,
       R"({"error":{"message":"This model's maximum context length is 8 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})",
       ErrorCode::kUpstreamFailed,
       "provider answered 400: This model's maximum context length is 8 tokens."},
      {500,
       R"({"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}})",
       ErrorCode::kUpstreamFailed, "provider answered 500: The server had an error"},
      {503,
       R"({"error":{"message":"engine overloaded","type":"service_unavailable_error","code":"slow_down"}})",
       ErrorCode::kUpstreamFailed, "provider answered 503: engine overloaded"},
      // vLLM (older): un-nested.
      {400,
       R"({"object":"error","message":"bad field","type":"BadRequestError","param":null,"code":400})",
       ErrorCode::kUpstreamFailed, "provider answered 400: bad field"},
      // LM Studio: a bare string.
      {404, R"({"error":"model not loaded"})", ErrorCode::kUpstreamNotFound,
       "provider answered 404: model not loaded"},
      // Gemini compat: array-wrapped, integer code, Google status strings.
      {400,
       R"([{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}])",
       ErrorCode::kUpstreamFailed, "provider answered 400: Invalid JSON payload received."},
      {400,
       R"([{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}])",
       ErrorCode::kUpstreamAuth,
       "provider answered 400: API key not valid. Please pass a valid API key."},
      {429,
       R"([{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}])",
       ErrorCode::kUpstreamRateLimited, "provider answered 429: Resource exhausted"},
      // OpenRouter.
      {402, R"({"error":{"code":402,"message":"Insufficient credits"}})",
       ErrorCode::kUpstreamRateLimited, "provider answered 402: Insufficient credits"},
      // Not JSON at all: a proxy page, an empty body.
      {502, "<html><body>Bad Gateway</body></html>\n", ErrorCode::kUpstreamFailed,
       "provider answered 502: <html><body>Bad Gateway</body></html>"},
      {500, "", ErrorCode::kUpstreamFailed, "provider answered 500: no error message"},
      {500, R"({"error":{"message":)", ErrorCode::kUpstreamFailed,
       R"(provider answered 500: {"error":{"message":)"},
  };
  for (const auto& c : cases) ExpectClassified(*protocol_, c);
}

TEST_F(OpenAiTest, ErrorTextIsTruncatedOnACharacterBoundary) {
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "é";  // two bytes each
  const auto error =
      protocol_->ClassifyError(Response(500, R"({"error":{"message":")" + long_text + R"("}})"));
  const std::string prefix = "provider answered 500: ";
  ASSERT_EQ(error.message.substr(0, prefix.size()), prefix);
  EXPECT_EQ(error.message.size() - prefix.size(), 300u);
  EXPECT_TRUE(util::ParseJson(util::SerializeJson(Json(error.message))));
}

TEST(ProtocolSupportTest, SafeProviderTextRedactsKeyShapes) {
  EXPECT_EQ(SafeProviderText("bad key sk-ant-api03-abcdefghijklmnop used"),
            "bad key [redacted] used");
  EXPECT_EQ(SafeProviderText("key AIzaSyA1234567890abcdefghij invalid"), "key [redacted] invalid");
  EXPECT_EQ(SafeProviderText("token 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"), "token [redacted]");
  EXPECT_EQ(SafeProviderText("model 'llama3.2:latest' not found\nforged"),
            "model 'llama3.2:latest' not found forged");
}

TEST(ProtocolSupportTest, DataUrlsAndBase64) {
  auto data = ParseBase64DataUrl("data:image/jpeg;base64,/9j/4AAQ");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->media_type, "image/jpeg");
  EXPECT_EQ(data->data, "/9j/4AAQ");
  EXPECT_FALSE(ParseBase64DataUrl("data:text/plain,hello"));
  EXPECT_FALSE(ParseBase64DataUrl("https://x/a.png"));
  EXPECT_EQ(DecodeBase64("aGVsbG8"), "hello");
  EXPECT_EQ(DecodeBase64("aGVsbG8="), "hello");
  EXPECT_FALSE(DecodeBase64("aGV=sbG8"));
}

// Anthropic -------------------------------------------------------------------------------------

class AnthropicTest : public ::testing::Test {
 protected:
  std::unique_ptr<WireProtocol> protocol_ = MakeAnthropicProtocol();
};

TEST_F(AnthropicTest, BuildsRequestOfTheReference) {
  // llm.md 2.3, with the system text split over two messages.
  ChatRequest request;
  request.model = "claude-x";
  request.messages = {
      Msg("system", {Text("Be brief.")}), Msg("system", {Text("Use metric units.")}),
      Msg("user", {Image("data:image/png;base64,iVBOR..."), Image("https://example.com/a.jpg"),
                   Text("Weather where this photo was taken?")}),
      AssistantCalls("Checking.", {ToolCall{"toolu_01", "get_weather", R"({"city": "Tokyo"})"}}),
      ToolResult("toolu_01", "21 C, clear")};
  request.tools = {WeatherTool()};
  request.extra_args =
      Obj(R"({"max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":512}})");
  auto http = protocol_->BuildChat("https://api.anthropic.com", "sk-ant-test", request);
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(http->url, "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(HeaderOf(*http, "x-api-key"), "sk-ant-test");
  EXPECT_EQ(HeaderOf(*http, "anthropic-version"), "2023-06-01");
  EXPECT_EQ(HeaderOf(*http, "content-type"), "application/json");
  EXPECT_EQ(HeaderOf(*http, "Authorization"), "<absent>");
  EXPECT_EQ(J(http->body), J(R"({"model":"claude-x","max_tokens":1024,
 "system":"Be brief.\n\nUse metric units.","stream":false,
 "thinking":{"type":"enabled","budget_tokens":512},
 "tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],
 "messages":[
  {"role":"user","content":[
     {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR..."}},
     {"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}},
     {"type":"text","text":"Weather where this photo was taken?"}]},
  {"role":"assistant","content":[
     {"type":"text","text":"Checking."},
     {"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Tokyo"}}]},
  {"role":"user","content":[
     {"type":"tool_result","tool_use_id":"toolu_01","content":"21 C, clear"}]}]})"));
}

TEST_F(AnthropicTest, DefaultsMaxTokensAndMergesConsecutiveToolResults) {
  ChatRequest request;
  request.model = "claude-x";
  request.stream = true;
  request.messages = {
      Msg("user", {Text("Weather and time?")}),
      AssistantCalls(
          "", {ToolCall{"t1", "get_weather", ""}, ToolCall{"t2", "get_time", R"({"tz":"UTC"})"}}),
      ToolResult("t1", "21 C"), ToolResult("t2", "12:00"), Msg("user", {Text("Thanks")})};
  auto http = protocol_->BuildChat("https://api.anthropic.com", "k", request);
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(http->body, R"({"model":"claude-x","max_tokens":4096,"messages":[)"
                        R"({"role":"user","content":"Weather and time?"},)"
                        R"({"role":"assistant","content":[)"
                        R"({"type":"tool_use","id":"t1","name":"get_weather","input":{}},)"
                        R"({"type":"tool_use","id":"t2","name":"get_time","input":{"tz":"UTC"}}]},)"
                        R"({"role":"user","content":[)"
                        R"({"type":"tool_result","tool_use_id":"t1","content":"21 C"},)"
                        R"({"type":"tool_result","tool_use_id":"t2","content":"12:00"}]},)"
                        R"({"role":"user","content":"Thanks"}],"stream":true})");
}

TEST_F(AnthropicTest, RejectsRequestsItCannotExpress) {
  struct Case {
    const char* name;
    ChatMessage message;
  };
  const Case cases[] = {
      {"unknown role", Msg("developer", {Text("x")})},
      {"tool without id", ToolResult("", "x")},
      {"arguments not an object", AssistantCalls("", {ToolCall{"t", "f", "[1,2]"}})},
      {"arguments not JSON", AssistantCalls("", {ToolCall{"t", "f", "{city"}})},
      {"image neither data nor http", Msg("user", {Image("file:///etc/passwd")})},
      {"non-base64 data url", Msg("user", {Image("data:image/png,abc")})},
      {"image in system", Msg("system", {Image("https://x/a.png")})},
  };
  for (const auto& c : cases) {
    ChatRequest request;
    request.model = "m";
    request.messages = {c.message};
    auto http = protocol_->BuildChat("https://api.anthropic.com", "k", request);
    ASSERT_FALSE(http) << c.name;
    EXPECT_EQ(http.error().code, ErrorCode::kInvalidArgument) << c.name;
  }
}

TEST_F(AnthropicTest, ParsesResponse) {
  // llm.md 2.4, plus a thinking block and cache counts.
  auto result = protocol_->ParseChat(
      Response(200, R"({"id":"msg_01","type":"message","role":"assistant","model":"claude-x",
 "content":[{"type":"thinking","thinking":"User wants weather.","signature":"abc"},
            {"type":"text","text":"Checking."},
            {"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Tokyo"}}],
 "stop_reason":"tool_use","stop_sequence":null,
 "usage":{"input_tokens":412,"output_tokens":57,"cache_creation_input_tokens":8,"cache_read_input_tokens":2}})"));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(
      Describe(*result),
      R"(content=Checking.|reasoning=User wants weather.|finish=tool_calls|usage=422/57/479|call(toolu_01,get_weather,{"city":"Tokyo"}))");
}

TEST_F(AnthropicTest, NormalizesStopReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {"end_turn", "stop"},       {"stop_sequence", "stop"},     {"max_tokens", "length"},
      {"tool_use", "tool_calls"}, {"refusal", "content_filter"}, {"pause_turn", "other"},
  };
  for (const auto& [wire, normalized] : cases) {
    auto result = protocol_->ParseChat(
        Response(200, std::string(R"({"content":[{"type":"text","text":"x"}],"stop_reason":")") +
                          wire + R"(","usage":{"input_tokens":1,"output_tokens":1}})"));
    ASSERT_TRUE(result) << wire;
    EXPECT_EQ(result->finish_reason, normalized) << wire;
  }
}

TEST_F(AnthropicTest, MalformedBodiesFailAsUpstream) {
  for (const char* body : {"", "{", R"({"content":[{"type":"text","text":"x")", "[]",
                           R"({"type":"message"})", R"({"content":"text"})"}) {
    auto result = protocol_->ParseChat(Response(200, body));
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().code, ErrorCode::kUpstreamFailed) << body;
  }
}

constexpr std::string_view kAnthropicStream = R"(event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type":"ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"To"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"kyo\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":57}}

event: message_stop
data: {"type":"message_stop"}

)";

TEST_F(AnthropicTest, StreamsTextAndToolUse) {
  auto outcome = StreamAllWays(*protocol_, kAnthropicStream);
  // The tool input is compacted, so it reads exactly as in the non-streamed answer.
  EXPECT_EQ(
      outcome.Summary(),
      R"([Checking.] ok:content=Checking.|reasoning=|finish=tool_calls|usage=25/57/82|call(toolu_01,get_weather,{"city":"Tokyo"}))");
}

TEST_F(AnthropicTest, StreamsThinkingParallelToolsAndToolWithoutInput) {
  constexpr std::string_view body = R"(event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Two "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"tools."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"now","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t2","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Oslo\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: some_future_event
data: {"type":"some_future_event"}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}

event: message_delta
data: {"type":"message_delta","delta":{},"usage":{"output_tokens":40}}

event: message_stop
data: {"type":"message_stop"}
)";
  auto outcome = StreamAllWays(*protocol_, body);
  EXPECT_EQ(
      outcome.Summary(),
      R"( ok:content=|reasoning=Two tools.|finish=tool_calls|usage=15/40/55|call(t1,now,{})|call(t2,get_weather,{"city":"Oslo"}))");
}

TEST_F(AnthropicTest, StreamErrorsAndEarlyEnd) {
  const std::string head(
      kAnthropicStream.substr(0, kAnthropicStream.find("event: content_block_stop")));
  struct Case {
    std::string tail;
    ErrorCode code;
    const char* message;
  };
  const Case cases[] = {
      {"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
       "\"message\":\"Overloaded\"}}\n\n",
       ErrorCode::kUpstreamRateLimited, "provider stream error: Overloaded"},
      {"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
       "\"message\":\"Internal server error\"}}\n\n",
       ErrorCode::kUpstreamFailed, "provider stream error: Internal server error"},
      {"", ErrorCode::kUpstreamFailed, "stream ended early"},
      {"event: content_block_delta\ndata: {\"type\":\"content_", ErrorCode::kUpstreamFailed,
       nullptr},
  };
  for (const auto& c : cases) {
    auto outcome = StreamAllWays(*protocol_, head + c.tail);
    ASSERT_FALSE(outcome.result) << c.tail;
    EXPECT_EQ(outcome.result.error().code, c.code) << c.tail;
    if (c.message != nullptr) {
      EXPECT_EQ(outcome.result.error().message, c.message);
    }
    EXPECT_EQ(outcome.deltas, std::vector<std::string>{"Checking."});
  }
}

TEST_F(AnthropicTest, HasNoEmbeddings) {
  auto http = protocol_->BuildEmbedding("https://api.anthropic.com", "k",
                                        domain::EmbeddingRequest{"m", {"a"}, {}});
  ASSERT_FALSE(http);
  EXPECT_EQ(http.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(http.error().message, "anthropic-messages does not offer embeddings");
}

TEST_F(AnthropicTest, ClassifiesErrors) {
  const ErrorCase cases[] = {
      {401,
       R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"})",
       ErrorCode::kUpstreamAuth, "provider answered 401: invalid x-api-key"},
      {403, R"({"type":"error","error":{"type":"permission_error","message":"no access"}})",
       ErrorCode::kUpstreamAuth, "provider answered 403: no access"},
      {404, R"({"type":"error","error":{"type":"not_found_error","message":"model: claude-foo"}})",
       ErrorCode::kUpstreamNotFound, "provider answered 404: model: claude-foo"},
      {429,
       R"({"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}})",
       ErrorCode::kUpstreamRateLimited,
       "provider answered 429: Number of request tokens has exceeded your per-minute rate limit"},
      {529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
       ErrorCode::kUpstreamRateLimited, "provider answered 529: Overloaded"},
      {400,
       R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}})",
       ErrorCode::kUpstreamFailed, "provider answered 400: max_tokens: Field required"},
      {500, R"({"type":"error","error":{"type":"api_error","message":"Internal server error"}})",
       ErrorCode::kUpstreamFailed, "provider answered 500: Internal server error"},
      {413, "<html>Request Entity Too Large</html>", ErrorCode::kUpstreamFailed,
       "provider answered 413: <html>Request Entity Too Large</html>"},
  };
  for (const auto& c : cases) ExpectClassified(*protocol_, c);
}

// Ollama ----------------------------------------------------------------------------------------

class OllamaTest : public ::testing::Test {
 protected:
  std::unique_ptr<WireProtocol> protocol_ = MakeOllamaProtocol();
};

TEST_F(OllamaTest, BuildsChatWithExplicitStreamAndOptions) {
  ChatRequest request;
  request.model = "llama3.2";
  request.messages = {Msg("system", {Text("Be brief.")}),
                      Msg("user", {Text("Why is the sky blue?")})};
  request.extra_args = Obj(R"({"options":{"temperature":0.2,"num_ctx":8192},"keep_alive":"10m"})");
  auto http = protocol_->BuildChat("http://127.0.0.1:11434", "", request);
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(http->url, "http://127.0.0.1:11434/api/chat");
  EXPECT_EQ(HeaderOf(*http, "Authorization"), "<absent>");
  EXPECT_EQ(HeaderOf(*http, "Content-Type"), "application/json");
  EXPECT_EQ(http->body,
            R"({"model":"llama3.2","messages":[{"role":"system","content":"Be brief."},)"
            R"({"role":"user","content":"Why is the sky blue?"}],"stream":false,)"
            R"("options":{"temperature":0.2,"num_ctx":8192},"keep_alive":"10m"})");

  auto cloud = protocol_->BuildChat("https://ollama.com", "key", request);
  ASSERT_TRUE(cloud);
  EXPECT_EQ(HeaderOf(*cloud, "Authorization"), "Bearer key");
}

TEST_F(OllamaTest, BuildsImagesToolCallsAndToolResults) {
  ChatRequest request;
  request.model = "llava";
  request.stream = true;
  request.messages = {
      Msg("user", {Text("What is this?"), Image("data:image/png;base64,iVBOR")}),
      AssistantCalls("", {ToolCall{"call_x", "get_weather", R"({"city":"Tokyo"})"}}),
      ToolResult("call_x", "21 C")};
  request.tools = {WeatherTool()};
  auto http = protocol_->BuildChat("http://127.0.0.1:11434", "", request);
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(J(http->body), J(R"({"model":"llava","stream":true,"messages":[
    {"role":"user","content":"What is this?","images":["iVBOR"]},
    {"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"name":"get_weather","arguments":{"city":"Tokyo"}}}]},
    {"role":"tool","content":"21 C","tool_name":"get_weather","tool_call_id":"call_x"}],
    "tools":[{"type":"function","function":{"name":"get_weather","parameters":
      {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]})"));
}

TEST_F(OllamaTest, RejectsRequestsItCannotExpress) {
  struct Case {
    const char* name;
    ChatMessage message;
    const char* message_text;
  };
  const Case cases[] = {
      {"linked image", Msg("user", {Image("https://example.com/a.jpg")}),
       "ollama needs inline images (base64 data: URLs), not links"},
      {"unknown role", Msg("developer", {Text("x")}),
       "ollama-chat has no message role 'developer'"},
      {"arguments not an object", AssistantCalls("", {ToolCall{"t", "f", "\"x\""}}),
       "arguments of tool call 'f' are not a JSON object"},
  };
  for (const auto& c : cases) {
    ChatRequest request;
    request.model = "m";
    request.messages = {c.message};
    auto http = protocol_->BuildChat("http://127.0.0.1:11434", "", request);
    ASSERT_FALSE(http) << c.name;
    EXPECT_EQ(http.error().code, ErrorCode::kInvalidArgument) << c.name;
    EXPECT_EQ(http.error().message, c.message_text);
  }
}

TEST_F(OllamaTest, ParsesWholeAnswer) {
  auto result =
      protocol_->ParseChat(Response(200, R"({"model":"qwen3","created_at":"2025-07-07T20:22:19.31Z",
    "message":{"role":"assistant","content":"","thinking":"Need weather.","tool_calls":[
      {"function":{"name":"get_weather","arguments":{"city":"Tokyo"}}},
      {"id":"call_b","function":{"index":1,"name":"get_time","arguments":{}}}]},
    "done":true,"done_reason":"stop","total_duration":4883583458,"prompt_eval_count":26,"eval_count":282})"));
  ASSERT_TRUE(result) << result.error().message;
  // The id-less call (older servers) gets one from its position.
  EXPECT_EQ(
      Describe(*result),
      R"(content=|reasoning=Need weather.|finish=tool_calls|usage=26/282/308|call(call_0,get_weather,{"city":"Tokyo"})|call(call_b,get_time,{}))");

  auto plain = protocol_->ParseChat(Response(
      200,
      R"({"message":{"role":"assistant","content":"Blue."},"done":true,"done_reason":"length"})"));
  ASSERT_TRUE(plain);
  EXPECT_EQ(Describe(*plain), "content=Blue.|reasoning=|finish=length|usage=0/0/0");
}

TEST_F(OllamaTest, MalformedBodiesFailAsUpstream) {
  for (const char* body : {"", "{", R"({"message":{"content":"x")", "[]", R"({"done":true})",
                           R"({"error":"the model failed to generate a response"})"}) {
    auto result = protocol_->ParseChat(Response(200, body));
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().code, ErrorCode::kUpstreamFailed) << body;
  }
}

constexpr std::string_view kOllamaStream =
    R"({"model":"llama3.2","created_at":"2025-07-07T20:22:19.18Z","message":{"role":"assistant","content":"The"},"done":false}
{"model":"llama3.2","created_at":"2025-07-07T20:22:19.19Z","message":{"role":"assistant","content":" sky","thinking":""},"done":false}
{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"index":0,"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}
{"model":"llama3.2","created_at":"2025-07-07T20:22:19.31Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}
)";

TEST_F(OllamaTest, StreamsNdjson) {
  auto outcome = StreamAllWays(*protocol_, kOllamaStream);
  EXPECT_EQ(
      outcome.Summary(),
      R"([The][ sky] ok:content=The sky|reasoning=|finish=tool_calls|usage=26/282/308|call(call_x,get_weather,{"city":"Tokyo"}))");
}

TEST_F(OllamaTest, StreamDoneLineWithoutNewlineAndThinking) {
  auto outcome =
      StreamAllWays(*protocol_,
                    "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Hm.\"},"
                    "\"done\":false}\r\n"
                    "{\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n"
                    "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_"
                    "reason\":\"load\"}");
  EXPECT_EQ(outcome.Summary(), "[Hi] ok:content=Hi|reasoning=Hm.|finish=other|usage=0/0/0");
}

TEST_F(OllamaTest, StreamErrorsAndEarlyEnd) {
  const std::string head =
      "{\"message\":{\"role\":\"assistant\",\"content\":\"The\"},\"done\":false}\n";
  struct Case {
    std::string tail;
    const char* message;
  };
  const Case cases[] = {
      {"{\"error\":\"the model failed to generate a response\"}\n",
       "provider stream error: the model failed to generate a response"},
      {"", "stream ended early"},
      {"{\"message\":{\"content\":\"x\"", nullptr},
      {"not json\n", nullptr},
  };
  for (const auto& c : cases) {
    auto outcome = StreamAllWays(*protocol_, head + c.tail);
    ASSERT_FALSE(outcome.result) << c.tail;
    EXPECT_EQ(outcome.result.error().code, ErrorCode::kUpstreamFailed) << c.tail;
    if (c.message != nullptr) {
      EXPECT_EQ(outcome.result.error().message, c.message);
    }
    EXPECT_EQ(outcome.deltas, std::vector<std::string>{"The"});
  }
}

TEST_F(OllamaTest, Embeddings) {
  domain::EmbeddingRequest request{
      "all-minilm", {"Why is the sky blue?", "Why is grass green?"}, Obj(R"({"truncate":false})")};
  auto http = protocol_->BuildEmbedding("http://127.0.0.1:11434", "", request);
  ASSERT_TRUE(http);
  EXPECT_EQ(http->url, "http://127.0.0.1:11434/api/embed");
  EXPECT_EQ(http->body,
            R"({"model":"all-minilm","input":["Why is the sky blue?","Why is grass green?"],)"
            R"("truncate":false})");

  auto result = protocol_->ParseEmbedding(Response(200, R"({"model":"all-minilm",
    "embeddings":[[0.5,-0.25],[1,0]],"total_duration":14143917,"load_duration":1019500,"prompt_eval_count":8})"));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->vectors, (std::vector<std::vector<float>>{{0.5f, -0.25f}, {1.0f, 0.0f}}));
  EXPECT_EQ(result->usage.prompt_tokens, 8);

  for (const char* body : {"{", R"({"embeddings":[["x"]]})", R"({"embeddings":[1]})", "{}"}) {
    auto bad = protocol_->ParseEmbedding(Response(200, body));
    ASSERT_FALSE(bad) << body;
    EXPECT_EQ(bad.error().code, ErrorCode::kUpstreamFailed) << body;
  }
}

TEST_F(OllamaTest, ClassifiesErrors) {
  const ErrorCase cases[] = {
      {404, R"({"error":"model 'x' not found"})", ErrorCode::kUpstreamNotFound,
       "provider answered 404: model 'x' not found"},
      {401, R"({"error":"unauthorized"})", ErrorCode::kUpstreamAuth,
       "provider answered 401: unauthorized"},
      {403, R"({"error":"forbidden"})", ErrorCode::kUpstreamAuth,
       "provider answered 403: forbidden"},
      {429, R"({"error":"too many requests"})", ErrorCode::kUpstreamRateLimited,
       "provider answered 429: too many requests"},
      {503, R"({"error":"server busy, please try again.  maximum pending requests exceeded"})",
       ErrorCode::kUpstreamRateLimited,
       "provider answered 503: server busy, please try again.  maximum pending requests exceeded"},
      {400, R"({"error":"registry.ollama.ai/library/x:latest does not support tools"})",
       ErrorCode::kUpstreamFailed,
       "provider answered 400: registry.ollama.ai/library/x:latest does not support tools"},
      {500, R"({"error":"the model failed to generate a response"})", ErrorCode::kUpstreamFailed,
       "provider answered 500: the model failed to generate a response"},
      {502, "Bad Gateway", ErrorCode::kUpstreamFailed, "provider answered 502: Bad Gateway"},
  };
  for (const auto& c : cases) ExpectClassified(*protocol_, c);
}

}  // namespace
}  // namespace sb::llm
