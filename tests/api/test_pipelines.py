"""Pipelines: metadata, default pipeline, CRUD, deep-merged config validation, copy, sorting."""

import time
import unittest

from harness import ServerTestCase, unknown_uuid

PIPES = "/api/v1/pipelines"
PIPELINE_FIELDS = {"uuid", "name", "description", "emoji", "config", "stages", "is_default",
                   "for_version", "extensions_preferences", "created_at", "updated_at"}


class PipelineTest(ServerTestCase):

    def get(self, uid):
        return self.ok("GET", "%s/%s" % (PIPES, uid))["pipeline"]

    def test_metadata(self):
        for kw in ({"token": self.token}, {"api_key": self.api_key}):
            status, resp, _ = self.req("GET", PIPES + "/_/metadata", **kw)
            configs = self.assertOk(status, resp)["configs"]
            names = [c["name"] for c in configs]
            for section in ("trigger", "safety", "ai", "output"):
                self.assertIn(section, names)
            for c in configs:
                self.assertIsInstance(c["stages"], list)
        ai = [c for c in configs if c["name"] == "ai"][0]
        runner = [s for s in ai["stages"] if s["name"] == "runner"][0]
        options = [o["name"] for o in runner["config"][0]["options"]]
        self.assertIn("local-agent", options)

    def test_default_pipeline_exists(self):
        p = self.default_pipeline()
        self.assertEqual(set(p), PIPELINE_FIELDS)
        self.assertEqual(p["name"], "ChatPipeline")
        self.assertIs(p["is_default"], True)
        cfg = p["config"]
        for section in ("trigger", "safety", "ai", "output"):
            self.assertIn(section, cfg)
        self.assertEqual(cfg["ai"]["runner"]["runner"], "local-agent")
        self.assertEqual(set(cfg["ai"]["local-agent"]["model"]), {"primary", "fallbacks"})
        for key in ("group-respond-rules", "access-control", "ignore-rules",
                    "message-aggregation"):
            self.assertIn(key, cfg["trigger"])
        for key in ("content-filter", "rate-limit"):
            self.assertIn(key, cfg["safety"])
        for key in ("long-text-processing", "force-delay", "misc"):
            self.assertIn(key, cfg["output"])
        # The default config passes its own validation (PUT it back unchanged).
        self.ok("PUT", "%s/%s" % (PIPES, p["uuid"]), {"config": cfg})

    def test_create_merges_over_defaults(self):
        default_cfg = self.default_pipeline()["config"]
        uid = self.ok("POST", PIPES, {"name": "plain"})["uuid"]
        self.assertUuid(uid)
        p = self.get(uid)
        self.assertEqual(set(p), PIPELINE_FIELDS)
        self.assertEqual(p["config"], default_cfg)
        self.assertIs(p["is_default"], False)
        self.assertEqual(p["for_version"], "4.9.5")
        self.assertIsInstance(p["stages"], list)
        self.assertIsInstance(p["extensions_preferences"], dict)
        self.assertTimestamp(p["created_at"])

        uid = self.ok("POST", PIPES, {
            "name": "custom", "description": "d", "emoji": "🤖",
            "config": {"ai": {"local-agent": {"max-round": 3}},
                       "safety": {"rate-limit": {"strategy": "wait"}}}})["uuid"]
        p = self.get(uid)
        self.assertEqual((p["name"], p["description"], p["emoji"]), ("custom", "d", "🤖"))
        self.assertEqual(p["config"]["ai"]["local-agent"]["max-round"], 3)
        # Siblings of the changed keys keep their defaults (deep merge, not replace).
        self.assertEqual(p["config"]["ai"]["local-agent"]["prompt"],
                         default_cfg["ai"]["local-agent"]["prompt"])
        self.assertEqual(p["config"]["safety"]["rate-limit"]["strategy"], "wait")
        self.assertEqual(p["config"]["safety"]["rate-limit"]["window-length"],
                         default_cfg["safety"]["rate-limit"]["window-length"])
        self.assertEqual(p["config"]["trigger"], default_cfg["trigger"])

    def test_create_with_api_key(self):
        status, resp, _ = self.as_key("POST", PIPES, {"name": "via-key", "config": {}})
        self.assertUuid(self.assertOk(status, resp)["uuid"])

    def test_update(self):
        uid = self.make_pipeline("before", {"ai": {"local-agent": {"max-round": 4}}})
        before = self.get(uid)
        time.sleep(0.01)
        self.ok("PUT", "%s/%s" % (PIPES, uid), {"name": "after", "emoji": "x"})
        p = self.get(uid)
        self.assertEqual((p["name"], p["emoji"]), ("after", "x"))
        self.assertEqual(p["config"], before["config"])
        self.assertGreaterEqual(p["updated_at"], before["updated_at"])
        self.assertEqual(p["created_at"], before["created_at"])
        self.ok("PUT", "%s/%s" % (PIPES, uid),
                {"config": {"output": {"force-delay": {"min": 1, "max": 2}}},
                 "extensions_preferences": {"enable_all_plugins": False, "plugins": []}})
        p = self.get(uid)
        self.assertEqual(p["config"]["output"]["force-delay"], {"min": 1, "max": 2})
        self.assertIs(p["extensions_preferences"]["enable_all_plugins"], False)

    def test_config_validation_errors(self):
        existing = self.make_pipeline("exists")
        bad_configs = [
            ("integer item given a string", {"ai": {"local-agent": {"max-round": "ten"}}},
             "config.ai.local-agent.max-round"),
            ("unknown runner (select)", {"ai": {"runner": {"runner": "skynet"}}},
             "config.ai.runner.runner"),
            ("unknown rate-limit strategy", {"safety": {"rate-limit": {"strategy": "burst"}}},
             "config.safety.rate-limit.strategy"),
            ("unknown access-control mode", {"trigger": {"access-control": {"mode": "greylist"}}},
             "config.trigger.access-control.mode"),
            ("boolean item given a number", {"trigger": {"group-respond-rules": {"at": 1}}},
             "config.trigger.group-respond-rules.at"),
            ("array[string] item holding a number",
             {"trigger": {"group-respond-rules": {"prefix": ["ai", 1]}}},
             "config.trigger.group-respond-rules.prefix"),
            ("float item given a string", {"trigger": {"message-aggregation": {"delay": "1s"}}},
             "config.trigger.message-aggregation.delay"),
            ("section not an object", {"trigger": "all"}, "config.trigger"),
            ("stage not an object", {"safety": {"rate-limit": 5}}, "config.safety.rate-limit"),
        ]
        for desc, config, fragment in bad_configs:
            with self.subTest("create: " + desc):
                status, resp, _ = self.as_user("POST", PIPES, {"name": "bad", "config": config})
                self.assertError(status, resp, 400, fragment)
            with self.subTest("update: " + desc):
                status, resp, _ = self.as_user("PUT", "%s/%s" % (PIPES, existing),
                                               {"config": config})
                self.assertError(status, resp, 400, fragment)
        # Nothing was created or changed by the failures.
        names = [p["name"] for p in self.ok("GET", PIPES)["pipelines"]]
        self.assertNotIn("bad", names)
        self.assertEqual(self.get(existing)["config"], self.default_pipeline()["config"])

    def test_request_errors(self):
        cases = [
            ("create: malformed JSON", "POST", PIPES, None, "{\"name\":", 400, None),
            ("create: array body", "POST", PIPES, None, "[]", 400, "object"),
            ("create: missing name", "POST", PIPES, {"config": {}}, None, 400, "name"),
            ("create: empty name", "POST", PIPES, {"name": ""}, None, 400, "name"),
            ("create: name of wrong type", "POST", PIPES, {"name": 1}, None, 400, "name"),
            ("create: config not an object", "POST", PIPES, {"name": "x", "config": []}, None,
             400, "config"),
            ("get: unknown uuid", "GET", "%s/%s" % (PIPES, unknown_uuid()), None, None, 404,
             "pipeline"),
            ("get: malformed uuid", "GET", PIPES + "/abc", None, None, 400, "pipeline_uuid"),
            ("put: unknown uuid", "PUT", "%s/%s" % (PIPES, unknown_uuid()), {"name": "x"}, None,
             404, "pipeline"),
            ("put: malformed uuid", "PUT", PIPES + "/abc", {"name": "x"}, None, 400,
             "pipeline_uuid"),
            ("delete: unknown uuid", "DELETE", "%s/%s" % (PIPES, unknown_uuid()), None, None,
             404, "pipeline"),
            ("delete: malformed uuid", "DELETE", PIPES + "/abc", None, None, 400,
             "pipeline_uuid"),
            ("copy: unknown uuid", "POST", "%s/%s/copy" % (PIPES, unknown_uuid()), None, None,
             404, "pipeline"),
            ("copy: malformed uuid", "POST", PIPES + "/abc/copy", None, None, 400,
             "pipeline_uuid"),
            ("list: bad sort_by", "GET", PIPES + "?sort_by=color", None, None, 400, "sort_by"),
            ("list: bad sort_order", "GET", PIPES + "?sort_order=sideways", None, None, 400,
             "sort_order"),
        ]
        for desc, method, path, body, raw, code, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.as_user(method, path, body, raw_body=raw)
                self.assertError(status, resp, code, fragment)

    def test_copy(self):
        uid = self.make_pipeline("original", {"ai": {"local-agent": {"max-round": 7}}})
        copy = self.ok("POST", "%s/%s/copy" % (PIPES, uid))["uuid"]
        self.assertUuid(copy)
        self.assertNotEqual(copy, uid)
        a, b = self.get(uid), self.get(copy)
        self.assertEqual(b["name"], "original (Copy)")
        self.assertEqual(b["config"], a["config"])
        self.assertIs(b["is_default"], False)
        # Copying the default pipeline yields a normal, deletable pipeline.
        d = self.default_pipeline()
        dcopy = self.ok("POST", "%s/%s/copy" % (PIPES, d["uuid"]))["uuid"]
        self.assertIs(self.get(dcopy)["is_default"], False)
        self.ok("DELETE", "%s/%s" % (PIPES, dcopy))
        self.assertIs(self.default_pipeline()["is_default"], True)

    def test_delete_rules(self):
        d = self.default_pipeline()
        status, resp, _ = self.as_user("DELETE", "%s/%s" % (PIPES, d["uuid"]))
        self.assertError(status, resp, 409, "default")

        used = self.make_pipeline("in-use")
        bot = self.make_bot("user-of-pipe", use_pipeline_uuid=used)
        status, resp, _ = self.as_user("DELETE", "%s/%s" % (PIPES, used))
        self.assertError(status, resp, 409, "bot")
        self.get(used)
        # Switching the bot away frees the pipeline.
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"use_pipeline_uuid": d["uuid"]})
        self.assertIsNone(self.ok("DELETE", "%s/%s" % (PIPES, used)))
        status, resp, _ = self.as_user("GET", "%s/%s" % (PIPES, used))
        self.assertError(status, resp, 404)

        used2 = self.make_pipeline("in-use-2")
        bot2 = self.make_bot("user-2", use_pipeline_uuid=used2)
        self.ok("DELETE", "/api/v1/platform/bots/" + bot2)
        self.ok("DELETE", "%s/%s" % (PIPES, used2))


class PipelineSortTest(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name in ("bravo", "alpha", "charlie"):
            status, body, _ = cls.srv.req("POST", PIPES, {"name": name}, token=cls.token)
            assert status == 200, body
            time.sleep(0.01)

    def names(self, query=""):
        return [p["name"] for p in self.ok("GET", PIPES + query)["pipelines"]]

    def test_sort(self):
        all_names = ["ChatPipeline", "bravo", "alpha", "charlie"]
        # Default: newest first.
        self.assertEqual(self.names(), list(reversed(all_names)))
        self.assertEqual(self.names("?sort_by=created_at&sort_order=ASC"), all_names)
        self.assertEqual(self.names("?sort_by=name&sort_order=ASC"), sorted(all_names))
        self.assertEqual(self.names("?sort_by=name&sort_order=DESC"),
                         sorted(all_names, reverse=True))
        uid = [p["uuid"] for p in self.ok("GET", PIPES)["pipelines"] if p["name"] == "alpha"][0]
        time.sleep(0.01)
        self.ok("PUT", "%s/%s" % (PIPES, uid), {"description": "touched"})
        self.assertEqual(self.names("?sort_by=updated_at&sort_order=DESC")[0], "alpha")
        self.assertEqual(self.names("?sort_by=updated_at&sort_order=ASC")[-1], "alpha")


if __name__ == "__main__":
    unittest.main()
