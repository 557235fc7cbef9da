"""Model tests (`POST /provider/models/{llm,embedding}/{uuid}/test`) against the fake provider
of tests/fakes/fake_llm.py: the call really reaches it with the right path, headers, model id and
prompt, failures are classified (502/504), and slow providers do not hold the server's threads."""

import json
import threading
import time
import unittest

from harness import ServerTestCase, unknown_uuid

from fake_clients import FakeProvider


class ModelTestCase(ServerTestCase):
    fake = None

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeProvider()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.fake.stop()

    def setUp(self):
        self.fake.reset()

    def llm(self, requester="openai-chat-completions", path="/v1", keys=("sk-good-1",),
            name="gpt-test", **extra):
        provider = self.make_provider(requester=requester, base_url=self.fake.base + path,
                                      api_keys=keys)
        return self.make_model(provider, name=name, **extra)

    def call_test(self, uuid, body=None):
        return self.as_user("POST", "/api/v1/provider/models/llm/%s/test" % uuid,
                            body if body is not None else {})


class LlmModelTest(ModelTestCase):

    def test_reaches_the_provider_with_path_key_model_and_prompt(self):
        model = self.llm()
        status, resp, _ = self.call_test(model, {"prompt": "Hi there"})
        data = self.assertOk(status, resp)
        self.assertEqual(data["reply"], "echo: Hi there")
        self.assertIsInstance(data["latency_ms"], int)
        reqs = self.fake.requests()
        self.assertEqual(len(reqs), 1)
        self.assertEqual(reqs[0]["method"], "POST")
        self.assertEqual(reqs[0]["path"], "/v1/chat/completions")
        self.assertEqual(reqs[0]["headers"]["authorization"], "Bearer sk-good-1")
        self.assertEqual(reqs[0]["body"]["model"], "gpt-test")
        self.assertEqual(reqs[0]["body"]["messages"][-1]["role"], "user")
        self.assertIn("Hi there", json.dumps(reqs[0]["body"]["messages"][-1]["content"]))

    def test_default_prompt_and_requester_config_model(self):
        model = self.llm(name="display name", requester_config={"model": "gpt-test", "args": {}},
                         extra_args={"temperature": 0.25})
        data = self.assertOk(*self.call_test(model)[:2])
        self.assertEqual(data["reply"], "echo: Hello")
        body = self.fake.requests()[0]["body"]
        self.assertEqual(body["model"], "gpt-test")
        self.assertEqual(body["temperature"], 0.25)

    def test_failures_are_classified(self):
        cases = [
            ("bad key", dict(keys=("sk-bad-secret-1",)), None, 502, "bad API key"),
            ("unknown model", dict(name="no-such-model"), None, 502, "unknown model"),
            ("rate limited", {}, dict(path="/v1/chat/completions", times=5,
                                      preset="openai_quota"), 502, "rate limited"),
            ("provider 500", {}, dict(path="/v1/chat/completions", times=5,
                                      preset="openai_500"), 502, "provider error"),
        ]
        for label, model_kw, script, status, fragment in cases:
            with self.subTest(label):
                self.fake.reset()
                if script:
                    self.fake.script_next(**script)
                model = self.llm(**model_kw)
                got, resp, _ = self.call_test(model)
                self.assertError(got, resp, status, fragment)
                self.assertNotIn("sk-bad-secret-1", resp["msg"])

    def test_connection_refused(self):
        provider = self.make_provider(base_url="http://127.0.0.1:1/v1")
        model = self.make_model(provider)
        status, resp, _ = self.call_test(model)
        self.assertError(status, resp, 502, "connection failed")

    def test_anthropic_and_ollama(self):
        model = self.llm(requester="anthropic-messages", path="", keys=("sk-good-a",),
                         name="claude-test")
        self.assertEqual(self.assertOk(*self.call_test(model)[:2])["reply"], "echo: Hello")
        req = self.fake.requests()[-1]
        self.assertEqual(req["path"], "/v1/messages")
        self.assertEqual(req["headers"]["x-api-key"], "sk-good-a")
        self.assertIn("anthropic-version", req["headers"])
        self.assertIn("max_tokens", req["body"])

        model = self.llm(requester="ollama-chat", path="", keys=(), name="llama-test")
        self.assertEqual(self.assertOk(*self.call_test(model)[:2])["reply"], "echo: Hello")
        self.assertEqual(self.fake.requests()[-1]["path"], "/api/chat")

    def test_unsaved_model_described_in_the_body(self):
        before = len(self.ok("GET", "/api/v1/provider/providers")["providers"])
        body = {"name": "gpt-test", "prompt": "unsaved",
                "provider": {"requester": "openai-chat-completions",
                             "base_url": self.fake.base + "/v1", "api_keys": ["sk-good-9"]}}
        data = self.assertOk(*self.call_test("_", body)[:2])
        self.assertEqual(data["reply"], "echo: unsaved")
        self.assertEqual(len(self.ok("GET", "/api/v1/provider/providers")["providers"]), before)
        status, resp, _ = self.call_test("_", {"name": "gpt-test"})
        self.assertError(status, resp, 400, "provider")

    def test_bad_paths(self):
        self.assertError(*self.call_test(unknown_uuid())[:2], 404)
        self.assertError(*self.call_test("not-a-uuid")[:2], 400)
        status, resp, _ = self.as_user("POST", "/api/v1/provider/models/llm/%s/test" %
                                       unknown_uuid(), raw_body="[1]")
        self.assertError(status, resp, 400)

    def test_slow_providers_do_not_hold_server_threads(self):
        model = self.llm()
        self.fake.script_next(path="/v1/chat/completions", times=40, delay_ms=500,
                         body={"id": "x", "object": "chat.completion", "created": 1,
                               "model": "gpt-test",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant",
                                                        "content": "slow"}}]})
        results = []
        start = time.monotonic()
        threads = [threading.Thread(target=lambda: results.append(self.call_test(model)[0]))
                   for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        elapsed = time.monotonic() - start
        self.assertEqual(results, [200] * 40)
        # 40 calls of 0.5 s on 4 blocking threads would take 5 s if each held a thread.
        self.assertLess(elapsed, 3.0)


class EmbeddingModelTest(ModelTestCase):

    def test_dimensions_are_learned_and_stored(self):
        provider = self.make_provider(base_url=self.fake.base + "/v1", api_keys=("sk-good-1",))
        model = self.make_model(provider, kind="embedding", name="embed-test")
        self.assertIsNone(self.ok("GET", "/api/v1/provider/models/embedding/" + model)
                          ["model"]["dimensions"])
        status, resp, _ = self.as_user(
            "POST", "/api/v1/provider/models/embedding/%s/test" % model, {"text": "vector me"})
        data = self.assertOk(status, resp)
        self.assertEqual(data["dimensions"], 8)
        req = self.fake.requests()[0]
        self.assertEqual(req["path"], "/v1/embeddings")
        self.assertIn("vector me", json.dumps(req["body"]["input"]))
        self.assertEqual(self.ok("GET", "/api/v1/provider/models/embedding/" + model)
                         ["model"]["dimensions"], 8)


class TimeoutTest(ModelTestCase):
    server_env = {"LLM__REQUEST_TIMEOUT_SECONDS": "1", "LLM__IDLE_TIMEOUT_SECONDS": "1",
                  "LLM__MAX_ATTEMPTS": "1"}

    def test_a_provider_that_never_answers_gives_504(self):
        model = self.llm()
        self.fake.script_next(path="/v1/chat/completions", times=1, stall=True)
        start = time.monotonic()
        status, resp, _ = self.call_test(model)
        self.assertError(status, resp, 504, "timeout")
        self.assertLess(time.monotonic() - start, 10)


if __name__ == "__main__":
    unittest.main()
