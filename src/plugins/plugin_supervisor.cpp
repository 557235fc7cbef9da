#include "plugins/plugin_supervisor.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <condition_variable>
#include <deque>

namespace sb::plugins {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;
using SteadyTime = std::chrono::steady_clock::time_point;

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "ended";
}

std::string Text(const util::JsonObject& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// Outbound network needs both: the manifest asks for it and the admin allowed it.
bool NetworkAllowed(const domain::InstalledPlugin& plugin) {
  const auto* asked = plugin.manifest.if_contains("network");
  return plugin.allow_network && asked && asked->is_bool() && asked->as_bool();
}

}  // namespace

const char* PluginStateName(PluginState state) {
  switch (state) {
    case PluginState::kStopped:
      return "stopped";
    case PluginState::kStarting:
      return "starting";
    case PluginState::kRunning:
      return "running";
    case PluginState::kRestarting:
      return "restarting";
    case PluginState::kFailed:
      return "failed";
  }
  return "stopped";
}

util::Result<PluginCapabilities> ReadCapabilities(const util::Json& answer) {
  const auto* o = answer.if_object();
  if (!o) return util::Fail(ErrorCode::kInvalidArgument, "the handshake answer is not an object");
  const auto* version = o->if_contains("protocol_version");
  if (!version || !version->is_int64()) {
    return util::Fail(ErrorCode::kInvalidArgument, "the handshake answer has no protocol_version");
  }
  if (version->as_int64() != kProtocolVersion) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("protocol version {} is not supported (this core speaks {})",
                                  version->as_int64(), kProtocolVersion));
  }
  PluginCapabilities caps;
  if (const auto* events = o->if_contains("events"); events && events->is_array()) {
    for (const auto& e : events->as_array()) {
      if (e.is_string()) caps.events.emplace_back(e.as_string());
    }
  }
  if (const auto* commands = o->if_contains("commands"); commands && commands->is_array()) {
    for (const auto& c : commands->as_array()) {
      if (!c.is_object() || Text(c.as_object(), "name").empty()) {
        return util::Fail(ErrorCode::kInvalidArgument, "a command of the handshake has no name");
      }
      caps.commands.push_back({Text(c.as_object(), "name"), Text(c.as_object(), "description")});
    }
  }
  if (const auto* tools = o->if_contains("tools"); tools && tools->is_array()) {
    for (const auto& t : tools->as_array()) {
      if (!t.is_object() || Text(t.as_object(), "name").empty()) {
        return util::Fail(ErrorCode::kInvalidArgument, "a tool of the handshake has no name");
      }
      PluginTool tool{Text(t.as_object(), "name"), Text(t.as_object(), "description"), {}};
      if (const auto* p = t.as_object().if_contains("parameters"); p && p->is_object()) {
        tool.parameters = p->as_object();
      } else {
        tool.parameters = {{"type", "object"}, {"properties", util::JsonObject()}};
      }
      caps.tools.push_back(std::move(tool));
    }
  }
  return caps;
}

struct PluginSupervisor::Entry {
  std::shared_ptr<PluginProcess> process;  // the running one
  PluginCapabilities caps;
  PluginStatus status;
  domain::InstalledPlugin plugin;  // what a restart starts again
  std::filesystem::path dir;
  bool wanted = false;           // should run: a crash restarts it
  std::uint64_t generation = 0;  // bumped by Launch and Stop: older callbacks stand down
  std::deque<SteadyTime> crashes;
  util::TimerHandle restart_timer;
};

// The clock of the restart pauses when the options name none.
const util::Clock& SystemClockForRestarts() {
  static util::SystemClock clock;
  return clock;
}

struct PluginSupervisor::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::any_io_executor e, PluginCore& c, SupervisorOptions o)
      : executor(std::move(e)),
        core(c),
        options(std::move(o)),
        clock(options.clock ? *options.clock : SystemClockForRestarts()) {}

  // Forwards one process's calls and log lines to the core, named by its plugin.
  class Host final : public PluginHost {
   public:
    Host(PluginCore& core, domain::PluginKey key) : core_(core), key_(std::move(key)) {}
    void HandlePluginCall(const std::string& action, const util::JsonObject& data,
                          std::function<void(util::Result<util::Json>)> answer) override {
      core_.HandlePluginCall(key_, action, data, std::move(answer));
    }
    void OnPluginLog(const std::string& line) override { core_.PluginLog(key_, line); }

   private:
    PluginCore& core_;
    domain::PluginKey key_;
  };

  PluginLaunch MakeLaunch(const domain::InstalledPlugin& plugin,
                          const std::filesystem::path& dir) const {
    PluginLaunch launch;
    launch.dir = dir;
    if (const auto* command = plugin.manifest.if_contains("command");
        command && command->is_array()) {
      for (const auto& arg : command->as_array()) {
        if (arg.is_string()) launch.argv.emplace_back(arg.as_string());
      }
    }
    launch.env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                  "HOME=" + dir.string(),
                  "LANG=C.UTF-8",
                  "PYTHONUNBUFFERED=1",
                  "PYTHONDONTWRITEBYTECODE=1",
                  "SWITCHBOARD_PLUGIN=" + plugin.author + "/" + plugin.name,
                  "SWITCHBOARD_PLUGIN_VERSION=" + plugin.version};
    for (const auto& e : options.extra_env) launch.env.push_back(e);
    launch.limits = options.limits;
    return launch;
  }

  // The launch inside the plugin's sandbox, and what that sandbox is; an error when the
  // machine cannot give one (the plugin then does not start: only the admin may choose to run
  // plugins unsandboxed).
  util::Result<PluginLaunch> SandboxedLaunch(const domain::InstalledPlugin& plugin,
                                             const std::filesystem::path& dir,
                                             std::string* description) {
    PluginLaunch launch = MakeLaunch(plugin, dir);
    if (!options.sandbox.enabled) {
      *description = "none (plugins.sandbox: off)";
      return launch;
    }
    if (auto probed = Probe(); !probed) {
      return util::Fail(ErrorCode::kUnavailable,
                        fmt::format("no sandbox on this machine: {}; the plugin does not run "
                                    "unless the admin sets plugins.sandbox: off",
                                    probed.error().message));
    }
    sandbox::SandboxSpec spec;
    spec.package_dir = dir;
    spec.data_dir = options.data_root / plugin.author / plugin.name / ".data";
    spec.network = NetworkAllowed(plugin);
    spec.cgroup_name =
        fmt::format("sb-{}-{}-{}-{}", plugin.author, plugin.name, ::getpid(), ++launches);
    std::string limits_note;
    if (auto ok = sandbox::EnterSandbox(options.sandbox, spec, launch, &limits_note); !ok) {
      return tl::unexpected(ok.error());
    }
    *description = fmt::format("bubblewrap; network {}; {}", spec.network ? "on" : "off",
                               limits_note.empty() ? sandbox::Cgroup::Describe() : limits_note);
    return launch;
  }

  // Starts a candidate process; on a good handshake it becomes the plugin's process.
  void Start(const domain::InstalledPlugin& plugin, const std::filesystem::path& dir, bool restart,
             std::function<void(util::Result<void>)> done) {
    const domain::PluginKey key = plugin.key();
    std::uint64_t generation = 0;
    {
      std::lock_guard lock(mu);
      Entry& e = entries[key.id()];
      generation = ++e.generation;
      e.restart_timer.Cancel();
      if (!e.process) e.status.state = PluginState::kStarting;
    }
    std::weak_ptr<Impl> weak = weak_from_this();
    // Weak: the process owns this callback, so a strong reference would keep it alive for ever
    // when the I/O context ends before the process does (a candidate still stopping at shutdown).
    auto process_slot = std::make_shared<std::weak_ptr<PluginProcess>>();
    std::string sandbox;
    auto launch = SandboxedLaunch(plugin, dir, &sandbox);
    if (!launch) {
      util::Error error = launch.error();
      error.message = "launch failed: " + error.message;
      return Failed(key, generation, restart, std::move(error), std::move(done));
    }
    auto spawned =
        PluginProcess::Spawn(executor, std::move(*launch), std::make_shared<Host>(core, key),
                             [weak, key, process_slot](int status) {
                               if (auto self = weak.lock())
                                 self->OnExit(key, process_slot->lock(), status);
                             });
    if (!spawned) {
      util::Error error = spawned.error();
      error.message = "launch failed: " + error.message;
      return Failed(key, generation, restart, std::move(error), std::move(done));
    }
    *process_slot = *spawned;
    util::JsonObject hello;
    hello["protocol_versions"] = util::JsonArray{kProtocolVersion};
    hello["plugin"] = util::JsonObject{
        {"author", plugin.author}, {"name", plugin.name}, {"version", plugin.version}};
    hello["config"] = plugin.config;
    auto candidate = *spawned;
    candidate->Call("handshake", std::move(hello), options.handshake_timeout,
                    [weak, plugin, dir, generation, restart, candidate, sandbox,
                     done = std::move(done)](util::Result<util::Json> answer) mutable {
                      auto self = weak.lock();
                      if (!self) return;
                      util::Result<PluginCapabilities> caps =
                          answer ? ReadCapabilities(*answer) : tl::unexpected(answer.error());
                      if (!caps) {
                        candidate->Stop(self->options.stop_grace, nullptr);
                        util::Error error = caps.error();
                        error.message = "launch failed: " + error.message;
                        return self->Failed(plugin.key(), generation, restart, std::move(error),
                                            std::move(done));
                      }
                      self->Started(plugin, dir, generation, candidate, std::move(*caps), sandbox,
                                    std::move(done));
                    });
  }

  void Started(const domain::InstalledPlugin& plugin, const std::filesystem::path& dir,
               std::uint64_t generation, std::shared_ptr<PluginProcess> candidate,
               PluginCapabilities caps, const std::string& sandbox,
               std::function<void(util::Result<void>)> done) {
    std::shared_ptr<PluginProcess> previous;
    bool current = false;
    {
      std::lock_guard lock(mu);
      Entry& e = entries[plugin.key().id()];
      current = e.generation == generation;
      if (current) {
        previous = std::exchange(e.process, candidate);
        e.caps = std::move(caps);
        e.plugin = plugin;
        e.dir = dir;
        e.wanted = true;
        e.status.state = PluginState::kRunning;
        e.status.error.clear();
        e.status.sandbox = sandbox;
      }
    }
    if (!current) {
      // Stopped or launched again meanwhile: this start no longer counts.
      candidate->Stop(options.stop_grace, nullptr);
      if (done) done(util::Fail(ErrorCode::kCancelled, "the plugin was stopped while starting"));
      return;
    }
    core.PluginLog(plugin.key(), fmt::format("started version {}", plugin.version));
    if (previous) previous->Stop(options.stop_grace, nullptr);
    if (done) done(util::Ok());
  }

  void Failed(const domain::PluginKey& key, std::uint64_t generation, bool restart,
              util::Error error, std::function<void(util::Result<void>)> done) {
    core.PluginLog(key, error.message);
    std::string note;
    {
      std::lock_guard lock(mu);
      Entry& e = entries[key.id()];
      if (e.generation == generation && !e.process) {
        if (restart) {
          note = ScheduleRestartLocked(key, e, error.message);
        } else {
          e.status.state = PluginState::kFailed;
          e.status.error = error.message;
        }
      }
    }
    if (!note.empty()) core.PluginLog(key, note);
    if (done) done(tl::unexpected(std::move(error)));
  }

  void OnExit(const domain::PluginKey& key, const std::shared_ptr<PluginProcess>& process,
              int status) {
    const std::string why = "the plugin " + DescribeExit(status);
    std::string note;
    {
      std::lock_guard lock(mu);
      auto it = entries.find(key.id());
      if (it == entries.end() || !process || it->second.process != process) return;
      Entry& e = it->second;
      e.process = nullptr;
      e.caps = {};
      if (!e.wanted) {
        e.status.state = PluginState::kStopped;
        return;
      }
      note = ScheduleRestartLocked(key, e, why);
    }
    core.PluginLog(key, note);
  }

  // A crash: restart after a growing pause, or give up after too many in the window. Returns
  // what the plugin's log should say (written by the caller, outside the lock).
  std::string ScheduleRestartLocked(const domain::PluginKey& key, Entry& e,
                                    const std::string& why) {
    const auto now = std::chrono::steady_clock::now();
    e.crashes.push_back(now);
    while (!e.crashes.empty() && now - e.crashes.front() > options.crash_window) {
      e.crashes.pop_front();
    }
    e.status.crashes = static_cast<int>(e.crashes.size());
    ++e.status.restarts;
    if (static_cast<int>(e.crashes.size()) >= options.max_crashes) {
      e.status.state = PluginState::kFailed;
      e.status.error = fmt::format(
          "{}; it failed {} times in {} s and is not restarted again until its config is saved "
          "or it is enabled again",
          why, e.crashes.size(),
          std::chrono::duration_cast<std::chrono::seconds>(options.crash_window).count());
      return e.status.error;
    }
    auto backoff = options.first_backoff * (1 << std::min<int>(e.crashes.size() - 1, 16));
    if (backoff > options.max_backoff) backoff = options.max_backoff;
    e.status.state = PluginState::kRestarting;
    e.status.error = fmt::format("{}; restarting in {} ms", why, backoff.count());
    std::weak_ptr<Impl> weak = weak_from_this();
    const std::uint64_t generation = e.generation;
    // The pause runs on the clock (simulated in tests); the restart itself on the executor.
    e.restart_timer = clock.After(backoff, [weak, key, generation] {
      auto self = weak.lock();
      if (!self) return;
      asio::post(self->executor,
                 [weak, key, generation] { RestartIfStillWanted(weak, key, generation); });
    });
    return e.status.error;
  }

  static void RestartIfStillWanted(const std::weak_ptr<Impl>& weak, const domain::PluginKey& key,
                                   std::uint64_t generation) {
    auto self = weak.lock();
    if (!self) return;
    domain::InstalledPlugin plugin;
    std::filesystem::path dir;
    {
      std::lock_guard lock(self->mu);
      auto it = self->entries.find(key.id());
      if (it == self->entries.end() || it->second.generation != generation || !it->second.wanted ||
          it->second.process) {
        return;
      }
      plugin = it->second.plugin;
      dir = it->second.dir;
    }
    self->Start(plugin, dir, /*restart=*/true, nullptr);
  }

  asio::any_io_executor executor;
  PluginCore& core;
  const SupervisorOptions options;
  const util::Clock& clock;
  util::Result<void> Probe() {
    if (!options.sandbox.enabled) return util::Ok();
    std::call_once(probe_once, [this] { probe = sandbox::ProbeSandbox(options.sandbox); });
    return probe;
  }

  std::once_flag probe_once;
  util::Result<void> probe;  // whether this machine gives a sandbox; set once, by probe_once
  std::atomic<std::uint64_t> launches{0};
  mutable std::mutex mu;
  std::map<std::string, Entry> entries;  // by "author/name"; guarded by mu
};

PluginSupervisor::PluginSupervisor(asio::any_io_executor executor, PluginCore& core,
                                   SupervisorOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), core, std::move(options))) {}

PluginSupervisor::~PluginSupervisor() {
  std::lock_guard lock(impl_->mu);
  for (auto& [id, e] : impl_->entries) {
    e.wanted = false;
    ++e.generation;
    e.restart_timer.Cancel();
    if (e.process) e.process->Stop(std::chrono::milliseconds(0), nullptr);
  }
}

void PluginSupervisor::Launch(const domain::InstalledPlugin& plugin,
                              const std::filesystem::path& dir,
                              std::function<void(util::Result<void>)> done) {
  {
    // An explicit launch (install, config saved, enabled) closes an open circuit.
    std::lock_guard lock(impl_->mu);
    auto& entry = impl_->entries[plugin.key().id()];
    entry.crashes.clear();
    entry.status.restarts = 0;
  }
  impl_->Start(plugin, dir, /*restart=*/false, std::move(done));
}

void PluginSupervisor::Stop(const domain::PluginKey& key, std::function<void()> stopped) {
  std::shared_ptr<PluginProcess> process;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->entries.find(key.id());
    if (it != impl_->entries.end()) {
      Entry& e = it->second;
      e.wanted = false;
      ++e.generation;
      e.restart_timer.Cancel();
      process = std::exchange(e.process, nullptr);
      e.caps = {};
      e.status = {};
    }
  }
  if (!process) {
    if (stopped) stopped();
    return;
  }
  process->Stop(impl_->options.stop_grace, std::move(stopped));
}

void PluginSupervisor::StopAll() {
  std::vector<domain::PluginKey> keys;
  {
    std::lock_guard lock(impl_->mu);
    // By the entry's id: a plugin still in its first start has no record in the entry yet.
    for (const auto& [id, e] : impl_->entries) {
      const auto slash = id.find('/');
      keys.push_back({id.substr(0, slash), id.substr(slash + 1)});
    }
  }
  auto mu = std::make_shared<std::mutex>();
  auto cv = std::make_shared<std::condition_variable>();
  auto left = std::make_shared<std::size_t>(keys.size());
  for (const auto& key : keys) {
    Stop(key, [mu, cv, left] {
      std::lock_guard lock(*mu);
      if (--*left == 0) cv->notify_all();
    });
  }
  std::unique_lock lock(*mu);
  cv->wait_for(lock, impl_->options.stop_grace * 2 + std::chrono::seconds(1),
               [&] { return *left == 0; });
}

void PluginSupervisor::Call(const domain::PluginKey& key, std::string action, util::JsonObject data,
                            std::chrono::milliseconds deadline, PluginProcess::Done done) {
  std::shared_ptr<PluginProcess> process;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->entries.find(key.id());
    if (it != impl_->entries.end()) process = it->second.process;
  }
  if (!process) {
    return done(
        util::Fail(ErrorCode::kUnavailable, fmt::format("plugin {} is not running", key.id())));
  }
  process->Call(std::move(action), std::move(data), deadline, std::move(done));
}

util::Result<void> PluginSupervisor::SandboxAvailable() { return impl_->Probe(); }

PluginStatus PluginSupervisor::Status(const domain::PluginKey& key) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->entries.find(key.id());
  return it == impl_->entries.end() ? PluginStatus{} : it->second.status;
}

std::optional<PluginCapabilities> PluginSupervisor::Capabilities(
    const domain::PluginKey& key) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->entries.find(key.id());
  if (it == impl_->entries.end() || !it->second.process) return std::nullopt;
  return it->second.caps;
}

}  // namespace sb::plugins
