// The fixture of the runner tests: the fake services (tests/fakes/fake_hosted_agents.py) as a
// child process, an io_context thread with a real HttpClient, and one of each runner.
#pragma once

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
#include <optional>
#include <thread>

#include "net/http_client.hpp"
#include "runners/coze_runner.hpp"
#include "runners/dashscope_runner.hpp"
#include "runners/dify_runner.hpp"
#include "runners/langflow_runner.hpp"
#include "runners/n8n_runner.hpp"
#include "runners/tbox_runner.hpp"
#include "util/crypto.hpp"

namespace sb::runners::testing {

using pipeline::AgentInput;
using pipeline::AgentReply;
using util::ErrorCode;
using namespace std::chrono_literals;

// The fake services as a child process on a free port.
class FakeAgents {
 public:
  FakeAgents() {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      execlp("python3", "python3", SB_FAKE_AGENTS, "--port", "0", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "FAKE_AGENTS_PORT=%d", &port_) == 1) break;
    }
    stdout_ = f;
  }
  ~FakeAgents() {
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

struct Outcome {
  util::Result<AgentReply> result = util::Fail(ErrorCode::kInternal, "not run");
  std::vector<std::string> deltas;
};

class RunnersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fake_ = new FakeAgents(); }
  static void TearDownTestSuite() {
    delete fake_;
    fake_ = nullptr;
  }

  void SetUp() override {
    ASSERT_GT(fake_->port(), 0) << "fake agents did not start";
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
    client_ = net::MakeHttpClient(io_.get_executor(), {});
    dify_.emplace(io_.get_executor(), client_);
    n8n_.emplace(io_.get_executor(), client_);
    langflow_.emplace(io_.get_executor(), client_);
    coze_.emplace(io_.get_executor(), client_);
    dashscope_.emplace(io_.get_executor(), client_);
    tbox_.emplace(io_.get_executor(), client_);
    Control("POST", "/_control/reset", "{}");
  }

  void TearDown() override {
    work_.reset();
    io_.stop();
    thread_.join();
  }

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

  // Polls until the fake recorded `n` requests (no fixed sleeps: bounded by 5 s).
  void WaitForRequests(std::size_t n) {
    for (int i = 0; i < 500 && Requests().size() < n; ++i) std::this_thread::sleep_for(10ms);
  }

  util::JsonObject DifyConfig(const std::string& app_type, const std::string& key,
                              double timeout = 5) {
    return util::JsonObject{
        {"ai", util::JsonObject{
                   {"runner", util::JsonObject{{"runner", "dify-service-api"}}},
                   {"dify-service-api", util::JsonObject{{"base-url", fake_->base() + "/v1/"},
                                                         {"app-type", app_type},
                                                         {"api-key", key},
                                                         {"timeout", timeout}}}}}};
  }

  util::JsonObject N8nConfig(const std::string& path, util::JsonObject extra = {}) {
    util::JsonObject settings{{"webhook-url", fake_->base() + "/webhook/" + path}, {"timeout", 5}};
    for (const auto& entry : extra) settings[entry.key()] = entry.value();
    return util::JsonObject{
        {"ai", util::JsonObject{{"runner", util::JsonObject{{"runner", "n8n-service-api"}}},
                                {"n8n-service-api", settings}}}};
  }

  AgentInput Input(const std::string& text, const std::string& session = "person_42",
                   std::vector<std::string> images = {}) {
    AgentInput input;
    input.conversation = {pipeline_, bot_, session};
    input.content.push_back({domain::ContentPart::Kind::kText, text, {}});
    for (auto& url : images) {
      input.content.push_back({domain::ContentPart::Kind::kImage, {}, std::move(url)});
    }
    return input;
  }

  // Runs one call and waits for `done` (at most 8 s).
  Outcome Run(pipeline::Runner& runner, const util::JsonObject& config, AgentInput input,
              bool stream = false) {
    auto outcome = std::make_shared<Outcome>();
    auto p = std::make_shared<std::promise<void>>();
    std::function<void(const domain::ChatDelta&)> on_delta;
    if (stream) {
      on_delta = [outcome](const domain::ChatDelta& d) { outcome->deltas.push_back(d.content); };
    }
    runner.Run(config, std::move(input), on_delta, [p, outcome](util::Result<AgentReply> r) {
      outcome->result = std::move(r);
      p->set_value();
    });
    if (p->get_future().wait_for(8s) != std::future_status::ready) {
      ADD_FAILURE() << "the runner did not complete";
      return {};
    }
    return *outcome;
  }

  static std::string Joined(const std::vector<std::string>& pieces) {
    std::string all;
    for (const auto& p : pieces) all += p;
    return all;
  }

  static inline FakeAgents* fake_ = nullptr;
  util::PipelineId pipeline_ = util::PipelineId::Generate();
  util::BotId bot_ = util::BotId::Generate();
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread thread_;
  std::shared_ptr<net::HttpClient> client_;
  std::optional<DifyRunner> dify_;
  std::optional<N8nRunner> n8n_;
  std::optional<LangflowRunner> langflow_;
  std::optional<CozeRunner> coze_;
  std::optional<DashScopeRunner> dashscope_;
  std::optional<TboxRunner> tbox_;
};

inline const boost::json::object& Body(const boost::json::value& request) {
  return request.as_object().at("body").as_object();
}

inline const boost::json::object& Headers(const boost::json::value& request) {
  return request.as_object().at("headers").as_object();
}

}  // namespace sb::runners::testing
