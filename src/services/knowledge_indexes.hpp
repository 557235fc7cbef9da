// The in-memory vector index of each knowledge base, built from the vectors in the database on
// first use and whenever the base's chunk generation moved without this process following it (a
// restart, another instance); changes made here are applied to it directly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "domain/knowledge.hpp"
#include "knowledge/vector_index.hpp"

namespace sb::services {

// Thread-safe; blocking (reads the database when an index is built).
class KnowledgeIndexes {
 public:
  explicit KnowledgeIndexes(domain::KnowledgeRepository& repo) : repo_(repo) {}

  // The base's index at its current generation; null when the base has no vector yet.
  util::Result<std::shared_ptr<const knowledge::VectorIndex>> Get(
      const util::KnowledgeBaseId& base);
  // Chunks stored (`vectors` in the order of change.ids) or removed (`vectors` empty) by this
  // process: applied when the cached index is at change.generation_before, else the cache is
  // dropped and the next Get rebuilds.
  void Apply(const util::KnowledgeBaseId& base, const domain::ChunkChange& change,
             const std::vector<std::vector<float>>& vectors);
  void Forget(const util::KnowledgeBaseId& base);

 private:
  struct Entry {
    std::int64_t generation = -1;
    std::shared_ptr<knowledge::VectorIndex> index;  // null: no vectors
  };

  domain::KnowledgeRepository& repo_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // by base uuid; guarded by mu_
  std::mutex build_mu_;                   // one build at a time (they are memory-heavy)
};

}  // namespace sb::services
