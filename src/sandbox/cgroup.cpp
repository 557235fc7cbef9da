#include "sandbox/cgroup.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace sb::sandbox {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

const fs::path kRoot = "/sys/fs/cgroup";

// The server's own group in a hierarchy: v2's line is "0::/a/b", a v1 line "4:pids:/x"
// (`controller` empty asks for v2).
std::string OwnGroup(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controller.empty()) {
      if (line.rfind("0::", 0) == 0) return path;
      continue;
    }
    std::stringstream list(controllers);
    std::string c;
    while (std::getline(list, c, ',')) {
      if (c == controller) return path;
    }
  }
  return {};
}

bool WriteFile(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool HasWord(const std::string& text, const std::string& word) {
  std::stringstream s(text);
  std::string w;
  while (s >> w) {
    if (w == word) return true;
  }
  return false;
}

// Where new groups go, per hierarchy: the v2 parent when it delegates both controllers, else
// the v1 pids and memory parents. Empty when the machine offers neither.
struct Layout {
  bool v2 = false;
  std::vector<fs::path> parents;
};

Layout FindLayout() {
  Layout layout;
  std::error_code ec;
  if (fs::exists(kRoot / "cgroup.controllers", ec)) {
    // A v2-only machine: a child group gets pids and memory only when the server's group
    // already hands them down (systemd's Delegate=yes, a container runtime).
    const fs::path own = kRoot / fs::path(OwnGroup("")).relative_path();
    const std::string control = ReadFile(own / "cgroup.subtree_control");
    if (HasWord(control, "pids") && HasWord(control, "memory") &&
        ::access(own.c_str(), W_OK) == 0) {
      layout.v2 = true;
      layout.parents = {own};
    }
    return layout;
  }
  for (const char* controller : {"pids", "memory"}) {
    const fs::path mount = kRoot / controller;
    if (!fs::exists(mount / "cgroup.procs", ec)) return {};
    const fs::path own = mount / fs::path(OwnGroup(controller)).relative_path();
    if (::access(own.c_str(), W_OK) != 0) return {};
    layout.parents.push_back(own);
  }
  return layout;
}

const Layout& TheLayout() {
  static const Layout layout = [] {
    Layout found = FindLayout();
    for (const auto& parent : found.parents) Cgroup::RemoveStale(parent);
    return found;
  }();
  return layout;
}

}  // namespace

void Cgroup::RemoveStale(const fs::path& parent) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("sb-", 0) != 0 || !entry.is_directory(ec)) continue;
    const auto last = name.rfind('-');
    const auto before =
        last == std::string::npos || last == 0 ? std::string::npos : name.rfind('-', last - 1);
    if (before == std::string::npos) continue;
    const int pid = std::atoi(name.substr(before + 1, last - before - 1).c_str());
    if (pid <= 0 || (::kill(pid, 0) != 0 && errno == ESRCH)) ::rmdir(entry.path().c_str());
  }
}

std::string Cgroup::Describe() {
  const Layout& layout = TheLayout();
  if (layout.parents.empty()) return "no writable cgroup hierarchy with pids and memory";
  return layout.v2 ? "cgroup v2 (pids, memory)" : "cgroup v1 (pids, memory)";
}

util::Result<std::unique_ptr<Cgroup>> Cgroup::Create(const std::string& name,
                                                     const CgroupLimits& limits) {
  const Layout& layout = TheLayout();
  if (layout.parents.empty()) {
    return util::Fail(ErrorCode::kUnavailable, "no writable cgroup hierarchy with pids and memory");
  }
  std::unique_ptr<Cgroup> group(new Cgroup());
  for (const auto& parent : layout.parents) {
    const fs::path dir = parent / name;
    std::error_code ec;
    fs::create_directory(dir, ec);
    if (ec) {
      return util::Fail(ErrorCode::kUnavailable,
                        fmt::format("cannot create cgroup {}: {}", dir.string(), ec.message()));
    }
    group->dirs_.push_back(dir);
  }
  const std::string memory = std::to_string(limits.memory_bytes);
  const std::string pids = std::to_string(limits.processes);
  bool ok = true;
  if (layout.v2) {
    ok = WriteFile(group->dirs_[0] / "pids.max", pids) &&
         WriteFile(group->dirs_[0] / "memory.max", memory);
    WriteFile(group->dirs_[0] / "memory.swap.max", "0");  // absent without swap accounting
  } else {
    ok = WriteFile(group->dirs_[0] / "pids.max", pids) &&
         WriteFile(group->dirs_[1] / "memory.limit_in_bytes", memory);
    WriteFile(group->dirs_[1] / "memory.memsw.limit_in_bytes", memory);  // likewise
  }
  if (!ok) {
    return util::Fail(ErrorCode::kUnavailable, fmt::format("cannot set the limits of cgroup {}: {}",
                                                           name, std::strerror(errno)));
  }
  for (const auto& dir : group->dirs_) {
    const int fd = ::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      return util::Fail(ErrorCode::kUnavailable,
                        fmt::format("cannot open {}/cgroup.procs", dir.string()));
    }
    group->procs_fds_.push_back(fd);
  }
  return group;
}

Cgroup::~Cgroup() {
  for (int fd : procs_fds_) ::close(fd);
  // The pid namespace ends with its first process, but the kernel kills the rest a moment
  // later; whatever is still there is killed here, for at most a second.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (const auto& dir : dirs_) {
    if (TheLayout().v2) WriteFile(dir / "cgroup.kill", "1");  // kernels from 5.14
    while (::rmdir(dir.c_str()) != 0 && errno == EBUSY &&
           std::chrono::steady_clock::now() < until) {
      std::ifstream in(dir / "cgroup.procs");
      int pid = 0;
      while (in >> pid) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace sb::sandbox
