// PipelineRepository over SQL (SQLite or PostgreSQL). A partial unique index keeps at most one
// default pipeline even if two inserts race.
#pragma once

#include "domain/pipeline.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlPipelineRepository final : public domain::PipelineRepository {
 public:
  explicit SqlPipelineRepository(Database& db) : db_(db) {}

  util::Result<std::vector<domain::Pipeline>> List() override;
  util::Result<domain::Pipeline> Get(const util::PipelineId& id) override;
  util::Result<domain::Pipeline> GetDefault() override;
  // Also kConflict when the uuid is taken.
  util::Result<void> Insert(const domain::Pipeline& pipeline) override;
  util::Result<void> Update(const domain::Pipeline& pipeline) override;
  util::Result<void> Delete(const util::PipelineId& id) override;
  util::Result<int> CountBotsUsing(const util::PipelineId& id) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
