#include "plugins/plugin_manager.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <future>
#include <sstream>

#include "plugins/plugin_task_run.hpp"

namespace sb::plugins {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

// The folder of a version is named by the version asked for and found again by the one recorded
// from the manifest: a package must be the version it was fetched as. On a mismatch the
// unpacked folder goes.
util::Result<void> CheckPackageVersion(const PluginManifest& manifest, const std::string& expected,
                                       const fs::path& dir) {
  if (manifest.version == expected) return util::Ok();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return util::Fail(ErrorCode::kInvalidArgument,
                    fmt::format("bad package: its manifest says version {}, the marketplace {}",
                                manifest.version, expected));
}

util::Result<void> CheckKey(const domain::PluginKey& key) {
  if (!ValidPluginIdPart(key.author) || !ValidPluginIdPart(key.name)) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "plugin author and name must be 1-64 letters, digits, '_' or '-'");
  }
  return util::Ok();
}

util::JsonObject CapabilitiesJson(const PluginCapabilities& caps) {
  util::JsonArray events(caps.events.begin(), caps.events.end());
  util::JsonArray commands;
  for (const auto& c : caps.commands) {
    commands.push_back(util::JsonObject{{"name", c.name}, {"description", c.description}});
  }
  util::JsonArray tools;
  for (const auto& t : caps.tools) {
    tools.push_back(util::JsonObject{
        {"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
  }
  return {{"events", std::move(events)},
          {"commands", std::move(commands)},
          {"tools", std::move(tools)}};
}

// A task whose lease lapsed while it ran here (this instance was paused or cut off from the
// database) is run again by the instance that claimed it; this one stops before changing
// anything shared.
util::Error TakenOver() {
  return {ErrorCode::kConflict, "the task was taken over by another instance"};
}

const util::JsonArray& SchemaOf(const domain::InstalledPlugin& plugin) {
  static const util::JsonArray kNone;
  const auto* schema = plugin.manifest.if_contains("config");
  return schema && schema->is_array() ? schema->as_array() : kNone;
}

}  // namespace

util::JsonObject ManifestRecord(const PluginManifest& m) {
  util::JsonArray command(m.command.begin(), m.command.end());
  return {{"label", m.label},    {"description", m.description},
          {"icon", m.icon},      {"repository", m.repository},
          {"config", m.config},  {"command", std::move(command)},
          {"network", m.network}};
}

ProcessPluginManager::ProcessPluginManager(PluginManagerDeps deps, PluginManagerOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      supervisor_(deps_.executor, *this, options_.supervisor) {}

ProcessPluginManager::~ProcessPluginManager() = default;

fs::path ProcessPluginManager::FolderOf(const domain::PluginKey& key,
                                        const std::string& version) const {
  return options_.plugins_dir / key.author / key.name / version;
}

void ProcessPluginManager::RefreshCache() {
  auto list = deps_.plugins->List();
  if (!list) {
    spdlog::warn("cannot read the installed plugins: {}", list.error().message);
    return;
  }
  std::lock_guard lock(cache_mu_);
  cache_ = std::move(*list);
}

std::vector<domain::PluginKey> ProcessPluginManager::Bound(
    const domain::PluginBinding& binding) const {
  std::vector<domain::PluginKey> out;
  std::lock_guard lock(cache_mu_);
  for (const auto& p : cache_) {
    if (p.enabled && binding.Includes(p.key().id())) out.push_back(p.key());
  }
  return out;
}

void ProcessPluginManager::Start() {
  started_ = true;
  RefreshCache();
  auto list = deps_.plugins->List();
  if (!list) {
    spdlog::error("cannot read the installed plugins: {}", list.error().message);
    return;
  }
  for (const auto& plugin : *list) {
    if (!plugin.enabled) continue;
    supervisor_.Launch(plugin, FolderOf(plugin.key(), plugin.version),
                       [id = plugin.key().id()](util::Result<void> r) {
                         if (!r) spdlog::warn("plugin {} did not start: {}", id, r.error().message);
                       });
  }
}

void ProcessPluginManager::Stop() {
  started_ = false;
  supervisor_.StopAll();
}

domain::PluginSystemStatus ProcessPluginManager::SystemStatus() {
  domain::PluginSystemStatus status;
  if (!started_) {
    status.error = "the plugin system is not running (the server is starting or stopping)";
    return status;
  }
  if (auto sandbox = supervisor_.SandboxAvailable(); !sandbox) {
    status.error = "no sandbox on this machine: " + sandbox.error().message +
                   "; plugins do not run unless the admin sets plugins.sandbox: off";
    return status;
  }
  status.connected = true;
  return status;
}

domain::PluginView ProcessPluginManager::ViewOf(const domain::InstalledPlugin& plugin) const {
  domain::PluginView view;
  view.plugin = plugin;
  const PluginStatus status = supervisor_.Status(plugin.key());
  view.status = PluginStateName(status.state);
  view.error = status.error;
  view.restarts = status.restarts;
  view.recent_crashes = status.crashes;
  view.sandbox = status.sandbox;
  if (auto caps = supervisor_.Capabilities(plugin.key()))
    view.capabilities = CapabilitiesJson(*caps);
  return view;
}

util::Result<std::vector<domain::PluginView>> ProcessPluginManager::List() {
  auto list = deps_.plugins->List();
  if (!list) return tl::unexpected(list.error());
  std::vector<domain::PluginView> out;
  for (const auto& p : *list) out.push_back(ViewOf(p));
  return out;
}

util::Result<domain::PluginView> ProcessPluginManager::Get(const domain::PluginKey& key) {
  if (auto ok = CheckKey(key); !ok) return tl::unexpected(ok.error());
  auto plugin = deps_.plugins->Get(key);
  if (!plugin) return tl::unexpected(plugin.error());
  return ViewOf(*plugin);
}

util::Result<void> ProcessPluginManager::Reserve(const std::string& id) {
  std::lock_guard lock(mu_);
  if (!busy_.insert(id).second) {
    return util::Fail(ErrorCode::kConflict,
                      fmt::format("another operation on plugin {} is running", id));
  }
  return util::Ok();
}

void ProcessPluginManager::Release(const std::string& id) {
  std::lock_guard lock(mu_);
  busy_.erase(id);
}

util::Result<std::int64_t> ProcessPluginManager::StartTask(
    const std::string& kind, const std::string& label, const std::string& id, util::JsonObject spec,
    std::function<util::Result<util::Json>(TaskRun&)> work) {
  domain::Task task;
  task.task_type = "plugin-operation";
  task.kind = kind;
  task.name = kind + ":" + id;
  task.label = label;
  task.created_at = task.updated_at = deps_.clock->Now();
  task.result = nullptr;
  task.spec = std::move(spec);
  auto task_id = deps_.tasks->Insert(task);
  if (!task_id) {
    Release(id);
    return tl::unexpected(task_id.error());
  }
  task.id = *task_id;
  RunTask(std::move(task), id, std::move(work));
  return *task_id;
}

void ProcessPluginManager::RunTask(domain::Task task, const std::string& id,
                                   std::function<util::Result<util::Json>(TaskRun&)> work) {
  auto run = std::make_shared<TaskRun>(*deps_.tasks, *deps_.clock, std::move(task));
  deps_.blocking->Post([this, run, id, work = std::move(work)] {
    run->Running();
    util::Result<util::Json> result = util::Fail(ErrorCode::kInternal, "the task did not run");
    try {
      result = work(*run);
    } catch (const std::exception& e) {
      result = util::Fail(ErrorCode::kInternal, fmt::format("unexpected failure: {}", e.what()));
    }
    if (!result) spdlog::warn("plugin task for {} failed: {}", id, result.error().message);
    run->Finish(std::move(result));
    Release(id);
  });
}

util::Result<void> ProcessPluginManager::Resume(const domain::Task& task) {
  auto text = [&task](const char* field) -> std::string {
    const auto* v = task.spec.if_contains(field);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
  };
  const domain::PluginKey key{text("author"), text("name")};
  const std::string source = text("source");
  auto reserve = [this](const std::string& id) -> util::Result<void> {
    if (auto ok = Reserve(id); !ok) {
      return util::Fail(ErrorCode::kConflict,
                        "cannot resume: " + ok.error().message + " on the instance that took it");
    }
    return util::Ok();
  };
  if (task.kind == "plugin-install" && source == "github") {
    return ResumeFromGithub(task, text("asset_url"));
  }
  if (task.kind == "plugin-install" && source != "marketplace") {
    return util::Fail(ErrorCode::kUnavailable,
                      "interrupted: the instance installing it stopped, and the uploaded package "
                      "was only there; upload it again");
  }
  if (task.kind != "plugin-install" && task.kind != "plugin-upgrade" &&
      task.kind != "plugin-delete") {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("a {} task cannot be resumed", task.kind));
  }
  if (auto ok = CheckKey(key); !ok) {
    return util::Fail(ErrorCode::kInvalidArgument, "cannot resume: the task names no plugin");
  }
  if (auto ok = reserve(key.id()); !ok) return ok;
  if (task.kind == "plugin-install") {
    // Installing again what a dead instance half-installed ends in a clean install: the folder
    // is unpacked afresh and the record written over.
    RunTask(task, key.id(), [this, key, version = text("version")](TaskRun& run) {
      run.Action(kResumed);
      return FromMarketplace(run, key, version);
    });
  } else if (task.kind == "plugin-upgrade") {
    RunTask(task, key.id(), [this, key](TaskRun& run) {
      run.Action(kResumed);
      return DoUpgrade(run, key);
    });
  } else {
    RunTask(task, key.id(), [this, key](TaskRun& run) {
      run.Action(kResumed);
      return DoDelete(run, key);
    });
  }
  return util::Ok();
}

util::Result<std::int64_t> ProcessPluginManager::InstallFromMarketplace(
    const domain::PluginKey& key, const std::string& version) {
  if (auto ok = CheckKey(key); !ok) return tl::unexpected(ok.error());
  if (!version.empty() && !ValidVersion(version)) {
    return util::Fail(ErrorCode::kInvalidArgument, "plugin_version is malformed");
  }
  if (auto ok = Reserve(key.id()); !ok) return tl::unexpected(ok.error());
  if (auto existing = deps_.plugins->Get(key); existing) {
    Release(key.id());
    return util::Fail(ErrorCode::kConflict,
                      fmt::format("plugin {} is installed already (version {}); upgrade it instead",
                                  key.id(), existing->version));
  }
  return StartTask(
      "plugin-install", "Installing plugin " + key.id(), key.id(),
      {{"source", "marketplace"}, {"author", key.author}, {"name", key.name}, {"version", version}},
      [this, key, version](TaskRun& run) { return FromMarketplace(run, key, version); });
}

util::Result<util::Json> ProcessPluginManager::FromMarketplace(TaskRun& run,
                                                               const domain::PluginKey& key,
                                                               const std::string& version) {
  run.Action("fetching the plugin's info from the marketplace");
  auto info = deps_.marketplace->Info(key.author, key.name);
  if (!info) return tl::unexpected(info.error());
  const std::string wanted = version.empty() ? info->latest_version : version;
  run.Action("downloading version " + wanted);
  auto zip = deps_.marketplace->Download(key.author, key.name, wanted, [&run](std::uint64_t bytes) {
    run.Progress("downloaded_bytes", bytes);
  });
  if (!zip) return tl::unexpected(zip.error());
  if (wanted == info->latest_version) {
    if (auto ok = VerifyChecksum(*zip, info->checksum); !ok) return tl::unexpected(ok.error());
  }
  return Install(run, key, wanted, std::move(*zip), "marketplace");
}

util::Result<std::int64_t> ProcessPluginManager::InstallLocal(std::string package) {
  if (package.size() > options_.package_limits.max_package_bytes) {
    return util::Fail(ErrorCode::kPayloadTooLarge,
                      fmt::format("the package is larger than {} bytes",
                                  options_.package_limits.max_package_bytes));
  }
  // The manifest names the plugin.
  auto manifest = PeekManifest(package);
  if (!manifest) return tl::unexpected(manifest.error());
  const domain::PluginKey key{manifest->author, manifest->name};
  if (auto ok = Reserve(key.id()); !ok) return tl::unexpected(ok.error());
  if (auto existing = deps_.plugins->Get(key); existing) {
    Release(key.id());
    return util::Fail(
        ErrorCode::kConflict,
        fmt::format("plugin {} is installed already (version {})", key.id(), existing->version));
  }
  return StartTask(
      "plugin-install", "Installing plugin " + key.id() + " from a package", key.id(),
      {{"source", "local"}, {"author", key.author}, {"name", key.name}},
      [this, key, version = manifest->version, package = std::move(package)](TaskRun& run) mutable {
        return Install(run, key, version, std::move(package), "local");
      });
}

util::Result<PluginManifest> ProcessPluginManager::PeekManifest(const std::string& package) {
  static std::atomic<std::uint64_t> counter{0};
  const fs::path scratch = options_.plugins_dir / ".incoming" / fmt::format("peek-{}", ++counter);
  std::error_code ec;
  fs::remove_all(scratch, ec);
  auto manifest = UnpackPackage(package, scratch, options_.package_limits, "");
  fs::remove_all(scratch, ec);
  return manifest;
}

util::Result<void> ProcessPluginManager::LaunchAndWait(const domain::InstalledPlugin& plugin) {
  std::promise<util::Result<void>> started;
  auto future = started.get_future();
  supervisor_.Launch(plugin, FolderOf(plugin.key(), plugin.version),
                     [started = std::make_shared<std::promise<util::Result<void>>>(std::move(
                          started))](util::Result<void> r) { started->set_value(std::move(r)); });
  // Bounded: at shutdown the I/O context may stop before the handshake's answer.
  if (future.wait_for(options_.supervisor.handshake_timeout + std::chrono::seconds(5)) !=
      std::future_status::ready) {
    return util::Fail(ErrorCode::kUnavailable, "launch failed: the server is shutting down");
  }
  return future.get();
}

util::Result<util::Json> ProcessPluginManager::Install(TaskRun& run, const domain::PluginKey& key,
                                                       const std::string& version,
                                                       std::string package,
                                                       const std::string& source) {
  run.Action("unpacking");
  const fs::path dir = FolderOf(key, version);
  std::error_code ec;
  fs::remove_all(dir, ec);  // left by an install that failed half-way (not installed: not in use)
  auto manifest = UnpackPackage(package, dir, options_.package_limits, key.id());
  if (!manifest) return tl::unexpected(manifest.error());
  if (auto ok = CheckPackageVersion(*manifest, version, dir); !ok)
    return tl::unexpected(ok.error());
  domain::InstalledPlugin plugin;
  plugin.author = key.author;
  plugin.name = key.name;
  plugin.version = manifest->version;
  plugin.install_source = source;
  plugin.manifest = ManifestRecord(*manifest);
  auto config = deps_.validate(manifest->config, {}, "config");
  plugin.config = config ? std::move(*config) : util::JsonObject();  // required ones stay unset
  plugin.created_at = plugin.updated_at = deps_.clock->Now();
  run.Action("starting the plugin");
  if (run.lost()) return tl::unexpected(TakenOver());
  if (auto started = LaunchAndWait(plugin); !started) {
    supervisor_.Stop(key, nullptr);
    fs::remove_all(dir, ec);
    return tl::unexpected(started.error());
  }
  if (run.lost()) {
    supervisor_.Stop(key, nullptr);
    fs::remove_all(dir, ec);
    return tl::unexpected(TakenOver());
  }
  if (auto stored = deps_.plugins->Put(plugin); !stored) {
    supervisor_.Stop(key, nullptr);
    fs::remove_all(dir, ec);
    return tl::unexpected(stored.error());
  }
  RefreshCache();
  return util::Json(util::JsonObject{{"plugin_id", key.id()}, {"version", plugin.version}});
}

util::Result<std::int64_t> ProcessPluginManager::Upgrade(const domain::PluginKey& key) {
  if (auto ok = CheckKey(key); !ok) return tl::unexpected(ok.error());
  auto existing = deps_.plugins->Get(key);
  if (!existing) return tl::unexpected(existing.error());
  if (auto ok = Reserve(key.id()); !ok) return tl::unexpected(ok.error());
  return StartTask("plugin-upgrade", "Upgrading plugin " + key.id(), key.id(),
                   {{"author", key.author}, {"name", key.name}},
                   [this, key](TaskRun& run) { return DoUpgrade(run, key); });
}

util::Result<util::Json> ProcessPluginManager::DoUpgrade(TaskRun& run,
                                                         const domain::PluginKey& key) {
  auto current = deps_.plugins->Get(key);
  if (!current) return tl::unexpected(current.error());
  run.Action("fetching the plugin's info from the marketplace");
  auto info = deps_.marketplace->Info(key.author, key.name);
  if (!info) return tl::unexpected(info.error());
  if (CompareVersions(info->latest_version, current->version) <= 0) {
    return util::Json(util::JsonObject{
        {"plugin_id", key.id()}, {"version", current->version}, {"upgraded", false}});
  }
  run.Action("downloading version " + info->latest_version);
  auto zip = deps_.marketplace->Download(
      key.author, key.name, info->latest_version,
      [&run](std::uint64_t bytes) { run.Progress("downloaded_bytes", bytes); });
  if (!zip) return tl::unexpected(zip.error());
  if (auto ok = VerifyChecksum(*zip, info->checksum); !ok) return tl::unexpected(ok.error());
  run.Action("unpacking");
  const fs::path dir = FolderOf(key, info->latest_version);
  std::error_code ec;
  fs::remove_all(dir, ec);
  auto manifest = UnpackPackage(*zip, dir, options_.package_limits, key.id());
  if (!manifest) return tl::unexpected(manifest.error());
  if (auto ok = CheckPackageVersion(*manifest, info->latest_version, dir); !ok) {
    return tl::unexpected(ok.error());
  }
  domain::InstalledPlugin next = *current;
  next.version = manifest->version;
  next.manifest = ManifestRecord(*manifest);
  next.updated_at = deps_.clock->Now();
  // Known keys keep their values; new keys get their defaults; a value the new schema refuses
  // falls back to its default.
  util::JsonObject kept;
  for (const auto& item : manifest->config) {
    const auto* name = item.is_object() ? item.as_object().if_contains("name") : nullptr;
    if (!name || !name->is_string()) continue;
    if (const auto* v = current->config.if_contains(name->as_string())) {
      util::JsonObject one{{name->as_string(), *v}};
      util::JsonArray schema{item};
      if (deps_.validate(schema, one, "config")) kept[name->as_string()] = *v;
    }
  }
  auto config = deps_.validate(manifest->config, kept, "config");
  next.config = config ? std::move(*config) : kept;
  run.Action("starting version " + next.version);
  if (run.lost()) return tl::unexpected(TakenOver());
  if (next.enabled) {
    if (auto started = LaunchAndWait(next); !started) {
      fs::remove_all(dir, ec);
      return util::Fail(
          started.error().code,
          fmt::format("{}; version {} keeps running", started.error().message, current->version));
    }
  }
  if (auto stored = deps_.plugins->Put(next); !stored) return tl::unexpected(stored.error());
  RefreshCache();
  if (current->version != next.version) fs::remove_all(FolderOf(key, current->version), ec);
  return util::Json(util::JsonObject{{"plugin_id", key.id()},
                                     {"version", next.version},
                                     {"previous_version", current->version},
                                     {"upgraded", true}});
}

util::Result<std::int64_t> ProcessPluginManager::Delete(const domain::PluginKey& key) {
  if (auto ok = CheckKey(key); !ok) return tl::unexpected(ok.error());
  auto existing = deps_.plugins->Get(key);
  if (!existing) return tl::unexpected(existing.error());
  if (auto ok = Reserve(key.id()); !ok) return tl::unexpected(ok.error());
  return StartTask("plugin-delete", "Deleting plugin " + key.id(), key.id(),
                   {{"author", key.author}, {"name", key.name}},
                   [this, key](TaskRun& run) { return DoDelete(run, key); });
}

util::Result<util::Json> ProcessPluginManager::DoDelete(TaskRun& run,
                                                        const domain::PluginKey& key) {
  run.Action("stopping the plugin");
  auto stopped = std::make_shared<std::promise<void>>();
  auto done = stopped->get_future();
  supervisor_.Stop(key, [stopped] { stopped->set_value(); });
  done.wait_for(options_.supervisor.stop_grace * 2 + std::chrono::seconds(2));
  run.Action("removing its files");
  if (run.lost()) return tl::unexpected(TakenOver());
  // Gone already: a delete resumed after its first instance removed the record.
  if (auto removed = deps_.plugins->Remove(key);
      !removed && removed.error().code != ErrorCode::kNotFound) {
    return tl::unexpected(removed.error());
  }
  RefreshCache();
  std::error_code ec;
  fs::remove_all(options_.plugins_dir / key.author / key.name, ec);
  return util::Json(util::JsonObject{{"plugin_id", key.id()}, {"deleted", true}});
}

util::Result<util::JsonObject> ProcessPluginManager::Config(const domain::PluginKey& key) {
  auto view = Get(key);
  if (!view) return tl::unexpected(view.error());
  return view->plugin.config;
}

util::Result<void> ProcessPluginManager::ChangeRecord(
    const domain::PluginKey& key,
    const std::function<util::Result<void>(domain::InstalledPlugin&)>& change) {
  if (auto ok = CheckKey(key); !ok) return tl::unexpected(ok.error());
  auto plugin = deps_.plugins->Get(key);
  if (!plugin) return tl::unexpected(plugin.error());
  if (auto changed = change(*plugin); !changed) return changed;
  plugin->updated_at = deps_.clock->Now();
  if (auto stored = deps_.plugins->Put(*plugin); !stored) return stored;
  RefreshCache();
  // Waits for the restart, so the next message already meets the change (a new config, a new
  // sandbox). A plugin that cannot start with it keeps the change (the admin fixes it) and shows
  // why in its status.
  if (!plugin->enabled) {
    supervisor_.Stop(key, nullptr);
  } else if (auto started = LaunchAndWait(*plugin); !started) {
    spdlog::warn("plugin {} did not start: {}", key.id(), started.error().message);
  }
  return util::Ok();
}

util::Result<void> ProcessPluginManager::SetConfig(const domain::PluginKey& key,
                                                   const util::JsonObject& config) {
  return ChangeRecord(key, [&](domain::InstalledPlugin& plugin) -> util::Result<void> {
    auto checked = deps_.validate(SchemaOf(plugin), config, "config");
    if (!checked) return tl::unexpected(checked.error());
    plugin.config = std::move(*checked);
    return util::Ok();
  });
}

util::Result<void> ProcessPluginManager::SetEnabled(const domain::PluginKey& key, bool enabled) {
  return ChangeRecord(key, [&](domain::InstalledPlugin& plugin) -> util::Result<void> {
    plugin.enabled = enabled;
    return util::Ok();
  });
}

util::Result<void> ProcessPluginManager::SetNetworkAllowed(const domain::PluginKey& key,
                                                           bool allowed) {
  // The sandbox is made at start: a running plugin gets (or loses) the network by a restart.
  return ChangeRecord(key, [&](domain::InstalledPlugin& plugin) -> util::Result<void> {
    plugin.allow_network = allowed;
    return util::Ok();
  });
}

util::Result<std::string> ProcessPluginManager::Readme(const domain::PluginKey& key) {
  auto view = Get(key);
  if (!view) return tl::unexpected(view.error());
  const fs::path dir = FolderOf(key, view->plugin.version);
  for (const char* name : {"README.md", "readme.md", "README", "README.txt"}) {
    if (auto text = ReadPackageFile(dir, name, 1 << 20)) return text;
  }
  return util::Fail(ErrorCode::kNotFound, fmt::format("plugin {} has no readme", key.id()));
}

util::Result<domain::PluginFile> ProcessPluginManager::Icon(const domain::PluginKey& key) {
  auto view = Get(key);
  if (!view) return tl::unexpected(view.error());
  const auto* icon = view->plugin.manifest.if_contains("icon");
  const std::string path = icon && icon->is_string() ? std::string(icon->as_string()) : "";
  auto bytes = path.empty() ? util::Result<std::string>(util::Fail(ErrorCode::kNotFound, ""))
                            : ReadPackageFile(FolderOf(key, view->plugin.version), path, 1 << 20);
  if (!bytes) {
    return util::Fail(ErrorCode::kNotFound, fmt::format("plugin {} has no icon", key.id()));
  }
  const std::string ext = fs::path(path).extension().string();
  std::string type = "application/octet-stream";
  if (ext == ".svg") type = "image/svg+xml";
  if (ext == ".png") type = "image/png";
  if (ext == ".jpg" || ext == ".jpeg") type = "image/jpeg";
  if (ext == ".webp") type = "image/webp";
  return domain::PluginFile{std::move(*bytes), type};
}

util::Result<std::string> ProcessPluginManager::Asset(const domain::PluginKey& key,
                                                      std::string_view name) {
  // The same cap as LangBot's SDK puts on a plugin's UI files.
  constexpr std::uintmax_t kMaxAssetBytes = 4 << 20;
  auto view = Get(key);
  if (!view) return tl::unexpected(view.error());
  auto bytes = ReadPackageAsset(FolderOf(key, view->plugin.version), name, kMaxAssetBytes);
  if (!bytes && bytes.error().code == ErrorCode::kNotFound) {
    return util::Fail(ErrorCode::kNotFound, fmt::format("plugin {} has no such asset", key.id()));
  }
  return bytes;
}

util::Result<util::Json> ProcessPluginManager::MarketplaceList(int page, int page_size) {
  if (page < 1 || page_size < 1 || page_size > 100) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "page must be at least 1 and page_size between 1 and 100");
  }
  return deps_.marketplace->List(page, page_size);
}

}  // namespace sb::plugins
