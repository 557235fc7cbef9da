// Everything the services keep, behind one handle that a backend (SQLite now, PostgreSQL later)
// implements. The composition root opens one and hands its repositories out by reference.
#pragma once

#include "domain/account.hpp"
#include "domain/bot.hpp"
#include "domain/bot_lease.hpp"
#include "domain/bot_log.hpp"
#include "domain/conversation.hpp"
#include "domain/knowledge.hpp"
#include "domain/mcp.hpp"
#include "domain/model.hpp"
#include "domain/monitoring.hpp"
#include "domain/pipeline.hpp"
#include "domain/plugin.hpp"
#include "domain/provider.hpp"
#include "domain/settings.hpp"
#include "domain/task.hpp"
#include "domain/webhook.hpp"

namespace sb::domain {

class Storage {
 public:
  virtual ~Storage() = default;
  virtual ProviderRepository& providers() = 0;
  virtual ModelRepository& models() = 0;
  virtual BotRepository& bots() = 0;
  virtual BotLogRepository& bot_logs() = 0;
  virtual ConversationRepository& conversations() = 0;
  virtual PipelineRepository& pipelines() = 0;
  virtual TaskRepository& tasks() = 0;
  virtual UserRepository& users() = 0;
  virtual ApiKeyRepository& api_keys() = 0;
  virtual SettingsRepository& settings() = 0;
  virtual PluginRepository& plugins() = 0;
  virtual KnowledgeRepository& knowledge() = 0;
  virtual WebhookRepository& webhooks() = 0;
  virtual McpServerRepository& mcp_servers() = 0;
  virtual MonitoringRepository& monitoring() = 0;
  virtual BotLeaseRepository& bot_leases() = 0;
};

}  // namespace sb::domain
