#include "storage/sql/sql_storage.hpp"

#include <utility>

namespace sb::storage::sql {

SqlStorage::SqlStorage(std::unique_ptr<Database> db, util::SecretBox secrets)
    : db_(std::move(db)),
      secrets_(std::move(secrets)),
      providers_(*db_, secrets_),
      models_(*db_, secrets_),
      bots_(*db_, secrets_),
      bot_logs_(*db_),
      conversations_(*db_),
      pipelines_(*db_),
      tasks_(*db_),
      users_(*db_),
      api_keys_(*db_),
      settings_(*db_),
      plugins_(*db_),
      knowledge_(*db_),
      webhooks_(*db_, secrets_),
      mcp_servers_(*db_, secrets_),
      monitoring_(*db_),
      bot_leases_(*db_) {}

SqlStorage::~SqlStorage() { Close(); }

void SqlStorage::Close() { db_->Close(); }

}  // namespace sb::storage::sql
