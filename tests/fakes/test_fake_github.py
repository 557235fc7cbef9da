"""Self-test of fake_github.py (standard library only): the fake runs in process via start(), one
fresh instance per test, plus one run of the command line.

Run: cd tests/fakes && python3 -m unittest -v test_fake_github
"""

import base64
import http.client
import json
import os
import subprocess
import sys
import unittest
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fake_github  # noqa: E402

TIMEOUT = 5.0
# Never route 127.0.0.1 through an http_proxy from the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class FakeGithubTest(unittest.TestCase):

    def setUp(self):
        self.gh = fake_github.start()
        self.addCleanup(self.gh.stop)

    def get(self, path, headers=None):
        """(status, headers, body) without following redirects."""
        c = http.client.HTTPConnection("127.0.0.1", self.gh.port, timeout=TIMEOUT)
        try:
            c.request("GET", path, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def control(self, what, body):
        req = urllib.request.Request(self.gh.url + "/_control/" + what,
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with OPENER.open(req, timeout=TIMEOUT) as r:
            return json.loads(r.read())

    def release(self, tag="v1.0.0", assets=None, **extra):
        body = {"owner": "Alice", "repo": "echo", "tag_name": tag,
                "assets": assets if assets is not None else
                [{"name": "echo.zip", "content_base64": base64.b64encode(b"PK-bytes").decode(),
                  "content_type": "application/zip"}]}
        body.update(extra)
        return self.control("release", body)

    def test_lists_releases_newest_first_with_paging(self):
        first = self.release("v1.0.0")
        second = self.release("v1.1.0", name=None, prerelease=True)
        status, headers, body = self.get("/repos/alice/ECHO/releases",
                                         {"Accept": "application/vnd.github+json"})
        self.assertEqual(status, 200)
        releases = json.loads(body)
        self.assertEqual([r["id"] for r in releases], [second["id"], first["id"]])
        self.assertIsNone(releases[0]["name"])
        self.assertTrue(releases[0]["prerelease"])
        for key in ("id", "tag_name", "name", "published_at", "prerelease", "draft", "assets"):
            self.assertIn(key, releases[1])
        self.assertEqual(headers["x-ratelimit-limit"], "60")
        self.assertEqual(headers["x-ratelimit-remaining"], "59")
        status, _, body = self.get("/repos/alice/echo/releases?per_page=1&page=2")
        self.assertEqual([r["id"] for r in json.loads(body)], [first["id"]])

    def test_one_release_with_its_assets_and_errors(self):
        made = self.release()
        status, _, body = self.get("/repos/Alice/echo/releases/%d" % made["id"])
        self.assertEqual(status, 200)
        asset = json.loads(body)["assets"][0]
        self.assertEqual((asset["name"], asset["size"], asset["content_type"]),
                         ("echo.zip", 8, "application/zip"))
        self.assertEqual(asset["browser_download_url"],
                         self.gh.url + "/Alice/echo/releases/download/v1.0.0/echo.zip")
        for path in ("/repos/alice/nothing/releases", "/repos/alice/echo/releases/1",
                     "/repos/alice/echo/releases/assets/1"):
            status, _, body = self.get(path)
            self.assertEqual(status, 404, path)
            self.assertEqual(json.loads(body)["message"], "Not Found")

    def test_downloads_redirect_to_a_signed_object_url(self):
        made = self.release()
        url = made["assets"][0]["browser_download_url"]
        status, headers, _ = self.get(urllib.parse.urlsplit(url).path)
        self.assertEqual(status, 302)
        location = headers["location"]
        self.assertTrue(location.startswith(self.gh.url + "/_objects/"), location)
        self.assertIn("X-Amz-Signature=", location)
        status, headers, body = self.get(location[len(self.gh.url):])
        self.assertEqual((status, body), (200, b"PK-bytes"))
        self.assertEqual(headers["content-length"], "8")
        # urllib follows the redirect like a client should.
        with OPENER.open(url, timeout=TIMEOUT) as r:
            self.assertEqual(r.read(), b"PK-bytes")
        # The API's asset URL redirects too when asked for the bytes.
        api_path = urllib.parse.urlsplit(made["assets"][0]["url"]).path
        status, headers, _ = self.get(api_path, {"Accept": "application/octet-stream"})
        self.assertEqual(status, 302)
        status, _, body = self.get(api_path)
        self.assertEqual(json.loads(body)["id"], made["assets"][0]["id"])
        status, _, _ = self.get("/Alice/echo/releases/download/v1.0.0/other.zip")
        self.assertEqual(status, 404)

    def test_redirect_behaviours(self):
        made = self.release()
        path = urllib.parse.urlsplit(made["assets"][0]["browser_download_url"]).path
        self.control("behaviour", {"redirect_location": "http://198.51.100.7/x"})
        status, headers, _ = self.get(path)
        self.assertEqual((status, headers["location"]), (302, "http://198.51.100.7/x"))
        self.control("behaviour", {"redirect_location": None, "redirect_loop": True})
        status, headers, _ = self.get(path)
        self.assertEqual((status, headers["location"]), (302, self.gh.url + path))

    def test_rate_limit_answers_403_with_the_headers(self):
        self.release()
        self.control("behaviour", {"rate_limited": True})
        status, headers, body = self.get("/repos/alice/echo/releases")
        self.assertEqual(status, 403)
        self.assertEqual(headers["x-ratelimit-remaining"], "0")
        self.assertGreater(int(headers["x-ratelimit-reset"]), 0)
        self.assertIn("API rate limit exceeded", json.loads(body)["message"])
        self.control("behaviour", {"rate_limited": False})
        status, _, _ = self.get("/repos/alice/echo/releases")
        self.assertEqual(status, 200)

    def test_requests_are_recorded_and_reset_clears(self):
        self.release()
        self.get("/repos/alice/echo/releases?per_page=100", {"Accept": "application/json"})
        with OPENER.open(self.gh.url + "/_control/requests", timeout=TIMEOUT) as r:
            seen = json.loads(r.read())["requests"]
        self.assertEqual(seen, [{"method": "GET", "path": "/repos/alice/echo/releases",
                                 "query": "per_page=100", "accept": "application/json"}])
        self.control("reset", {})
        status, _, _ = self.get("/repos/alice/echo/releases")
        self.assertEqual(status, 404)
        with self.assertRaises(urllib.error.HTTPError) as e:
            self.control("release", {"owner": "a/b", "repo": "r", "tag_name": "t"})
        self.assertEqual(e.exception.code, 400)

    def test_command_line_prints_its_port(self):
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_github.py")],
                                stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline().strip()
            self.assertRegex(line, r"^FAKE_GITHUB_PORT=\d+$")
            port = int(line.split("=")[1])
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            c.request("GET", "/repos/a/b/releases")
            self.assertEqual(c.getresponse().status, 404)
            c.close()
        finally:
            proc.terminate()
            self.assertEqual(proc.wait(timeout=10), 0)
            proc.stdout.close()


if __name__ == "__main__":
    unittest.main()
