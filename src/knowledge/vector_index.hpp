// Nearest passages by cosine similarity, for one knowledge base: an approximate HNSW graph
// (Debian's hnswlib) over L2-normalised float vectors, with exact search below a size where the
// graph does not pay. Built in memory from the vectors stored in the database; never the
// source of truth.
//   VectorIndex index(256);
//   index.Add(chunk_id, vector);
//   for (auto [id, score] : index.Search(query, 10)) ...   // best first, score in [-1, 1]
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace sb::knowledge {

struct ScoredId {
  std::int64_t id = 0;
  float score = 0;  // cosine similarity
};

// Defaults tuned with bench/knowledge_bench.cpp and the unit test's worst case (20,000 points
// uniform on the 64-dimensional sphere: recall@10 0.71 at ef_search 64, 0.965 at 256). On
// 100,000 clustered 256-dimensional vectors, ef_construction 100 builds twice as fast as 200 at
// the same recall (1.0), and ef_search 256 keeps p99 search near 1.2 ms (2026-11 dev machine);
// with clusters twice as wide recall@10 is 0.86 at ef_search 64, 0.93 at 256, 0.95 at 512.
struct VectorIndexOptions {
  std::size_t m = 16;  // graph degree (2m links per vector at the bottom level); at least 2
  std::size_t ef_construction = 100;
  std::size_t ef_search = 256;      // raised to k when k is larger
  std::size_t exact_below = 2'000;  // vectors; fewer are searched exactly
};

// Thread-safe: searches run concurrently; Add and Remove take the index exclusively, and a
// waiting Add or Remove goes before searches that arrive after it (no writer starvation).
class VectorIndex {
 public:
  explicit VectorIndex(std::size_t dimensions, VectorIndexOptions options = {});
  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  std::size_t dimensions() const;
  std::size_t size() const;  // live vectors

  // Adds, or replaces the vector of an id already present. `vector` must have dimensions()
  // values (else ignored and false); it is normalised here. An all-zero vector, or one with a
  // NaN or infinity, is refused (false; a refused replacement keeps the old vector).
  bool Add(std::int64_t id, std::span<const float> vector);
  // No-op for an unknown id.
  void Remove(std::int64_t id);

  // Up to k ids, best first, ties by smaller id (approximate above exact_below). Empty for a
  // query of the wrong size, all zero or not finite.
  std::vector<ScoredId> Search(std::span<const float> query, std::size_t k) const;
  // The same by brute force (for small sets, and as the reference for recall).
  std::vector<ScoredId> ExactSearch(std::span<const float> query, std::size_t k) const;
  // The cosine similarity of the stored vector of `id` and `query`; nullopt for an unknown id
  // or a query Search would refuse.
  std::optional<float> Similarity(std::int64_t id, std::span<const float> query) const;

  // Approximate heap bytes held (vectors, graph, id maps).
  std::size_t MemoryBytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sb::knowledge
