// One running plugin: a child process that speaks newline-delimited JSON over its stdin/stdout
// (docs/plugins.md). The core's calls carry a deadline and end exactly once (answer, error,
// timeout or the process's end); the plugin's own calls go to a PluginHost. The child runs in its
// own folder and process group, with a scrubbed environment, resource limits and no_new_privs,
// and dies with the server (PR_SET_PDEATHSIG). sandbox.hpp turns a launch into a sandboxed one.
//   auto p = PluginProcess::Spawn(io.get_executor(), launch, host, [](int status) { ... });
//   (*p)->Call("command", data, 5s, [](util::Result<util::Json> r) { ... });
//   (*p)->Stop(2s, [] { /* reaped */ });
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/child_process.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::plugins {

// The launch of a child process lives in the sandbox layer (plugins and stdio MCP servers share
// it); these are its names here.
using ProcessLimits = sandbox::ProcessLimits;
using PluginLaunch = sandbox::Launch;
using sandbox::ResolveProgram;

// What a plugin may ask of the core. Called on the process's strand; `answer` must run exactly
// once, from any thread, with the `data` of the response or an error (sent as code -1).
class PluginHost {
 public:
  virtual ~PluginHost() = default;
  virtual void HandlePluginCall(const std::string& action, const util::JsonObject& data,
                                std::function<void(util::Result<util::Json>)> answer) = 0;
  // A line the plugin wrote to stderr, or a protocol problem the core saw (prefixed "protocol:").
  virtual void OnPluginLog(const std::string& line) = 0;
};

class PluginProcess {
 public:
  using Done = std::function<void(util::Result<util::Json>)>;

  // Starts the process. kInvalidArgument when the program cannot be found, kInternal when the
  // system refuses (fork, pipes, exec). `on_exit` runs once, on the strand, with the wait
  // status after the process ended for whatever reason (also after Stop). Call it from a thread
  // that lives as long as the server (main, I/O or blocking pool): the child is killed when the
  // thread that forked it ends (PR_SET_PDEATHSIG follows the thread, not the process).
  static util::Result<std::shared_ptr<PluginProcess>> Spawn(boost::asio::any_io_executor executor,
                                                            PluginLaunch launch,
                                                            std::shared_ptr<PluginHost> host,
                                                            std::function<void(int)> on_exit);

  virtual ~PluginProcess() = default;

  // Sends {seq_id, action, data}. `done` runs exactly once: with the response's data (code 0),
  // kUpstreamFailed with the plugin's message (code != 0), kUpstreamTimeout after `deadline`,
  // or kUnavailable when the process is gone or stopping. Thread-safe.
  virtual void Call(std::string action, util::JsonObject data, std::chrono::milliseconds deadline,
                    Done done) = 0;

  // Asks the plugin to end (a "shutdown" request, then its stdin closed), SIGTERM to its process
  // group after `grace`, SIGKILL after another `grace`. `stopped` runs once the process is
  // reaped. Idempotent. Thread-safe.
  virtual void Stop(std::chrono::milliseconds grace, std::function<void()> stopped) = 0;

  virtual int pid() const = 0;
  // Calls sent and not yet ended.
  virtual std::size_t Pending() const = 0;
};

}  // namespace sb::plugins
