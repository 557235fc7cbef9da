// Starting a child process the server talks to over pipes (a plugin, a stdio MCP server): its
// own folder and process group, a scrubbed environment, resource limits, no_new_privs, and
// death with the server (PR_SET_PDEATHSIG). No descriptor of the server is inherited. sandbox.hpp
// turns a Launch into a sandboxed one; what is said over the pipes is the caller's business.
//   Launch launch{.dir = dir, .argv = {"python3", "main.py"}, .env = {"PATH=/usr/bin:/bin"}};
//   auto child = SpawnChild(launch);   // child->pid, child->in/out/err (close-on-exec)
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace sb::sandbox {

struct ProcessLimits {
  std::uint64_t memory_bytes = 512ull << 20;  // RLIMIT_AS
  std::uint64_t cpu_seconds = 3600;           // RLIMIT_CPU, over the process's life
  std::uint64_t processes = 64;               // RLIMIT_NPROC (not enforced for root)
  std::uint64_t open_files = 256;             // RLIMIT_NOFILE
  std::size_t max_line_bytes = 1 << 20;       // a longer line from the child ends it
};

struct Launch {
  std::filesystem::path dir;      // working directory
  std::vector<std::string> argv;  // argv[0] is found in `dir` when it has a '/', else in PATH
  // The whole environment of the child, "KEY=VALUE"; nothing of the server's is inherited.
  std::vector<std::string> env;
  ProcessLimits limits;
  // A descriptor the child keeps, as kInheritedFd (the sandbox's seccomp program), or -1.
  static constexpr int kInheritedFd = 4;
  int inherit_fd = -1;
  // The child writes its pid into each before exec (cgroup.procs files of its cgroup).
  std::vector<int> join_fds;
  // Held until the process is reaped, then released (the sandbox's cgroup and descriptors).
  std::shared_ptr<void> resources;
};

// A started child: its pid (also its process group) and our ends of its standard streams
// (close-on-exec; the caller owns them).
struct Child {
  int pid = -1;
  int in = -1;
  int out = -1;
  int err = -1;
};

// Forks and execs. kInvalidArgument when the program cannot be found, kInternal when the system
// refuses (fork, pipes, exec). Call it from a thread that lives as long as the server (main, I/O
// or blocking pool): the child is killed when the thread that forked it ends (PR_SET_PDEATHSIG
// follows the thread, not the process). Ignores SIGPIPE in the server, once: a write to a child
// that just died must be an error, not the server's end.
util::Result<Child> SpawnChild(const Launch& launch);

// The program of `argv[0]`: a path inside `dir` when it has a '/', else looked up in `path_dirs`.
util::Result<std::filesystem::path> ResolveProgram(const std::filesystem::path& dir,
                                                   const std::string& program,
                                                   const std::vector<std::string>& path_dirs);

}  // namespace sb::sandbox
