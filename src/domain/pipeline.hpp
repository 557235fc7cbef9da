// A pipeline: the named configuration a bot's messages run through (trigger, safety, ai, output).
#pragma once

#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::domain {

struct Pipeline {
  util::PipelineId uuid;
  std::string name;
  std::string description;
  std::string emoji;
  util::JsonObject config;
  util::JsonArray stages;
  bool is_default = false;
  std::string for_version;
  util::JsonObject extensions_preferences;
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class PipelineRepository {
 public:
  virtual ~PipelineRepository() = default;
  // Oldest first.
  virtual util::Result<std::vector<Pipeline>> List() = 0;
  // kNotFound when absent.
  virtual util::Result<Pipeline> Get(const util::PipelineId& id) = 0;
  // kNotFound when no pipeline is the default.
  virtual util::Result<Pipeline> GetDefault() = 0;
  // kConflict when `pipeline.is_default` and a default already exists.
  virtual util::Result<void> Insert(const Pipeline& pipeline) = 0;
  // Replaces every field but uuid, is_default and created_at. kNotFound when absent.
  virtual util::Result<void> Update(const Pipeline& pipeline) = 0;
  // kNotFound when absent; kConflict when it is the default or a bot uses it (atomically).
  virtual util::Result<void> Delete(const util::PipelineId& id) = 0;
  // Number of bots whose use_pipeline_uuid is `id`.
  virtual util::Result<int> CountBotsUsing(const util::PipelineId& id) = 0;
};

}  // namespace sb::domain
