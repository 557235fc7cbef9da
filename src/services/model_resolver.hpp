// Stored LLM models as the pipeline calls them: uuid -> provider endpoint, model id and
// request arguments, with LangBot's rules for where each comes from.
#pragma once

#include <string>

#include "domain/llm.hpp"
#include "services/model_service.hpp"

namespace sb::services {

// requester_config.model when set, else the model's name.
std::string ModelIdOf(const util::JsonObject& requester_config, const std::string& name);
// requester_config.args, then the model's extra_args over them.
util::JsonObject RequestArgs(const util::JsonObject& requester_config,
                             const util::JsonObject& extra_args);
domain::ProviderEndpoint EndpointOf(const domain::Provider& provider);

// Thread-safe; blocking.
class StoredModelResolver final : public domain::ModelResolver {
 public:
  explicit StoredModelResolver(ModelService& models) : models_(models) {}
  util::Result<domain::ModelRoute> Resolve(const std::string& model_uuid) override;

 private:
  ModelService& models_;
};

}  // namespace sb::services
