// The `coze-api` runner: talks to a Coze bot through Coze's chat API v3 (POST {api-base}/v3/chat,
// always streamed as Server-Sent Events) and keeps the Coze conversation of each chat session.
//   CozeRunner coze(executor, http);
//   engine.AddRunner("coze-api", coze);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>

#include "net/http_client.hpp"
#include "pipeline/engine.hpp"

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
class CozeRunner final : public pipeline::Runner {
 public:
  CozeRunner(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http);
  ~CozeRunner() override;

  void Run(const util::JsonObject& pipeline_config, pipeline::AgentInput input,
           std::function<void(const domain::ChatDelta&)> on_delta,
           std::function<void(util::Result<pipeline::AgentReply>)> done) override;
  void CancelAll();
  // The session's next message starts a new Coze conversation.
  void Forget(const domain::ConversationKey& key) override;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace sb::runners
