#!/usr/bin/env python3
"""A hostile plugin: answers the command `escape` by trying every escape from its sandbox that
docs/security.md lists, and reports each as {"reached": bool, "detail": str}. The tests fail when
anything is reached. Python 3 standard library only; the protocol is docs/plugins.md's."""

import ctypes
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86_64 system call numbers.
SYS = {"ptrace": 101, "mount": 165, "init_module": 175, "add_key": 248, "keyctl": 250,
       "unshare": 272, "bpf": 321, "perf_event_open": 298, "kexec_load": 246, "setns": 308,
       "process_vm_readv": 310}
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


def syscall(name, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(SYS[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return rc, ctypes.get_errno()


def check(report, name, attempt):
    """Runs `attempt`; it returns (reached, detail) or raises (not reached)."""
    try:
        reached, detail = attempt()
    except Exception as e:  # noqa: BLE001 - any failure means the way is closed
        reached, detail = False, "%s: %s" % (type(e).__name__, e)
    report[name] = {"reached": bool(reached), "detail": str(detail)[:300]}


def read_file(path):
    def attempt():
        with open(path, "rb") as f:
            data = f.read(64)
        return True, "read %d bytes of %s" % (len(data), path)
    return attempt


def escape(config):
    report = {}
    data_dir = config.get("data_dir") or ""
    server_pid = int(config.get("server_pid") or 0)
    port = int(config.get("port") or 0)

    # The server's secrets and database.
    for name in ("jwt_secret", "recovery_key", "config.yaml", "switchboard.db",
                 "secrets_key", "master_key"):
        if data_dir:
            check(report, "read " + name, read_file(os.path.join(data_dir, name)))
    if data_dir:
        check(report, "list data dir", lambda: (True, os.listdir(data_dir)))

        def write_db():
            with open(os.path.join(data_dir, "switchboard.db"), "ab") as f:
                f.write(b"")
            return True, "opened the database for writing"
        check(report, "write database", write_db)

    # The server's memory and environment.
    if server_pid:
        check(report, "read /proc/server/mem", read_file("/proc/%d/mem" % server_pid))
        check(report, "read /proc/server/environ", read_file("/proc/%d/environ" % server_pid))
        check(report, "read /proc/server/cmdline", read_file("/proc/%d/cmdline" % server_pid))

        def vm_read():
            buf = ctypes.create_string_buffer(16)
            local = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 16)
            remote = (ctypes.c_void_p * 2)(0x400000, 16)
            rc, err = syscall("process_vm_readv", server_pid, ctypes.byref(local), 1,
                              ctypes.byref(remote), 1, 0)
            return rc >= 0, "process_vm_readv rc=%d errno=%s" % (rc, errno.errorcode.get(err))
        check(report, "process_vm_readv server", vm_read)

    # Other processes: the sandbox's pid namespace shows only its own.
    def foreign_processes():
        own = {os.getpid(), os.getppid()}
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        comms = []
        for p in pids:
            try:
                with open("/proc/%d/comm" % p) as f:
                    comms.append(f.read().strip())
            except OSError:
                pass
        foreign = [c for c in comms if c not in ("python3", "bwrap", "sh")]
        return bool(foreign), "processes: %s" % comms
    check(report, "see other processes", foreign_processes)

    # Loopback services of the host (the server itself, a database).
    if port:
        def connect():
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                return True, "connected to 127.0.0.1:%d" % port
        check(report, "connect host loopback", connect)

    def interfaces():
        names = sorted(name for _, name in socket.if_nameindex())
        return names not in ([], ["lo"]), "interfaces: %s" % names
    check(report, "network interfaces", interfaces)

    def outside():
        with socket.create_connection(("10.255.255.1", 80), timeout=1):
            return True, "connected outside"
    check(report, "connect outside", outside)

    # Identity and privileges.
    check(report, "uid 0", lambda: (os.getuid() == 0 or os.geteuid() == 0,
                                     "uid=%d euid=%d" % (os.getuid(), os.geteuid())))

    def status_field(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return line.split(":", 1)[1].strip()
        return ""
    check(report, "capabilities", lambda: (int(status_field("CapEff") or "0", 16) != 0,
                                            "CapEff=" + status_field("CapEff")))
    check(report, "no_new_privs off", lambda: (status_field("NoNewPrivs") != "1",
                                                "NoNewPrivs=" + status_field("NoNewPrivs")))
    check(report, "seccomp off", lambda: (status_field("Seccomp") != "2",
                                           "Seccomp=" + status_field("Seccomp")))

    # System calls a plugin never needs.
    def denied(name, *args):
        def attempt():
            rc, err = syscall(name, *args)
            return rc >= 0, "%s rc=%d errno=%s" % (name, rc, errno.errorcode.get(err))
        return attempt
    check(report, "ptrace", denied("ptrace", 0, 0, 0, 0))  # PTRACE_TRACEME
    # Onto a folder of its own, undone at once: run unsandboxed as root, this call succeeds.
    def mount():
        target = "/tmp/sb-hostile-mount-%d" % os.getpid()
        os.makedirs(target, exist_ok=True)
        rc, err = syscall("mount", ctypes.c_char_p(b"none"), ctypes.c_char_p(target.encode()),
                          ctypes.c_char_p(b"tmpfs"), 0, 0)
        if rc == 0:
            libc.umount2(ctypes.c_char_p(target.encode()), 2)  # MNT_DETACH
        os.rmdir(target)
        return rc >= 0, "mount rc=%d errno=%s" % (rc, errno.errorcode.get(err))
    check(report, "mount", mount)
    check(report, "init_module", denied("init_module", 0, 0, ctypes.c_char_p(b"")))
    check(report, "kexec_load", denied("kexec_load", 0, 0, 0, 0))
    check(report, "add_key", denied("add_key", ctypes.c_char_p(b"user"), ctypes.c_char_p(b"k"),
                                    ctypes.c_char_p(b"v"), 1, -2))  # KEY_SPEC_PROCESS_KEYRING
    check(report, "keyctl", denied("keyctl", 0, -1, 0, 0, 0))  # KEYCTL_GET_KEYRING_ID
    check(report, "bpf", denied("bpf", 0, 0, 0))
    check(report, "perf_event_open", denied("perf_event_open", 0, 0, -1, -1, 0))
    check(report, "unshare user", denied("unshare", CLONE_NEWUSER))
    check(report, "unshare net", denied("unshare", CLONE_NEWNET))

    # The package is read-only.
    def write_package():
        with open("main.py", "a") as f:
            f.write("# changed\n")
        return True, "appended to its own main.py"
    check(report, "write package", write_package)

    # Processes: a fork bomb must stop at the limit.
    def fork_bomb():
        wanted = int(config.get("processes") or 150)
        children = []
        try:
            for _ in range(wanted):
                pid = os.fork()
                if pid == 0:
                    time.sleep(30)
                    os._exit(0)
                children.append(pid)
        except OSError as e:
            detail = "stopped after %d: %s" % (len(children), e)
        else:
            detail = "forked all %d" % len(children)
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        for pid in children:
            os.waitpid(pid, 0)
        return len(children) >= wanted, detail
    check(report, "fork %s processes" % config.get("processes", "150"), fork_bomb)

    # Memory: one child tries to hold more than the limit.
    def memory():
        mb = int(config.get("memory_mb") or 768)
        code = ("b = bytearray(%d * 1024 * 1024)\n"
                "for i in range(0, len(b), 4096): b[i] = 1\n"
                "print('held')" % mb)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
        held = b"held" in out.stdout
        return held, "rc=%d %s" % (out.returncode, out.stderr[-120:].decode(errors="replace"))
    check(report, "hold %s MB" % config.get("memory_mb", "768"), memory)

    # A grandchild in its own session, meant to outlive the plugin.
    def grandchild():
        marker = config.get("marker") or "sb-hostile-grandchild"
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)",
                                          marker])
            os._exit(0)
        os.waitpid(pid, 0)
        # Reached only if it survives the plugin: the test looks for it after the stop.
        return False, "started a setsid grandchild marked %s" % marker
    check(report, "grandchild", grandchild)
    return report


class Connection:
    def __init__(self):
        self.next_seq = 0

    def send(self, message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def answer(self, seq_id, data=None, error=None):
        if error is None:
            self.send({"seq_id": seq_id, "code": 0, "message": "ok", "data": data or {}})
        else:
            self.send({"seq_id": seq_id, "code": -1, "message": error, "data": None})


def main():
    conn = Connection()
    config = {}
    for line in sys.stdin:
        request = json.loads(line)
        if "action" not in request:
            continue
        action = request["action"]
        data = request.get("data") or {}
        if action == "shutdown":
            return
        if action == "handshake":
            config = data.get("config") or {}
            conn.answer(request["seq_id"], {
                "protocol_version": 1,
                "commands": [{"name": "escape", "description": "try every way out"}]})
        elif action == "command" and data.get("command") == "escape":
            conn.answer(request["seq_id"], {"reply": json.dumps(escape(config), sort_keys=True)})
        else:
            conn.answer(request["seq_id"], error="unknown action %s" % action)


if __name__ == "__main__":
    main()
