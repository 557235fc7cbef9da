// domain::Storage over an SQL database (SQLite or PostgreSQL): one repository of each kind over
// one sql::Database. A backend's opener (SqliteStorage::Open, PostgresStorage::Open) connects and
// migrates, then builds one; the composition root closes it last.
#pragma once

#include <memory>
#include <string>

#include "domain/storage.hpp"
#include "storage/sql/account_repositories.hpp"
#include "storage/sql/bot_lease_repository.hpp"
#include "storage/sql/bot_log_repository.hpp"
#include "storage/sql/bot_repository.hpp"
#include "storage/sql/conversation_repository.hpp"
#include "storage/sql/database.hpp"
#include "storage/sql/knowledge_repository.hpp"
#include "storage/sql/mcp_server_repository.hpp"
#include "storage/sql/model_repository.hpp"
#include "storage/sql/monitoring_repository.hpp"
#include "storage/sql/pipeline_repository.hpp"
#include "storage/sql/plugin_repository.hpp"
#include "storage/sql/provider_repository.hpp"
#include "storage/sql/settings_repository.hpp"
#include "storage/sql/task_repository.hpp"
#include "storage/sql/webhook_repository.hpp"
#include "util/error.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sql {

// Thread-safe. Repositories stay valid as long as this object; after Close() their calls fail with
// kUnavailable.
class SqlStorage : public domain::Storage {
 public:
  // `db` is already migrated. Provider keys, bot configs and other secrets are read and written
  // through `secrets`.
  SqlStorage(std::unique_ptr<Database> db, util::SecretBox secrets);
  ~SqlStorage() override;

  // Waits for running transactions and closes the database. Idempotent.
  void Close();

  Database& database() { return *db_; }

  domain::ProviderRepository& providers() override { return providers_; }
  domain::ModelRepository& models() override { return models_; }
  domain::BotRepository& bots() override { return bots_; }
  domain::BotLogRepository& bot_logs() override { return bot_logs_; }
  domain::ConversationRepository& conversations() override { return conversations_; }
  domain::PipelineRepository& pipelines() override { return pipelines_; }
  domain::TaskRepository& tasks() override { return tasks_; }
  domain::UserRepository& users() override { return users_; }
  domain::ApiKeyRepository& api_keys() override { return api_keys_; }
  domain::SettingsRepository& settings() override { return settings_; }
  domain::PluginRepository& plugins() override { return plugins_; }
  domain::KnowledgeRepository& knowledge() override { return knowledge_; }
  domain::WebhookRepository& webhooks() override { return webhooks_; }
  domain::McpServerRepository& mcp_servers() override { return mcp_servers_; }
  domain::MonitoringRepository& monitoring() override { return monitoring_; }
  domain::BotLeaseRepository& bot_leases() override { return bot_leases_; }

 private:
  std::unique_ptr<Database> db_;  // declared first: the repositories refer to it
  const util::SecretBox secrets_;
  SqlProviderRepository providers_;
  SqlModelRepository models_;
  SqlBotRepository bots_;
  SqlBotLogRepository bot_logs_;
  SqlConversationRepository conversations_;
  SqlPipelineRepository pipelines_;
  SqlTaskRepository tasks_;
  SqlUserRepository users_;
  SqlApiKeyRepository api_keys_;
  SqlSettingsRepository settings_;
  SqlPluginRepository plugins_;
  SqlKnowledgeRepository knowledge_;
  SqlWebhookRepository webhooks_;
  SqlMcpServerRepository mcp_servers_;
  SqlMonitoringRepository monitoring_;
  SqlBotLeaseRepository bot_leases_;
};

}  // namespace sb::storage::sql
