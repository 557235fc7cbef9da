// The management API's route groups. Each Register* adds one group's routes, with their auth
// classes, to the router; handlers decode the request, call a service and encode the answer.
//   ApiContext ctx{...services...};
//   RegisterAllRoutes(router, ctx);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "domain/catalogue.hpp"
#include "domain/debug_chat.hpp"
#include "domain/monitoring.hpp"
#include "domain/plugin.hpp"
#include "http/metrics.hpp"
#include "http/router.hpp"
#include "services/auth_service.hpp"
#include "services/bot_service.hpp"
#include "services/knowledge_service.hpp"
#include "services/mcp_service.hpp"
#include "services/model_service.hpp"
#include "services/model_test_service.hpp"
#include "services/pipeline_service.hpp"
#include "services/plugin_config_files.hpp"
#include "services/provider_service.hpp"
#include "services/system_service.hpp"
#include "services/task_service.hpp"
#include "services/webhook_service.hpp"
#include "util/metrics_registry.hpp"

namespace sb::http::api {

// Where this instance keeps its state and how it runs, for `GET /system/about` (the console's
// System page). Not public: /system/info, which anyone may read, carries none of it.
struct InstanceFacts {
  std::string data_dir;     // absolute
  std::string config_file;  // absolute
  std::string database;     // "sqlite"
  std::string database_path;
  std::string console;  // "embedded", "directory <path>" or "not built"
  std::int64_t started_at_unix = 0;
};

struct ApiOptions {
  std::string webhook_prefix;        // e.g. "http://127.0.0.1:5300"
  std::string extra_webhook_prefix;  // empty when unset
  std::string setup_code;            // accepted by POST /user/init from non-loopback clients
  InstanceFacts instance = {};
  // Which instance answers and the bots whose leases it holds (GET /system/info, for several
  // instances behind one load balancer). `owned_generation` grows whenever that set changes.
  std::string instance_id = {};
  std::function<std::uint64_t()> owned_generation = {};
  std::function<std::vector<std::string>()> owned_bots = {};
  // api.anonymous_debug_chat: "loopback" and/or origins whose debug-chat sockets need no
  // credential. Empty: a credential is required.
  std::vector<std::string> anonymous_debug_chat = {};
};

struct ApiContext {
  services::AuthService& auth;
  services::SystemService& system;
  services::ProviderService& providers;
  services::ModelService& models;
  services::BotService& bots;
  services::PipelineService& pipelines;
  services::TaskService& tasks;
  services::ModelTestService& model_tests;
  const domain::Catalogue& requesters;
  const domain::Catalogue& adapters;
  Metrics& metrics;
  std::function<bool()> ready;  // /readyz
  ApiOptions options;
  domain::DebugChat* debug_chat = nullptr;          // the console's debug chat; null: routes absent
  domain::PluginManager* plugins = nullptr;         // null: the plugin routes are absent
  services::KnowledgeService* knowledge = nullptr;  // null: the knowledge and file routes absent
  services::PluginConfigFiles* plugin_config_files = nullptr;  // null: /plugins/config-files absent
  services::WebhookService* webhooks = nullptr;        // null: the /webhooks routes are absent
  services::McpService* mcp = nullptr;                 // null: the /mcp routes are absent
  domain::MonitoringRepository* monitoring = nullptr;  // null: /monitoring and /stats absent
  util::MetricsRegistry* metrics_registry = nullptr;   // more /metrics series; null: none
};

void RegisterSystemRoutes(Router& router, ApiContext& ctx);
void RegisterUserRoutes(Router& router, ApiContext& ctx);
void RegisterApiKeyRoutes(Router& router, ApiContext& ctx);
void RegisterProviderRoutes(Router& router, ApiContext& ctx);
void RegisterModelRoutes(Router& router, ApiContext& ctx);
void RegisterBotRoutes(Router& router, ApiContext& ctx);
void RegisterPipelineRoutes(Router& router, ApiContext& ctx);
void RegisterDebugChatRoutes(Router& router, ApiContext& ctx);
void RegisterPluginRoutes(Router& router, ApiContext& ctx);
void RegisterKnowledgeRoutes(Router& router, ApiContext& ctx);
void RegisterWebhookRoutes(Router& router, ApiContext& ctx);
void RegisterMcpRoutes(Router& router, ApiContext& ctx);
void RegisterPipelineExtensionRoutes(Router& router, ApiContext& ctx);
void RegisterMonitoringRoutes(Router& router, ApiContext& ctx);

void RegisterAllRoutes(Router& router, ApiContext& ctx);

}  // namespace sb::http::api
