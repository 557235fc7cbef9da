#!/usr/bin/env python3
"""Fake GitHub (REST API releases endpoints and release downloads) for Switchboard tests, Python 3
standard library only.

Built from GitHub's REST API documentation ("REST API endpoints for releases" and "... for
release assets", API version 2022-11-28, and "Rate limits for the REST API" / "Troubleshooting
the REST API"). The server's config key plugins.github_api_url (environment
PLUGINS__GITHUB_API_URL) points at http://127.0.0.1:PORT; this one server plays both
api.github.com and github.com (and the object store the downloads redirect to), so every URL it
gives out starts with its own base.

REST API (JSON; errors are {"message", "documentation_url", "status": "<code>"})
    GET /repos/{owner}/{repo}/releases[?per_page=30&page=1]
        -> 200 [release...], newest (highest id) first; per_page 1..100 (default 30), page >= 1;
        404 {"message": "Not Found"} for an unknown repository.
    GET /repos/{owner}/{repo}/releases/{release_id}
        -> 200 release; 404 for an unknown repository or release.
    GET /repos/{owner}/{repo}/releases/assets/{asset_id}
        -> with "Accept: application/octet-stream": 302 to the asset's object URL; otherwise 200
        the asset object. 404 when unknown.
    A release object: {url, html_url, assets_url, upload_url, tarball_url, zipball_url, id,
    node_id, tag_name, target_commitish, name (null when published without one), body, draft,
    prerelease, created_at, published_at (null for a draft), author: {login, id, type}, assets:
    [asset...]}. An asset object: {url, browser_download_url, id, node_id, name, label, state:
    "uploaded", content_type, size, download_count, created_at, updated_at, uploader}.
    Every API answer carries x-ratelimit-limit (60), x-ratelimit-remaining, x-ratelimit-reset
    (epoch seconds) and x-ratelimit-resource: core headers, like GitHub's for an unauthenticated
    client. When the fake is rate limited (control), API requests get 403 with
    x-ratelimit-remaining: 0 and {"message": "API rate limit exceeded for 127.0.0.1. ..."}.

Downloads (github.com's side)
    GET /{owner}/{repo}/releases/download/{tag}/{name}   (an asset's browser_download_url)
        -> 302 Location: <base>/_objects/{asset_id}?X-Amz-Signature=<random hex>&... (as
        github.com redirects to objects.githubusercontent.com with a signed URL); 404 text
        "Not Found" when unknown. With behaviour redirect_location set, the Location is that
        URL instead; with redirect_loop, the download URL redirects to itself.
    GET /_objects/{asset_id}?...  -> 200 the bytes, Content-Type application/octet-stream,
        exact Content-Length. Never rate limited (object storage is not the API).

Control API for tests (JSON bodies; answers {"ok": true, ...}; bad input -> 400 {"error"})
    POST /_control/release  {"owner", "repo", "tag_name", "name"?: str|null, "body"?: str,
                            "draft"?: bool, "prerelease"?: bool,
                            "assets"?: [{"name", "content_base64", "content_type"?}]}
                            -> {"ok", "id", "assets": [{"id", "name", "browser_download_url",
                            "url"}]}. Creates the repository when new. Ids are increasing
                            integers shared by releases and assets.
    POST /_control/behaviour {"rate_limited"?: bool, "redirect_location"?: str|null,
                            "redirect_loop"?: bool} -> {"ok", "behaviour": {...}}; keys given
                            are changed, others kept.
    GET  /_control/requests -> {"requests": [{"method", "path", "query", "accept"}...]} (every
                            non-control request, in arrival order).
    POST /_control/reset    clears repositories, behaviour and requests.

Command line:
    python3 fake_github.py [--port 0] [--host 127.0.0.1]
prints exactly one line "FAKE_GITHUB_PORT=<port>" once listening and serves until SIGTERM/SIGINT.

In process: g = fake_github.start(port=0); g.port; g.url; ...; g.stop().
"""

import argparse
import base64
import http.server
import json
import re
import secrets
import signal
import socketserver
import sys
import threading
import time
import urllib.parse

DOCS = "https://docs.github.com/rest/releases/releases"
RATE_LIMIT = 60


class State(object):
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with getattr(self, "lock", threading.Lock()):
            self.repos = {}  # (owner, repo) lower-case -> {"owner", "repo", "releases": [..]}
            self.blobs = {}  # asset id -> bytes
            self.next_id = 1000
            self.behaviour = {"rate_limited": False, "redirect_location": None,
                              "redirect_loop": False}
            self.requests = []
            self.remaining = RATE_LIMIT


def _now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeGitHub/1.0"

    def log_message(self, *args):
        pass

    @property
    def state(self):
        return self.server.state

    @property
    def base(self):
        host, port = self.server.server_address[:2]
        return "http://%s:%d" % (host, port)

    def send_body(self, status, body, ctype, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status, obj, headers=None):
        self.send_body(status, json.dumps(obj).encode(), "application/json; charset=utf-8",
                       headers)

    def api_error(self, status, message, headers=None):
        self.send_json(status, {"message": message, "documentation_url": DOCS,
                                "status": str(status)}, headers)

    def rate_headers(self, remaining):
        return {"x-ratelimit-limit": str(RATE_LIMIT), "x-ratelimit-remaining": str(remaining),
                "x-ratelimit-reset": str(int(time.time()) + 3600),
                "x-ratelimit-used": str(RATE_LIMIT - remaining),
                "x-ratelimit-resource": "core"}

    def do_GET(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        return body if isinstance(body, dict) else None

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        if path.startswith("/_control/"):
            return self.control(path[len("/_control/"):])
        if self.command == "POST":
            return self.api_error(404, "Not Found")
        with self.state.lock:
            self.state.requests.append({"method": self.command, "path": path,
                                        "query": url.query,
                                        "accept": self.headers.get("Accept", "")})
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["repos"]:
            return self.api(parts[1:], urllib.parse.parse_qs(url.query))
        if parts[:1] == ["_objects"] and len(parts) == 2:
            return self.object(parts[1])
        if len(parts) == 6 and parts[2:4] == ["releases", "download"]:
            return self.download(*parts[:2], parts[4], parts[5])
        self.send_body(404, b"Not Found", "text/plain")

    # ---- REST API ----------------------------------------------------------------------------

    def api(self, parts, query):
        with self.state.lock:
            if self.state.behaviour["rate_limited"]:
                self.state.remaining = 0
            remaining = self.state.remaining
            if remaining > 0:
                self.state.remaining -= 1
                remaining -= 1
        if self.state.behaviour["rate_limited"]:
            return self.api_error(
                403, "API rate limit exceeded for 127.0.0.1. (But here's the good news: "
                "Authenticated requests get a higher rate limit. Check out the documentation for "
                "more details.)", self.rate_headers(0))
        headers = self.rate_headers(remaining)
        if len(parts) < 3 or parts[2] != "releases":
            return self.api_error(404, "Not Found", headers)
        with self.state.lock:
            repo = self.state.repos.get((parts[0].lower(), parts[1].lower()))
            releases = list(repo["releases"]) if repo else None
        if repo is None:
            return self.api_error(404, "Not Found", headers)
        if len(parts) == 3:
            try:
                per_page = int(query.get("per_page", ["30"])[0])
                page = int(query.get("page", ["1"])[0])
            except ValueError:
                return self.api_error(422, "Validation Failed", headers)
            per_page = max(1, min(per_page, 100))
            page = max(1, page)
            ordered = sorted(releases, key=lambda r: -r["id"])
            return self.send_json(200, ordered[(page - 1) * per_page:page * per_page], headers)
        if len(parts) == 4 and parts[3].isdigit():
            for r in releases:
                if r["id"] == int(parts[3]):
                    return self.send_json(200, r, headers)
            return self.api_error(404, "Not Found", headers)
        if len(parts) == 5 and parts[3] == "assets" and parts[4].isdigit():
            for r in releases:
                for a in r["assets"]:
                    if a["id"] == int(parts[4]):
                        if "application/octet-stream" in self.headers.get("Accept", ""):
                            return self.redirect(self.object_url(a["id"]))
                        return self.send_json(200, a, headers)
            return self.api_error(404, "Not Found", headers)
        return self.api_error(404, "Not Found", headers)

    # ---- downloads ---------------------------------------------------------------------------

    def object_url(self, asset_id):
        return "%s/_objects/%d?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=%s" % (
            self.base, asset_id, secrets.token_hex(16))

    def redirect(self, location):
        self.send_body(302, b"", "text/html; charset=utf-8", {"Location": location})

    def download(self, owner, repo, tag, name):
        with self.state.lock:
            found = self.state.repos.get((owner.lower(), repo.lower()))
            asset = None
            for r in (found or {}).get("releases", []):
                if r["tag_name"] == tag:
                    asset = next((a for a in r["assets"] if a["name"] == name), None)
            behaviour = dict(self.state.behaviour)
        if asset is None:
            return self.send_body(404, b"Not Found", "text/plain")
        if behaviour["redirect_loop"]:
            return self.redirect(self.base + self.path)
        if behaviour["redirect_location"]:
            return self.redirect(behaviour["redirect_location"])
        self.redirect(self.object_url(asset["id"]))

    def object(self, asset_id):
        with self.state.lock:
            blob = self.state.blobs.get(int(asset_id)) if asset_id.isdigit() else None
        if blob is None:
            return self.send_body(404, b"<Error><Code>NoSuchKey</Code></Error>",
                                  "application/xml")
        self.send_body(200, blob, "application/octet-stream")

    # ---- control -----------------------------------------------------------------------------

    def control(self, what):
        if what == "requests" and self.command == "GET":
            with self.state.lock:
                return self.send_json(200, {"requests": list(self.state.requests)})
        if self.command != "POST":
            return self.send_json(405, {"error": "method not allowed"})
        body = self.read_json()
        if body is None:
            return self.send_json(400, {"error": "the body must be a JSON object"})
        if what == "reset":
            self.state.reset()
            return self.send_json(200, {"ok": True})
        if what == "behaviour":
            with self.state.lock:
                for key in ("rate_limited", "redirect_location", "redirect_loop"):
                    if key in body:
                        self.state.behaviour[key] = body[key]
                if not self.state.behaviour["rate_limited"]:
                    self.state.remaining = max(self.state.remaining, 1)
                return self.send_json(200, {"ok": True, "behaviour": dict(self.state.behaviour)})
        if what == "release":
            return self.add_release(body)
        self.send_json(404, {"error": "not found"})

    def add_release(self, body):
        names = ("owner", "repo", "tag_name")
        if not all(isinstance(body.get(k), str) and re.fullmatch(r"[A-Za-z0-9._-]+", body[k])
                   for k in names):
            return self.send_json(400, {"error": "owner, repo and tag_name are required"})
        owner, repo, tag = body["owner"], body["repo"], body["tag_name"]
        api = "%s/repos/%s/%s" % (self.base, owner, repo)
        with self.state.lock:
            entry = self.state.repos.setdefault((owner.lower(), repo.lower()),
                                                {"owner": owner, "repo": repo, "releases": []})
            self.state.next_id += 1
            rid = self.state.next_id
            draft = bool(body.get("draft", False))
            release = {
                "url": "%s/releases/%d" % (api, rid),
                "html_url": "%s/%s/%s/releases/tag/%s" % (self.base, owner, repo, tag),
                "assets_url": "%s/releases/%d/assets" % (api, rid),
                "upload_url": "%s/releases/%d/assets{?name,label}" % (api, rid),
                "tarball_url": "%s/tarball/%s" % (api, tag),
                "zipball_url": "%s/zipball/%s" % (api, tag),
                "id": rid, "node_id": "RE_%d" % rid, "tag_name": tag,
                "target_commitish": "main", "name": body.get("name", tag),
                "body": body.get("body", ""), "draft": draft,
                "prerelease": bool(body.get("prerelease", False)),
                "created_at": _now_iso(), "published_at": None if draft else _now_iso(),
                "author": {"login": owner, "id": 1, "type": "User"},
                "assets": [],
            }
            out = []
            for a in body.get("assets") or []:
                try:
                    data = base64.b64decode(a["content_base64"], validate=True)
                    name = a["name"]
                except (KeyError, TypeError, ValueError):
                    return self.send_json(400, {"error": "each asset needs name and "
                                                         "content_base64"})
                self.state.next_id += 1
                aid = self.state.next_id
                self.state.blobs[aid] = data
                asset = {
                    "url": "%s/releases/assets/%d" % (api, aid),
                    "browser_download_url": "%s/%s/%s/releases/download/%s/%s" % (
                        self.base, owner, repo, tag, urllib.parse.quote(name)),
                    "id": aid, "node_id": "RA_%d" % aid, "name": name, "label": "",
                    "state": "uploaded",
                    "content_type": a.get("content_type", "application/octet-stream"),
                    "size": len(data), "download_count": 0,
                    "created_at": _now_iso(), "updated_at": _now_iso(),
                    "uploader": {"login": owner, "id": 1, "type": "User"},
                }
                release["assets"].append(asset)
                out.append({k: asset[k] for k in ("id", "name", "browser_download_url", "url")})
            entry["releases"].append(release)
        self.send_json(200, {"ok": True, "id": rid, "assets": out})


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, state):
        super().__init__(address, _Handler)
        self.state = state


class Running(object):
    def __init__(self, server, thread):
        self.server = server
        self.thread = thread
        self.port = server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def start(port=0, host="127.0.0.1"):
    server = _Server((host, port), State())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    return Running(server, thread)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake GitHub releases API for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args(argv)
    server = _Server((args.host, args.port), State())

    def on_signal(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write("FAKE_GITHUB_PORT=%d\n" % server.server_address[1])
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
