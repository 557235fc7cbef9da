// Stored LLM models as the pipeline calls them: uuid -> provider endpoint, model id and
// request arguments, with LangBot's rules for where each comes from.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "domain/llm.hpp"
#include "services/model_service.hpp"
#include "services/provider_service.hpp"

namespace sb::services {

// requester_config.model when set, else the model's name.
std::string ModelIdOf(const util::JsonObject& requester_config, const std::string& name);
// requester_config.args, then the model's extra_args over them.
util::JsonObject RequestArgs(const util::JsonObject& requester_config,
                             const util::JsonObject& extra_args);
domain::ProviderEndpoint EndpointOf(const domain::Provider& provider);

// Thread-safe; blocking on a miss. Routes are remembered until a provider or model changes
// (ProviderService's generation moves with both), so a busy bot reads no database per message.
class StoredModelResolver final : public domain::ModelResolver {
 public:
  StoredModelResolver(ModelService& models, const ProviderService& providers)
      : models_(models), providers_(providers) {}
  util::Result<domain::ModelRoute> Resolve(const std::string& model_uuid) override;

 private:
  struct Cached {
    std::uint64_t generation = 0;
    domain::ModelRoute route;
  };
  static constexpr std::size_t kMaxCached = 1024;

  ModelService& models_;
  const ProviderService& providers_;
  std::mutex mu_;
  std::unordered_map<std::string, Cached> cache_;  // by model uuid; guarded by mu_
};

}  // namespace sb::services
