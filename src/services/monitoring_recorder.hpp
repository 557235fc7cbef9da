// The monitoring writer: the message path and the model gateway hand it records (a push into a
// bounded in-memory queue under a short lock, never I/O); its own thread writes them in batches,
// one transaction each, and deletes records older than the retention.
//   MonitoringRecorder recorder(storage.monitoring(), clock, options);
//   recorder.RecordMessage(record);  // any thread; dropped (and counted) when the queue is full
//   recorder.Stop();                 // writes what is queued, joins the thread
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

#include "domain/monitoring.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct MonitoringRecorderOptions {
  std::size_t queue_bound = 10000;                 // records waiting; more are dropped
  std::size_t batch_size = 500;                    // records per transaction at most
  std::chrono::milliseconds flush_interval{1000};  // the longest a record waits to be written
  int retention_days = 30;
  std::chrono::milliseconds prune_interval{std::chrono::hours(1)};
};

struct MonitoringRecorderStats {
  std::size_t depth = 0;      // records queued now
  std::uint64_t dropped = 0;  // records refused because the queue was full
  std::uint64_t written = 0;  // records written
  std::uint64_t failed = 0;   // records lost to a failed write
  std::uint64_t pruned = 0;   // records deleted by retention
};

// Thread-safe. The repository and clock outlive this object.
class MonitoringRecorder final : public domain::MonitoringSink {
 public:
  MonitoringRecorder(domain::MonitoringRepository& repository, const util::Clock& clock,
                     MonitoringRecorderOptions options);
  ~MonitoringRecorder() override;
  MonitoringRecorder(const MonitoringRecorder&) = delete;
  MonitoringRecorder& operator=(const MonitoringRecorder&) = delete;

  void RecordMessage(domain::MonitoredMessage record) override;
  void ChangeMessageStatus(domain::MessageStatusChange change) override;
  void RecordLlmCall(domain::MonitoredLlmCall record) override;
  void RecordEmbeddingCall(domain::MonitoredEmbeddingCall record) override;
  void RecordError(domain::MonitoredError record) override;
  void RecordFeedback(domain::MonitoredFeedback record) override;

  // Blocks until every record queued before the call has been written (or failed). For tests
  // and the API, which answers from the database: a route may flush so it reads its own writes.
  void Flush();
  // Deletes records older than the retention now; returns how many.
  std::int64_t PruneNow();
  // Writes what is queued and stops the thread; later records are dropped. Idempotent.
  void Stop();
  MonitoringRecorderStats Stats() const;

 private:
  using Item = std::variant<domain::MonitoredMessage, domain::MessageStatusChange,
                            domain::MonitoredLlmCall, domain::MonitoredEmbeddingCall,
                            domain::MonitoredError, domain::MonitoredFeedback>;
  void Push(Item item);
  void Run();
  void WriteBatch(std::deque<Item>& items);

  domain::MonitoringRepository& repository_;
  const util::Clock& clock_;
  const MonitoringRecorderOptions options_;

  mutable std::mutex mu_;
  std::condition_variable wake_;     // the writer: work, a flush request or stop
  std::condition_variable written_;  // flushers: `done_seq_` advanced
  std::deque<Item> queue_;           // guarded by mu_
  std::uint64_t pushed_seq_ = 0;     // records accepted so far; guarded by mu_
  std::uint64_t done_seq_ = 0;       // records written or failed so far; guarded by mu_
  bool flush_requested_ = false;     // guarded by mu_
  bool stopping_ = false;            // guarded by mu_
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> written_count_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::uint64_t> pruned_{0};
  std::thread thread_;  // last: starts after every member above exists
};

}  // namespace sb::services
