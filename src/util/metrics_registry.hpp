// A small Prometheus metrics registry any layer can record into: counters, gauges and
// histograms with labels, a cap on series per family (new label sets past it are folded into
// one series whose labels are all "other"), and collectors that add samples at render time.
//   auto& messages = registry.Counter("switchboard_messages_total", "Messages.", {"bot",
//   "outcome"}); messages.Add({bot_id, "replied"});                     // any thread; a lock per
//   family registry.AddCollector([&](MetricsWriter& w) { ... });  // e.g. bots by runtime status
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sb::util {

using MetricLabels = std::vector<std::string>;  // values, in the family's label order

// Writes the text exposition format; used by collectors and by the registry itself.
class MetricsWriter {
 public:
  explicit MetricsWriter(std::string& out) : out_(out) {}
  // "# HELP" and "# TYPE" lines; once per family.
  void Header(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const std::vector<std::string>& label_names,
              const MetricLabels& values, double value);

 private:
  std::string& out_;
};

// One metric family. Thread-safe; Add/Set/Observe take the family's mutex briefly (a map
// lookup), never allocate for a series that exists, and never fail.
class MetricFamily {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  MetricFamily(std::string name, std::string help, Type type, std::vector<std::string> labels,
               std::vector<double> buckets, std::size_t max_series);

  void Add(const MetricLabels& labels, double delta = 1);  // counters and gauges
  void Set(const MetricLabels& labels, double value);      // gauges
  void Observe(const MetricLabels& labels, double value);  // histograms
  void Render(MetricsWriter& w) const;
  const std::string& name() const { return name_; }

 private:
  struct Series {
    double value = 0;                   // counter/gauge; the sum for histograms
    std::uint64_t count = 0;            // histograms
    std::vector<std::uint64_t> bucket;  // histograms: per bucket, not cumulative
  };
  Series& SeriesOf(const MetricLabels& labels);  // mu_ held

  const std::string name_;
  const std::string help_;
  const Type type_;
  const std::vector<std::string> labels_;
  const std::vector<double> buckets_;  // upper bounds, ascending
  const std::size_t max_series_;
  mutable std::mutex mu_;
  std::map<MetricLabels, Series> series_;  // guarded by mu_
};

// Thread-safe. Families are created once at wiring time and live as long as the registry.
class MetricsRegistry {
 public:
  static constexpr std::size_t kDefaultMaxSeries = 200;
  // Seconds: a model call between 50 ms and two minutes.
  static const std::vector<double>& DurationBuckets();

  // The family named `name`, created on first use (same type and labels expected).
  MetricFamily& Counter(const std::string& name, const std::string& help,
                        std::vector<std::string> labels,
                        std::size_t max_series = kDefaultMaxSeries);
  MetricFamily& Gauge(const std::string& name, const std::string& help,
                      std::vector<std::string> labels, std::size_t max_series = kDefaultMaxSeries);
  MetricFamily& Histogram(const std::string& name, const std::string& help,
                          std::vector<std::string> labels, std::vector<double> buckets,
                          std::size_t max_series = kDefaultMaxSeries);
  // Runs at every Render, on the rendering thread (the /metrics route, which may block); for
  // values that live elsewhere (bots by status, plugin or MCP server restarts).
  void AddCollector(std::function<void(MetricsWriter&)> collector);
  std::string Render() const;

 private:
  MetricFamily& Family(const std::string& name, const std::string& help, MetricFamily::Type type,
                       std::vector<std::string> labels, std::vector<double> buckets,
                       std::size_t max_series);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<MetricFamily>> families_;          // guarded by mu_
  std::vector<std::function<void(MetricsWriter&)>> collectors_;  // guarded by mu_
};

}  // namespace sb::util
