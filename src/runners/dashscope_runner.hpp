// The `dashscope-app-api` runner: calls an Alibaba Cloud Model Studio (Bailian/DashScope)
// application, agent or workflow, through POST {base-url}/apps/{app-id}/completion with
// incremental SSE output, and keeps the application's session_id per chat session.
//   DashScopeRunner dashscope(executor, http);
//   engine.AddRunner("dashscope-app-api", dashscope);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <utility>

#include "net/http_client.hpp"
#include "runners/hosted_runner.hpp"

namespace sb::runners {

// Thread-safe. Run returns at once; `done` runs exactly once on an I/O thread with the answer or:
//   kInvalidArgument      app-type other than agent/workflow, or an app-id a path cannot hold
//   kUpstreamAuth         DashScope refused the key (401/403, InvalidApiKey)
//   kUpstreamNotFound     404 (no such application)
//   kUpstreamRateLimited  429 (Throttling)
//   kUpstreamTimeout      no complete answer within `timeout` seconds (default 120)
//   kUpstreamFailed       any other error, quoted with its code, or a stream that ends early
//   kUpstreamUnreachable  connection failures, as net::HttpClient reports them
//   kCancelled            CancelAll
// No error message carries the key. `on_delta` (may be null) gets the answer's pieces.
class DashScopeRunner final : public HostedRunner {
 public:
  DashScopeRunner(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http)
      : HostedRunner("dashscope", std::move(executor), std::move(http)) {}

 private:
  util::Result<CallLauncher::Body> Prepare(const util::JsonObject& pipeline_config,
                                           pipeline::AgentInput input,
                                           OnDelta on_delta) const override;
};

}  // namespace sb::runners
