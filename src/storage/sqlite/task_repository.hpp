// TaskRepository over SQLite. Ids come from AUTOINCREMENT, so they are never reused even after
// the newest task is deleted.
#pragma once

#include "domain/task.hpp"
#include "storage/sqlite/database.hpp"

namespace sb::storage::sqlite {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqliteTaskRepository final : public domain::TaskRepository {
 public:
  explicit SqliteTaskRepository(Database& db) : db_(db) {}

  util::Result<std::int64_t> Insert(const domain::Task& task) override;
  // kNotFound when absent.
  util::Result<void> Update(const domain::Task& task) override;
  util::Result<domain::Task> Get(std::int64_t id) override;
  util::Result<std::vector<domain::Task>> List(const domain::TaskFilter& filter) override;
  util::Result<int> FailUnfinished(const std::string& reason, util::TimePoint now) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sqlite
