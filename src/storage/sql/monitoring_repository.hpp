// MonitoringRepository over SQL (SQLite or PostgreSQL) (tables of migration 9): batched writes in
// one transaction, filtered pages that use the (bot|pipeline, time) indexes, retention by time.
#pragma once

#include "domain/monitoring.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlMonitoringRepository final : public domain::MonitoringRepository {
 public:
  explicit SqlMonitoringRepository(Database& db) : db_(db) {}

  util::Result<void> Write(const domain::MonitoringBatch& batch) override;
  util::Result<std::int64_t> Prune(util::TimePoint before) override;
  util::Result<domain::MonitoringPage> Page(domain::MonitoringTable table,
                                            const domain::MonitoringFilter& filter) override;
  util::Result<domain::MonitoringOverview> Overview(
      const domain::MonitoringFilter& filter) override;
  util::Result<domain::FeedbackStats> Feedback(const domain::MonitoringFilter& filter) override;
  util::Result<std::optional<util::JsonObject>> Find(domain::MonitoringTable table,
                                                     const std::string& key) override;
  util::Result<std::vector<util::JsonObject>> OfMessage(domain::MonitoringTable table,
                                                        const std::string& message_id) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
