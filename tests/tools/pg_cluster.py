#!/usr/bin/env python3
"""A throw-away PostgreSQL cluster for the tests (Python 3 standard library only).

    pg_cluster.py start  <dir>   initdb into <dir>/data, start on a free 127.0.0.1 port, write
                                 <dir>/url (postgresql://<user>@127.0.0.1:<port>/postgres)
    pg_cluster.py stop   <dir>   stop it (a stale one too) and delete its data; idempotent
    pg_cluster.py halt   <dir>   stop the server but keep the data (a test's "database went away")
    pg_cluster.py resume <dir>   start a halted cluster again on the same port

PostgreSQL refuses to run as root, so as root the cluster belongs to the Debian `postgres` system
user (else `nobody`) and initdb/pg_ctl run through `runuser -u <user> --`. Authentication is
`trust` for 127.0.0.1 and the socket directory inside <dir>: nothing here is for production.
Every wait is bounded; exit status 0 on success, 1 on failure (the reason on stderr), 2 on
misuse.
"""

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

START_TIMEOUT = 60  # seconds for pg_ctl start -w
STOP_TIMEOUT = 30
READY_TIMEOUT = 30  # for the server to accept TCP connections after pg_ctl says it started
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; ".s.PGSQL.65535" goes after the directory


class ClusterError(Exception):
    pass


def pg_bin_dir():
    """The directory of initdb and pg_ctl: $SB_PG_BIN, Debian's newest, or $PATH."""
    if os.environ.get("SB_PG_BIN"):
        return os.environ["SB_PG_BIN"]
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if candidates:
        return os.path.dirname(candidates[-1])
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    raise ClusterError("initdb not found: install PostgreSQL (Debian: postgresql) or set SB_PG_BIN")


def cluster_user():
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise ClusterError("running as root but neither a 'postgres' nor a 'nobody' user exists")


def run_as(user, argv, timeout, check=True):
    if os.geteuid() == 0:
        argv = ["runuser", "-u", user, "--"] + argv
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{os.path.basename(argv[-1] if argv else '?')}: "
                           f"{' '.join(argv)} did not finish within {timeout} s")
    if check and done.returncode != 0:
        raise ClusterError(f"{' '.join(argv)} failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return default


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def home(cluster_dir):
    """Where the cluster's files are: `cluster_dir` itself, or (when the cluster's user cannot
    reach it, as under a root-only home directory) the folder its `home` file names."""
    return read(os.path.join(cluster_dir, "home"), "").strip() or cluster_dir


def owner_of(path):
    return pwd.getpwuid(os.stat(path).st_uid).pw_name


def socket_dir(cluster_dir, user):
    """A directory for the server's Unix socket: inside the cluster when the path fits."""
    inside = os.path.join(cluster_dir, "sock")
    if len(inside) <= SOCKET_PATH_MAX - 16:
        os.makedirs(inside, exist_ok=True)
        path = inside
    else:
        path = tempfile.mkdtemp(prefix="sbpg-")
        write(os.path.join(cluster_dir, "socketdir"), path)
    if os.geteuid() == 0:
        shutil.chown(path, user)
    return path


def wait_ready(bin_dir, user, port, deadline):
    """Until the server answers on 127.0.0.1:port (pg_isready), or ClusterError at the deadline."""
    last = ""
    while time.monotonic() < deadline:
        done = subprocess.run([os.path.join(bin_dir, "pg_isready"), "-h", "127.0.0.1", "-p",
                               str(port), "-U", user, "-d", "postgres", "-t", "2"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
        if done.returncode == 0:
            return
        last = done.stdout.strip()
        time.sleep(0.1)
    raise ClusterError(f"the server on port {port} did not accept connections within "
                       f"{READY_TIMEOUT} s ({last})")


def log_tail(cluster_dir, lines=20):
    text = read(os.path.join(cluster_dir, "log"), "")
    return "\n".join(text.splitlines()[-lines:])


def pg_ctl_start(bin_dir, user, cluster_dir):
    data = os.path.join(home(cluster_dir), "data")
    log = os.path.join(home(cluster_dir), "log")
    return run_as(user, [os.path.join(bin_dir, "pg_ctl"), "-D", data, "-l", log, "-w", "-t",
                         str(START_TIMEOUT), "start"], timeout=START_TIMEOUT + 15, check=False)


def start(cluster_dir):
    cluster_dir = os.path.abspath(cluster_dir)
    stop(cluster_dir, quiet=True)
    bin_dir = pg_bin_dir()
    user = cluster_user()
    os.makedirs(cluster_dir, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(cluster_dir, user)
        probe = run_as(user, ["test", "-w", cluster_dir], timeout=10, check=False)
        if probe.returncode != 0:
            # A parent directory the cluster's user cannot search (a clone under /root): the
            # files go to a folder of its own in the temporary directory instead.
            elsewhere = tempfile.mkdtemp(prefix="sbpg-home-")
            shutil.chown(elsewhere, user)
            write(os.path.join(cluster_dir, "home"), elsewhere)
    data = os.path.join(home(cluster_dir), "data")
    log = os.path.join(home(cluster_dir), "log")
    if os.path.exists(log):
        os.remove(log)
    run_as(user, [os.path.join(bin_dir, "initdb"), "-D", data, "-U", user, "--auth=trust",
                  "--encoding=UTF8", "--no-locale", "--no-sync"], timeout=120)
    sock = socket_dir(home(cluster_dir), user)
    write(os.path.join(data, "pg_hba.conf"),
          "local all all trust\nhost all all 127.0.0.1/32 trust\n")
    with open(os.path.join(data, "postgresql.conf"), "a", encoding="utf-8") as f:
        f.write("\ninclude 'sb_test.conf'\n")
    for attempt in range(3):
        # The port is free when picked but could be taken before the server binds it: pick again.
        port = free_port()
        write(os.path.join(data, "sb_test.conf"), "\n".join([
            "listen_addresses = '127.0.0.1'",
            f"port = {port}",
            f"unix_socket_directories = '{sock}'",
            "max_connections = 200",
            "shared_buffers = 64MB",
            # Throw-away data: durability only costs time here.
            "fsync = off",
            "synchronous_commit = off",
            "full_page_writes = off",
            "log_min_messages = warning",
            "log_connections = off",
            ""]))
        if os.geteuid() == 0:
            shutil.chown(os.path.join(data, "sb_test.conf"), user)
        done = pg_ctl_start(bin_dir, user, cluster_dir)
        if done.returncode == 0:
            break
        if "could not bind" not in read(log, "") or attempt == 2:
            raise ClusterError(f"pg_ctl start failed: {(done.stderr or done.stdout).strip()}\n"
                               f"{log_tail(home(cluster_dir))}")
    wait_ready(bin_dir, user, port, time.monotonic() + READY_TIMEOUT)
    url = f"postgresql://{user}@127.0.0.1:{port}/postgres"
    write(os.path.join(cluster_dir, "url"), url + "\n")
    print(url)


def postmaster_pid(data):
    """The pid of the server of `data` if it is running, else None (a stale pid file)."""
    text = read(os.path.join(data, "postmaster.pid"))
    if not text:
        return None
    try:
        pid = int(text.splitlines()[0])
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().decode(errors="replace")
    except (ValueError, OSError):
        return None
    return pid if "postgres" in cmdline else None


def wait_gone(pid, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not os.path.exists(f"/proc/{pid}"):
            return True
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True  # a zombie has stopped; its parent reaps it
        except OSError:
            return True
        time.sleep(0.05)
    return False


def halt(cluster_dir, mode="fast", quiet=False):
    """Stops the server of `cluster_dir` (data kept); kills it when pg_ctl cannot."""
    data = os.path.join(home(os.path.abspath(cluster_dir)), "data")
    pid = postmaster_pid(data)
    if pid is None:
        if not quiet:
            print(f"no server running in {cluster_dir}")
        return
    user = owner_of(data)
    run_as(user, [os.path.join(pg_bin_dir(), "pg_ctl"), "-D", data, "-m", mode, "-w", "-t",
                  str(STOP_TIMEOUT), "stop"], timeout=STOP_TIMEOUT + 15, check=False)
    if wait_gone(pid, 5):
        return
    # pg_ctl could not stop it (a stuck server): SIGQUIT is immediate shutdown, then SIGKILL.
    for sig in (signal.SIGQUIT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if wait_gone(pid, 10):
            return
    raise ClusterError(f"the server (pid {pid}) of {cluster_dir} would not stop")


def resume(cluster_dir):
    cluster_dir = os.path.abspath(cluster_dir)
    data = os.path.join(home(cluster_dir), "data")
    if not os.path.isdir(data):
        raise ClusterError(f"no cluster in {cluster_dir}: run start first")
    if postmaster_pid(data) is not None:
        return
    user = owner_of(data)
    bin_dir = pg_bin_dir()
    done = pg_ctl_start(bin_dir, user, cluster_dir)
    if done.returncode != 0:
        raise ClusterError(f"pg_ctl start failed: {(done.stderr or done.stdout).strip()}\n"
                           f"{log_tail(home(cluster_dir))}")
    port = read(os.path.join(data, "sb_test.conf"), "").split("port = ")[1].split()[0]
    wait_ready(bin_dir, user, int(port), time.monotonic() + READY_TIMEOUT)


def stop(cluster_dir, quiet=False):
    cluster_dir = os.path.abspath(cluster_dir)
    if not os.path.isdir(cluster_dir):
        if not quiet:
            print(f"no cluster in {cluster_dir}")
        return
    where = home(cluster_dir)
    if os.path.isdir(os.path.join(where, "data")):
        halt(cluster_dir, mode="fast", quiet=True)
        shutil.rmtree(os.path.join(where, "data"))
    extra_socket_dir = read(os.path.join(where, "socketdir"))
    if extra_socket_dir:
        shutil.rmtree(extra_socket_dir, ignore_errors=True)
    for folder in {where, cluster_dir}:
        for name in ("url", "socketdir"):
            try:
                os.remove(os.path.join(folder, name))
            except FileNotFoundError:
                pass
    shutil.rmtree(os.path.join(where, "sock"), ignore_errors=True)
    if where != cluster_dir:
        shutil.rmtree(where, ignore_errors=True)
        os.remove(os.path.join(cluster_dir, "home"))
    if not quiet:
        print(f"stopped {cluster_dir}")


def main(argv):
    commands = {"start": start, "stop": stop, "halt": halt, "resume": resume}
    if len(argv) != 3 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        commands[argv[1]](argv[2])
    except (ClusterError, OSError, subprocess.SubprocessError) as e:
        print(f"pg_cluster.py {argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
