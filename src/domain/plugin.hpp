// Installed plugins as the core remembers them: which version is in use, whether it runs, its
// configuration, and the key-value storage the plugin itself keeps through the core.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::domain {

struct PluginKey {
  std::string author;
  std::string name;
  std::string id() const { return author + "/" + name; }
};

struct InstalledPlugin {
  std::string author;
  std::string name;
  std::string version;         // the unpacked folder in use: plugins/<author>/<name>/<version>
  bool enabled = true;         // runs as a process when true
  int priority = 0;            // events and commands reach higher priorities first
  std::string install_source;  // "marketplace" or "local"
  util::JsonObject config;     // validated against the manifest's spec.config
  util::JsonObject manifest;   // label, description, icon, config schema of `version`
  util::TimePoint created_at;
  util::TimePoint updated_at;

  PluginKey key() const { return {author, name}; }
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class PluginRepository {
 public:
  virtual ~PluginRepository() = default;
  // Ordered by priority (highest first), then author and name.
  virtual util::Result<std::vector<InstalledPlugin>> List() = 0;
  // kNotFound naming the plugin.
  virtual util::Result<InstalledPlugin> Get(const PluginKey& key) = 0;
  // Inserts or replaces the whole record (created_at is kept on replace).
  virtual util::Result<void> Put(const InstalledPlugin& plugin) = 0;
  // kNotFound when absent. Its storage goes with it.
  virtual util::Result<void> Remove(const PluginKey& key) = 0;

  // The plugin's own key-value storage; values are opaque strings.
  virtual util::Result<std::optional<std::string>> StorageGet(const PluginKey& key,
                                                              const std::string& item) = 0;
  // kNotFound when the plugin is not installed.
  virtual util::Result<void> StorageSet(const PluginKey& key, const std::string& item,
                                        const std::string& value) = 0;
};

}  // namespace sb::domain
