// TaskRepository over SQL (SQLite or PostgreSQL). Ids come from AUTOINCREMENT, so they are never
// reused even after the newest task is deleted. Leases are timed by the database's clock, one
// clock for every instance; claims lock rows with FOR UPDATE SKIP LOCKED on PostgreSQL (SQLite
// runs one write transaction at a time, so the same statement without it is already exclusive).
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
  util::Result<int> Renew(const std::string& owner, std::chrono::milliseconds ttl) override;
  util::Result<std::vector<domain::Task>> Claim(const std::string& owner,
                                                std::chrono::milliseconds ttl, int limit) override;
  util::Result<int> ReleaseAll(const std::string& owner) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
