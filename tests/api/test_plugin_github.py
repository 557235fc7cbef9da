"""Installing plugins from GitHub release assets, as LangBot's console does, against the fake GitHub
(tests/fakes/fake_github.py, at plugins.github_api_url): releases and assets listed in LangBot's
shapes, an asset downloaded through GitHub's redirect and installed as a running plugin, and the
refusals: hosts that are not GitHub's or the configured base (also as a redirect target), bad
repository URLs, unknown repositories and releases, the rate limit, redirect loops, bad packages."""

import base64
import json
import os
import sys
import unittest
import urllib.parse
import urllib.request

import test_plugins
from fake_clients import wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakes"))
import fake_github  # noqa: E402

# Never route 127.0.0.1 through an http_proxy from the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class PluginGithubTest(test_plugins.PluginCase):
    github = None

    @classmethod
    def setUpClass(cls):
        cls.github = fake_github.start()
        cls.extra_env = {"PLUGINS__GITHUB_API_URL": cls.github.url}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.github.stop()

    def setUp(self):
        self.github_control("reset", {})

    def github_control(self, what, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.github.url + "/_control/" + what, data=data,
                                     headers={"Content-Type": "application/json"})
        with OPENER.open(req, timeout=10) as r:
            return json.loads(r.read())

    def release(self, tag, assets, **extra):
        body = {"owner": "Alice", "repo": "echo", "tag_name": tag,
                "assets": [{"name": n, "content_base64": base64.b64encode(d).decode(),
                            "content_type": "application/zip"} for n, d in assets]}
        body.update(extra)
        return self.github_control("release", body)

    def behave(self, **behaviour):
        self.github_control("behaviour", behaviour)

    def requests(self):
        return self.github_control("requests")["requests"]

    def install_github(self, asset_url, tag="v1.0.0"):
        return self.ok("POST", "/api/v1/plugins/install/github",
                       {"asset_url": asset_url, "owner": "Alice", "repo": "echo",
                        "release_tag": tag})["task_id"]

    def test_lists_releases_and_assets_in_langbots_shapes(self):
        first = self.release("v1.0.0", [("echo.zip", b"PK")])
        second = self.release("v1.1.0", [], name=None, prerelease=True)
        data = self.ok("POST", "/api/v1/plugins/github/releases",
                       {"repo_url": "https://github.com/Alice/echo.git"})
        self.assertEqual((data["owner"], data["repo"]), ("Alice", "echo"))
        self.assertEqual([r["id"] for r in data["releases"]], [second["id"], first["id"]])
        self.assertEqual(data["releases"][0], {
            "id": second["id"], "tag_name": "v1.1.0", "name": None,
            "published_at": data["releases"][0]["published_at"], "prerelease": True,
            "draft": False})
        self.assertEqual(data["releases"][1]["name"], "v1.0.0")
        seen = self.requests()[-1]
        self.assertEqual((seen["path"], seen["query"]),
                         ("/repos/Alice/echo/releases", "per_page=100"))
        self.assertIn("application/vnd.github+json", seen["accept"])
        # An API key works as well as the user token (LangBot: USER_TOKEN_OR_API_KEY).
        status, resp, _ = self.as_key("POST", "/api/v1/plugins/github/release-assets",
                                      {"owner": "Alice", "repo": "echo",
                                       "release_id": first["id"]})
        self.assertEqual(status, 200, resp)
        self.assertEqual(resp["data"]["assets"], [{
            "id": first["assets"][0]["id"], "name": "echo.zip", "size": 2,
            "download_url": first["assets"][0]["browser_download_url"],
            "content_type": "application/zip"}])
        self.assertEqual(self.ok("POST", "/api/v1/plugins/github/release-assets",
                                 {"owner": "Alice", "repo": "echo",
                                  "release_id": str(second["id"])})["assets"], [])

    def test_request_errors(self):
        self.release("v1.0.0", [])
        for url in ("https://gitlab.com/a/b", "github.com/alice", "", "https://github.com/../x"):
            status, resp, _ = self.as_user("POST", "/api/v1/plugins/github/releases",
                                           {"repo_url": url})
            self.assertError(status, resp, 400, "Invalid GitHub repository URL")
        status, resp, _ = self.as_user("POST", "/api/v1/plugins/github/releases",
                                       {"repo_url": "https://github.com/alice/nothing"})
        self.assertError(status, resp, 404, "not found")
        for body in ({"owner": "Alice", "repo": "echo"},
                     {"owner": "Alice", "repo": "echo", "release_id": -3},
                     {"owner": "", "repo": "echo", "release_id": 1}):
            status, resp, _ = self.as_user("POST", "/api/v1/plugins/github/release-assets", body)
            self.assertError(status, resp, 400, "Missing required parameters")
        status, resp, _ = self.as_user("POST", "/api/v1/plugins/github/release-assets",
                                       {"owner": "../x", "repo": "echo", "release_id": 1})
        self.assertError(status, resp, 400)
        status, resp, _ = self.as_user("POST", "/api/v1/plugins/github/release-assets",
                                       {"owner": "Alice", "repo": "echo", "release_id": 99999})
        self.assertError(status, resp, 404, "not found")

        self.behave(rate_limited=True)
        status, resp, _ = self.as_user("POST", "/api/v1/plugins/github/releases",
                                       {"repo_url": "https://github.com/Alice/echo"})
        self.assertError(status, resp, 502, "rate limit")
        self.assertIn("try again at", resp["msg"])

    def test_installs_a_release_asset_as_a_running_plugin(self):
        made = self.release("v1.0.0", [("ghplug.zip", self.greeter(name="ghplug"))])
        task = self.wait_task(self.install_github(made["assets"][0]["browser_download_url"]))
        self.assertEqual(task["status"], "succeeded", task)
        self.assertEqual(task["kind"], "plugin-install")
        self.assertIn("Alice/echo@v1.0.0", task["label"])
        self.assertGreater(task["task_context"]["metadata"]["downloaded_bytes"], 0)
        plugin = self.plugin("switchboard/ghplug")
        self.assertEqual(plugin["install_source"], "github")
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/ghplug")["status"] == "running", 10))
        paths = [r["path"] for r in self.requests()]
        self.assertIn("/Alice/echo/releases/download/v1.0.0/ghplug.zip", paths)
        self.assertIn("/_objects/%d" % made["assets"][0]["id"], paths)  # followed the redirect

        # The same package again: the task fails, the plugin stays as it was.
        task = self.wait_task(self.install_github(made["assets"][0]["browser_download_url"]))
        self.assertEqual(task["status"], "failed", task)
        self.assertIn("installed already", task["runtime"]["exception"])
        self.delete("switchboard/ghplug")

        # GitHub's API asset URL works too (it redirects when asked for the bytes).
        made = self.release("v2.0.0", [("ghapi.zip", self.greeter(name="ghapi"))])
        task = self.wait_task(self.install_github(made["assets"][0]["url"], "v2.0.0"))
        self.assertEqual(task["status"], "succeeded", task)
        self.assertEqual(self.plugin("switchboard/ghapi")["install_source"], "github")
        self.delete("switchboard/ghapi")

    def test_refuses_urls_outside_github_and_the_configured_base(self):
        port = urllib.parse.urlsplit(self.github.url).port
        for url in ("http://198.51.100.7/a/b/releases/download/v1/p.zip",
                    "https://evil.example/p.zip", "http://127.0.0.1:%d/p.zip" % (port + 1),
                    "https://127.0.0.1:%d/p.zip" % port, "http://localhost:%d/p.zip" % port,
                    "file:///etc/passwd", "not a url", "http://user:pw@127.0.0.1:%d/x" % port):
            status, resp, _ = self.as_user("POST", "/api/v1/plugins/install/github",
                                           {"asset_url": url, "owner": "a", "repo": "b"})
            self.assertError(status, resp, 400)
        status, resp, _ = self.as_user("POST", "/api/v1/plugins/install/github", {"owner": "a"})
        self.assertError(status, resp, 400, "Missing asset_url")
        self.assertEqual(self.requests(), [])  # nothing was fetched

    def test_refused_redirects_loops_and_bad_packages_fail_the_task(self):
        made = self.release("v1.0.0", [("p.zip", self.greeter(name="ghbad"))])
        url = made["assets"][0]["browser_download_url"]
        self.behave(redirect_location="http://127.0.0.1:1/internal?X-Amz-Signature=sig123")
        task = self.wait_task(self.install_github(url))
        self.assertEqual(task["status"], "failed", task)
        self.assertIn("GitHub's hosts", task["runtime"]["exception"])
        self.assertNotIn("sig123", str(task))
        self.behave(redirect_location=None, redirect_loop=True)
        task = self.wait_task(self.install_github(url))
        self.assertEqual(task["status"], "failed", task)
        self.assertIn("more than 5 redirects", task["runtime"]["exception"])
        self.behave(redirect_loop=False)
        status, resp, _ = self.as_user("GET", "/api/v1/plugins/switchboard/ghbad")
        self.assertEqual(status, 404, resp)

        made = self.release("v3.0.0", [("junk.zip", b"this is not a zip")])
        task = self.wait_task(self.install_github(made["assets"][0]["browser_download_url"]))
        self.assertEqual(task["status"], "failed", task)
        self.assertIn("bad package", task["runtime"]["exception"])
        missing = url.replace("p.zip", "nothing.zip")
        task = self.wait_task(self.install_github(missing))
        self.assertEqual(task["status"], "failed", task)
        self.assertIn("no such asset", task["runtime"]["exception"])


if __name__ == "__main__":
    unittest.main()
