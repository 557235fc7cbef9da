#include "services/knowledge_indexes.hpp"

#include <spdlog/spdlog.h>

#include <limits>

namespace sb::services {
namespace {

knowledge::VectorIndexOptions ExactOnly() {
  knowledge::VectorIndexOptions o;
  o.exact_below = std::numeric_limits<std::size_t>::max();
  return o;
}

}  // namespace

KnowledgeIndexes::KnowledgeIndexes(domain::KnowledgeRepository& repo,
                                   knowledge::VectorIndexOptions graph_options)
    : repo_(repo), graph_options_(graph_options), builder_([this] { BuilderLoop(); }) {}

KnowledgeIndexes::~KnowledgeIndexes() { Stop(); }

void KnowledgeIndexes::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  abandon_ = true;
  cv_.notify_all();
  if (builder_.joinable()) builder_.join();
}

bool KnowledgeIndexes::Idle() const {
  std::lock_guard lock(mu_);
  return to_build_.empty() && building_.empty();
}

void KnowledgeIndexes::QueueGraphLocked(const std::string& base, const Entry& entry) {
  if (entry.graph || !entry.index || entry.index->size() < graph_options_.exact_below) return;
  if (building_ == base) return;
  if (to_build_.insert(base).second) cv_.notify_all();
}

util::Result<std::shared_ptr<const knowledge::VectorIndex>> KnowledgeIndexes::Get(
    const util::KnowledgeBaseId& base) {
  auto generation = repo_.ChunkGeneration(base);
  if (!generation) return tl::unexpected(generation.error());
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(base.str());
    if (it != entries_.end() && it->second.generation == *generation) {
      QueueGraphLocked(base.str(), it->second);
      return std::shared_ptr<const knowledge::VectorIndex>(it->second.index);
    }
  }
  // Loaded outside the lock: other bases stay searchable meanwhile. Two searches of one stale
  // base may both load it; the later one wins, and both indexes are right.
  std::shared_ptr<knowledge::VectorIndex> index;
  auto read = repo_.ForEachVector(base, [&](std::int64_t id, std::span<const float> vector) {
    if (!index) index = std::make_shared<knowledge::VectorIndex>(vector.size(), ExactOnly());
    index->Add(id, vector);  // a vector of other dimensions (a changed model) is skipped
  });
  if (!read) return tl::unexpected(read.error());
  std::lock_guard lock(mu_);
  Entry& entry = entries_[base.str()];
  entry = Entry{*read, index, false};
  if (building_ == base.str()) abandon_ = true;  // that build started from older vectors
  QueueGraphLocked(base.str(), entry);
  return std::shared_ptr<const knowledge::VectorIndex>(index);
}

void KnowledgeIndexes::Apply(const util::KnowledgeBaseId& base, const domain::ChunkChange& change,
                             const std::vector<std::vector<float>>& vectors) {
  std::shared_ptr<knowledge::VectorIndex> index;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(base.str());
    if (it == entries_.end()) return;  // loaded on first use
    Entry& entry = it->second;
    if (entry.generation != change.generation_before) {
      entries_.erase(it);
      return;
    }
    if (!entry.index && !vectors.empty()) {
      entry.index = std::make_shared<knowledge::VectorIndex>(vectors.front().size(), ExactOnly());
      entry.graph = false;
    }
    entry.generation = change.generation_after;
    index = entry.index;
    // A graph being built from the vectors before this change would miss it.
    if (building_ == base.str()) abandon_ = true;
  }
  // Outside the lock: adding to a graph takes a while, and the index has its own.
  if (!index) return;
  if (vectors.empty()) {
    for (std::int64_t id : change.ids) index->Remove(id);
  } else {
    for (std::size_t i = 0; i < change.ids.size() && i < vectors.size(); ++i) {
      index->Add(change.ids[i], vectors[i]);
    }
  }
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(base.str()); it != entries_.end()) {
    QueueGraphLocked(base.str(), it->second);
  }
}

void KnowledgeIndexes::Forget(const util::KnowledgeBaseId& base) {
  std::lock_guard lock(mu_);
  entries_.erase(base.str());
  to_build_.erase(base.str());
  if (building_ == base.str()) abandon_ = true;
}

void KnowledgeIndexes::BuilderLoop() {
  for (;;) {
    std::string base;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !to_build_.empty(); });
      if (stopping_) return;
      base = *to_build_.begin();
      to_build_.erase(to_build_.begin());
      building_ = base;
      abandon_ = false;
    }
    try {
      BuildGraph(base);
    } catch (const std::exception& e) {
      spdlog::error("knowledge: building the index of {} failed: {}", base, e.what());
    }
    std::lock_guard lock(mu_);
    building_.clear();
  }
}

// The graph from the database's vectors at one generation, swapped in if the base is still at
// that generation when it is done (else thrown away; the next search queues another).
void KnowledgeIndexes::BuildGraph(const std::string& base) {
  const auto id = util::KnowledgeBaseId::FromTrusted(base);
  // Copied out first: the build takes a while, and a read transaction held that long would keep
  // the database's write-ahead log from being checkpointed.
  std::vector<std::int64_t> ids;
  std::vector<float> flat;
  std::size_t dimensions = 0;
  auto generation = repo_.ForEachVector(id, [&](std::int64_t chunk, std::span<const float> v) {
    if (dimensions == 0) dimensions = v.size();
    if (v.size() != dimensions) return;
    ids.push_back(chunk);
    flat.insert(flat.end(), v.begin(), v.end());
  });
  if (!generation || ids.empty()) return;
  auto graph = std::make_shared<knowledge::VectorIndex>(dimensions, graph_options_);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (abandon_) return;
    graph->Add(ids[i], std::span<const float>(flat.data() + i * dimensions, dimensions));
  }
  flat.clear();
  flat.shrink_to_fit();
  std::lock_guard lock(mu_);
  auto it = entries_.find(base);
  if (abandon_ || it == entries_.end() || it->second.generation != *generation) return;
  it->second.index = std::move(graph);
  it->second.graph = true;
}

}  // namespace sb::services
