#include "services/knowledge_embedder.hpp"

#include <fmt/format.h>

#include <chrono>
#include <future>
#include <memory>

#include "services/model_resolver.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;

struct Route {
  domain::ProviderEndpoint endpoint;
  std::string model_id;
  util::JsonObject args;
};

// The stored embedding model `model_uuid` as the gateway calls it. kInvalidArgument naming it
// when it is malformed or gone; a database failure passes through as it is.
util::Result<Route> RouteOf(ModelService& models, const std::string& model_uuid) {
  auto id = util::ModelId::Parse(model_uuid, "embedding_model_uuid");
  if (!id) return tl::unexpected(id.error());
  auto view = models.Get(domain::ModelKind::kEmbedding, *id);
  if (!view) {
    if (view.error().code != ErrorCode::kNotFound) return tl::unexpected(view.error());
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("the embedding model {} is not found (deleted?)", model_uuid));
  }
  return Route{EndpointOf(view->provider),
               ModelIdOf(view->model.requester_config, view->model.name),
               RequestArgs(view->model.requester_config, view->model.extra_args)};
}

}  // namespace

util::Result<void> KnowledgeEmbedder::CheckModel(const std::string& model_uuid) {
  auto route = RouteOf(models_, model_uuid);
  if (!route) return tl::unexpected(route.error());
  return util::Ok();
}

util::Result<std::vector<std::vector<float>>> KnowledgeEmbedder::Embed(
    const std::string& model_uuid, const std::vector<std::string>& texts,
    const std::function<void(std::size_t)>& progress, const std::atomic<bool>* cancelled) {
  auto found = RouteOf(models_, model_uuid);
  if (!found) return tl::unexpected(found.error());
  const Route& route = *found;
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (std::size_t start = 0; start < texts.size(); start += batch_size_) {
    if (cancelled && cancelled->load()) return util::Fail(ErrorCode::kCancelled, "cancelled");
    domain::EmbeddingRequest request;
    request.model = route.model_id;
    request.extra_args = route.args;
    const std::size_t end = std::min(texts.size(), start + batch_size_);
    request.inputs.assign(texts.begin() + static_cast<std::ptrdiff_t>(start),
                          texts.begin() + static_cast<std::ptrdiff_t>(end));
    auto promise = std::make_shared<std::promise<util::Result<domain::EmbeddingResult>>>();
    auto answer = promise->get_future();
    auto handle = gateway_.Embed(
        route.endpoint, std::move(request),
        [promise](util::Result<domain::EmbeddingResult> r) { promise->set_value(std::move(r)); });
    // The gateway bounds the call (timeouts, retries); waking now and then notices a stop.
    while (answer.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
      if (cancelled && cancelled->load() && handle) handle->Cancel();
    }
    auto result = answer.get();
    if (!result) {
      return util::Fail(result.error().code,
                        "the embedding call failed: " + result.error().message);
    }
    if (result->vectors.size() != end - start) {
      return util::Fail(ErrorCode::kUpstreamFailed,
                        fmt::format("the embedding call failed: the provider returned {} vectors "
                                    "for {} texts",
                                    result->vectors.size(), end - start));
    }
    for (auto& v : result->vectors) {
      if (v.empty()) {
        return util::Fail(ErrorCode::kUpstreamFailed,
                          "the embedding call failed: the provider returned an empty vector");
      }
      out.push_back(std::move(v));
    }
    if (progress) progress(out.size());
  }
  return out;
}

}  // namespace sb::services
