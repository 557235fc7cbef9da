#include "services/model_test_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "services/model_resolver.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Fail;
using SteadyClock = std::chrono::steady_clock;

std::int64_t MillisSince(SteadyClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start).count();
}

}  // namespace

util::Error DescribeProviderFailure(const util::Error& error) {
  const char* kind = nullptr;
  switch (error.code) {
    case ErrorCode::kUpstreamAuth:
      kind = "bad API key";
      break;
    case ErrorCode::kUpstreamNotFound:
      kind = "unknown model";
      break;
    case ErrorCode::kUpstreamRateLimited:
      kind = "rate limited or out of quota";
      break;
    case ErrorCode::kUpstreamTimeout:
      kind = "timeout";
      break;
    case ErrorCode::kUpstreamUnreachable:
      kind = "connection failed";
      break;
    case ErrorCode::kUpstreamFailed:
      kind = "provider error";
      break;
    default:
      return error;
  }
  return {error.code, fmt::format("{}: {}", kind, error.message)};
}

ModelTestService::ModelTestService(ModelService& models, ProviderService& providers,
                                   domain::ModelRepository& repo, domain::LlmGateway& gateway,
                                   util::BlockingExecutor& blocking)
    : models_(models), providers_(providers), repo_(repo), gateway_(gateway), blocking_(blocking) {}

util::Result<domain::ProviderEndpoint> ModelTestService::EndpointForDraft(
    const ModelUnderTest& model) {
  if (model.provider_uuid) {
    auto p = providers_.Get(*model.provider_uuid);
    if (!p) {
      if (p.error().code == ErrorCode::kNotFound) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("provider_uuid {} names no provider", model.provider_uuid->str()));
      }
      return tl::unexpected(p.error());
    }
    return services::EndpointOf(p->provider);
  }
  if (model.inline_provider) {
    // Checked like a provider that would be created, but not stored.
    ProviderDraft draft = *model.inline_provider;
    if (draft.name.empty()) draft.name = model.name.empty() ? "model test" : model.name;
    auto p = providers_.Prepare(draft);
    if (!p) {
      auto e = p.error();
      if (e.code == ErrorCode::kInvalidArgument) e.message = "provider." + e.message;
      return tl::unexpected(e);
    }
    return services::EndpointOf(*p);
  }
  return Fail(ErrorCode::kInvalidArgument, "provider_uuid or provider is required");
}

void ModelTestService::RunChat(domain::ProviderEndpoint endpoint, std::string model_id,
                               util::JsonObject extra_args, std::string prompt,
                               std::function<void(util::Result<LlmTestResult>)> done) {
  domain::ChatRequest request;
  request.model = std::move(model_id);
  request.extra_args = std::move(extra_args);
  domain::ChatMessage user;
  user.role = "user";
  user.content.push_back({domain::ContentPart::Kind::kText, std::move(prompt), {}});
  request.messages.push_back(std::move(user));
  const auto start = SteadyClock::now();
  gateway_.Chat(endpoint, std::move(request), nullptr,
                [start, done = std::move(done)](util::Result<domain::ChatResult> r) {
                  if (!r) return done(tl::unexpected(DescribeProviderFailure(r.error())));
                  LlmTestResult out;
                  out.latency_ms = MillisSince(start);
                  out.reply = r->content;
                  out.usage = r->usage;
                  done(std::move(out));
                });
}

void ModelTestService::TestLlm(const util::ModelId& id, std::string prompt,
                               std::function<void(util::Result<LlmTestResult>)> done) {
  auto view = models_.Get(domain::ModelKind::kLlm, id);
  if (!view) return done(tl::unexpected(view.error()));
  RunChat(EndpointOf(view->provider), ModelIdOf(view->model.requester_config, view->model.name),
          RequestArgs(view->model.requester_config, view->model.extra_args), std::move(prompt),
          std::move(done));
}

void ModelTestService::TestLlmDraft(const ModelUnderTest& model, std::string prompt,
                                    std::function<void(util::Result<LlmTestResult>)> done) {
  auto endpoint = EndpointForDraft(model);
  if (!endpoint) return done(tl::unexpected(endpoint.error()));
  const std::string id = ModelIdOf(model.requester_config, model.name);
  if (id.empty()) return done(Fail(ErrorCode::kInvalidArgument, "name is required"));
  RunChat(std::move(*endpoint), id, RequestArgs(model.requester_config, model.extra_args),
          std::move(prompt), std::move(done));
}

void ModelTestService::RunEmbedding(domain::ProviderEndpoint endpoint, std::string model_id,
                                    util::JsonObject extra_args, std::string text,
                                    std::optional<domain::Model> to_update,
                                    std::function<void(util::Result<EmbeddingTestResult>)> done) {
  domain::EmbeddingRequest request;
  request.model = std::move(model_id);
  request.extra_args = std::move(extra_args);
  request.inputs.push_back(std::move(text));
  const auto start = SteadyClock::now();
  gateway_.Embed(endpoint, std::move(request),
                 [this, start, to_update = std::move(to_update),
                  done = std::move(done)](util::Result<domain::EmbeddingResult> r) mutable {
                   if (!r) return done(tl::unexpected(DescribeProviderFailure(r.error())));
                   if (r->vectors.empty() || r->vectors.front().empty()) {
                     return done(Fail(ErrorCode::kUpstreamFailed,
                                      "provider error: the provider answered without a vector"));
                   }
                   EmbeddingTestResult out;
                   out.latency_ms = MillisSince(start);
                   out.dimensions = static_cast<int>(r->vectors.front().size());
                   if (!to_update || to_update->dimensions == out.dimensions)
                     return done(std::move(out));
                   // A stored model learns its dimensions; the write happens off the I/O thread.
                   // The test itself succeeded, so a failed write (the model was deleted meanwhile)
                   // only loses that.
                   blocking_.Post([this, id = to_update->uuid, out, done = std::move(done)] {
                     if (auto stored = repo_.SetDimensions(id, out.dimensions); !stored) {
                       spdlog::warn("could not store the dimensions of model {}: {}", id.str(),
                                    stored.error().message);
                     } else {
                       providers_.NoteModelsChanged();
                     }
                     done(out);
                   });
                 });
}

void ModelTestService::TestEmbedding(const util::ModelId& id, std::string text,
                                     std::function<void(util::Result<EmbeddingTestResult>)> done) {
  auto view = models_.Get(domain::ModelKind::kEmbedding, id);
  if (!view) return done(tl::unexpected(view.error()));
  RunEmbedding(EndpointOf(view->provider),
               ModelIdOf(view->model.requester_config, view->model.name),
               RequestArgs(view->model.requester_config, view->model.extra_args), std::move(text),
               view->model, std::move(done));
}

void ModelTestService::TestEmbeddingDraft(
    const ModelUnderTest& model, std::string text,
    std::function<void(util::Result<EmbeddingTestResult>)> done) {
  auto endpoint = EndpointForDraft(model);
  if (!endpoint) return done(tl::unexpected(endpoint.error()));
  const std::string id = ModelIdOf(model.requester_config, model.name);
  if (id.empty()) return done(Fail(ErrorCode::kInvalidArgument, "name is required"));
  RunEmbedding(std::move(*endpoint), id, RequestArgs(model.requester_config, model.extra_args),
               std::move(text), std::nullopt, std::move(done));
}

}  // namespace sb::services
