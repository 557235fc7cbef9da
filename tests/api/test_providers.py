"""Model providers and the requester catalogue."""

import os
import time
import unittest

from harness import ServerTestCase, unknown_uuid

BASE = "/api/v1/provider/providers"
PROVIDER_FIELDS = {"uuid", "name", "requester", "base_url", "api_keys", "llm_count",
                   "embedding_count", "created_at", "updated_at"}
LANGBOT_REQUESTERS = ["openai-chat-completions", "anthropic-messages", "ollama-chat",
                      "deepseek-chat-completions", "moonshot-chat-completions",
                      "siliconflow-chat-completions", "openrouter-chat-completions",
                      "lmstudio-chat-completions", "gemini-chat-completions"]
SECRET = "sk-live-abcdefghijklmnopqrstuvwxyz012345"


class RequesterCatalogueTest(ServerTestCase):

    def test_list_has_langbot_names(self):
        reqs = self.ok("GET", "/api/v1/provider/requesters")["requesters"]
        names = {r["name"] for r in reqs}
        for name in LANGBOT_REQUESTERS:
            self.assertIn(name, names)

    def test_filter_by_model_type(self):
        llm = {r["name"] for r in self.ok("GET", "/api/v1/provider/requesters?model_type=llm")
               ["requesters"]}
        emb = {r["name"] for r in
               self.ok("GET", "/api/v1/provider/requesters?model_type=text-embedding")["requesters"]}
        self.assertIn("anthropic-messages", llm)
        self.assertNotIn("anthropic-messages", emb)
        self.assertIn("openai-chat-completions", emb)

    def test_get_one(self):
        r = self.ok("GET", "/api/v1/provider/requesters/openai-chat-completions")["requester"]
        self.assertEqual(r["name"], "openai-chat-completions")
        status, resp, _ = self.as_user("GET", "/api/v1/provider/requesters/no-such-requester")
        self.assertError(status, resp, 404, "no-such-requester")


class ProviderTest(ServerTestCase):

    def test_create_get_list(self):
        before = time.time()
        uid = self.make_provider("OpenAI", api_keys=[SECRET])
        self.assertUuid(uid)
        p = self.ok("GET", "%s/%s" % (BASE, uid))["provider"]
        self.assertEqual(set(p), PROVIDER_FIELDS)
        self.assertEqual(p["uuid"], uid)
        self.assertEqual(p["name"], "OpenAI")
        self.assertEqual(p["requester"], "openai-chat-completions")
        self.assertEqual(p["base_url"], "https://api.openai.com/v1")
        self.assertEqual(p["api_keys"], [SECRET])
        self.assertEqual((p["llm_count"], p["embedding_count"]), (0, 0))
        self.assertTimestamp(p["created_at"])
        self.assertTimestamp(p["updated_at"])
        self.assertEqual(p["created_at"][:4], time.strftime("%Y", time.gmtime(before)))
        listed = self.ok("GET", BASE)["providers"]
        self.assertIn(uid, [x["uuid"] for x in listed])
        for x in listed:
            self.assertEqual(set(x), PROVIDER_FIELDS)

    def test_api_keys_optional_and_api_key_credential(self):
        status, resp, _ = self.as_key("POST", BASE, {"name": "local", "requester": "ollama-chat",
                                                     "base_url": "http://127.0.0.1:11434"})
        uid = self.assertOk(status, resp)["uuid"]
        status, resp, _ = self.as_key("GET", "%s/%s" % (BASE, uid))
        self.assertEqual(self.assertOk(status, resp)["provider"]["api_keys"], [])

    def test_include_secret_false_masks_keys(self):
        uid = self.make_provider("masked", api_keys=[SECRET, "short"])
        for path in ("%s/%s?include_secret=false" % (BASE, uid), BASE + "?include_secret=false"):
            with self.subTest(path):
                data = self.ok("GET", path)
                p = data["provider"] if "provider" in data else \
                    [x for x in data["providers"] if x["uuid"] == uid][0]
                self.assertEqual(len(p["api_keys"]), 2)
                for shown in p["api_keys"]:
                    self.assertNotIn(SECRET, shown)
                    self.assertNotEqual(shown, "short")
                    self.assertNotIn(SECRET[8:-4], shown)
        p = self.ok("GET", "%s/%s?include_secret=true" % (BASE, uid))["provider"]
        self.assertEqual(p["api_keys"], [SECRET, "short"])

    def test_put_keeps_the_keys_whose_masks_it_sends_back(self):
        other = "sk-good-another-secret-key-0042"
        uid = self.make_provider("masks", api_keys=[SECRET, other, "short"])
        masked = self.ok("GET", "%s/%s?include_secret=false" % (BASE, uid))["provider"]["api_keys"]
        # Drop the first key, keep the others by their masks, add a new one.
        self.ok("PUT", "%s/%s" % (BASE, uid), {"api_keys": [masked[1], masked[2], "sk-good-new"]})
        p = self.ok("GET", "%s/%s?include_secret=true" % (BASE, uid))["provider"]
        self.assertEqual(p["api_keys"], [other, "short", "sk-good-new"])
        # A mask of a key the provider does not hold is stored as typed, not matched to another.
        self.ok("PUT", "%s/%s" % (BASE, uid), {"api_keys": ["sk-g...zzzz"]})
        p = self.ok("GET", "%s/%s?include_secret=true" % (BASE, uid))["provider"]
        self.assertEqual(p["api_keys"], ["sk-g...zzzz"])

    def test_scheme_of_base_url_is_case_insensitive(self):
        uid = self.make_provider("upper", base_url="HTTPS://api.example.com/v1")
        self.assertEqual(self.ok("GET", "%s/%s" % (BASE, uid))["provider"]["base_url"],
                         "HTTPS://api.example.com/v1")

    def test_database_file_does_not_hold_the_keys(self):
        key = "sk-at-rest-" + "7" * 24
        self.make_provider("at-rest", api_keys=[key])
        uid = self.make_provider("updated", api_keys=["sk-first-" + "8" * 24])
        self.ok("PUT", "%s/%s" % (BASE, uid), {"api_keys": ["sk-second-" + "9" * 24]})
        self.assertEqual(self.ok("GET", "%s/%s" % (BASE, uid))["provider"]["api_keys"],
                         ["sk-second-" + "9" * 24])
        db = os.path.join(self.srv.data_dir, "switchboard.db")
        for path in (db, db + "-wal"):
            if os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
                for secret in (key, "sk-first-", "sk-second-"):
                    self.assertNotIn(secret.encode(), data, path)
        # The key that seals them is the data directory's own, readable by the owner only.
        mode = os.stat(os.path.join(self.srv.data_dir, "secrets_key")).st_mode & 0o777
        self.assertEqual(mode, 0o600)

    def test_update_subset(self):
        uid = self.make_provider("before")
        created = self.ok("GET", "%s/%s" % (BASE, uid))["provider"]
        time.sleep(0.01)
        self.ok("PUT", "%s/%s" % (BASE, uid), {"name": "after"})
        p = self.ok("GET", "%s/%s" % (BASE, uid))["provider"]
        self.assertEqual(p["name"], "after")
        self.assertEqual(p["base_url"], created["base_url"])
        self.assertEqual(p["api_keys"], created["api_keys"])
        self.assertEqual(p["created_at"], created["created_at"])
        self.assertGreaterEqual(p["updated_at"], created["updated_at"])
        self.ok("PUT", "%s/%s" % (BASE, uid),
                {"requester": "deepseek-chat-completions", "base_url": "https://api.deepseek.com",
                 "api_keys": ["k1", "k2"]})
        p = self.ok("GET", "%s/%s" % (BASE, uid))["provider"]
        self.assertEqual((p["requester"], p["base_url"], p["api_keys"], p["name"]),
                         ("deepseek-chat-completions", "https://api.deepseek.com", ["k1", "k2"],
                          "after"))

    def test_errors(self):
        good = {"name": "p", "requester": "openai-chat-completions",
                "base_url": "https://api.openai.com/v1"}
        existing = self.make_provider("exists")

        def w(**kw):
            d = dict(good)
            for k, v in kw.items():
                if v is None:
                    d.pop(k)
                else:
                    d[k] = v
            return d

        cases = [
            ("create: malformed JSON", "POST", BASE, None, '{"name":', 400, None),
            ("create: array body", "POST", BASE, None, "[]", 400, "object"),
            ("create: missing name", "POST", BASE, w(name=None), None, 400, "name"),
            ("create: missing requester", "POST", BASE, w(requester=None), None, 400,
             "requester"),
            ("create: missing base_url", "POST", BASE, w(base_url=None), None, 400, "base_url"),
            ("create: name of wrong type", "POST", BASE, w(name=1), None, 400, "name"),
            ("create: empty name", "POST", BASE, w(name=""), None, 400, "name"),
            ("create: unknown requester", "POST", BASE, w(requester="carrier-pigeon"), None, 400,
             "requester"),
            ("create: base_url not http", "POST", BASE, w(base_url="ftp://x.example"), None, 400,
             "base_url"),
            ("create: base_url not a URL", "POST", BASE, w(base_url="api.openai.com"), None, 400,
             "base_url"),
            ("create: api_keys not an array", "POST", BASE, w(api_keys="sk-1"), None, 400,
             "api_keys"),
            ("create: api_keys holds a number", "POST", BASE, w(api_keys=["a", 2]), None, 400,
             "api_keys"),
            ("get: unknown uuid", "GET", "%s/%s" % (BASE, unknown_uuid()), None, None, 404,
             "provider"),
            ("get: malformed uuid", "GET", BASE + "/not-a-uuid", None, None, 400,
             "provider_uuid"),
            ("put: unknown uuid", "PUT", "%s/%s" % (BASE, unknown_uuid()), {"name": "x"}, None,
             404, None),
            ("put: malformed uuid", "PUT", BASE + "/1234", {"name": "x"}, None, 400,
             "provider_uuid"),
            ("put: unknown requester", "PUT", "%s/%s" % (BASE, existing), {"requester": "zzz"},
             None, 400, "requester"),
            ("put: bad base_url", "PUT", "%s/%s" % (BASE, existing), {"base_url": "nope"}, None,
             400, "base_url"),
            ("put: name of wrong type", "PUT", "%s/%s" % (BASE, existing), {"name": True}, None,
             400, "name"),
            ("put: malformed JSON", "PUT", "%s/%s" % (BASE, existing), None, "{", 400, None),
            ("delete: unknown uuid", "DELETE", "%s/%s" % (BASE, unknown_uuid()), None, None, 404,
             None),
            ("delete: malformed uuid", "DELETE", BASE + "/zzz", None, None, 400, "provider_uuid"),
        ]
        for desc, method, path, body, raw, code, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.as_user(method, path, body, raw_body=raw)
                self.assertError(status, resp, code, fragment)
        # Failed updates changed nothing.
        p = self.ok("GET", "%s/%s" % (BASE, existing))["provider"]
        self.assertEqual((p["name"], p["requester"]), ("exists", "openai-chat-completions"))

    def test_unknown_keys_are_ignored(self):
        status, resp, _ = self.as_user("POST", BASE, {"name": "extra", "requester": "ollama-chat",
                                                      "base_url": "http://localhost:11434",
                                                      "color": "blue"})
        self.assertOk(status, resp)

    def test_counts_and_delete_while_referenced(self):
        uid = self.make_provider("shared")
        llm = self.make_model(uid, "llm", "m1")
        self.make_model(uid, "llm", "m2")
        emb = self.make_model(uid, "embedding", "e1")
        p = self.ok("GET", "%s/%s" % (BASE, uid))["provider"]
        self.assertEqual((p["llm_count"], p["embedding_count"]), (2, 1))
        listed = [x for x in self.ok("GET", BASE)["providers"] if x["uuid"] == uid][0]
        self.assertEqual((listed["llm_count"], listed["embedding_count"]), (2, 1))

        status, resp, _ = self.as_user("DELETE", "%s/%s" % (BASE, uid))
        self.assertError(status, resp, 400, ["2 LLM", "1 embedding"])
        self.ok("DELETE", "/api/v1/provider/models/embedding/" + emb)
        self.ok("DELETE", "/api/v1/provider/models/llm/" + llm)
        status, resp, _ = self.as_user("DELETE", "%s/%s" % (BASE, uid))
        self.assertError(status, resp, 400, ["1 LLM", "0 embedding"])
        models = self.ok("GET", "/api/v1/provider/models/llm?provider_uuid=" + uid)["models"]
        for m in models:
            self.ok("DELETE", "/api/v1/provider/models/llm/" + m["uuid"])
        data = self.ok("DELETE", "%s/%s" % (BASE, uid))
        self.assertIsNone(data)
        status, resp, _ = self.as_user("GET", "%s/%s" % (BASE, uid))
        self.assertError(status, resp, 404)
        self.assertNotIn(uid, [x["uuid"] for x in self.ok("GET", BASE)["providers"]])


class ProviderListFreshnessTest(ServerTestCase):
    """The provider list is rendered from a cache: every write must show up in the next list,
    and include_secret must not leak between cached renderings."""

    def listed(self, uid, query=""):
        got = [p for p in self.ok("GET", BASE + query)["providers"] if p["uuid"] == uid]
        self.assertEqual(len(got), 1)
        return got[0]

    def test_list_follows_every_write(self):
        uid = self.make_provider("fresh", api_keys=[SECRET])
        self.assertEqual(self.listed(uid)["api_keys"], [SECRET])
        self.assertNotIn(SECRET, str(self.listed(uid, "?include_secret=false")))
        self.assertEqual(self.listed(uid)["api_keys"], [SECRET])
        # Via the API key too (another credential, same rendering).
        status, resp, _ = self.as_key("GET", BASE + "?include_secret=false")
        self.assertNotIn(SECRET, str(self.assertOk(status, resp)))

        self.ok("PUT", "%s/%s" % (BASE, uid), {"name": "renamed", "api_keys": ["sk-new-0123456789"]})
        p = self.listed(uid)
        self.assertEqual((p["name"], p["api_keys"]), ("renamed", ["sk-new-0123456789"]))

        m1 = self.make_model(uid, "llm", "a")
        self.assertEqual(self.listed(uid)["llm_count"], 1)
        e1 = self.make_model(uid, "embedding", "b")
        self.assertEqual(self.listed(uid)["embedding_count"], 1)

        other = self.make_provider("other")
        self.ok("PUT", "/api/v1/provider/models/llm/" + m1, {"provider_uuid": other})
        self.assertEqual(self.listed(uid)["llm_count"], 0)
        self.assertEqual(self.listed(other)["llm_count"], 1)
        self.ok("DELETE", "/api/v1/provider/models/llm/" + m1)
        self.assertEqual(self.listed(other)["llm_count"], 0)
        self.ok("DELETE", "/api/v1/provider/models/embedding/" + e1)
        self.assertEqual(self.listed(uid)["embedding_count"], 0)

        # An inline provider created through a model create appears in the list at once.
        before = {p["uuid"] for p in self.ok("GET", BASE)["providers"]}
        self.ok("POST", "/api/v1/provider/models/llm",
                {"name": "inline", "provider": {"requester": "ollama-chat",
                                                "base_url": "http://127.0.0.1:11434"}})
        after = {p["uuid"] for p in self.ok("GET", BASE)["providers"]}
        self.assertEqual(len(after - before), 1)

        self.ok("DELETE", "%s/%s" % (BASE, other))
        self.assertNotIn(other, [p["uuid"] for p in self.ok("GET", BASE)["providers"]])


if __name__ == "__main__":
    unittest.main()
