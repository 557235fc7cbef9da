#include "storage/sql/monitoring_rollup.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using domain::MonitoringTable;

struct Source {
  std::string_view table;
  bool has_bot;
  bool has_status;
};

Source SourceOf(MonitoringTable t) {
  switch (t) {
    case MonitoringTable::kMessages:
      return {"monitoring_messages", true, true};
    case MonitoringTable::kLlmCalls:
      return {"monitoring_llm_calls", true, false};
    case MonitoringTable::kEmbeddingCalls:
      return {"monitoring_embedding_calls", false, false};
    default:
      return {"monitoring_errors", true, false};
  }
}

// " AND col IN (?,?)" for a non-empty list, appending the values to `binds`.
void AppendIn(std::string& sql, std::vector<std::string>& binds, std::string_view column,
              const std::vector<std::string>& values) {
  if (values.empty()) return;
  sql += fmt::format(" AND {} IN (", column);
  for (std::size_t i = 0; i < values.size(); ++i) {
    sql += i ? ",?" : "?";
    binds.push_back(values[i]);
  }
  sql += ')';
}

// SELECT count, success with `binds` then the two integer bounds (inclusive).
util::Result<std::pair<std::int64_t, std::int64_t>> Run(Connection& c, const std::string& sql,
                                                        const std::vector<std::string>& binds,
                                                        std::int64_t lo, std::int64_t hi) {
  auto stmt = c.Prepare(sql);
  if (!stmt) return tl::make_unexpected(stmt.error());
  int index = 1;
  stmt->Bind(index++, lo);
  stmt->Bind(index++, hi);
  for (const auto& b : binds) stmt->Bind(index++, b);
  auto row = stmt->Step();
  if (!row) return tl::make_unexpected(row.error());
  if (!*row) return std::pair<std::int64_t, std::int64_t>{0, 0};
  return std::pair{stmt->Int64(0), stmt->Int64(1)};
}

}  // namespace

std::string_view RollupKind(MonitoringTable t) {
  switch (t) {
    case MonitoringTable::kMessages:
      return "messages";
    case MonitoringTable::kLlmCalls:
      return "llm_calls";
    case MonitoringTable::kEmbeddingCalls:
      return "embedding_calls";
    default:
      return "errors";
  }
}

bool RollupCovers(MonitoringTable t, const domain::MonitoringFilter& f) {
  switch (t) {
    case MonitoringTable::kMessages:
      return f.session_ids.empty();
    case MonitoringTable::kLlmCalls:
    case MonitoringTable::kErrors:
      return true;
    case MonitoringTable::kEmbeddingCalls:
      return !f.knowledge_base;
    default:
      return false;
  }
}

util::Result<void> RollupAdd(Connection& c, std::string_view kind, std::int64_t timestamp_ms,
                             const std::string& bot_id, const std::string& pipeline_id,
                             std::int64_t n, std::int64_t success) {
  auto r =
      Execute(c,
              "INSERT INTO monitoring_hourly (kind, hour, bot_id, pipeline_id, n, success) "
              "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, hour, bot_id, pipeline_id) "
              "DO UPDATE SET n = monitoring_hourly.n + excluded.n, "
              "success = monitoring_hourly.success + excluded.success",
              std::string(kind), timestamp_ms / kRollupHourMs, bot_id, pipeline_id, n, success);
  if (!r) return tl::make_unexpected(r.error());
  return util::Ok();
}

util::Result<std::pair<std::int64_t, std::int64_t>> RollupCount(Connection& c,
                                                                MonitoringTable table,
                                                                const domain::MonitoringFilter& f) {
  const Source src = SourceOf(table);
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min() / 2;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 2;
  const std::int64_t start = f.start_ms.value_or(kMin);
  const std::int64_t end = f.end_ms.value_or(kMax);
  if (end < start) return std::pair<std::int64_t, std::int64_t>{0, 0};
  // Whole hours inside [start, end] come from the rollup; the rest from the records.
  auto floor_div = [](std::int64_t a, std::int64_t b) { return a / b - (a % b < 0 ? 1 : 0); };
  const std::int64_t h_lo = f.start_ms ? floor_div(start + kRollupHourMs - 1, kRollupHourMs)
                                       : floor_div(kMin, kRollupHourMs);
  const std::int64_t h_hi =
      f.end_ms ? floor_div(end + 1, kRollupHourMs) - 1 : floor_div(kMax, kRollupHourMs);

  std::vector<std::string> binds;
  std::string filters;
  if (src.has_bot) {
    AppendIn(filters, binds, "bot_id", f.bot_ids);
    AppendIn(filters, binds, "pipeline_id", f.pipeline_ids);
  }
  const std::string success =
      src.has_status ? "COALESCE(SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END), 0)" : "0";
  const std::string base = fmt::format(
      "SELECT COUNT(*), {} FROM {} WHERE timestamp BETWEEN ? AND ?{}", success, src.table, filters);
  if (h_lo > h_hi) return Run(c, base, binds, start, end);

  std::vector<std::string> rollup_binds;
  rollup_binds.emplace_back(RollupKind(table));
  for (const auto& b : binds) rollup_binds.push_back(b);
  // The kind is bound after the hour bounds: "kind = ?" is placed accordingly.
  auto stmt = c.Prepare(
      fmt::format("SELECT COALESCE(SUM(n), 0), COALESCE(SUM(success), 0) FROM monitoring_hourly "
                  "WHERE hour BETWEEN ? AND ? AND kind = ?{}",
                  filters));
  if (!stmt) return tl::make_unexpected(stmt.error());
  int index = 1;
  stmt->Bind(index++, h_lo);
  stmt->Bind(index++, h_hi);
  for (const auto& b : rollup_binds) stmt->Bind(index++, b);
  auto row = stmt->Step();
  if (!row) return tl::make_unexpected(row.error());
  std::pair<std::int64_t, std::int64_t> total{*row ? stmt->Int64(0) : 0, *row ? stmt->Int64(1) : 0};
  if (f.start_ms && start < h_lo * kRollupHourMs) {
    auto edge = Run(c, base, binds, start, h_lo * kRollupHourMs - 1);
    if (!edge) return edge;
    total.first += edge->first;
    total.second += edge->second;
  }
  if (f.end_ms && end >= (h_hi + 1) * kRollupHourMs) {
    auto edge = Run(c, base, binds, (h_hi + 1) * kRollupHourMs, end);
    if (!edge) return edge;
    total.first += edge->first;
    total.second += edge->second;
  }
  return total;
}

}  // namespace sb::storage::sql
