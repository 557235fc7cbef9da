// The `tbox-app-api` runner: talks to an Ant Group Tbox (百宝箱) conversational agent through its
// open API (POST {base-url}/api/chat, streamed as Server-Sent Events) and keeps the Tbox
// conversation of each chat session.
//   TboxRunner tbox(executor, http);
//   engine.AddRunner("tbox-app-api", tbox);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <utility>

#include "net/http_client.hpp"
#include "runners/hosted_runner.hpp"

namespace sb::runners {

// Thread-safe. Run returns at once; `done` runs exactly once with the answer or:
//   kInvalidArgument      no app-id, or a message without text
//   kUpstreamAuth         Tbox refused the token (HTTP 401/403)
//   kUpstreamNotFound     HTTP 404
//   kUpstreamRateLimited  HTTP 429
//   kUpstreamTimeout      no complete answer within `timeout` seconds (default 120)
//   kUpstreamFailed       any other Tbox error (its errorCode and errorMsg or description are
//                         quoted; a failed conversation is forgotten here, so the next message
//                         starts a new one), or a stream that carries no answer
//   kUpstreamUnreachable  connection failures, as net::HttpClient reports them
//   kCancelled            CancelAll
// No error message carries the token. `on_delta` (may be null) gets the answer's pieces.
class TboxRunner final : public HostedRunner {
 public:
  TboxRunner(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http)
      : HostedRunner("tbox", std::move(executor), std::move(http)) {}

 private:
  util::Result<CallLauncher::Body> Prepare(const util::JsonObject& pipeline_config,
                                           pipeline::AgentInput input,
                                           OnDelta on_delta) const override;
};

}  // namespace sb::runners
