// TaskRepository over SQL (SQLite or PostgreSQL). Ids come from AUTOINCREMENT, so they are never
// reused even after the newest task is deleted.
#pragma once

#include "domain/task.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlTaskRepository final : public domain::TaskRepository {
 public:
  explicit SqlTaskRepository(Database& db) : db_(db) {}

  util::Result<std::int64_t> Insert(const domain::Task& task) override;
  // kNotFound when absent.
  util::Result<void> Update(const domain::Task& task) override;
  util::Result<domain::Task> Get(std::int64_t id) override;
  util::Result<std::vector<domain::Task>> List(const domain::TaskFilter& filter) override;
  util::Result<int> FailUnfinished(const std::string& reason, util::TimePoint now) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
