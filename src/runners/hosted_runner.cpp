#include "runners/hosted_runner.hpp"

#include <utility>

namespace sb::runners {

HostedRunner::HostedRunner(std::string service, boost::asio::any_io_executor executor,
                           std::shared_ptr<net::HttpClient> http, std::size_t max_sessions)
    : service_(std::move(service)),
      state_(std::make_shared<ServiceState>(std::move(http), max_sessions)),
      calls_(std::move(executor)) {}

void HostedRunner::Run(const util::JsonObject& pipeline_config, pipeline::AgentInput input,
                       std::function<void(const domain::ChatDelta&)> on_delta,
                       std::function<void(util::Result<pipeline::AgentReply>)> done) {
  auto body = Prepare(pipeline_config, std::move(input), std::move(on_delta));
  if (!body) {
    done(tl::unexpected(std::move(body.error())));
    return;
  }
  calls_.Launch(service_, std::move(*body), std::move(done));
}

void HostedRunner::CancelAll() { calls_.CancelAll(); }

void HostedRunner::Forget(const domain::ConversationKey& key) {
  state_->sessions.Drop(SessionKey(key));
}

}  // namespace sb::runners
