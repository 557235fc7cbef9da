"""Clients of the test fakes in tests/fakes/ (each a child process speaking its service's
documented wire protocol) and a signed callback receiver for the `webhook` adapter.

    llm = FakeProvider()                 # tests/fakes/fake_llm.py
    tg = FakeTelegram()                  # tests/fakes/fake_telegram.py
    slack = FakeSlack()                  # tests/fakes/fake_slack.py
    line = FakeLine()                    # tests/fakes/fake_line.py
    agents = FakeAgents()                # tests/fakes/fake_agents.py (Dify, n8n)
    emb = FakeEmbeddings()               # tests/fakes/fake_embeddings.py (OpenAI embeddings)
    cb = CallbackReceiver(secret)        # where a webhook bot POSTs its replies
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

FAKES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes")


class _FakeProcess:
    script = None
    banner = None

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, self.script),
                                      "--port", "0"], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith(self.banner + "="), line
        self.port = int(line.strip().split("=", 1)[1])
        self.base = "http://127.0.0.1:%d" % self.port

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()


class FakeProvider(_FakeProcess):
    """tests/fakes/fake_llm.py: OpenAI/Anthropic/Ollama; replies "echo: <last user text>"."""
    script = "fake_llm.py"
    banner = "FAKE_LLM_PORT"

    def reset(self):
        self.control("POST", "/_control/reset", {})

    def script_next(self, **spec):
        self.control("POST", "/_control/script", spec)

    def requests(self):
        return self.control("GET", "/_control/requests")

    def chat_requests(self):
        return [r for r in self.requests() if r["path"].endswith("/chat/completions")]


class FakeAgents(_FakeProcess):
    """tests/fakes/fake_hosted_agents.py: Dify's service API at /v1, n8n webhooks at /webhook/...,
    and the hosted agent services (Langflow, ...) of fake_hosted_agents.py's docstring."""
    script = "fake_hosted_agents.py"
    banner = "FAKE_AGENTS_PORT"

    def requests(self):
        return self.control("GET", "/_control/requests")


class FakeEmbeddings(_FakeProcess):
    """tests/fakes/fake_embeddings.py: OpenAI /v1/embeddings with deterministic word-hash vectors
    (models embed-test, and embed-test-random whose vectors never match another text's)."""
    script = "fake_embeddings.py"
    banner = "FAKE_EMBEDDINGS_PORT"
    api_key = "sk-embed-test"

    @property
    def base_url(self):
        return self.base + "/v1"

    def calls(self):
        """{count, ok, failed, batch_sizes, inputs_total, max_in_flight, calls: [...]}"""
        return self.control("GET", "/_control/calls")

    def fail(self, **spec):
        """status, times, marker, retry_after, quota, close (see fake_embeddings.py)."""
        return self.control("POST", "/_control/fail", spec)

    def configure(self, **fields):
        """api_key, models, mode ("semantic"|"random"), latency_ms, default_dimensions, ..."""
        if "api_key" in fields:
            self.api_key = fields["api_key"]
        return self.control("POST", "/_control/config", fields)

    def vector(self, text, model=None, dimensions=None):
        body = {"input": text}
        if model:
            body["model"] = model
        if dimensions:
            body["dimensions"] = dimensions
        return self.control("POST", "/_control/vector", body)["embedding"]

    def reset(self):
        self.control("POST", "/_control/reset", {})
        self.__dict__.pop("api_key", None)  # back to the start-up key, like the fake


class FakeTelegram(_FakeProcess):
    """tests/fakes/fake_telegram.py: the Bot API at /bot<token>/<method>."""
    script = "fake_telegram.py"
    banner = "FAKE_TELEGRAM_PORT"

    def push(self, token, update):
        return self.control("POST", "/_control/updates", {"token": token, "update": update})

    def sent(self, token):
        return self.control("GET", "/_control/sent?token=" + token)["sent"]

    def stats(self, token):
        return self.control("GET", "/_control/stats?token=" + token)

    def reset(self):
        self.control("POST", "/_control/reset", {})


class FakeSlack(_FakeProcess):
    """tests/fakes/fake_slack.py: the Web API at /api/<method>; signs and delivers events."""
    script = "fake_slack.py"
    banner = "FAKE_SLACK_PORT"

    def sent(self):
        return self.control("GET", "/_control/sent")["sent"]

    def deliveries(self, event_id=None):
        path = "/_control/deliveries" + ("?event_id=" + event_id if event_id else "")
        return self.control("GET", path)["deliveries"]

    def reset(self):
        self.control("POST", "/_control/reset", {})


class FakeLine(_FakeProcess):
    """tests/fakes/fake_line.py: the Messaging API at /v2/bot/...; signs and delivers events."""
    script = "fake_line.py"
    banner = "FAKE_LINE_PORT"

    def sent(self):
        return self.control("GET", "/_control/sent")["sent"]

    def reset(self):
        self.control("POST", "/_control/reset", {})


def slack_sign(secret, timestamp, body):
    """X-Slack-Signature of `body` (bytes) sent at `timestamp`."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def line_sign(secret, body):
    """X-Line-Signature of `body` (bytes)."""
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def sign(secret, timestamp, body):
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def wait_until(predicate, timeout=10.0, interval=0.05):
    """Polls `predicate` until it returns something truthy; returns it, or None at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


class CallbackReceiver:
    """An integrator's callback endpoint: records each POST and whether its signature verified."""

    def __init__(self, secret, status=200):
        self.secret = secret
        self.status = status
        self.received = []  # [{"body": dict, "verified": bool}]
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                ts = self.headers.get("X-Switchboard-Timestamp", "")
                sig = self.headers.get("X-Switchboard-Signature", "")
                verified = bool(ts) and hmac.compare_digest(sign(outer.secret, ts, raw), sig)
                with outer.lock:
                    outer.received.append({"body": json.loads(raw), "verified": verified})
                    status = outer.status
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/callback" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def messages(self):
        with self.lock:
            return list(self.received)

    def wait_for(self, count, timeout=10.0):
        got = wait_until(lambda: len(self.messages()) >= count, timeout)
        return self.messages() if got else self.messages()

    def clear(self):
        with self.lock:
            self.received.clear()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
