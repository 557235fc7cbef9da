#include "sandbox/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string_view>

namespace sb::sandbox {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

struct Pipe {
  int read = -1;
  int write = -1;
};

util::Result<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return util::Fail(ErrorCode::kInternal, fmt::format("pipe: {}", std::strerror(errno)));
  }
  return Pipe{fds[0], fds[1]};
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Writes the caller's pid in decimal to each of `fds` (cgroup.procs files); false when one
// refuses it. Async-signal-safe.
bool JoinGroups(const std::vector<int>& fds) {
  char digits[16];
  int n = 0;
  for (pid_t pid = ::getpid(); pid > 0 && n < 16; pid /= 10) digits[15 - n++] = '0' + pid % 10;
  for (int fd : fds) {
    if (::write(fd, digits + 16 - n, n) != n) return false;
  }
  return true;
}

// Only async-signal-safe calls between fork and exec.
[[noreturn]] void ExecChild(const char* program, char* const* argv, char* const* envp,
                            const char* dir, const Launch& launch, int in, int out, int err,
                            int status_fd, pid_t server) {
  const ProcessLimits& limits = launch.limits;
  ::setpgid(0, 0);
  // Dies with the server, also when the server died before this line.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != server) ::_exit(127);
  // Into the cgroup before anything else runs, so every descendant is counted and killed; a
  // child that cannot join its limits does not run.
  if (!JoinGroups(launch.join_fds)) {
    const int code = errno;
    [[maybe_unused]] auto n = ::write(status_fd, &code, sizeof code);
    ::_exit(127);
  }
  // No set-uid program can give the child more rights than it starts with.
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // The server ignores SIGPIPE, and an ignored signal stays ignored across exec; the forking
  // thread's mask would be inherited too. A child starts as any program does.
  ::signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  auto limit = [](int resource, std::uint64_t value) {
    rlimit rl{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    ::setrlimit(resource, &rl);
  };
  limit(RLIMIT_AS, limits.memory_bytes);
  limit(RLIMIT_CPU, limits.cpu_seconds);
  limit(RLIMIT_NPROC, limits.processes);
  limit(RLIMIT_NOFILE, limits.open_files);
  // Every descriptor of the server (sockets, the database) stays behind, whatever its flags;
  // only the status pipe is kept, as fd 3, until exec closes it, and the launch's inherited
  // descriptor as fd 4. fd 3 may be the inherited one's old number: move that first.
  int inherited = launch.inherit_fd;
  if (inherited == 3) {
    inherited = ::fcntl(3, F_DUPFD_CLOEXEC, 5);
  }
  if (status_fd != 3) {
    ::dup2(status_fd, 3);
    ::fcntl(3, F_SETFD, FD_CLOEXEC);
  }
  if (inherited >= 0 && inherited != Launch::kInheritedFd) {
    ::dup2(inherited, Launch::kInheritedFd);  // dup2 clears FD_CLOEXEC: it survives exec
  } else if (inherited == Launch::kInheritedFd) {
    ::fcntl(inherited, F_SETFD, 0);
  }
  ::close_range(inherited >= 0 ? Launch::kInheritedFd + 1 : Launch::kInheritedFd, ~0U, 0);
  if (::chdir(dir) == 0) ::execve(program, argv, envp);
  const int code = errno;
  [[maybe_unused]] auto n = ::write(3, &code, sizeof code);
  ::_exit(127);
}

}  // namespace

util::Result<fs::path> ResolveProgram(const fs::path& dir, const std::string& program,
                                      const std::vector<std::string>& path_dirs) {
  std::error_code ec;
  if (program.find('/') != std::string::npos) {
    fs::path candidate = dir / program;
    if (fs::is_regular_file(candidate, ec)) return candidate;
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("the program {} is missing", program));
  }
  for (const auto& d : path_dirs) {
    fs::path candidate = fs::path(d) / program;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return util::Fail(ErrorCode::kInvalidArgument,
                    fmt::format("{} is not installed on this server", program));
}

util::Result<Child> SpawnChild(const Launch& launch) {
  if (launch.argv.empty()) return util::Fail(ErrorCode::kInvalidArgument, "no command to run");
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });
  std::vector<std::string> path_dirs = {"/usr/local/bin", "/usr/bin", "/bin"};
  for (const auto& kv : launch.env) {
    if (kv.rfind("PATH=", 0) == 0) {
      path_dirs.clear();
      std::string_view rest = std::string_view(kv).substr(5);
      while (!rest.empty()) {
        auto colon = rest.find(':');
        path_dirs.emplace_back(rest.substr(0, colon));
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
      }
    }
  }
  auto program = ResolveProgram(launch.dir, launch.argv.front(), path_dirs);
  if (!program) return tl::unexpected(program.error());
  const std::string program_path = program->string();
  const std::string dir = launch.dir.string();

  // Everything the child needs is built before fork: it may only make async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : launch.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : launch.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  auto in = MakePipe();
  auto out = MakePipe();
  auto err = MakePipe();
  auto status = MakePipe();
  auto close_all = [&] {
    for (auto* p : {&in, &out, &err, &status}) {
      if (*p) {
        CloseFd((*p)->read);
        CloseFd((*p)->write);
      }
    }
  };
  if (!in || !out || !err || !status) {
    close_all();
    return util::Fail(ErrorCode::kInternal, "cannot create the child's pipes");
  }
  const pid_t server = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    close_all();
    return util::Fail(ErrorCode::kInternal, fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ExecChild(program_path.c_str(), argv.data(), envp.data(), dir.c_str(), launch, in->read,
              out->write, err->write, status->write, server);
  }
  CloseFd(in->read);
  CloseFd(out->write);
  CloseFd(err->write);
  CloseFd(status->write);
  // exec closes the status pipe (CLOEXEC): EOF means the program runs, an int is exec's errno.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(status->read, &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  CloseFd(status->read);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    int ignored = 0;
    ::waitpid(pid, &ignored, 0);
    CloseFd(in->write);
    CloseFd(out->read);
    CloseFd(err->read);
    return util::Fail(ErrorCode::kInternal, fmt::format("cannot start {}: {}", launch.argv.front(),
                                                        std::strerror(exec_errno)));
  }
  return Child{pid, in->write, out->read, err->read};
}

}  // namespace sb::sandbox
