// The plugins of this server: installs (from the marketplace or a local package), upgrades and
// deletes as persisted background tasks; config validated against the plugin's schema; one
// supervised process per enabled plugin; and the core side of the plugins' calls (storage, log,
// and what the composition root wires in: send_message, invoke_llm).
//   ProcessPluginManager plugins(deps, options);
//   plugins.Start();                              // launches every enabled plugin
//   auto task = plugins.InstallFromMarketplace({"alice", "echo"}, "");
//   plugins.Stop();                               // at shutdown
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "domain/plugin.hpp"
#include "domain/plugin_hooks.hpp"
#include "domain/task.hpp"
#include "plugins/github_client.hpp"
#include "plugins/marketplace_client.hpp"
#include "plugins/package.hpp"
#include "plugins/plugin_supervisor.hpp"
#include "util/blocking_executor.hpp"
#include "util/clock.hpp"

namespace sb::plugins {

// Checks a config against a LangBot config schema and fills defaults (services::ApplyConfigSchema,
// passed in by the composition root: this layer may not depend on services).
using ConfigValidator = std::function<util::Result<util::JsonObject>(
    const util::JsonArray& schema, const util::JsonObject& config, std::string_view where)>;

// A call a plugin makes that the core answers elsewhere (send_message, invoke_llm).
using PluginCallHandler =
    std::function<void(const domain::PluginKey& plugin, const util::JsonObject& data,
                       std::function<void(util::Result<util::Json>)> answer)>;

struct PluginManagerDeps {
  domain::PluginRepository* plugins = nullptr;
  domain::TaskRepository* tasks = nullptr;
  const util::Clock* clock = nullptr;
  util::BlockingExecutor* blocking = nullptr;
  MarketplaceClient* marketplace = nullptr;
  GithubClient* github = nullptr;  // null: the GitHub routes answer kUnavailable
  boost::asio::any_io_executor executor;
  ConfigValidator validate;
  PluginCallHandler send_message;     // may be empty: the call is refused
  PluginCallHandler invoke_llm;       // may be empty: the call is refused
  PluginCallHandler get_config_file;  // may be empty: the call is refused
};

struct PluginManagerOptions {
  std::chrono::milliseconds event_deadline{5'000};  // message_received, per plugin
  std::chrono::milliseconds command_deadline{10'000};
  std::chrono::milliseconds tool_deadline{30'000};
  std::filesystem::path plugins_dir;  // <data>/plugins
  PackageLimits package_limits;
  SupervisorOptions supervisor;
};

class ProcessPluginManager final : public domain::PluginManager,
                                   public domain::PluginHooks,
                                   public PluginCore {
 public:
  ProcessPluginManager(PluginManagerDeps deps, PluginManagerOptions options);
  ~ProcessPluginManager() override;

  // Launches every enabled plugin (in the background; failures show in their status).
  void Start();
  // Stops every plugin process. Blocking.
  void Stop();

  PluginSupervisor& supervisor() { return supervisor_; }

  // Runs on a task that another instance started and died running (services::TaskClaimer hands
  // it over claimed): an install from the marketplace or GitHub, an upgrade or a delete, from
  // what the task's spec records. kUnavailable for an install of an uploaded package (its bytes
  // were only on the dead instance), kConflict when the plugin is busy here.
  util::Result<void> Resume(const domain::Task& task);

  // domain::PluginManager
  util::Result<std::vector<domain::PluginView>> List() override;
  domain::PluginSystemStatus SystemStatus() override;
  util::Result<domain::PluginView> Get(const domain::PluginKey& key) override;
  util::Result<std::int64_t> InstallFromMarketplace(const domain::PluginKey& key,
                                                    const std::string& version) override;
  util::Result<std::int64_t> InstallLocal(std::string package) override;
  util::Result<std::int64_t> Upgrade(const domain::PluginKey& key) override;
  util::Result<std::int64_t> Delete(const domain::PluginKey& key) override;
  util::Result<util::JsonObject> Config(const domain::PluginKey& key) override;
  util::Result<void> SetConfig(const domain::PluginKey& key,
                               const util::JsonObject& config) override;
  util::Result<void> SetEnabled(const domain::PluginKey& key, bool enabled) override;
  util::Result<void> SetNetworkAllowed(const domain::PluginKey& key, bool allowed) override;
  util::Result<std::string> Readme(const domain::PluginKey& key) override;
  util::Result<domain::PluginFile> Icon(const domain::PluginKey& key) override;
  util::Result<std::string> Asset(const domain::PluginKey& key, std::string_view name) override;
  util::Result<util::Json> MarketplaceList(int page, int page_size) override;
  util::Result<domain::GithubReleaseList> GithubReleases(std::string_view repo_url) override;
  util::Result<std::vector<domain::GithubAsset>> GithubReleaseAssets(
      const std::string& owner, const std::string& repo, std::int64_t release_id) override;
  util::Result<std::int64_t> InstallFromGithub(const domain::GithubInstall& install) override;

  // domain::PluginHooks
  void MessageReceived(const domain::PluginBinding& binding, util::JsonObject event,
                       std::function<void(std::optional<domain::PluginEventReply>)> done) override;
  void Command(const domain::PluginBinding& binding, const std::string& command,
               util::JsonObject data,
               std::function<void(std::optional<util::Result<std::string>>)> done) override;
  std::vector<std::pair<std::string, std::string>> Commands(
      const domain::PluginBinding& binding) override;
  bool Listens(const domain::PluginBinding& binding, const std::string& event) override;
  void Transform(const domain::PluginBinding& binding, const std::string& event,
                 util::JsonObject data, const std::string& key,
                 std::function<void(util::JsonObject)> done) override;
  std::vector<domain::ToolSpec> Tools(const domain::PluginBinding& binding) override;
  void CallTool(const domain::PluginBinding& binding, const std::string& name,
                const std::string& arguments,
                std::function<void(util::Result<std::string>)> done) override;

  // PluginCore
  void HandlePluginCall(const domain::PluginKey& plugin, const std::string& action,
                        const util::JsonObject& data,
                        std::function<void(util::Result<util::Json>)> answer) override;
  void PluginLog(const domain::PluginKey& plugin, const std::string& line) override;

 private:
  class TaskRun;
  std::filesystem::path FolderOf(const domain::PluginKey& key, const std::string& version) const;
  domain::PluginView ViewOf(const domain::InstalledPlugin& plugin) const;
  // Loads the plugin's record, applies `change` (its error is returned as is), stores it and
  // brings the process in line: restarted and waited for when enabled, stopped otherwise.
  util::Result<void> ChangeRecord(
      const domain::PluginKey& key,
      const std::function<util::Result<void>(domain::InstalledPlugin&)>& change);
  // Reserves `key` for one operation; kConflict when another one runs.
  util::Result<void> Reserve(const std::string& id);
  void Release(const std::string& id);
  // Inserts the task (with `spec`, what another instance needs to resume it) and runs it.
  util::Result<std::int64_t> StartTask(const std::string& kind, const std::string& label,
                                       const std::string& id, util::JsonObject spec,
                                       std::function<util::Result<util::Json>(TaskRun&)> work);
  // Runs `work` for the stored `task` on the blocking pool, then releases `id`.
  void RunTask(domain::Task task, const std::string& id,
               std::function<util::Result<util::Json>(TaskRun&)> work);
  util::Result<util::Json> FromMarketplace(TaskRun& run, const domain::PluginKey& key,
                                           const std::string& version);
  util::Result<util::Json> FromGithub(TaskRun& run, const std::string& url);
  util::Result<void> ResumeFromGithub(const domain::Task& task, const std::string& url);
  util::Result<util::Json> Install(TaskRun& run, const domain::PluginKey& key,
                                   const std::string& version, std::string package,
                                   const std::string& source);
  util::Result<util::Json> DoUpgrade(TaskRun& run, const domain::PluginKey& key);
  util::Result<util::Json> DoDelete(TaskRun& run, const domain::PluginKey& key);
  util::Result<void> LaunchAndWait(const domain::InstalledPlugin& plugin);
  // The manifest of a package not yet installed (unpacked into a scratch folder and removed).
  util::Result<PluginManifest> PeekManifest(const std::string& package);
  // Installs a package whose manifest names the plugin (local and GitHub installs), inside a
  // task: reserves the plugin, refuses one installed already.
  util::Result<util::Json> InstallPackage(TaskRun& run, std::string package,
                                          const std::string& source);

  // The enabled plugins bound by `binding`, highest priority first, from the cache.
  std::vector<domain::PluginKey> Bound(const domain::PluginBinding& binding) const;
  // The bound, running plugins listening to `event`, highest priority first.
  std::vector<domain::PluginKey> Listeners(const domain::PluginBinding& binding,
                                           const std::string& event) const;
  void RefreshCache();

  PluginManagerDeps deps_;
  PluginManagerOptions options_;
  PluginSupervisor supervisor_;
  std::atomic<bool> started_{false};  // between Start and Stop
  std::mutex mu_;
  std::set<std::string> busy_;  // plugins with an operation running; guarded by mu_
  // Installed plugins as the message path sees them (no database read per message); rewritten
  // after every change. Guarded by cache_mu_.
  mutable std::mutex cache_mu_;
  std::vector<domain::InstalledPlugin> cache_;
};

// The manifest as stored with an installed plugin (label, description, icon, config schema,
// command, repository).
util::JsonObject ManifestRecord(const PluginManifest& manifest);

}  // namespace sb::plugins
