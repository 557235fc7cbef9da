#!/usr/bin/env python3
"""Fake external-runner services for Switchboard tests (Python 3 standard library only).

One loopback HTTP/1.1 server stands in for the two services of /work/shared/protocols/llm.md
section 5 (see also section 6, "What a faithful fake must do"):

    Dify service API   base http://127.0.0.1:PORT/v1
        POST /v1/chat-messages   chatbot and agent apps, blocking and streaming (SSE)
        POST /v1/workflows/run   workflow apps, blocking
      The app is chosen by the key, as Dify keys are per app: "Bearer app-chat-*",
      "Bearer app-agent-*", "Bearer app-workflow-*"; any other key is refused (401). Chat answers
      are "echo(<turn>): <query>" where <turn> counts the conversation's messages, plus
      " [images: <url>,...]" when files were sent. Workflow outputs are {"text": "echo: <query>"}.

    n8n webhooks       http://127.0.0.1:PORT/webhook/<auth>/<mode>   (POST only)
      <auth>: none | basic (alice / "open sesame") | jwt (HS256, secret "n8n-jwt-secret",
              verified) | header ("X-N8n-Token: tok-123")
      <mode>: json      last node, firstEntryJson: {"response": "echo: <chatInput>"}
              array     last node, allEntries: [{"response": ...}, {"response": "second"}]
              text      Respond-to-Webhook with text/plain "echo: <chatInput>"
              output    {"output": "echo: <chatInput>"} (a workflow with another key)
              immediate {"message": "Workflow was started"}
              stream    NDJSON begin, item x3, end (Content-Type application/json)
              ndjson    the same with Content-Type application/x-ndjson
              error     500 {"code":0,"message":"There was a problem executing the workflow"}
      Anything else: 404 "The requested webhook ... is not registered."

Command line:
    python3 fake_agents.py [--port 0]
prints exactly one line "FAKE_AGENTS_PORT=<port>" once listening and serves until SIGTERM.

Control endpoints (never recorded):
    POST /_control/script    {"path", "times"?=1, "status"?, "body"? (JSON value or string),
                              "content_type"?, "delay"? (seconds before answering),
                              "events"? (list of raw SSE/NDJSON strings, streamed chunked)}
    GET  /_control/requests  recorded [{method, path, query, headers (lower-case), body}]
    POST /_control/reset     forget scripts, records and conversations
"""

import argparse
import base64
import collections
import hashlib
import hmac
import http.server
import json
import signal
import socket
import sys
import threading
import time
import urllib.parse
import uuid

BASIC_USER = "alice"
BASIC_PASSWORD = "open sesame"
JWT_SECRET = "n8n-jwt-secret"
HEADER_NAME = "x-n8n-token"
HEADER_VALUE = "tok-123"
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18, "latency": 0.1}


def _dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _split3(text):
    n = len(text)
    if n < 3:
        return [text]
    return [text[:n // 3], text[n // 3:2 * n // 3], text[2 * n // 3:]]


class Reply(object):
    def __init__(self, status=200, body=b"", content_type="application/json", headers=None,
                 events=None, delay=0.0):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = list(headers or [])
        self.events = events  # list of bytes, sent chunked with a flush each
        self.delay = delay


def json_reply(status, obj, headers=None):
    return Reply(status, _dumps(obj).encode("utf-8"), headers=headers)


def text_reply(status, text, headers=None):
    return Reply(status, text.encode("utf-8"), "text/plain; charset=utf-8", headers)


def dify_error(status, code, message):
    return json_reply(status, {"status": status, "code": code, "message": message})


def sse(obj):
    return ("data: %s\n\n" % _dumps(obj)).encode("utf-8")


def ndjson(obj):
    return (_dumps(obj) + "\n").encode("utf-8")


def _b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_hs256(token, secret):
    """Returns None when valid, else the error n8n's jsonwebtoken would report."""
    parts = token.split(".")
    if len(parts) != 3:
        return "jwt malformed"
    try:
        header = json.loads(_b64url_decode(parts[0]))
        claims = json.loads(_b64url_decode(parts[1]))
        signature = _b64url_decode(parts[2])
    except (ValueError, TypeError):
        return "jwt malformed"
    if header.get("alg") != "HS256":
        return "invalid algorithm"
    expected = hmac.new(secret.encode(), (parts[0] + "." + parts[1]).encode(),
                        hashlib.sha256).digest()
    if not hmac.compare_digest(expected, signature):
        return "invalid signature"
    now = time.time()
    if not isinstance(claims.get("exp"), int) or claims["exp"] <= now:
        return "jwt expired"
    if not isinstance(claims.get("iat"), int) or claims["exp"] - claims["iat"] != 3600:
        return "unexpected claims"
    if abs(claims["iat"] - now) > 60 or claims.get("sub") != "n8n-webhook":
        return "unexpected claims"
    return None


class Fake(object):
    def __init__(self):
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.records = []
        self.scripts = collections.defaultdict(collections.deque)
        self.conversations = {}  # id -> {"user", "turns"}

    def reset(self):
        with self.lock:
            self.records = []
            self.scripts.clear()
            self.conversations = {}

    # -- control ------------------------------------------------------------------------------
    def control(self, method, path, body):
        if path == "/_control/requests" and method == "GET":
            with self.lock:
                return json_reply(200, list(self.records))
        if path == "/_control/reset" and method == "POST":
            self.reset()
            return json_reply(200, {"ok": True})
        if path == "/_control/script" and method == "POST":
            try:
                spec = json.loads(body)
                assert isinstance(spec, dict) and isinstance(spec.get("path"), str)
            except (ValueError, AssertionError):
                return json_reply(400, {"error": "script must be an object with a path"})
            spec.setdefault("times", 1)
            with self.lock:
                self.scripts[spec["path"]].append(spec)
            return json_reply(200, {"ok": True})
        return json_reply(404, {"error": "unknown control endpoint"})

    def pop_script(self, path):
        with self.lock:
            queue = self.scripts.get(path)
            if not queue:
                return None
            spec = queue[0]
            spec["times"] -= 1
            if spec["times"] <= 0:
                queue.popleft()
            return spec

    @staticmethod
    def scripted(spec):
        if spec.get("events") is not None:
            return Reply(spec.get("status", 200), content_type=spec.get(
                "content_type", "text/event-stream"), events=[
                    e.encode("utf-8") for e in spec["events"]], delay=spec.get("delay", 0))
        body = spec.get("body", "")
        if isinstance(body, str):
            raw = body.encode("utf-8")
            ctype = spec.get("content_type", "text/plain; charset=utf-8")
        else:
            raw = _dumps(body).encode("utf-8")
            ctype = spec.get("content_type", "application/json")
        return Reply(spec.get("status", 200), raw, ctype, delay=spec.get("delay", 0))

    # -- routing ------------------------------------------------------------------------------
    def route(self, method, path, headers, raw, query=None):
        if path.startswith("/v1/"):
            return self.dify(method, path[3:], headers, raw)
        if path.startswith("/webhook/"):
            return self.n8n(method, path, headers, raw)
        return json_reply(404, {"error": "not found"})

    # -- Dify ---------------------------------------------------------------------------------
    def dify(self, method, route, headers, raw):
        auth = headers.get("authorization", "")
        key = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
        app = None
        for kind in ("chat", "agent", "workflow"):
            if key.startswith("app-%s-" % kind):
                app = kind
        if app is None:
            return dify_error(401, "unauthorized", "Access token is invalid")
        if method != "POST" or route not in ("/chat-messages", "/workflows/run"):
            return dify_error(404, "not_found", "The requested URL was not found on the server.")
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            return dify_error(400, "invalid_param", "Invalid JSON body.")
        if not isinstance(body, dict):
            return dify_error(400, "invalid_param", "Invalid JSON body.")
        if not isinstance(body.get("inputs"), dict):
            return dify_error(400, "invalid_param", "inputs is required in input form")
        if not isinstance(body.get("user"), str) or not body["user"]:
            return dify_error(400, "invalid_param", "user is required")
        mode = body.get("response_mode", "blocking")
        if mode not in ("blocking", "streaming"):
            return dify_error(400, "invalid_param", "response_mode must be blocking or streaming")
        files = body.get("files", [])
        urls = []
        if not isinstance(files, list):
            return dify_error(400, "invalid_param", "files must be a list")
        for f in files:
            if (not isinstance(f, dict) or f.get("type") != "image"
                    or f.get("transfer_method") != "remote_url" or not f.get("url")):
                return dify_error(400, "invalid_param", "invalid file")
            urls.append(f["url"])
        if route == "/workflows/run":
            if app != "workflow":
                return dify_error(400, "not_workflow_app", "Please check if your app mode "
                                  "matches the right API route.")
            return self.dify_workflow(body)
        if app == "workflow":
            return dify_error(400, "not_chat_app",
                              "Please check if your app mode matches the right API route.")
        if not isinstance(body.get("query"), str):
            return dify_error(400, "invalid_param", "query is required")
        if app == "agent" and mode == "blocking":
            return dify_error(400, "invalid_param", "Agent Chat App does not support blocking mode")
        conversation_id = body.get("conversation_id") or ""
        with self.lock:
            if conversation_id:
                conv = self.conversations.get(conversation_id)
                if conv is None or conv["user"] != body["user"]:
                    return dify_error(404, "not_found", "Conversation Not Exists.")
            else:
                conversation_id = str(uuid.uuid4())
                conv = self.conversations[conversation_id] = {"user": body["user"], "turns": 0}
            conv["turns"] += 1
            turn = conv["turns"]
        answer = "echo(%d): %s" % (turn, body["query"])
        if urls:
            answer += " [images: %s]" % ",".join(urls)
        message_id = str(uuid.uuid4())
        common = {"conversation_id": conversation_id, "message_id": message_id,
                  "created_at": int(time.time()), "task_id": str(uuid.uuid4())}
        if mode == "blocking":
            reply = dict(common, event="message", id=message_id, mode="chat", answer=answer,
                         metadata={"usage": USAGE, "retriever_resources": []})
            return json_reply(200, reply)
        events = []
        if app == "agent":
            events.append(sse(dict(common, event="agent_thought", id=str(uuid.uuid4()),
                                   position=1, thought="", tool="", tool_input="",
                                   observation="", message_files=[])))
        events.append(b"event: ping\n\n")
        name = "agent_message" if app == "agent" else "message"
        for piece in _split3(answer):
            events.append(sse(dict(common, event=name, id=message_id, answer=piece)))
        events.append(sse(dict(common, event="message_end", id=message_id,
                               metadata={"usage": USAGE, "retriever_resources": []})))
        return Reply(200, content_type="text/event-stream", events=events)

    def dify_workflow(self, body):
        query = body["inputs"].get("query", "")
        run_id = str(uuid.uuid4())
        return json_reply(200, {
            "task_id": str(uuid.uuid4()), "workflow_run_id": run_id,
            "data": {"id": run_id, "workflow_id": str(uuid.uuid4()), "status": "succeeded",
                     "outputs": {"text": "echo: %s" % query}, "error": None, "elapsed_time": 0.2,
                     "total_tokens": 42, "total_steps": 3, "created_at": int(time.time()),
                     "finished_at": int(time.time())}})

    # -- n8n ----------------------------------------------------------------------------------
    def n8n(self, method, path, headers, raw):
        parts = path.split("/")  # "", "webhook", auth, mode
        modes = ("json", "array", "text", "output", "immediate", "stream", "ndjson", "error")
        if (method != "POST" or len(parts) != 4 or parts[2] not in ("none", "basic", "jwt", "header")
                or parts[3] not in modes):
            return json_reply(404, {"code": 404, "message": "The requested webhook \"%s %s\" is "
                                    "not registered." % (method, path[len("/webhook/"):]),
                                    "hint": "Click the 'Execute workflow' button on the canvas, "
                                    "then try again."})
        refusal = self.n8n_auth(parts[2], headers)
        if refusal is not None:
            return refusal
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        text = body.get("chatInput", "") if isinstance(body, dict) else ""
        mode = parts[3]
        answer = "echo: %s" % text
        if mode == "json":
            return json_reply(200, {"response": answer})
        if mode == "array":
            return json_reply(200, [{"response": answer}, {"response": "second"}])
        if mode == "text":
            return text_reply(200, answer)
        if mode == "output":
            return json_reply(200, {"output": answer})
        if mode == "immediate":
            return json_reply(200, {"message": "Workflow was started"})
        if mode == "error":
            return json_reply(500, {"code": 0,
                                    "message": "There was a problem executing the workflow"})
        meta = {"nodeId": "n1", "nodeName": "AI Agent", "runIndex": 0, "itemIndex": 0}
        lines = [ndjson({"type": "begin", "metadata": dict(meta, timestamp=int(time.time()))})]
        for piece in _split3(answer):
            lines.append(ndjson({"type": "item", "content": piece,
                                 "metadata": dict(meta, timestamp=int(time.time()))}))
        lines.append(ndjson({"type": "end", "metadata": dict(meta, timestamp=int(time.time()))}))
        ctype = "application/json; charset=utf-8" if mode == "stream" else "application/x-ndjson"
        return Reply(200, content_type=ctype, events=lines)

    @staticmethod
    def n8n_auth(kind, headers):
        challenge = [("WWW-Authenticate", 'Basic realm="Webhook"')]
        auth = headers.get("authorization")
        if kind == "basic":
            if not auth:
                return text_reply(401, "Authorization is required!", challenge)
            expected = "Basic " + base64.b64encode(
                ("%s:%s" % (BASIC_USER, BASIC_PASSWORD)).encode()).decode()
            if auth != expected:
                return text_reply(403, "Authorization data is wrong!", challenge)
        elif kind == "header":
            if headers.get(HEADER_NAME) != HEADER_VALUE:
                return text_reply(403, "Authorization data is wrong!", challenge)
        elif kind == "jwt":
            if not auth or not auth.startswith("Bearer "):
                return text_reply(401, "No token provided", challenge)
            error = verify_hs256(auth[len("Bearer "):], JWT_SECRET)
            if error is not None:
                return text_reply(403, error, challenge)
        return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeAgents/1.0"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        http.server.BaseHTTPRequestHandler.setup(self)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        fake = self.server.fake
        try:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            parts = urllib.parse.urlsplit(self.path)
            path = parts.path
            if path.startswith("/_control/"):
                return self.send(fake.control(self.command, path, raw))
            headers = {}
            for k, v in self.headers.items():
                headers[k.lower()] = v
            try:
                recorded_body = json.loads(raw) if raw else None
            except ValueError:
                recorded_body = raw.decode("utf-8", "replace")
            with fake.lock:
                fake.records.append({"method": self.command, "path": path,
                                     "query": dict(urllib.parse.parse_qsl(parts.query)),
                                     "headers": headers, "body": recorded_body})
            spec = fake.pop_script(path)
            query = dict(urllib.parse.parse_qsl(parts.query))
            reply = fake.scripted(spec) if spec else fake.route(self.command, path, headers, raw,
                                                                query)
            self.send(reply)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            self.close_connection = True

    do_POST = do_PUT = do_DELETE = do_GET

    def send(self, r):
        stop = self.server.fake.stop
        if r.delay > 0 and stop.wait(r.delay):
            self.close_connection = True
            return
        self.send_response(r.status)
        self.send_header("Content-Type", r.content_type)
        for k, v in r.headers:
            self.send_header(k, v)
        if r.events is None:
            self.send_header("Content-Length", str(len(r.body)))
            self.end_headers()
            self.wfile.write(r.body)
            self.wfile.flush()
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in r.events:
            self.wfile.write(b"%x\r\n" % len(event) + event + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass


def main(argv=None, fake_class=Fake):
    ap = argparse.ArgumentParser(description="Fake Dify and n8n server for tests")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    server = Server(("127.0.0.1", args.port), Handler)
    server.fake = fake_class()

    def on_signal(signum, frame):
        server.fake.stop.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write("FAKE_AGENTS_PORT=%d\n" % server.server_address[1])
    sys.stdout.flush()
    server.serve_forever(poll_interval=0.1)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
