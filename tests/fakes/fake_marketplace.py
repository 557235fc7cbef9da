#!/usr/bin/env python3
"""Fake plugin marketplace ("LangBot Space") for Switchboard tests (Python 3 standard library only).

Built from /work/shared/spec/contract.md "## 4. Marketplace and plugin packages": the server's
config key space.url (environment SPACE__URL) points at http://127.0.0.1:PORT.

Marketplace API
    Every JSON answer is {"code":0,"msg":"ok","data":...} with HTTP 200, or
    {"code":-1,"msg":"<sentence>"} with the error status. Path segments are URL-decoded; a
    trailing slash is ignored.

    A plugin object is
        {"author", "name", "label": {"en_US": ...}, "description": {"en_US": ...},
         "latest_version": "<highest published version>", "checksum"?: "<hex>"}
    label/description are those published with the latest version (default label = name,
    description = ""). "checksum" is present only when the latest version was published with
    checksum true (the sha256 hex of its package) or a string (advertised as given, to test
    mismatches). Versions compare numerically by dot-separated parts ("1.10.0" > "1.9.0",
    "1.0" == "1.0.0"); a "-suffix" sorts before the same version without one.

    GET /api/v1/marketplace/plugins/{author}/{name}
        -> data {"plugin": <plugin object>}; 404 "plugin not found".
    GET /api/v1/marketplace/plugins/download/{author}/{name}/{version}
        -> the package bytes, Content-Type application/zip, exact Content-Length;
        404 "plugin not found" / "version not found" (JSON errors).
    GET /api/v1/marketplace/plugins?page=1&page_size=10
        -> data {"plugins": [<plugin objects sorted by author, name>], "total": N, "page": P,
        "page_size": S}. Both parameters optional (defaults 1 and 10); a non-integer or a value
        below 1 -> 400 "page and page_size must be positive integers".
    Any other path (outside /_control) -> 404 "not found"; another method on a marketplace path
    -> 405 "method not allowed".

Control API for tests (JSON bodies; answers use the same envelope; bad input -> 400)
    POST /_control/publish     {"author", "name", "version", "package_base64", "label"?: str,
                               "description"?: str, "checksum"?: true | false | "<hex>"}
                               -> data {"author", "name", "version", "size", "sha256"}.
                               Stores (or replaces) one version. author, name, version: non-empty
                               strings without "/".
    POST /_control/publish_dir {"author", "name", "version", "dir": "/abs/path", "label"?,
                               "description"?, "checksum"?, "manifest_overrides"?:
                               {"metadata.version": "2.0.0", ...}}
                               -> same answer as publish (+ "files": [zip member names]).
                               Zips the folder (members relative to it, so manifest.yaml is at
                               the zip root; sorted; __pycache__ and *.pyc skipped; fixed
                               timestamps so the same input gives the same bytes; file modes
                               kept) and publishes it. manifest_overrides rewrites the
                               `key: value` line of manifest.yaml found by its dotted path
                               through block mappings (e.g. the line "  version: ..." inside
                               "metadata:"); a string that is not a plain identifier or
                               x.y.z version is written double-quoted, other values as JSON. A
                               path with no such line, or overrides without a manifest.yaml,
                               -> 400. label/description default to the manifest's
                               metadata.label.en_US / metadata.description.en_US when present.
    POST /_control/behaviour   {"info"?: "ok"|"500"|"stall", "download"?: "ok"|"500"|"stall"|
                               "truncate"|"slow", "list"?: "ok"|"500"|"stall"}
                               -> data {"info", "download", "list"} (the whole behaviour now).
                               Keys given are changed, others kept.
                               "500": HTTP 500 JSON error. "stall": the request is read and never
                               answered until the client hangs up (or the fake stops); other
                               requests are unaffected. "truncate": headers with the full
                               Content-Length, then half the body, then the connection is closed.
                               "slow": the body in 8 KiB pieces 50 ms apart. A download of an
                               unknown plugin/version still answers 404 whatever the behaviour.
    GET  /_control/requests    -> {"requests": [{"method", "path", "query"}...]} (not enveloped):
                               every request seen so far except /_control ones, in arrival order
                               (recorded when it arrives, so a stalled request is listed); path
                               without the query string, query the raw query string ("" when
                               none).
    POST /_control/reset       clears plugins, behaviour (all "ok") and requests.
    Unknown /_control paths -> 404 "not found"; a body that is not a JSON object -> 400.

Command line:
    python3 fake_marketplace.py [--port 0] [--host 127.0.0.1]
prints exactly one line "FAKE_MARKETPLACE_PORT=<port>" once listening and serves until
SIGTERM/SIGINT (exit code 0).

In process: m = fake_marketplace.start(port=0); m.port; m.url; ...; m.stop() (threads are
daemonic; stop() also releases stalled and slow requests).
"""

import argparse
import base64
import binascii
import hashlib
import http.server
import io
import json
import os
import re
import select
import signal
import sys
import threading
import time
import zipfile
from urllib.parse import parse_qs, unquote, urlparse

API_PREFIX = ["api", "v1", "marketplace", "plugins"]
SLOW_CHUNK = 8192
SLOW_DELAY = 0.05
BEHAVIOURS = {
    "info": ("ok", "500", "stall"),
    "download": ("ok", "500", "stall", "truncate", "slow"),
    "list": ("ok", "500", "stall"),
}
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def version_key(v):
    """Numeric comparison by dot-separated parts; "1.0" == "1.0.0"; "1.0.0-rc1" < "1.0.0"."""
    core, dash, suffix = v.partition("-")
    nums = []
    for part in core.split("."):
        m = re.match(r"\d+", part)
        nums.append(int(m.group(0)) if m else 0)
    while nums and nums[-1] == 0:
        nums.pop()
    return (tuple(nums), 0 if dash else 1, suffix)


class ControlError(Exception):
    def __init__(self, status, msg):
        Exception.__init__(self, msg)
        self.status = status
        self.msg = msg


# ---------------------------------------------------------------- manifest.yaml line editing

_KEY_RE = re.compile(r"""^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"][^:#]*?)\s*:(?:\s+(.*))?$""")


def _manifest_paths(lines):
    """Maps dotted path -> (line index, indent, key text, value text) for `key: value` lines of
    block mappings. Keys below a sequence item ("- ...") get a "[]" segment, so they are never
    matched by a simple dotted path."""
    out = {}
    stack = []  # (indent, segment)
    block = None  # indent of a key whose value is a block scalar (| or >): skip deeper lines
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#") or stripped.startswith("---"):
            continue
        indent = len(line) - len(stripped)
        if block is not None:
            if indent > block:
                continue
            block = None
        while stripped.startswith("- ") or stripped == "-":
            while stack and (stack[-1][0] > indent or
                             (stack[-1][0] == indent and stack[-1][1] == "[]")):
                stack.pop()
            stack.append((indent, "[]"))
            rest = stripped[1:]
            stripped = rest.lstrip(" ")
            indent += 1 + len(rest) - len(stripped)
            if not stripped:
                break
        m = _KEY_RE.match(stripped)
        if not m:
            continue
        key = m.group(1)
        if key[:1] in ("'", '"'):
            key = key[1:-1]
        value = (m.group(2) or "").strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([s for _, s in stack] + [key])
        out.setdefault(path, (i, indent, m.group(1), value))
        if not value or value.startswith("#"):
            stack.append((indent, key))
        elif value[0] in "|>":
            block = indent
    return out


_PLAIN_RE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_.\-]*|\d+\.\d+\.\d+[A-Za-z0-9_.+\-]*)$")
_YAML_WORDS = frozenset(["true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"])


def yaml_scalar(value):
    if isinstance(value, str):
        if _PLAIN_RE.match(value) and value.lower() not in _YAML_WORDS:
            return value
        return json.dumps(value)
    return json.dumps(value)


def _unquote_scalar(value):
    value = value.strip()
    if value.startswith('"'):
        try:
            return json.loads(value)
        except ValueError:
            return value.strip('"')
    if value.startswith("'") and value.endswith("'") and len(value) >= 2:
        return value[1:-1].replace("''", "'")
    return re.sub(r"\s+#.*$", "", value)


def apply_overrides(text, overrides):
    lines = text.splitlines(True)
    for path, value in overrides.items():
        found = _manifest_paths(lines).get(path)
        if found is None:
            raise ControlError(400, "manifest_overrides: manifest.yaml has no line for %s" % path)
        i, indent, key, _ = found
        end = "\n" if lines[i].endswith("\n") else ""
        prefix = lines[i][:indent]  # keeps a "- " of a sequence item, if any
        lines[i] = "%s%s: %s%s" % (prefix, key, yaml_scalar(value), end)
    return "".join(lines)


def manifest_text_value(text, path):
    found = _manifest_paths(text.splitlines(True)).get(path)
    if found is None or not found[3]:
        return None
    return _unquote_scalar(found[3])


def zip_directory(path, overrides=None):
    """-> (zip bytes, member names, manifest text or None)."""
    members = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in files:
            if f.endswith(".pyc"):
                continue
            full = os.path.join(root, f)
            members.append((os.path.relpath(full, path).replace(os.sep, "/"), full))
    members.sort()
    names = [m[0] for m in members]
    if overrides and "manifest.yaml" not in names:
        raise ControlError(400, "manifest_overrides given but %s has no manifest.yaml" % path)
    manifest = None
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, full in members:
            with open(full, "rb") as fh:
                data = fh.read()
            if rel == "manifest.yaml":
                try:
                    manifest = data.decode("utf-8")
                except UnicodeDecodeError:
                    raise ControlError(400, "manifest.yaml is not UTF-8")
                if overrides:
                    manifest = apply_overrides(manifest, overrides)
                    data = manifest.encode("utf-8")
            info = zipfile.ZipInfo(rel, ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (os.stat(full).st_mode & 0o777 | 0o100000) << 16
            z.writestr(info, data)
    return buf.getvalue(), names, manifest


# ---------------------------------------------------------------- state

class State(object):
    def __init__(self):
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.reset()

    def reset(self):
        # (author, name) -> {version: {"data", "checksum", "label", "description"}}
        self.plugins = {}
        self.behaviour = {k: "ok" for k in BEHAVIOURS}
        self.requests = []

    def info(self, author, name):
        versions = self.plugins.get((author, name))
        if not versions:
            return None
        latest = max(versions, key=version_key)
        v = versions[latest]
        label = v["label"] if v["label"] is not None else name
        desc = v["description"] if v["description"] is not None else ""
        out = {"author": author, "name": name,
               "label": label if isinstance(label, dict) else {"en_US": label},
               "description": desc if isinstance(desc, dict) else {"en_US": desc},
               "latest_version": latest}
        if v["checksum"] is True:
            out["checksum"] = hashlib.sha256(v["data"]).hexdigest()
        elif isinstance(v["checksum"], str):
            out["checksum"] = v["checksum"]
        return out

    def publish(self, author, name, version, data, checksum, label, description):
        with self.lock:
            self.plugins.setdefault((author, name), {})[version] = {
                "data": data, "checksum": checksum, "label": label, "description": description}
        return {"author": author, "name": name, "version": version, "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest()}


def _ident(body, key):
    v = body.get(key)
    if not isinstance(v, str) or not v or "/" in v:
        raise ControlError(400, "%s must be a non-empty string without '/'" % key)
    return v


def _publish_common(body):
    author, name, version = _ident(body, "author"), _ident(body, "name"), _ident(body, "version")
    checksum = body.get("checksum", False)
    if checksum is None:
        checksum = False
    if not isinstance(checksum, (bool, str)):
        raise ControlError(400, "checksum must be true, false or a string")
    for k in ("label", "description"):
        if body.get(k) is not None and not isinstance(body[k], (str, dict)):
            raise ControlError(400, "%s must be a string" % k)
    return author, name, version, checksum


# ---------------------------------------------------------------- HTTP

class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeMarketplace/1.0"

    def log_message(self, *args):
        pass

    @property
    def state(self):
        return self.server.state

    # -- answers

    def send_json(self, status, obj):
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def ok(self, data):
        self.send_json(200, {"code": 0, "msg": "ok", "data": data})

    def error(self, status, msg):
        self.send_json(status, {"code": -1, "msg": msg})

    def stall(self):
        """Never answers: waits until the client hangs up or the fake stops."""
        self.close_connection = True
        sock = self.connection
        while not self.state.stopping.is_set():
            try:
                readable, _, _ = select.select([sock], [], [], 0.1)
                if readable and not sock.recv(65536):
                    return
            except (OSError, ValueError):
                return

    # -- dispatch

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def _dispatch(self, method):
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = 0
        raw = self.rfile.read(n) if n > 0 else b""
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        try:
            if parts[:1] == ["_control"]:
                return self._control(method, parts[1:], raw)
            with self.state.lock:
                self.state.requests.append({"method": method, "path": url.path,
                                            "query": url.query})
                behaviour = dict(self.state.behaviour)
            if parts[:4] != API_PREFIX:
                return self.error(404, "not found")
            rest = parts[4:]
            if not ((len(rest) == 4 and rest[0] == "download") or len(rest) in (0, 2)):
                return self.error(404, "not found")
            if method != "GET":
                return self.error(405, "method not allowed")
            if len(rest) == 4:
                return self._download(rest[1], rest[2], rest[3], behaviour["download"])
            if len(rest) == 2:
                return self._info(rest[0], rest[1], behaviour["info"])
            return self._list(parse_qs(url.query, keep_blank_values=True), behaviour["list"])
        except ControlError as e:
            self.error(e.status, e.msg)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _info(self, author, name, behaviour):
        if behaviour == "500":
            return self.error(500, "the marketplace is temporarily unavailable")
        if behaviour == "stall":
            return self.stall()
        with self.state.lock:
            info = self.state.info(author, name)
        if info is None:
            return self.error(404, "plugin not found")
        self.ok({"plugin": info})

    def _list(self, query, behaviour):
        try:
            page = int(query.get("page", ["1"])[0])
            size = int(query.get("page_size", ["10"])[0])
        except ValueError:
            page = size = 0
        if page < 1 or size < 1:
            return self.error(400, "page and page_size must be positive integers")
        if behaviour == "500":
            return self.error(500, "the marketplace is temporarily unavailable")
        if behaviour == "stall":
            return self.stall()
        with self.state.lock:
            items = [self.state.info(a, n) for (a, n) in sorted(self.state.plugins)]
        items = [i for i in items if i]
        self.ok({"plugins": items[(page - 1) * size: page * size], "total": len(items),
                 "page": page, "page_size": size})

    def _download(self, author, name, version, behaviour):
        with self.state.lock:
            versions = self.state.plugins.get((author, name))
            entry = versions.get(version) if versions else None
        if not versions:
            return self.error(404, "plugin not found")
        if entry is None:
            return self.error(404, "version not found")
        data = entry["data"]
        if behaviour == "500":
            return self.error(500, "the package storage is temporarily unavailable")
        if behaviour == "stall":
            return self.stall()
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(data)))
        if behaviour == "truncate":
            self.send_header("Connection", "close")
        self.end_headers()
        if behaviour == "truncate":
            self.close_connection = True
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            return
        if behaviour == "slow":
            for i in range(0, len(data), SLOW_CHUNK):
                if self.state.stopping.is_set():
                    self.close_connection = True
                    return
                self.wfile.write(data[i:i + SLOW_CHUNK])
                self.wfile.flush()
                time.sleep(SLOW_DELAY)
            return
        self.wfile.write(data)
        self.wfile.flush()

    # -- control API

    def _control(self, method, parts, raw):
        st = self.state
        what = "/".join(parts)
        known = {"publish": "POST", "publish_dir": "POST", "behaviour": "POST",
                 "reset": "POST", "requests": "GET"}
        if what not in known:
            return self.error(404, "not found")
        if method != known[what]:
            return self.error(405, "method not allowed")
        if what == "requests":
            with st.lock:
                return self.send_json(200, {"requests": [dict(r) for r in st.requests]})
        if what == "reset":
            with st.lock:
                st.reset()
            return self.ok(None)
        try:
            body = json.loads(raw.decode("utf-8") or "{}")
        except ValueError:
            raise ControlError(400, "the body is not valid JSON")
        if not isinstance(body, dict):
            raise ControlError(400, "the body must be a JSON object")
        if what == "behaviour":
            for k, v in body.items():
                if k not in BEHAVIOURS:
                    raise ControlError(400, "unknown behaviour key %r (info, download, list)" % k)
                if v not in BEHAVIOURS[k]:
                    raise ControlError(400, "%s must be one of %s" % (k, ", ".join(BEHAVIOURS[k])))
            with st.lock:
                st.behaviour.update(body)
                return self.ok(dict(st.behaviour))
        if what == "publish":
            author, name, version, checksum = _publish_common(body)
            pkg = body.get("package_base64")
            if not isinstance(pkg, str):
                raise ControlError(400, "package_base64 must be a string")
            try:
                data = base64.b64decode(pkg, validate=True)
            except (binascii.Error, ValueError):
                raise ControlError(400, "package_base64 is not valid base64")
            return self.ok(st.publish(author, name, version, data, checksum,
                                      body.get("label"), body.get("description")))
        # publish_dir
        author, name, version, checksum = _publish_common(body)
        path = body.get("dir")
        if not isinstance(path, str) or not os.path.isabs(path) or not os.path.isdir(path):
            raise ControlError(400, "dir must be the absolute path of a directory")
        overrides = body.get("manifest_overrides") or {}
        if not isinstance(overrides, dict) or not all(isinstance(k, str) for k in overrides):
            raise ControlError(400, "manifest_overrides must be an object of dotted paths")
        data, names, manifest = zip_directory(path, overrides)
        label, desc = body.get("label"), body.get("description")
        if manifest is not None:
            if label is None:
                label = manifest_text_value(manifest, "metadata.label.en_US")
            if desc is None:
                desc = manifest_text_value(manifest, "metadata.description.en_US")
        answer = st.publish(author, name, version, data, checksum, label, desc)
        answer["files"] = names
        return self.ok(answer)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, state):
        self.state = state
        http.server.ThreadingHTTPServer.__init__(self, addr, _Handler)

    def handle_error(self, request, client_address):
        pass  # clients hanging up mid-answer are expected (stall, truncate, timeouts)


class Running(object):
    """A started fake: .port, .url, .state, .stop()."""

    def __init__(self, server, thread):
        self.server = server
        self.thread = thread
        self.state = server.state
        self.port = server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self._stopped = False

    def stop(self):
        if self._stopped:
            return
        self._stopped = True
        self.state.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def start(port=0, host="127.0.0.1"):
    server = _Server((host, port), State())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    return Running(server, thread)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake plugin marketplace (LangBot Space) for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args(argv)
    server = _Server((args.host, args.port), State())

    def on_signal(signum, frame):
        server.state.stopping.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write("FAKE_MARKETPLACE_PORT=%d\n" % server.server_address[1])
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
