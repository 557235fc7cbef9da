#include "services/pipeline_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "services/config_schema.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Fail;

constexpr const char* kForVersion = "4.9.5";

util::Error NotFound(const util::PipelineId& id) {
  return {ErrorCode::kNotFound, fmt::format("pipeline {} does not exist", id.str())};
}

// At most `max` bytes, never cutting a multi-byte character.
std::string TruncateUtf8(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

util::Result<void> CheckText(const std::string& value, const char* field, bool required) {
  if ((required && value.empty()) || value.size() > 255) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} must be a {}string of at most 255 bytes", field,
                            required ? "non-empty " : ""));
  }
  return util::Ok();
}

}  // namespace

PipelineService::PipelineService(domain::PipelineRepository& repo,
                                 const domain::PipelineTemplate& tmpl, const util::Clock& clock)
    : repo_(repo), template_(tmpl), clock_(clock) {}

util::Result<util::JsonObject> PipelineService::MergeAndCheck(
    const util::JsonObject& base, const util::JsonObject& config) const {
  util::JsonObject merged = template_.default_config;
  util::DeepMerge(merged, base);
  util::DeepMerge(merged, config);
  for (const auto& section_raw : template_.metadata) {
    if (!section_raw.is_object()) continue;
    const auto& section = section_raw.as_object();
    auto name_it = section.find("name");
    auto stages_it = section.find("stages");
    if (name_it == section.end() || !name_it->value().is_string() || stages_it == section.end() ||
        !stages_it->value().is_array()) {
      continue;
    }
    const std::string section_name(name_it->value().as_string());
    auto in_config = merged.find(section_name);
    if (in_config == merged.end()) continue;
    if (!in_config->value().is_object()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("config.{} must be an object", section_name));
    }
    for (const auto& stage_raw : stages_it->value().as_array()) {
      if (!stage_raw.is_object()) continue;
      const auto& stage = stage_raw.as_object();
      auto stage_name = stage.find("name");
      if (stage_name == stage.end() || !stage_name->value().is_string()) continue;
      const std::string sname(stage_name->value().as_string());
      auto stage_cfg = in_config->value().as_object().find(sname);
      if (stage_cfg == in_config->value().as_object().end()) continue;
      const std::string where = fmt::format("config.{}.{}", section_name, sname);
      if (!stage_cfg->value().is_object()) {
        return Fail(ErrorCode::kInvalidArgument, where + " must be an object");
      }
      auto items = stage.find("config");
      if (items == stage.end() || !items->value().is_array()) continue;
      auto ok = CheckConfigTypes(items->value().as_array(), stage_cfg->value().as_object(), where);
      if (!ok) return tl::unexpected(ok.error());
    }
  }
  return merged;
}

domain::Pipeline PipelineService::NewPipeline(const PipelineDraft& draft,
                                              util::JsonObject config) const {
  domain::Pipeline p;
  p.uuid = util::PipelineId::Generate();
  p.name = draft.name;
  p.description = draft.description;
  p.emoji = draft.emoji.empty() ? "⚙️" : draft.emoji;
  p.config = std::move(config);
  p.stages = template_.default_stages;
  p.for_version = kForVersion;
  p.extensions_preferences = util::JsonObject{{"enable_all_plugins", true},
                                              {"enable_all_mcp_servers", true},
                                              {"plugins", util::JsonArray()},
                                              {"mcp_servers", util::JsonArray()}};
  p.created_at = p.updated_at = clock_.Now();
  return p;
}

util::Result<util::PipelineId> PipelineService::EnsureDefault() {
  auto existing = repo_.GetDefault();
  if (existing) return existing->uuid;
  if (existing.error().code != ErrorCode::kNotFound) return tl::unexpected(existing.error());
  auto p = NewPipeline({"ChatPipeline", "Default pipeline, used by new bots", "⚙️", {}},
                       template_.default_config);
  p.is_default = true;
  if (auto r = repo_.Insert(p); !r) {
    // Several instances starting together on a new database: another one made it first.
    if (r.error().code != ErrorCode::kConflict) return tl::unexpected(r.error());
    auto made = repo_.GetDefault();
    if (!made) return tl::unexpected(made.error());
    return made->uuid;
  }
  return p.uuid;
}

util::Result<std::vector<domain::Pipeline>> PipelineService::List() { return repo_.List(); }

util::Result<domain::Pipeline> PipelineService::Get(const util::PipelineId& id) {
  auto r = repo_.Get(id);
  if (!r && r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
  return r;
}

util::Result<util::PipelineId> PipelineService::Create(const PipelineDraft& draft) {
  if (auto ok = CheckText(draft.name, "name", true); !ok) return tl::unexpected(ok.error());
  if (auto ok = CheckText(draft.emoji, "emoji", false); !ok) return tl::unexpected(ok.error());
  if (draft.description.size() > 4096) {
    return Fail(ErrorCode::kInvalidArgument, "description must be at most 4096 bytes");
  }
  auto config = MergeAndCheck({}, draft.config);
  if (!config) return tl::unexpected(config.error());
  auto p = NewPipeline(draft, std::move(*config));
  if (auto r = repo_.Insert(p); !r) return tl::unexpected(r.error());
  return p.uuid;
}

util::Result<void> PipelineService::Update(const util::PipelineId& id, const PipelinePatch& patch) {
  auto current = Get(id);
  if (!current) return tl::unexpected(current.error());
  domain::Pipeline p = std::move(*current);
  if (patch.name) {
    if (auto ok = CheckText(*patch.name, "name", true); !ok) return ok;
    p.name = *patch.name;
  }
  if (patch.emoji) {
    if (auto ok = CheckText(*patch.emoji, "emoji", false); !ok) return ok;
    p.emoji = *patch.emoji;
  }
  if (patch.description) {
    if (patch.description->size() > 4096) {
      return Fail(ErrorCode::kInvalidArgument, "description must be at most 4096 bytes");
    }
    p.description = *patch.description;
  }
  bool ai_changed = false;
  if (patch.config) {
    // Over the stored config: a PUT naming one section leaves the others as they were.
    auto config = MergeAndCheck(p.config, *patch.config);
    if (!config) return tl::unexpected(config.error());
    ai_changed = config->if_contains("ai") == nullptr || p.config.if_contains("ai") == nullptr ||
                 *config->if_contains("ai") != *p.config.if_contains("ai");
    p.config = std::move(*config);
  }
  if (patch.extensions_preferences) p.extensions_preferences = *patch.extensions_preferences;
  p.updated_at = clock_.Now();
  auto r = repo_.Update(p);
  if (!r && r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
  if (!r) return r;
  if (ai_changed && conversations_) {
    if (auto cleared = conversations_->ClearPipeline(id); !cleared) {
      return Fail(ErrorCode::kInternal,
                  "the pipeline was saved but its conversations could not be cleared: " +
                      cleared.error().message);
    }
  }
  if (on_change_) on_change_(id);
  if (feed_ != nullptr) {
    // The memory first: the instance running the pipeline's bots drops what it keeps of their
    // conversations before it re-reads the pipeline.
    if (ai_changed) feed_->Publish(domain::ChangeKind::kPipelineMemory, id.str());
    feed_->Publish(domain::ChangeKind::kPipelines, id.str());
  }
  return r;
}

util::Result<util::PipelineId> PipelineService::Copy(const util::PipelineId& id) {
  auto source = Get(id);
  if (!source) return tl::unexpected(source.error());
  domain::Pipeline p = std::move(*source);
  p.uuid = util::PipelineId::Generate();
  p.name = TruncateUtf8(p.name, 240) + " (Copy)";
  p.is_default = false;
  p.created_at = p.updated_at = clock_.Now();
  if (auto r = repo_.Insert(p); !r) return tl::unexpected(r.error());
  return p.uuid;
}

util::Result<void> PipelineService::Delete(const util::PipelineId& id) {
  auto current = Get(id);
  if (!current) return tl::unexpected(current.error());
  if (current->is_default) {
    return Fail(ErrorCode::kConflict, "the default pipeline cannot be deleted");
  }
  auto r = repo_.Delete(id);
  if (!r && r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
  if (!r && r.error().code == ErrorCode::kConflict) {
    auto users = repo_.CountBotsUsing(id);
    return Fail(ErrorCode::kConflict,
                fmt::format("pipeline {} is used by {} bot(s); switch them to another pipeline "
                            "first",
                            id.str(), users ? *users : 1));
  }
  if (r && on_change_) on_change_(id);
  if (r && feed_ != nullptr) feed_->Publish(domain::ChangeKind::kPipelines, id.str());
  return r;
}

void PipelineService::ChangedElsewhere(const std::optional<util::PipelineId>& id) {
  if (!on_change_) return;
  if (id) return on_change_(*id);
  // Every pipeline that exists now; a deleted one cannot be in use (Delete refuses that).
  auto all = repo_.List();
  if (!all) {
    spdlog::warn("cannot list pipelines to refresh them: {}", all.error().message);
    return;
  }
  for (const auto& p : *all) on_change_(p.uuid);
}

void PipelineService::MemoryClearedElsewhere(const util::PipelineId& id) {
  if (conversations_ == nullptr) return;
  // Clears the stored rounds again too: the bots here may have written some from their stale
  // memory after the other instance cleared them.
  if (auto cleared = conversations_->ClearPipeline(id); !cleared) {
    spdlog::warn("cannot clear the conversations of pipeline {}: {}", id.str(),
                 cleared.error().message);
  }
}

util::JsonObject PipelineService::Metadata() const {
  return util::JsonObject{{"configs", template_.metadata}};
}

}  // namespace sb::services
