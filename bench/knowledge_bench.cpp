// Benchmark of the knowledge-base vector index (issue 17): build rate, search latency, recall
// against brute force and memory, on synthetic embeddings. Prints a Markdown table.
//   sb_knowledge_bench                       # 100,000 x 256, 1,000 clusters, default options
//   sb_knowledge_bench --n 20000 --ef 128    # other sizes or options, for tuning
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "knowledge/vector_index.hpp"

namespace {

using sb::knowledge::VectorIndex;
using sb::knowledge::VectorIndexOptions;
using Clock = std::chrono::steady_clock;

struct Config {
  std::size_t n = 100'000;
  std::size_t dims = 256;
  std::size_t clusters = 1'000;  // 0: uniform on the sphere
  double spread = 1.0;           // norm of a point's offset from its cluster centre (centres: 1)
  std::size_t latency_queries = 2'000;
  std::size_t recall_queries = 200;
  std::size_t k = 10;
  VectorIndexOptions options;
};

// Embedding-like data: gaussian clusters around random unit centres (documents on a few
// hundred topics), or no structure at all with --clusters 0.
class Generator {
 public:
  Generator(const Config& config, unsigned seed) : config_(config), rng_(seed) {
    centres_.resize(config.clusters);
    for (auto& c : centres_) c = Gaussian(1.0 / std::sqrt(static_cast<double>(config.dims)));
  }

  std::vector<float> Next() {
    const double sigma = config_.spread / std::sqrt(static_cast<double>(config_.dims));
    std::vector<float> v = Gaussian(sigma);
    if (!centres_.empty()) {
      const auto& c =
          centres_[std::uniform_int_distribution<std::size_t>(0, centres_.size() - 1)(rng_)];
      for (std::size_t i = 0; i < v.size(); ++i) v[i] += c[i];
    }
    return v;
  }

 private:
  std::vector<float> Gaussian(double sigma) {
    std::normal_distribution<float> normal(0.0f, static_cast<float>(sigma));
    std::vector<float> v(config_.dims);
    for (auto& x : v) x = normal(rng_);
    return v;
  }

  const Config& config_;
  std::mt19937_64 rng_;
  std::vector<std::vector<float>> centres_;
};

long RssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(i, values.size() - 1)];
}

bool ParseArgs(int argc, char** argv, Config& config) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const auto value = static_cast<std::size_t>(std::strtoull(argv[i + 1], nullptr, 10));
    if (flag == "--n") {
      config.n = value;
    } else if (flag == "--dims") {
      config.dims = value;
    } else if (flag == "--clusters") {
      config.clusters = value;
    } else if (flag == "--spread") {
      config.spread = std::strtod(argv[i + 1], nullptr);
    } else if (flag == "--m") {
      config.options.m = value;
    } else if (flag == "--efc") {
      config.options.ef_construction = value;
    } else if (flag == "--ef") {
      config.options.ef_search = value;
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && config.n > 0 && config.dims > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, config)) {
    std::fprintf(stderr,
                 "usage: %s [--n N] [--dims D] [--clusters C] [--spread S] [--m M] [--efc E] "
                 "[--ef E]\n",
                 argv[0]);
    return 2;
  }

  Generator generator(config, 17);
  std::vector<std::vector<float>> vectors(config.n);
  for (auto& v : vectors) v = generator.Next();
  std::vector<std::vector<float>> queries(config.latency_queries);
  for (auto& q : queries) q = generator.Next();

  const long rss_before = RssKib();
  VectorIndex index(config.dims, config.options);
  const auto build_start = Clock::now();
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    if (!index.Add(static_cast<std::int64_t>(i), vectors[i])) {
      std::fprintf(stderr, "Add refused vector %zu\n", i);
      return 1;
    }
  }
  const double build_ms = Ms(Clock::now() - build_start);
  const long rss_after = RssKib();

  std::vector<double> latency_ms;
  latency_ms.reserve(queries.size());
  std::size_t returned = 0;
  for (const auto& q : queries) {
    const auto start = Clock::now();
    returned += index.Search(q, config.k).size();
    latency_ms.push_back(Ms(Clock::now() - start));
  }

  const std::size_t recall_queries = std::min(config.recall_queries, queries.size());
  std::size_t found = 0;
  std::size_t wanted = 0;
  std::vector<double> exact_ms;
  for (std::size_t i = 0; i < recall_queries; ++i) {
    const auto start = Clock::now();
    const auto truth = index.ExactSearch(queries[i], config.k);
    exact_ms.push_back(Ms(Clock::now() - start));
    std::set<std::int64_t> truth_ids;
    for (const auto& hit : truth) truth_ids.insert(hit.id);
    for (const auto& hit : index.Search(queries[i], config.k)) found += truth_ids.count(hit.id);
    wanted += truth.size();
  }
  const double recall = wanted ? static_cast<double>(found) / static_cast<double>(wanted) : 0;

  const double per_100k = 100'000.0 / static_cast<double>(config.n);
  const auto& o = config.options;
  std::printf("Data: %zu unit vectors of %zu dimensions, ", config.n, config.dims);
  if (config.clusters > 0) {
    std::printf("%zu gaussian clusters (offset norm %.2f around unit centres);", config.clusters,
                config.spread);
  } else {
    std::printf("uniform on the sphere;");
  }
  std::printf(
      " queries from the same distribution. Options: m %zu, ef_construction %zu, "
      "ef_search %zu, exact_below %zu.\n\n",
      o.m, o.ef_construction, o.ef_search, o.exact_below);
  std::printf("| measure | value |\n|---|---|\n");
  std::printf("| build (Add x %zu) | %.2f s, %.0f vectors/s |\n", config.n, build_ms / 1000,
              static_cast<double>(config.n) / (build_ms / 1000));
  std::printf("| search k=%zu, %zu queries | p50 %.3f ms, p99 %.3f ms, max %.3f ms |\n", config.k,
              queries.size(), Percentile(latency_ms, 0.5), Percentile(latency_ms, 0.99),
              Percentile(latency_ms, 1.0));
  std::printf("| mean results per search | %.2f |\n",
              static_cast<double>(returned) / static_cast<double>(queries.size()));
  std::printf("| recall@%zu vs ExactSearch, %zu queries | %.3f |\n", config.k, recall_queries,
              recall);
  std::printf("| ExactSearch (brute force) | p50 %.2f ms |\n", Percentile(exact_ms, 0.5));
  std::printf("| RSS growth (VmRSS) | %.1f MiB (%.1f MiB per 100,000 vectors) |\n",
              static_cast<double>(rss_after - rss_before) / 1024,
              static_cast<double>(rss_after - rss_before) / 1024 * per_100k);
  std::printf("| MemoryBytes() | %.1f MiB (vectors alone: %.1f MiB) |\n",
              static_cast<double>(index.MemoryBytes()) / (1024 * 1024),
              static_cast<double>(config.n * config.dims * sizeof(float)) / (1024 * 1024));
  return 0;
}
