"""MCP server configurations (/api/v1/mcp/servers) in LangBot 4.9.5's shapes: CRUD by name,
secrets in extra_args masked and kept when the mask comes back, bad configs refused, and the rows
survive a restart (sealed at rest)."""

import os
import unittest
from urllib.parse import quote

from fake_clients import FAKES, wait_until
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


class FakeMcp:
    """tests/fakes/fake_mcp.py over HTTP (Streamable HTTP at /mcp, HTTP+SSE at /sse)."""

    def __init__(self, *extra):
        import subprocess
        import sys
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_mcp.py"),
                                      "--port", "0"] + list(extra), stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_MCP_PORT="), line
        self.base = "http://127.0.0.1:%s" % line.strip().split("=", 1)[1]

    def control(self, method, path, body=None):
        import json
        import urllib.request
        data = json.dumps(body).encode() if body is not None else None
        with urllib.request.urlopen(urllib.request.Request(self.base + path, data=data,
                                                           method=method), timeout=10) as r:
            return json.loads(r.read() or b"null")

    def requests(self):
        return self.control("GET", "/_control/requests")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        self.proc.stdout.close()


class McpConnectionTestTest(ServerTestCase):
    """POST /mcp/servers/{name}/test: a task that connects (Streamable HTTP, HTTP+SSE, or a stdio
    child process), lists the tools (every page) and ends the session, as LangBot's console uses
    it."""

    def setUp(self):
        self.fake = FakeMcp()
        self.addCleanup(self.fake.stop)

    def wait_task(self, task_id, timeout=30):
        def done():
            task = self.ok("GET", "/api/v1/system/tasks/%d" % task_id)["task"]
            return task if task["status"] in ("succeeded", "failed") else None
        task = wait_until(done, timeout)
        self.assertTrue(task, "task %d did not end" % task_id)
        return task

    def test_stored_server(self):
        self.ok("POST", BASE, {"name": "stored", "mode": "http", "enable": False, "extra_args": {
            "url": self.fake.base + "/mcp", "headers": {"Authorization": TOKEN}}})
        task_id = self.ok("POST", BASE + "/stored/test", {})["task_id"]
        task = self.wait_task(task_id)
        self.assertEqual(task["status"], "succeeded", task)
        result = task["runtime"]["result"]
        self.assertEqual([t["name"] for t in result["tools"]],
                         ["echo", "add", "slow", "crash", "grow"])
        self.assertEqual(result["protocol_version"], "2025-06-18")
        reqs = self.fake.requests()
        posts = [r for r in reqs if r["method"] == "POST"]
        # initialize, initialized, 3 pages of tools/list; all with the operator's header.
        self.assertEqual(len(posts), 5)
        self.assertTrue(all(r["headers"].get("authorization") == TOKEN for r in posts))
        self.assertTrue(all("text/event-stream" in r["headers"]["accept"] for r in posts))
        sid = [r for r in posts if r["headers"].get("mcp-session-id")]
        self.assertEqual(len(sid), 4)
        self.assertEqual(posts[1]["headers"].get("mcp-protocol-version"), "2025-06-18")
        self.assertEqual([r["method"] for r in reqs if r["method"] == "DELETE"], ["DELETE"])

    def test_unsaved_form_with_masked_header(self):
        # The console tests its edited form as "_", with the masked header it was shown.
        self.ok("POST", BASE, {"name": "edited", "mode": "http", "enable": False, "extra_args": {
            "url": "http://127.0.0.1:9/none", "headers": {"Authorization": TOKEN}}})
        shown = self.ok("GET", BASE + "/edited")["server"]["extra_args"]["headers"]
        task_id = self.ok("POST", BASE + "/_/test", {
            "name": "edited", "mode": "http",
            "extra_args": {"url": self.fake.base + "/mcp", "headers": shown}})["task_id"]
        self.assertEqual(self.wait_task(task_id)["status"], "succeeded")
        self.assertEqual(self.fake.requests()[0]["headers"].get("authorization"), TOKEN)

    def test_sse_answers(self):
        fake = FakeMcp("--sse-answers")
        self.addCleanup(fake.stop)
        task_id = self.ok("POST", BASE + "/_/test", {
            "name": "x", "mode": "http", "extra_args": {"url": fake.base + "/mcp"}})["task_id"]
        task = self.wait_task(task_id)
        self.assertEqual(task["status"], "succeeded", task)
        self.assertEqual(task["runtime"]["result"]["tool_count"], 5)

    def test_failures_are_reported(self):
        task_id = self.ok("POST", BASE + "/_/test", {
            "mode": "http", "extra_args": {"url": "http://127.0.0.1:9/mcp", "timeout": 2}})["task_id"]
        task = self.wait_task(task_id)
        self.assertEqual(task["status"], "failed")
        self.assertTrue(task["runtime"]["exception"])
        for mode, fragment in (("invalid", "invalid JSON-RPC"), ("huge-list", "bytes")):
            self.fake.control("POST", "/_control/hostile", {"mode": mode})
            task_id = self.ok("POST", BASE + "/_/test", {
                "mode": "http", "extra_args": {"url": self.fake.base + "/mcp"}})["task_id"]
            task = self.wait_task(task_id)
            self.assertEqual(task["status"], "failed", mode)
            self.assertIn(fragment, task["runtime"]["exception"], mode)
        status, resp, _ = self.as_user("POST", BASE + "/_/test", {
            "mode": "websocket", "extra_args": {"url": "ws://127.0.0.1:9/"}})
        self.assertError(status, resp, 400)
        status, resp, _ = self.as_user("POST", BASE + "/missing/test", {})
        self.assertError(status, resp, 404)

    def test_sse_server(self):
        self.ok("POST", BASE, {"name": "old-sse", "mode": "sse", "enable": False, "extra_args": {
            "url": self.fake.base + "/sse", "headers": {"Authorization": TOKEN},
            "ssereadtimeout": 5}})
        task = self.wait_task(self.ok("POST", BASE + "/old-sse/test", {})["task_id"])
        self.assertEqual(task["status"], "succeeded", task)
        self.assertEqual(task["runtime"]["result"]["tool_count"], 5)
        posts = [r for r in self.fake.requests() if r["method"] == "POST"]
        self.assertTrue(posts and all(r["path"].startswith("/messages?session_id=")
                                      for r in posts))
        self.assertTrue(all(r["headers"].get("authorization") == TOKEN for r in posts))
        # An endpoint of another origin is refused: our headers never go there.
        other = FakeMcp("--endpoint-prefix", "http://127.0.0.2:9/m")
        self.addCleanup(other.stop)
        task = self.wait_task(self.ok("POST", BASE + "/_/test", {
            "mode": "sse", "extra_args": {"url": other.base + "/sse"}})["task_id"])
        self.assertEqual(task["status"], "failed")
        self.assertIn("origin", task["runtime"]["exception"])

    def test_stdio_server(self):
        # A child process in the plugins' sandbox, with the operator's env (a secret).
        fake = os.path.join(FAKES, "fake_mcp.py")
        self.ok("POST", BASE, {"name": "local", "mode": "stdio", "enable": False, "extra_args": {
            "command": "python3", "args": [fake, "--stdio", "--log-env", "MCP_TOKEN"],
            "env": {"MCP_TOKEN": ENV_SECRET}}})
        task = self.wait_task(self.ok("POST", BASE + "/local/test", {})["task_id"])
        self.assertEqual(task["status"], "succeeded", task)
        result = task["runtime"]["result"]
        self.assertEqual([t["name"] for t in result["tools"]],
                         ["echo", "add", "slow", "crash", "grow"])
        self.assertEqual(result["protocol_version"], "2025-06-18")
        uid = self.ok("GET", BASE + "/local")["server"]["uuid"]
        self.assertTrue(os.path.isdir(os.path.join(self.srv.data_dir, "mcp", uid)))
        # Its stderr is logged, the env value masked.
        log = "\n".join(self.srv.stdout_lines)
        self.assertIn("fake-mcp: MCP_TOKEN=****", log)
        self.assertNotIn(ENV_SECRET, log)
        with open(self.srv.log_path, "rb") as f:
            self.assertNotIn(ENV_SECRET.encode(), f.read())
        # A command that is not there, and one that dies at once, fail with the reason.
        for args, fragment in (({"command": "no-such-mcp-server"}, "not installed"),
                               ({"command": "python3", "args": ["-c", "import sys; "
                                 "sys.stderr.write('boom here\\n'); sys.exit(2)"]},
                                "boom here")):
            task = self.wait_task(self.ok("POST", BASE + "/_/test", {
                "mode": "stdio", "extra_args": args})["task_id"])
            self.assertEqual(task["status"], "failed", args)
            self.assertIn(fragment, task["runtime"]["exception"])


class PipelineExtensionsTest(ServerTestCase):
    """GET/PUT /pipelines/{uuid}/extensions in LangBot's shape."""

    def test_bind_and_read_back(self):
        pid = self.make_pipeline("ext")
        self.ok("POST", BASE, {"name": "bound", "mode": "http", "enable": False, "extra_args": {
            "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": TOKEN}}})
        path = "/api/v1/pipelines/%s/extensions" % pid
        ext = self.ok("GET", path)
        self.assertEqual((ext["enable_all_plugins"], ext["enable_all_mcp_servers"]), (True, True))
        self.assertEqual((ext["bound_plugins"], ext["bound_mcp_servers"]), ([], []))
        self.assertIsInstance(ext["available_plugins"], list)
        avail = [s for s in ext["available_mcp_servers"] if s["name"] == "bound"]
        self.assertEqual(len(avail), 1)
        self.assertNotIn(TOKEN, str(ext))
        self.ok("PUT", path, {"bound_plugins": [{"author": "a", "name": "p"}],
                              "bound_mcp_servers": ["bound"], "enable_all_plugins": False,
                              "enable_all_mcp_servers": False})
        ext = self.ok("GET", path)
        self.assertEqual(ext["bound_plugins"], [{"author": "a", "name": "p"}])
        self.assertEqual(ext["bound_mcp_servers"], ["bound"])
        self.assertEqual((ext["enable_all_plugins"], ext["enable_all_mcp_servers"]),
                         (False, False))
        prefs = self.ok("GET", "/api/v1/pipelines/" + pid)["pipeline"]["extensions_preferences"]
        self.assertEqual(prefs["mcp_servers"], ["bound"])
        self.assertFalse(prefs["enable_all_mcp_servers"])
        # LangBot: an absent bound_mcp_servers keeps the stored list.
        self.ok("PUT", path, {"bound_plugins": []})
        ext = self.ok("GET", path)
        self.assertEqual(ext["bound_mcp_servers"], ["bound"])
        self.assertEqual(ext["enable_all_plugins"], True)

    def test_bad_requests(self):
        pid = self.make_pipeline("ext-bad")
        path = "/api/v1/pipelines/%s/extensions" % pid
        for body in ({"bound_plugins": ["a/p"]}, {"bound_plugins": [{"author": "a"}]},
                     {"bound_mcp_servers": "x"}, {"bound_mcp_servers": [1]},
                     {"enable_all_plugins": "yes"},
                     {"bound_mcp_servers": ["s%d" % i for i in range(1001)]}):
            with self.subTest(body=str(body)[:60]):
                status, resp, _ = self.as_user("PUT", path, body)
                self.assertError(status, resp, 400)
        status, resp, _ = self.as_user("GET", "/api/v1/pipelines/%s/extensions"
                                       % "00000000-0000-4000-8000-000000000000")
        self.assertError(status, resp, 404)


if __name__ == "__main__":
    unittest.main()
