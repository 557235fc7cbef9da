// The /metrics series whose values live in other objects (bots by runtime status, plugin
// restarts, the monitoring writer's queue), read at scrape time. Other parts (MCP servers) add
// theirs the same way: registry.AddCollector([&](util::MetricsWriter& w) { ... }).
//   AddMetricsCollectors(registry, core, bots, plugins, recorder_or_null);
#pragma once

#include "app/bot_stack.hpp"
#include "app/core.hpp"
#include "domain/plugin.hpp"
#include "services/monitoring_recorder.hpp"
#include "util/metrics_registry.hpp"

namespace sb::app {

// Everything given outlives the registry's last Render (the server stops first).
void AddMetricsCollectors(util::MetricsRegistry& registry, Core& core, BotStack& bots,
                          domain::PluginManager& plugins, services::MonitoringRecorder* recorder);

}  // namespace sb::app
