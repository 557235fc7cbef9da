"""Self-test of fake_llm.py (standard library only): every endpoint, preset and script knob.

Run: cd tests/fakes && python3 -m unittest -v test_fake_llm
"""

import base64
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_llm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 10.0
OA_KEY = {"Authorization": "Bearer sk-good-123"}
AN_HDRS = {"x-api-key": "sk-good-abc", "anthropic-version": "2023-06-01"}


def parse_sse(text):
    """WHATWG-ish SSE parse: list of (event name or None, data string)."""
    events = []
    name, data = None, []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line == "":
            if data or name:
                events.append((name, "\n".join(data)))
            name, data = None, []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    return events


class FakeTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = fake_llm.FakeLlm()
        cls.port = cls.fake.start()

    @classmethod
    def tearDownClass(cls):
        cls.fake.stop()

    def setUp(self):
        self.fake.reset()

    def conn(self, timeout=TIMEOUT):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def req(self, method, path, body=None, headers=None, raw=None, conn=None, timeout=TIMEOUT):
        """Returns (status, parsed JSON or text, lower-case headers)."""
        h = dict(headers or {})
        data = None
        if raw is not None:
            data = raw.encode() if isinstance(raw, str) else raw
        elif body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            h.setdefault("Content-Type", "application/json")
        own = conn is None
        c = conn or self.conn(timeout)
        try:
            c.request(method, path, body=data, headers=h)
            r = c.getresponse()
            payload = r.read()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
            status = r.status
        finally:
            if own:
                c.close()
        text = payload.decode("utf-8")
        try:
            return status, json.loads(text), hdrs
        except ValueError:
            return status, text, hdrs

    def oa_chat(self, text="hello world", **extra):
        body = {"model": "gpt-test", "messages": [{"role": "user", "content": text}]}
        body.update(extra)
        return self.req("POST", "/v1/chat/completions", body, OA_KEY)

    def an_msg(self, text="hello world", headers=None, **extra):
        body = {"model": "claude-test", "max_tokens": 64,
                "messages": [{"role": "user", "content": text}]}
        body.update(extra)
        return self.req("POST", "/v1/messages", body, AN_HDRS if headers is None else headers)

    def ol_chat(self, text="hello world", **extra):
        body = {"model": "llama-test", "messages": [{"role": "user", "content": text}]}
        body.update(extra)
        return self.req("POST", "/api/chat", body)

    def sse_json(self, text):
        return [(n, d if d == "[DONE]" else json.loads(d)) for n, d in parse_sse(text)]


# ---------------------------------------------------------------------------------------------

class OpenAITest(FakeTestCase):
    def test_auth(self):
        st, body, _ = self.req("POST", "/v1/chat/completions", {"model": "gpt-test"})
        self.assertEqual(st, 401)
        self.assertIsNone(body["error"]["code"])
        st, body, _ = self.req("POST", "/v1/chat/completions", {"model": "gpt-test"},
                               {"Authorization": "Bearer sk-wrong-SECRET99"})
        self.assertEqual(st, 401)
        self.assertEqual(body["error"]["code"], "invalid_api_key")
        self.assertEqual(body["error"]["type"], "invalid_request_error")
        self.assertNotIn("SECRET99", json.dumps(body))
        st, body, _ = self.req("GET", "/v1/models", headers={"Authorization": "Bearer nope"})
        self.assertEqual(st, 401)

    def test_unknown_model_and_bad_json(self):
        st, body, _ = self.req("POST", "/v1/chat/completions",
                               {"model": "gpt-nope", "messages": [{"role": "user", "content": "x"}]},
                               OA_KEY)
        self.assertEqual(st, 404)
        self.assertEqual(body["error"]["code"], "model_not_found")
        self.assertIn("gpt-nope", body["error"]["message"])
        st, body, _ = self.req("POST", "/v1/chat/completions", raw="{not json", headers=OA_KEY)
        self.assertEqual(st, 400)
        self.assertEqual(body["error"]["type"], "invalid_request_error")
        st, body, _ = self.req("POST", "/v1/chat/completions", {"model": "gpt-test"}, OA_KEY)
        self.assertEqual(st, 400)
        self.assertEqual(body["error"]["param"], "messages")
        st, body, _ = self.req("POST", "/v1/nothing", {}, OA_KEY)
        self.assertEqual(st, 404)
        self.assertIn("Invalid URL", body["error"]["message"])

    def test_tool_message_rules(self):
        msgs = [{"role": "user", "content": "x"},
                {"role": "tool", "tool_call_id": "call_1", "content": "r"}]
        st, body, _ = self.req("POST", "/v1/chat/completions",
                               {"model": "gpt-test", "messages": msgs}, OA_KEY)
        self.assertEqual(st, 400, body)
        msgs = [{"role": "user", "content": "x"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "user", "content": "y"}]
        st, body, _ = self.req("POST", "/v1/chat/completions",
                               {"model": "gpt-test", "messages": msgs}, OA_KEY)
        self.assertEqual(st, 400, body)
        self.assertIn("call_1", body["error"]["message"])

    def test_non_stream(self):
        st, body, hdrs = self.oa_chat("hi there")
        self.assertEqual(st, 200)
        self.assertIn("content-length", hdrs)
        self.assertIn("x-request-id", hdrs)
        self.assertEqual(body["object"], "chat.completion")
        ch = body["choices"][0]
        self.assertEqual(ch["message"]["content"], "echo: hi there")
        self.assertEqual(ch["finish_reason"], "stop")
        u = body["usage"]
        self.assertEqual(u["total_tokens"], u["prompt_tokens"] + u["completion_tokens"])
        self.assertGreater(u["completion_tokens"], 0)

    def test_content_parts_and_tool_result(self):
        msgs = [{"role": "user", "content": [{"type": "text", "text": "look"},
                                             {"type": "image_url",
                                              "image_url": {"url": "data:image/png;base64,AAAA"}}]},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "21 C"}]
        st, body, _ = self.req("POST", "/v1/chat/completions",
                               {"model": "gpt-test", "messages": msgs}, OA_KEY)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["choices"][0]["message"]["content"], "echo: look [tool result: 21 C]")

    def test_stream_without_usage(self):
        st, text, hdrs = self.oa_chat("stream me please", stream=True)
        self.assertEqual(st, 200)
        self.assertEqual(hdrs.get("transfer-encoding"), "chunked")
        self.assertNotIn("content-length", hdrs)
        self.assertTrue(hdrs["content-type"].startswith("text/event-stream"))
        self.assertNotIn("event:", text)
        evs = self.sse_json(text)
        self.assertEqual(evs[-1], (None, "[DONE]"))
        chunks = [d for _, d in evs[:-1]]
        self.assertEqual(chunks[0]["choices"][0]["delta"]["role"], "assistant")
        self.assertEqual(len(set(c["id"] for c in chunks)), 1)
        for c in chunks:
            self.assertNotIn("usage", c)
            self.assertEqual(c["object"], "chat.completion.chunk")
        pieces = [c["choices"][0]["delta"].get("content") for c in chunks]
        self.assertGreaterEqual(len([p for p in pieces if p]), 3)
        self.assertEqual("".join(p for p in pieces if p), "echo: stream me please")
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "stop")
        self.assertTrue(all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1]))

    def test_stream_with_usage(self):
        st, text, _ = self.oa_chat("u", stream=True, stream_options={"include_usage": True})
        self.assertEqual(st, 200)
        evs = self.sse_json(text)
        self.assertEqual(evs[-1][1], "[DONE]")
        last = evs[-2][1]
        self.assertEqual(last["choices"], [])
        self.assertGreater(last["usage"]["total_tokens"], 0)
        for _, c in evs[:-2]:
            self.assertIn("usage", c)
            self.assertIsNone(c["usage"])
        st, body, _ = self.oa_chat("u", stream_options={"include_usage": True})
        self.assertEqual(st, 400)

    TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {}}},
             {"type": "function", "function": {"name": "lookup", "parameters": {}}}]

    def test_tool_call_non_stream(self):
        st, body, _ = self.oa_chat("please call tool", tools=self.TOOLS)
        self.assertEqual(st, 200)
        ch = body["choices"][0]
        self.assertEqual(ch["finish_reason"], "tool_calls")
        self.assertIsNone(ch["message"]["content"])
        tc = ch["message"]["tool_calls"]
        self.assertEqual(len(tc), 1)
        self.assertEqual(tc[0]["function"]["name"], "search")
        self.assertIsInstance(tc[0]["function"]["arguments"], str)
        self.assertEqual(json.loads(tc[0]["function"]["arguments"]), {"q": "x"})
        self.assertTrue(tc[0]["id"].startswith("call_"))
        # tool_choice none suppresses the call
        st, body, _ = self.oa_chat("please call tool", tools=self.TOOLS, tool_choice="none")
        self.assertEqual(body["choices"][0]["finish_reason"], "stop")

    def test_tool_call_stream_parallel(self):
        st, text, _ = self.oa_chat("call two tools", tools=self.TOOLS, stream=True)
        self.assertEqual(st, 200)
        evs = self.sse_json(text)
        self.assertEqual(evs[-1][1], "[DONE]")
        acc = {}
        seen_first = set()
        for _, c in evs[:-1]:
            for tc in c["choices"][0]["delta"].get("tool_calls") or []:
                k = tc["index"]
                if k not in seen_first:
                    self.assertIn("id", tc)
                    self.assertEqual(tc["function"]["name"], ["search", "lookup"][k])
                    seen_first.add(k)
                    acc[k] = {"id": tc["id"], "args": tc["function"].get("arguments", "")}
                else:
                    self.assertNotIn("id", tc)
                    self.assertNotIn("name", tc["function"])
                    acc[k]["args"] += tc["function"]["arguments"]
        self.assertEqual(json.loads(acc[0]["args"]), {"q": "x"})
        self.assertEqual(json.loads(acc[1]["args"]), {"q": "y"})
        self.assertEqual(evs[-2][1]["choices"][0]["finish_reason"], "tool_calls")
        frags = sum(len(c["choices"][0]["delta"].get("tool_calls") or []) for _, c in evs[:-1])
        self.assertGreaterEqual(frags, 6)

    def test_embeddings(self):
        st, body, _ = self.req("POST", "/v1/embeddings",
                               {"model": "embed-test", "input": "abc"}, OA_KEY)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["object"], "list")
        vec = body["data"][0]["embedding"]
        self.assertEqual(len(vec), 8)
        self.assertAlmostEqual(sum(v * v for v in vec), 1.0, places=5)
        self.assertGreater(body["usage"]["prompt_tokens"], 0)
        # deterministic, base64 = LE float32 of the same values
        st, b64, _ = self.req("POST", "/v1/embeddings",
                              {"model": "embed-test", "input": ["abc", "def"],
                               "encoding_format": "base64"}, OA_KEY)
        self.assertEqual(st, 200)
        self.assertEqual([d["index"] for d in b64["data"]], [0, 1])
        raw = base64.b64decode(b64["data"][0]["embedding"])
        self.assertEqual(list(struct.unpack("<8f", raw)), vec)
        st, body, _ = self.req("POST", "/v1/embeddings",
                               {"model": "embed-test", "input": "abc", "dimensions": 3}, OA_KEY)
        self.assertEqual(len(body["data"][0]["embedding"]), 3)
        st, body, _ = self.req("POST", "/v1/embeddings",
                               {"model": "embed-test", "input": [[1, 2], [3]]}, OA_KEY)
        self.assertEqual((st, len(body["data"])), (200, 2))
        for bad in ("", [], [""], [1, "a"]):
            st, body, _ = self.req("POST", "/v1/embeddings",
                                   {"model": "embed-test", "input": bad}, OA_KEY)
            self.assertEqual(st, 400, bad)
            self.assertEqual(body["error"]["type"], "invalid_request_error")
        st, body, _ = self.req("POST", "/v1/embeddings",
                               {"model": "nope", "input": "a"}, OA_KEY)
        self.assertEqual(st, 404)

    def test_models(self):
        st, body, _ = self.req("GET", "/v1/models", headers=OA_KEY)
        self.assertEqual(st, 200)
        self.assertEqual(body["object"], "list")
        ids = [m["id"] for m in body["data"]]
        for m in ("gpt-test", "claude-test", "llama-test", "embed-test"):
            self.assertIn(m, ids)
        self.assertEqual(body["data"][0]["object"], "model")

    def test_context_budget(self):
        self.req("POST", "/_control/config", {"context_tokens": 5})
        st, body, _ = self.oa_chat("x" * 200)
        self.assertEqual(st, 400)
        self.assertEqual(body["error"]["code"], "context_length_exceeded")
        st, body, _ = self.an_msg("x" * 200)
        self.assertEqual(st, 400)
        self.assertIn("prompt is too long", body["error"]["message"])


class AnthropicTest(FakeTestCase):
    def test_auth_and_headers(self):
        st, body, _ = self.an_msg(headers={"anthropic-version": "2023-06-01"})
        self.assertEqual(st, 401)
        self.assertEqual(body["type"], "error")
        self.assertEqual(body["error"], {"type": "authentication_error",
                                         "message": "x-api-key header is required"})
        st, body, hdrs = self.an_msg(headers={"x-api-key": "sk-bad-SECRET77",
                                              "anthropic-version": "2023-06-01"})
        self.assertEqual(st, 401)
        self.assertEqual(body["error"]["message"], "invalid x-api-key")
        self.assertNotIn("SECRET77", json.dumps(body))
        self.assertIn("request-id", hdrs)
        st, body, _ = self.an_msg(headers={"x-api-key": "sk-good"})
        self.assertEqual(st, 400)
        self.assertEqual(body["error"]["message"], "anthropic-version: header is required")

    def test_validation(self):
        st, body, _ = self.req("POST", "/v1/messages",
                               {"model": "claude-test",
                                "messages": [{"role": "user", "content": "x"}]}, AN_HDRS)
        self.assertEqual(st, 400)
        self.assertEqual(body["error"]["type"], "invalid_request_error")
        self.assertEqual(body["error"]["message"], "max_tokens: Field required")
        st, body, _ = self.req("POST", "/v1/messages",
                               {"model": "claude-test", "max_tokens": 5,
                                "messages": [{"role": "system", "content": "s"},
                                             {"role": "user", "content": "x"}]}, AN_HDRS)
        self.assertEqual(st, 400)
        self.assertIn("system", body["error"]["message"])
        msgs = [{"role": "user", "content": "x"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                                   "name": "f", "input": {}}]},
                {"role": "user", "content": "no result"}]
        st, body, _ = self.req("POST", "/v1/messages",
                               {"model": "claude-test", "max_tokens": 5, "messages": msgs},
                               AN_HDRS)
        self.assertEqual(st, 400)
        self.assertIn("toolu_1", body["error"]["message"])
        st, body, _ = self.an_msg(model="claude-foo")
        self.assertEqual(st, 404)
        self.assertEqual(body["error"], {"type": "not_found_error", "message": "model: claude-foo"})
        st, body, _ = self.req("POST", "/v1/messages", raw="{oops", headers=AN_HDRS)
        self.assertEqual(st, 400)
        self.assertEqual(body["error"]["type"], "invalid_request_error")

    def test_non_stream(self):
        st, body, hdrs = self.an_msg("hi", system="be brief")
        self.assertEqual(st, 200, body)
        self.assertIn("request-id", hdrs)
        self.assertEqual(body["type"], "message")
        self.assertEqual(body["content"], [{"type": "text", "text": "echo: hi"}])
        self.assertEqual(body["stop_reason"], "end_turn")
        self.assertGreater(body["usage"]["input_tokens"], 0)
        self.assertGreater(body["usage"]["output_tokens"], 0)

    def test_tool_loop(self):
        tools = [{"name": "search", "input_schema": {"type": "object"}}]
        st, body, _ = self.an_msg("call tool now", tools=tools)
        self.assertEqual(body["stop_reason"], "tool_use")
        tu = body["content"][-1]
        self.assertEqual((tu["type"], tu["name"], tu["input"]), ("tool_use", "search", {"q": "x"}))
        msgs = [{"role": "user", "content": "call tool now"},
                {"role": "assistant", "content": body["content"]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tu["id"],
                                              "content": "found"}]}]
        st, body, _ = self.req("POST", "/v1/messages",
                               {"model": "claude-test", "max_tokens": 50, "tools": tools,
                                "messages": msgs}, AN_HDRS)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["stop_reason"], "end_turn")
        self.assertEqual(body["content"][0]["text"], "echo: call tool now [tool result: found]")

    def test_stream(self):
        tools = [{"name": "search", "input_schema": {"type": "object"}}]
        st, text, hdrs = self.an_msg("please call tool", tools=tools, stream=True)
        self.assertEqual(st, 200)
        self.assertEqual(hdrs.get("transfer-encoding"), "chunked")
        self.assertNotIn("[DONE]", text)
        evs = [(n, json.loads(d)) for n, d in parse_sse(text)]
        names = [n for n, _ in evs]
        for n, d in evs:
            self.assertEqual(n, d["type"])
        self.assertEqual(names.count("ping"), 1)
        no_ping = [n for n in names if n != "ping"]
        self.assertEqual(no_ping[0], "message_start")
        self.assertEqual(no_ping[-2:], ["message_delta", "message_stop"])
        text_out, json_parts = "", {}
        open_blocks = set()
        for n, d in evs:
            if n == "content_block_start":
                open_blocks.add(d["index"])
            elif n == "content_block_delta":
                self.assertIn(d["index"], open_blocks)
                if d["delta"]["type"] == "text_delta":
                    text_out += d["delta"]["text"]
                else:
                    json_parts.setdefault(d["index"], []).append(d["delta"]["partial_json"])
            elif n == "content_block_stop":
                open_blocks.remove(d["index"])
        self.assertEqual(text_out, "echo: please call tool")
        self.assertEqual(json_parts[1][0], "")
        self.assertEqual(json.loads("".join(json_parts[1])), {"q": "x"})
        md = [d for n, d in evs if n == "message_delta"][0]
        self.assertEqual(md["delta"]["stop_reason"], "tool_use")
        self.assertGreater(md["usage"]["output_tokens"], 0)

    def test_models_by_header(self):
        st, body, _ = self.req("GET", "/v1/models", headers=AN_HDRS)
        self.assertEqual(st, 200)
        self.assertEqual(body["data"][0]["type"], "model")
        self.assertIn("has_more", body)


class OllamaTest(FakeTestCase):
    def test_stream_by_default(self):
        st, text, hdrs = self.ol_chat("hey you")
        self.assertEqual(st, 200)
        self.assertEqual(hdrs.get("transfer-encoding"), "chunked")
        self.assertTrue(hdrs["content-type"].startswith("application/x-ndjson"))
        self.assertTrue(text.endswith("\n"))
        lines = [json.loads(line) for line in text.splitlines()]
        self.assertTrue(all(not x["done"] for x in lines[:-1]))
        final = lines[-1]
        self.assertTrue(final["done"])
        self.assertEqual(final["done_reason"], "stop")
        for k in ("total_duration", "prompt_eval_count", "eval_count", "eval_duration"):
            self.assertIn(k, final)
        self.assertEqual("".join(x["message"]["content"] for x in lines), "echo: hey you")
        self.assertGreaterEqual(len(lines), 4)

    def test_non_stream(self):
        st, body, hdrs = self.ol_chat("hey", stream=False)
        self.assertEqual(st, 200)
        self.assertIn("content-length", hdrs)
        self.assertEqual(body["message"]["content"], "echo: hey")
        self.assertTrue(body["done"])
        st, body, _ = self.ol_chat("hey", model="llama-test:latest", stream=False)
        self.assertEqual(st, 200)

    def test_tools(self):
        tools = [{"type": "function", "function": {"name": "search", "parameters": {}}}]
        st, text, _ = self.ol_chat("call tool", tools=tools)
        lines = [json.loads(x) for x in text.splitlines()]
        calls = [x for x in lines if x["message"].get("tool_calls")]
        self.assertEqual(len(calls), 1)
        self.assertFalse(calls[0]["done"])
        fn = calls[0]["message"]["tool_calls"][0]["function"]
        self.assertEqual((fn["name"], fn["arguments"]), ("search", {"q": "x"}))
        self.assertTrue(lines[-1]["done"])
        st, body, _ = self.ol_chat("call tool", tools=tools, model="llama-notools")
        self.assertEqual(st, 400)
        self.assertIn("does not support tools", body["error"])

    def test_errors(self):
        st, body, _ = self.ol_chat(model="nope")
        self.assertEqual((st, body), (404, {"error": "model 'nope' not found"}))
        st, body, _ = self.req("POST", "/api/chat", raw=b"")
        self.assertEqual((st, body), (400, {"error": "missing request body"}))
        st, body, _ = self.req("POST", "/api/chat", raw="{bad")
        self.assertEqual(st, 400)
        self.assertIsInstance(body["error"], str)
        st, body, _ = self.req("POST", "/api/chat",
                               {"model": "llama-test", "messages": [
                                   {"role": "user", "content": "x",
                                    "images": ["data:image/png;base64,AAAA"]}]})
        self.assertEqual(st, 400)
        self.assertIn("base64", body["error"])

    def test_embed_tags_version(self):
        st, body, _ = self.req("POST", "/api/embed", {"model": "embed-test", "input": ["a", "b"]})
        self.assertEqual(st, 200)
        self.assertEqual(len(body["embeddings"]), 2)
        self.assertEqual(len(body["embeddings"][0]), 8)
        st, body, _ = self.req("POST", "/api/embed", {"model": "embed-test", "input": "a"})
        self.assertEqual(len(body["embeddings"]), 1)
        st, body, _ = self.req("POST", "/api/embed", {"model": "embed-test", "input": 5})
        self.assertEqual((st, body), (400, {"error": "invalid input type"}))
        st, body, _ = self.req("GET", "/api/tags")
        self.assertIn("llama-test:latest", [m["name"] for m in body["models"]])
        st, body, _ = self.req("GET", "/api/version")
        self.assertEqual(st, 200)
        self.assertIn("version", body)


class ScriptTest(FakeTestCase):
    def script(self, spec):
        st, body, _ = self.req("POST", "/_control/script", spec)
        self.assertEqual(st, 200, body)

    def test_status_body_times_then_default(self):
        self.script({"path": "/v1/chat/completions", "times": 2, "status": 418,
                     "headers": {"x-custom": "1"}, "body": {"hello": "there"}})
        for _ in range(2):
            st, body, hdrs = self.oa_chat()
            self.assertEqual((st, body, hdrs.get("x-custom")), (418, {"hello": "there"}, "1"))
        st, body, _ = self.oa_chat()
        self.assertEqual(st, 200)

    def test_fifo_and_raw(self):
        self.script([{"path": "/api/chat", "raw": "{broken"},
                     {"path": "/api/chat", "status": 500, "body": {"error": "second"}}])
        st, text, _ = self.ol_chat()
        self.assertEqual((st, text), (200, "{broken"))
        st, body, _ = self.ol_chat()
        self.assertEqual((st, body), (500, {"error": "second"}))
        st, _, _ = self.ol_chat()
        self.assertEqual(st, 200)

    def test_chunks_flushed_with_delay(self):
        self.script({"path": "/v1/chat/completions",
                     "chunks": ["data: {\"a\":1}\n\n", "data: {\"a\":2}\n\n", "data: [DONE]\n\n"],
                     "delay_ms": 800})
        c = self.conn()
        try:
            c.request("POST", "/v1/chat/completions", body=b"{}", headers=OA_KEY)
            r = c.getresponse()
            self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
            t0 = time.monotonic()
            first = r.readline()
            t1 = time.monotonic()
            rest = r.read()
            t2 = time.monotonic()
        finally:
            c.close()
        self.assertEqual(first, b'data: {"a":1}\n')
        self.assertLess(t1 - t0, 0.5)  # first event arrived before the delay
        self.assertGreater(t2 - t0, 1.5)
        self.assertTrue(rest.endswith(b"data: [DONE]\n\n"))

    def test_default_stream_with_delay_is_incremental(self):
        self.script({"path": "/api/chat", "delay_ms": 800})
        c = self.conn()
        try:
            c.request("POST", "/api/chat",
                      body=json.dumps({"model": "llama-test",
                                       "messages": [{"role": "user", "content": "abc"}]}))
            r = c.getresponse()
            t0 = time.monotonic()
            line = r.readline()
            self.assertLess(time.monotonic() - t0, 0.5)
            self.assertFalse(json.loads(line)["done"])
            r.read()
        finally:
            c.close()

    def test_stall(self):
        self.script({"path": "/v1/messages", "stall": True})
        t0 = time.monotonic()
        with self.assertRaises(socket.timeout):
            self.req("POST", "/v1/messages", {"model": "claude-test"}, AN_HDRS, timeout=1.0)
        self.assertGreater(time.monotonic() - t0, 0.9)
        self.assertEqual(len(self.fake.requests_for("/v1/messages")), 1)
        st, _, _ = self.an_msg()  # next one is answered normally
        self.assertEqual(st, 200)

    def test_close_after_bytes(self):
        self.script({"path": "/v1/chat/completions", "close_after_bytes": 10})
        with self.assertRaises(http.client.IncompleteRead):
            self.oa_chat()
        self.script({"path": "/v1/chat/completions", "close_after_bytes": 30})
        c = self.conn()
        try:
            c.request("POST", "/v1/chat/completions",
                      body=json.dumps({"model": "gpt-test", "stream": True,
                                       "messages": [{"role": "user", "content": "x"}]}),
                      headers=OA_KEY)
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            with self.assertRaises(http.client.IncompleteRead) as cm:
                r.read()
            self.assertEqual(len(cm.exception.partial), 30)
        finally:
            c.close()

    def test_one_http_chunk_per_event(self):
        body = json.dumps({"model": "claude-test", "max_tokens": 9, "stream": True,
                           "messages": [{"role": "user", "content": "hello"}]}).encode()
        s = socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT)
        try:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: sk-good\r\n"
                      b"anthropic-version: 2023-06-01\r\nConnection: close\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
        finally:
            s.close()
        head, _, rest = data.partition(b"\r\n\r\n")
        self.assertIn(b"Transfer-Encoding: chunked", head)
        payloads = []
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            payloads.append(rest[:size])
            self.assertEqual(rest[size:size + 2], b"\r\n")
            rest = rest[size + 2:]
        self.assertGreater(len(payloads), 5)
        for p in payloads:
            self.assertTrue(p.startswith(b"event: ") and p.endswith(b"\n\n"), p)
            self.assertEqual(p.count(b"\n\n"), 1)

    def test_abort_after_chunks(self):
        self.script({"path": "/api/chat", "abort_after_chunks": 1})
        with self.assertRaises(http.client.IncompleteRead) as cm:
            self.ol_chat()
        self.assertEqual(cm.exception.partial.count(b"\n"), 1)

    def test_huge_bytes(self):
        n = 5 * 1024 * 1024 + 7
        self.script({"path": "/v1/chat/completions", "huge_bytes": n})
        c = self.conn()
        try:
            c.request("POST", "/v1/chat/completions", body=b"{}", headers=OA_KEY)
            r = c.getresponse()
            self.assertIsNone(r.getheader("Content-Length"))
            total = 0
            while True:
                b = r.read(1 << 16)
                if not b:
                    break
                total += len(b)
        finally:
            c.close()
        self.assertEqual(total, n)
        self.script({"path": "/v1/chat/completions", "huge_bytes": 1000,
                     "huge_content_length": True})
        st, text, hdrs = self.oa_chat()
        self.assertEqual((hdrs["content-length"], len(text)), ("1000", 1000))

    def test_wildcard_and_unlimited(self):
        self.script({"path": "*", "times": -1, "status": 503, "body": {"error": "down"}})
        for _ in range(3):
            self.assertEqual(self.ol_chat()[0], 503)
            self.assertEqual(self.oa_chat()[0], 503)
        self.req("POST", "/_control/reset")
        self.assertEqual(self.ol_chat()[0], 200)

    def test_invalid_scripts(self):
        for bad in ({"status": 200}, {"path": "/x", "times": 0}, {"path": "/x", "preset": "nope"},
                    {"path": "/x", "body": {}, "raw": "x"}, {"path": "/x", "chunks": "x"}):
            st, body, _ = self.req("POST", "/_control/script", bad)
            self.assertEqual(st, 400, bad)
        st, _, _ = self.req("POST", "/_control/script", raw="{")
        self.assertEqual(st, 400)
        st, _, _ = self.req("GET", "/_control/nothing")
        self.assertEqual(st, 404)

    def test_requests_recorded_and_reset(self):
        self.req("POST", "/v1/chat/completions?x=1",
                 {"model": "gpt-test", "messages": [{"role": "user", "content": "q"}]},
                 {"Authorization": "Bearer sk-good", "X-Trace": "T"})
        self.req("POST", "/api/chat", raw="not json")
        st, recs, _ = self.req("GET", "/_control/requests")
        self.assertEqual(st, 200)
        self.assertEqual(len(recs), 2)  # control calls are not recorded
        r0 = recs[0]
        self.assertEqual((r0["method"], r0["path"], r0["query"]),
                         ("POST", "/v1/chat/completions", {"x": "1"}))
        self.assertEqual(r0["headers"]["x-trace"], "T")
        self.assertEqual(r0["body"]["messages"][0]["content"], "q")
        self.assertEqual(recs[1]["body"], "not json")
        self.req("POST", "/_control/reset")
        self.assertEqual(self.req("GET", "/_control/requests")[1], [])

    def test_keep_alive_and_concurrency(self):
        c = self.conn()
        try:
            for _ in range(3):
                st, body, _ = self.req("POST", "/v1/chat/completions",
                                       {"model": "gpt-test",
                                        "messages": [{"role": "user", "content": "k"}]},
                                       OA_KEY, conn=c)
                self.assertEqual(st, 200)
            sock = c.sock
            self.assertIsNotNone(sock)
        finally:
            c.close()
        # one slow request must not block others
        self.script({"path": "/api/chat", "delay_ms": 4000, "status": 200, "body": {"slow": 1}})
        results = []

        def slow():
            results.append(self.ol_chat()[0])
        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.1)
        t0 = time.monotonic()
        statuses = []
        threads = [threading.Thread(target=lambda: statuses.append(self.oa_chat()[0]))
                   for _ in range(10)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(10)
        self.assertLess(time.monotonic() - t0, 3.0)
        self.assertEqual(statuses, [200] * 10)
        t.join(10)
        self.assertEqual(results, [200])


class PresetTest(FakeTestCase):
    def preset(self, name, path=None):
        spec = {"preset": name}
        if path:
            spec["path"] = path
        st, body, _ = self.req("POST", "/_control/script", spec)
        self.assertEqual(st, 200, body)

    def test_openai_presets(self):
        self.preset("openai_rate_limit")
        st, body, hdrs = self.oa_chat()
        self.assertEqual((st, body["error"]["code"], hdrs.get("retry-after")),
                         (429, "rate_limit_exceeded", "1"))
        self.assertEqual(hdrs.get("x-ratelimit-reset-requests"), "1s")
        self.preset("openai_quota")
        st, body, hdrs = self.oa_chat()
        self.assertEqual((st, body["error"]["code"], body["error"]["type"]),
                         (429, "insufficient_quota", "insufficient_quota"))
        self.assertNotIn("retry-after", hdrs)
        self.preset("openai_500")
        st, body, _ = self.oa_chat()
        self.assertEqual((st, body["error"]["type"]), (500, "server_error"))
        self.preset("openai_503")
        self.assertEqual(self.oa_chat()[0], 503)
        self.preset("openai_rate_limit", "/v1/embeddings")
        st, _, _ = self.req("POST", "/v1/embeddings", {"model": "embed-test", "input": "a"},
                            OA_KEY)
        self.assertEqual(st, 429)

    def test_openai_error_in_stream(self):
        self.preset("openai_error_in_stream")
        st, text, _ = self.oa_chat("abc def", stream=True)
        self.assertEqual(st, 200)
        evs = self.sse_json(text)
        self.assertNotIn((None, "[DONE]"), evs)
        self.assertIn("error", evs[-1][1])
        self.assertEqual(evs[0][1]["choices"][0]["delta"]["role"], "assistant")
        self.preset("openai_error_in_stream")
        st, body, _ = self.oa_chat("non-stream")
        self.assertEqual(st, 500)

    def test_anthropic_presets(self):
        self.preset("anthropic_overloaded")
        st, body, hdrs = self.an_msg()
        self.assertEqual((st, body["error"]["type"]), (529, "overloaded_error"))
        self.assertIn("request-id", hdrs)
        self.preset("anthropic_rate_limit")
        st, body, hdrs = self.an_msg()
        self.assertEqual((st, body["error"]["type"], hdrs.get("retry-after")),
                         (429, "rate_limit_error", "1"))
        self.preset("anthropic_overloaded_in_stream")
        st, text, _ = self.an_msg(stream=True)
        self.assertEqual(st, 200)
        evs = [(n, json.loads(d)) for n, d in parse_sse(text)]
        self.assertEqual(evs[0][0], "message_start")
        self.assertEqual(evs[-1][0], "error")
        self.assertEqual(evs[-1][1]["error"]["type"], "overloaded_error")
        self.assertNotIn("message_stop", [n for n, _ in evs])

    def test_ollama_presets(self):
        self.preset("ollama_busy")
        st, body, _ = self.ol_chat()
        self.assertEqual(st, 503)
        self.assertTrue(body["error"].startswith("server busy"))
        self.preset("ollama_error_in_stream")
        st, text, _ = self.ol_chat()
        self.assertEqual(st, 200)
        lines = [json.loads(x) for x in text.splitlines()]
        self.assertIn("error", lines[-1])
        self.assertFalse(any(x.get("done") for x in lines))

    def test_in_stream_preset_still_checks_auth(self):
        self.preset("openai_error_in_stream")
        st, body, _ = self.req("POST", "/v1/chat/completions", {"model": "gpt-test"})
        self.assertEqual(st, 401)


class InProcessApiTest(unittest.TestCase):
    def test_python_api(self):
        with fake_llm.FakeLlm() as fake:
            self.assertTrue(fake.openai_base_url.endswith("/v1"))
            fake.script("/api/chat", preset="ollama_busy")
            c = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=TIMEOUT)
            c.request("POST", "/api/chat", body=b"{}")
            self.assertEqual(c.getresponse().status, 503)
            c.close()
            self.assertEqual(len(fake.wait_for_requests(1, "/api/chat", timeout=2)), 1)
            self.assertEqual(fake.requests[0]["path"], "/api/chat")

    def test_stop_releases_stalled_connection(self):
        fake = fake_llm.FakeLlm()
        fake.start()
        fake.script("/v1/messages", stall=True)
        errors = []

        def client():
            c = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=TIMEOUT)
            try:
                c.request("POST", "/v1/messages", body=b"{}")
                c.getresponse().read()
            except Exception as e:  # expected: connection closed
                errors.append(e)
            finally:
                c.close()
        t = threading.Thread(target=client)
        t.start()
        fake.wait_for_requests(1, timeout=3)
        t0 = time.monotonic()
        fake.stop()
        t.join(5)
        self.assertFalse(t.is_alive())
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(len(errors), 1)


class CommandLineTest(unittest.TestCase):
    def test_port_line_and_sigterm(self):
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_llm.py"), "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            line = proc.stdout.readline().decode()
            self.assertRegex(line, r"^FAKE_LLM_PORT=\d+\n$")
            port = int(line.strip().split("=")[1])
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            c.request("GET", "/api/version")
            self.assertEqual(c.getresponse().status, 200)
            c.close()
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(10)
            self.assertEqual(rc, 0)
            self.assertEqual(proc.stdout.read(), b"")  # exactly one line on stdout
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
            proc.stdout.close()
            proc.stderr.close()


if __name__ == "__main__":
    unittest.main()
