// WebhookRepository over SQL (SQLite or PostgreSQL). Ids come from AUTOINCREMENT, never reused. The
// signing secret is sealed at rest like provider keys (it signs, so it must be kept, not hashed).
#pragma once

#include "domain/webhook.hpp"
#include "storage/sql/database.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlWebhookRepository final : public domain::WebhookRepository {
 public:
  SqlWebhookRepository(Database& db, const util::SecretBox& secrets) : db_(db), secrets_(secrets) {}

  util::Result<std::vector<domain::Webhook>> List() override;
  util::Result<domain::Webhook> Get(std::int64_t id) override;
  util::Result<std::int64_t> Insert(const domain::Webhook& webhook) override;
  util::Result<void> Update(const domain::Webhook& webhook) override;
  util::Result<void> Delete(std::int64_t id) override;
  util::Result<void> RecordDelivery(std::int64_t id, bool ok, int http_status,
                                    const std::string& error, util::TimePoint at) override;

 private:
  Database& db_;
  const util::SecretBox& secrets_;
};

}  // namespace sb::storage::sql
