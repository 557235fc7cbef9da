// Entities to the JSON shapes of the seed and contract §3 (LangBot's field names).
#pragma once

#include <string>

#include "domain/account.hpp"
#include "domain/bot_log.hpp"
#include "domain/catalogue.hpp"
#include "domain/pipeline.hpp"
#include "domain/plugin.hpp"
#include "domain/task.hpp"
#include "services/bot_service.hpp"
#include "services/mcp_service.hpp"
#include "services/model_service.hpp"
#include "services/system_service.hpp"
#include "util/json.hpp"

namespace sb::http::api {

struct WebhookPrefixes {
  const std::string& main;
  const std::string& extra;
};

// "sk-abcdef123456" -> "sk-a...3456"; short keys become "****".
std::string MaskSecret(const std::string& secret);

util::JsonObject EncodeProvider(const domain::ProviderUsage& p, bool include_secret);
util::JsonObject EncodeModel(const services::ModelView& m, bool include_secret, bool with_provider);
util::JsonObject EncodeBot(const services::BotView& b, const WebhookPrefixes* detail);
util::JsonObject EncodeLogEntry(const domain::BotLogEntry& e);
util::JsonObject EncodePipeline(const domain::Pipeline& p);
util::JsonObject EncodeTask(const domain::Task& t);
util::JsonObject EncodeApiKey(const domain::ApiKey& k);
util::JsonObject EncodeSystemInfo(const services::SystemInfo& info);
// An installed plugin as /plugins lists it (http/api/plugin_routes.cpp).
util::Json EncodePlugin(const domain::PluginView& view);
// An MCP server as /mcp/servers lists it, secrets masked (http/api/mcp_routes.cpp).
util::JsonObject EncodeMcpServer(const services::McpServerView& v);

}  // namespace sb::http::api
