// Installed plugins as the core remembers them: which version is in use, whether it runs, its
// configuration, and the key-value storage the plugin itself keeps through the core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
  // The admin lets the plugin reach the network (it also needs its manifest to ask for it).
  bool allow_network = false;
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

// An installed plugin with what its process is doing, as the API shows it.
struct PluginView {
  InstalledPlugin plugin;
  std::string status;             // stopped | starting | running | restarting | failed
  std::string error;              // why it is restarting or failed
  int restarts = 0;               // crashes since it was last started or enabled
  int recent_crashes = 0;         // within the supervisor's crash window
  std::string sandbox;            // what confines the running process (PluginStatus::sandbox)
  util::JsonObject capabilities;  // {events, commands, tools} while running
};

struct PluginFile {
  std::string bytes;
  std::string content_type;
};

// GitHub releases to install a plugin from, in the shapes LangBot's console shows.
struct GithubRelease {
  std::int64_t id = 0;
  std::string tag_name;
  std::optional<std::string> name;          // GitHub gives null for a release published without one
  std::optional<std::string> published_at;  // null for a draft
  bool prerelease = false;
  bool draft = false;
};

struct GithubReleaseList {
  std::string owner;
  std::string repo;
  std::vector<GithubRelease> releases;
};

struct GithubAsset {
  std::int64_t id = 0;
  std::string name;
  std::int64_t size = 0;
  std::string download_url;  // GitHub's browser_download_url
  std::string content_type;
};

// What LangBot's console sends to install from a release asset; owner, repo and release_tag only
// name the task (the package's manifest names the plugin).
struct GithubInstall {
  std::string asset_url;
  std::string owner;
  std::string repo;
  std::string release_tag;
};

// Whether plugins can run in this process, for LangBot's `/system/status/plugin-system`: the
// plugin system is in the process itself, so "connected" means it has started and can start a
// plugin (its sandbox works here, or the admin turned the sandbox off).
struct PluginSystemStatus {
  bool enabled = true;
  bool connected = false;
  std::string error = "ok";  // why it is not connected, for a person
};

// The plugin operations the API offers (install, upgrade and delete run as background tasks).
// Blocking: call from the blocking pool. Thread-safe.
class PluginManager {
 public:
  virtual ~PluginManager() = default;
  virtual util::Result<std::vector<PluginView>> List() = 0;
  // kNotFound "plugin a/b is not installed".
  virtual util::Result<PluginView> Get(const PluginKey& key) = 0;
  // A task id. kInvalidArgument for a malformed author/name, kConflict when the plugin is
  // installed already or another operation on it runs.
  virtual util::Result<std::int64_t> InstallFromMarketplace(const PluginKey& key,
                                                            const std::string& version) = 0;
  // A task id; the package's manifest names the plugin. kPayloadTooLarge over the package limit.
  virtual util::Result<std::int64_t> InstallLocal(std::string package) = 0;
  // A task id. kNotFound, kConflict as above.
  virtual util::Result<std::int64_t> Upgrade(const PluginKey& key) = 0;
  virtual util::Result<std::int64_t> Delete(const PluginKey& key) = 0;
  virtual util::Result<util::JsonObject> Config(const PluginKey& key) = 0;
  // Validated against the manifest's config schema (kInvalidArgument naming the field), stored,
  // and the plugin restarted with it when enabled (returns once the restart ended; a plugin
  // that cannot start shows why in its status).
  virtual util::Result<void> SetConfig(const PluginKey& key, const util::JsonObject& config) = 0;
  virtual util::Result<void> SetEnabled(const PluginKey& key, bool enabled) = 0;
  // Lets the plugin reach the network (when its manifest asks for it too) or takes that away;
  // a running plugin is restarted into its new sandbox.
  virtual util::Result<void> SetNetworkAllowed(const PluginKey& key, bool allowed) = 0;
  // kNotFound when the plugin has none.
  virtual util::Result<std::string> Readme(const PluginKey& key) = 0;
  virtual util::Result<PluginFile> Icon(const PluginKey& key) = 0;
  // The bytes of `name` in the package's assets/ folder; kNotFound for an unknown plugin or
  // file (or a name that is not one plain path component), kPayloadTooLarge over 4 MiB.
  virtual util::Result<std::string> Asset(const PluginKey& key, std::string_view name) = 0;
  // The marketplace's listing, for the console.
  virtual util::Result<util::Json> MarketplaceList(int page, int page_size) = 0;
  // The releases of the repository `repo_url` names (github.com/<owner>/<repo>, LangBot's rule):
  // kInvalidArgument for another URL, kNotFound for an unknown repository, kUpstream* when
  // GitHub fails or rate limits.
  virtual util::Result<GithubReleaseList> GithubReleases(std::string_view repo_url) = 0;
  // The assets of one release; the same errors.
  virtual util::Result<std::vector<GithubAsset>> GithubReleaseAssets(const std::string& owner,
                                                                     const std::string& repo,
                                                                     std::int64_t release_id) = 0;
  // A task id: downloads the asset (only from GitHub's hosts or the configured API base; see
  // docs/plugins.md) and installs it like a local package. kInvalidArgument for any other URL.
  virtual util::Result<std::int64_t> InstallFromGithub(const GithubInstall& install) = 0;
  // May probe the sandbox once (a short child process).
  virtual PluginSystemStatus SystemStatus() = 0;
};

}  // namespace sb::domain
