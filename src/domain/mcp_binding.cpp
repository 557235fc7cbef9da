#include <algorithm>

#include "domain/mcp.hpp"
#include "domain/plugin_hooks.hpp"

namespace sb::domain {

McpBinding McpBinding::FromPreferences(const util::JsonObject* preferences) {
  McpBinding binding;
  if (!preferences) return binding;
  if (const auto* all = preferences->if_contains("enable_all_mcp_servers"); all && all->is_bool()) {
    binding.all_servers = all->as_bool();
  }
  if (const auto* list = preferences->if_contains("mcp_servers"); list && list->is_array()) {
    for (const auto& item : list->as_array()) {
      if (item.is_string()) binding.servers.emplace_back(item.as_string());
    }
  }
  return binding;
}

McpBinding McpBinding::FromPipelineConfig(const util::JsonObject& config) {
  const auto* prefs = config.if_contains(kExtensionsPreferencesKey);
  return FromPreferences(prefs && prefs->is_object() ? &prefs->as_object() : nullptr);
}

bool McpBinding::Includes(const std::string& server_name) const {
  return all_servers || std::find(servers.begin(), servers.end(), server_name) != servers.end();
}

}  // namespace sb::domain
