#include "services/model_resolver.hpp"

namespace sb::services {

std::string ModelIdOf(const util::JsonObject& requester_config, const std::string& name) {
  auto model = requester_config.find("model");
  if (model != requester_config.end() && model->value().is_string() &&
      !model->value().as_string().empty()) {
    return std::string(model->value().as_string());
  }
  return name;
}

// LangBot keeps requester arguments in requester_config.args and the model's own in extra_args;
// both go into the request body, the model's last.
util::JsonObject RequestArgs(const util::JsonObject& requester_config,
                             const util::JsonObject& extra_args) {
  util::JsonObject out;
  auto args = requester_config.find("args");
  if (args != requester_config.end() && args->value().is_object()) {
    util::DeepMerge(out, args->value().as_object());
  }
  util::DeepMerge(out, extra_args);
  return out;
}

domain::ProviderEndpoint EndpointOf(const domain::Provider& p) {
  return {p.requester, p.base_url, p.api_keys};
}

util::Result<domain::ModelRoute> StoredModelResolver::Resolve(const std::string& model_uuid) {
  // Read before the database: a change during the read leaves an entry that is already stale.
  const std::uint64_t generation = providers_.generation();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(model_uuid);
    if (it != cache_.end() && it->second.generation == generation) return it->second.route;
  }
  auto id = util::ModelId::Parse(model_uuid, "model uuid");
  if (!id) return tl::unexpected(id.error());
  auto view = models_.Get(domain::ModelKind::kLlm, *id);
  if (!view) return tl::unexpected(view.error());
  domain::ModelRoute route;
  route.endpoint = EndpointOf(view->provider);
  route.model_id = ModelIdOf(view->model.requester_config, view->model.name);
  route.extra_args = RequestArgs(view->model.requester_config, view->model.extra_args);
  route.abilities = view->model.abilities;
  std::lock_guard lock(mu_);
  if (cache_.size() >= kMaxCached) cache_.clear();  // rare: more models than this in use
  cache_[model_uuid] = {generation, route};
  return route;
}

}  // namespace sb::services
