#!/usr/bin/env python3
"""Fake MCP server for Switchboard tests (Python 3 standard library only), after the MCP
specification (revisions 2025-06-18 and 2025-03-26, basic/lifecycle, basic/transports,
server/tools; the HTTP+SSE transport of 2024-11-05 for mode "sse").

Transports:
    stdio   python3 fake_mcp.py --stdio            newline-delimited JSON-RPC on stdin/stdout;
            each tools/call runs in its own thread (answers may come out of order, as the spec
            allows); it logs to stderr ("fake-mcp: started", "fake-mcp: client answered <id>:
            <json>", and with --log-env NAME "fake-mcp: NAME=<value>") and nothing else there
    http    python3 fake_mcp.py --port 0           Streamable HTTP at /mcp: POST a message with
            Accept: application/json, text/event-stream; requests are answered with one JSON body
            (or, with --sse-answers / the control flag, an SSE stream that carries a
            notifications/message first); notifications and responses get 202; the initialize
            answer sets Mcp-Session-Id, which later requests must carry (400 without, 404 when
            unknown); DELETE /mcp ends the session; GET /mcp is 405 (no standalone stream).
    sse     the same process, GET /sse: an SSE stream whose first event is `endpoint` with the
            URL to POST to (/messages?session_id=..., or --endpoint-prefix); each POST gets 202
            and its answer is sent as a `message` event on the stream; a comment every 15 s.
Prints "FAKE_MCP_PORT=<port>" once listening (HTTP modes).

--ping-client (stdio, sse): after notifications/initialized the server sends the client two
requests of its own, `ping` (id "s1") and `sampling/createMessage` (id "s2"), and records the
answers (stdio: on stderr; sse: the POSTs in /_control/requests).

Tools: echo {text} -> "echo: <text>"; add {a, b} -> the sum as text; slow {seconds} -> "slept";
crash -> the process exits mid-call (stdio) / the HTTP connection is dropped and the fake stops
answering until restarted (http, sse: the exit is real too: the test restarts the fake);
grow -> adds tool "extra" and sends notifications/tools/list_changed. tools/list pages by
--page-size (default 2) with nextCursor. ping answers {}. --tools NAME,NAME lists (and serves)
only those tools, so a test's model, which calls the first tool offered, calls the one wanted.

Hostile modes (--hostile MODE, or POST /_control/hostile {"mode": MODE}):
    endless    tools/call answers with an endless stream of bytes
    huge-list  tools/list lists 100000 tools on one page
    never      tools/call never answers
    invalid    every answer is not JSON-RPC ("{\"hello\": 1}")

Control (HTTP): GET /_control/requests  [{method, path, headers (lower-case), body}]
                POST /_control/hostile   {"mode": "" | MODE}
"""

import argparse
import http.server
import json
import os
import sys
import threading
import time
import uuid

VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")

BASE_TOOLS = [
    {"name": "echo", "description": "Echoes the text back",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "add", "description": "Adds two numbers",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                      "b": {"type": "number"}},
                     "required": ["a", "b"]}},
    {"name": "slow", "description": "Sleeps for the given seconds",
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
    {"name": "crash", "description": "The server dies during this call",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "grow", "description": "Adds a tool and announces the change",
     "inputSchema": {"type": "object", "properties": {}}},
]


class Core:
    """The protocol, transport-neutral: handle(msg) -> list of messages to send back."""

    def __init__(self, page_size=2, hostile="", ping_client=False, only=None):
        self.page_size = page_size
        self.only = only
        self.hostile = hostile
        self.ping_client = ping_client
        self.extra = False
        self.lock = threading.Lock()

    def tools(self):
        if self.hostile == "huge-list":
            return [{"name": "t%d" % i, "description": "x" * 50,
                     "inputSchema": {"type": "object"}} for i in range(100000)]
        t = [x for x in BASE_TOOLS if not self.only or x["name"] in self.only]
        if self.extra:
            t.append({"name": "extra", "description": "Added by grow",
                      "inputSchema": {"type": "object"}})
        return t

    @staticmethod
    def result(mid, result):
        return {"jsonrpc": "2.0", "id": mid, "result": result}

    @staticmethod
    def error(mid, code, message):
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}

    def handle(self, msg, crash):
        """crash(): what "crash" does on this transport. Returns (messages, special) where
        special is None, "never" or "endless"."""
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return [self.error(None, -32600, "Invalid Request")], None
        method = msg.get("method")
        mid = msg.get("id")
        if method == "notifications/initialized" and self.ping_client:
            return [{"jsonrpc": "2.0", "id": "s1", "method": "ping"},
                    {"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage",
                     "params": {"messages": [], "maxTokens": 1}}], None
        if method is None or mid is None:
            return [], None  # a notification or a response: nothing to answer
        if self.hostile == "invalid":
            return [{"hello": 1}], None
        params = msg.get("params") or {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in VERSIONS else VERSIONS[0]
            return [self.result(mid, {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fake-mcp", "version": "1.0"}})], None
        if method == "ping":
            return [self.result(mid, {})], None
        if method == "tools/list":
            tools = self.tools()
            if self.hostile == "huge-list":
                return [self.result(mid, {"tools": tools})], None
            start = int(params.get("cursor") or 0)
            page = tools[start:start + self.page_size]
            res = {"tools": page}
            if start + self.page_size < len(tools):
                res["nextCursor"] = str(start + self.page_size)
            return [self.result(mid, res)], None
        if method == "tools/call":
            if self.hostile in ("never", "endless"):
                return [], self.hostile
            name = params.get("name")
            args = params.get("arguments") or {}
            if self.only and name not in self.only and name != "extra":
                return [self.error(mid, -32602, "Unknown tool: %s" % name)], None
            if name == "echo":
                return [self.result(mid, {"content": [
                    {"type": "text", "text": "echo: %s" % args.get("text", "")}]})], None
            if name == "add":
                try:
                    total = args["a"] + args["b"]
                except Exception:
                    return [self.result(mid, {"isError": True, "content": [
                        {"type": "text", "text": "a and b must be numbers"}]})], None
                return [self.result(mid, {"content": [{"type": "text", "text": str(total)}]})], None
            if name == "slow":
                time.sleep(float(args.get("seconds", 1)))
                return [self.result(mid, {"content": [{"type": "text", "text": "slept"}]})], None
            if name == "crash":
                crash()
                return [], "never"
            if name == "grow":
                self.extra = True
                return [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
                        self.result(mid, {"content": [{"type": "text", "text": "grown"}]})], None
            if name == "extra" and self.extra:
                return [self.result(mid, {"content": [{"type": "text", "text": "extra!"}]})], None
            return [self.error(mid, -32602, "Unknown tool: %s" % name)], None
        return [self.error(mid, -32601, "Method not found")], None


def run_stdio(core, log_env=""):
    out_lock = threading.Lock()

    def send(messages):
        with out_lock:
            for m in messages:
                sys.stdout.write(json.dumps(m) + "\n")
            sys.stdout.flush()

    def log(text):
        sys.stderr.write("fake-mcp: %s\n" % text)
        sys.stderr.flush()

    def crash():
        os._exit(3)

    def endless():
        with out_lock:
            while True:
                sys.stdout.write("x" * 65536)
                sys.stdout.flush()

    def work(msg):
        out, special = core.handle(msg, crash)
        if special == "never":
            return
        if special == "endless":
            endless()
        send(out)

    log("started")
    if log_env:
        log("%s=%s" % (log_env, os.environ.get(log_env, "")))
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            send([Core.error(None, -32700, "Parse error")])
            continue
        if isinstance(msg, dict) and "method" not in msg and "id" in msg:
            log("client answered %s: %s" % (msg["id"], json.dumps(
                {k: v for k, v in msg.items() if k in ("result", "error")})))
            continue
        if isinstance(msg, dict) and msg.get("method") == "tools/call":
            threading.Thread(target=work, args=(msg,), daemon=True).start()
        else:
            work(msg)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    @property
    def fake(self):
        return self.server

    def record(self, body):
        if not self.path.startswith("/_control"):
            with self.fake.lock:
                self.fake.requests.append({
                    "method": self.command, "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body})

    def send_json(self, status, obj, headers=()):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_empty(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def crash(self):
        # A dead server: the connection drops, and the process stops listening.
        self.fake.crashed = True
        threading.Thread(target=lambda: (time.sleep(0.05), os._exit(3)), daemon=True).start()

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n).decode("utf-8", "replace") if n else ""

    def do_GET(self):
        self.record("")
        if self.path == "/_control/requests":
            with self.fake.lock:
                return self.send_json(200, list(self.fake.requests))
        if self.path == "/mcp":
            return self.send_empty(405)
        if self.path == "/sse":
            return self.sse_stream()
        return self.send_empty(404)

    def do_DELETE(self):
        self.record("")
        if self.path != "/mcp":
            return self.send_empty(404)
        sid = self.headers.get("Mcp-Session-Id")
        with self.fake.lock:
            if sid in self.fake.sessions:
                self.fake.sessions.discard(sid)
                return self.send_empty(200)
        return self.send_empty(404)

    def do_POST(self):
        body = self.read_body()
        self.record(body)
        if self.path == "/_control/hostile":
            self.fake.core.hostile = json.loads(body or "{}").get("mode", "")
            return self.send_json(200, {"ok": True})
        if self.path == "/mcp":
            return self.streamable_post(body)
        if self.path.startswith("/messages"):
            return self.sse_post(body)
        return self.send_empty(404)

    # -- Streamable HTTP ------------------------------------------------------------------------
    def streamable_post(self, body):
        accept = self.headers.get("Accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            return self.send_json(406, Core.error(None, -32000, "Not Acceptable"))
        try:
            msg = json.loads(body)
        except ValueError:
            return self.send_json(400, Core.error(None, -32700, "Parse error"))
        headers = []
        if isinstance(msg, dict) and msg.get("method") == "initialize":
            sid = uuid.uuid4().hex
            with self.fake.lock:
                self.fake.sessions.add(sid)
            headers.append(("Mcp-Session-Id", sid))
        else:
            sid = self.headers.get("Mcp-Session-Id")
            if not sid:
                return self.send_json(400, Core.error(None, -32000, "Missing session"))
            with self.fake.lock:
                known = sid in self.fake.sessions
            if not known:
                return self.send_json(404, Core.error(None, -32001, "Session not found"))
        if isinstance(msg, dict) and msg.get("id") is None:
            return self.send_empty(202)  # notifications and responses
        out, special = self.fake.core.handle(msg, self.crash)
        if special == "never":
            if self.fake.crashed:
                self.close_connection = True
                return
            time.sleep(3600)
            return
        if special == "endless":
            return self.stream_forever()
        if not out:
            return self.send_empty(202)
        if self.fake.sse_answers:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            note = {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "working"}}
            for m in [note] + out:
                self.wfile.write(("event: message\ndata: %s\n\n" % json.dumps(m)).encode())
                self.wfile.flush()
            self.close_connection = True
            return
        # One JSON answer: the response (a notification sent alongside is dropped here, as a
        # JSON answer carries exactly one message; the SSE mode carries both).
        resp = [m for m in out if "id" in m] or out
        return self.send_json(200, resp[-1], headers)

    def stream_forever(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"data: " + b"x" * 65536 + b"\n")
        except OSError:
            pass
        self.close_connection = True

    # -- HTTP+SSE (2024-11-05) ------------------------------------------------------------------
    def sse_stream(self):
        sid = uuid.uuid4().hex
        q = []
        cond = threading.Condition()
        with self.fake.lock:
            self.fake.sse_queues[sid] = (q, cond)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            self.wfile.write(("event: endpoint\ndata: %s?session_id=%s\n\n"
                              % (self.fake.endpoint_prefix, sid)).encode())
            self.wfile.flush()
            while True:
                with cond:
                    while not q:
                        cond.wait(15)
                        if not q:
                            self.wfile.write(b": keepalive\n\n")
                            self.wfile.flush()
                    item = q.pop(0)
                if item == "endless":
                    while True:
                        self.wfile.write(b"data: " + b"x" * 65536 + b"\n")
                self.wfile.write(("event: message\ndata: %s\n\n" % json.dumps(item)).encode())
                self.wfile.flush()
        except OSError:
            pass
        finally:
            with self.fake.lock:
                self.fake.sse_queues.pop(sid, None)

    def sse_post(self, body):
        sid = self.path.partition("session_id=")[2]
        with self.fake.lock:
            entry = self.fake.sse_queues.get(sid)
        if entry is None:
            return self.send_empty(404)
        try:
            msg = json.loads(body)
        except ValueError:
            return self.send_empty(400)
        self.send_empty(202)
        q, cond = entry

        def work():
            out, special = self.fake.core.handle(msg, lambda: os._exit(3))
            if special == "endless":
                out = ["endless"]
            with cond:
                q.extend(out)
                cond.notify()
        threading.Thread(target=work, daemon=True).start()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, core, sse_answers, endpoint_prefix="/messages"):
        super().__init__(addr, Handler)
        self.endpoint_prefix = endpoint_prefix
        self.core = core
        self.sse_answers = sse_answers
        self.lock = threading.Lock()
        self.requests = []
        self.sessions = set()
        self.sse_queues = {}
        self.crashed = False

    def handle_error(self, request, client_address):
        pass  # a client that hangs up on an endless answer is expected, not news


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake MCP server for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--stdio", action="store_true")
    ap.add_argument("--sse-answers", action="store_true")
    ap.add_argument("--page-size", type=int, default=2)
    ap.add_argument("--hostile", default="")
    ap.add_argument("--ping-client", action="store_true")
    ap.add_argument("--log-env", default="")
    ap.add_argument("--endpoint-prefix", default="/messages",
                    help="what the sse endpoint event names before ?session_id= (a test of "
                         "clients that must refuse another origin)")
    ap.add_argument("--tools", default="", help="comma-separated: list only these tools")
    args = ap.parse_args(argv)
    only = [n for n in args.tools.split(",") if n]
    core = Core(page_size=args.page_size, hostile=args.hostile, ping_client=args.ping_client,
                only=only or None)
    if args.stdio:
        return run_stdio(core, args.log_env)
    server = Server(("127.0.0.1", args.port), core, args.sse_answers, args.endpoint_prefix)
    print("FAKE_MCP_PORT=%d" % server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    main()
