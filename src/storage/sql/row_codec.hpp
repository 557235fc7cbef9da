// Shared by the SQL repositories: how entity fields become column values and back (JSON as
// TEXT, string lists as JSON arrays, times as unix milliseconds), plus bind-and-run shorthands.
//   auto stmt = Query(c, "SELECT name FROM bots WHERE uuid = ?", id.str());
//   auto config = ObjectFromText(stmt->Text(0), "bot adapter_config");
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sql/database.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::storage::sql {

std::string JsonToText(const util::Json& value);
std::string StringListToText(const std::vector<std::string>& list);

// Stored text that does not parse, or has the wrong JSON type, is a damaged database: kInternal
// naming `what` (never the text itself, which may hold secrets).
util::Result<util::Json> JsonFromText(std::string_view text, std::string_view what);
util::Result<util::JsonObject> ObjectFromText(std::string_view text, std::string_view what);
util::Result<util::JsonArray> ArrayFromText(std::string_view text, std::string_view what);
util::Result<std::vector<std::string>> StringListFromText(std::string_view text,
                                                          std::string_view what);

inline std::int64_t Millis(util::TimePoint t) { return util::ToUnixMillis(t); }

// The database's clock in unix milliseconds, as each dialect spells it, for leases (bots, tasks):
// one clock for every instance, whatever their own clocks say. Macros, so statements built with
// them stay single literals (the statement cache's keys).
#define SB_SQLITE_NOW "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"
#define SB_PG_NOW "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
inline util::TimePoint TimeAt(std::int64_t ms) { return util::FromUnixMillis(ms); }

// Prepares `sql` and binds `args` to ?1, ?2, ... in order.
template <typename... Args>
util::Result<Statement> Query(Connection& c, std::string_view sql, const Args&... args) {
  auto stmt = c.Prepare(sql);
  if (!stmt) return stmt;
  int index = 0;
  (stmt->Bind(++index, args), ...);
  (void)index;  // unused when there are no arguments
  return stmt;
}

// Runs a statement that returns no rows; returns how many rows it changed.
template <typename... Args>
util::Result<int> Execute(Connection& c, std::string_view sql, const Args&... args) {
  auto stmt = Query(c, sql, args...);
  if (!stmt) return tl::make_unexpected(stmt.error());
  if (auto r = stmt->Run(); !r) return tl::make_unexpected(r.error());
  return c.Changes();
}

// True when `sql` (bound to `args`) returns at least one row.
template <typename... Args>
util::Result<bool> Exists(Connection& c, std::string_view sql, const Args&... args) {
  auto stmt = Query(c, sql, args...);
  if (!stmt) return tl::make_unexpected(stmt.error());
  return stmt->Step();
}

// The first column of the first row as an integer (0 when there is no row).
template <typename... Args>
util::Result<std::int64_t> QueryInt(Connection& c, std::string_view sql, const Args&... args) {
  auto stmt = Query(c, sql, args...);
  if (!stmt) return tl::make_unexpected(stmt.error());
  auto row = stmt->Step();
  if (!row) return tl::make_unexpected(row.error());
  return *row ? stmt->Int64(0) : 0;
}

// Steps `stmt` to the end, turning each row into a T with `decode(const Statement&) -> Result<T>`.
template <typename T, typename Decode>
util::Result<std::vector<T>> CollectRows(Statement& stmt, Decode decode) {
  std::vector<T> out;
  for (;;) {
    auto row = stmt.Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return out;
    auto item = decode(stmt);
    if (!item) return tl::make_unexpected(item.error());
    out.push_back(std::move(*item));
  }
}

}  // namespace sb::storage::sql
