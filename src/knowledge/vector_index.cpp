#include "knowledge/vector_index.hpp"

// hnswlib.h defines non-inline functions (cpuid, AVXCapable): include it in this file only.
// hnswlib 0.6.2 computes its prefetch addresses from the link one past the end of a list: a read
// of up to 3 bytes past an allocation whose size is 1 mod 4, which every allocator rounds up to 8,
// and whose value only feeds a prefetch. AddressSanitizer still reports it, so its builds go
// without hnswlib's SSE paths (prefetches only: distances are ours).
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>
#include <pthread.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <shared_mutex>  // std::shared_lock
#include <unordered_map>
#include <utility>

namespace sb::knowledge {
namespace {

// The build targets baseline x86-64; the dot product is where search spends its time, so it is
// cloned for the wider vector units and picked at load time.
// (Not under ThreadSanitizer, whose instrumented ifunc resolver would run before its runtime.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#define SB_DOT_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define SB_DOT_CLONES
#endif

// 16 independent partial sums, so the compiler vectorises the loop without -ffast-math.
SB_DOT_CLONES float Dot(const float* a, const float* b, std::size_t n) {
  float partial[16] = {};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (std::size_t j = 0; j < 16; ++j) partial[j] += a[i + j] * b[i + j];
  }
  float sum = 0;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (float p : partial) sum += p;
  return sum;
}

float Cosine(const float* a, const float* b, std::size_t n) {
  return std::clamp(Dot(a, b, n), -1.0f, 1.0f);  // rounding can step past +-1
}

// The unit vector of `in`, or nothing for a vector without direction (all zero) or with a
// NaN or infinity, which would poison every distance it takes part in.
std::optional<std::vector<float>> Normalised(std::span<const float> in) {
  double squares = 0;
  for (float x : in) {
    if (!std::isfinite(x)) return std::nullopt;
    squares += static_cast<double>(x) * x;
  }
  if (!(squares > 0) || !std::isfinite(squares)) return std::nullopt;
  const double scale = 1.0 / std::sqrt(squares);
  std::vector<float> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = static_cast<float>(in[i] * scale);
  return out;
}

// Vectors by slot, in blocks that never move, so the graph can keep a pointer to each vector
// instead of a second copy of it (at 256 dimensions that halves the memory of a large index).
// Blocks double in size from kFirstBlock vectors until one holds kBigBlockBytes, then stay that
// size: small indexes stay small, and a large one wastes at most one block.
class VectorStore {
 public:
  explicit VectorStore(std::size_t dimensions) : dimensions_(dimensions) {
    const std::size_t vector_bytes = std::max<std::size_t>(dimensions, 1) * sizeof(float);
    while ((kFirstBlock << doubling_blocks_) * vector_bytes < kBigBlockBytes) ++doubling_blocks_;
    big_block_ = kFirstBlock << doubling_blocks_;
    doubling_slots_ = kFirstBlock * ((std::size_t{1} << doubling_blocks_) - 1);
  }

  std::size_t bytes() const { return capacity_ * dimensions_ * sizeof(float); }

  void Reserve(std::size_t slots) {
    while (capacity_ < slots) {
      const std::size_t b = blocks_.size();
      const std::size_t vectors = b < doubling_blocks_ ? kFirstBlock << b : big_block_;
      blocks_.push_back(std::make_unique<float[]>(vectors * dimensions_));
      capacity_ += vectors;
    }
  }

  float* At(std::uint32_t slot) { return const_cast<float*>(std::as_const(*this).At(slot)); }
  const float* At(std::uint32_t slot) const {
    std::size_t block = 0;
    std::size_t offset = 0;
    if (slot < doubling_slots_) {
      // Blocks 0..b-1 hold kFirstBlock * (2^b - 1) slots.
      block = std::bit_width(std::size_t{slot} / kFirstBlock + 1) - 1;
      offset = slot - kFirstBlock * ((std::size_t{1} << block) - 1);
    } else {
      block = doubling_blocks_ + (slot - doubling_slots_) / big_block_;
      offset = (slot - doubling_slots_) % big_block_;
    }
    return blocks_[block].get() + offset * dimensions_;
  }

 private:
  static constexpr std::size_t kFirstBlock = 16;
  static constexpr std::size_t kBigBlockBytes = std::size_t{1} << 20;
  std::size_t dimensions_;
  std::size_t doubling_blocks_ = 0;  // blocks that double; the ones after are big_block_ each
  std::size_t big_block_ = 0;
  std::size_t doubling_slots_ = 0;
  std::size_t capacity_ = 0;
  std::vector<std::unique_ptr<float[]>> blocks_;
};

// An hnswlib space whose points are pointers into the VectorStore; distance = 1 - cosine, the
// points being unit vectors. hnswlib stores the pointer unaligned, hence memcpy.
class StoredPointerSpace : public hnswlib::SpaceInterface<float> {
 public:
  explicit StoredPointerSpace(std::size_t dimensions) : dimensions_(dimensions) {}
  std::size_t get_data_size() override { return sizeof(const float*); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &Distance; }
  void* get_dist_func_param() override { return &dimensions_; }

 private:
  static float Distance(const void* a, const void* b, const void* dimensions) {
    const float* va = nullptr;
    const float* vb = nullptr;
    std::memcpy(&va, a, sizeof va);
    std::memcpy(&vb, b, sizeof vb);
    return 1.0f - Dot(va, vb, *static_cast<const std::size_t*>(dimensions));
  }
  std::size_t dimensions_;
};

using Graph = hnswlib::HierarchicalNSW<float>;

// A readers-writer lock that lets a waiting writer in before new readers: glibc's default (and so
// std::shared_mutex) prefers readers, and a steady stream of searches would starve Add forever.
// Not recursive: no method takes it twice.
class WriterFirstMutex {
 public:
  WriterFirstMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterFirstMutex() { pthread_rwlock_destroy(&lock_); }
  WriterFirstMutex(const WriterFirstMutex&) = delete;
  WriterFirstMutex& operator=(const WriterFirstMutex&) = delete;

  void lock() { pthread_rwlock_wrlock(&lock_); }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

constexpr std::size_t kMinGraphCapacity = 256;
// libstdc++ node of an unordered_map<int64/size_t, uint32>: next pointer and the pair, rounded up
// by malloc; plus one bucket pointer per bucket.
constexpr std::size_t kMapNodeBytes = 32;

bool Better(const ScoredId& a, const ScoredId& b) {
  return a.score != b.score ? a.score > b.score : a.id < b.id;
}

}  // namespace

struct VectorIndex::Impl {
  Impl(std::size_t dimensions, VectorIndexOptions opts)
      : dims(dimensions), options(opts), store(dimensions), space(dimensions) {
    // hnswlib's level multiplier is 1 / ln(m): m must be at least 2.
    options.m = std::clamp<std::size_t>(options.m, 2, 1000);
    options.ef_construction = std::max<std::size_t>(options.ef_construction, 1);
    options.ef_search = std::max<std::size_t>(options.ef_search, 1);
  }

  const std::size_t dims;
  VectorIndexOptions options;

  mutable WriterFirstMutex mutex;
  // Everything below is guarded by `mutex`. A slot is a place in `store` (and the hnswlib label
  // of the vector in it); slots of removed ids are reused.
  VectorStore store;
  std::vector<std::int64_t> slot_id;  // per slot in use or freed
  std::vector<char> slot_live;
  std::vector<std::uint32_t> free_slots;
  std::unordered_map<std::int64_t, std::uint32_t> slot_of;
  StoredPointerSpace space;
  // Built once the index first holds options.exact_below vectors, then kept up to date; every
  // live slot is in it, and every freed slot in it is marked deleted.
  std::unique_ptr<Graph> graph;

  std::size_t slots() const { return slot_id.size(); }

  std::vector<ScoredId> Exact(const std::vector<float>& query, std::size_t k) const {
    std::vector<ScoredId> best;  // a heap whose front is the worst kept
    const auto worse_first = [](const ScoredId& a, const ScoredId& b) { return Better(a, b); };
    best.reserve(std::min(k, slot_of.size()) + 1);
    for (std::uint32_t slot = 0; slot < slots(); ++slot) {
      if (!slot_live[slot]) continue;
      const ScoredId candidate{slot_id[slot], Cosine(store.At(slot), query.data(), dims)};
      if (best.size() < k) {
        best.push_back(candidate);
        std::push_heap(best.begin(), best.end(), worse_first);
      } else if (Better(candidate, best.front())) {
        std::pop_heap(best.begin(), best.end(), worse_first);
        best.back() = candidate;
        std::push_heap(best.begin(), best.end(), worse_first);
      }
    }
    std::sort(best.begin(), best.end(), Better);
    return best;
  }

  std::vector<ScoredId> Approximate(const std::vector<float>& query, std::size_t k) const {
    const float* point = query.data();
    // hnswlib searches with max(ef, k) and never returns a point marked deleted.
    auto found = graph->searchKnn(&point, k);
    std::vector<ScoredId> out;
    out.reserve(found.size());
    for (; !found.empty(); found.pop()) {
      const auto slot = static_cast<std::uint32_t>(found.top().second);
      if (slot >= slots() || !slot_live[slot]) continue;  // belt and braces
      out.push_back({slot_id[slot], Cosine(store.At(slot), point, dims)});
    }
    std::sort(out.begin(), out.end(), Better);
    return out;
  }

  // Grows the graph geometrically (by half: hnswlib keeps ~200 bytes per place) so that one
  // more point fits.
  void MakeRoomInGraph() {
    if (graph->cur_element_count < graph->max_elements_) return;
    graph->resizeIndex(std::max(kMinGraphCapacity, graph->max_elements_ * 3 / 2));
  }

  void AddToGraph(std::uint32_t slot) {
    const float* point = store.At(slot);
    // A label already in the graph (a replaced id, or a reused slot) is updated in place and
    // undeleted by hnswlib: its neighbourhood is rebuilt around the new vector.
    graph->addPoint(&point, slot);
  }

  void BuildGraph() {
    graph = std::make_unique<Graph>(&space, std::max(kMinGraphCapacity, slots() * 3 / 2), options.m,
                                    options.ef_construction);
    graph->setEf(options.ef_search);
    for (std::uint32_t slot = 0; slot < slots(); ++slot) {
      if (slot_live[slot]) AddToGraph(slot);
    }
  }

  std::size_t GraphBytes() const {
    if (!graph) return 0;
    const Graph& g = *graph;
    std::size_t bytes = g.max_elements_ * g.size_data_per_element_;  // level 0: links, point
    bytes += g.max_elements_ * (sizeof(char*) + sizeof(int) + sizeof(std::mutex));
    bytes += g.link_list_update_locks_.size() * sizeof(std::mutex);
    for (std::size_t i = 0; i < g.cur_element_count; ++i) {
      if (g.element_levels_[i] > 0) {
        bytes += g.size_links_per_element_ * static_cast<std::size_t>(g.element_levels_[i]) + 1;
      }
    }
    bytes +=
        g.label_lookup_.size() * kMapNodeBytes + g.label_lookup_.bucket_count() * sizeof(void*);
    bytes += g.max_elements_ * sizeof(hnswlib::vl_type);  // at least one visited list
    return bytes;
  }
};

VectorIndex::VectorIndex(std::size_t dimensions, VectorIndexOptions options)
    : impl_(std::make_unique<Impl>(dimensions, options)) {}

VectorIndex::~VectorIndex() = default;

std::size_t VectorIndex::dimensions() const { return impl_->dims; }

std::size_t VectorIndex::size() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->slot_of.size();
}

bool VectorIndex::Add(std::int64_t id, std::span<const float> vector) {
  if (vector.size() != impl_->dims || impl_->dims == 0) return false;
  auto unit = Normalised(vector);
  if (!unit) return false;

  Impl& d = *impl_;
  std::unique_lock lock(d.mutex);
  std::uint32_t slot = 0;
  bool reuse_free = false;
  if (auto it = d.slot_of.find(id); it != d.slot_of.end()) {
    slot = it->second;
  } else if (!d.free_slots.empty()) {
    slot = d.free_slots.back();
    reuse_free = true;
  } else {
    if (d.slots() >= std::numeric_limits<std::uint32_t>::max()) return false;  // hnswlib's ids
    slot = static_cast<std::uint32_t>(d.slots());
    // Allocate before any state changes, so a failed allocation leaves the index as it was.
    d.store.Reserve(d.slots() + 1);
    d.slot_id.reserve(d.slots() + 1);
    d.slot_live.reserve(d.slots() + 1);
  }
  if (d.graph) d.MakeRoomInGraph();
  d.slot_of.reserve(d.slot_of.size() + 1);

  std::copy(unit->begin(), unit->end(), d.store.At(slot));
  if (slot == d.slots()) {
    d.slot_id.push_back(id);
    d.slot_live.push_back(1);
  } else {
    if (reuse_free) d.free_slots.pop_back();
    d.slot_id[slot] = id;
    d.slot_live[slot] = 1;
  }
  d.slot_of[id] = slot;

  if (d.graph) {
    d.AddToGraph(slot);
  } else if (d.slot_of.size() >= d.options.exact_below) {
    d.BuildGraph();
  }
  return true;
}

void VectorIndex::Remove(std::int64_t id) {
  Impl& d = *impl_;
  std::unique_lock lock(d.mutex);
  auto it = d.slot_of.find(id);
  if (it == d.slot_of.end()) return;
  const std::uint32_t slot = it->second;
  d.slot_of.erase(it);
  d.slot_live[slot] = 0;
  d.free_slots.push_back(slot);
  // The point stays in the graph as a waypoint until its slot is reused; it is never returned.
  if (d.graph) d.graph->markDelete(slot);
}

std::vector<ScoredId> VectorIndex::Search(std::span<const float> query, std::size_t k) const {
  if (k == 0 || query.size() != impl_->dims) return {};
  auto unit = Normalised(query);
  if (!unit) return {};
  std::shared_lock lock(impl_->mutex);
  if (impl_->slot_of.empty()) return {};
  if (!impl_->graph || impl_->slot_of.size() < impl_->options.exact_below) {
    return impl_->Exact(*unit, k);
  }
  return impl_->Approximate(*unit, k);
}

std::vector<ScoredId> VectorIndex::ExactSearch(std::span<const float> query, std::size_t k) const {
  if (k == 0 || query.size() != impl_->dims) return {};
  auto unit = Normalised(query);
  if (!unit) return {};
  std::shared_lock lock(impl_->mutex);
  return impl_->Exact(*unit, k);
}

std::optional<float> VectorIndex::Similarity(std::int64_t id, std::span<const float> query) const {
  if (query.size() != impl_->dims) return std::nullopt;
  auto unit = Normalised(query);
  if (!unit) return std::nullopt;
  std::shared_lock lock(impl_->mutex);
  auto it = impl_->slot_of.find(id);
  if (it == impl_->slot_of.end()) return std::nullopt;
  return Cosine(impl_->store.At(it->second), unit->data(), impl_->dims);
}

std::size_t VectorIndex::MemoryBytes() const {
  const Impl& d = *impl_;
  std::shared_lock lock(d.mutex);
  std::size_t bytes = d.store.bytes();
  bytes += d.slot_id.capacity() * sizeof(std::int64_t) + d.slot_live.capacity() +
           d.free_slots.capacity() * sizeof(std::uint32_t);
  bytes += d.slot_of.size() * kMapNodeBytes + d.slot_of.bucket_count() * sizeof(void*);
  return bytes + d.GraphBytes();
}

}  // namespace sb::knowledge
