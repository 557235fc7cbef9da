#!/usr/bin/env python3
"""Fake plugin marketplace (LangBot Space's paths, contract section 4), Python 3 standard library.

Marketplace API (JSON answers are {"code":0,"msg":"ok","data":...} or {"code":-1,"msg":...}):
    GET /api/v1/marketplace/plugins/{author}/{name}
        data {"plugin": {author, name, label, description, latest_version, checksum?}}; 404
        "plugin not found". `checksum` (sha256 hex of the latest version's package) only when the
        publisher asked for one.
    GET /api/v1/marketplace/plugins/download/{author}/{name}/{version}
        the package, application/zip; 404 for an unknown plugin or version.
    GET /api/v1/marketplace/plugins?page=1&page_size=10
        data {"plugins": [...], "total", "page", "page_size"}; 400 for non-integers.

Control API for tests (JSON bodies):
    POST /_control/publish   {author, name, version, package_base64, label?, description?,
                              checksum?: true | false | "<hex>"}
    POST /_control/behaviour {info?: "ok"|"500"|"stall", download?: "ok"|"500"|"stall"|
                              "truncate"|"slow"}
    GET  /_control/requests  {"requests": [{method, path, query}]} (control calls excluded)
    POST /_control/reset

Run: `python3 fake_marketplace.py --port 0` prints "FAKE_MARKETPLACE_PORT=<port>"; or import it
and call start() (returns an object with .port and .stop()).
"""

import argparse
import base64
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


def version_key(v):
    core = v.split("-", 1)[0]
    return tuple(int(p) if p.isdigit() else 0 for p in core.split("."))


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.plugins = {}  # (author, name) -> {"versions": {v: bytes}, "checksum": {v: ...}, ...}
        self.behaviour = {"info": "ok", "download": "ok"}
        self.requests = []

    def info(self, author, name):
        p = self.plugins.get((author, name))
        if not p or not p["versions"]:
            return None
        latest = max(p["versions"], key=version_key)
        out = {"author": author, "name": name, "label": {"en_US": p.get("label") or name},
               "description": {"en_US": p.get("description") or ""}, "latest_version": latest}
        checksum = p["checksum"].get(latest)
        if checksum is True:
            out["checksum"] = hashlib.sha256(p["versions"][latest]).hexdigest()
        elif isinstance(checksum, str):
            out["checksum"] = checksum
        return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *args):
        pass

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, msg):
        self.send_json(status, {"code": -1, "msg": msg})

    def stall(self):
        # Never answers; ends when the client hangs up.
        self.close_connection = True
        try:
            while self.rfile.read(1):
                pass
        except OSError:
            pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self):
        url = urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        st = self.state
        if url.path == "/_control/requests":
            with st.lock:
                return self.send_json(200, {"requests": list(st.requests)})
        with st.lock:
            st.requests.append({"method": "GET", "path": url.path, "query": url.query})
            behaviour = dict(st.behaviour)
        base = ["api", "v1", "marketplace", "plugins"]
        if parts[:4] != base:
            return self.error(404, "not found")
        rest = parts[4:]
        if len(rest) == 4 and rest[0] == "download":
            return self.download(rest[1], rest[2], rest[3], behaviour["download"])
        if len(rest) == 2:
            if behaviour["info"] == "500":
                return self.error(500, "the marketplace is down")
            if behaviour["info"] == "stall":
                return self.stall()
            with st.lock:
                info = st.info(rest[0], rest[1])
            if info is None:
                return self.error(404, "plugin not found")
            return self.send_json(200, {"code": 0, "msg": "ok", "data": {"plugin": info}})
        if not rest:
            q = parse_qs(url.query)
            try:
                page = int(q.get("page", ["1"])[0])
                size = int(q.get("page_size", ["10"])[0])
            except ValueError:
                return self.error(400, "page and page_size must be integers")
            with st.lock:
                items = [st.info(a, n) for (a, n) in sorted(st.plugins)]
            items = [i for i in items if i]
            chunk = items[(page - 1) * size: page * size]
            return self.send_json(200, {"code": 0, "msg": "ok", "data": {
                "plugins": chunk, "total": len(items), "page": page, "page_size": size}})
        return self.error(404, "not found")

    def download(self, author, name, version, behaviour):
        with self.state.lock:
            p = self.state.plugins.get((author, name))
            data = p["versions"].get(version) if p else None
        if data is None:
            return self.error(404, "version not found")
        if behaviour == "500":
            return self.error(500, "storage failure")
        if behaviour == "stall":
            return self.stall()
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if behaviour == "truncate":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if behaviour == "slow":
            for i in range(0, len(data), 8192):
                self.wfile.write(data[i:i + 8192])
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.wfile.write(data)

    def do_POST(self):
        url = urlparse(self.path)
        st = self.state
        try:
            body = self.body()
        except ValueError:
            return self.error(400, "malformed JSON")
        if url.path == "/_control/publish":
            key = (body["author"], body["name"])
            with st.lock:
                p = st.plugins.setdefault(key, {"versions": {}, "checksum": {}})
                p["versions"][body["version"]] = base64.b64decode(body["package_base64"])
                p["checksum"][body["version"]] = body.get("checksum", False)
                p["label"] = body.get("label")
                p["description"] = body.get("description")
            return self.send_json(200, {"code": 0, "msg": "ok", "data": None})
        if url.path == "/_control/behaviour":
            with st.lock:
                st.behaviour.update({k: v for k, v in body.items() if k in ("info", "download")})
            return self.send_json(200, {"code": 0, "msg": "ok", "data": None})
        if url.path == "/_control/reset":
            with st.lock:
                st.reset()
            return self.send_json(200, {"code": 0, "msg": "ok", "data": None})
        with st.lock:
            st.requests.append({"method": "POST", "path": url.path, "query": url.query})
        return self.error(404, "not found")


class Running:
    def __init__(self, server, thread):
        self.server = server
        self.thread = thread
        self.port = server.server_address[1]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def start(port=0):
    handler = type("BoundHandler", (Handler,), {"state": State()})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return Running(server, thread)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    running = start(args.port)
    sys.stdout.write("FAKE_MARKETPLACE_PORT=%d\n" % running.port)
    sys.stdout.flush()
    try:
        running.thread.join()
    except KeyboardInterrupt:
        running.stop()


if __name__ == "__main__":
    main()
