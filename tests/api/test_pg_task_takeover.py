"""Tasks outlive their instance (issue 19, item 3): a plugin install started on an instance that is
killed (SIGKILL) while it downloads from a stalled marketplace completes on another instance
sharing the database, and the task reads the same on both while it runs. On one instance (both
backends), an install cut short by a kill resumes when the instance starts again.

The two-instance test needs PostgreSQL (SB_TEST_BACKEND=postgresql, ctest's api_pg_ variant):
two servers with separate data directories, one DATABASE__URL and one SWITCHBOARD_SECRETS_KEY.
The marketplace is tests/fakes/fake_marketplace.py with its download behaviour set to "stall"
(the request is read and never answered) until the first instance is dead."""

import base64
import json
import os
import sys
import unittest
import urllib.request
import uuid

from harness import Server, fresh_pg_database, on_postgres
from fake_clients import wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakes"))
import fake_marketplace  # noqa: E402
from test_plugins import GREETER, zip_dir  # noqa: E402

# The lease lasts 10 s after its last renewal and other instances look every 2 s
# (domain::kTaskLeaseTtl, services::TaskClaimerOptions); the download and the plugin's start
# come on top.
TAKEOVER_BOUND = 45


class MarketplaceMixin:
    def start_market(self):
        self.market = fake_marketplace.start()
        self.addCleanup(self.market.stop)
        package = zip_dir(GREETER)
        self.control("publish", {"author": "switchboard", "name": "greeter", "version": "1.0.0",
                                 "package_base64": base64.b64encode(package).decode(),
                                 "checksum": True})

    def control(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (self.market.port, path),
                                     data=data, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"{}")

    def downloads(self):
        return [r for r in self.control("requests")["requests"] if "/download/" in r["path"]]

    def ok(self, srv, method, path, body=None):
        status, resp, _ = srv.req(method, path, body, token=self.token)
        self.assertEqual(status, 200, (method, path, resp))
        self.assertEqual(resp.get("code"), 0, resp)
        return resp["data"]

    def task(self, srv, task_id):
        return self.ok(srv, "GET", "/api/v1/system/tasks/%d" % task_id)["task"]

    def start_stalled_install(self, srv):
        """Starts installing switchboard/greeter on `srv` and returns the task id once the
        download is hanging."""
        self.control("behaviour", {"download": "stall"})
        task_id = self.ok(srv, "POST", "/api/v1/plugins/install/marketplace",
                          {"plugin_id": "switchboard/greeter"})["task_id"]
        self.assertTrue(wait_until(self.downloads, 15), "the install never began its download")
        return task_id

    def wait_done(self, srv, task_id, timeout):
        def done():
            try:
                t = self.task(srv, task_id)
            except (AssertionError, OSError):
                return None
            return t if t["status"] in ("succeeded", "failed", "cancelled") else None
        return wait_until(done, timeout, interval=0.2)

    def assert_running_plugin(self, srv):
        plugin = wait_until(lambda: (lambda p: p if p["status"] == "running" else None)(
            self.ok(srv, "GET", "/api/v1/plugins/switchboard/greeter")["plugin"]), 20)
        self.assertTrue(plugin, "the plugin is not running")
        listed = self.ok(srv, "GET", "/api/v1/plugins")["plugins"]
        self.assertIn("switchboard/greeter", [p["plugin_id"] for p in listed])


@unittest.skipUnless(on_postgres(), "two instances share one database only on PostgreSQL: run "
                     "with SB_TEST_BACKEND=postgresql (ctest api_pg_test_pg_task_takeover)")
class TwoInstancesTest(unittest.TestCase, MarketplaceMixin):

    def setUp(self):
        self.start_market()
        env = {"DATABASE__URL": fresh_pg_database(),
               "SWITCHBOARD_SECRETS_KEY": "takeover-test-" + uuid.uuid4().hex,
               "SPACE__URL": self.market.url}
        self.a = Server(env=env)
        self.b = Server(env=env)
        for srv in (self.a, self.b):
            self.addCleanup(srv.cleanup)
        self.a.start()
        self.token = self.a.init_and_login()
        self.b.start()

    def info(self, srv):
        return self.ok(srv, "GET", "/api/v1/system/info")

    def test_an_install_on_a_killed_instance_completes_on_another(self):
        task_id = self.start_stalled_install(self.a)
        # Visible, and the same, on both while the first runs it.
        on_a, on_b = self.task(self.a, task_id), self.task(self.b, task_id)
        self.assertEqual(on_a["status"], "running", on_a)
        self.assertEqual((on_b["status"], on_b["kind"]), ("running", "plugin-install"))
        self.assertIn("downloading", on_b["task_context"]["current_action"])
        self.assertNotEqual(self.info(self.a)["instance_id"], self.info(self.b)["instance_id"])

        self.a.kill()
        self.control("behaviour", {"download": "ok"})
        task = self.wait_done(self.b, task_id, TAKEOVER_BOUND)
        self.assertTrue(task, "task %d did not end on the second instance within %d s"
                        % (task_id, TAKEOVER_BOUND))
        self.assertEqual(task["status"], "succeeded", task)
        self.assertIn("resumed after the instance running it stopped", json.dumps(task))
        self.assert_running_plugin(self.b)
        # Downloaded once by the dead instance (never answered) and once by the live one.
        self.assertEqual(len(self.downloads()), 2)


class RestartTest(unittest.TestCase, MarketplaceMixin):
    """One instance (both backends): what it ran when it was killed resumes when it starts again,
    at once rather than after the lease (the instance gives its own tasks up at start)."""

    def setUp(self):
        self.start_market()
        self.srv = Server(env={"SPACE__URL": self.market.url})
        self.addCleanup(self.srv.cleanup)
        self.srv.start()
        self.token = self.srv.init_and_login()

    def test_an_install_cut_short_by_a_kill_resumes_at_the_next_start(self):
        task_id = self.start_stalled_install(self.srv)
        self.srv.kill()
        self.control("behaviour", {"download": "ok"})
        self.srv.start()
        self.token = self.srv.login()
        task = self.wait_done(self.srv, task_id, 30)
        self.assertTrue(task, "task %d did not end after the restart" % task_id)
        self.assertEqual(task["status"], "succeeded", task)
        self.assertIn("resumed after the instance running it stopped", json.dumps(task))
        self.assert_running_plugin(self.srv)


if __name__ == "__main__":
    unittest.main()
