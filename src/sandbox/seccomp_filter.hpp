// The seccomp program a sandboxed plugin runs under: every system call is allowed except those a
// plugin never needs and an attacker would want (tracing other processes, mounting, kernel
// modules and keyrings, BPF, new namespaces, clock and reboot). Denied calls fail with EPERM
// (ENOSYS for clone3, so the C library falls back to clone, whose namespace flags are checked);
// a call from a foreign architecture kills the process.
//   auto fd = WriteSeccompProgram();   // a memfd holding the BPF program, for bwrap --seccomp
//   if (!fd) return fd.error();
#pragma once

#include <string>
#include <vector>

#include "util/error.hpp"

namespace sb::sandbox {

// The names of the denied system calls (for docs and tests).
const std::vector<std::string>& DeniedSyscalls();

// A file descriptor (close-on-exec, positioned at 0) holding the compiled BPF program.
// kInternal when libseccomp refuses. The caller owns the descriptor.
util::Result<int> WriteSeccompProgram();

}  // namespace sb::sandbox
