// A pipeline as the message path runs it: its config and the settings the message driver needs,
// read once per pipeline change instead of per message, and a cache of them shared by the bots
// and the debug chat.
//   PipelineCache cache(repository);
//   auto snapshot = cache.Load(bot.use_pipeline_uuid);   // may block: reads storage on a miss
//   if (snapshot && (*snapshot)->driver.aggregate) ...
//   cache.Changed(pipeline_id);                          // after an update or a delete
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "domain/pipeline.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

// trigger.message-aggregation and output.force-delay, clamped to sane bounds.
struct DriverSettings {
  bool aggregate = false;
  util::Duration aggregation_delay{1'500};  // 0..10 s
  util::Duration force_delay_min{0};        // 0..600 s; both 0: no delay
  util::Duration force_delay_max{0};        // >= min

  static DriverSettings Read(const util::JsonObject& config);
  // A pause drawn from [min, max] for `unit` in [0, 1).
  util::Duration ForceDelay(double unit) const;
};

struct PipelineSnapshot {
  util::PipelineId id;
  // The config with the plugin binding under domain::kExtensionsPreferencesKey.
  std::shared_ptr<const util::JsonObject> config;
  DriverSettings driver;

  static std::shared_ptr<const PipelineSnapshot> From(domain::Pipeline pipeline);
};

// Thread-safe.
class PipelineCache {
 public:
  explicit PipelineCache(domain::PipelineRepository& pipelines) : pipelines_(pipelines) {}

  // The pipeline `id` (the default pipeline when empty) as last read; null when it must be read.
  // Never blocks.
  std::shared_ptr<const PipelineSnapshot> Cached(const std::optional<util::PipelineId>& id) const;
  // Reads it from storage on a miss (blocks) and caches it. kNotFound when it is gone.
  util::Result<std::shared_ptr<const PipelineSnapshot>> Load(
      const std::optional<util::PipelineId>& id);
  // Forgets `id` and the default (which may have been it); a read in flight is not cached.
  void Changed(const util::PipelineId& id);

 private:
  static std::string KeyOf(const std::optional<util::PipelineId>& id);

  domain::PipelineRepository& pipelines_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const PipelineSnapshot>> cached_;  // guarded by mu_
  std::uint64_t generation_ = 0;                                           // guarded by mu_
};

}  // namespace sb::pipeline
