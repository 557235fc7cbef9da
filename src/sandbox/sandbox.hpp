// The sandbox every plugin process and stdio MCP server runs in (docs/plugins.md "Sandbox"), built
// from the kernel's own mechanisms through Debian's bubblewrap: new user, mount, PID, IPC, UTS and
// (unless allowed) network namespaces; a root of the system's read-only runtime folders, the
// plugin's package read-only at /plugin and its private data folder at /data; uid 65534 inside with
// no capabilities; no_new_privs and a seccomp filter (seccomp_filter.hpp); a cgroup with process
// and memory limits (cgroup.hpp); and the whole tree killed with its first process.
//   SandboxOptions options;                  // from the config's plugins section
//   if (auto ok = ProbeSandbox(options); !ok) ...   // the machine cannot: say why
//   auto ok = EnterSandbox(options, {package_dir, data_dir, false, "sb-a-b-1"}, launch);
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/cgroup.hpp"
#include "sandbox/child_process.hpp"
#include "util/error.hpp"

namespace sb::sandbox {

struct SandboxOptions {
  // False only when the admin chose to run plugins unsandboxed (plugins.sandbox: off).
  bool enabled = true;
  std::filesystem::path bwrap = "/usr/bin/bwrap";
  CgroupLimits limits;

  static SandboxOptions Off() {
    SandboxOptions options;
    options.enabled = false;
    return options;
  }
};

// What one sandbox holds (a plugin's, a stdio MCP server's).
struct SandboxSpec {
  // Bound read-only at /plugin, the working directory; empty: none, and /data is the working
  // directory (programs are then found by absolute path or in the system's folders).
  std::filesystem::path package_dir;
  std::filesystem::path data_dir;  // bound read-write at /data (HOME); created 0700
  bool network = false;            // the host's network, or none but a private loopback
  std::string cgroup_name;         // unique per process
  // Host folders bound read-only at the same path inside (a stdio server's own files).
  std::vector<std::filesystem::path> read_only;
  std::string hostname = "plugin";
};

// The uid and gid a plugin has inside its sandbox.
inline constexpr int kSandboxUid = 65534;

// Ok when bubblewrap is there and the kernel gives it its namespaces (tried once, by running
// `true` in a sandbox); otherwise kUnavailable saying why. Blocking (a few milliseconds).
util::Result<void> ProbeSandbox(const SandboxOptions& options);

// Rewrites `launch` (the plugin's own argv, env and limits, run from its package folder) so it
// runs inside the sandbox: bwrap's argv, the seccomp program as an inherited descriptor, the
// cgroup to join (absent, with a note in `*limits_note`, when the machine has none: then only
// the rlimits hold). kInvalidArgument when the plugin's program is missing, kUnavailable or
// kInternal when the sandbox cannot be set up.
util::Result<void> EnterSandbox(const SandboxOptions& options, const SandboxSpec& spec,
                                Launch& launch, std::string* limits_note);

}  // namespace sb::sandbox
