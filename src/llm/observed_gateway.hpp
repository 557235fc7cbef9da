// An LlmGateway that reports every chat and embedding call (model, tokens, latency, outcome) to
// the monitoring sink and forwards it unchanged to the real gateway. Wired in the composition
// root around llm::HttpLlmGateway, so requesters and callers know nothing of monitoring.
//   ObservedLlmGateway observed(gateway, recorder, clock);
//   observed.Chat(endpoint, request, on_delta, done);  // done sees what the inner gateway gave
#pragma once

#include "domain/llm.hpp"
#include "domain/monitoring.hpp"
#include "util/clock.hpp"

namespace sb::llm {

// Thread-safe as the inner gateway is. `inner`, `sink` and `clock` outlive this object.
class ObservedLlmGateway final : public domain::LlmGateway {
 public:
  ObservedLlmGateway(domain::LlmGateway& inner, domain::MonitoringSink& sink,
                     const util::Clock& clock)
      : inner_(inner), sink_(sink), clock_(clock) {}

  std::shared_ptr<domain::CallHandle> Chat(
      const domain::ProviderEndpoint& endpoint, domain::ChatRequest request,
      std::function<void(const domain::ChatDelta&)> on_delta,
      std::function<void(util::Result<domain::ChatResult>)> done) override;
  std::shared_ptr<domain::CallHandle> Embed(
      const domain::ProviderEndpoint& endpoint, domain::EmbeddingRequest request,
      std::function<void(util::Result<domain::EmbeddingResult>)> done) override;

 private:
  domain::LlmGateway& inner_;
  domain::MonitoringSink& sink_;
  const util::Clock& clock_;
};

}  // namespace sb::llm
