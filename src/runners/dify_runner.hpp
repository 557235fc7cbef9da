// The `dify-service-api` runner: hands a message to a Dify app (chatbot, agent or workflow) over
// Dify's service API and returns its answer. Dify keeps the conversation; this runner remembers
// which Dify conversation each (pipeline, bot, session) is in, in memory only.
//   DifyRunner dify(executor, http);
//   engine.AddRunner("dify-service-api", dify);
//   dify.Forget(key);  // after `!reset`: the session's next message starts a new conversation
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstddef>
#include <memory>
#include <utility>

#include "domain/conversation.hpp"
#include "net/http_client.hpp"
#include "runners/hosted_runner.hpp"

namespace sb::runners {

// Thread-safe. Run returns at once; `done` runs exactly once on an I/O thread with the answer or:
//   kInvalidArgument      the `ai.dify-service-api` settings are unusable (unknown app-type)
//   kUpstreamAuth         Dify refused the API key
//   kUpstreamNotFound     Dify does not know the conversation (it is then forgotten here)
//   kUpstreamRateLimited  Dify is throttling the app, or its quota is spent (`final` set)
//   kUpstreamTimeout      no complete answer within the configured `timeout` seconds
//   kUpstreamFailed       any other Dify error, in the status or in the stream
//   kUpstreamUnreachable  connection failures, as net::HttpClient reports them
//   kCancelled            CancelAll
// No error message carries the API key. `on_delta` (may be null) gets the streamed text pieces of
// chat and agent apps; a workflow app answers in one piece.
class DifyRunner final : public HostedRunner {
 public:
  // `max_conversations` bounds the remembered Dify conversation ids; the least recently used is
  // forgotten first.
  DifyRunner(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http,
             std::size_t max_conversations = 10'000)
      : HostedRunner("dify", std::move(executor), std::move(http), max_conversations) {}

 private:
  util::Result<CallLauncher::Body> Prepare(const util::JsonObject& pipeline_config,
                                           pipeline::AgentInput input,
                                           OnDelta on_delta) const override;
};

}  // namespace sb::runners
