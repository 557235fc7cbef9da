// The port through which a pipeline reaches its plugins: the message-received event and plugin
// commands. Plugins that are not running, fail or miss their deadline are skipped; the message
// path never waits on a dead plugin.
//   hooks.MessageReceived(binding, event, [](std::optional<PluginEventReply> r) { ... });
//   hooks.Command(binding, "greet", data, [](std::optional<util::Result<std::string>> r) { ... });
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "domain/llm.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::domain {

// Where the runtime puts a pipeline's extensions_preferences inside the config it hands to the
// engine and runners; LangBot's config has no such key, so nothing else reads it.
inline constexpr std::string_view kExtensionsPreferencesKey = "_extensions_preferences";

// Which plugins a pipeline uses: LangBot's `extensions_preferences` ({"enable_all_plugins":
// true} by default, else the listed {"author","name"} pairs).
struct PluginBinding {
  bool all_plugins = true;
  std::vector<std::string> plugins;  // "author/name"

  static PluginBinding FromPreferences(const util::JsonObject* preferences);
  // The binding a pipeline config carries under kExtensionsPreferencesKey (absent: all).
  static PluginBinding FromPipelineConfig(const util::JsonObject& config);
  bool Includes(const std::string& plugin_id) const;
};

struct PluginEventReply {
  std::string plugin_id;
  std::string reply;             // may be empty when the plugin only prevents the default
  bool prevent_default = false;  // the runner (model) is not asked
};

// Thread-safe; callbacks run exactly once, on any thread.
class PluginHooks {
 public:
  virtual ~PluginHooks() = default;
  // `event` goes to each bound, running plugin that listens to "message_received", highest
  // priority first, until one replies or prevents the default; nullopt when none did.
  virtual void MessageReceived(const PluginBinding& binding, util::JsonObject event,
                               std::function<void(std::optional<PluginEventReply>)> done) = 0;
  // nullopt when no bound, running plugin offers `command`; else its reply or why it failed.
  virtual void Command(const PluginBinding& binding, const std::string& command,
                       util::JsonObject data,
                       std::function<void(std::optional<util::Result<std::string>>)> done) = 0;
  // The commands bound, running plugins offer ({name, description}), for !help. Never blocks.
  virtual std::vector<std::pair<std::string, std::string>> Commands(
      const PluginBinding& binding) = 0;
  // True when a bound, running plugin listens to `event` (cheap; lets callers skip building
  // the event's data).
  virtual bool Listens(const PluginBinding& binding, const std::string& event) = 0;
  // Passes `data` through each bound, running plugin listening to `event`, highest priority
  // first: a plugin answering {<key>: value} replaces data[key] for the next one. A plugin that
  // fails or misses its deadline is skipped. `done` gets the final data.
  virtual void Transform(const PluginBinding& binding, const std::string& event,
                         util::JsonObject data, const std::string& key,
                         std::function<void(util::JsonObject)> done) = 0;
  // The tools bound, running plugins offer, for models with the func_call ability (a name two
  // plugins offer goes to the higher priority). Never blocks.
  virtual std::vector<ToolSpec> Tools(const PluginBinding& binding) = 0;
  // Runs a tool a model called; `arguments` is its JSON text. The result is JSON text for the
  // model; kNotFound when no bound, running plugin offers it.
  virtual void CallTool(const PluginBinding& binding, const std::string& name,
                        const std::string& arguments,
                        std::function<void(util::Result<std::string>)> done) = 0;
};

}  // namespace sb::domain
