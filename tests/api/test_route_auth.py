"""Every route of tests/route_auth_table.txt, checked black-box against its auth class.

none         -> never 401, with or without (even garbage) credentials
user-only    -> 401 without credentials, with garbage, and with an API key; not 401 with a token
api-key-only -> 401 without credentials, with garbage, and with a user token; not 401 with a key
either       -> 401 without credentials and with garbage; not 401 with a token or a key

Path parameters are replaced by real ids; DELETE routes get ids that do not exist so that
nothing the other checks rely on is destroyed (a 404 still proves authentication passed).
"""

import os
import re
import unittest

from harness import ServerTestCase, unknown_uuid

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "route_auth_table.txt")
CLASSES = ("none", "user-only", "api-key-only", "either")


def load_table():
    routes = []
    with open(TABLE, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            method, path, cls = line.split()
            assert cls in CLASSES, line
            routes.append((method, path, cls))
    return routes


ROUTES = load_table()


class RouteAuthTest(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        create = cls.create

        provider = create("/api/v1/provider/providers",
                          {"name": "p", "requester": "openai-chat-completions",
                           "base_url": "https://api.openai.com/v1"})["uuid"]
        cls.ids = {
            "provider_uuid": provider,
            "llm": create("/api/v1/provider/models/llm",
                          {"name": "m", "provider_uuid": provider})["uuid"],
            "embedding": create("/api/v1/provider/models/embedding",
                                {"name": "e", "provider_uuid": provider})["uuid"],
            "bot_uuid": create("/api/v1/platform/bots",
                               {"name": "b", "adapter": "telegram",
                                "config": {"token": "1:a"}})["uuid"],
            "pipeline_uuid": create("/api/v1/pipelines", {"name": "p"})["uuid"],
            "key_id": str(create("/api/v1/apikeys", {"name": "spare"})["key"]["id"]),
            "task_id": "1",
            "path": "callback/deeper",
            "session_type": "person",
            "author": "nobody",  # a plugin author with nothing installed
            "file_id": unknown_uuid(),
            "key": "nothing_0123456789abcdef.png",
            "filepath": "logo.svg",
            "file_key": "plugin_config_0123456789abcdef.txt",
            "server_name": create("/api/v1/mcp/servers", {
                "name": "mcp1", "mode": "http", "enable": False,
                "extra_args": {"url": "http://127.0.0.1:9/mcp"}}) and "mcp1",
            "message_id": unknown_uuid(),  # a monitoring record that does not exist
            "session_id": "person_nobody",
        }
        cls.ids["webhook_id"] = str(create("/api/v1/webhooks", {
            "name": "hook", "url": "http://127.0.0.1:9/hook", "enabled": False})["webhook"]["id"])
        cls.ids["uuid"] = create("/api/v1/knowledge/bases", {
            "name": "kb", "knowledge_engine_plugin_id": "switchboard/builtin",
            "creation_settings": {"embedding_model_uuid": cls.ids["embedding"]}})["uuid"]

    def fill(self, method, path):
        def param(m):
            name = m.group(1)
            if name == "name":
                return "telegram" if "/adapters/" in path else "openai-chat-completions"
            if method == "DELETE":
                return "999999" if name == "key_id" else unknown_uuid()
            if name == "model_uuid":
                return self.ids["embedding" if "/embedding/" in path else "llm"]
            if name not in self.ids:
                self.fail("route_auth_table.txt names path parameter {%s} that this test has no "
                          "value for; add it to setUpClass" % name)
            return self.ids[name]
        return re.sub(r"\{([a-z_]+)(?:\.\.\.)?\}", param, path)

    def call(self, method, path, **cred):
        body = {} if method in ("POST", "PUT") else None
        status, resp, headers = self.srv.req(method, self.fill(method, path), body, **cred)
        self.assertIn("x-request-id", headers, (method, path))
        if status == 401:
            self.assertIsInstance(resp, dict, resp)
            self.assertEqual(resp.get("code"), -1, resp)
        self.assertNotEqual(status, 500, (method, path, resp))
        return status, resp

    def garbage_credentials(self):
        return ({"token": "garbage-token"},
                {"token": "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoiYWRtaW4ifQ.c2lnbmF0dXJl"},
                {"api_key": "lbk_" + "0" * 43},
                {"headers": {"Authorization": "Bearer "}})

    def test_table_is_complete(self):
        self.assertGreaterEqual(len(ROUTES), 50)
        seen = set()
        for method, path, cls in ROUTES:
            self.assertNotIn((method, path), seen, "duplicate line")
            seen.add((method, path))
        for must in (("GET", "/api/v1/system/info", "none"),
                     ("POST", "/api/v1/platform/bots/{bot_uuid}/send_message", "api-key-only"),
                     ("GET", "/api/v1/apikeys", "user-only")):
            self.assertIn(must, ROUTES)

    def test_without_credentials(self):
        for method, path, cls in ROUTES:
            with self.subTest(route="%s %s" % (method, path), cls=cls):
                status, resp = self.call(method, path)
                if cls == "none":
                    self.assertNotEqual(status, 401, resp)
                else:
                    self.assertEqual(status, 401, resp)

    def test_with_garbage_credentials(self):
        for method, path, cls in ROUTES:
            for cred in self.garbage_credentials():
                with self.subTest(route="%s %s" % (method, path), cls=cls, cred=cred):
                    status, resp = self.call(method, path, **cred)
                    if cls == "none":
                        self.assertNotEqual(status, 401, resp)
                    else:
                        self.assertEqual(status, 401, resp)

    def test_with_user_token(self):
        for method, path, cls in ROUTES:
            with self.subTest(route="%s %s" % (method, path), cls=cls):
                status, resp = self.call(method, path, token=self.token)
                if cls == "api-key-only":
                    self.assertEqual(status, 401, resp)
                else:
                    self.assertNotEqual(status, 401, resp)

    def test_with_api_key(self):
        for method, path, cls in ROUTES:
            for cred in ({"api_key": self.api_key}, {"token": self.api_key}):
                with self.subTest(route="%s %s" % (method, path), cls=cls,
                                  via=list(cred)[0]):
                    status, resp = self.call(method, path, **cred)
                    if cls == "user-only":
                        self.assertEqual(status, 401, resp)
                    else:
                        self.assertNotEqual(status, 401, resp)


if __name__ == "__main__":
    unittest.main()
