// A control group for one plugin's whole process tree: a process-count and a memory limit that
// hold whatever the uid (RLIMIT_NPROC does not bind root), and a way to end every process of the
// tree however it forked. Uses cgroup v2 where the server's own cgroup delegates the pids and
// memory controllers, else the v1 pids and memory hierarchies; when neither is writable there is
// no cgroup and `Describe()` of the probe says so (the plugin then has only its rlimits).
//   auto cg = Cgroup::Create("sb-alice-weather-1", {512 << 20, 64});
//   launch.join_fds = cg->ProcsFds();   // the child joins before exec
//   cg.reset();                         // kills what is left and removes the groups
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace sb::sandbox {

struct CgroupLimits {
  std::uint64_t memory_bytes = 512ull << 20;
  std::uint64_t processes = 64;
};

class Cgroup {
 public:
  // Which cgroup mechanism this machine offers the server: "cgroup v2 (pids, memory)",
  // "cgroup v1 (pids, memory)", or why none ("no writable cgroup hierarchy").
  static std::string Describe();

  // A new group named `name` under the server's own; kUnavailable when the machine offers none.
  static util::Result<std::unique_ptr<Cgroup>> Create(const std::string& name,
                                                      const CgroupLimits& limits);

  // Kills every process left in the group and removes it.
  ~Cgroup();
  Cgroup(const Cgroup&) = delete;
  Cgroup& operator=(const Cgroup&) = delete;

  // Write-only descriptors of the groups' cgroup.procs files (close-on-exec; owned by this
  // object): a child writes its pid into each before exec.
  const std::vector<int>& ProcsFds() const { return procs_fds_; }
  // Removes the empty groups under `parent` left by a server that died (a SIGKILL, a crash: its
  // plugins died with it). A group's name ends in -<server pid>-<n>. Run once, on first use.
  static void RemoveStale(const std::filesystem::path& parent);

 private:
  Cgroup() = default;
  std::vector<std::filesystem::path> dirs_;
  std::vector<int> procs_fds_;
};

}  // namespace sb::sandbox
