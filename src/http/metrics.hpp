// Request counters for /metrics (Prometheus text format). Lock-free; thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace sb::http {

class Metrics {
 public:
  void RecordRequest(int status, std::int64_t micros);
  void AddInFlight(int delta) { in_flight_.fetch_add(delta, std::memory_order_relaxed); }
  void AddConnections(int delta) { connections_.fetch_add(delta, std::memory_order_relaxed); }
  int in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  int connections() const { return connections_.load(std::memory_order_relaxed); }
  std::string RenderPrometheus() const;

 private:
  std::atomic<std::uint64_t> by_class_[6] = {};  // index status / 100 (0: other)
  std::atomic<std::uint64_t> micros_sum_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> connections_{0};
};

}  // namespace sb::http
