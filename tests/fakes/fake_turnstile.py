#!/usr/bin/env python3
"""Fake Cloudflare Turnstile siteverify for Switchboard end-to-end tests (Python 3 standard
library only).

Built from Cloudflare's documentation "Validate the token" (developers.cloudflare.com/turnstile/
get-started/server-side-validation/) and its testing page (.../troubleshooting/testing/):

POST /turnstile/v0/siteverify
    Body: application/x-www-form-urlencoded, multipart/form-data is not modelled, or
    application/json, with
        secret          (required) the widget's secret key
        response        (required) the token the widget produced; at most 2048 characters
        remoteip        (optional) the visitor's IP address
        idempotency_key (optional) a UUID: the same token may be checked again with the same key
    Answer: always HTTP 200 with JSON
        success  {"success": true, "challenge_ts": ISO-8601, "hostname", "error-codes": [],
                  "action", "cdata", "metadata": {"ephemeral_id"}}
        failure  {"success": false, "error-codes": [...], "messages": []}
    error-codes: missing-input-secret, invalid-input-secret, missing-input-response,
        invalid-input-response, bad-request (a body that cannot be read), timeout-or-duplicate
        (a token older than 300 s, or one already checked), internal-error.
    A token works once (unless the same idempotency_key is given again) and for 300 seconds.
    Other methods -> 405 {"success": false, "error-codes": ["bad-request"]} (the fake's choice).
    Cloudflare's test secret keys behave as documented whatever the token:
        1x0000000000000000000000000000000AA  always passes
        2x0000000000000000000000000000000AA  always fails (invalid-input-response)
        3x0000000000000000000000000000000AA  yields "token already spent" (timeout-or-duplicate)
    and the dummy token XXXX.DUMMY.TOKEN.XXXX (what test site keys produce) is accepted only by
    them: a production secret refuses it (invalid-input-response).

Control API (no auth; JSON; errors {"error"} 400/404)
    POST /_control/config {secret?, token_ttl?}  the secret key the fake accepts
    POST /_control/token  {hostname?, action?, cdata?, age?} -> {token}: a token as a browser gets
                          it after passing the challenge (age: seconds it is already old)
    POST /_control/fail   {status?: 500, times?: 1}: the next calls answer that HTTP status
    GET  /_control/calls  -> {calls: [{content_type, secret, response, remoteip, success,
                          error_codes}]}
    POST /_control/reset  -> forget tokens, calls and failures (the config stays)

Command line: python3 fake_turnstile.py [--port 0] [--secret S] prints one line
"FAKE_TURNSTILE_PORT=<port>" once listening and serves until SIGTERM/SIGINT.
"""

import argparse
import datetime
import http.server
import json
import os
import signal
import sys
import threading
import time
import urllib.parse

DEFAULT_SECRET = "0x4AAAAAAAfakeTurnstileSecretKey"
PASS_SECRET = "1x0000000000000000000000000000000AA"
FAIL_SECRET = "2x0000000000000000000000000000000AA"
SPENT_SECRET = "3x0000000000000000000000000000000AA"
DUMMY_TOKEN = "XXXX.DUMMY.TOKEN.XXXX"
MAX_BODY = 64 * 1024
MAX_RESPONSE = 2048


def _jbytes(obj):
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def _iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class FakeTurnstile(object):
    def __init__(self, host="127.0.0.1", port=0, secret=DEFAULT_SECRET):
        self.host, self.port = host, port
        self.secret = secret
        self.token_ttl = 300
        self.lock = threading.Lock()
        self.tokens = {}   # token -> {issued, hostname, action, cdata, spent, key}
        self.calls = []
        self.failures = []  # statuses for the next calls
        self._server = None

    # Control

    def control(self, method, path, raw):
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
        except ValueError:
            return 400, {"error": "malformed JSON"}
        if not isinstance(body, dict):
            return 400, {"error": "the body is an object"}
        with self.lock:
            if method == "POST" and path == "/_control/config":
                if "secret" in body:
                    self.secret = str(body["secret"])
                if "token_ttl" in body:
                    self.token_ttl = int(body["token_ttl"])
                return 200, {}
            if method == "POST" and path == "/_control/token":
                token = "0." + os.urandom(48).hex() + "." + os.urandom(8).hex()
                self.tokens[token] = {"issued": time.time() - float(body.get("age", 0)),
                                      "hostname": body.get("hostname", "example.com"),
                                      "action": body.get("action", ""),
                                      "cdata": body.get("cdata", ""), "spent": False,
                                      "key": None}
                return 200, {"token": token}
            if method == "POST" and path == "/_control/fail":
                self.failures.extend([int(body.get("status", 500))] * int(body.get("times", 1)))
                return 200, {}
            if method == "GET" and path == "/_control/calls":
                return 200, {"calls": list(self.calls)}
            if method == "POST" and path == "/_control/reset":
                self.tokens.clear()
                self.calls = []
                self.failures = []
                return 200, {}
        return 404, {"error": "no such control call"}

    # siteverify

    @staticmethod
    def _fields(content_type, raw):
        """-> dict of the request's fields, or None when the body cannot be read."""
        ctype = (content_type or "").split(";")[0].strip().lower()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if ctype == "application/json":
            try:
                obj = json.loads(text) if text else {}
            except ValueError:
                return None
            if not isinstance(obj, dict):
                return None
            return {k: v for k, v in obj.items() if isinstance(v, str)}
        if ctype in ("application/x-www-form-urlencoded", ""):
            return {k: v[0] for k, v in urllib.parse.parse_qs(text, keep_blank_values=True)
                    .items()}
        return None

    def siteverify(self, content_type, raw):
        with self.lock:
            if self.failures:
                return self.failures.pop(0), {"success": False, "error-codes": ["internal-error"]}
            fields = self._fields(content_type, raw)
            result = self._verify(fields)
            self.calls.append({"content_type": content_type,
                               "secret": (fields or {}).get("secret"),
                               "response": (fields or {}).get("response"),
                               "remoteip": (fields or {}).get("remoteip"),
                               "success": result["success"],
                               "error_codes": result["error-codes"]})
            return 200, result

    def _verify(self, fields):
        def fail(*codes):
            return {"success": False, "error-codes": list(codes), "messages": []}
        if fields is None:
            return fail("bad-request")
        secret, response = fields.get("secret", ""), fields.get("response", "")
        codes = []
        if not secret:
            codes.append("missing-input-secret")
        elif secret not in (self.secret, PASS_SECRET, FAIL_SECRET, SPENT_SECRET):
            codes.append("invalid-input-secret")
        if not response:
            codes.append("missing-input-response")
        elif len(response) > MAX_RESPONSE:
            codes.append("invalid-input-response")
        if codes:
            return fail(*codes)
        now = time.time()
        if secret == FAIL_SECRET:
            return fail("invalid-input-response")
        if secret == SPENT_SECRET:
            return fail("timeout-or-duplicate")
        if secret == PASS_SECRET:
            return self._passed(now, "example.com", "", "")
        info = self.tokens.get(response)
        if info is None:
            return fail("invalid-input-response")  # the dummy token included
        key = fields.get("idempotency_key")
        if now - info["issued"] > self.token_ttl:
            return fail("timeout-or-duplicate")
        if info["spent"] and not (key and key == info["key"]):
            return fail("timeout-or-duplicate")
        info["spent"], info["key"] = True, key
        return self._passed(info["issued"], info["hostname"], info["action"], info["cdata"])

    @staticmethod
    def _passed(issued, hostname, action, cdata):
        return {"success": True, "challenge_ts": _iso(issued), "hostname": hostname,
                "error-codes": [], "action": action, "cdata": cdata,
                "metadata": {"ephemeral_id": "x:" + os.urandom(10).hex()}}

    # Serving

    def bind(self):
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        return self.port

    def start(self):
        port = self.bind()
        threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True).start()
        return port

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeTurnstile/1.0"
    timeout = 60

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        fake = self.server.fake
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            return self._send(413, {"success": False, "error-codes": ["bad-request"]})
        raw = self.rfile.read(n) if n else b""
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/_control/"):
            return self._send(*fake.control(self.command, path, raw))
        if path == "/turnstile/v0/siteverify":
            if self.command != "POST":
                return self._send(405, {"success": False, "error-codes": ["bad-request"]})
            return self._send(*fake.siteverify(self.headers.get("Content-Type"), raw))
        self._send(404, {"error": "not found"})

    do_POST = do_GET

    def _send(self, status, obj):
        body = _jbytes(obj)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, fake):
        self.fake = fake
        http.server.ThreadingHTTPServer.__init__(self, addr, _Handler)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake Cloudflare Turnstile siteverify for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--secret", default=DEFAULT_SECRET)
    args = ap.parse_args(argv)
    fake = FakeTurnstile(args.host, args.port, args.secret)
    port = fake.bind()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    threading.Thread(target=fake._server.serve_forever, args=(0.1,), daemon=True).start()
    sys.stdout.write("FAKE_TURNSTILE_PORT=%d\n" % port)
    sys.stdout.flush()
    while not done.wait(0.5):
        pass
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
