// Hourly counts of the monitoring tables (monitoring_hourly), kept in step with the records in
// the same transactions, so the routes' totals over millions of rows read a few hundred rollup
// rows plus the partial hours at the edges of the range, instead of counting every row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "domain/monitoring.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

inline constexpr std::int64_t kRollupHourMs = 3'600'000;

// Adds `n` records (`success` of them with status success) at `timestamp_ms`. Inside the
// caller's write transaction.
util::Result<void> RollupAdd(Connection& c, std::string_view kind, std::int64_t timestamp_ms,
                             const std::string& bot_id, const std::string& pipeline_id,
                             std::int64_t n, std::int64_t success);

// Records of `table` (a table with a rollup: messages, llm calls, embedding calls, errors)
// matching the bot, pipeline and time filters of `f`: (count, of them success; success only
// for messages). Inside the caller's transaction.
util::Result<std::pair<std::int64_t, std::int64_t>> RollupCount(Connection& c,
                                                                domain::MonitoringTable table,
                                                                const domain::MonitoringFilter& f);

// Whether RollupCount answers for this table and filter (no session or knowledge-base filter).
bool RollupCovers(domain::MonitoringTable table, const domain::MonitoringFilter& f);

// The rollup's name of a table ("messages", "llm_calls", ...).
std::string_view RollupKind(domain::MonitoringTable table);

}  // namespace sb::storage::sql
