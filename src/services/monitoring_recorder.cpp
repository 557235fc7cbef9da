#include "services/monitoring_recorder.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sb::services {

MonitoringRecorder::MonitoringRecorder(domain::MonitoringRepository& repository,
                                       const util::Clock& clock, MonitoringRecorderOptions options)
    : repository_(repository), clock_(clock), options_(options), thread_([this] { Run(); }) {}

MonitoringRecorder::~MonitoringRecorder() { Stop(); }

void MonitoringRecorder::Push(Item item) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= options_.queue_bound) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queue_.push_back(std::move(item));
    ++pushed_seq_;
    // A full batch is written at once; anything less waits for the interval, so a busy message
    // path costs one lock per record and one transaction per batch.
    wake = queue_.size() == options_.batch_size;
  }
  if (wake) wake_.notify_one();
}

void MonitoringRecorder::RecordMessage(domain::MonitoredMessage record) { Push(std::move(record)); }
void MonitoringRecorder::ChangeMessageStatus(domain::MessageStatusChange change) {
  Push(std::move(change));
}
void MonitoringRecorder::RecordLlmCall(domain::MonitoredLlmCall record) { Push(std::move(record)); }
void MonitoringRecorder::RecordEmbeddingCall(domain::MonitoredEmbeddingCall record) {
  Push(std::move(record));
}
void MonitoringRecorder::RecordError(domain::MonitoredError record) { Push(std::move(record)); }
void MonitoringRecorder::RecordFeedback(domain::MonitoredFeedback record) {
  Push(std::move(record));
}

void MonitoringRecorder::WriteBatch(std::deque<Item>& items) {
  domain::MonitoringBatch batch;
  for (auto& item : items) {
    std::visit(
        [&](auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, domain::MonitoredMessage>) {
            batch.messages.push_back(std::move(r));
          } else if constexpr (std::is_same_v<T, domain::MessageStatusChange>) {
            batch.status_changes.push_back(std::move(r));
          } else if constexpr (std::is_same_v<T, domain::MonitoredLlmCall>) {
            batch.llm_calls.push_back(std::move(r));
          } else if constexpr (std::is_same_v<T, domain::MonitoredEmbeddingCall>) {
            batch.embedding_calls.push_back(std::move(r));
          } else if constexpr (std::is_same_v<T, domain::MonitoredError>) {
            batch.errors.push_back(std::move(r));
          } else {
            batch.feedback.push_back(std::move(r));
          }
        },
        item);
  }
  // A reply usually follows its message within the interval: its status goes into the insert
  // instead of a later read and update.
  if (!batch.status_changes.empty()) {
    std::unordered_map<std::string_view, domain::MonitoredMessage*> by_id;
    for (auto& m : batch.messages) by_id[m.id] = &m;
    std::vector<domain::MessageStatusChange> later;
    for (auto& change : batch.status_changes) {
      auto it = by_id.find(change.id);
      if (it == by_id.end()) {
        later.push_back(std::move(change));
        continue;
      }
      it->second->status = std::move(change.status);
      it->second->level = std::move(change.level);
    }
    batch.status_changes = std::move(later);
  }
  const auto n = items.size();
  items.clear();
  if (auto ok = repository_.Write(batch); ok) {
    written_count_.fetch_add(n, std::memory_order_relaxed);
  } else {
    failed_.fetch_add(n, std::memory_order_relaxed);
    spdlog::warn("monitoring: {} records were not written: {}", n, ok.error().message);
  }
}

std::int64_t MonitoringRecorder::PruneNow() {
  const auto cut = clock_.Now() - std::chrono::hours(24) * options_.retention_days;
  auto removed = repository_.Prune(cut);
  if (!removed) {
    spdlog::warn("monitoring: retention failed: {}", removed.error().message);
    return 0;
  }
  pruned_.fetch_add(static_cast<std::uint64_t>(*removed), std::memory_order_relaxed);
  return *removed;
}

namespace {
constexpr int kWriterNice = 10;
}  // namespace

void MonitoringRecorder::Run() {
  // The writer yields the CPU to the message path (Linux: a thread's own nice value). When the
  // cores are saturated the bots keep their throughput and records wait in the bounded queue
  // (the excess is dropped and counted) rather than the other way round; on an idle machine the
  // nice value changes nothing.
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kWriterNice) != 0) {
    spdlog::debug("monitoring: cannot lower the writer's priority");
  }
  auto next_prune = clock_.Now();
  std::deque<Item> taken;
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait_for(lock, options_.flush_interval, [&] {
      return stopping_ || flush_requested_ || queue_.size() >= options_.batch_size;
    });
    // Everything queued now is written in batches before the flag is cleared, so a flusher
    // wakes only when its records are in the database.
    while (!queue_.empty()) {
      const std::size_t n = std::min(queue_.size(), options_.batch_size);
      for (std::size_t i = 0; i < n; ++i) {
        taken.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      lock.unlock();
      WriteBatch(taken);
      lock.lock();
      done_seq_ += n;
      written_.notify_all();
    }
    flush_requested_ = false;
    written_.notify_all();
    if (stopping_) return;
    if (clock_.Now() >= next_prune) {
      lock.unlock();
      PruneNow();
      lock.lock();
      next_prune = clock_.Now() + options_.prune_interval;
    }
  }
}

void MonitoringRecorder::Flush() {
  std::unique_lock lock(mu_);
  if (!thread_.joinable() || stopping_) return;
  const std::uint64_t target = pushed_seq_;
  flush_requested_ = true;
  wake_.notify_one();
  written_.wait(lock, [&] { return done_seq_ >= target || stopping_; });
}

void MonitoringRecorder::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

MonitoringRecorderStats MonitoringRecorder::Stats() const {
  MonitoringRecorderStats s;
  {
    std::lock_guard lock(mu_);
    s.depth = queue_.size();
  }
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.written = written_count_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.pruned = pruned_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace sb::services
