#include "domain/plugin_hooks.hpp"

#include <algorithm>

namespace sb::domain {

PluginBinding PluginBinding::FromPreferences(const util::JsonObject* preferences) {
  PluginBinding binding;
  if (!preferences) return binding;
  if (const auto* all = preferences->if_contains("enable_all_plugins"); all && all->is_bool()) {
    binding.all_plugins = all->as_bool();
  }
  if (const auto* list = preferences->if_contains("plugins"); list && list->is_array()) {
    for (const auto& item : list->as_array()) {
      const auto* o = item.if_object();
      const auto* author = o ? o->if_contains("author") : nullptr;
      const auto* name = o ? o->if_contains("name") : nullptr;
      if (author && name && author->is_string() && name->is_string()) {
        binding.plugins.push_back(std::string(author->as_string()) + "/" +
                                  std::string(name->as_string()));
      } else if (item.is_string()) {
        binding.plugins.emplace_back(item.as_string());
      }
    }
  }
  return binding;
}

PluginBinding PluginBinding::FromPipelineConfig(const util::JsonObject& config) {
  const auto* prefs = config.if_contains(kExtensionsPreferencesKey);
  return FromPreferences(prefs && prefs->is_object() ? &prefs->as_object() : nullptr);
}

bool PluginBinding::Includes(const std::string& plugin_id) const {
  return all_plugins || std::find(plugins.begin(), plugins.end(), plugin_id) != plugins.end();
}

}  // namespace sb::domain
