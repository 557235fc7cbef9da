#include "pipeline/pipeline_snapshot.hpp"

#include <algorithm>
#include <cmath>

#include "domain/plugin_hooks.hpp"
#include "pipeline/config_values.hpp"

namespace sb::pipeline {

namespace {

util::Duration Seconds(double seconds, double max) {
  if (!std::isfinite(seconds)) seconds = 0;
  return util::Duration(static_cast<std::int64_t>(std::clamp(seconds, 0.0, max) * 1000.0));
}

}  // namespace

DriverSettings DriverSettings::Read(const util::JsonObject& config) {
  DriverSettings s;
  s.aggregate = GetBool(config, {"trigger", "message-aggregation", "enabled"}, false);
  s.aggregation_delay =
      Seconds(GetNumber(config, {"trigger", "message-aggregation", "delay"}, 1.5), 10.0);
  s.force_delay_min = Seconds(GetNumber(config, {"output", "force-delay", "min"}, 0), 600.0);
  s.force_delay_max = std::max(
      s.force_delay_min, Seconds(GetNumber(config, {"output", "force-delay", "max"}, 0), 600.0));
  return s;
}

util::Duration DriverSettings::ForceDelay(double unit) const {
  if (force_delay_max.count() <= 0) return util::Duration(0);
  const double span = static_cast<double>((force_delay_max - force_delay_min).count());
  return force_delay_min + util::Duration(static_cast<std::int64_t>(span * unit));
}

std::shared_ptr<const PipelineSnapshot> PipelineSnapshot::From(domain::Pipeline pipeline) {
  auto snapshot = std::make_shared<PipelineSnapshot>();
  snapshot->id = pipeline.uuid;
  pipeline.config[domain::kExtensionsPreferencesKey] = std::move(pipeline.extensions_preferences);
  snapshot->driver = DriverSettings::Read(pipeline.config);
  snapshot->config = std::make_shared<const util::JsonObject>(std::move(pipeline.config));
  return snapshot;
}

std::string PipelineCache::KeyOf(const std::optional<util::PipelineId>& id) {
  return id ? id->str() : std::string();
}

std::shared_ptr<const PipelineSnapshot> PipelineCache::Cached(
    const std::optional<util::PipelineId>& id) const {
  std::lock_guard lock(mu_);
  auto it = cached_.find(KeyOf(id));
  return it == cached_.end() ? nullptr : it->second;
}

util::Result<std::shared_ptr<const PipelineSnapshot>> PipelineCache::Load(
    const std::optional<util::PipelineId>& id) {
  const std::string key = KeyOf(id);
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    if (auto it = cached_.find(key); it != cached_.end()) return it->second;
    generation = generation_;
  }
  auto pipeline = id ? pipelines_.Get(*id) : pipelines_.GetDefault();
  if (!pipeline) return tl::unexpected(pipeline.error());
  auto snapshot = PipelineSnapshot::From(std::move(*pipeline));
  std::lock_guard lock(mu_);
  // A change while we read must not leave the older settings cached.
  if (generation == generation_) cached_[key] = snapshot;
  return snapshot;
}

void PipelineCache::Changed(const util::PipelineId& id) {
  std::lock_guard lock(mu_);
  ++generation_;
  cached_.erase(id.str());
  cached_.erase("");
}

}  // namespace sb::pipeline
