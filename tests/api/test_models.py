"""LLM and embedding models (the same tests run for both kinds where the contract agrees)."""

import time
import unittest

from harness import ServerTestCase, unknown_uuid

LLM = "/api/v1/provider/models/llm"
EMB = "/api/v1/provider/models/embedding"
COMMON_FIELDS = {"uuid", "name", "description", "provider_uuid", "requester", "requester_config",
                 "api_keys", "extra_args", "prefered_ranking", "created_at", "updated_at"}
SECRET = "sk-model-secret-0123456789abcdefghij"


class ModelTestBase(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        status, body, _ = cls.srv.req(
            "POST", "/api/v1/provider/providers",
            {"name": "OpenAI", "requester": "openai-chat-completions",
             "base_url": "https://api.openai.com/v1", "api_keys": [SECRET]}, token=cls.token)
        cls.provider = body["data"]["uuid"]


class ModelCrudTest(ModelTestBase):

    def check_model(self, m, kind, name):
        expected = set(COMMON_FIELDS)
        expected.add("abilities" if kind == "llm" else "dimensions")
        self.assertTrue(expected <= set(m), sorted(expected - set(m)))
        self.assertUuid(m["uuid"])
        self.assertEqual(m["name"], name)
        self.assertEqual(m["provider_uuid"], self.provider)
        self.assertEqual(m["requester"], "openai-chat-completions")
        self.assertIsInstance(m["requester_config"], dict)
        self.assertIsInstance(m["requester_config"]["args"], dict)
        self.assertIsInstance(m["extra_args"], dict)
        self.assertEqual(m["api_keys"], [{"name": "OpenAI", "keys": [SECRET]}])
        self.assertTimestamp(m["created_at"])
        self.assertTimestamp(m["updated_at"])
        if kind == "llm":
            self.assertIsInstance(m["abilities"], list)

    def test_crud_both_kinds(self):
        for kind, base in (("llm", LLM), ("embedding", EMB)):
            with self.subTest(kind):
                extra = {"description": "d", "extra_args": {"temperature": 0.2},
                         "prefered_ranking": 3}
                if kind == "llm":
                    extra["abilities"] = ["chat", "vision", "func_call"]
                uid = self.make_model(self.provider, kind, "model-" + kind, **extra)
                self.assertUuid(uid)
                m = self.ok("GET", "%s/%s" % (base, uid))["model"]
                self.check_model(m, kind, "model-" + kind)
                # requester_config.model defaults to the name.
                self.assertEqual(m["requester_config"]["model"], "model-" + kind)
                self.assertEqual(m["description"], "d")
                self.assertEqual(m["extra_args"], {"temperature": 0.2})
                self.assertEqual(m["prefered_ranking"], 3)
                if kind == "llm":
                    self.assertEqual(m["abilities"], ["chat", "vision", "func_call"])
                # GET one nests the provider.
                self.assertEqual(m["provider"]["uuid"], self.provider)
                self.assertEqual(m["provider"]["requester"], "openai-chat-completions")

                listed = self.ok("GET", base)["models"]
                mine = [x for x in listed if x["uuid"] == uid]
                self.assertEqual(len(mine), 1)
                self.check_model(mine[0], kind, "model-" + kind)

                time.sleep(0.01)
                self.ok("PUT", "%s/%s" % (base, uid),
                        {"name": "renamed", "requester_config": {"model": "upstream-id",
                                                                 "args": {"top_p": 1}}})
                m2 = self.ok("GET", "%s/%s" % (base, uid))["model"]
                self.assertEqual(m2["name"], "renamed")
                self.assertEqual(m2["requester_config"], {"model": "upstream-id",
                                                          "args": {"top_p": 1}})
                self.assertEqual(m2["description"], "d")
                self.assertEqual(m2["created_at"], m["created_at"])
                self.assertGreaterEqual(m2["updated_at"], m["updated_at"])

                self.assertIsNone(self.ok("DELETE", "%s/%s" % (base, uid)))
                status, resp, _ = self.as_user("GET", "%s/%s" % (base, uid))
                self.assertError(status, resp, 404)
                status, resp, _ = self.as_user("DELETE", "%s/%s" % (base, uid))
                self.assertError(status, resp, 404)

    def test_kinds_are_separate(self):
        llm = self.make_model(self.provider, "llm", "only-llm")
        emb = self.make_model(self.provider, "embedding", "only-emb")
        status, resp, _ = self.as_user("GET", "%s/%s" % (EMB, llm))
        self.assertError(status, resp, 404)
        status, resp, _ = self.as_user("GET", "%s/%s" % (LLM, emb))
        self.assertError(status, resp, 404)
        self.assertNotIn(llm, [m["uuid"] for m in self.ok("GET", EMB)["models"]])
        self.assertNotIn(emb, [m["uuid"] for m in self.ok("GET", LLM)["models"]])

    def test_filter_by_provider(self):
        other = self.make_provider("other")
        mine = self.make_model(other, "llm", "filtered")
        self.make_model(self.provider, "llm", "unfiltered")
        got = self.ok("GET", "%s?provider_uuid=%s" % (LLM, other))["models"]
        self.assertEqual([m["uuid"] for m in got], [mine])
        self.assertEqual(self.ok("GET", "%s?provider_uuid=%s" % (LLM, unknown_uuid()))["models"],
                         [])
        status, resp, _ = self.as_user("GET", LLM + "?provider_uuid=bogus")
        self.assertError(status, resp, 400, "provider_uuid")

    def test_include_secret_false_masks_model_keys(self):
        uid = self.make_model(self.provider, "llm", "masked")
        for path in ("%s/%s?include_secret=false" % (LLM, uid), LLM + "?include_secret=false"):
            with self.subTest(path):
                data = self.ok("GET", path)
                m = data["model"] if "model" in data else \
                    [x for x in data["models"] if x["uuid"] == uid][0]
                keys = m["api_keys"][0]["keys"]
                self.assertEqual(len(keys), 1)
                self.assertNotIn(SECRET, keys[0])
                self.assertNotIn(SECRET, str(m))

    def test_langbot_inline_provider(self):
        before = {p["uuid"] for p in self.ok("GET", "/api/v1/provider/providers")["providers"]}
        uid = self.ok("POST", LLM, {
            "name": "claude-x", "abilities": ["chat"],
            "provider": {"requester": "anthropic-messages",
                         "base_url": "https://api.anthropic.com/v1",
                         "api_keys": ["sk-ant-123"]}})["uuid"]
        m = self.ok("GET", "%s/%s" % (LLM, uid))["model"]
        self.assertEqual(m["requester"], "anthropic-messages")
        self.assertEqual(m["api_keys"][0]["keys"], ["sk-ant-123"])
        providers = self.ok("GET", "/api/v1/provider/providers")["providers"]
        new = [p for p in providers if p["uuid"] not in before]
        self.assertEqual(len(new), 1, new)
        self.assertEqual(new[0]["uuid"], m["provider_uuid"])
        self.assertEqual(new[0]["base_url"], "https://api.anthropic.com/v1")
        self.assertEqual(new[0]["llm_count"], 1)

    def test_errors(self):
        existing = self.make_model(self.provider, "llm", "exists")
        p = self.provider
        cases = [
            ("malformed JSON", "POST", LLM, None, '{"name"', 400, None),
            ("array body", "POST", EMB, None, '["x"]', 400, "object"),
            ("missing name", "POST", LLM, {"provider_uuid": p}, None, 400, "name"),
            ("name of wrong type", "POST", LLM, {"name": 3, "provider_uuid": p}, None, 400,
             "name"),
            ("missing provider", "POST", LLM, {"name": "x"}, None, 400, "provider_uuid"),
            ("missing provider (embedding)", "POST", EMB, {"name": "x"}, None, 400,
             "provider_uuid"),
            ("unknown provider_uuid", "POST", LLM, {"name": "x", "provider_uuid": unknown_uuid()},
             None, 400, "provider_uuid"),
            ("unknown provider_uuid (embedding)", "POST", EMB,
             {"name": "x", "provider_uuid": unknown_uuid()}, None, 400, "provider_uuid"),
            ("malformed provider_uuid", "POST", LLM, {"name": "x", "provider_uuid": "p-1"}, None,
             400, "provider_uuid"),
            ("provider_uuid of wrong type", "POST", LLM, {"name": "x", "provider_uuid": 12}, None,
             400, "provider_uuid"),
            ("unknown ability", "POST", LLM,
             {"name": "x", "provider_uuid": p, "abilities": ["telepathy"]}, None, 400,
             "abilities"),
            ("abilities not an array", "POST", LLM,
             {"name": "x", "provider_uuid": p, "abilities": "chat"}, None, 400, "abilities"),
            ("requester_config not an object", "POST", LLM,
             {"name": "x", "provider_uuid": p, "requester_config": "gpt"}, None, 400,
             "requester_config"),
            ("requester_config.model not a string", "POST", LLM,
             {"name": "x", "provider_uuid": p, "requester_config": {"model": 4}}, None, 400,
             "requester_config.model"),
            ("requester_config.args not an object", "POST", EMB,
             {"name": "x", "provider_uuid": p, "requester_config": {"args": []}}, None, 400,
             "requester_config.args"),
            ("extra_args not an object", "POST", LLM,
             {"name": "x", "provider_uuid": p, "extra_args": [1]}, None, 400, "extra_args"),
            ("prefered_ranking not an integer", "POST", LLM,
             {"name": "x", "provider_uuid": p, "prefered_ranking": "1"}, None, 400,
             "prefered_ranking"),
            ("inline provider without requester", "POST", LLM,
             {"name": "x", "provider": {"base_url": "https://a.example"}}, None, 400,
             "provider.requester"),
            ("inline provider with unknown requester", "POST", LLM,
             {"name": "x", "provider": {"requester": "zzz", "base_url": "https://a.example"}},
             None, 400, "requester"),
            ("inline provider not an object", "POST", LLM, {"name": "x", "provider": "openai"},
             None, 400, "provider"),
            ("get: unknown uuid", "GET", "%s/%s" % (LLM, unknown_uuid()), None, None, 404,
             "model"),
            ("get: unknown uuid (embedding)", "GET", "%s/%s" % (EMB, unknown_uuid()), None, None,
             404, "model"),
            ("get: malformed uuid", "GET", LLM + "/xyz", None, None, 400, "model_uuid"),
            ("put: unknown uuid", "PUT", "%s/%s" % (LLM, unknown_uuid()), {"name": "y"}, None,
             404, None),
            ("put: malformed uuid", "PUT", EMB + "/xyz", {"name": "y"}, None, 400, "model_uuid"),
            ("put: unknown provider_uuid", "PUT", "%s/%s" % (LLM, existing),
             {"provider_uuid": unknown_uuid()}, None, 400, "provider_uuid"),
            ("put: unknown ability", "PUT", "%s/%s" % (LLM, existing), {"abilities": ["x"]},
             None, 400, "abilities"),
            ("put: name of wrong type", "PUT", "%s/%s" % (LLM, existing), {"name": {}}, None,
             400, "name"),
            ("delete: unknown uuid", "DELETE", "%s/%s" % (EMB, unknown_uuid()), None, None, 404,
             None),
            ("delete: malformed uuid", "DELETE", LLM + "/1", None, None, 400, "model_uuid"),
        ]
        for desc, method, path, body, raw, code, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.as_user(method, path, body, raw_body=raw)
                self.assertError(status, resp, code, fragment)
        m = self.ok("GET", "%s/%s" % (LLM, existing))["model"]
        self.assertEqual((m["name"], m["provider_uuid"]), ("exists", self.provider))

    def test_move_model_to_other_provider(self):
        other = self.make_provider("target", requester="ollama-chat",
                                   base_url="http://127.0.0.1:11434", api_keys=[])
        uid = self.make_model(self.provider, "llm", "mover")
        self.ok("PUT", "%s/%s" % (LLM, uid), {"provider_uuid": other})
        m = self.ok("GET", "%s/%s" % (LLM, uid))["model"]
        self.assertEqual((m["provider_uuid"], m["requester"]), (other, "ollama-chat"))
        p = self.ok("GET", "/api/v1/provider/providers/" + other)["provider"]
        self.assertEqual(p["llm_count"], 1)


if __name__ == "__main__":
    unittest.main()
