#include "http/metrics.hpp"

#include <fmt/format.h>

namespace sb::http {

void Metrics::RecordRequest(int status, std::int64_t micros) {
  const int cls = status / 100;
  by_class_[(cls >= 1 && cls <= 5) ? cls : 0].fetch_add(1, std::memory_order_relaxed);
  micros_sum_.fetch_add(static_cast<std::uint64_t>(micros), std::memory_order_relaxed);
}

std::string Metrics::RenderPrometheus() const {
  std::string out;
  out += "# HELP switchboard_http_requests_total HTTP requests answered, by status class.\n";
  out += "# TYPE switchboard_http_requests_total counter\n";
  std::uint64_t total = 0;
  for (int i = 1; i <= 5; ++i) {
    const auto n = by_class_[i].load(std::memory_order_relaxed);
    total += n;
    out += fmt::format("switchboard_http_requests_total{{class=\"{}xx\"}} {}\n", i, n);
  }
  out += "# HELP switchboard_http_request_seconds_sum Time spent answering requests.\n";
  out += "# TYPE switchboard_http_request_seconds_sum counter\n";
  out += fmt::format("switchboard_http_request_seconds_sum {:.6f}\n",
                     static_cast<double>(micros_sum_.load(std::memory_order_relaxed)) / 1e6);
  out += fmt::format("switchboard_http_request_seconds_count {}\n", total);
  out += "# TYPE switchboard_http_in_flight gauge\n";
  out += fmt::format("switchboard_http_in_flight {}\n", in_flight());
  out += "# TYPE switchboard_http_connections gauge\n";
  out += fmt::format("switchboard_http_connections {}\n", connections());
  return out;
}

}  // namespace sb::http
