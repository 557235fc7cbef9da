// An LlmGateway that reports every chat and embedding call (model, tokens, latency, outcome) to
// the monitoring sink and the metrics registry, and forwards it unchanged to the real gateway.
// Wired in the composition root around llm::HttpLlmGateway, so requesters and callers know
// nothing of monitoring.
//   ObservedLlmGateway observed(gateway, &recorder, &registry, clock);
//   observed.Chat(endpoint, request, on_delta, done);  // done sees what the inner gateway gave
#pragma once

#include "domain/llm.hpp"
#include "domain/monitoring.hpp"
#include "util/clock.hpp"
#include "util/metrics_registry.hpp"

namespace sb::llm {

// Thread-safe as the inner gateway is. Everything given outlives this object; `sink` or
// `metrics` may be null (that part off).
class ObservedLlmGateway final : public domain::LlmGateway {
 public:
  ObservedLlmGateway(domain::LlmGateway& inner, domain::MonitoringSink* sink,
                     util::MetricsRegistry* metrics, const util::Clock& clock);

  std::shared_ptr<domain::CallHandle> Chat(
      const domain::ProviderEndpoint& endpoint, domain::ChatRequest request,
      std::function<void(const domain::ChatDelta&)> on_delta,
      std::function<void(util::Result<domain::ChatResult>)> done) override;
  std::shared_ptr<domain::CallHandle> Embed(
      const domain::ProviderEndpoint& endpoint, domain::EmbeddingRequest request,
      std::function<void(util::Result<domain::EmbeddingResult>)> done) override;

 private:
  domain::LlmGateway& inner_;
  domain::MonitoringSink* sink_;
  const util::Clock& clock_;
  // Model ids come from stored models (config entities): bounded, and capped by the registry.
  util::MetricFamily* durations_ = nullptr;  // {kind=chat|embedding, model, outcome}
  util::MetricFamily* tokens_ = nullptr;     // {model, direction=input|output}
};

}  // namespace sb::llm
