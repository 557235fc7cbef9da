"""Shared plumbing of the WebSocket fakes (fake_onebot.py, fake_discord.py) and their self-tests.

- `websockets`: Debian's python3-websockets 10.4 (an independent RFC 6455 implementation). When
  the interpreter running the tests is not Debian's (pyenv), its dist-packages folder is appended
  to sys.path so the same package is found.
- LoopThread: an asyncio loop in a daemon thread; run() submits a coroutine from another thread
  and waits for it with a deadline.
- ControlServer: a ThreadingHTTPServer that hands each request to route(method, path, query,
  headers, body) -> Reply, so the fakes' HTTP sides are plain functions.
- Test helpers: start_fake() / stop_fake() run a fake as a subprocess and read its port line;
  http_json(); wait_until() polls with a deadline instead of sleeping.
"""

import http.client
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
import asyncio

try:
    import websockets  # noqa: F401
except ImportError:
    sys.path.append("/usr/lib/python3/dist-packages")
    import websockets  # noqa: F401

import websockets.exceptions  # noqa: E402,F401

MAX_BODY = 32 * 1024 * 1024


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Reply(object):
    """An HTTP answer: status, body bytes, content type and extra headers [(name, value)]."""

    def __init__(self, status, body=b"", content_type="application/json", headers=None):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or []


def json_reply(status, obj, headers=None):
    return Reply(status, dumps(obj).encode("utf-8"), "application/json", headers)


class BadRequest(Exception):
    """A control request the fake cannot act on; answered 400 {"error": msg} (or `status`)."""

    def __init__(self, msg, status=400):
        Exception.__init__(self, msg)
        self.status = status


def parse_json_body(body):
    if not body:
        return {}
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise BadRequest("body is not JSON: %s" % e)
    if not isinstance(obj, dict):
        raise BadRequest("body must be a JSON object")
    return obj


class LoopThread(object):
    """An asyncio event loop running in its own daemon thread."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def start(self):
        self._thread.start()

    def run(self, coro, timeout=10.0):
        """Runs `coro` on the loop; returns its result or raises (TimeoutError after timeout)."""
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result(timeout)

    def stop(self, cleanup=None):
        """Runs the optional coroutine function `cleanup`, cancels leftover tasks, stops."""
        if not self._thread.is_alive():
            return

        async def shutdown():
            if cleanup is not None:
                try:
                    await asyncio.wait_for(cleanup(), 5)
                except Exception:
                    traceback.print_exc(file=sys.stderr)
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.run(shutdown(), 10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            http.server.BaseHTTPRequestHandler.log_message(self, fmt, *args)

    def _handle(self):
        started = False
        try:
            n = int(self.headers.get("Content-Length") or 0)
            if n < 0 or n > MAX_BODY:
                self.close_connection = True
                r = json_reply(413, {"error": "body too large"})
            else:
                body = self.rfile.read(n) if n else b""
                parts = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    r = self.server.route(self.command, parts.path or "/", query, headers, body)
                except BadRequest as e:
                    r = json_reply(e.status, {"error": str(e)})
            started = True
            self.send_response(r.status)
            if r.content_type:
                self.send_header("Content-Type", r.content_type)
            for k, v in r.headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(r.body)))
            self.end_headers()
            if r.body:
                self.wfile.write(r.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout):
            self.close_connection = True
        except Exception:
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            if not started:
                try:
                    body = b'{"error":"internal error in fake"}'
                    self.send_response(500)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


class ControlServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, host, port, route, verbose=False):
        self.route = route
        self.verbose = verbose
        http.server.ThreadingHTTPServer.__init__(self, (host, port), _Handler)
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self.server_address[1]

    def stop(self):
        if self._thread is not None:
            self.shutdown()
            self._thread.join(10)
        self.server_close()

    def handle_error(self, request, client_address):
        if self.verbose:
            http.server.ThreadingHTTPServer.handle_error(self, request, client_address)


def serve_cli(fake, port_line):
    """Runs an in-process fake until SIGTERM/SIGINT after printing `port_line(fake)`."""
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    fake.start()
    sys.stdout.write(port_line(fake) + "\n")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        fake.stop()
    return 0


# ---------------------------------------------------------------------------------------------
# Test helpers.

def start_fake(script, prefix, timeout=10.0):
    """Starts `python3 script --port 0`; returns (process, {NAME: int}) from its first line."""
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.Popen([sys.executable, os.path.join(here, script), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = [None]

    def read():
        line[0] = proc.stdout.readline().decode()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(timeout)
    if not line[0] or not line[0].startswith(prefix):
        proc.kill()
        proc.wait(5)
        raise RuntimeError("%s did not announce its port: %r %s" % (
            script, line[0], proc.stderr.read().decode("utf-8", "replace")))
    ports = {}
    for item in line[0].split():
        k, _, v = item.partition("=")
        ports[k] = int(v)
    return proc, ports


def stop_fake(proc):
    """Stops the fake; raises AssertionError when it printed a traceback."""
    if proc is None:
        return
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stdout.close()
    proc.stderr.close()
    if "Traceback" in err:
        raise AssertionError("fake printed a traceback:\n" + err)


def http_json(port, method, path, body=None, headers=None, timeout=10.0):
    """Returns (status, JSON value or raw bytes, {lower-case header: value})."""
    hdrs = dict(headers or {})
    if body is not None and not isinstance(body, (bytes, str)):
        body = dumps(body).encode("utf-8")
        hdrs.setdefault("Content-Type", "application/json")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        rh = {k.lower(): v for k, v in r.getheaders()}
        status = r.status
    finally:
        c.close()
    try:
        return status, json.loads(data.decode("utf-8")), rh
    except ValueError:
        return status, data, rh


def wait_until(fn, timeout=10.0, interval=0.02, what="condition"):
    """Polls fn() until it returns a truthy value, which is returned; AssertionError on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(interval)
