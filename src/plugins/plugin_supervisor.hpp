// Keeps one process running per enabled plugin: starts it with a handshake (protocol version,
// config) and learns what it offers (events, commands, tools); restarts a crashed one with backoff
// and stops trying after repeated crashes (circuit breaker); swaps in a new version only once it
// has started, so an upgrade that fails leaves the old one running. The message path calls
// plugins through it and never waits on one that is not running.
//   supervisor.Launch(record, dir, [](util::Result<void> r) { ... });  // start or replace
//   supervisor.Call(key, "command", data, 5s, done);   // kUnavailable at once when not running
//   supervisor.Stop(key, [] { ... });
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "domain/plugin.hpp"
#include "plugins/plugin_process.hpp"
#include "sandbox/sandbox.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::plugins {

// What plugins may ask of the core (storage, log, send_message, invoke_llm), answered by the
// composition root's wiring. Thread-safe; `answer` runs exactly once, on any thread.
class PluginCore {
 public:
  virtual ~PluginCore() = default;
  virtual void HandlePluginCall(const domain::PluginKey& plugin, const std::string& action,
                                const util::JsonObject& data,
                                std::function<void(util::Result<util::Json>)> answer) = 0;
  // A line of the plugin's stderr, or something the supervisor wants its log to say.
  virtual void PluginLog(const domain::PluginKey& plugin, const std::string& line) = 0;
};

struct PluginCommand {
  std::string name;
  std::string description;
};

struct PluginTool {
  std::string name;
  std::string description;
  util::JsonObject parameters;  // JSON schema of the arguments
};

// What the plugin said it offers in its handshake.
struct PluginCapabilities {
  std::vector<std::string> events;  // "message_received", "before_model_request", "reply_ready"
  std::vector<PluginCommand> commands;
  std::vector<PluginTool> tools;
};

enum class PluginState { kStopped, kStarting, kRunning, kRestarting, kFailed };
const char* PluginStateName(PluginState state);  // "stopped", "starting", ...

struct PluginStatus {
  PluginState state = PluginState::kStopped;
  std::string error;  // why it is restarting or failed
  int crashes = 0;    // in the current window
  int restarts = 0;   // crashes since it was last started or enabled (each one a restart try)
  // The sandbox the running process has ("bubblewrap; network off; cgroup v1 (pids, memory)"),
  // or "none (plugins.sandbox: off)".
  std::string sandbox;
};

struct SupervisorOptions {
  ProcessLimits limits;
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds stop_grace{2'000};
  std::chrono::milliseconds first_backoff{1'000};  // doubles per crash, up to max_backoff
  std::chrono::milliseconds max_backoff{60'000};
  // Where restart pauses are timed (a SimulatedClock in tests); null: the system clock.
  const util::Clock* clock = nullptr;
  int max_crashes = 5;  // within crash_window: circuit opens
  std::chrono::milliseconds crash_window{300'000};
  std::vector<std::string> extra_env;  // "KEY=VALUE" added to every plugin's environment
  // Off by default here, so tests of the supervisor's own rules run plain processes; the server
  // turns it on from its config (plugins.sandbox).
  sandbox::SandboxOptions sandbox = sandbox::SandboxOptions::Off();
  // A sandboxed plugin's private folder is <data_root>/<author>/<name>/.data (kept across
  // versions, gone with the plugin's folder).
  std::filesystem::path data_root;
};

// The protocol versions this core speaks (docs/plugins.md).
inline constexpr int kProtocolVersion = 1;

class PluginSupervisor {
 public:
  PluginSupervisor(boost::asio::any_io_executor executor, PluginCore& core,
                   SupervisorOptions options);
  ~PluginSupervisor();

  // Starts `plugin` from `dir` (its unpacked folder) with its config. When that version starts
  // and answers the handshake, it replaces the running one (stopped afterwards) and `done` gets
  // Ok; otherwise the running one is untouched and `done` says why ("cannot start python3: ...",
  // "the plugin did not answer handshake within 10000 ms", "protocol version 9 is not
  // supported"). `done` runs once, on any thread. Thread-safe.
  void Launch(const domain::InstalledPlugin& plugin, const std::filesystem::path& dir,
              std::function<void(util::Result<void>)> done);

  // Stops the plugin's process (no restart). `stopped` runs once it is reaped (at once when not
  // running), on any thread. Thread-safe.
  void Stop(const domain::PluginKey& key, std::function<void()> stopped);

  // Stops every plugin and waits up to the grace period for them. Blocking: call from a thread
  // that is not an I/O thread.
  void StopAll();

  // Sends a call to a running plugin; kUnavailable at once when it is not running. Thread-safe.
  void Call(const domain::PluginKey& key, std::string action, util::JsonObject data,
            std::chrono::milliseconds deadline, PluginProcess::Done done);

  PluginStatus Status(const domain::PluginKey& key) const;
  // Ok when plugins can be started here: the sandbox is off, or this machine gives one (probed
  // once, the first time a plugin starts or this is asked). Blocking the first time.
  util::Result<void> SandboxAvailable();
  // nullopt unless running.
  std::optional<PluginCapabilities> Capabilities(const domain::PluginKey& key) const;

 private:
  struct Entry;
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Reads a handshake answer; kInvalidArgument naming what is wrong.
util::Result<PluginCapabilities> ReadCapabilities(const util::Json& handshake_answer);

}  // namespace sb::plugins
