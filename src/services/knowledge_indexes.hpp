// The in-memory vector index of each knowledge base. The first search after a start (or after
// the base changed elsewhere) loads the vectors from the database into an exact index, which is
// quick to fill and searched by brute force (a few ms per 100,000 vectors); the approximate
// HNSW graph, which takes seconds to minutes to build for a large base, is built on a thread of
// its own meanwhile and swapped in when ready. Changes made by this process are applied to the
// index in place.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "domain/knowledge.hpp"
#include "knowledge/vector_index.hpp"

namespace sb::services {

// Thread-safe; blocking (reads the database when an index is loaded).
class KnowledgeIndexes {
 public:
  explicit KnowledgeIndexes(domain::KnowledgeRepository& repo,
                            knowledge::VectorIndexOptions graph_options = {});
  ~KnowledgeIndexes();

  // The base's index at its current generation; null when the base has no vector yet.
  util::Result<std::shared_ptr<const knowledge::VectorIndex>> Get(
      const util::KnowledgeBaseId& base);
  // Chunks stored (`vectors` in the order of change.ids) or removed (`vectors` empty) by this
  // process: applied when the cached index is at change.generation_before, else the cache is
  // dropped and the next Get loads it again.
  void Apply(const util::KnowledgeBaseId& base, const domain::ChunkChange& change,
             const std::vector<std::vector<float>>& vectors);
  void Forget(const util::KnowledgeBaseId& base);
  // Ends the graph builder (joined). Idempotent.
  void Stop();

  // For tests and the benchmark: true while no graph build is queued or running.
  bool Idle() const;

 private:
  struct Entry {
    std::int64_t generation = -1;
    std::shared_ptr<knowledge::VectorIndex> index;  // null: no vectors
    bool graph = false;                             // index is the HNSW one
  };
  void BuilderLoop();
  void BuildGraph(const std::string& base);
  void QueueGraphLocked(const std::string& base, const Entry& entry);

  domain::KnowledgeRepository& repo_;
  const knowledge::VectorIndexOptions graph_options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry> entries_;  // by base uuid; guarded by mu_
  std::set<std::string> to_build_;        // bases waiting for a graph; guarded by mu_
  std::string building_;                  // the base being built, or ""; guarded by mu_
  bool stopping_ = false;                 // guarded by mu_
  std::atomic<bool> abandon_{false};      // the build in progress is no longer wanted
  std::thread builder_;
};

}  // namespace sb::services
