"""Self-test of fake_embeddings.py against the documented OpenAI embeddings protocol
(/work/shared/protocols/llm.md 1.6, 1.7) and its control API. Standard library only.

Run: cd tests/fakes && python3 -m unittest -v test_fake_embeddings
"""

import base64
import http.client
import json
import os
import socket
import struct
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "api"))
import fake_embeddings  # noqa: E402

KEY = fake_embeddings.DEFAULT_KEY
TIMEOUT = 10.0


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b))


class FakeEmbeddingsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = fake_embeddings.FakeEmbeddings()
        cls.port = cls.fake.start()

    @classmethod
    def tearDownClass(cls):
        cls.fake.stop()

    def setUp(self):
        self.fake.reset()

    # -- helpers ------------------------------------------------------------------------------
    def request(self, method, path, body=None, key=KEY, raw=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = "Bearer " + key
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                            else None)
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        return resp.status, dict((k.lower(), v) for k, v in resp.getheaders()), (
            json.loads(payload) if payload else None)

    def embed(self, inp, model="embed-test", **extra):
        body = {"model": model, "input": inp}
        body.update(extra)
        return self.request("POST", "/v1/embeddings", body)

    def vectors(self, inp, model="embed-test", **extra):
        status, _, body = self.embed(inp, model, **extra)
        self.assertEqual(status, 200, body)
        return [d["embedding"] for d in body["data"]]

    def control(self, method, path, body=None):
        return self.request(method, path, body, key=None)

    def assert_oa_error(self, status, body, want_status, code=None, type_="invalid_request_error"):
        self.assertEqual(status, want_status, body)
        self.assertEqual(set(body["error"]), {"message", "type", "param", "code"})
        self.assertEqual(body["error"]["type"], type_)
        self.assertEqual(body["error"]["code"], code)

    # -- protocol -----------------------------------------------------------------------------
    def test_response_shape_and_usage(self):
        status, headers, body = self.embed("hello world")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(body["object"], "list")
        self.assertEqual(body["model"], "embed-test")
        self.assertEqual(len(body["data"]), 1)
        self.assertEqual(body["data"][0]["object"], "embedding")
        self.assertEqual(body["data"][0]["index"], 0)
        self.assertEqual(len(body["data"][0]["embedding"]), 256)
        self.assertEqual(body["usage"], {"prompt_tokens": 3, "total_tokens": 3})  # 11 bytes / 4
        norm = sum(v * v for v in body["data"][0]["embedding"])
        self.assertAlmostEqual(norm, 1.0, places=5)

    def test_float_and_base64_agree(self):
        texts = ["alpha beta", "gamma delta epsilon", "知识库检索"]
        floats = self.vectors(texts, encoding_format="float")
        _, _, body = self.embed(texts, encoding_format="base64")
        for i, d in enumerate(body["data"]):
            self.assertIsInstance(d["embedding"], str)
            raw = base64.b64decode(d["embedding"])
            self.assertEqual(len(raw), 4 * 256)
            self.assertEqual(list(struct.unpack("<256f", raw)), floats[i])

    def test_default_format_is_float(self):
        self.assertIsInstance(self.vectors("x")[0], list)

    def test_index_order_matches_inputs(self):
        texts = ["one apple", "two bananas", "three cherries", "four dates", "five eggs"]
        _, _, body = self.embed(texts)
        self.assertEqual([d["index"] for d in body["data"]], list(range(5)))
        for i, d in enumerate(body["data"]):
            self.assertEqual(d["embedding"], self.fake.vector(texts[i]))
        self.assertEqual(len({tuple(d["embedding"]) for d in body["data"]}), 5)

    def test_dimensions_honoured(self):
        for dims in (1, 64, 1536, 3072):
            vec = self.vectors("some text", dimensions=dims)[0]
            self.assertEqual(len(vec), dims)
        _, _, body = self.embed("x", dimensions=64, encoding_format="base64")
        self.assertEqual(len(base64.b64decode(body["data"][0]["embedding"])), 64 * 4)
        status, _, body = self.embed("x", dimensions=0)
        self.assert_oa_error(status, body, 400, "integer_below_min_value")
        self.assertEqual(body["error"]["param"], "dimensions")
        status, _, body = self.embed("x", dimensions=3073)
        self.assert_oa_error(status, body, 400)
        status, _, body = self.embed("x", dimensions="8")
        self.assert_oa_error(status, body, 400, "integer_below_min_value")

    def test_token_array_inputs(self):
        status, _, body = self.embed([1, 2, 3])
        self.assertEqual(status, 200)
        self.assertEqual(len(body["data"]), 1)
        self.assertEqual(body["usage"]["prompt_tokens"], 3)
        status, _, body = self.embed([[1, 2], [3], [1, 2]])
        self.assertEqual(status, 200)
        self.assertEqual(len(body["data"]), 3)
        self.assertEqual(body["usage"]["total_tokens"], 5)
        self.assertEqual(body["data"][0]["embedding"], body["data"][2]["embedding"])
        self.assertGreater(cosine(body["data"][0]["embedding"],
                                  self.vectors([[2, 1, 9]])[0]), 0.3)  # shared token ids

    def test_auth(self):
        status, _, body = self.request("POST", "/v1/embeddings",
                                       {"model": "embed-test", "input": "x"}, key=None)
        self.assert_oa_error(status, body, 401, None)
        status, _, body = self.request("POST", "/v1/embeddings",
                                       {"model": "embed-test", "input": "x"}, key="sk-wrong-99")
        self.assert_oa_error(status, body, 401, "invalid_api_key")
        self.assertNotIn("sk-wrong-99", body["error"]["message"])
        status, _, body = self.request("GET", "/v1/models", key="sk-wrong-99")
        self.assert_oa_error(status, body, 401, "invalid_api_key")
        self.fake.configure(api_key="sk-other")
        self.assertEqual(self.embed("x")[0], 401)
        self.assertEqual(self.request("POST", "/v1/embeddings", {"model": "embed-test",
                                                                 "input": "x"},
                                      key="sk-other")[0], 200)

    def test_limits(self):
        status, _, body = self.embed(["w%d" % i for i in range(2048)], dimensions=4)
        self.assertEqual(status, 200)
        self.assertEqual(len(body["data"]), 2048)
        self.assertEqual(body["data"][2047]["index"], 2047)
        for bad in ("", [], ["ok", ""], [[]], [1, "a"], [-1], {"text": "x"}, None, 5, [True]):
            status, _, body = self.embed(bad)
            self.assert_oa_error(status, body, 400)
            self.assertIn("'$.input' is invalid", body["error"]["message"])
        status, _, body = self.embed(["w"] * 2049)
        self.assert_oa_error(status, body, 400)
        status, _, body = self.embed("x" * (4 * 8192 + 1))  # 8193 tokens at 4 bytes each
        self.assert_oa_error(status, body, 400)
        self.assertIn("maximum context length is 8192 tokens", body["error"]["message"])
        self.assertEqual(self.embed("x" * (4 * 8192))[0], 200)
        self.fake.configure(max_request_tokens=10)
        status, _, body = self.embed(["a" * 20, "b" * 24])
        self.assert_oa_error(status, body, 400, "max_tokens_per_request")
        self.assertEqual(body["error"]["message"], "Requested 11 tokens, max 10 tokens per request")

    def test_bad_requests(self):
        status, _, body = self.request("POST", "/v1/embeddings", raw=b"{not json")
        self.assert_oa_error(status, body, 400)
        status, _, body = self.embed("x", encoding_format="binary")
        self.assert_oa_error(status, body, 400)
        self.assertEqual(body["error"]["param"], "encoding_format")
        status, _, body = self.request("POST", "/v1/embeddings", {"input": "x"})
        self.assert_oa_error(status, body, 400)
        status, _, body = self.request("POST", "/v1/embeddings", {"model": "embed-test"})
        self.assert_oa_error(status, body, 400, "missing_required_parameter")
        status, _, body = self.embed("x", model="text-embedding-3-small")
        self.assert_oa_error(status, body, 404, "model_not_found")
        status, _, body = self.request("POST", "/embeddings", {"model": "embed-test", "input": "x"})
        self.assert_oa_error(status, body, 404)

    def test_models(self):
        status, _, body = self.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual(body["object"], "list")
        self.assertEqual([m["id"] for m in body["data"]], ["embed-test", "embed-test-random"])
        self.assertEqual(body["data"][0]["object"], "model")
        status, _, body = self.request("GET", "/v1/models/embed-test")
        self.assertEqual((status, body["id"]), (200, "embed-test"))
        status, _, body = self.request("GET", "/v1/models/nope")
        self.assert_oa_error(status, body, 404, "model_not_found")
        self.fake.configure(models=["bge-m3"])
        self.assertEqual(self.request("GET", "/v1/models")[2]["data"][0]["id"], "bge-m3")
        self.assertEqual(self.embed("x", model="bge-m3")[0], 200)

    # -- vectors ------------------------------------------------------------------------------
    def test_deterministic_across_calls_and_instances(self):
        text = "Deterministic vectors, please: 同じ文章"
        first = self.vectors(text)[0]
        self.assertEqual(self.vectors([text, "other"])[0], first)
        other = fake_embeddings.FakeEmbeddings()
        self.assertEqual(other.vector(text), first)
        self.assertEqual(self.vectors(text, model="embed-test-random")[0],
                         self.vectors(text, model="embed-test-random")[0])

    def test_shared_words_are_close_unrelated_are_not(self):
        doc, query, other = self.vectors([
            "Our refund policy: customers may return products within 30 days for a full refund.",
            "What is the refund policy for returned products?",
            "Photosynthesis converts sunlight, water and carbon dioxide into glucose."])
        self.assertGreater(cosine(doc, query), 0.3)
        self.assertLess(abs(cosine(doc, other)), 0.15)
        self.assertLess(abs(cosine(query, other)), 0.15)
        self.assertGreater(cosine(doc, query), cosine(doc, other) + 0.2)
        # CJK: every character is a word, so a question shares the document's characters.
        zdoc, zquery, zother = self.vectors(["退款政策：三十天内可以全额退款。", "退款政策是什么？",
                                             "今天天气很好，适合去公园散步。"])
        self.assertGreater(cosine(zdoc, zquery), 0.3)
        self.assertGreater(cosine(zdoc, zquery), cosine(zdoc, zother) + 0.2)
        # Case and punctuation do not matter; stop words alone do not make texts related.
        self.assertAlmostEqual(cosine(*self.vectors(["Refund POLICY!", "refund policy"])), 1.0,
                               places=5)
        self.assertEqual(fake_embeddings.words("The cat, and THE hat."), ["cat", "hat"])

    def test_random_mode(self):
        doc, query = self.vectors(["refund policy for products", "refund policy"],
                                  model="embed-test-random")
        self.assertLess(abs(cosine(doc, query)), 0.25)
        same = self.vectors(["refund policy"], model="embed-test-random")[0]
        self.assertEqual(same, query)
        self.assertAlmostEqual(sum(v * v for v in same), 1.0, places=5)
        semantic = self.vectors(["refund policy for products", "refund policy"])
        self.assertGreater(cosine(*semantic), 0.5)
        self.fake.configure(mode="random")  # every model now misses
        self.assertEqual(self.vectors(["refund policy"])[0], query)

    def test_text_without_words_still_gets_a_unit_vector(self):
        vec = self.vectors("?!… ---")[0]
        self.assertAlmostEqual(sum(v * v for v in vec), 1.0, places=5)

    # -- control API --------------------------------------------------------------------------
    def test_calls_are_recorded(self):
        self.embed(["a b", "c d", "e"])
        self.embed("single", dimensions=32, encoding_format="base64")
        self.request("POST", "/v1/embeddings", {"model": "embed-test", "input": "x"}, key="bad")
        status, _, calls = self.control("GET", "/_control/calls")
        self.assertEqual(status, 200)
        self.assertEqual((calls["count"], calls["ok"], calls["failed"]), (3, 2, 1))
        self.assertEqual(calls["batch_sizes"], [3, 1, 0])
        self.assertEqual(calls["inputs_total"], 4)
        first, second, third = calls["calls"]
        self.assertEqual(first["inputs"], ["a b", "c d", "e"])
        self.assertEqual((first["model"], first["status"]), ("embed-test", 200))
        self.assertEqual((second["dimensions"], second["encoding_format"]), (32, "base64"))
        self.assertEqual(third["status"], 401)
        self.control("POST", "/_control/reset", {})
        self.assertEqual(self.control("GET", "/_control/calls")[2]["count"], 0)

    def test_fail_next_calls(self):
        status, _, body = self.control("POST", "/_control/fail", {"status": 500, "times": 2})
        self.assertEqual(status, 200)
        self.assertEqual(body["pending"][0]["times"], 2)
        for _ in range(2):
            status, _, body = self.embed("x")
            self.assert_oa_error(status, body, 500, None, "server_error")
        self.assertEqual(self.embed("x")[0], 200)
        self.control("POST", "/_control/fail", {"status": 503})
        status, _, body = self.embed("x")
        self.assert_oa_error(status, body, 503, "slow_down", "service_unavailable_error")
        self.assertEqual(self.embed("x")[0], 200)

    def test_rate_limit_and_quota(self):
        self.control("POST", "/_control/fail", {"status": 429, "retry_after": 2})
        status, headers, body = self.embed("x")
        self.assert_oa_error(status, body, 429, "rate_limit_exceeded", "requests")
        self.assertEqual(headers["retry-after"], "2")
        self.assertEqual(headers["x-ratelimit-reset-requests"], "2s")
        self.control("POST", "/_control/fail", {"status": 429, "retry_after": 0.25})
        self.assertEqual(self.embed("x")[1]["retry-after"], "0.25")
        self.control("POST", "/_control/fail", {"status": 429, "quota": True})
        status, headers, body = self.embed("x")
        self.assert_oa_error(status, body, 429, "insufficient_quota", "insufficient_quota")
        self.assertNotIn("retry-after", headers)
        self.assertEqual(self.embed("x")[0], 200)

    def test_marker_failure(self):
        self.control("POST", "/_control/fail", {"marker": "POISON"})
        for _ in range(3):  # until reset, not just once
            status, _, body = self.embed(["fine", "this chunk has POISON inside"])
            self.assert_oa_error(status, body, 400)
        self.assertEqual(self.embed(["fine", "also fine"])[0], 200)
        self.control("POST", "/_control/fail", {"marker": "ONCE", "status": 500, "times": 1})
        self.assertEqual(self.embed("ONCE")[0], 500)
        self.assertEqual(self.embed("ONCE")[0], 200)
        self.control("POST", "/_control/reset", {})
        self.assertEqual(self.embed("POISON")[0], 200)

    def test_validation_errors_do_not_use_up_a_failure(self):
        self.control("POST", "/_control/fail", {"status": 500})
        self.assertEqual(self.embed("")[0], 400)
        self.assertEqual(self.embed("x")[0], 500)

    def test_close_drops_the_connection(self):
        self.control("POST", "/_control/fail", {"close": True})
        with self.assertRaises((http.client.HTTPException, ConnectionError, socket.timeout)):
            self.embed("x")
        self.assertEqual(self.embed("x")[0], 200)

    def test_latency_and_concurrency(self):
        self.control("POST", "/_control/config", {"latency_ms": 300})
        results = []
        threads = [threading.Thread(target=lambda: results.append(self.embed("x")[0]))
                   for _ in range(3)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        elapsed = time.monotonic() - start
        self.assertEqual(results, [200, 200, 200])
        self.assertGreaterEqual(elapsed, 0.3)
        self.assertLess(elapsed, 0.9 * 3)  # served side by side, not one after another
        self.assertEqual(self.control("GET", "/_control/calls")[2]["max_in_flight"], 3)

    def test_vector_endpoint_matches_calls(self):
        status, _, body = self.control("POST", "/_control/vector",
                                       {"input": "hello there", "dimensions": 16})
        self.assertEqual(status, 200)
        self.assertEqual(body["embedding"], self.vectors("hello there", dimensions=16)[0])
        status, _, body = self.control("POST", "/_control/vector",
                                       {"input": "hello", "model": "embed-test-random"})
        self.assertEqual(body["embedding"], self.vectors("hello", model="embed-test-random")[0])

    def test_bad_control_requests(self):
        for path, body in (("/_control/fail", {"status": 200}),
                           ("/_control/fail", {"times": 0}),
                           ("/_control/fail", {"marker": ""}),
                           ("/_control/fail", {"bogus": 1}),
                           ("/_control/config", {"mode": "clever"}),
                           ("/_control/config", {"latency_ms": -1}),
                           ("/_control/config", {"nope": 1}),
                           ("/_control/vector", {"input": ""})):
            status, _, reply = self.control("POST", path, body)
            self.assertEqual(status, 400, (path, body, reply))
            self.assertIn("error", reply)
        self.assertEqual(self.control("GET", "/_control/nothing")[0], 404)
        self.assertEqual(self.embed("x")[0], 200)  # nothing bad was queued


class CommandLineTest(unittest.TestCase):
    """The way tests/api starts it: fake_clients.FakeEmbeddings runs the script on port 0."""

    def test_start_call_stop(self):
        import fake_clients
        fake = fake_clients.FakeEmbeddings()
        try:
            self.assertTrue(fake.base_url.endswith("/v1"))
            conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=TIMEOUT)
            conn.request("POST", "/v1/embeddings",
                         json.dumps({"model": "embed-test", "input": ["a", "b"]}),
                         {"Authorization": "Bearer " + fake.api_key,
                          "Content-Type": "application/json"})
            resp = conn.getresponse()
            self.assertEqual(resp.status, 200)
            self.assertEqual(len(json.loads(resp.read())["data"]), 2)
            conn.close()
            self.assertEqual(fake.calls()["batch_sizes"], [2])
            fake.fail(status=500)
            fake.configure(latency_ms=1)
            self.assertEqual(fake.vector("a"), fake_embeddings.FakeEmbeddings().vector("a"))
            fake.reset()
            self.assertEqual(fake.calls()["count"], 0)
        finally:
            fake.stop()
        self.assertEqual(fake.proc.returncode, 0)


if __name__ == "__main__":
    unittest.main()
