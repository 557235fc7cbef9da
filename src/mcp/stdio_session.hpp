// An MCP client session over the stdio transport (spec 2025-06-18, basic/transports): the server
// is a child process; each JSON-RPC message is one line on its stdin / stdout, in either
// direction, and responses are matched to requests by id (calls overlap). Its stderr is a log.
// The child runs in the plugins' sandbox (sandbox/sandbox.hpp) with a scrubbed environment plus
// the operator's `env`, in its own folder <data_root>/<server uuid> (its HOME, bound at /data).
//   StdioSession s(strand, {{"python3", "/srv/mcp/server.py"}, env, limits}, settings, uuid, name);
//   co_await s.Initialize();  ...  co_await s.Close();   // stdin closed, SIGTERM, SIGKILL, reaped
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mcp/session_core.hpp"
#include "sandbox/sandbox.hpp"

namespace sb::mcp {

// How this server runs stdio MCP servers (the config's plugins section; SessionDeps::stdio).
struct StdioSettings {
  // Sandboxed unless the admin turned the plugins' sandbox off (plugins.sandbox: off).
  sandbox::SandboxOptions sandbox = sandbox::SandboxOptions::Off();
  // Each server's folder is <data_root>/<server uuid>; empty: stdio servers are refused.
  std::filesystem::path data_root;
  // Never bound into a sandbox, nor anything inside it (the server's data directory).
  std::filesystem::path protected_dir;
  // Most stdio servers wrap a web API, and npx / uvx fetch packages: the host's network.
  bool network = true;
  // rlimits per process. The address-space limit is generous because Node reserves gigabytes of
  // address space at start (it does not run under 512 MiB); the memory bound is the cgroup's.
  sandbox::ProcessLimits limits{.memory_bytes = 16ull << 30};
  std::chrono::milliseconds stop_grace{2'000};  // after stdin is closed, and after SIGTERM
};

struct StdioTarget {
  std::vector<std::string> argv;                         // command, then args
  std::vector<std::pair<std::string, std::string>> env;  // the operator's; values are secrets
  SessionLimits limits;
};

// The Session contract; a line over max_message_bytes or one that is not JSON-RPC fails the
// waiting calls (kUpstreamFailed) and ends the process; the process's end fails them with
// kUnavailable and alive() turns false. The server's requests are answered (ping: {}; anything
// else: method not found).
class StdioSession final : public RpcSession {
 public:
  // `folder` names the server's folder under data_root (its uuid); `name` is for log lines.
  StdioSession(boost::asio::any_io_executor executor, StdioTarget target, StdioSettings settings,
               std::string folder, std::string name);
  // Kills a process still running (Close is the orderly end) and reaps it in the background.
  ~StdioSession() override;

  boost::asio::awaitable<util::Result<std::vector<Tool>>> ListTools() override;
  // Closes stdin, waits stop_grace, SIGTERM, waits stop_grace, SIGKILL; returns once reaped.
  boost::asio::awaitable<void> Close() override;
  bool tools_changed() const override;
  bool alive() const override;

  // The child's pid (bubblewrap's when sandboxed), -1 before Initialize.
  int pid() const;
  // The last lines the server wrote to stderr, env values masked (at most 50 lines).
  std::vector<std::string> StderrTail() const;
  // "bubblewrap; network on; cgroup v2 (pids, memory)" or "none (plugins.sandbox: off)".
  const std::string& sandbox_description() const { return sandbox_description_; }

 protected:
  boost::asio::awaitable<util::Result<void>> Connect() override;
  boost::asio::awaitable<util::Result<util::Json>> Request(
      std::string_view method, util::JsonObject params, std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<util::Result<void>> Notify(std::string_view method) override;

 private:
  struct State;
  util::Result<sandbox::Launch> MakeLaunch();

  boost::asio::any_io_executor executor_;
  StdioTarget target_;
  StdioSettings settings_;
  std::string folder_;
  std::string name_;
  std::string sandbox_description_;
  std::shared_ptr<State> state_;
};

// The folders of `argv`'s absolute paths that a sandbox binds read-only so the command finds its
// own files (a file's folder, a folder itself), resolved; never "/", a top-level folder
// (/home, /opt, ...), the system's folders (already there), nor one overlapping `protected_dir`.
std::vector<std::filesystem::path> OwnFolders(const std::vector<std::string>& argv,
                                              const std::filesystem::path& protected_dir);

}  // namespace sb::mcp
