#include "storage/sql/task_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using domain::TaskStatus;
using util::ErrorCode;

// A macro so each statement is one string literal at compile time (it is also the cache key).
#define SB_TASK_COLUMNS                                                                          \
  "id, task_type, kind, name, label, status, current_action, log, metadata, exception, result, " \
  "created_at, updated_at"

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
  return t;
}

util::Error NotFound(std::int64_t id) {
  return util::Error{ErrorCode::kNotFound, fmt::format("task {} not found", id)};
}

}  // namespace

util::Result<std::int64_t> SqlTaskRepository::Insert(const domain::Task& t) {
  return db_.Write([&](Connection& c) -> util::Result<std::int64_t> {
    return QueryInt(c,
                    "INSERT INTO tasks (task_type, kind, name, label, status, current_action, "
                    "log, metadata, exception, result, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    t.task_type, t.kind, t.name, t.label, domain::TaskStatusName(t.status),
                    t.current_action, t.log, JsonToText(t.metadata), t.exception,
                    JsonToText(t.result), Millis(t.created_at), Millis(t.updated_at));
  });
}

util::Result<void> SqlTaskRepository::Update(const domain::Task& t) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed =
        Execute(c,
                "UPDATE tasks SET status = ?, current_action = ?, log = ?, "
                "metadata = ?, exception = ?, result = ?, updated_at = ? WHERE id = ?",
                domain::TaskStatusName(t.status), t.current_action, t.log, JsonToText(t.metadata),
                t.exception, JsonToText(t.result), Millis(t.updated_at), t.id);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(t.id));
    return util::Ok();
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

}  // namespace sb::storage::sql
