// The SQLite backend of domain::Storage: one database file, migrated at open, and one repository
// of each kind over it. The composition root opens it once and closes it last.
//   auto storage = SqliteStorage::Open("data/switchboard.db", secret_box);
//   if (!storage) return storage.error();  // kInternal: unreadable file, failed migration
#pragma once

#include <memory>
#include <string>

#include "domain/storage.hpp"
#include "storage/sqlite/account_repositories.hpp"
#include "storage/sqlite/bot_log_repository.hpp"
#include "storage/sqlite/bot_repository.hpp"
#include "storage/sqlite/conversation_repository.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/knowledge_repository.hpp"
#include "storage/sqlite/mcp_server_repository.hpp"
#include "storage/sqlite/model_repository.hpp"
#include "storage/sqlite/monitoring_repository.hpp"
#include "storage/sqlite/pipeline_repository.hpp"
#include "storage/sqlite/plugin_repository.hpp"
#include "storage/sqlite/provider_repository.hpp"
#include "storage/sqlite/settings_repository.hpp"
#include "storage/sqlite/task_repository.hpp"
#include "storage/sqlite/webhook_repository.hpp"
#include "util/error.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sqlite {

// Thread-safe. Repositories stay valid as long as this object; after Close() their calls fail with
// kUnavailable.
class SqliteStorage final : public domain::Storage {
 public:
  // Creates the file (and its parent directory) when missing, applies pending migrations and
  // seals with `secrets` the provider keys and bot configs of rows stored in plain text (by a
  // version before sealing). Those columns are read and written through `secrets` from then on.
  static util::Result<std::unique_ptr<SqliteStorage>> Open(const std::string& path,
                                                           util::SecretBox secrets);
  ~SqliteStorage() override;

  // Waits for running transactions, checkpoints the WAL and closes the file. Idempotent.
  void Close();

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

 private:
  SqliteStorage(std::unique_ptr<Database> db, util::SecretBox secrets);

  std::unique_ptr<Database> db_;  // declared first: the repositories refer to it
  const util::SecretBox secrets_;
  SqliteProviderRepository providers_;
  SqliteModelRepository models_;
  SqliteBotRepository bots_;
  SqliteBotLogRepository bot_logs_;
  SqliteConversationRepository conversations_;
  SqlitePipelineRepository pipelines_;
  SqliteTaskRepository tasks_;
  SqliteUserRepository users_;
  SqliteApiKeyRepository api_keys_;
  SqliteSettingsRepository settings_;
  SqlitePluginRepository plugins_;
  SqliteKnowledgeRepository knowledge_;
  SqliteWebhookRepository webhooks_;
  SqliteMcpServerRepository mcp_servers_;
  SqliteMonitoringRepository monitoring_;
};

}  // namespace sb::storage::sqlite
