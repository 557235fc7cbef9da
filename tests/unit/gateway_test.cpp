// The LLM gateway end to end over loopback: real HttpClient, real wire protocols, and the fake
// provider of tests/fakes/fake_llm.py (speaking the documented OpenAI, Anthropic and Ollama
// protocols) as the far side. Checks retries, key rotation, classification, streaming and
// cancellation.
#include "llm/gateway.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <thread>

#include "domain/catalogue_loader.hpp"
#include "llm/requester_catalogue.hpp"
#include "net/http_client.hpp"

namespace sb::llm {
namespace {

using util::ErrorCode;
using namespace std::chrono_literals;

// The fake provider as a child process on a free port.
class FakeProvider {
 public:
  FakeProvider() {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      execlp("python3", "python3", SB_FAKE_LLM, "--port", "0", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "FAKE_LLM_PORT=%d", &port_) == 1) break;
    }
    stdout_ = f;
  }
  ~FakeProvider() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_) fclose(stdout_);
  }
  int port() const { return port_; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  FILE* stdout_ = nullptr;
};

class GatewayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fake_ = new FakeProvider(); }
  static void TearDownTestSuite() {
    delete fake_;
    fake_ = nullptr;
  }

  void SetUp() override {
    ASSERT_GT(fake_->port(), 0) << "fake provider did not start";
    requesters_ = *LoadRequesterCatalogue();
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
    client_ = net::MakeHttpClient(io_.get_executor(), {});
    GatewayOptions options;
    options.backoff_base = 10ms;
    options.backoff_max = 50ms;
    options.timeouts.connect = 2s;
    options.timeouts.total = 3s;
    options.timeouts.idle = 1s;
    options.max_response_bytes = 1 << 20;
    gateway_ = std::make_shared<HttpLlmGateway>(io_.get_executor(), client_, requesters_, options);
    Control("POST", "/_control/reset", "{}");
  }

  void TearDown() override {
    work_.reset();
    io_.stop();
    thread_.join();
  }

  // A control request to the fake, through the same client.
  std::string Control(const std::string& method, const std::string& path,
                      const std::string& body = "") {
    net::HttpRequest req;
    req.method = method;
    req.url = fake_->base() + path;
    req.body = body;
    std::promise<std::string> p;
    boost::asio::co_spawn(
        io_,
        [&]() -> boost::asio::awaitable<void> {
          auto r = co_await client_->Send(req);
          p.set_value(r ? r->body : std::string());
        },
        boost::asio::detached);
    return p.get_future().get();
  }

  void Script(const std::string& json) { Control("POST", "/_control/script", json); }

  boost::json::array Requests() {
    return boost::json::parse(Control("GET", "/_control/requests")).as_array();
  }

  domain::ProviderEndpoint OpenAi(std::vector<std::string> keys = {"sk-good-1"}) {
    return {"openai-chat-completions", fake_->base() + "/v1", std::move(keys)};
  }

  static domain::ChatRequest Hello(std::string model, bool stream = false) {
    domain::ChatRequest r;
    r.model = std::move(model);
    r.stream = stream;
    domain::ChatMessage m;
    m.role = "user";
    m.content.push_back({domain::ContentPart::Kind::kText, "hello there", {}});
    r.messages.push_back(m);
    return r;
  }

  util::Result<domain::ChatResult> Chat(const domain::ProviderEndpoint& ep,
                                        domain::ChatRequest request,
                                        std::vector<std::string>* deltas = nullptr) {
    std::promise<util::Result<domain::ChatResult>> p;
    gateway_->Chat(ep, std::move(request),
                   deltas
                       ? std::function<void(const domain::ChatDelta&)>(
                             [deltas](const domain::ChatDelta& d) { deltas->push_back(d.content); })
                       : nullptr,
                   [&p](util::Result<domain::ChatResult> r) { p.set_value(std::move(r)); });
    auto f = p.get_future();
    if (f.wait_for(20s) != std::future_status::ready) {
      ADD_FAILURE() << "chat did not complete";
      return util::Fail(ErrorCode::kInternal, "hung");
    }
    return f.get();
  }

  static inline FakeProvider* fake_ = nullptr;
  domain::Catalogue requesters_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread thread_;
  std::shared_ptr<net::HttpClient> client_;
  std::shared_ptr<HttpLlmGateway> gateway_;
};

TEST_F(GatewayTest, OpenAiChatReachesTheProviderWithModelKeyAndPrompt) {
  auto r = Chat(OpenAi(), Hello("gpt-test"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->content, "echo: hello there");
  auto reqs = Requests();
  ASSERT_EQ(reqs.size(), 1u);
  const auto& req = reqs[0].as_object();
  EXPECT_EQ(req.at("path"), "/v1/chat/completions");
  EXPECT_EQ(req.at("headers").as_object().at("authorization"), "Bearer sk-good-1");
  EXPECT_EQ(req.at("body").as_object().at("model"), "gpt-test");
}

TEST_F(GatewayTest, RateLimitIsRetriedThenSucceeds) {
  Script(R"({"path":"/v1/chat/completions","times":1,"preset":"openai_rate_limit"})");
  auto r = Chat(OpenAi(), Hello("gpt-test"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Requests().size(), 2u);
}

TEST_F(GatewayTest, RefusedKeyRotatesToTheNextOne) {
  auto r = Chat(OpenAi({"sk-bad-1", "sk-good-2"}), Hello("gpt-test"));
  ASSERT_TRUE(r) << r.error().message;
  auto reqs = Requests();
  ASSERT_GE(reqs.size(), 1u);
  EXPECT_EQ(reqs.back().as_object().at("headers").as_object().at("authorization"),
            "Bearer sk-good-2");
}

TEST_F(GatewayTest, BadKeyAloneIsClassifiedAndNotEchoed) {
  auto r = Chat(OpenAi({"sk-bad-secret-value"}), Hello("gpt-test"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_EQ(r.error().message.find("sk-bad-secret-value"), std::string::npos);
  // The only key was refused: asking again with it cannot help.
  EXPECT_EQ(Requests().size(), 1u);
}

TEST_F(GatewayTest, SpentQuotaIsNotRetriedWithTheSameKey) {
  Script(R"({"path":"/v1/chat/completions","times":5,"preset":"openai_quota"})");
  auto r = Chat(OpenAi(), Hello("gpt-test"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamRateLimited);
  EXPECT_EQ(Requests().size(), 1u);
}

TEST_F(GatewayTest, ExtraArgsCannotChangeTheFraming) {
  auto request = Hello("gpt-test");
  request.extra_args = util::ParseJson(R"({"stream":true,"temperature":0.5})")->as_object();
  auto r = Chat(OpenAi(), request);
  ASSERT_TRUE(r) << r.error().message;
  const auto body = Requests().at(0).as_object().at("body").as_object();
  EXPECT_EQ(body.at("stream"), false);
  EXPECT_EQ(body.at("temperature"), 0.5);
}

TEST_F(GatewayTest, UnknownModelIsNotRetried) {
  auto r = Chat(OpenAi(), Hello("no-such-model"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamNotFound);
  EXPECT_EQ(Requests().size(), 1u);
}

TEST_F(GatewayTest, ServerErrorsAreRetriedABoundedNumberOfTimes) {
  Script(R"({"path":"/v1/chat/completions","times":5,"preset":"openai_500"})");
  auto r = Chat(OpenAi(), Hello("gpt-test"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(Requests().size(), 3u);
}

TEST_F(GatewayTest, ConnectionRefusedIsUnreachable) {
  domain::ProviderEndpoint ep{"openai-chat-completions", "http://127.0.0.1:1/v1", {"sk-good"}};
  auto r = Chat(ep, Hello("gpt-test"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamUnreachable);
}

TEST_F(GatewayTest, AProviderThatNeverAnswersTimesOut) {
  Script(R"({"path":"/v1/chat/completions","times":5,"stall":true})");
  const auto start = std::chrono::steady_clock::now();
  auto r = Chat(OpenAi(), Hello("gpt-test"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
}

TEST_F(GatewayTest, MalformedBodyIsOneFailedCall) {
  Script(R"({"path":"/v1/chat/completions","times":1,"status":200,"raw":"{not json"})");
  auto r = Chat(OpenAi(), Hello("gpt-test"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamFailed);
}

TEST_F(GatewayTest, AHugeAnswerCostsOneFailedCallNotMemory) {
  Script(R"({"path":"/v1/chat/completions","times":3,"status":200,"huge_bytes":50000000})");
  auto r = Chat(OpenAi(), Hello("gpt-test"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamFailed);
}

TEST_F(GatewayTest, AStreamCutShortIsAnError) {
  Script(R"({"path":"/v1/chat/completions","times":3,"abort_after_chunks":2})");
  std::vector<std::string> deltas;
  auto r = Chat(OpenAi(), Hello("gpt-test", /*stream=*/true), &deltas);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamFailed);
  // Text already reached the caller, so the call is not repeated.
  EXPECT_EQ(Requests().size(), 1u);
}

TEST_F(GatewayTest, ToolCallsComeBackNormalized) {
  auto request = Hello("gpt-test");
  request.messages.back().content[0].text = "please call tool now";
  request.tools.push_back(
      {"lookup", "finds things",
       util::ParseJson(R"({"type":"object","properties":{"q":{"type":"string"}}})")->as_object()});
  for (const char* requester : {"openai-chat-completions", "anthropic-messages", "ollama-chat"}) {
    SCOPED_TRACE(requester);
    const std::string r_name = requester;
    domain::ProviderEndpoint ep{
        r_name,
        r_name == "openai-chat-completions" ? fake_->base() + "/v1" : fake_->base(),
        {"sk-good-t"}};
    request.model = r_name == "openai-chat-completions" ? "gpt-test"
                    : r_name == "anthropic-messages"    ? "claude-test"
                                                        : "llama-test";
    for (bool stream : {false, true}) {
      request.stream = stream;
      std::vector<std::string> deltas;
      auto r = Chat(ep, request, &deltas);
      ASSERT_TRUE(r) << r.error().message;
      ASSERT_EQ(r->tool_calls.size(), 1u);
      EXPECT_EQ(r->tool_calls[0].name, "lookup");
      EXPECT_EQ(util::ParseJson(r->tool_calls[0].arguments)->as_object().at("q"), "x");
      EXPECT_EQ(r->finish_reason, "tool_calls");
    }
  }
}

TEST_F(GatewayTest, StreamingDeliversPiecesAndTheWholeText) {
  std::vector<std::string> deltas;
  auto r = Chat(OpenAi(), Hello("gpt-test", /*stream=*/true), &deltas);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GE(deltas.size(), 2u);
  std::string joined;
  for (const auto& d : deltas) joined += d;
  EXPECT_EQ(joined, "echo: hello there");
  EXPECT_EQ(r->content, "echo: hello there");
}

TEST_F(GatewayTest, AnthropicAndOllamaSpeakTheirOwnProtocols) {
  auto a = Chat({"anthropic-messages", fake_->base(), {"sk-good-a"}}, Hello("claude-test"));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->content, "echo: hello there");
  std::vector<std::string> pieces;
  auto o = Chat({"ollama-chat", fake_->base(), {}}, Hello("llama-test", /*stream=*/true), &pieces);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->content, "echo: hello there");
  EXPECT_GE(pieces.size(), 2u);
  pieces.clear();
  auto s = Chat({"anthropic-messages", fake_->base(), {"sk-good-a"}},
                Hello("claude-test", /*stream=*/true), &pieces);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->content, "echo: hello there");
  EXPECT_GE(pieces.size(), 2u);
  auto reqs = Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].as_object().at("path"), "/v1/messages");
  EXPECT_EQ(reqs[0].as_object().at("headers").as_object().at("x-api-key"), "sk-good-a");
  EXPECT_EQ(reqs[1].as_object().at("path"), "/api/chat");
}

TEST_F(GatewayTest, EmbeddingsReturnOneVectorPerInput) {
  std::promise<util::Result<domain::EmbeddingResult>> p;
  domain::EmbeddingRequest req;
  req.model = "embed-test";
  req.inputs = {"a", "b"};
  gateway_->Embed(OpenAi(), req, [&p](auto r) { p.set_value(std::move(r)); });
  auto r = p.get_future().get();
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->vectors.size(), 2u);
  EXPECT_EQ(r->vectors[0].size(), 8u);
}

TEST_F(GatewayTest, CancelEndsAStalledCallPromptly) {
  Script(R"({"path":"/v1/chat/completions","times":1,"stall":true})");
  std::promise<util::Result<domain::ChatResult>> p;
  auto handle = gateway_->Chat(OpenAi(), Hello("gpt-test"), nullptr,
                               [&p](auto r) { p.set_value(std::move(r)); });
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  handle->Cancel();
  auto f = p.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  auto r = f.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(GatewayTest, CancelAllEndsEveryCallInFlight) {
  Script(R"({"path":"/v1/chat/completions","times":3,"stall":true})");
  std::vector<std::promise<util::Result<domain::ChatResult>>> promises(3);
  for (auto& p : promises) {
    gateway_->Chat(OpenAi(), Hello("gpt-test"), nullptr,
                   [&p](auto r) { p.set_value(std::move(r)); });
  }
  std::this_thread::sleep_for(200ms);
  gateway_->CancelAll();
  for (auto& p : promises) {
    auto f = p.get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    auto r = f.get();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  }
}

TEST_F(GatewayTest, UnknownOrUnsupportedRequesterIsInvalidArgument) {
  auto r = Chat({"no-such-requester", fake_->base(), {}}, Hello("x"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST(RetryDelay, ExponentialWithJitterAndProviderHint) {
  GatewayOptions o;
  o.backoff_base = 500ms;
  o.backoff_max = 8000ms;
  EXPECT_EQ(RetryDelay(0, o, nullptr, 1.0), 500ms);
  EXPECT_EQ(RetryDelay(0, o, nullptr, 0.0), 250ms);
  EXPECT_EQ(RetryDelay(3, o, nullptr, 1.0), 4000ms);
  EXPECT_EQ(RetryDelay(10, o, nullptr, 1.0), 8000ms);
  net::HttpResponse r;
  r.headers.emplace_back("retry-after", "2");
  EXPECT_EQ(RetryDelay(0, o, &r, 0.0), 2000ms);
  r.headers.emplace_back("retry-after-ms", "150");
  EXPECT_EQ(RetryDelay(0, o, &r, 0.0), 150ms);
  net::HttpResponse huge;
  huge.headers.emplace_back("retry-after", "3600");
  EXPECT_EQ(RetryDelay(0, o, &huge, 0.0), 8000ms);
  for (const char* absurd : {"1e30", "inf", "nan"}) {
    net::HttpResponse odd;
    odd.headers.emplace_back("retry-after", absurd);
    const auto d = RetryDelay(0, o, &odd, 1.0);
    EXPECT_GE(d, 0ms) << absurd;
    EXPECT_LE(d, 8000ms) << absurd;
  }
}

}  // namespace
}  // namespace sb::llm
