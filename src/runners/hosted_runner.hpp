// What every external runner (Dify, n8n, Langflow, Coze, DashScope, Tbox) does the same way, so
// that each runner's own file holds only its service's wire protocol: Run reads the settings at
// once and launches the service call as a cancellable coroutine, CancelAll ends the calls in
// flight, Forget drops the service's conversation id of a chat session.
//   class CozeRunner final : public HostedRunner {
//    public:
//     CozeRunner(executor, http) : HostedRunner("coze", std::move(executor), std::move(http)) {}
//    private:
//     util::Result<CallLauncher::Body> Prepare(config, input, on_delta) const override;
//   };
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "net/http_client.hpp"
#include "pipeline/engine.hpp"
#include "runners/runner_kit.hpp"

namespace sb::runners {

// What a call in flight uses; shared with the calls, which may outlive their runner.
struct ServiceState {
  ServiceState(std::shared_ptr<net::HttpClient> client, std::size_t max_sessions)
      : http(std::move(client)), sessions(max_sessions) {}

  std::shared_ptr<net::HttpClient> http;
  SessionIds sessions;  // the service's conversation/session ids by SessionKey
};

// Thread-safe. Run returns at once; `done` runs exactly once: at once with the settings' error,
// else on an I/O thread with the call's outcome (kCancelled after CancelAll).
class HostedRunner : public pipeline::Runner {
 public:
  ~HostedRunner() override = default;
  HostedRunner(const HostedRunner&) = delete;
  HostedRunner& operator=(const HostedRunner&) = delete;

  void Run(const util::JsonObject& pipeline_config, pipeline::AgentInput input,
           std::function<void(const domain::ChatDelta&)> on_delta,
           std::function<void(util::Result<pipeline::AgentReply>)> done) final;
  // Cancels every call in flight (shutdown): each `done` then runs with kCancelled.
  void CancelAll();
  // The chat session's next message starts a new conversation on the service's side.
  void Forget(const domain::ConversationKey& key) final;

 protected:
  using OnDelta = std::function<void(const domain::ChatDelta&)>;

  // `service` names the service in error messages; `max_sessions` bounds the remembered ids.
  HostedRunner(std::string service, boost::asio::any_io_executor executor,
               std::shared_ptr<net::HttpClient> http, std::size_t max_sessions = 10'000);

  // One message: its settings read and checked (an error fails the message before any request),
  // then the coroutine that talks to the service. `on_delta` may be null (nobody streams).
  virtual util::Result<CallLauncher::Body> Prepare(const util::JsonObject& pipeline_config,
                                                   pipeline::AgentInput input,
                                                   OnDelta on_delta) const = 0;

  const std::shared_ptr<ServiceState>& state() const { return state_; }

 private:
  std::string service_;
  std::shared_ptr<ServiceState> state_;
  CallLauncher calls_;
};

}  // namespace sb::runners
