"""Black-box harness for the Switchboard API suite (standard library only).

Starts the real binary on a free port with a temporary data directory, waits for /healthz,
and offers small helpers:

    srv = Server(env={"API__BODY_LIMIT_BYTES": "2048"})
    srv.start()
    status, body, headers = srv.req("GET", "/api/v1/system/info")
    token = srv.init_and_login()           # POST /user/init + POST /user/auth
    key = srv.create_api_key(token)        # POST /api/v1/apikeys with the user token
    srv.restart()                          # SIGTERM (exit 0 within 15 s) + start, same data dir
    srv.kill()                             # SIGKILL; start() again on the same data dir
    srv.stop()

ServerTestCase starts one server per test class with an admin, a user token and an API key.
Every socket has a timeout, so no test can hang.

Under `make test-sanitize` the server is built with AddressSanitizer and UBSan: a report in its
stderr (a log file next to its data directory) fails the stop that finds it, and the whole run
at exit, even when the test ignores the exit code or the exception is raised in a thread.
"""

import atexit
import http.client
import json
import os
import re
import shutil
import sys
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import uuid as uuidlib

BIN = os.environ.get("SWITCHBOARD_BIN", "/work/main/build/switchboard")
ADMIN_USER = "admin@example.com"
ADMIN_PASSWORD = "correct-horse-battery"
SOCKET_TIMEOUT = 15.0  # above the server's 5 s SQLite busy timeout
START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0

UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
RFC3339_Z_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
API_KEY_RE = re.compile(r"^lbk_[A-Za-z0-9_-]{43}$")

# What AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer print when they find
# something; none of it appears in the server's own logging.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", ": runtime error: ",
                     "SUMMARY: AddressSanitizer", "SUMMARY: UndefinedBehaviorSanitizer")
SANITIZER_REPORTS = []  # every report seen in this process, for the exit check below


def sanitizer_report(text):
    """The sanitizer report in `text` (from its first marker on), or None."""
    found = [text.find(m) for m in SANITIZER_MARKERS if m in text]
    if not found:
        return None
    start = text.rfind("\n", 0, min(found)) + 1
    return text[start:start + 20000]


def _record_sanitizer_report(where, text):
    report = sanitizer_report(text)
    if report is None:
        return None
    message = "sanitizer report from %s:\n%s" % (where, report)
    SANITIZER_REPORTS.append(message)
    return message


@atexit.register
def _fail_on_sanitizer_reports():
    if SANITIZER_REPORTS:
        sys.stderr.write("\n".join(SANITIZER_REPORTS) + "\n%d sanitizer report(s): failing the run\n"
                         % len(SANITIZER_REPORTS))
        sys.stderr.flush()
        os._exit(1)


def unknown_uuid():
    return str(uuidlib.uuid4())


# The PostgreSQL run of the suite (ctest's api_pg_* tests): every data directory gets a fresh
# database of its own on the throw-away cluster that the `pg` fixture started.
BACKEND = os.environ.get("SB_TEST_BACKEND", "sqlite")
PG_URL_FILE = os.environ.get("SB_TEST_PG_URL_FILE")
_PG_DATABASE_OF_DIR = {}


def on_postgres():
    return BACKEND == "postgresql"


def fresh_pg_database():
    """The URL of a new, empty database on the test cluster."""
    if not PG_URL_FILE:
        raise AssertionError("SB_TEST_BACKEND=postgresql needs SB_TEST_PG_URL_FILE (ctest sets it)")
    with open(PG_URL_FILE) as f:
        base = f.read().strip()
    name = "sbt_" + uuidlib.uuid4().hex[:20]
    subprocess.run(["psql", base, "-v", "ON_ERROR_STOP=1", "-qc", 'CREATE DATABASE "%s"' % name],
                   check=True, timeout=60, capture_output=True)
    return base.rsplit("/", 1)[0] + "/" + name


def database_url_for(data_dir):
    """On PostgreSQL, the database that belongs with `data_dir` (made on first use)."""
    key = os.path.realpath(data_dir)
    if key not in _PG_DATABASE_OF_DIR:
        _PG_DATABASE_OF_DIR[key] = fresh_pg_database()
    return _PG_DATABASE_OF_DIR[key]


class Server:
    """One switchboard process with its own data directory (and, in the PostgreSQL run of the
    suite, its own database)."""

    def __init__(self, env=None, data_dir=None, host="127.0.0.1", args=None):
        self.env = dict(env or {})
        self.args = list(args or [])  # more `serve` flags
        self.host = host  # bind address
        self.connect_host = "127.0.0.1"  # where the helpers connect
        self._own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="sb-api-")
        if on_postgres() and "DATABASE__URL" not in self.env:
            self.env["DATABASE__URL"] = database_url_for(self.data_dir)
            # The JWT secret lives in the database there; a data directory's file of an earlier
            # single-instance setup is adopted on first start, which lets the tests that forge
            # tokens read it as they do on SQLite.
            secret = os.path.join(self.data_dir, "jwt_secret")
            if os.path.isdir(self.data_dir) and not os.path.exists(secret):
                fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(uuidlib.uuid4().hex + uuidlib.uuid4().hex + "\n")
        self.proc = None
        self.port = None
        self.stdout_lines = []
        self.recovery_key = None  # from the most recent start (None when not printed)
        self.first_recovery_key = None  # from the first start of this data dir
        self.setup_code = None
        self._stderr = None
        self.log_path = None
        self._ready = threading.Event()
        self._reader = None
        self._log_offset = 0  # where the current process's stderr starts in log_path

    # ---- process control -------------------------------------------------------------------

    def start(self):
        assert self.proc is None, "server already running"
        env = dict(os.environ)
        env.update(self.env)
        self.stdout_lines = []
        self.recovery_key = None
        self.setup_code = None
        self.port = None
        self._ready = threading.Event()
        self.log_path = self.data_dir.rstrip("/") + ".log"
        self._stderr = open(self.log_path, "ab")
        self._log_offset = self._stderr.tell()
        self.proc = subprocess.Popen(
            [BIN, "serve", "--data-dir", self.data_dir, "--port", "0", "--host", self.host]
            + self.args,
            stdout=subprocess.PIPE, stderr=self._stderr, stdin=subprocess.DEVNULL, env=env)
        self._reader = threading.Thread(target=self._read_stdout, args=(self.proc,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                break
        if not self._ready.is_set():
            time.sleep(0.1)  # let the reader collect the last lines
            self._kill()
            raise AssertionError("server printed no listening line (timeout %.0f s); stdout=%r"
                                 % (START_TIMEOUT, self.stdout_lines))
        while time.monotonic() < deadline:
            try:
                status, _, _ = self.req("GET", "/healthz", timeout=2)
                if status == 200:
                    # The banner lines after the listening line are printed right away.
                    time.sleep(0.05)
                    self._parse_banner()
                    return self
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self._kill()
        raise AssertionError("server did not become healthy; stdout=%r" % self.stdout_lines)

    def _read_stdout(self, proc):
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.stdout_lines.append(line)
            m = re.search(r"listening on [^\s]*:(\d+)", line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._ready.set()

    def _parse_banner(self):
        for line in list(self.stdout_lines):
            m = re.search(r"Recovery key \([^)]*\): (\S+)", line)
            if m:
                self.recovery_key = m.group(1)
                if self.first_recovery_key is None:
                    self.first_recovery_key = self.recovery_key
            m = re.search(r"setup code: (\S+)", line)
            if m:
                self.setup_code = m.group(1)

    def stop(self, check=True):
        """SIGTERM; with `check`, asserts a clean exit (code 0) within 15 s."""
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
            rc = None
        self._close_pipes(proc)
        if self._stderr:
            self._stderr.close()
            self._stderr = None
        report = self._check_sanitizer(proc)
        if report is not None:
            raise AssertionError(report)
        if check:
            if rc is None:
                raise AssertionError("server did not stop within %.0f s of SIGTERM" % STOP_TIMEOUT)
            if rc != 0:
                raise AssertionError("server exited with %r after SIGTERM" % rc)
        return rc

    def _close_pipes(self, proc):
        if self._reader is not None:
            self._reader.join(5)
            self._reader = None
        if proc.stdout:
            proc.stdout.close()

    def _kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(5)
            self._close_pipes(self.proc)
            self._check_sanitizer(self.proc)  # recorded; the caller raises its own error
            self.proc = None

    def kill(self):
        """SIGKILL, as a crash would; the data directory stays for the next start."""
        self._kill()
        if self._stderr:
            self._stderr.close()
            self._stderr = None

    def _check_sanitizer(self, proc):
        """Records and returns a sanitizer report the process wrote to its stderr, or None."""
        if not self.log_path or not os.path.exists(self.log_path):
            return None
        with open(self.log_path, "rb") as f:
            f.seek(self._log_offset)
            text = f.read().decode("utf-8", "replace")
        return _record_sanitizer_report("the server (pid %d, %s)" % (proc.pid, self.log_path),
                                        text)

    def restart(self):
        self.stop()
        return self.start()

    def cleanup(self):
        try:
            if self.proc is not None:
                self.stop(check=False)
        finally:
            if self._own_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)
                if self.log_path and os.path.exists(self.log_path):
                    os.unlink(self.log_path)

    # ---- HTTP ---------------------------------------------------------------------------------

    def connection(self, timeout=SOCKET_TIMEOUT):
        return http.client.HTTPConnection(self.connect_host, self.port, timeout=timeout)

    def raw_socket(self, timeout=SOCKET_TIMEOUT):
        s = socket.create_connection((self.connect_host, self.port), timeout=timeout)
        s.settimeout(timeout)
        return s

    def req(self, method, path, body=None, token=None, api_key=None, headers=None,
            raw_body=None, timeout=SOCKET_TIMEOUT, conn=None):
        """Returns (status, parsed JSON or text, headers with lower-case names)."""
        h = {}
        data = None
        if raw_body is not None:
            data = raw_body.encode() if isinstance(raw_body, str) else raw_body
            h["Content-Type"] = "application/json"
        elif body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if token is not None:
            h["Authorization"] = "Bearer " + token
        if api_key is not None:
            h["X-API-Key"] = api_key
        if headers:
            h.update(headers)
        own = conn is None
        c = conn or self.connection(timeout)
        try:
            c.request(method, path, body=data, headers=h)
            resp = c.getresponse()
            raw = resp.read()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            status = resp.status
        finally:
            if own:
                c.close()
        text = raw.decode("utf-8", "replace")
        parsed = text
        if hdrs.get("content-type", "").startswith("application/json"):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = text
        return status, parsed, hdrs

    # ---- account helpers ------------------------------------------------------------------------

    def init_admin(self, user=ADMIN_USER, password=ADMIN_PASSWORD):
        status, body, _ = self.req("POST", "/api/v1/user/init",
                                   {"user": user, "password": password})
        assert status == 200, (status, body)

    def login(self, user=ADMIN_USER, password=ADMIN_PASSWORD):
        status, body, _ = self.req("POST", "/api/v1/user/auth",
                                   {"user": user, "password": password})
        assert status == 200, (status, body)
        return body["data"]["token"]

    def init_and_login(self, user=ADMIN_USER, password=ADMIN_PASSWORD):
        self.init_admin(user, password)
        return self.login(user, password)

    def create_api_key(self, token, name="suite"):
        status, body, _ = self.req("POST", "/api/v1/apikeys", {"name": name}, token=token)
        assert status == 200, (status, body)
        return body["data"]["key"]["key"]

    # ---- CLI ------------------------------------------------------------------------------------

    def cli(self, *args, timeout=30):
        env = dict(os.environ)
        env.update(self.env)
        result = subprocess.run([BIN] + list(args) + ["--data-dir", self.data_dir],
                                capture_output=True, text=True, timeout=timeout, env=env)
        report = _record_sanitizer_report("switchboard %s" % " ".join(args), result.stderr)
        if report is not None:
            raise AssertionError(report)
        return result


class ApiAssertions:
    """Envelope checks shared by every test case."""

    def assertOk(self, status, body, msg=None):
        self.assertEqual(status, 200, msg or body)
        self.assertIsInstance(body, dict, body)
        self.assertEqual(body.get("code"), 0, body)
        self.assertEqual(body.get("msg"), "ok", body)
        self.assertIn("data", body)
        return body["data"]

    def assertError(self, status, body, expected_status, fragment=None):
        self.assertEqual(status, expected_status, body)
        self.assertIsInstance(body, dict, body)
        self.assertEqual(body.get("code"), -1 if expected_status < 500 else -2, body)
        self.assertIsInstance(body.get("msg"), str, body)
        self.assertTrue(body["msg"], body)
        self.assertNotIn("data", body, body)
        if fragment is not None:
            for part in (fragment if isinstance(fragment, (list, tuple)) else [fragment]):
                self.assertIn(part.lower(), body["msg"].lower(),
                              "message %r does not name %r" % (body["msg"], part))

    def assertUuid(self, value):
        self.assertIsInstance(value, str)
        self.assertRegex(value, UUID4_RE)

    def assertTimestamp(self, value):
        self.assertIsInstance(value, str)
        self.assertRegex(value, RFC3339_Z_RE)


class ServerTestCase(unittest.TestCase, ApiAssertions):
    """One server per class, initialised, with `token` (admin JWT) and `api_key`."""

    server_env = {}
    init_admin = True
    srv = None
    token = None
    api_key = None

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(env=cls.server_env)
        try:
            cls.srv.start()
            if cls.init_admin:
                cls.token = cls.srv.init_and_login()
                cls.api_key = cls.srv.create_api_key(cls.token)
        except BaseException:
            cls.srv.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        srv, cls.srv = cls.srv, None
        if srv is not None:
            try:
                srv.stop()
            finally:
                srv.cleanup()

    @classmethod
    def create(cls, path, body):
        """POSTs `body` with the admin token while a class sets up; its data (200 required)."""
        status, resp, _ = cls.srv.req("POST", path, body, token=cls.token)
        assert status == 200, (path, status, resp)
        return resp["data"]

    # Shorthands against the class server.
    def req(self, method, path, body=None, **kw):
        return self.srv.req(method, path, body, **kw)

    def as_user(self, method, path, body=None, **kw):
        return self.srv.req(method, path, body, token=self.token, **kw)

    def as_key(self, method, path, body=None, **kw):
        return self.srv.req(method, path, body, api_key=self.api_key, **kw)

    def ok(self, method, path, body=None, **kw):
        """Request with the user token and assert a success envelope; returns data."""
        status, resp, _ = self.as_user(method, path, body, **kw)
        return self.assertOk(status, resp, "%s %s -> %s %r" % (method, path, status, resp))

    # Resource factories (user token).
    def make_provider(self, name="prov", requester="openai-chat-completions",
                      base_url="https://api.openai.com/v1", api_keys=("sk-test-0123456789abcdef",)):
        data = self.ok("POST", "/api/v1/provider/providers",
                       {"name": name, "requester": requester, "base_url": base_url,
                        "api_keys": list(api_keys)})
        return data["uuid"]

    def make_model(self, provider_uuid, kind="llm", name="gpt-4o", **extra):
        body = {"name": name, "provider_uuid": provider_uuid}
        body.update(extra)
        return self.ok("POST", "/api/v1/provider/models/" + kind, body)["uuid"]

    def make_pipeline(self, name="pipe", config=None):
        return self.ok("POST", "/api/v1/pipelines", {"name": name, "config": config or {}})["uuid"]

    def make_bot(self, name="bot", adapter="telegram", config=None, **extra):
        body = {"name": name, "adapter": adapter,
                "config": config if config is not None else {"token": "123:abc"}}
        body.update(extra)
        return self.ok("POST", "/api/v1/platform/bots", body)["uuid"]

    def default_pipeline(self):
        pipes = self.ok("GET", "/api/v1/pipelines")["pipelines"]
        defaults = [p for p in pipes if p["is_default"]]
        self.assertEqual(len(defaults), 1, pipes)
        return defaults[0]
