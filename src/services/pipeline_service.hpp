// Rules for pipelines: configs are deep-merged over the default config and checked against the
// metadata; one default pipeline always exists; a pipeline in use cannot be deleted.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "domain/change_feed.hpp"
#include "domain/conversation.hpp"
#include "domain/pipeline.hpp"
#include "domain/pipeline_template.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct PipelineDraft {
  std::string name;
  std::string description;
  std::string emoji;
  util::JsonObject config;
};

struct PipelinePatch {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::string> emoji;
  std::optional<util::JsonObject> config;
  std::optional<util::JsonObject> extensions_preferences;
};

// Thread-safe; blocking (call from the blocking pool).
class PipelineService {
 public:
  PipelineService(domain::PipelineRepository& repo, const domain::PipelineTemplate& tmpl,
                  const util::Clock& clock);

  // Conversation memory, cleared for a pipeline whose `ai` settings (runner, model, prompt)
  // change: remembered rounds from another model or prompt would mislead the new one. Optional.
  void SetConversations(domain::ConversationRepository* conversations) {
    conversations_ = conversations;
  }
  // Told after a pipeline changed or was deleted, so running bots re-read it. Set before serving.
  void SetChangeListener(std::function<void(const util::PipelineId&)> listener) {
    on_change_ = std::move(listener);
  }
  // Where committed changes are announced to other instances (optional; set before serving).
  void SetChangeFeed(domain::ChangeFeed* feed) { feed_ = feed; }
  // A pipeline (every one when nullopt) changed through another instance: tells the change
  // listener as a local change would, announcing nothing. Blocking.
  void ChangedElsewhere(const std::optional<util::PipelineId>& id);
  // Another instance changed the pipeline's `ai` settings and cleared its conversations: clears
  // them here too (the memory this instance's bots keep). Blocking.
  void MemoryClearedElsewhere(const util::PipelineId& id);

  // Creates the default pipeline ("ChatPipeline") unless one exists. Called at start.
  util::Result<util::PipelineId> EnsureDefault();

  util::Result<std::vector<domain::Pipeline>> List();
  util::Result<domain::Pipeline> Get(const util::PipelineId& id);
  util::Result<util::PipelineId> Create(const PipelineDraft& draft);
  util::Result<void> Update(const util::PipelineId& id, const PipelinePatch& patch);
  util::Result<util::PipelineId> Copy(const util::PipelineId& id);
  // kConflict for the default pipeline or one that bots use.
  util::Result<void> Delete(const util::PipelineId& id);
  // {configs:[...]} as LangBot's `GET /pipelines/_/metadata` answers.
  util::JsonObject Metadata() const;

 private:
  // `base` deep-merged over the default config, then `config` over that, then checked.
  util::Result<util::JsonObject> MergeAndCheck(const util::JsonObject& base,
                                               const util::JsonObject& config) const;
  domain::Pipeline NewPipeline(const PipelineDraft& draft, util::JsonObject config) const;

  domain::PipelineRepository& repo_;
  const domain::PipelineTemplate& template_;
  const util::Clock& clock_;
  domain::ConversationRepository* conversations_ = nullptr;
  std::function<void(const util::PipelineId&)> on_change_;
  domain::ChangeFeed* feed_ = nullptr;
};

}  // namespace sb::services
