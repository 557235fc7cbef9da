#include "sandbox/seccomp_filter.hpp"

#include <errno.h>
#include <fmt/format.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace sb::sandbox {
namespace {

using util::ErrorCode;

struct ContextDeleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};

}  // namespace

const std::vector<std::string>& DeniedSyscalls() {
  static const std::vector<std::string> kDenied = {
      // other processes' memory and registers
      "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
      // file systems and the root
      "mount", "umount2", "pivot_root", "chroot", "mount_setattr", "move_mount", "open_tree",
      "fsopen", "fsmount", "fsconfig", "fspick", "name_to_handle_at", "open_by_handle_at",
      "quotactl", "swapon", "swapoff",
      // the kernel itself
      "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
      "syslog", "acct", "iopl", "ioperm", "lookup_dcookie", "perf_event_open", "bpf", "userfaultfd",
      "fanotify_init",
      // keyrings
      "add_key", "request_key", "keyctl",
      // namespaces
      "setns", "unshare",
      // the machine's clock
      "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
      // async I/O rings bypass the rest of this filter
      "io_uring_setup", "io_uring_enter", "io_uring_register"};
  return kDenied;
}

namespace {

// A descriptor of a new memory file holding `bytes`, positioned at 0.
util::Result<int> MemoryFile(std::string_view bytes) {
  const int fd = ::memfd_create("sb-seccomp", MFD_CLOEXEC);
  if (fd < 0) {
    return util::Fail(ErrorCode::kInternal, fmt::format("memfd: {}", std::strerror(errno)));
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done != bytes.size() || ::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return util::Fail(ErrorCode::kInternal, "seccomp: cannot write the program");
  }
  return fd;
}

// The BPF program, compiled by libseccomp.
util::Result<std::string> CompileProgram() {
  std::unique_ptr<void, ContextDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return util::Fail(ErrorCode::kInternal, "seccomp: cannot create a filter");
  for (const auto& name : DeniedSyscalls()) {
    const int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    if (seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0) != 0) {
      return util::Fail(ErrorCode::kInternal, fmt::format("seccomp: cannot deny {}", name));
    }
  }
  // clone3 passes its flags in memory a filter cannot read: make the C library use clone.
  if (const int nr = seccomp_syscall_resolve_name("clone3"); nr != __NR_SCMP_ERROR) {
    if (seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), nr, 0) != 0) {
      return util::Fail(ErrorCode::kInternal, "seccomp: cannot deny clone3");
    }
  }
  // clone asking for any new namespace (it already has its own; new ones are the usual first
  // step of a kernel exploit): one rule per flag, as a masked compare tests one pattern.
  for (unsigned long flag : {CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
                             CLONE_NEWNET, CLONE_NEWCGROUP}) {
    if (seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) != 0) {
      return util::Fail(ErrorCode::kInternal, "seccomp: cannot restrict clone");
    }
  }
  auto file = MemoryFile({});
  if (!file) return tl::unexpected(file.error());
  const int fd = *file;
  std::string program;
  if (seccomp_export_bpf(ctx.get(), fd) == 0) {
    const off_t size = ::lseek(fd, 0, SEEK_END);
    program.resize(size > 0 ? static_cast<std::size_t>(size) : 0);
    if (size <= 0 || ::pread(fd, program.data(), program.size(), 0) != size) program.clear();
  }
  ::close(fd);
  if (program.empty())
    return util::Fail(ErrorCode::kInternal, "seccomp: cannot export the program");
  return program;
}

}  // namespace

util::Result<int> WriteSeccompProgram() {
  // The same program for every plugin: compiled once, copied into each plugin's memory file.
  static const util::Result<std::string> program = CompileProgram();
  if (!program) return tl::unexpected(program.error());
  return MemoryFile(*program);
}

}  // namespace sb::sandbox
