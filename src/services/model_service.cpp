#include "services/model_service.hpp"

#include <fmt/format.h>

#include <map>

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Fail;

util::Error NotFound(domain::ModelKind kind, const util::ModelId& id) {
  return {ErrorCode::kNotFound,
          fmt::format("{} {} does not exist", domain::ModelKindName(kind), id.str())};
}

// requester_config always has a string `model` (default: the name) and an object `args`. A
// `model` of another type is left for Check to reject: wrong types are errors, not defaults.
void NormalizeRequesterConfig(domain::Model& m) {
  auto& rc = m.requester_config;
  auto model = rc.find("model");
  if (model == rc.end() || model->value().is_null() ||
      (model->value().is_string() && model->value().as_string().empty())) {
    rc["model"] = m.name;
  }
  if (!rc.contains("args")) rc["args"] = util::JsonObject();
}

}  // namespace

ModelService::ModelService(domain::ModelRepository& repo, ProviderService& providers,
                           const util::Clock& clock)
    : repo_(repo), providers_(providers), clock_(clock) {}

util::Result<void> ModelService::Check(const domain::Model& m) const {
  if (m.name.empty() || m.name.size() > 255) {
    return Fail(ErrorCode::kInvalidArgument,
                "name must be a non-empty string of at most 255 bytes");
  }
  if (!m.requester_config.at("model").is_string()) {
    return Fail(ErrorCode::kInvalidArgument, "requester_config.model must be a string");
  }
  if (!m.requester_config.at("args").is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "requester_config.args must be an object");
  }
  if (m.kind == domain::ModelKind::kLlm) {
    for (const auto& a : m.abilities) {
      if (a != "chat" && a != "vision" && a != "func_call") {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("abilities holds '{}'; known abilities are chat, vision, func_call",
                                a.substr(0, 64)));
      }
    }
  }
  return util::Ok();
}

util::Result<std::vector<ModelView>> ModelService::List(
    domain::ModelKind kind, const std::optional<util::ProviderId>& provider) {
  auto models = repo_.List(kind, provider);
  if (!models) return tl::unexpected(models.error());
  auto providers = providers_.List();
  if (!providers) return tl::unexpected(providers.error());
  std::map<std::string, const domain::Provider*> by_id;
  for (const auto& p : *providers) by_id[p.provider.uuid.str()] = &p.provider;
  std::vector<ModelView> out;
  out.reserve(models->size());
  for (auto& m : *models) {
    auto it = by_id.find(m.provider_uuid.str());
    // The foreign key makes a missing provider impossible; skip rather than fail the list.
    if (it == by_id.end()) continue;
    out.push_back({std::move(m), *it->second});
  }
  return out;
}

util::Result<ModelView> ModelService::Get(domain::ModelKind kind, const util::ModelId& id) {
  auto m = repo_.Get(kind, id);
  if (!m) {
    if (m.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(kind, id));
    return tl::unexpected(m.error());
  }
  auto p = providers_.Get(m->provider_uuid);
  if (!p) return tl::unexpected(p.error());
  return ModelView{std::move(*m), std::move(p->provider)};
}

util::Result<domain::Model> ModelService::Prepare(domain::ModelKind kind,
                                                  const ModelDraft& draft) const {
  domain::Model m;
  m.kind = kind;
  m.uuid = util::ModelId::Generate();
  m.name = draft.name;
  m.description = draft.description;
  m.requester_config = draft.requester_config.value_or(util::JsonObject());
  m.abilities = draft.abilities;
  m.extra_args = draft.extra_args;
  m.prefered_ranking = draft.prefered_ranking;
  if (draft.provider_uuid) m.provider_uuid = *draft.provider_uuid;
  m.created_at = m.updated_at = clock_.Now();
  NormalizeRequesterConfig(m);
  if (auto ok = Check(m); !ok) return tl::unexpected(ok.error());
  return m;
}

util::Result<util::ModelId> ModelService::Create(domain::ModelKind kind, const ModelDraft& draft) {
  auto prepared = Prepare(kind, draft);
  if (!prepared) return tl::unexpected(prepared.error());
  domain::Model m = std::move(*prepared);
  if (draft.provider_uuid) {
    auto p = providers_.Get(*draft.provider_uuid);
    if (!p) {
      if (p.error().code == ErrorCode::kNotFound) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("provider_uuid {} names no provider", draft.provider_uuid->str()));
      }
      return tl::unexpected(p.error());
    }
    m.provider_uuid = *draft.provider_uuid;
  } else if (draft.inline_provider) {
    ProviderDraft pd = *draft.inline_provider;
    if (pd.name.empty()) pd.name = m.name;
    auto provider = providers_.Prepare(pd);
    if (!provider) {
      auto e = provider.error();
      if (e.code == ErrorCode::kInvalidArgument) e.message = "provider." + e.message;
      return tl::unexpected(e);
    }
    m.provider_uuid = provider->uuid;
    if (auto r = repo_.InsertWithProvider(*provider, m); !r) return tl::unexpected(r.error());
    providers_.NoteModelsChanged();
    return m.uuid;
  } else {
    return Fail(ErrorCode::kInvalidArgument, "provider_uuid is required");
  }
  if (auto r = repo_.Insert(m); !r) return tl::unexpected(r.error());
  providers_.NoteModelsChanged();
  return m.uuid;
}

util::Result<void> ModelService::Update(domain::ModelKind kind, const util::ModelId& id,
                                        const ModelPatch& patch) {
  auto current = repo_.Get(kind, id);
  if (!current) {
    if (current.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(kind, id));
    return tl::unexpected(current.error());
  }
  domain::Model m = std::move(*current);
  if (patch.name) m.name = *patch.name;
  if (patch.description) m.description = *patch.description;
  if (patch.requester_config) m.requester_config = *patch.requester_config;
  if (patch.abilities) m.abilities = *patch.abilities;
  if (patch.extra_args) m.extra_args = *patch.extra_args;
  if (patch.prefered_ranking) m.prefered_ranking = *patch.prefered_ranking;
  if (patch.provider_uuid) m.provider_uuid = *patch.provider_uuid;
  m.updated_at = clock_.Now();
  NormalizeRequesterConfig(m);
  if (auto ok = Check(m); !ok) return ok;
  auto r = repo_.Update(m);
  providers_.NoteModelsChanged();
  if (!r && r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(kind, id));
  if (!r && r.error().code == ErrorCode::kInvalidArgument && patch.provider_uuid) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("provider_uuid {} names no provider", patch.provider_uuid->str()));
  }
  return r;
}

util::Result<void> ModelService::Delete(domain::ModelKind kind, const util::ModelId& id) {
  auto r = repo_.Delete(kind, id);
  providers_.NoteModelsChanged();
  if (!r && r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(kind, id));
  return r;
}

}  // namespace sb::services
