#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "knowledge/vector_index.hpp"

namespace sb::knowledge {
namespace {

using Vec = std::vector<float>;

// Points uniform on the sphere (normal coordinates), the hardest case for a graph index.
std::vector<Vec> RandomVectors(std::size_t count, std::size_t dims, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<Vec> out(count, Vec(dims));
  for (auto& v : out) {
    for (auto& x : v) x = normal(rng);
  }
  return out;
}

std::vector<std::int64_t> Ids(const std::vector<ScoredId>& hits) {
  std::vector<std::int64_t> ids;
  for (const auto& h : hits) ids.push_back(h.id);
  return ids;
}

double RecallAt(const VectorIndex& index, const std::vector<Vec>& queries, std::size_t k) {
  std::size_t found = 0;
  std::size_t wanted = 0;
  for (const auto& q : queries) {
    const auto truth = Ids(index.ExactSearch(q, k));
    const auto got = Ids(index.Search(q, k));
    const std::set<std::int64_t> truth_set(truth.begin(), truth.end());
    for (auto id : got) found += truth_set.count(id);
    wanted += truth.size();
  }
  return wanted == 0 ? 0 : static_cast<double>(found) / static_cast<double>(wanted);
}

TEST(VectorIndex, ExactOrderAndScoresOnASmallSet) {
  VectorIndex index(3);
  ASSERT_TRUE(index.Add(1, Vec{1, 0, 0}));
  ASSERT_TRUE(index.Add(2, Vec{0, 1, 0}));
  ASSERT_TRUE(index.Add(3, Vec{2, 2, 0}));  // not unit length: normalised on Add
  ASSERT_TRUE(index.Add(4, Vec{-1, 0, 0}));
  EXPECT_EQ(index.size(), 4u);
  EXPECT_EQ(index.dimensions(), 3u);

  const auto hits = index.Search(Vec{10, 1, 0}, 3);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(Ids(hits), (std::vector<std::int64_t>{1, 3, 2}));
  const float norm = std::sqrt(101.0f);
  EXPECT_NEAR(hits[0].score, 10 / norm, 1e-6);
  EXPECT_NEAR(hits[1].score, 11 / norm / std::sqrt(2.0f), 1e-6);
  EXPECT_NEAR(hits[2].score, 1 / norm, 1e-6);

  const auto all = index.Search(Vec{1, 0, 0}, 10);  // k larger than the index
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all.back().id, 4);
  EXPECT_NEAR(all.back().score, -1.0f, 1e-6);
  EXPECT_TRUE(index.Search(Vec{1, 0, 0}, 0).empty());
}

TEST(VectorIndex, TiesAreBrokenByIdSoResultsAreStable) {
  VectorIndex index(2);
  for (std::int64_t id : {7, 3, 5}) ASSERT_TRUE(index.Add(id, Vec{1, 1}));
  EXPECT_EQ(Ids(index.Search(Vec{1, 1}, 3)), (std::vector<std::int64_t>{3, 5, 7}));
}

TEST(VectorIndex, BelowExactBelowSearchIsExact) {
  VectorIndex index(32, {.exact_below = 1'000});
  const auto vectors = RandomVectors(800, 32, 1);
  for (std::size_t i = 0; i < vectors.size(); ++i) ASSERT_TRUE(index.Add(100 + i, vectors[i]));
  for (const auto& q : RandomVectors(20, 32, 2)) {
    const auto approx = index.Search(q, 10);
    const auto exact = index.ExactSearch(q, 10);
    ASSERT_EQ(Ids(approx), Ids(exact));
    for (std::size_t i = 0; i < exact.size(); ++i) EXPECT_EQ(approx[i].score, exact[i].score);
  }
}

TEST(VectorIndex, WrongDimensionsAreRefused) {
  VectorIndex index(4);
  EXPECT_FALSE(index.Add(1, Vec{1, 0, 0}));
  EXPECT_FALSE(index.Add(1, Vec{1, 0, 0, 0, 0}));
  EXPECT_FALSE(index.Add(1, Vec{}));
  EXPECT_EQ(index.size(), 0u);
  ASSERT_TRUE(index.Add(1, Vec{1, 0, 0, 0}));
  EXPECT_TRUE(index.Search(Vec{1, 0, 0}, 5).empty());
  EXPECT_TRUE(index.ExactSearch(Vec{1, 0, 0, 0, 0}, 5).empty());
  EXPECT_FALSE(index.Similarity(1, Vec{1, 0, 0}).has_value());

  VectorIndex no_dimensions(0);
  EXPECT_FALSE(no_dimensions.Add(1, Vec{}));
  EXPECT_TRUE(no_dimensions.Search(Vec{}, 5).empty());
}

TEST(VectorIndex, ZeroAndNonFiniteVectorsAreRefused) {
  VectorIndex index(3);
  EXPECT_FALSE(index.Add(1, Vec{0, 0, 0}));
  EXPECT_FALSE(index.Add(2, Vec{1, std::numeric_limits<float>::quiet_NaN(), 0}));
  EXPECT_FALSE(index.Add(3, Vec{std::numeric_limits<float>::infinity(), 0, 0}));
  EXPECT_EQ(index.size(), 0u);
  // A refused replacement keeps the old vector.
  ASSERT_TRUE(index.Add(4, Vec{0, 0, 1}));
  EXPECT_FALSE(index.Add(4, Vec{0, 0, 0}));
  EXPECT_NEAR(*index.Similarity(4, Vec{0, 0, 5}), 1.0f, 1e-6);
  // A query without a direction has no nearest vectors.
  EXPECT_TRUE(index.Search(Vec{0, 0, 0}, 3).empty());
  EXPECT_FALSE(index.Similarity(4, Vec{0, 0, 0}).has_value());
  // Tiny but non-zero components still have a direction.
  EXPECT_TRUE(index.Add(5, Vec{1e-30f, 0, 0}));
  EXPECT_NEAR(*index.Similarity(5, Vec{1, 0, 0}), 1.0f, 1e-6);
}

TEST(VectorIndex, SimilarityIsTheCosineOfTheStoredVector) {
  VectorIndex index(2);
  ASSERT_TRUE(index.Add(1, Vec{3, 4}));
  EXPECT_NEAR(*index.Similarity(1, Vec{3, 4}), 1.0f, 1e-6);
  EXPECT_NEAR(*index.Similarity(1, Vec{1, 0}), 0.6f, 1e-6);
  EXPECT_NEAR(*index.Similarity(1, Vec{-4, 3}), 0.0f, 1e-6);
  EXPECT_NEAR(*index.Similarity(1, Vec{-3, -4}), -1.0f, 1e-6);
  EXPECT_FALSE(index.Similarity(2, Vec{3, 4}).has_value());
}

TEST(VectorIndex, AddingAnExistingIdReplacesItsVector) {
  VectorIndex index(2);
  ASSERT_TRUE(index.Add(1, Vec{1, 0}));
  ASSERT_TRUE(index.Add(2, Vec{0.8f, 0.6f}));
  ASSERT_TRUE(index.Add(1, Vec{0, 1}));
  EXPECT_EQ(index.size(), 2u);
  EXPECT_NEAR(*index.Similarity(1, Vec{0, 1}), 1.0f, 1e-6);
  const auto hits = index.Search(Vec{1, 0}, 2);
  EXPECT_EQ(Ids(hits), (std::vector<std::int64_t>{2, 1}));
  EXPECT_NEAR(hits[1].score, 0.0f, 1e-6);
}

TEST(VectorIndex, RemovedIdsAreNeverReturned) {
  VectorIndex index(2);
  ASSERT_TRUE(index.Add(1, Vec{1, 0}));
  ASSERT_TRUE(index.Add(2, Vec{1, 0.1f}));
  index.Remove(1);
  index.Remove(1);   // twice: no-op
  index.Remove(42);  // unknown: no-op
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(Ids(index.Search(Vec{1, 0}, 5)), (std::vector<std::int64_t>{2}));
  EXPECT_FALSE(index.Similarity(1, Vec{1, 0}).has_value());
  // The freed place is reused by the next id.
  ASSERT_TRUE(index.Add(3, Vec{0, 1}));
  EXPECT_EQ(Ids(index.Search(Vec{0, 1}, 5)), (std::vector<std::int64_t>{3, 2}));
  index.Remove(2);
  index.Remove(3);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.Search(Vec{0, 1}, 5).empty());
}

// Once the graph exists: removal, re-adding removed ids, reusing freed places for new ids and
// replacing vectors all keep the answers right.
TEST(VectorIndex, GraphKeepsRemovalsAndReplacements) {
  constexpr std::size_t kDims = 16;
  constexpr std::int64_t kCount = 3'000;
  VectorIndex index(kDims, {.exact_below = 200});
  auto vectors = RandomVectors(kCount, kDims, 3);
  for (std::int64_t id = 0; id < kCount; ++id) ASSERT_TRUE(index.Add(id, vectors[id]));
  const std::size_t with_graph = index.MemoryBytes();

  std::set<std::int64_t> removed;
  for (std::int64_t id = 0; id < kCount; id += 3) {
    index.Remove(id);
    removed.insert(id);
  }
  EXPECT_EQ(index.size(), kCount - removed.size());
  const auto queries = RandomVectors(100, kDims, 4);
  for (const auto& q : queries) {
    for (const auto& hit : index.Search(q, 20)) ASSERT_EQ(removed.count(hit.id), 0u) << hit.id;
  }
  // Searching for a removed vector itself finds something else.
  for (std::int64_t id = 0; id < 300; id += 3) {
    for (const auto& hit : index.Search(vectors[id], 5)) ASSERT_NE(hit.id, id);
  }
  EXPECT_GE(RecallAt(index, queries, 10), 0.95);

  // New ids fill the freed places; some removed ids come back with new vectors.
  const auto fresh = RandomVectors(600, kDims, 5);
  for (std::int64_t i = 0; i < 500; ++i) ASSERT_TRUE(index.Add(kCount + i, fresh[i]));
  for (std::int64_t i = 0; i < 100; ++i) {
    const std::int64_t id = 3 * i;
    ASSERT_TRUE(index.Add(id, fresh[500 + i]));
    removed.erase(id);
    vectors[id] = fresh[500 + i];
  }
  // Replace live vectors: each must now be found by its new vector, not its old one.
  const auto replacement = RandomVectors(100, kDims, 6);
  for (std::int64_t i = 0; i < 100; ++i) {
    const std::int64_t id = 3 * i + 1;
    ASSERT_TRUE(index.Add(id, replacement[i]));
    vectors[id] = replacement[i];
  }
  EXPECT_EQ(index.size(), kCount + 500 - removed.size());
  for (std::int64_t id = 0; id < 300; ++id) {
    if (removed.count(id)) continue;
    const auto hits = index.Search(vectors[id], 1);
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].id, id);
    EXPECT_NEAR(hits[0].score, 1.0f, 1e-5);
  }
  for (std::int64_t i = 0; i < 500; ++i) {
    const auto hits = index.Search(fresh[i], 1);
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].id, kCount + i);
  }
  for (const auto& q : queries) {
    for (const auto& hit : index.Search(q, 20)) ASSERT_EQ(removed.count(hit.id), 0u) << hit.id;
  }
  EXPECT_GE(RecallAt(index, queries, 10), 0.95);
  // 2,600 live vectors now against 3,000 then, in the same places.
  EXPECT_GT(index.MemoryBytes(), with_graph * 3 / 4);
}

TEST(VectorIndex, FallsBackToExactWhenRemovalsShrinkItBelowTheThreshold) {
  VectorIndex index(8, {.exact_below = 100});
  const auto vectors = RandomVectors(150, 8, 7);
  for (std::size_t i = 0; i < vectors.size(); ++i) ASSERT_TRUE(index.Add(i, vectors[i]));
  for (std::int64_t id = 0; id < 100; ++id) index.Remove(id);
  for (const auto& q : RandomVectors(20, 8, 8)) {
    EXPECT_EQ(Ids(index.Search(q, 10)), Ids(index.ExactSearch(q, 10)));
  }
}

TEST(VectorIndex, MemoryBytesCountsVectorsAndGraph) {
  constexpr std::size_t kDims = 64;
  VectorIndex index(kDims, {.exact_below = 1'000});
  const auto vectors = RandomVectors(2'000, kDims, 9);
  for (std::size_t i = 0; i < 999; ++i) ASSERT_TRUE(index.Add(i, vectors[i]));
  const std::size_t exact_only = index.MemoryBytes();
  EXPECT_GE(exact_only, 999 * kDims * sizeof(float));
  EXPECT_LT(exact_only, 4 * 999 * kDims * sizeof(float));
  for (std::size_t i = 999; i < 2'000; ++i) ASSERT_TRUE(index.Add(i, vectors[i]));
  // The graph adds at least its level-0 links (2m ids per vector).
  EXPECT_GT(index.MemoryBytes(), 2 * exact_only + 2'000 * 32 * sizeof(std::uint32_t));
}

// Searches run while another thread adds, replaces and removes (run under a sanitizer to check
// for races). Ids below kStable are never touched by the writer and must stay findable.
TEST(VectorIndex, ConcurrentSearchesWithWrites) {
  constexpr std::size_t kDims = 16;
  constexpr std::int64_t kStable = 1'000;
  VectorIndex index(kDims, {.exact_below = 500});
  const auto vectors = RandomVectors(kStable + 1'000, kDims, 10);
  for (std::int64_t id = 0; id < kStable; ++id) ASSERT_TRUE(index.Add(id, vectors[id]));

  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      std::size_t i = t;
      while (!done.load()) {
        const std::int64_t id = static_cast<std::int64_t>(i % kStable);
        const auto hits = index.Search(vectors[id], 5);
        if (hits.empty() || !std::is_sorted(hits.begin(), hits.end(),
                                            [](auto& a, auto& b) { return a.score > b.score; })) {
          ++failures;
        }
        if (index.Similarity(id, vectors[id]).value_or(0) < 0.999f) ++failures;
        index.ExactSearch(vectors[id], 3);
        index.MemoryBytes();
        i += 7;
      }
    });
  }
  std::size_t removed = 0;
  for (std::int64_t id = kStable; id < kStable + 1'000; ++id) {
    ASSERT_TRUE(index.Add(id, vectors[id]));
    if (id % 4 == 0) {
      ASSERT_TRUE(index.Add(id, vectors[id - 1]));
    }
    if (id % 3 == 0) {
      index.Remove(id);
      ++removed;
    }
  }
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(index.size(), kStable + 1'000 - removed);
}

// The approximate index against brute force on 20,000 random unit vectors, the hardest shape
// of data for a graph (no clusters), with the default options. A sanitizer build (10 to 30 times
// slower in hnswlib) checks memory and races on 5,000, within the test timeout.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::size_t kRecallVectors = 5'000;
#else
constexpr std::size_t kRecallVectors = 20'000;
#endif
TEST(VectorIndex, RecallAt10OnTwentyThousandRandomVectors) {
  constexpr std::size_t kDims = 64;
  VectorIndex index(kDims);
  const auto vectors = RandomVectors(kRecallVectors, kDims, 11);
  for (std::size_t i = 0; i < vectors.size(); ++i) ASSERT_TRUE(index.Add(i, vectors[i]));
  // Every vector is kept where it was put (the store's blocks grow, then stay at 1 MiB).
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    ASSERT_NEAR(*index.Similarity(i, vectors[i]), 1.0f, 1e-5) << i;
  }
  const double recall = RecallAt(index, RandomVectors(200, kDims, 12), 10);
  RecordProperty("recall_at_10", std::to_string(recall));
  EXPECT_GE(recall, 0.95);
}

}  // namespace
}  // namespace sb::knowledge
