#include "app/metrics_collectors.hpp"

#include <map>
#include <string>

#include "runtime/bot_runtime_manager.hpp"

namespace sb::app {

void AddMetricsCollectors(util::MetricsRegistry& registry, Core& core, BotStack& bots,
                          domain::PluginManager& plugins, services::MonitoringRecorder* recorder) {
  // Several instances behind one load balancer: which one a scrape reached, and the bots whose
  // leases it holds (at most 200 series).
  registry.AddCollector([&core, &bots](util::MetricsWriter& w) {
    w.Header("switchboard_instance_info", "gauge", "This instance's id (always 1).");
    w.Sample("switchboard_instance_info", {"instance_id"}, {core.instance_id()}, 1);
    const auto owned = bots.OwnedBots();
    w.Header("switchboard_owned_bots", "gauge",
             "Bots whose platform connection this instance runs (it holds their lease).");
    w.Sample("switchboard_owned_bots", {"instance_id"}, {core.instance_id()},
             static_cast<double>(owned.size()));
    w.Header("switchboard_bot_owned", "gauge", "1 for each bot whose lease this instance holds.");
    for (std::size_t i = 0; i < owned.size() && i < 200; ++i) {
      w.Sample("switchboard_bot_owned", {"instance_id", "bot"},
               {core.instance_id(), owned[i].str()}, 1);
    }
  });
  registry.AddCollector([&core, &bots](util::MetricsWriter& w) {
    auto list = core.storage().bots().List();
    if (!list) return;
    // Every state appears, at zero too, so a graph of "error" bots does not vanish at zero.
    std::map<std::string, int> by_status{
        {"stopped", 0}, {"starting", 0}, {"running", 0}, {"error", 0}, {"disabled", 0}};
    for (const auto& bot : *list) {
      if (!bot.enable) {
        ++by_status["disabled"];
        continue;
      }
      auto status = bots.runtime().Status(bot.uuid);
      ++by_status[status ? domain::RuntimeStateName(status->state) : "stopped"];
    }
    w.Header("switchboard_bots", "gauge", "Bots by runtime status.");
    for (const auto& [status, n] : by_status) w.Sample("switchboard_bots", {"status"}, {status}, n);
  });
  registry.AddCollector([&plugins](util::MetricsWriter& w) {
    auto list = plugins.List();
    if (!list) return;
    w.Header("switchboard_plugin_restarts", "gauge",
             "Crash restarts of each plugin since it was last started or enabled.");
    for (const auto& p : *list) {
      w.Sample("switchboard_plugin_restarts", {"plugin"}, {p.plugin.key().id()}, p.restarts);
    }
  });
  if (!recorder) return;
  registry.AddCollector([recorder](util::MetricsWriter& w) {
    const auto s = recorder->Stats();
    w.Header("switchboard_monitoring_queue_depth", "gauge",
             "Monitoring records waiting to be written.");
    w.Sample("switchboard_monitoring_queue_depth", {}, {}, static_cast<double>(s.depth));
    w.Header("switchboard_monitoring_records_total", "counter",
             "Monitoring records by fate: written, dropped (queue full), failed (write error), "
             "pruned (retention).");
    for (auto [fate, n] : {std::pair{"written", s.written}, std::pair{"dropped", s.dropped},
                           std::pair{"failed", s.failed}, std::pair{"pruned", s.pruned}}) {
      w.Sample("switchboard_monitoring_records_total", {"fate"}, {fate}, static_cast<double>(n));
    }
  });
}

}  // namespace sb::app
