// The `coze-api` runner: talks to a Coze bot through Coze's chat API v3 (POST {api-base}/v3/chat,
// always streamed as Server-Sent Events) and keeps the Coze conversation of each chat session.
//   CozeRunner coze(executor, http);
//   engine.AddRunner("coze-api", coze);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <utility>

#include "net/http_client.hpp"
#include "runners/hosted_runner.hpp"

namespace sb::runners {

// Thread-safe. Run returns at once; `done` runs exactly once on an I/O thread with the answer or:
//   kInvalidArgument      no bot-id
//   kUpstreamAuth         Coze refused the token (HTTP 401/403, codes 4100/4101)
//   kUpstreamNotFound     HTTP 404, code 4200 (no such published bot); an unknown conversation
//                         is forgotten here, so the next message starts a new one
//   kUpstreamRateLimited  HTTP 429, code 4013
//   kUpstreamTimeout      no complete answer within `timeout` seconds (default 120)
//   kUpstreamFailed       any other Coze error (the code and msg are quoted), a failed chat, a
//                         chat that needs tool results, or a stream that ends early
//   kUpstreamUnreachable  connection failures, as net::HttpClient reports them
//   kCancelled            CancelAll
// No error message carries the token. `on_delta` (may be null) gets the answer's pieces.
class CozeRunner final : public HostedRunner {
 public:
  CozeRunner(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http)
      : HostedRunner("coze", std::move(executor), std::move(http)) {}

 private:
  util::Result<CallLauncher::Body> Prepare(const util::JsonObject& pipeline_config,
                                           pipeline::AgentInput input,
                                           OnDelta on_delta) const override;
};

}  // namespace sb::runners
