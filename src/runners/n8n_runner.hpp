// The `n8n-service-api` runner: posts a message to an n8n webhook trigger, authenticated as the
// node expects (none, basic, HS256 JWT or a custom header), and reads the workflow's answer from
// its JSON, plain-text or streamed (NDJSON) response. Stateless: n8n keeps any memory itself.
//   N8nRunner n8n(executor, http);
//   engine.AddRunner("n8n-service-api", n8n);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <utility>

#include "net/http_client.hpp"
#include "runners/hosted_runner.hpp"

namespace sb::runners {

// Thread-safe. Run returns at once; `done` runs exactly once on an I/O thread with the answer or:
//   kInvalidArgument      the `ai.n8n-service-api` settings are unusable (unknown auth-type, a JWT
//                         algorithm other than HS256, an empty secret or header name)
//   kUpstreamAuth         the webhook refused the credentials (401/403)
//   kUpstreamNotFound     no webhook is registered at that URL and method
//   kUpstreamRateLimited  429
//   kUpstreamTimeout      no complete answer within the configured `timeout` seconds
//   kUpstreamFailed       the workflow failed, or its answer lacks the `output-key`
//   kUpstreamUnreachable  connection failures, as net::HttpClient reports them
//   kCancelled            CancelAll
// No error message carries a password, secret or header value. `on_delta` (may be null) gets the
// item texts of a streaming webhook as they arrive.
class N8nRunner final : public HostedRunner {
 public:
  N8nRunner(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http)
      : HostedRunner("n8n", std::move(executor), std::move(http)) {}

 private:
  util::Result<CallLauncher::Body> Prepare(const util::JsonObject& pipeline_config,
                                           pipeline::AgentInput input,
                                           OnDelta on_delta) const override;
};

}  // namespace sb::runners
