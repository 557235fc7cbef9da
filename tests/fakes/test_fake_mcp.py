"""Self-test of fake_mcp.py against the MCP specification's transports (stdio, Streamable HTTP,
HTTP+SSE) and its tools. Standard library only.

Run: cd tests/fakes && python3 -m unittest -v test_fake_mcp
"""

import http.client
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_mcp.py")
TIMEOUT = 10


def start_http(*extra):
    proc = subprocess.Popen([sys.executable, FAKE, "--port", "0"] + list(extra),
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("FAKE_MCP_PORT="), line
    return proc, int(line.strip().split("=", 1)[1])


def stop(proc):
    proc.terminate()
    try:
        proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(TIMEOUT)
    if proc.stdout:
        proc.stdout.close()
    if proc.stdin:
        proc.stdin.close()


def req(mid, method, params=None):
    m = {"jsonrpc": "2.0", "id": mid, "method": method}
    if params is not None:
        m["params"] = params
    return m


INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}


class StreamableHttpTest(unittest.TestCase):
    def setUp(self):
        self.proc, self.port = start_http()

    def tearDown(self):
        stop(self.proc)

    def post(self, msg, sid=None, accept="application/json, text/event-stream"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        h = {"Content-Type": "application/json", "Accept": accept}
        if sid:
            h["Mcp-Session-Id"] = sid
        c.request("POST", "/mcp", json.dumps(msg), h)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body

    def session(self):
        status, headers, body = self.post(req(1, "initialize", INIT))
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["result"]["protocolVersion"], "2025-06-18")
        sid = headers["mcp-session-id"]
        status, _, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        self.assertEqual(status, 202)
        return sid

    def test_lifecycle_pagination_and_calls(self):
        sid = self.session()
        names, cursor = [], None
        while True:
            params = {"cursor": cursor} if cursor else {}
            _, _, body = self.post(req(2, "tools/list", params), sid)
            res = json.loads(body)["result"]
            self.assertLessEqual(len(res["tools"]), 2)
            names += [t["name"] for t in res["tools"]]
            cursor = res.get("nextCursor")
            if not cursor:
                break
        self.assertEqual(names, ["echo", "add", "slow", "crash", "grow"])
        _, _, body = self.post(req(3, "tools/call", {"name": "add",
                                                     "arguments": {"a": 2, "b": 40}}), sid)
        self.assertEqual(json.loads(body)["result"]["content"][0]["text"], "42")
        _, _, body = self.post(req(4, "tools/call", {"name": "nope", "arguments": {}}), sid)
        self.assertEqual(json.loads(body)["error"]["code"], -32602)
        _, _, body = self.post(req(5, "ping"), sid)
        self.assertEqual(json.loads(body)["result"], {})

    def test_session_rules(self):
        status, _, _ = self.post(req(1, "tools/list"))
        self.assertEqual(status, 400)
        status, _, _ = self.post(req(1, "tools/list"), "unknown")
        self.assertEqual(status, 404)
        status, _, _ = self.post(req(1, "initialize", INIT), accept="application/json")
        self.assertEqual(status, 406)
        sid = self.session()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        c.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid})
        self.assertEqual(c.getresponse().status, 200)
        c.close()
        status, _, _ = self.post(req(2, "tools/list"), sid)
        self.assertEqual(status, 404)

    def test_hostile_invalid(self):
        sid = self.session()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        c.request("POST", "/_control/hostile", json.dumps({"mode": "invalid"}))
        c.getresponse().read()
        c.close()
        _, _, body = self.post(req(2, "tools/list"), sid)
        self.assertNotIn("jsonrpc", json.loads(body))


class SseAnswersTest(unittest.TestCase):
    def test_answer_is_an_event_stream(self):
        proc, port = start_http("--sse-answers")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            c.request("POST", "/mcp", json.dumps(req(1, "initialize", INIT)),
                      {"Accept": "application/json, text/event-stream",
                       "Content-Type": "application/json"})
            r = c.getresponse()
            self.assertEqual(r.getheader("Content-Type"), "text/event-stream")
            text = r.read().decode()
            data = [json.loads(l[6:]) for l in text.splitlines() if l.startswith("data: ")]
            self.assertEqual(data[0]["method"], "notifications/message")
            self.assertEqual(data[-1]["id"], 1)
        finally:
            stop(proc)


class OldSseTransportTest(unittest.TestCase):
    def test_endpoint_event_then_messages(self):
        proc, port = start_http()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            c.request("GET", "/sse", headers={"Accept": "text/event-stream"})
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            self.assertEqual(r.fp.readline(), b"event: endpoint\n")
            endpoint = r.fp.readline().decode().strip()[len("data: "):]
            self.assertTrue(endpoint.startswith("/messages?session_id="))
            r.fp.readline()
            p = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            p.request("POST", endpoint, json.dumps(req(1, "tools/call", {
                "name": "echo", "arguments": {"text": "hi"}})))
            self.assertEqual(p.getresponse().status, 202)
            self.assertEqual(r.fp.readline(), b"event: message\n")
            msg = json.loads(r.fp.readline().decode()[len("data: "):])
            self.assertEqual(msg["result"]["content"][0]["text"], "echo: hi")
            c.close()
        finally:
            stop(proc)


class OnlyToolsTest(unittest.TestCase):
    def test_only_the_named_tools_are_listed_and_served(self):
        proc = subprocess.Popen([sys.executable, FAKE, "--stdio", "--tools", "crash,add"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            def call(msg):
                proc.stdin.write(json.dumps(msg) + "\n")
                proc.stdin.flush()
                return json.loads(proc.stdout.readline())
            call(req(1, "initialize", INIT))
            tools = call(req(2, "tools/list"))["result"]["tools"]
            self.assertEqual([t["name"] for t in tools], ["add", "crash"])
            self.assertEqual(call(req(3, "tools/call", {"name": "echo",
                                                        "arguments": {"text": "x"}}))
                             ["error"]["code"], -32602)
            self.assertEqual(call(req(4, "tools/call", {"name": "add",
                                                        "arguments": {"a": 1, "b": 2}}))
                             ["result"]["content"][0]["text"], "3")
        finally:
            stop(proc)


class StdioTest(unittest.TestCase):
    def test_lines_and_crash(self):
        proc = subprocess.Popen([sys.executable, FAKE, "--stdio"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        try:
            def call(msg):
                proc.stdin.write(json.dumps(msg) + "\n")
                proc.stdin.flush()
                return json.loads(proc.stdout.readline())
            self.assertEqual(call(req(1, "initialize", INIT))["result"]["serverInfo"]["name"],
                             "fake-mcp")
            proc.stdin.write("this is not json\n")
            proc.stdin.flush()
            self.assertEqual(json.loads(proc.stdout.readline())["error"]["code"], -32700)
            self.assertEqual(call(req(2, "tools/call", {"name": "grow", "arguments": {}}))
                             ["method"], "notifications/tools/list_changed")
            self.assertEqual(json.loads(proc.stdout.readline())["id"], 2)
            proc.stdin.write(json.dumps(req(3, "tools/call", {"name": "crash"})) + "\n")
            proc.stdin.flush()
            self.assertEqual(proc.wait(TIMEOUT), 3)
        finally:
            stop(proc)

    def test_calls_overlap_and_the_server_asks_the_client(self):
        proc = subprocess.Popen([sys.executable, FAKE, "--stdio", "--ping-client",
                                 "--log-env", "SECRET_X"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, SECRET_X="hunter22"))
        try:
            def send(msg):
                proc.stdin.write(json.dumps(msg) + "\n")
                proc.stdin.flush()
            self.assertEqual(proc.stderr.readline(), "fake-mcp: started\n")
            self.assertEqual(proc.stderr.readline(), "fake-mcp: SECRET_X=hunter22\n")
            send(req(1, "initialize", INIT))
            self.assertEqual(json.loads(proc.stdout.readline())["id"], 1)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            asked = [json.loads(proc.stdout.readline()) for _ in range(2)]
            self.assertEqual([(m["id"], m["method"]) for m in asked],
                             [("s1", "ping"), ("s2", "sampling/createMessage")])
            send({"jsonrpc": "2.0", "id": "s1", "result": {}})
            self.assertEqual(proc.stderr.readline(),
                             'fake-mcp: client answered s1: {"result": {}}\n')
            # A slow call does not hold back a later quick one.
            send(req(2, "tools/call", {"name": "slow", "arguments": {"seconds": 1}}))
            send(req(3, "tools/call", {"name": "echo", "arguments": {"text": "quick"}}))
            self.assertEqual(json.loads(proc.stdout.readline())["id"], 3)
            self.assertEqual(json.loads(proc.stdout.readline())["id"], 2)
        finally:
            stop(proc)
            proc.stderr.close()


class OldSseEndpointTest(unittest.TestCase):
    def test_endpoint_prefix_and_client_answers(self):
        proc, port = start_http("--ping-client", "--endpoint-prefix", "http://other.example/m")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            c.request("GET", "/sse", headers={"Accept": "text/event-stream"})
            r = c.getresponse()
            self.assertEqual(r.fp.readline(), b"event: endpoint\n")
            endpoint = r.fp.readline().decode().strip()[len("data: "):]
            self.assertTrue(endpoint.startswith("http://other.example/m?session_id="), endpoint)
            r.fp.readline()
            # The client's POSTs still reach this fake at /messages.
            path = "/messages?" + endpoint.split("?", 1)[1]
            p = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            p.request("POST", path, json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/initialized"}))
            self.assertEqual(p.getresponse().status, 202)
            self.assertEqual(r.fp.readline(), b"event: message\n")
            msg = json.loads(r.fp.readline().decode()[len("data: "):])
            self.assertEqual((msg["id"], msg["method"]), ("s1", "ping"))
            c.close()
        finally:
            stop(proc)


if __name__ == "__main__":
    unittest.main()
