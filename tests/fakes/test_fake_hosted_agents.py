"""Self-test of fake_hosted_agents.py (standard library only), run against the fake as a
subprocess: each hosted service's documented request and response shapes, sessions, streaming
and errors.

Run: cd tests/fakes && python3 -m unittest -v test_fake_hosted_agents
"""

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 10.0
PORT = None
PROC = None


def setUpModule():
    global PROC, PORT
    PROC = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_hosted_agents.py"),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = [None]
    t = threading.Thread(target=lambda: line.__setitem__(0, PROC.stdout.readline().decode()),
                         daemon=True)
    t.start()
    t.join(TIMEOUT)
    if not line[0] or not line[0].startswith("FAKE_AGENTS_PORT="):
        PROC.kill()
        PROC.wait(5)
        raise RuntimeError("fake did not announce its port: %r" % (line[0],))
    PORT = int(line[0].strip().split("=", 1)[1])


def tearDownModule():
    PROC.send_signal(signal.SIGTERM)
    try:
        PROC.wait(10)
    except subprocess.TimeoutExpired:
        PROC.kill()
        PROC.wait(5)
    PROC.stdout.close()
    PROC.stderr.close()


def call(method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=TIMEOUT)
    try:
        data = None if body is None else json.dumps(body).encode()
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read().decode("utf-8")
    finally:
        conn.close()


def stream_objects(text):
    """Langflow's stream: one JSON object per block, blank-line separated."""
    return [json.loads(block) for block in text.split("\n\n") if block.strip()]


class LangflowTest(unittest.TestCase):
    KEY = {"x-api-key": "lf-test-key"}

    def setUp(self):
        call("POST", "/_control/reset", {})

    def run_flow(self, flow, body, stream=False, headers=None):
        return call("POST", "/api/v1/run/%s?stream=%s" % (flow, "true" if stream else "false"),
                    body, self.KEY if headers is None else headers)

    def test_blocking_run_answers_in_the_documented_result_shape_and_counts_turns(self):
        body = {"input_value": "hi", "session_id": "s1", "input_type": "chat",
                "output_type": "chat"}
        status, ctype, text = self.run_flow("echo-flow", body)
        self.assertEqual(status, 200)
        self.assertIn("application/json", ctype)
        result = json.loads(text)
        self.assertEqual(result["session_id"], "s1")
        message = result["outputs"][0]["outputs"][0]["results"]["message"]
        self.assertEqual(message["text"], "echo(1): hi")
        self.assertEqual(message["sender"], "Machine")
        _, _, text = self.run_flow("echo-flow", dict(body, input_value="again"))
        self.assertEqual(json.loads(text)["outputs"][0]["outputs"][0]["results"]["message"]
                         ["text"], "echo(2): again")
        _, _, text = self.run_flow("echo-flow", dict(body, session_id="s2"))
        self.assertIn("echo(1)", text)

    def test_stream_sends_messages_tokens_and_an_end_with_the_result(self):
        status, ctype, text = self.run_flow("echo-flow", {"input_value": "stream me",
                                                          "session_id": "s3"}, stream=True)
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", ctype)
        events = stream_objects(text)
        self.assertEqual([e["event"] for e in events],
                         ["add_message", "add_message", "token", "token", "token", "end"])
        chunks = "".join(e["data"]["chunk"] for e in events if e["event"] == "token")
        self.assertEqual(chunks, "echo(1): stream me")
        end = events[-1]["data"]["result"]
        self.assertEqual(end["outputs"][0]["outputs"][0]["results"]["message"]["text"], chunks)

    def test_key_flow_and_failures(self):
        status, _, text = self.run_flow("echo-flow", {"input_value": "x"}, headers={})
        self.assertEqual(status, 403)
        self.assertIn("detail", json.loads(text))
        status, _, text = self.run_flow("nope", {"input_value": "x"})
        self.assertEqual(status, 404)
        status, _, text = self.run_flow("fail-flow", {"input_value": "x"})
        self.assertEqual(status, 500)
        self.assertIn("failed", json.loads(text)["detail"])
        status, _, text = self.run_flow("fail-flow", {"input_value": "x"}, stream=True)
        self.assertEqual(status, 200)
        self.assertEqual(stream_objects(text)[0]["event"], "error")

    def test_requests_are_recorded_with_their_query(self):
        self.run_flow("echo-flow", {"input_value": "rec", "session_id": "r"}, stream=True)
        recorded = json.loads(call("GET", "/_control/requests")[2])
        self.assertEqual(recorded[-1]["path"], "/api/v1/run/echo-flow")
        self.assertEqual(recorded[-1]["query"], {"stream": "true"})
        self.assertEqual(recorded[-1]["headers"]["x-api-key"], "lf-test-key")


def sse_events(text):
    """(event, data) pairs of an SSE body."""
    out = []
    for block in text.split("\n\n"):
        name, data = None, None
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[len("event:"):]
            elif line.startswith("data:"):
                data = json.loads(line[len("data:"):])
        if name:
            out.append((name, data))
    return out


class CozeTest(unittest.TestCase):
    AUTH = {"Authorization": "Bearer pat-coze-test"}

    def setUp(self):
        call("POST", "/_control/reset", {})

    def chat(self, text, conversation=None, bot="bot-echo", headers=None, save=True):
        body = {"bot_id": bot, "user_id": "u1", "stream": True, "auto_save_history": save,
                "additional_messages": [{"role": "user", "content": text,
                                         "content_type": "text"}]}
        path = "/v3/chat" + ("?conversation_id=" + conversation if conversation else "")
        return call("POST", path, body, self.AUTH if headers is None else headers)

    def test_stream_has_the_documented_events_and_the_conversation_continues(self):
        status, ctype, text = self.chat("hello")
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", ctype)
        events = sse_events(text)
        names = [e[0] for e in events]
        self.assertEqual(names[0], "conversation.chat.created")
        self.assertEqual(names[-2:], ["conversation.chat.completed", "done"])
        deltas = [d["content"] for n, d in events if n == "conversation.message.delta"]
        self.assertEqual("".join(deltas), "echo(1): hello")
        completed = [d for n, d in events if n == "conversation.message.completed"]
        self.assertEqual([d["type"] for d in completed], ["answer", "verbose"])
        conversation = events[0][1]["conversation_id"]
        self.assertTrue(conversation.isdigit())
        self.assertEqual(events[-2][1]["usage"]["token_count"], 30)
        _, _, text = self.chat("again", conversation)
        self.assertIn("echo(2): again", "".join(
            d["content"] for n, d in sse_events(text) if n == "conversation.message.delta"))

    def test_errors(self):
        status, _, text = self.chat("x", headers={})
        self.assertEqual(status, 401)
        self.assertEqual(json.loads(text)["code"], 4100)
        status, ctype, text = self.chat("x", bot="bot-nope")
        self.assertEqual(status, 200)
        self.assertIn("application/json", ctype)
        self.assertEqual(json.loads(text)["code"], 4200)
        status, _, text = self.chat("x", conversation="123")
        self.assertEqual(json.loads(text)["code"], 4200)
        _, _, text = self.chat("x", bot="bot-fail")
        failed = sse_events(text)[-1]
        self.assertEqual(failed[0], "conversation.chat.failed")
        self.assertEqual(failed[1]["last_error"]["code"], 5000)

    def test_unsaved_history_does_not_count(self):
        _, _, text = self.chat("one", save=False)
        conversation = sse_events(text)[0][1]["conversation_id"]
        _, _, text = self.chat("two", conversation, save=False)
        self.assertIn("echo(1)", text)


class DashScopeTest(unittest.TestCase):
    AUTH = {"Authorization": "Bearer sk-ds-test", "X-DashScope-SSE": "enable"}

    def setUp(self):
        call("POST", "/_control/reset", {})

    def complete(self, app, prompt, session=None, headers=None):
        body = {"input": {"prompt": prompt}, "parameters": {"incremental_output": True}}
        if session:
            body["input"]["session_id"] = session
        return call("POST", "/api/v1/apps/%s/completion" % app, body,
                    self.AUTH if headers is None else headers)

    def test_incremental_stream_and_session(self):
        status, ctype, text = self.complete("app-agent", "hi")
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", ctype)
        events = [e for e in sse_events(text)]
        self.assertTrue(all(name == "result" for name, _ in events))
        outputs = [d["output"] for _, d in events]
        self.assertEqual("".join(o["text"] for o in outputs), "echo(1): hi")
        self.assertEqual([o["finish_reason"] for o in outputs], ["null", "null", "stop"])
        self.assertIn("usage", events[-1][1])
        session = outputs[0]["session_id"]
        _, _, text = self.complete("app-agent", "again", session)
        self.assertEqual("".join(d["output"]["text"] for _, d in sse_events(text)),
                         "echo(2): again")

    def test_workflow_messages_references_blocking_and_errors(self):
        _, _, text = self.complete("app-workflow", "flow")
        self.assertEqual("".join(d["output"]["workflow_message"]["message"]["content"]
                                 for _, d in sse_events(text)), "echo(1): flow")
        status, ctype, text = self.complete("app-agent", "cite it",
                                            headers={"Authorization": "Bearer sk-ds-test"})
        self.assertIn("application/json", ctype)
        output = json.loads(text)["output"]
        self.assertIn("<ref>[1]</ref>", output["text"])
        self.assertEqual(output["doc_references"][0]["doc_name"], "handbook.pdf")
        status, _, text = self.complete("app-agent", "x", headers={})
        self.assertEqual((status, json.loads(text)["code"]), (401, "InvalidApiKey"))
        status, _, _ = self.complete("app-nope", "x")
        self.assertEqual(status, 404)
        _, _, text = self.complete("app-fail", "x")
        self.assertEqual(sse_events(text)[0][0], "error")


class TboxTest(unittest.TestCase):
    AUTH = {"Authorization": "tbox-test-token"}

    def setUp(self):
        call("POST", "/_control/reset", {})

    def chat(self, query, app="app-echo", conversation=None, headers=None, **extra):
        body = {"appId": app, "query": query, "userId": "u1", "stream": True}
        if conversation:
            body["conversationId"] = conversation
        body.update(extra)
        return call("POST", "/api/chat", body, self.AUTH if headers is None else headers)

    @staticmethod
    def messages(text):
        """The SSE "message" events with their JSON-text payloads decoded, as the SDK does."""
        out = []
        for name, data in sse_events(text):
            if name == "message":
                data["payload"] = json.loads(data["payload"])
            out.append((name, data))
        return out

    def test_stream_of_header_and_chunks_and_the_conversation_continues(self):
        status, ctype, text = self.chat("hello")
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", ctype)
        events = self.messages(text)
        self.assertTrue(all(name == "message" for name, _ in events))
        types = [d["type"] for _, d in events]
        self.assertEqual(types, ["meta", "header", "chunk", "chunk", "chunk"])
        self.assertEqual(events[1][1]["payload"]["mediaType"], "text")
        chunks = [d["payload"] for _, d in events if d["type"] == "chunk"]
        self.assertEqual("".join(c["text"] for c in chunks), "echo(1): hello")
        self.assertTrue(all(c["lane"] == "default" for _, c in events[1:]))
        conversation = chunks[0]["conversationId"]
        self.assertTrue(conversation)
        self.assertEqual({c["conversationId"] for c in chunks}, {conversation})
        _, _, text = self.chat("again", conversation=conversation)
        self.assertEqual("".join(d["payload"]["text"] for _, d in self.messages(text)
                                 if d["type"] == "chunk"), "echo(2): again")
        _, _, text = self.chat("new")
        self.assertIn("echo(1): new", "".join(
            d["payload"]["text"] for _, d in self.messages(text) if d["type"] == "chunk"))

    def test_blocking_answer(self):
        status, ctype, text = self.chat("hi", stream=False)
        self.assertEqual(status, 200)
        self.assertIn("application/json", ctype)
        reply = json.loads(text)
        self.assertEqual(reply["errorCode"], "0")
        self.assertEqual(reply["data"]["result"][0]["chunk"], "echo(1): hi")
        self.assertTrue(reply["data"]["conversationId"])

    def test_errors(self):
        status, _, text = self.chat("x", headers={"Authorization": "Bearer tbox-test-token"})
        self.assertEqual(status, 401)
        self.assertEqual(json.loads(text)["errorCode"], "AUTH_FAILED")
        status, ctype, text = self.chat("x", app="app-nope")
        self.assertEqual(status, 200)
        self.assertIn("application/json", ctype)
        self.assertEqual(json.loads(text)["errorCode"], "APP_NOT_FOUND")
        status, _, text = self.chat("x", conversation="20990101tBI000000000")
        self.assertEqual(json.loads(text)["errorCode"], "CONVERSATION_NOT_FOUND")
        status, _, text = call("POST", "/api/chat", {"appId": "app-echo"}, self.AUTH)
        self.assertEqual((status, json.loads(text)["errorCode"]), (400, "PARAM_ERROR"))
        _, _, text = self.chat("x", app="app-fail")
        events = sse_events(text)
        self.assertEqual(events[-1][0], "error")
        self.assertEqual(events[-1][1]["description"], "the agent failed")
        self.assertEqual(events[-2][0], "message")

    def test_requests_are_recorded_with_the_raw_token(self):
        self.chat("rec")
        recorded = json.loads(call("GET", "/_control/requests")[2])
        self.assertEqual(recorded[-1]["path"], "/api/chat")
        self.assertEqual(recorded[-1]["headers"]["authorization"], "tbox-test-token")
        self.assertEqual(recorded[-1]["body"]["query"], "rec")


class DifyStillServedTest(unittest.TestCase):
    def test_dify_routes_of_the_base_fake_answer(self):
        status, _, text = call("POST", "/v1/chat-messages",
                               {"query": "q", "user": "u", "response_mode": "blocking",
                                "inputs": {}}, {"Authorization": "Bearer app-chat-x"})
        self.assertEqual(status, 200)
        self.assertIn("echo(1): q", text)


if __name__ == "__main__":
    unittest.main()
