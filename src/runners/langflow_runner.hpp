// The `langflow-api` runner: runs a Langflow flow through its "run flow" endpoint
// (POST {base-url}/api/v1/run/{flow-id}), streaming the LLM's tokens when someone wants them.
// Each chat session gets its own Langflow session_id, so the flow's chat memory follows it.
//   LangflowRunner langflow(executor, http);
//   engine.AddRunner("langflow-api", langflow);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <utility>

#include "net/http_client.hpp"
#include "runners/hosted_runner.hpp"

namespace sb::runners {

// Thread-safe. Run returns at once; `done` runs exactly once on an I/O thread with the answer or:
//   kInvalidArgument      no flow-id, a flow-id with characters a path cannot hold, or tweaks
//                         that are not a JSON object
//   kUpstreamAuth         Langflow refused the API key (401/403)
//   kUpstreamNotFound     no such flow
//   kUpstreamRateLimited  429
//   kUpstreamTimeout      no complete answer within `timeout` seconds (default 120)
//   kUpstreamFailed       the flow failed, or its result holds no message
//   kUpstreamUnreachable  connection failures, as net::HttpClient reports them
//   kCancelled            CancelAll
// No error message carries the API key.
class LangflowRunner final : public HostedRunner {
 public:
  LangflowRunner(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http)
      : HostedRunner("langflow", std::move(executor), std::move(http)) {}

 private:
  util::Result<CallLauncher::Body> Prepare(const util::JsonObject& pipeline_config,
                                           pipeline::AgentInput input,
                                           OnDelta on_delta) const override;
};

}  // namespace sb::runners
