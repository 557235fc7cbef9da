// Rules for LLM and embedding models: each belongs to an existing provider (or to one created
// from LangBot's inline `provider` object), and `requester_config.model` defaults to the name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/model.hpp"
#include "domain/provider.hpp"
#include "services/provider_service.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct ModelDraft {
  std::string name;
  std::string description;
  std::optional<util::ProviderId> provider_uuid;
  std::optional<ProviderDraft> inline_provider;  // LangBot's `provider:{requester,...}`
  std::optional<util::JsonObject> requester_config;
  std::vector<std::string> abilities;
  util::JsonObject extra_args;
  int prefered_ranking = 0;
};

struct ModelPatch {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<util::ProviderId> provider_uuid;
  std::optional<util::JsonObject> requester_config;
  std::optional<std::vector<std::string>> abilities;
  std::optional<util::JsonObject> extra_args;
  std::optional<int> prefered_ranking;
};

// A model with the provider it uses (responses carry the provider's requester and keys).
struct ModelView {
  domain::Model model;
  domain::Provider provider;
};

// Thread-safe; blocking (call from the blocking pool).
class ModelService {
 public:
  ModelService(domain::ModelRepository& repo, ProviderService& providers, const util::Clock& clock);

  util::Result<std::vector<ModelView>> List(domain::ModelKind kind,
                                            const std::optional<util::ProviderId>& provider);
  // kNotFound naming the kind and uuid.
  util::Result<ModelView> Get(domain::ModelKind kind, const util::ModelId& id);
  // kInvalidArgument naming the field at fault (unknown provider included).
  util::Result<util::ModelId> Create(domain::ModelKind kind, const ModelDraft& draft);
  // A checked new model with a fresh uuid, not yet stored; its provider is not looked up
  // (`draft.provider_uuid` is taken as given). For callers that store models themselves (the
  // LangBot import keeps LangBot's uuids). kInvalidArgument naming the field at fault.
  util::Result<domain::Model> Prepare(domain::ModelKind kind, const ModelDraft& draft) const;
  util::Result<void> Update(domain::ModelKind kind, const util::ModelId& id,
                            const ModelPatch& patch);
  util::Result<void> Delete(domain::ModelKind kind, const util::ModelId& id);

 private:
  util::Result<void> Check(const domain::Model& m) const;

  domain::ModelRepository& repo_;
  ProviderService& providers_;
  const util::Clock& clock_;
};

}  // namespace sb::services
