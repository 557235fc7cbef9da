#include "util/metrics_registry.hpp"

#include <fmt/format.h>

#include <cmath>

namespace sb::util {

namespace {

// Label values are escaped as the text format requires: backslash, quote, newline.
void AppendEscaped(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void AppendNumber(std::string& out, double v) {
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == std::floor(v) && std::fabs(v) < 1e15) {
    out += fmt::format("{}", static_cast<std::int64_t>(v));
  } else {
    out += fmt::format("{}", v);
  }
}

}  // namespace

void MetricsWriter::Header(std::string_view name, std::string_view type, std::string_view help) {
  out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void MetricsWriter::Sample(std::string_view name, const std::vector<std::string>& label_names,
                           const MetricLabels& values, double value) {
  out_ += name;
  if (!label_names.empty()) {
    out_ += '{';
    for (std::size_t i = 0; i < label_names.size(); ++i) {
      if (i) out_ += ',';
      out_ += label_names[i];
      out_ += "=\"";
      AppendEscaped(out_, i < values.size() ? values[i] : std::string());
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  AppendNumber(out_, value);
  out_ += '\n';
}

MetricFamily::MetricFamily(std::string name, std::string help, Type type,
                           std::vector<std::string> labels, std::vector<double> buckets,
                           std::size_t max_series)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      labels_(std::move(labels)),
      buckets_(std::move(buckets)),
      max_series_(std::max<std::size_t>(max_series, 1)) {}

MetricFamily::Series& MetricFamily::SeriesOf(const MetricLabels& labels) {
  auto it = series_.find(labels);
  if (it != series_.end()) return it->second;
  // Past the cap, every new label set shares one series: memory and the scrape stay bounded
  // whatever a platform or a config sends (one slot is kept for it).
  MetricLabels key = labels;
  key.resize(labels_.size());
  if (series_.size() >= max_series_ - 1) key.assign(labels_.size(), "other");
  auto [slot, inserted] = series_.try_emplace(std::move(key));
  if (inserted && type_ == Type::kHistogram) slot->second.bucket.assign(buckets_.size(), 0);
  return slot->second;
}

void MetricFamily::Add(const MetricLabels& labels, double delta) {
  std::lock_guard lock(mu_);
  SeriesOf(labels).value += delta;
}

void MetricFamily::Set(const MetricLabels& labels, double value) {
  std::lock_guard lock(mu_);
  SeriesOf(labels).value = value;
}

void MetricFamily::Observe(const MetricLabels& labels, double value) {
  std::lock_guard lock(mu_);
  Series& s = SeriesOf(labels);
  s.value += value;
  ++s.count;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (value <= buckets_[i]) {
      ++s.bucket[i];
      break;
    }
  }
}

void MetricFamily::Render(MetricsWriter& w) const {
  static constexpr const char* kTypes[] = {"counter", "gauge", "histogram"};
  std::lock_guard lock(mu_);
  w.Header(name_, kTypes[static_cast<int>(type_)], help_);
  for (const auto& [labels, s] : series_) {
    if (type_ != Type::kHistogram) {
      w.Sample(name_, labels_, labels, s.value);
      continue;
    }
    std::vector<std::string> names = labels_;
    names.push_back("le");
    MetricLabels values = labels;
    values.push_back({});
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      cumulative += s.bucket[i];
      values.back() = fmt::format("{}", buckets_[i]);
      w.Sample(name_ + "_bucket", names, values, static_cast<double>(cumulative));
    }
    values.back() = "+Inf";
    w.Sample(name_ + "_bucket", names, values, static_cast<double>(s.count));
    w.Sample(name_ + "_sum", labels_, labels, s.value);
    w.Sample(name_ + "_count", labels_, labels, static_cast<double>(s.count));
  }
}

const std::vector<double>& MetricsRegistry::DurationBuckets() {
  static const std::vector<double> kBuckets = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
  return kBuckets;
}

MetricFamily& MetricsRegistry::Family(const std::string& name, const std::string& help,
                                      MetricFamily::Type type, std::vector<std::string> labels,
                                      std::vector<double> buckets, std::size_t max_series) {
  std::lock_guard lock(mu_);
  for (auto& f : families_) {
    if (f->name() == name) return *f;
  }
  families_.push_back(std::make_unique<MetricFamily>(name, help, type, std::move(labels),
                                                     std::move(buckets), max_series));
  return *families_.back();
}

MetricFamily& MetricsRegistry::Counter(const std::string& name, const std::string& help,
                                       std::vector<std::string> labels, std::size_t max_series) {
  return Family(name, help, MetricFamily::Type::kCounter, std::move(labels), {}, max_series);
}

MetricFamily& MetricsRegistry::Gauge(const std::string& name, const std::string& help,
                                     std::vector<std::string> labels, std::size_t max_series) {
  return Family(name, help, MetricFamily::Type::kGauge, std::move(labels), {}, max_series);
}

MetricFamily& MetricsRegistry::Histogram(const std::string& name, const std::string& help,
                                         std::vector<std::string> labels,
                                         std::vector<double> buckets, std::size_t max_series) {
  return Family(name, help, MetricFamily::Type::kHistogram, std::move(labels), std::move(buckets),
                max_series);
}

void MetricsRegistry::AddCollector(std::function<void(MetricsWriter&)> collector) {
  std::lock_guard lock(mu_);
  collectors_.push_back(std::move(collector));
}

std::string MetricsRegistry::Render() const {
  std::vector<const MetricFamily*> families;
  std::vector<std::function<void(MetricsWriter&)>> collectors;
  {
    std::lock_guard lock(mu_);
    for (const auto& f : families_) families.push_back(f.get());
    collectors = collectors_;
  }
  std::string out;
  MetricsWriter w(out);
  for (const auto* f : families) f->Render(w);
  for (const auto& c : collectors) c(w);
  return out;
}

}  // namespace sb::util
