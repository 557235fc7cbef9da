#!/usr/bin/env python3
"""A receiver of Switchboard's outgoing webhooks, for tests (Python 3 standard library only).

It plays the operator's endpoint as docs/webhooks.md describes it: every POST is recorded with its
headers and JSON body, and its signature is checked when the secret is known
(X-Switchboard-Signature = "sha256=" + hex HMAC-SHA256(secret, X-Switchboard-Timestamp + "." +
body)). What it answers is set through the control API:

    POST /_control/config {"secret": "whsec_...", "fail": 2, "status": 500, "skip_pipeline": true,
                           "hang_seconds": 30, "answer": "raw text"}
        fail: how many of the next pushes answer `status` (default 500) before one succeeds
        skip_pipeline: succeed with {"status":"ok","skip_pipeline":true} (LangBot's takeover)
        hang_seconds: hold every push that long before answering (a receiver that hangs)
    GET  /_control/pushes    [{path, headers, body, signature_ok, answered}]
    POST /_control/reset     forget pushes and config

Command line: python3 fake_webhook_receiver.py [--port 0] prints "FAKE_WEBHOOK_PORT=<port>".
In process: fake = FakeWebhookReceiver(); fake.start(); fake.base; fake.pushes(); fake.stop()
"""

import argparse
import hashlib
import hmac
import http.server
import json
import sys
import threading
import time


def signature(secret, timestamp, body):
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


class State(object):
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.config = {}
            self.pushes = []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj):
        body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        state = self.server.state
        if self.path == "/_control/pushes":
            with state.lock:
                return self.reply(200, list(state.pushes))
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        state = self.server.state
        raw = self.read_body()
        if self.path == "/_control/reset":
            state.reset()
            return self.reply(200, {"ok": True})
        if self.path == "/_control/config":
            with state.lock:
                state.config.update(json.loads(raw or b"{}"))
            return self.reply(200, {"ok": True})
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            config = dict(state.config)
        secret = config.get("secret")
        signed = None
        if secret:
            expected = signature(secret, headers.get("x-switchboard-timestamp", ""), raw)
            signed = hmac.compare_digest(expected, headers.get("x-switchboard-signature", ""))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        record = {"path": self.path, "headers": headers, "body": body, "signature_ok": signed,
                  "answered": None, "received_at": time.time()}
        with state.lock:
            state.pushes.append(record)
        if config.get("hang_seconds"):
            time.sleep(float(config["hang_seconds"]))
        with state.lock:
            failing = state.config.get("fail", 0)
            if failing:
                state.config["fail"] = failing - 1
        if failing:
            status = int(config.get("status", 500))
            record["answered"] = status
            return self.reply(status, {"error": "failing on purpose"})
        record["answered"] = 200
        if "answer" in config:
            return self.reply(200, config["answer"].encode())
        answer = {"status": "ok", "skip_pipeline": bool(config.get("skip_pipeline"))}
        self.reply(200, answer)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address):
        super().__init__(address, Handler)
        self.state = State()


class FakeWebhookReceiver(object):
    def __init__(self, host="127.0.0.1", port=0):
        self.server = Server((host, port))
        self.thread = None

    @property
    def port(self):
        return self.server.server_address[1]

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self.port

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def configure(self, **config):
        with self.server.state.lock:
            self.server.state.config.update(config)

    def reset(self):
        self.server.state.reset()

    def pushes(self):
        with self.server.state.lock:
            return [dict(p) for p in self.server.state.pushes]

    def wait_for(self, count, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pushes = self.pushes()
            if len(pushes) >= count:
                return pushes
            time.sleep(0.02)
        raise AssertionError("expected %d pushes, got %r" % (count, self.pushes()))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake receiver of Switchboard's outgoing webhooks")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    fake = FakeWebhookReceiver(port=args.port)
    print("FAKE_WEBHOOK_PORT=%d" % fake.port, flush=True)
    try:
        fake.server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
