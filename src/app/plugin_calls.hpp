// The plugin calls the core answers through other services: `send_message` (through a running
// bot, like the API's send_message) and `invoke_llm` (a stored model). Built by `serve` and handed
// to the plugin manager, which may not depend on services itself.
//   deps.send_message = MakeSendMessageCall(core.bots(), blocking);
//   deps.invoke_llm = MakeInvokeLlmCall(resolver, gateway, blocking);
#pragma once

#include "domain/llm.hpp"
#include "plugins/plugin_manager.hpp"
#include "services/bot_service.hpp"
#include "services/plugin_config_files.hpp"
#include "util/blocking_executor.hpp"

namespace sb::app {

// data {bot_uuid, target_type: person|group, target_id, message_chain: [elements]} → {sent,
// message_id?}; the errors of the API's send_message (bot not running, undeliverable element).
plugins::PluginCallHandler MakeSendMessageCall(services::BotService& bots,
                                               util::BlockingExecutor& blocking);

// data {model_uuid, messages: [{role: system|user|assistant, content: text}]} → {content,
// model_uuid, usage}.
plugins::PluginCallHandler MakeInvokeLlmCall(domain::ModelResolver& models,
                                             domain::LlmGateway& gateway,
                                             util::BlockingExecutor& blocking);

// data {file_key} → {file_base64}: a file uploaded through POST /plugins/config-files, which
// the plugin's config names (LangBot's GET_CONFIG_FILE). kNotFound for an unknown key.
plugins::PluginCallHandler MakeGetConfigFileCall(services::PluginConfigFiles& files,
                                                 util::BlockingExecutor& blocking);

}  // namespace sb::app
