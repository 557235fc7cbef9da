#include "storage/sql/task_repository.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using domain::TaskStatus;
using util::ErrorCode;

// A macro so each statement is one string literal at compile time (it is also the cache key).
#define SB_TASK_COLUMNS                                                                          \
  "id, task_type, kind, name, label, status, current_action, log, metadata, exception, result, " \
  "created_at, updated_at, owner, spec, attempts"

// An owned task is leased from its insertion; one without an owner is claimable at once.
#define SB_INSERT(now)                                                                       \
  "INSERT INTO tasks (task_type, kind, name, label, status, current_action, log, metadata, " \
  "exception, result, created_at, updated_at, owner, spec, expires_at) VALUES (?1, ?2, ?3, " \
  "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, CASE WHEN ?13 = '' THEN 0 ELSE " now     \
  " + ?15 END) RETURNING id"
#define SB_RENEW(now) \
  "UPDATE tasks SET expires_at = " now " + ?2 WHERE owner = ?1 AND status IN (?3, ?4)"
// The candidates are chosen and locked by the inner SELECT (skipping rows another claimer has
// locked) and taken by the UPDATE in the same statement, so one transaction does both.
#define SB_CLAIM(now, lock)                                                          \
  "UPDATE tasks SET owner = ?1, expires_at = " now                                   \
  " + ?2, attempts = attempts + 1 "                                                  \
  "WHERE id IN (SELECT id FROM tasks WHERE status IN (?3, ?4) AND expires_at < " now \
  " AND owner <> ?1 ORDER BY id LIMIT ?5" lock ") RETURNING " SB_TASK_COLUMNS

util::Result<TaskStatus> StatusFromText(std::string_view text) {
  for (auto status : {TaskStatus::kPending, TaskStatus::kRunning, TaskStatus::kSucceeded,
                      TaskStatus::kFailed, TaskStatus::kCancelled}) {
    if (text == domain::TaskStatusName(status)) return status;
  }
  return util::Fail(ErrorCode::kInternal, "stored task status is damaged");
}

util::Result<domain::Task> ReadRow(const Statement& s) {
  domain::Task t;
  t.id = s.Int64(0);
  t.task_type = s.Text(1);
  t.kind = s.Text(2);
  t.name = s.Text(3);
  t.label = s.Text(4);
  auto status = StatusFromText(s.Text(5));
  if (!status) return tl::make_unexpected(status.error());
  t.status = *status;
  t.current_action = s.Text(6);
  t.log = s.Text(7);
  auto metadata = ObjectFromText(s.Text(8), "task metadata");
  if (!metadata) return tl::make_unexpected(metadata.error());
  t.metadata = std::move(*metadata);
  t.exception = s.Text(9);
  auto result = JsonFromText(s.Text(10), "task result");
  if (!result) return tl::make_unexpected(result.error());
  t.result = std::move(*result);
  t.created_at = TimeAt(s.Int64(11));
  t.updated_at = TimeAt(s.Int64(12));
  t.owner = s.Text(13);
  auto spec = ObjectFromText(s.Text(14), "task spec");
  if (!spec) return tl::make_unexpected(spec.error());
  t.spec = std::move(*spec);
  t.attempts = s.Int(15);
  return t;
}

util::Error NotFound(std::int64_t id) {
  return util::Error{ErrorCode::kNotFound, fmt::format("task {} not found", id)};
}

}  // namespace

util::Result<std::int64_t> SqlTaskRepository::Insert(const domain::Task& t) {
  return db_.Write([&](Connection& c) -> util::Result<std::int64_t> {
    return QueryInt(
        c, c.dialect() == Dialect::kSqlite ? SB_INSERT(SB_SQLITE_NOW) : SB_INSERT(SB_PG_NOW),
        t.task_type, t.kind, t.name, t.label, domain::TaskStatusName(t.status), t.current_action,
        t.log, JsonToText(t.metadata), t.exception, JsonToText(t.result), Millis(t.created_at),
        Millis(t.updated_at), t.owner, JsonToText(t.spec),
        static_cast<std::int64_t>(domain::kTaskLeaseTtl.count()));
  });
}

util::Result<void> SqlTaskRepository::Update(const domain::Task& t) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed =
        Execute(c,
                "UPDATE tasks SET status = ?, current_action = ?, log = ?, "
                "metadata = ?, exception = ?, result = ?, updated_at = ? WHERE id = ? "
                "AND owner = ?",
                domain::TaskStatusName(t.status), t.current_action, t.log, JsonToText(t.metadata),
                t.exception, JsonToText(t.result), Millis(t.updated_at), t.id, t.owner);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed > 0) return util::Ok();
    auto exists = QueryInt(c, "SELECT count(*) FROM tasks WHERE id = ?", t.id);
    if (!exists) return tl::make_unexpected(exists.error());
    if (*exists == 0) return tl::make_unexpected(NotFound(t.id));
    return util::Fail(ErrorCode::kConflict,
                      fmt::format("task {} was taken over by another instance", t.id));
  });
}

util::Result<domain::Task> SqlTaskRepository::Get(std::int64_t id) {
  return db_.Read([&](Connection& c) -> util::Result<domain::Task> {
    auto stmt = Query(c, "SELECT " SB_TASK_COLUMNS " FROM tasks WHERE id = ?", id);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(id));
    return ReadRow(*stmt);
  });
}

util::Result<std::vector<domain::Task>> SqlTaskRepository::List(const domain::TaskFilter& filter) {
  return db_.Read([&](Connection& c) -> util::Result<std::vector<domain::Task>> {
    // One statement for all four filter combinations keeps a single cached plan; ids grow with
    // insertion, so they break ties between tasks created in the same millisecond.
    auto stmt = Query(c,
                      "SELECT " SB_TASK_COLUMNS
                      " FROM tasks WHERE (CAST(?1 AS TEXT) IS NULL OR task_type = ?1) "
                      "AND (CAST(?2 AS TEXT) IS NULL OR kind = ?2) "
                      "ORDER BY created_at DESC, id DESC",
                      filter.task_type, filter.kind);
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::Task>(*stmt, ReadRow);
  });
}

util::Result<int> SqlTaskRepository::FailUnfinished(const std::string& reason,
                                                    util::TimePoint now) {
  return db_.Write([&](Connection& c) -> util::Result<int> {
    return Execute(c,
                   "UPDATE tasks SET status = ?, exception = ?, updated_at = ? "
                   "WHERE status IN (?, ?)",
                   domain::TaskStatusName(TaskStatus::kFailed), reason, Millis(now),
                   domain::TaskStatusName(TaskStatus::kPending),
                   domain::TaskStatusName(TaskStatus::kRunning));
  });
}

util::Result<int> SqlTaskRepository::Renew(const std::string& owner,
                                           std::chrono::milliseconds ttl) {
  return db_.Write([&](Connection& c) -> util::Result<int> {
    return Execute(
        c, c.dialect() == Dialect::kSqlite ? SB_RENEW(SB_SQLITE_NOW) : SB_RENEW(SB_PG_NOW), owner,
        static_cast<std::int64_t>(ttl.count()), domain::TaskStatusName(TaskStatus::kPending),
        domain::TaskStatusName(TaskStatus::kRunning));
  });
}

util::Result<std::vector<domain::Task>> SqlTaskRepository::Claim(const std::string& owner,
                                                                 std::chrono::milliseconds ttl,
                                                                 int limit) {
  return db_.Write([&](Connection& c) -> util::Result<std::vector<domain::Task>> {
    auto stmt = Query(
        c,
        c.dialect() == Dialect::kSqlite ? SB_CLAIM(SB_SQLITE_NOW, "")
                                        : SB_CLAIM(SB_PG_NOW, " FOR UPDATE SKIP LOCKED"),
        owner, static_cast<std::int64_t>(ttl.count()), domain::TaskStatusName(TaskStatus::kPending),
        domain::TaskStatusName(TaskStatus::kRunning), limit);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto claimed = CollectRows<domain::Task>(*stmt, ReadRow);
    if (!claimed) return claimed;
    // RETURNING gives no order: oldest first, as they were chosen.
    std::sort(claimed->begin(), claimed->end(),
              [](const domain::Task& a, const domain::Task& b) { return a.id < b.id; });
    return claimed;
  });
}

util::Result<int> SqlTaskRepository::ReleaseAll(const std::string& owner) {
  return db_.Write([&](Connection& c) -> util::Result<int> {
    return Execute(c,
                   "UPDATE tasks SET owner = '', expires_at = 0 WHERE owner = ? AND status IN "
                   "(?, ?)",
                   owner, domain::TaskStatusName(TaskStatus::kPending),
                   domain::TaskStatusName(TaskStatus::kRunning));
  });
}

}  // namespace sb::storage::sql
