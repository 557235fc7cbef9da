"""Bots, adapters, bot logs, send_message and platform webhooks."""

import time
import unittest

from harness import ServerTestCase, unknown_uuid

BOTS = "/api/v1/platform/bots"
BOT_FIELDS = {"uuid", "name", "description", "adapter", "adapter_config", "config", "enable",
              "use_pipeline_uuid", "runtime", "created_at", "updated_at"}
RUNTIME_STATES = {"stopped", "starting", "running", "error"}
TELEGRAM = {"token": "123456:ABC-DEF"}
VALID_MESSAGE = {"target_type": "person", "target_id": "10001",
                 "message_chain": [{"type": "Plain", "text": "hello"}]}


class AdapterCatalogueTest(ServerTestCase):

    def test_list_and_get(self):
        adapters = self.ok("GET", "/api/v1/platform/adapters")["adapters"]
        names = {a["name"] for a in adapters}
        for name in ("telegram", "discord", "slack", "lark", "aiocqhttp"):
            self.assertIn(name, names)
        for a in adapters:
            # Every adapter's schema has api_base_url (contract §3).
            items = {c["name"] for c in a["spec"]["config"]}
            self.assertIn("api_base_url", items, a["name"])
        one = self.ok("GET", "/api/v1/platform/adapters/telegram")["adapter"]
        self.assertEqual(one["name"], "telegram")
        status, resp, _ = self.as_user("GET", "/api/v1/platform/adapters/carrier-pigeon")
        self.assertError(status, resp, 404, "carrier-pigeon")


class BotCrudTest(ServerTestCase):

    def test_create_and_get_detail(self):
        uid = self.make_bot("tg", "telegram", dict(TELEGRAM), description="my bot")
        self.assertUuid(uid)
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertTrue(BOT_FIELDS <= set(bot), sorted(BOT_FIELDS - set(bot)))
        self.assertEqual((bot["uuid"], bot["name"], bot["adapter"], bot["description"]),
                         (uid, "tg", "telegram", "my bot"))
        self.assertIs(bot["enable"], False)
        self.assertEqual(bot["config"]["token"], TELEGRAM["token"])
        self.assertEqual(bot["adapter_config"], bot["config"])
        # Schema defaults are filled in.
        self.assertEqual(bot["config"]["api_base_url"], "https://api.telegram.org")
        self.assertEqual(bot["use_pipeline_uuid"], self.default_pipeline()["uuid"])
        self.assertIn(bot["runtime"]["status"], RUNTIME_STATES)
        self.assertEqual(bot["runtime"]["status"], "stopped")
        self.assertTimestamp(bot["runtime"]["since"])
        self.assertTimestamp(bot["created_at"])
        arv = bot["adapter_runtime_values"]
        self.assertEqual(arv["webhook_url"], "/bots/" + uid)
        self.assertTrue(arv["webhook_full_url"].endswith("/bots/" + uid), arv)
        self.assertTrue(arv["webhook_full_url"].startswith("http"), arv)
        self.assertIn("bot_account_id", arv)
        self.assertIn("extra_webhook_full_url", arv)

        listed = [b for b in self.ok("GET", BOTS)["bots"] if b["uuid"] == uid]
        self.assertEqual(len(listed), 1)
        self.assertTrue(BOT_FIELDS <= set(listed[0]))

    def test_adapter_config_alias(self):
        uid = self.ok("POST", BOTS, {"name": "alias", "adapter": "discord",
                                     "adapter_config": {"client_id": "42", "token": "t0k"}})["uuid"]
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertEqual(bot["config"]["client_id"], "42")
        self.assertEqual(bot["adapter_config"]["token"], "t0k")
        self.ok("PUT", "%s/%s" % (BOTS, uid), {"adapter_config": {"client_id": "43", "token": "t"}})
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertEqual(bot["config"]["client_id"], "43")

    def test_create_with_pipeline_and_api_key(self):
        pipe = self.make_pipeline("for-bot")
        status, resp, _ = self.as_key("POST", BOTS, {"name": "k", "adapter": "telegram",
                                                     "config": TELEGRAM,
                                                     "use_pipeline_uuid": pipe})
        uid = self.assertOk(status, resp)["uuid"]
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertEqual(bot["use_pipeline_uuid"], pipe)

    def test_update(self):
        uid = self.make_bot("before", "telegram", dict(TELEGRAM))
        created = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        time.sleep(0.01)
        self.ok("PUT", "%s/%s" % (BOTS, uid), {"name": "after", "description": "changed"})
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertEqual((bot["name"], bot["description"]), ("after", "changed"))
        self.assertEqual(bot["config"], created["config"])
        self.assertEqual(bot["created_at"], created["created_at"])
        self.assertGreaterEqual(bot["updated_at"], created["updated_at"])
        self.ok("PUT", "%s/%s" % (BOTS, uid),
                {"adapter": "discord", "config": {"client_id": "1", "token": "x"}})
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertEqual((bot["adapter"], bot["config"]["client_id"]), ("discord", "1"))
        self.ok("PUT", "%s/%s" % (BOTS, uid), {"enable": True})
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertIs(bot["enable"], True)
        self.assertIn(bot["runtime"]["status"], RUNTIME_STATES)

    def test_delete(self):
        uid = self.make_bot("gone")
        self.assertIsNone(self.ok("DELETE", "%s/%s" % (BOTS, uid)))
        for method in ("GET", "DELETE"):
            status, resp, _ = self.as_user(method, "%s/%s" % (BOTS, uid))
            self.assertError(status, resp, 404, "bot")
        self.assertNotIn(uid, [b["uuid"] for b in self.ok("GET", BOTS)["bots"]])

    def test_errors(self):
        existing = self.make_bot("exists")
        good = {"name": "b", "adapter": "telegram", "config": TELEGRAM}

        def w(**kw):
            d = dict(good)
            for k, v in kw.items():
                if v is None:
                    d.pop(k)
                else:
                    d[k] = v
            return d

        one = "%s/%s" % (BOTS, existing)
        cases = [
            ("create: malformed JSON", "POST", BOTS, None, "{\"name\":\"b\",", 400, None),
            ("create: array body", "POST", BOTS, None, "[{}]", 400, "object"),
            ("create: missing name", "POST", BOTS, w(name=None), None, 400, "name"),
            ("create: empty name", "POST", BOTS, w(name=""), None, 400, "name"),
            ("create: name of wrong type", "POST", BOTS, w(name=["b"]), None, 400, "name"),
            ("create: missing adapter", "POST", BOTS, w(adapter=None), None, 400, "adapter"),
            ("create: unknown adapter", "POST", BOTS, w(adapter="carrier-pigeon"), None, 400,
             "adapter"),
            ("create: missing config", "POST", BOTS, w(config=None), None, 400, "config"),
            ("create: config of wrong type", "POST", BOTS, w(config="token"), None, 400,
             "config"),
            ("create: config misses a required item", "POST", BOTS,
             w(adapter="discord", config={"client_id": "1"}), None, 400, "config.token"),
            ("create: required config item empty", "POST", BOTS,
             w(adapter="discord", config={"client_id": "1", "token": ""}), None, 400,
             "config.token"),
            ("create: required config item of wrong type", "POST", BOTS,
             w(adapter="discord", config={"client_id": "1", "token": 5}), None, 400,
             "config.token"),
            ("create: config select/boolean of wrong type", "POST", BOTS,
             w(adapter="lark", config={"app_id": "a", "app_secret": "s", "bot_name": "b",
                                       "encrypt-key": "k", "enable-webhook": "yes"}), None, 400,
             "config.enable-webhook"),
            ("create: config item of wrong type", "POST", BOTS,
             w(adapter="aiocqhttp", config={"host": "0.0.0.0", "port": "eighty"}), None, 400,
             "config.port"),
            ("create: enable of wrong type", "POST", BOTS, w(enable="yes"), None, 400, "enable"),
            ("create: malformed use_pipeline_uuid", "POST", BOTS, w(use_pipeline_uuid="p1"),
             None, 400, "use_pipeline_uuid"),
            ("create: unknown use_pipeline_uuid", "POST", BOTS,
             w(use_pipeline_uuid=unknown_uuid()), None, 400, "use_pipeline_uuid"),
            ("create: description of wrong type", "POST", BOTS, w(description=1), None, 400,
             "description"),
            ("get: unknown uuid", "GET", "%s/%s" % (BOTS, unknown_uuid()), None, None, 404, "bot"),
            ("get: malformed uuid", "GET", BOTS + "/not-a-uuid", None, None, 400, "bot_uuid"),
            ("put: unknown uuid", "PUT", "%s/%s" % (BOTS, unknown_uuid()), {"name": "x"}, None,
             404, "bot"),
            ("put: malformed uuid", "PUT", BOTS + "/0", {"name": "x"}, None, 400, "bot_uuid"),
            ("put: unknown adapter", "PUT", one, {"adapter": "zzz"}, None, 400, "adapter"),
            ("put: config of wrong type", "PUT", one, {"config": []}, None, 400, "config"),
            ("put: enable of wrong type", "PUT", one, {"enable": 1}, None, 400, "enable"),
            ("put: unknown use_pipeline_uuid", "PUT", one, {"use_pipeline_uuid": unknown_uuid()},
             None, 400, "use_pipeline_uuid"),
            ("put: malformed JSON", "PUT", one, None, "{", 400, None),
            ("delete: unknown uuid", "DELETE", "%s/%s" % (BOTS, unknown_uuid()), None, None, 404,
             "bot"),
            ("delete: malformed uuid", "DELETE", BOTS + "/x", None, None, 400, "bot_uuid"),
        ]
        for desc, method, path, body, raw, code, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.as_user(method, path, body, raw_body=raw)
                self.assertError(status, resp, code, fragment)
        bot = self.ok("GET", one)["bot"]
        self.assertEqual((bot["name"], bot["adapter"], bot["enable"]),
                         ("exists", "telegram", False))


class BotSecretTest(ServerTestCase):
    """Adapter secrets (tokens, signing secrets) are masked with include_secret=false, as provider
    keys are, and a PUT that sends the mask back keeps the stored secret."""

    TOKEN = "123456:ABCDEF-secret-token-xyz"

    def shown(self, uid, query="?include_secret=false"):
        one = self.ok("GET", "%s/%s%s" % (BOTS, uid, query))["bot"]
        listed = [b for b in self.ok("GET", BOTS + query)["bots"] if b["uuid"] == uid][0]
        self.assertEqual(listed["config"], one["config"])
        self.assertEqual(one["adapter_config"], one["config"])
        return one

    def test_secrets_are_masked_and_a_masked_put_keeps_them(self):
        uid = self.make_bot("secretive", "telegram", {"token": self.TOKEN})
        hook = self.make_bot("hook", "webhook", {"secret": "whsec_0123456789abcdef",
                                                  "callback_url": "https://cb.example/x"})
        bot = self.shown(uid)
        self.assertEqual(bot["config"]["token"], "1234...-xyz")
        self.assertEqual(bot["config"]["api_base_url"], "https://api.telegram.org")  # not secret
        hidden = self.shown(hook)["config"]
        self.assertEqual(hidden["secret"], "whse...cdef")
        self.assertEqual(hidden["callback_url"], "https://cb.example/x")
        # As for providers, the default shows them.
        self.assertEqual(self.shown(uid, "")["config"]["token"], self.TOKEN)

        # The console sends back what it was shown: the secret stays.
        self.ok("PUT", "%s/%s" % (BOTS, uid), {"name": "renamed", "config": bot["config"]})
        self.ok("PUT", "%s/%s" % (BOTS, hook), {"config": hidden})
        self.assertEqual(self.shown(uid, "")["config"]["token"], self.TOKEN)
        self.assertEqual(self.shown(hook, "")["config"]["secret"], "whsec_0123456789abcdef")
        # A new value replaces it.
        self.ok("PUT", "%s/%s" % (BOTS, uid), {"config": {"token": "999:new-token-value"}})
        self.assertEqual(self.shown(uid, "")["config"]["token"], "999:new-token-value")
        # A short secret shows as **** and is kept the same way.
        self.ok("PUT", "%s/%s" % (BOTS, uid), {"config": {"token": "1:short"}})
        self.assertEqual(self.shown(uid)["config"]["token"], "****")
        self.ok("PUT", "%s/%s" % (BOTS, uid), {"config": {"token": "****"}})
        self.assertEqual(self.shown(uid, "")["config"]["token"], "1:short")


class BotAdapterUrlTest(ServerTestCase):
    """URL items of adapter configs take http(s) only, as provider base URLs do: a bot must not
    be pointed at file:// or gopher://."""

    def test_adapter_urls_must_be_http_or_https(self):
        good = {"secret": "whsec_0123456789abcdef", "callback_url": "https://cb.example/x"}
        for field in ("callback_url", "api_base_url"):
            for bad in ("file:///etc/passwd", "gopher://127.0.0.1:6379/_FLUSHALL", "FILE://x",
                        "javascript:alert(1)", "http://", "https:///nohost", "http://a b"):
                with self.subTest(field=field, url=bad):
                    config = dict(good, **{field: bad})
                    status, resp, _ = self.as_user("POST", BOTS, {"name": "u", "adapter": "webhook",
                                                                  "config": config})
                    self.assertError(status, resp, 400, "config." + field)
        # The scheme is case-insensitive (RFC 3986 §3.1); empty means not set.
        uid = self.make_bot("urls", "webhook", dict(good, callback_url="HTTPS://cb.example/x",
                                                    api_base_url="Http://api.example"))
        bot = self.ok("GET", "%s/%s" % (BOTS, uid))["bot"]
        self.assertEqual(bot["config"]["callback_url"], "HTTPS://cb.example/x")
        self.make_bot("no-base-url", "telegram", {"token": "1:a", "api_base_url": ""})
        # Updates are checked too, and telegram's api_base_url as well.
        status, resp, _ = self.as_user("PUT", "%s/%s" % (BOTS, uid),
                                       {"config": dict(good, callback_url="gopher://x")})
        self.assertError(status, resp, 400, "config.callback_url")
        status, resp, _ = self.as_user("POST", BOTS, {"name": "t", "adapter": "telegram", "config":
                                                      {"token": "1:a", "api_base_url": "file:///"}})
        self.assertError(status, resp, 400, "config.api_base_url")


class BotLogsTest(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        status, body, _ = cls.srv.req("POST", BOTS, {"name": "logs", "adapter": "telegram",
                                                     "config": TELEGRAM}, token=cls.token)
        cls.bot = body["data"]["uuid"]

    def logs(self, body, raw=None, bot=None):
        return self.as_user("POST", "%s/%s/logs" % (BOTS, bot or self.bot), body, raw_body=raw)

    def test_valid_requests(self):
        for desc, body, raw in (("defaults from an empty body", None, ""),
                                ("empty object", {}, None),
                                ("explicit defaults", {"from_index": -1, "max_count": 10}, None),
                                ("from_index 0", {"from_index": 0, "max_count": 1}, None),
                                ("max_count 1000", {"max_count": 1000}, None),
                                ("max_count 0", {"max_count": 0}, None),
                                ("null counts as absent", {"from_index": None}, None)):
            with self.subTest(desc):
                status, resp, _ = self.logs(body, raw)
                data = self.assertOk(status, resp)
                self.assertEqual(data, {"logs": [], "total_count": 0})
        status, resp, _ = self.as_key("POST", "%s/%s/logs" % (BOTS, self.bot), {})
        self.assertOk(status, resp)

    def test_invalid_requests(self):
        cases = [
            ("from_index -2", {"from_index": -2}, None, "from_index"),
            ("from_index -100", {"from_index": -100}, None, "from_index"),
            ("max_count negative", {"max_count": -5}, None, "max_count"),
            ("max_count above 1000", {"max_count": 1001}, None, "max_count"),
            ("max_count string", {"max_count": "10"}, None, "max_count"),
            ("max_count float", {"max_count": 2.5}, None, "max_count"),
            ("from_index float", {"from_index": 1.5}, None, "from_index"),
            ("from_index string", {"from_index": "-1"}, None, "from_index"),
            ("from_index boolean", {"from_index": True}, None, "from_index"),
            ("from_index huge", None, '{"from_index": 99999999999999999999}', "from_index"),
            ("malformed JSON", None, "{", None),
            ("array body", None, "[]", "object"),
        ]
        for desc, body, raw, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.logs(body, raw)
                self.assertError(status, resp, 400, fragment)

    def test_unknown_and_malformed_bot(self):
        status, resp, _ = self.logs({}, bot=unknown_uuid())
        self.assertError(status, resp, 404, "bot")
        status, resp, _ = self.as_user("POST", BOTS + "/nope/logs", {})
        self.assertError(status, resp, 400, "bot_uuid")


class SendMessageTest(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        ids = []
        for enable in (False, True):
            status, body, _ = cls.srv.req("POST", BOTS, {"name": "sender", "adapter": "telegram",
                                                         "config": TELEGRAM, "enable": enable},
                                          token=cls.token)
            ids.append(body["data"]["uuid"])
        cls.disabled_bot, cls.enabled_bot = ids

    def send(self, body, bot=None, raw=None, **kw):
        kw.setdefault("api_key", self.api_key)
        return self.req("POST", "%s/%s/send_message" % (BOTS, bot or self.disabled_bot), body,
                        raw_body=raw, **kw)

    def test_valid_body_on_a_bot_that_is_not_running_is_409(self):
        for bot in (self.disabled_bot, self.enabled_bot):
            with self.subTest(bot=bot):
                status, resp, _ = self.send(VALID_MESSAGE, bot=bot)
                self.assertError(status, resp, 409, "not running")
                status, resp, _ = self.send(VALID_MESSAGE, bot=bot, api_key=None,
                                            token=self.api_key)
                self.assertError(status, resp, 409, "not running")

    def test_every_element_type_is_accepted_by_validation(self):
        chain = [{"type": "Plain", "text": "a"},
                 {"type": "Image", "url": "https://example.com/a.png"},
                 {"type": "At", "target": "42"},
                 {"type": "AtAll"},
                 {"type": "Voice", "url": "https://example.com/a.amr"},
                 {"type": "Voice", "base64": "AAAA"},
                 {"type": "Quote", "id": "m-1"},
                 {"type": "File", "url": "https://example.com/f.pdf", "name": "f.pdf"}]
        for target in ("person", "group"):
            status, resp, _ = self.send({"target_type": target, "target_id": "g1",
                                         "message_chain": chain})
            self.assertError(status, resp, 409, "not running")

    def test_unknown_bot_is_404_after_body_validation(self):
        status, resp, _ = self.send(VALID_MESSAGE, bot=unknown_uuid())
        self.assertError(status, resp, 404, "bot")
        # The body is validated first: a bad body for an unknown bot is 400.
        status, resp, _ = self.send({"target_type": "channel"}, bot=unknown_uuid())
        self.assertError(status, resp, 400, "target_type")

    def test_malformed_bot_uuid_is_400(self):
        status, resp, _ = self.req("POST", BOTS + "/xyz/send_message", VALID_MESSAGE,
                                   api_key=self.api_key)
        self.assertError(status, resp, 400, "bot_uuid")

    def test_user_token_is_401(self):
        status, resp, _ = self.send(VALID_MESSAGE, api_key=None, token=self.token)
        self.assertError(status, resp, 401)
        status, resp, _ = self.send(VALID_MESSAGE, api_key=None)
        self.assertError(status, resp, 401)

    def test_bad_bodies_name_the_field_in_seed_order(self):
        ok_chain = [{"type": "Plain", "text": "x"}]
        cases = [
            # Every field is wrong: the first in the seed's order is named.
            ("all fields wrong", {"target_type": 1, "target_id": 2, "message_chain": 3},
             "target_type"),
            ("missing target_type", {"target_id": "1", "message_chain": ok_chain}, "target_type"),
            ("empty body", {}, "target_type"),
            ("target_type not an enum value", {"target_type": "channel", "target_id": "1",
                                               "message_chain": ok_chain}, "target_type"),
            ("target_type wrong case", {"target_type": "Person", "target_id": "1",
                                        "message_chain": ok_chain}, "target_type"),
            ("target_type wrong type", {"target_type": ["person"], "target_id": "1",
                                        "message_chain": ok_chain}, "target_type"),
            ("missing target_id, bad chain", {"target_type": "group", "message_chain": 5},
             "target_id"),
            ("target_id wrong type", {"target_type": "group", "target_id": 123,
                                      "message_chain": ok_chain}, "target_id"),
            ("target_id empty", {"target_type": "group", "target_id": "",
                                 "message_chain": ok_chain}, "target_id"),
            ("missing message_chain", {"target_type": "person", "target_id": "1"},
             "message_chain"),
            ("message_chain not an array", {"target_type": "person", "target_id": "1",
                                            "message_chain": {"type": "Plain"}}, "message_chain"),
            ("message_chain empty", {"target_type": "person", "target_id": "1",
                                     "message_chain": []}, "message_chain"),
            ("element not an object", {"target_type": "person", "target_id": "1",
                                       "message_chain": ["hello"]}, "message_chain[0]"),
            ("element without type", {"target_type": "person", "target_id": "1",
                                      "message_chain": [{"text": "x"}]}, "type"),
            ("unknown element type", {"target_type": "person", "target_id": "1",
                                      "message_chain": [{"type": "Plain", "text": "a"},
                                                        {"type": "Video", "url": "u"}]},
             "message_chain[1]"),
            ("Plain without text", {"target_type": "person", "target_id": "1",
                                    "message_chain": [{"type": "Plain"}]}, "text"),
            ("Plain text wrong type", {"target_type": "person", "target_id": "1",
                                       "message_chain": [{"type": "Plain", "text": 5}]}, "text"),
            ("Image without url", {"target_type": "person", "target_id": "1",
                                   "message_chain": [{"type": "Image"}]}, "url"),
            ("At without target", {"target_type": "person", "target_id": "1",
                                   "message_chain": [{"type": "At"}]}, "target"),
            ("Voice without content", {"target_type": "person", "target_id": "1",
                                       "message_chain": [{"type": "Voice"}]}, "message_chain[0]"),
        ]
        for desc, body, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.send(body)
                self.assertError(status, resp, 400, fragment)
        for desc, raw in (("malformed JSON", '{"target_type": "person"'),
                          ("array body", "[]"), ("no body", "")):
            with self.subTest(desc):
                status, resp, _ = self.send(None, raw=raw)
                self.assertError(status, resp, 400)


class WebhookTest(ServerTestCase):

    def test_unknown_bot_is_404(self):
        uid = unknown_uuid()
        for method, path in (("GET", "/bots/" + uid), ("POST", "/bots/" + uid),
                             ("GET", "/bots/%s/callback" % uid),
                             ("POST", "/bots/%s/events" % uid)):
            with self.subTest(method=method, path=path):
                status, resp, _ = self.req(method, path, {"event": "x"} if method == "POST" else None)
                self.assertError(status, resp, 404, "bot")

    def test_disabled_bot_is_409(self):
        uid = self.make_bot("hook", "slack", {"bot_token": "xoxb", "signing_secret": "s"})
        for method, path in (("GET", "/bots/" + uid), ("POST", "/bots/" + uid),
                             ("POST", "/bots/%s/events" % uid)):
            with self.subTest(method=method, path=path):
                status, resp, _ = self.req(method, path, {"type": "url_verification"}
                                           if method == "POST" else None)
                self.assertError(status, resp, 409, "disabled")

    def test_malformed_uuid_is_400(self):
        status, resp, _ = self.req("POST", "/bots/not-a-uuid", {})
        self.assertError(status, resp, 400, "bot_uuid")


if __name__ == "__main__":
    unittest.main()
