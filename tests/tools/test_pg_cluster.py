"""Self-test of pg_cluster.py: a real cluster is started, reached with psql, halted, resumed,
killed and stopped."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "pg_cluster.py")
sys.path.insert(0, HERE)
import pg_cluster  # noqa: E402


def script(*args, timeout=180):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=timeout)


def psql(url, sql):
    psql_bin = os.path.join(pg_cluster.pg_bin_dir(), "psql")
    return subprocess.run([psql_bin, url, "-XtAc", sql], capture_output=True, text=True,
                          timeout=30)


class PgClusterTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sb-pgcluster-test-")
        os.chmod(self.tmp, 0o755)  # the cluster's user must reach the directory inside
        self.dir = os.path.join(self.tmp, "cluster")

    def tearDown(self):
        script("stop", self.dir)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self):
        done = script("start", self.dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.dir, "url"), encoding="utf-8") as f:
            url = f.read().strip()
        self.assertEqual(done.stdout.strip(), url)
        return url

    def test_start_connect_halt_resume_stop(self):
        url = self.start()
        self.assertRegex(url, r"^postgresql://[a-z_]+@127\.0\.0\.1:\d+/postgres$")
        done = psql(url, "SELECT current_setting('fsync'), current_setting('max_connections'), "
                         "current_setting('listen_addresses')")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "off|200|127.0.0.1")
        if os.geteuid() == 0:
            # PostgreSQL refuses root; the cluster belongs to an unprivileged user.
            self.assertNotEqual(pg_cluster.owner_of(os.path.join(self.dir, "data")), "root")

        self.assertEqual(script("halt", self.dir).returncode, 0)
        self.assertNotEqual(psql(url, "SELECT 1").returncode, 0)
        self.assertTrue(os.path.isdir(os.path.join(self.dir, "data")))

        done = script("resume", self.dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(psql(url, "SELECT 41 + 1").stdout.strip(), "42")

        done = script("stop", self.dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotEqual(psql(url, "SELECT 1").returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "data")))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "url")))
        # Idempotent, also where nothing was ever started.
        self.assertEqual(script("stop", self.dir).returncode, 0)
        self.assertEqual(script("stop", os.path.join(self.tmp, "never")).returncode, 0)

    def test_start_replaces_a_running_or_killed_cluster(self):
        first = self.start()
        second = self.start()  # the first is stopped, not left running on its port
        self.assertEqual(psql(second, "SELECT 1").returncode, 0)
        if first != second:
            self.assertNotEqual(psql(first, "SELECT 1").returncode, 0)
        pid = pg_cluster.postmaster_pid(os.path.join(self.dir, "data"))
        self.assertIsNotNone(pid)
        os.kill(pid, signal.SIGKILL)
        self.assertTrue(pg_cluster.wait_gone(pid, 10))
        # Its children notice the postmaster's death by themselves; stop must not need them.
        third = self.start()
        self.assertEqual(psql(third, "SELECT 1").returncode, 0)
        done = script("stop", self.dir)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_misuse_and_unreachable_directory(self):
        self.assertEqual(script().returncode, 2)
        self.assertEqual(script("launch", self.dir).returncode, 2)
        self.assertEqual(script("resume", self.dir).returncode, 1)
        if os.geteuid() == 0:
            # A folder the cluster's user cannot reach (a clone under /root): the cluster's files
            # go to a temporary folder of their own, named in <dir>/home, and go with `stop`.
            hidden = os.path.join(self.tmp, "hidden")
            os.makedirs(hidden)
            os.chmod(hidden, 0o700)
            cluster = os.path.join(hidden, "cluster")
            start = time.monotonic()
            done = script("start", cluster)
            self.addCleanup(script, "stop", cluster)  # also when an assertion below fails
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertLess(time.monotonic() - start, 30)
            with open(os.path.join(cluster, "home")) as f:
                elsewhere = f.read().strip()
            self.assertTrue(os.path.isdir(os.path.join(elsewhere, "data")))
            with open(os.path.join(cluster, "url")) as f:
                self.assertEqual(psql(f.read().strip(), "SELECT 1").returncode, 0)
            done = script("stop", cluster)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertFalse(os.path.exists(elsewhere))
            self.assertFalse(os.path.exists(os.path.join(cluster, "home")))


if __name__ == "__main__":
    unittest.main()
