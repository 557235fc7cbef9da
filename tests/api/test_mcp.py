"""MCP server configurations (/api/v1/mcp/servers) in LangBot 4.9.5's shapes: CRUD by name,
secrets in extra_args masked and kept when the mask comes back, bad configs refused, and the rows
survive a restart (sealed at rest)."""

import os
import unittest
from urllib.parse import quote

from harness import ServerTestCase

BASE = "/api/v1/mcp/servers"
TOKEN = "Bearer mcp-secret-token-0123456789"
ENV_SECRET = "ghp_abcdefghijklmnopqrstuvwxyz012345"
FIELDS = {"uuid", "name", "enable", "mode", "extra_args", "runtime_info", "created_at",
          "updated_at"}


def mask(secret):
    return "****" if len(secret) < 12 else secret[:4] + "..." + secret[-4:]


class McpServerCrudTest(ServerTestCase):

    def make(self, name, mode="http", enable=False, **args):
        if not args:
            args = {"url": "http://127.0.0.1:9/mcp"} if mode != "stdio" else {"command": "true"}
        return self.ok("POST", BASE, {"name": name, "mode": mode, "enable": enable,
                                      "extra_args": args})["uuid"]

    def test_create_get_list_delete(self):
        uid = self.make("crud", headers={"Authorization": TOKEN}, url="https://mcp.example/x",
                        timeout=5)
        self.assertUuid(uid)
        s = self.ok("GET", BASE + "/crud")["server"]
        self.assertEqual(set(s), FIELDS)
        self.assertEqual((s["uuid"], s["name"], s["mode"], s["enable"]),
                         (uid, "crud", "http", False))
        self.assertEqual(s["extra_args"]["url"], "https://mcp.example/x")
        self.assertEqual(s["extra_args"]["timeout"], 5)
        self.assertEqual(s["extra_args"]["headers"], {"Authorization": mask(TOKEN)})
        # Disabled: no session runs, so no runtime info (LangBot answers null too).
        self.assertIsNone(s["runtime_info"])
        self.assertTimestamp(s["created_at"])
        names = [x["name"] for x in self.ok("GET", BASE)["servers"]]
        self.assertIn("crud", names)
        listed = [x for x in self.ok("GET", BASE)["servers"] if x["name"] == "crud"][0]
        self.assertNotIn(TOKEN, str(listed))
        self.ok("DELETE", BASE + "/crud")
        status, resp, _ = self.as_user("GET", BASE + "/crud")
        self.assertError(status, resp, 404, "Server not found")
        status, resp, _ = self.as_user("DELETE", BASE + "/crud")
        self.assertError(status, resp, 404)

    def test_defaults_per_mode(self):
        self.make("sse-defaults", mode="sse", url="http://127.0.0.1:9/sse")
        a = self.ok("GET", BASE + "/sse-defaults")["server"]["extra_args"]
        self.assertEqual((a["timeout"], a["ssereadtimeout"], a["headers"]), (10, 30, {}))
        self.make("stdio-defaults", mode="stdio", command="python3")
        a = self.ok("GET", BASE + "/stdio-defaults")["server"]["extra_args"]
        self.assertEqual((a["command"], a["args"], a["env"]), ("python3", [], {}))

    def test_masked_secrets_are_kept_on_update(self):
        self.make("keep", mode="stdio", command="python3", args=["-m", "srv"],
                  env={"GITHUB_TOKEN": ENV_SECRET, "SHORT": "abc", "PLAIN": "x"})
        shown = self.ok("GET", BASE + "/keep")["server"]
        env = shown["extra_args"]["env"]
        self.assertEqual(env, {"GITHUB_TOKEN": mask(ENV_SECRET), "SHORT": "****",
                               "PLAIN": "****"})
        # The console sends back the whole form, masks included, with one value changed.
        env["PLAIN"] = "new-plain"
        self.ok("PUT", BASE + "/keep", {"name": "keep", "mode": "stdio", "enable": False,
                                        "extra_args": shown["extra_args"]})
        # Restart: the rows are read back from the sealed column. Had the mask itself been
        # stored, it would show as "****" (a mask is 11 characters), not as the secret's mask.
        self.srv.restart()
        type(self).token = self.srv.login()
        env = self.ok("GET", BASE + "/keep")["server"]["extra_args"]["env"]
        self.assertEqual(env, {"GITHUB_TOKEN": mask(ENV_SECRET), "SHORT": "****",
                               "PLAIN": "****"})
        self.ok("PUT", BASE + "/keep", {"extra_args": {"command": "python3", "env": {
            "GITHUB_TOKEN": mask(ENV_SECRET), "PLAIN": "a-longer-plain-value"}}})
        env = self.ok("GET", BASE + "/keep")["server"]["extra_args"]["env"]
        self.assertEqual(env, {"GITHUB_TOKEN": mask(ENV_SECRET),
                               "PLAIN": mask("a-longer-plain-value")})
        self.srv.stop()
        try:
            for name in os.listdir(self.srv.data_dir):
                path = os.path.join(self.srv.data_dir, name)
                if os.path.isfile(path):
                    with open(path, "rb") as f:
                        self.assertNotIn(ENV_SECRET.encode(), f.read(), name)
        finally:
            self.srv.start()
            type(self).token = self.srv.login()

    def test_toggle_sends_only_enable(self):
        self.make("toggle", url="http://127.0.0.1:9/mcp", headers={"X-Api-Key": TOKEN})
        self.ok("PUT", BASE + "/toggle", {"enable": True})
        s = self.ok("GET", BASE + "/toggle")["server"]
        self.assertTrue(s["enable"])
        self.assertEqual(s["extra_args"]["headers"], {"X-Api-Key": mask(TOKEN)})
        self.ok("PUT", BASE + "/toggle", {"enable": False})
        self.assertFalse(self.ok("GET", BASE + "/toggle")["server"]["enable"])

    def test_rename(self):
        self.make("old-name")
        self.ok("PUT", BASE + "/old-name", {"name": "new-name"})
        self.ok("GET", BASE + "/new-name")
        status, resp, _ = self.as_user("GET", BASE + "/old-name")
        self.assertError(status, resp, 404)

    def test_name_with_space_in_path(self):
        self.make("my server")
        self.assertEqual(self.ok("GET", BASE + "/" + quote("my server"))["server"]["name"],
                         "my server")

    def test_duplicate_name_is_a_conflict(self):
        self.make("dup")
        status, resp, _ = self.as_user("POST", BASE, {"name": "dup", "mode": "http",
                                                      "extra_args": {"url": "http://h/x"}})
        self.assertError(status, resp, 409, "dup")
        self.make("dup2")
        status, resp, _ = self.as_user("PUT", BASE + "/dup2", {"name": "dup"})
        self.assertError(status, resp, 409)

    def test_bad_configs(self):
        cases = [
            ({"mode": "http", "extra_args": {"url": "http://h/x"}}, "name"),
            ({"name": "a/b", "mode": "http", "extra_args": {"url": "http://h/x"}}, "name"),
            ({"name": "_", "mode": "http", "extra_args": {"url": "http://h/x"}}, "name"),
            ({"name": "x" * 256, "mode": "http", "extra_args": {"url": "http://h/x"}}, "name"),
            ({"name": "b", "mode": "websocket", "extra_args": {}}, "mode"),
            ({"name": "b", "extra_args": {}}, "mode"),
            ({"name": "b", "mode": "stdio", "extra_args": {}}, "command"),
            ({"name": "b", "mode": "stdio", "extra_args": {"command": "x", "args": "-v"}}, "args"),
            ({"name": "b", "mode": "stdio", "extra_args": {"command": "x", "env": {"A": 1}}},
             "env"),
            ({"name": "b", "mode": "http", "extra_args": {"url": "ftp://h/x"}}, "url"),
            ({"name": "b", "mode": "sse", "extra_args": {}}, "url"),
            ({"name": "b", "mode": "http", "extra_args": {"url": "http://h", "headers": []}},
             "headers"),
            ({"name": "b", "mode": "http", "extra_args": {"url": "http://h", "timeout": -1}},
             "timeout"),
            ({"name": "b", "mode": "http", "extra_args": {"url": "http://h", "timeout": 1e9}},
             "timeout"),
            ({"name": "b", "mode": "stdio",
              "extra_args": {"command": "x", "args": ["y" * 1000] * 100}}, "64 KiB"),
            ({"name": "b", "mode": "http", "extra_args": "http://h"}, "extra_args"),
        ]
        for body, fragment in cases:
            with self.subTest(body=str(body)[:80]):
                status, resp, _ = self.as_user("POST", BASE, body)
                self.assertError(status, resp, 400, fragment)
        self.make("good")
        status, resp, _ = self.as_user("PUT", BASE + "/good", {"mode": "stdio"})
        self.assertError(status, resp, 400, "command")
        status, resp, _ = self.as_user("PUT", BASE + "/missing", {"enable": True})
        self.assertError(status, resp, 404)


if __name__ == "__main__":
    unittest.main()
