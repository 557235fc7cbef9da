#include "llm/observed_gateway.hpp"

#include <chrono>

#include "util/ids.hpp"

namespace sb::llm {

namespace {

std::int64_t MillisSince(const util::Clock& clock, util::TimePoint start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - start).count();
}

// The error's kind first, so the console's error column groups by it; the gateway's messages
// never carry a key.
std::string Describe(const util::Error& e) {
  std::string out(util::ErrorCodeName(e.code));
  out.append(": ").append(e.message);
  return out;
}

}  // namespace

ObservedLlmGateway::ObservedLlmGateway(domain::LlmGateway& inner, domain::MonitoringSink* sink,
                                       util::MetricsRegistry* metrics, const util::Clock& clock)
    : inner_(inner), sink_(sink), clock_(clock) {
  if (!metrics) return;
  durations_ =
      &metrics->Histogram("switchboard_model_call_duration_seconds",
                          "Model calls (chat and embedding) by model and outcome.",
                          {"kind", "model", "outcome"}, util::MetricsRegistry::DurationBuckets());
  tokens_ = &metrics->Counter("switchboard_model_tokens_total",
                              "Tokens the providers reported, by model and direction.",
                              {"model", "direction"});
}

std::shared_ptr<domain::CallHandle> ObservedLlmGateway::Chat(
    const domain::ProviderEndpoint& endpoint, domain::ChatRequest request,
    std::function<void(const domain::ChatDelta&)> on_delta,
    std::function<void(util::Result<domain::ChatResult>)> done) {
  const auto start = clock_.Now();
  std::string model = request.model;
  domain::CallOrigin origin = request.origin;
  auto observed = [this, start, model = std::move(model), origin = std::move(origin),
                   done = std::move(done)](util::Result<domain::ChatResult> result) {
    domain::MonitoredLlmCall call;
    call.id = util::NewUuid();
    call.timestamp = start;
    call.context.bot_id = origin.bot_id;
    call.context.pipeline_id = origin.pipeline_id;
    call.context.session_id = origin.session_id;
    call.model_name = model;
    call.duration_ms = MillisSince(clock_, start);
    if (result) {
      call.status = "success";
      call.input_tokens = result->usage.prompt_tokens;
      call.output_tokens = result->usage.completion_tokens;
    } else {
      call.status = "error";
      call.error_message = Describe(result.error());
    }
    if (durations_) {
      durations_->Observe({"chat", call.model_name, call.status},
                          static_cast<double>(call.duration_ms) / 1000.0);
    }
    if (tokens_ && result) {
      tokens_->Add({call.model_name, "input"}, static_cast<double>(call.input_tokens));
      tokens_->Add({call.model_name, "output"}, static_cast<double>(call.output_tokens));
    }
    if (sink_) sink_->RecordLlmCall(std::move(call));
    done(std::move(result));
  };
  return inner_.Chat(endpoint, std::move(request), std::move(on_delta), std::move(observed));
}

std::shared_ptr<domain::CallHandle> ObservedLlmGateway::Embed(
    const domain::ProviderEndpoint& endpoint, domain::EmbeddingRequest request,
    std::function<void(util::Result<domain::EmbeddingResult>)> done) {
  const auto start = clock_.Now();
  const auto inputs = static_cast<std::int64_t>(request.inputs.size());
  std::string model = request.model;
  auto observed = [this, start, inputs, model = std::move(model),
                   done = std::move(done)](util::Result<domain::EmbeddingResult> result) {
    domain::MonitoredEmbeddingCall call;
    call.id = util::NewUuid();
    call.timestamp = start;
    call.model_name = model;
    call.input_count = inputs;
    call.duration_ms = MillisSince(clock_, start);
    if (result) {
      call.status = "success";
      call.prompt_tokens = result->usage.prompt_tokens;
      call.total_tokens = result->usage.total_tokens;
    } else {
      call.status = "error";
      call.error_message = Describe(result.error());
    }
    if (durations_) {
      durations_->Observe({"embedding", call.model_name, call.status},
                          static_cast<double>(call.duration_ms) / 1000.0);
    }
    if (tokens_ && result) {
      tokens_->Add({call.model_name, "input"}, static_cast<double>(call.prompt_tokens));
    }
    if (sink_) sink_->RecordEmbeddingCall(std::move(call));
    done(std::move(result));
  };
  return inner_.Embed(endpoint, std::move(request), std::move(observed));
}

}  // namespace sb::llm
