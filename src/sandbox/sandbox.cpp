#include "sandbox/sandbox.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "sandbox/seccomp_filter.hpp"

namespace sb::sandbox {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

// The system's runtime folders, read-only. Debian 12 has merged /usr: /bin, /lib, ... are links
// into it and are recreated as links.
constexpr std::array kSystemPaths = {"/usr",   "/bin",   "/sbin",  "/lib",
                                     "/lib64", "/lib32", "/libx32"};
// What programs read from /etc: the linker cache, alternatives (python3, node, sh), time zone,
// certificates, and name service files. Nothing of the server's configuration.
constexpr std::array kEtcPaths = {"/etc/ld.so.cache", "/etc/alternatives",    "/etc/localtime",
                                  "/etc/ssl",         "/etc/ca-certificates", "/etc/nsswitch.conf",
                                  "/etc/passwd",      "/etc/group",           "/etc/mime.types"};
// Only with the network: how to resolve names.
constexpr std::array kNetworkEtcPaths = {"/etc/resolv.conf", "/etc/hosts", "/etc/gai.conf"};

// The namespaces, identity and process tree rules every sandbox starts with.
std::vector<std::string> CoreArguments(const fs::path& bwrap, bool network,
                                       const std::string& hostname) {
  std::vector<std::string> args = {bwrap.string(),
                                   "--unshare-user",
                                   "--unshare-pid",
                                   "--unshare-ipc",
                                   "--unshare-uts",
                                   "--unshare-cgroup-try",
                                   "--uid",
                                   std::to_string(kSandboxUid),
                                   "--gid",
                                   std::to_string(kSandboxUid),
                                   "--hostname",
                                   hostname,
                                   "--disable-userns",
                                   "--cap-drop",
                                   "ALL",
                                   "--die-with-parent",
                                   "--new-session"};
  if (!network) args.push_back("--unshare-net");
  return args;
}

void AddSystemView(std::vector<std::string>& args, bool network) {
  std::error_code ec;
  for (const char* path : kSystemPaths) {
    if (fs::is_symlink(path, ec)) {
      args.insert(args.end(), {"--symlink", fs::read_symlink(path, ec).string(), path});
    } else if (fs::is_directory(path, ec)) {
      args.insert(args.end(), {"--ro-bind", path, path});
    }
  }
  auto bind_etc = [&](const char* path) {
    if (fs::exists(path, ec)) args.insert(args.end(), {"--ro-bind", path, path});
  };
  for (const char* path : kEtcPaths) bind_etc(path);
  if (network) {
    for (const char* path : kNetworkEtcPaths) bind_etc(path);
  }
  args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
}

// Runs `argv` with no input and waits up to five seconds; its stderr, or why it did not run.
util::Result<void> RunQuietly(const std::vector<std::string>& argv) {
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) {
    return util::Fail(ErrorCode::kInternal, fmt::format("pipe: {}", std::strerror(errno)));
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(err[1], 2);
    char* const env[] = {nullptr};
    ::execve(cargv[0], cargv.data(), env);
    ::_exit(127);
  }
  ::close(err[1]);
  if (pid < 0) {
    ::close(err[0]);
    return util::Fail(ErrorCode::kInternal, fmt::format("fork: {}", std::strerror(errno)));
  }
  std::string output;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd p{err[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      ::kill(pid, SIGKILL);
      break;
    }
    char buffer[512];
    const ssize_t n = ::read(err[0], buffer, sizeof buffer);
    if (n <= 0) break;
    if (output.size() < 1024) output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return util::Ok();
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (output.empty())
    output = WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                               : std::string("killed");
  return util::Fail(ErrorCode::kUnavailable, output);
}

// The seccomp descriptor and the cgroup live as long as the process.
struct SandboxResources {
  int seccomp_fd = -1;
  std::unique_ptr<Cgroup> cgroup;
  ~SandboxResources() {
    if (seccomp_fd >= 0) ::close(seccomp_fd);
  }
};

}  // namespace

util::Result<void> ProbeSandbox(const SandboxOptions& options) {
  std::error_code ec;
  if (!fs::exists(options.bwrap, ec)) {
    return util::Fail(ErrorCode::kUnavailable,
                      fmt::format("bubblewrap ({}) is not installed", options.bwrap.string()));
  }
  auto args = CoreArguments(options.bwrap, false, "probe");
  AddSystemView(args, false);
  args.insert(args.end(), {"--", "/bin/true"});
  if (auto ok = RunQuietly(args); !ok) {
    return util::Fail(
        ErrorCode::kUnavailable,
        fmt::format("the kernel refuses the sandbox's namespaces: {}", ok.error().message));
  }
  return util::Ok();
}

util::Result<void> EnterSandbox(const SandboxOptions& options, const SandboxSpec& spec,
                                Launch& launch, std::string* limits_note) {
  if (launch.argv.empty()) return util::Fail(ErrorCode::kInvalidArgument, "no command to run");
  // The program must exist before the sandbox is built, to say so plainly.
  auto program = ResolveProgram(spec.package_dir.empty() ? spec.data_dir : spec.package_dir,
                                launch.argv.front(), {"/usr/local/bin", "/usr/bin", "/bin"});
  if (!program) return tl::unexpected(program.error());

  // bubblewrap runs from the launch's folder: a relative path (a data directory given as
  // ./data) would name something else there.
  std::error_code ec;
  const fs::path package_dir =
      spec.package_dir.empty() ? fs::path() : fs::absolute(spec.package_dir, ec);
  const fs::path data_dir = fs::absolute(spec.data_dir, ec);
  if (ec) return util::Fail(ErrorCode::kInternal, "cannot resolve the sandbox's folders");
  fs::create_directories(data_dir, ec);
  fs::permissions(data_dir, fs::perms::owner_all, ec);
  if (ec) {
    return util::Fail(ErrorCode::kInternal,
                      fmt::format("cannot create the sandbox's data folder: {}", ec.message()));
  }

  auto resources = std::make_shared<SandboxResources>();
  auto seccomp = WriteSeccompProgram();
  if (!seccomp) return tl::unexpected(seccomp.error());
  resources->seccomp_fd = *seccomp;
  auto cgroup = Cgroup::Create(spec.cgroup_name, options.limits);
  if (cgroup) {
    resources->cgroup = std::move(*cgroup);
    launch.join_fds = resources->cgroup->ProcsFds();
  } else if (limits_note) {
    *limits_note =
        fmt::format("no cgroup ({}); only the per-process rlimits hold", cgroup.error().message);
  }

  auto args = CoreArguments(options.bwrap, spec.network, spec.hostname);
  AddSystemView(args, spec.network);
  if (!package_dir.empty()) {
    args.insert(args.end(), {"--ro-bind", package_dir.string(), "/plugin"});
  }
  args.insert(args.end(), {"--bind", data_dir.string(), "/data"});
  // Last, so nothing mounted before (the /tmp tmpfs, /data) hides them.
  for (const auto& path : spec.read_only) {
    const fs::path absolute = fs::absolute(path, ec);
    if (!ec && fs::exists(absolute, ec)) {
      args.insert(args.end(), {"--ro-bind", absolute.string(), absolute.string()});
    }
  }
  args.insert(args.end(), {"--chdir", package_dir.empty() ? "/data" : "/plugin", "--seccomp",
                           std::to_string(Launch::kInheritedFd), "--"});
  args.insert(args.end(), launch.argv.begin(), launch.argv.end());
  launch.argv = std::move(args);
  launch.inherit_fd = resources->seccomp_fd;
  for (auto& e : launch.env) {
    if (e.rfind("HOME=", 0) == 0) e = "HOME=/data";
  }
  launch.env.push_back("TMPDIR=/tmp");
  launch.resources = std::move(resources);
  return util::Ok();
}

}  // namespace sb::sandbox
