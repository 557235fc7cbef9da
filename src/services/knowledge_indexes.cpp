#include "services/knowledge_indexes.hpp"

namespace sb::services {

util::Result<std::shared_ptr<const knowledge::VectorIndex>> KnowledgeIndexes::Get(
    const util::KnowledgeBaseId& base) {
  auto generation = repo_.ChunkGeneration(base);
  if (!generation) return tl::unexpected(generation.error());
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(base.str());
    if (it != entries_.end() && it->second.generation == *generation) return it->second.index;
  }
  std::lock_guard build(build_mu_);
  {
    // Another caller may have built it while this one waited.
    std::lock_guard lock(mu_);
    auto it = entries_.find(base.str());
    if (it != entries_.end() && it->second.generation == *generation) return it->second.index;
  }
  std::shared_ptr<knowledge::VectorIndex> index;
  auto read = repo_.ForEachVector(base, [&](std::int64_t id, std::span<const float> vector) {
    if (!index) index = std::make_shared<knowledge::VectorIndex>(vector.size());
    index->Add(id, vector);  // a vector of other dimensions (a changed model) is skipped
  });
  if (!read) return tl::unexpected(read.error());
  std::lock_guard lock(mu_);
  entries_[base.str()] = Entry{*read, index};
  return std::shared_ptr<const knowledge::VectorIndex>(index);
}

void KnowledgeIndexes::Apply(const util::KnowledgeBaseId& base, const domain::ChunkChange& change,
                             const std::vector<std::vector<float>>& vectors) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(base.str());
  if (it == entries_.end()) return;  // built on first use
  Entry& entry = it->second;
  if (entry.generation != change.generation_before) {
    entries_.erase(it);
    return;
  }
  if (vectors.empty()) {
    if (entry.index) {
      for (std::int64_t id : change.ids) entry.index->Remove(id);
    }
  } else {
    for (std::size_t i = 0; i < change.ids.size() && i < vectors.size(); ++i) {
      if (!entry.index) entry.index = std::make_shared<knowledge::VectorIndex>(vectors[i].size());
      entry.index->Add(change.ids[i], vectors[i]);
    }
  }
  entry.generation = change.generation_after;
}

void KnowledgeIndexes::Forget(const util::KnowledgeBaseId& base) {
  std::lock_guard lock(mu_);
  entries_.erase(base.str());
}

}  // namespace sb::services
