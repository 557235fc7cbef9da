"""Self-test of fake_marketplace.py (standard library only); the fake runs in process via start(),
one fresh instance per test, plus one run of the command line.

Run: cd tests/fakes && python3 -m unittest -v test_fake_marketplace
"""

import base64
import hashlib
import http.client
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fake_marketplace  # noqa: E402

GREETER = os.path.abspath(os.path.join(HERE, "..", "..", "examples", "plugins", "greeter"))
API = "/api/v1/marketplace/plugins"
TIMEOUT = 5.0
# Never route 127.0.0.1 through an http_proxy from the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def make_zip(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


class MarketCase(unittest.TestCase):

    def setUp(self):
        self.market = fake_marketplace.start()
        self.addCleanup(self.market.stop)

    def request(self, method, path, body=None, timeout=TIMEOUT):
        """-> (status, headers, raw bytes)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.market.port, path),
                                     data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with OPENER.open(req, timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            e.close()
            return e.code, e.headers, raw

    def get_json(self, path, expect=200):
        status, headers, raw = self.request("GET", path)
        self.assertEqual(status, expect, raw)
        self.assertEqual(headers.get("Content-Type"), "application/json")
        return json.loads(raw)

    def ok(self, path):
        answer = self.get_json(path)
        self.assertEqual(answer["code"], 0)
        self.assertEqual(answer["msg"], "ok")
        return answer["data"]

    def assertApiError(self, status, raw, expect_status, msg=None):
        self.assertEqual(status, expect_status, raw)
        answer = json.loads(raw)
        self.assertEqual(answer["code"], -1)
        self.assertIsInstance(answer["msg"], str)
        self.assertTrue(answer["msg"])
        if msg is not None:
            self.assertEqual(answer["msg"], msg)

    def control(self, what, body=None, expect=200):
        status, _, raw = self.request("POST", "/_control/" + what,
                                      {} if body is None else body)
        self.assertEqual(status, expect, raw)
        return json.loads(raw)

    def publish(self, author, name, version, package, **extra):
        body = {"author": author, "name": name, "version": version,
                "package_base64": base64.b64encode(package).decode()}
        body.update(extra)
        return self.control("publish", body)["data"]

    def raw_get(self, path, timeout):
        """A GET on a fresh http.client connection; -> (connection, response). The connection is
        closed when the request or the headers fail (e.g. time out)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.market.port, timeout=timeout)
        try:
            conn.request("GET", path)
            return conn, conn.getresponse()
        except BaseException:
            conn.close()
            raise


class InfoTest(MarketCase):

    def test_unknown_plugin_is_404(self):
        status, _, raw = self.request("GET", API + "/nobody/nothing")
        self.assertApiError(status, raw, 404, "plugin not found")

    def test_info_shape_without_checksum(self):
        pkg = make_zip({"manifest.yaml": "a: b\n"})
        answer = self.publish("alice", "tool", "1.0.0", pkg, label="Tool", description="Does it")
        self.assertEqual(answer["sha256"], hashlib.sha256(pkg).hexdigest())
        self.assertEqual(answer["size"], len(pkg))
        plugin = self.ok(API + "/alice/tool")["plugin"]
        self.assertEqual(plugin, {"author": "alice", "name": "tool", "label": {"en_US": "Tool"},
                                  "description": {"en_US": "Does it"},
                                  "latest_version": "1.0.0"})
        self.publish("alice", "tool", "1.0.1", pkg, checksum=False)
        plugin = self.ok(API + "/alice/tool/")["plugin"]
        self.assertNotIn("checksum", plugin)
        self.assertEqual(plugin["label"], {"en_US": "tool"})  # default label = name
        self.assertEqual(plugin["description"], {"en_US": ""})

    def test_checksum_true_is_sha256_of_latest(self):
        old, new = make_zip({"v": "1"}), make_zip({"v": "2"})
        self.publish("a", "p", "1.9.0", old, checksum=True)
        plugin = self.ok(API + "/a/p")["plugin"]
        self.assertEqual(plugin["checksum"], hashlib.sha256(old).hexdigest())
        self.publish("a", "p", "1.10.0", new, checksum=True)
        plugin = self.ok(API + "/a/p")["plugin"]
        self.assertEqual(plugin["latest_version"], "1.10.0")
        self.assertEqual(plugin["checksum"], hashlib.sha256(new).hexdigest())

    def test_checksum_string_is_advertised_as_given(self):
        self.publish("a", "p", "1.0.0", b"PK", checksum="00" * 32)
        self.assertEqual(self.ok(API + "/a/p")["plugin"]["checksum"], "00" * 32)

    def test_versions_compare_numerically(self):
        for v in ["1.9.0", "1.10.0", "1.2.3", "0.99", "1.10.0-rc1"]:
            self.publish("a", "p", v, v.encode())
        self.assertEqual(self.ok(API + "/a/p")["plugin"]["latest_version"], "1.10.0")
        self.publish("a", "p", "2", b"2")
        self.assertEqual(self.ok(API + "/a/p")["plugin"]["latest_version"], "2")
        key = fake_marketplace.version_key
        self.assertGreater(key("1.10.0"), key("1.9.0"))
        self.assertEqual(key("1.0"), key("1.0.0"))
        self.assertLess(key("1.0.0-beta"), key("1.0.0"))


class DownloadTest(MarketCase):

    def test_download_bytes(self):
        pkg = make_zip({"manifest.yaml": "x: 1\n", "main.py": "print(1)\n"})
        self.publish("a", "p", "1.0.0", pkg)
        self.publish("a", "p", "1.1.0", b"other")
        status, headers, raw = self.request("GET", API + "/download/a/p/1.0.0")
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("Content-Type"), "application/zip")
        self.assertEqual(int(headers.get("Content-Length")), len(pkg))
        self.assertEqual(raw, pkg)
        self.assertEqual(self.request("GET", API + "/download/a/p/1.1.0")[2], b"other")

    def test_unknown_plugin_or_version_is_404(self):
        self.publish("a", "p", "1.0.0", b"x")
        status, headers, raw = self.request("GET", API + "/download/a/p/9.9.9")
        self.assertApiError(status, raw, 404, "version not found")
        self.assertEqual(headers.get("Content-Type"), "application/json")
        status, _, raw = self.request("GET", API + "/download/a/nothing/1.0.0")
        self.assertApiError(status, raw, 404, "plugin not found")

    def test_republish_replaces_version(self):
        self.publish("a", "p", "1.0.0", b"first")
        self.publish("a", "p", "1.0.0", b"second")
        self.assertEqual(self.request("GET", API + "/download/a/p/1.0.0")[2], b"second")


class ListTest(MarketCase):

    def test_empty(self):
        self.assertEqual(self.ok(API), {"plugins": [], "total": 0, "page": 1, "page_size": 10})

    def test_sorted_and_paged(self):
        for author, name in [("zed", "a"), ("bob", "b"), ("bob", "a"), ("amy", "z")]:
            self.publish(author, name, "1.0.0", b"x", checksum=True)
        self.publish("bob", "a", "1.2.0", b"y")
        data = self.ok(API)
        self.assertEqual(data["total"], 4)
        self.assertEqual((data["page"], data["page_size"]), (1, 10))
        self.assertEqual([(p["author"], p["name"]) for p in data["plugins"]],
                         [("amy", "z"), ("bob", "a"), ("bob", "b"), ("zed", "a")])
        # Same plugin objects as the info endpoint.
        self.assertEqual(data["plugins"][1], self.ok(API + "/bob/a")["plugin"])
        self.assertEqual(data["plugins"][1]["latest_version"], "1.2.0")
        self.assertEqual(data["plugins"][0]["checksum"], hashlib.sha256(b"x").hexdigest())
        page = self.ok(API + "?page=2&page_size=3")
        self.assertEqual(page["total"], 4)
        self.assertEqual((page["page"], page["page_size"]), (2, 3))
        self.assertEqual([p["author"] for p in page["plugins"]], ["zed"])
        self.assertEqual(self.ok(API + "?page=5&page_size=3")["plugins"], [])
        self.assertEqual(len(self.ok(API + "?page_size=2")["plugins"]), 2)
        self.assertEqual(self.ok(API + "?page=2")["plugins"], [])

    def test_bad_parameters_are_400(self):
        for query in ("page=x", "page_size=1.5", "page=1&page_size=", "page=0", "page_size=-1"):
            status, _, raw = self.request("GET", API + "?" + query)
            self.assertApiError(status, raw, 400)


class PublishDirTest(MarketCase):

    def test_greeter_with_version_override(self):
        answer = self.control("publish_dir", {
            "author": "switchboard", "name": "greeter", "version": "2.0.0", "dir": GREETER,
            "checksum": True, "manifest_overrides": {"metadata.version": "2.0.0"}})["data"]
        self.assertIn("manifest.yaml", answer["files"])
        status, _, pkg = self.request("GET", API + "/download/switchboard/greeter/2.0.0")
        self.assertEqual(status, 200)
        self.assertEqual(answer["sha256"], hashlib.sha256(pkg).hexdigest())
        with zipfile.ZipFile(io.BytesIO(pkg)) as z:
            names = z.namelist()
            manifest = z.read("manifest.yaml").decode()
            main_py = z.read("main.py")
        self.assertIn("manifest.yaml", names)  # at the root, not under greeter/
        self.assertIn("main.py", names)
        self.assertFalse([n for n in names if n.startswith("greeter/") or "__pycache__" in n])
        with open(os.path.join(GREETER, "manifest.yaml")) as f:
            original = f.read()
        with open(os.path.join(GREETER, "main.py"), "rb") as f:
            self.assertEqual(main_py, f.read())
        self.assertIn("\n  version: 2.0.0\n", manifest)
        self.assertNotIn("version: 1.0.0", manifest)
        self.assertEqual(manifest, original.replace("  version: 1.0.0\n", "  version: 2.0.0\n"))
        plugin = self.ok(API + "/switchboard/greeter")["plugin"]
        self.assertEqual(plugin["latest_version"], "2.0.0")
        self.assertEqual(plugin["checksum"], answer["sha256"])
        self.assertEqual(plugin["label"], {"en_US": "Greeter"})  # from the manifest
        self.assertTrue(plugin["description"]["en_US"].startswith("Greets people"))

    def test_author_override_and_same_bytes_twice(self):
        body = {"author": "someone", "name": "greeter", "version": "1.0.0", "dir": GREETER,
                "manifest_overrides": {"metadata.author": "someone", "metadata.name": "greeter"}}
        first = self.control("publish_dir", body)["data"]
        second = self.control("publish_dir", body)["data"]
        self.assertEqual(first["sha256"], second["sha256"])  # fixed timestamps
        pkg = self.request("GET", API + "/download/someone/greeter/1.0.0")[2]
        with zipfile.ZipFile(io.BytesIO(pkg)) as z:
            manifest = z.read("manifest.yaml").decode()
        self.assertIn("\n  author: someone\n", manifest)
        self.assertIn("\n  version: 1.0.0\n", manifest)
        self.assertNotIn("checksum", self.ok(API + "/someone/greeter")["plugin"])

    def test_without_overrides_is_the_folder_as_is(self):
        self.control("publish_dir", {"author": "switchboard", "name": "greeter",
                                     "version": "1.0.0", "dir": GREETER})
        pkg = self.request("GET", API + "/download/switchboard/greeter/1.0.0")[2]
        with zipfile.ZipFile(io.BytesIO(pkg)) as z:
            manifest = z.read("manifest.yaml").decode()
        with open(os.path.join(GREETER, "manifest.yaml")) as f:
            self.assertEqual(manifest, f.read())

    def test_bad_requests(self):
        base = {"author": "a", "name": "g", "version": "1.0.0", "dir": GREETER}
        for change in ({"dir": "relative/path"}, {"dir": "/nonexistent/dir/xyz"},
                       {"manifest_overrides": {"metadata.nothing": "1"}},
                       {"manifest_overrides": {"spec.config.name": "1"}},
                       {"manifest_overrides": ["metadata.version"]},
                       {"version": ""}, {"author": "a/b"}, {"checksum": 5}):
            body = dict(base)
            body.update(change)
            answer = self.control("publish_dir", body, expect=400)
            self.assertEqual(answer["code"], -1, change)
        self.assertEqual(self.ok(API)["total"], 0)


class BehaviourTest(MarketCase):

    def setUp(self):
        MarketCase.setUp(self)
        self.pkg = os.urandom(40000)  # 5 pieces of 8 KiB for "slow"
        self.publish("a", "p", "1.0.0", self.pkg, checksum=True)

    def test_answer_and_validation(self):
        data = self.control("behaviour", {"info": "500"})["data"]
        self.assertEqual(data, {"info": "500", "download": "ok", "list": "ok"})
        data = self.control("behaviour", {"download": "slow"})["data"]
        self.assertEqual(data, {"info": "500", "download": "slow", "list": "ok"})
        for bad in ({"info": "truncate"}, {"download": "nope"}, {"other": "ok"}):
            self.assertEqual(self.control("behaviour", bad, expect=400)["code"], -1)

    def test_info_500(self):
        self.control("behaviour", {"info": "500"})
        status, _, raw = self.request("GET", API + "/a/p")
        self.assertApiError(status, raw, 500)
        # Downloads are not affected.
        self.assertEqual(self.request("GET", API + "/download/a/p/1.0.0")[2], self.pkg)
        self.control("behaviour", {"info": "ok"})
        self.assertEqual(self.ok(API + "/a/p")["plugin"]["latest_version"], "1.0.0")

    def test_download_500(self):
        self.control("behaviour", {"download": "500"})
        status, _, raw = self.request("GET", API + "/download/a/p/1.0.0")
        self.assertApiError(status, raw, 500)
        status, _, raw = self.request("GET", API + "/download/a/p/7.0.0")
        self.assertApiError(status, raw, 404, "version not found")

    def test_list_500_and_stall(self):
        self.control("behaviour", {"list": "500"})
        status, _, raw = self.request("GET", API)
        self.assertApiError(status, raw, 500)
        self.control("behaviour", {"list": "stall"})
        self.assertStalls(API)

    def assertStalls(self, path):
        start = time.monotonic()
        with self.assertRaises(socket.timeout):
            conn, resp = self.raw_get(path, timeout=0.5)
            try:
                resp.read()
            finally:
                conn.close()
        self.assertLess(time.monotonic() - start, 3)

    def test_info_stall_does_not_block_others(self):
        self.control("behaviour", {"info": "stall"})
        results = []

        def stalled():
            try:
                conn, resp = self.raw_get(API + "/a/p", timeout=1.5)
                results.append(("answered", resp.status))
                conn.close()
            except socket.timeout:
                results.append(("timeout",))
            except OSError as e:
                results.append(("error", e))
        threads = [threading.Thread(target=stalled) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.2)
        # Meanwhile other requests are served at once.
        start = time.monotonic()
        self.assertEqual(self.request("GET", API + "/download/a/p/1.0.0")[2], self.pkg)
        self.assertEqual(self.ok(API)["total"], 1)
        self.assertLess(time.monotonic() - start, 1.0)
        for t in threads:
            t.join(5)
        self.assertEqual(results, [("timeout",)] * 3)
        # Stalled requests are recorded.
        paths = [r["path"] for r in self.get_json("/_control/requests")["requests"]]
        self.assertEqual(paths.count(API + "/a/p"), 3)

    def test_stop_releases_stalled_requests(self):
        self.control("behaviour", {"download": "stall"})
        conn = http.client.HTTPConnection("127.0.0.1", self.market.port, timeout=5)
        conn.request("GET", API + "/download/a/p/1.0.0")
        time.sleep(0.2)
        start = time.monotonic()
        self.market.stop()
        self.assertLess(time.monotonic() - start, 2)
        with self.assertRaises((http.client.HTTPException, OSError)):
            conn.getresponse()
        conn.close()

    def test_download_stall(self):
        self.control("behaviour", {"download": "stall"})
        self.assertStalls(API + "/download/a/p/1.0.0")
        # Info is not affected.
        self.assertEqual(self.ok(API + "/a/p")["plugin"]["name"], "p")

    def test_download_truncate(self):
        self.control("behaviour", {"download": "truncate"})
        conn, resp = self.raw_get(API + "/download/a/p/1.0.0", timeout=2)
        try:
            self.assertEqual(resp.status, 200)
            self.assertEqual(resp.getheader("Content-Type"), "application/zip")
            self.assertEqual(int(resp.getheader("Content-Length")), len(self.pkg))
            with self.assertRaises(http.client.IncompleteRead) as cm:
                resp.read()
            self.assertEqual(cm.exception.partial, self.pkg[:len(self.pkg) // 2])
        finally:
            conn.close()

    def test_download_slow(self):
        self.control("behaviour", {"download": "slow"})
        conn, resp = self.raw_get(API + "/download/a/p/1.0.0", timeout=5)
        try:
            self.assertEqual(resp.status, 200)
            start = time.monotonic()
            first = resp.read1(65536) if hasattr(resp, "read1") else resp.read(8192)
            self.assertLessEqual(len(first), 8192)
            body = first + resp.read()
            elapsed = time.monotonic() - start
        finally:
            conn.close()
        self.assertEqual(body, self.pkg)
        self.assertGreaterEqual(elapsed, 0.15)  # 4 more pieces, 50 ms apart
        self.assertLess(elapsed, 3)


class ControlTest(MarketCase):

    def test_requests_log_and_reset(self):
        self.publish("a", "p", "1.0.0", b"x")
        self.control("behaviour", {"info": "500"})
        self.request("GET", API + "?page=2&page_size=5")
        self.request("GET", API + "/a/p")
        self.request("GET", API + "/download/a/p/1.0.0")
        self.request("GET", "/elsewhere?x=1")
        self.request("GET", "/_control/nothing")
        self.assertEqual(self.get_json("/_control/requests"), {"requests": [
            {"method": "GET", "path": API, "query": "page=2&page_size=5"},
            {"method": "GET", "path": API + "/a/p", "query": ""},
            {"method": "GET", "path": API + "/download/a/p/1.0.0", "query": ""},
            {"method": "GET", "path": "/elsewhere", "query": "x=1"},
        ]})
        answer = self.control("reset")
        self.assertEqual(answer["code"], 0)
        self.assertEqual(self.get_json("/_control/requests"), {"requests": []})
        status, _, raw = self.request("GET", API + "/a/p")  # behaviour back to ok, plugin gone
        self.assertApiError(status, raw, 404, "plugin not found")
        self.assertEqual(self.ok(API)["total"], 0)
        self.assertEqual(len(self.get_json("/_control/requests")["requests"]), 2)

    def test_unknown_paths_are_404(self):
        for path in ("/", "/nope", "/api/v1/marketplace", API + "/a", API + "/a/b/c",
                     API + "/download/a/b", "/_control/nope", "/_control"):
            status, headers, raw = self.request("GET", path)
            self.assertApiError(status, raw, 404)
            self.assertEqual(headers.get("Content-Type"), "application/json")
        status, _, raw = self.request("POST", "/_control/unknown", {})
        self.assertApiError(status, raw, 404)

    def test_wrong_methods(self):
        status, _, raw = self.request("POST", API + "/a/p", {})
        self.assertApiError(status, raw, 405)
        status, _, raw = self.request("GET", "/_control/publish")
        self.assertApiError(status, raw, 405)

    def test_bad_publish_bodies(self):
        good = {"author": "a", "name": "p", "version": "1.0.0",
                "package_base64": base64.b64encode(b"zip").decode()}
        for change in ({"author": None}, {"name": ""}, {"version": "1/2"},
                       {"package_base64": "!!!not base64"}, {"package_base64": 3},
                       {"checksum": [1]}, {"label": 4}):
            body = dict(good)
            body.update(change)
            self.assertEqual(self.control("publish", body, expect=400)["code"], -1, change)
        req = urllib.request.Request("http://127.0.0.1:%d/_control/publish" % self.market.port,
                                     data=b"{not json", method="POST")
        with self.assertRaises(urllib.error.HTTPError) as cm:
            OPENER.open(req, timeout=TIMEOUT)
        self.assertEqual(cm.exception.code, 400)
        cm.exception.close()
        self.assertEqual(self.ok(API)["total"], 0)

    def test_keep_alive_connection_serves_several_requests(self):
        self.publish("a", "p", "1.0.0", b"pkg")
        conn = http.client.HTTPConnection("127.0.0.1", self.market.port, timeout=TIMEOUT)
        try:
            for path in (API + "/a/p", API + "/download/a/p/1.0.0", "/nope", API):
                conn.request("GET", path)
                resp = conn.getresponse()
                resp.read()
            body = json.dumps({"author": "a", "name": "q", "version": "1",
                               "package_base64": ""})
            conn.request("POST", "/_control/publish", body=body)
            self.assertEqual(conn.getresponse().read() and 200, 200)
            conn.request("GET", API + "/a/q")
            self.assertEqual(json.loads(conn.getresponse().read())["data"]["plugin"]["name"], "q")
        finally:
            conn.close()


class CommandLineTest(unittest.TestCase):

    def test_prints_port_and_serves(self):
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_marketplace.py"),
                                 "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            line = [None]
            reader = threading.Thread(target=lambda: line.__setitem__(
                0, proc.stdout.readline().decode()), daemon=True)
            reader.start()
            reader.join(10)
            self.assertTrue(line[0], "no port line")
            m = re.match(r"^FAKE_MARKETPLACE_PORT=(\d+)\n$", line[0])
            self.assertTrue(m, line[0])
            port = int(m.group(1))
            with OPENER.open("http://127.0.0.1:%d%s" % (port, API), timeout=TIMEOUT) as r:
                self.assertEqual(json.loads(r.read())["data"]["total"], 0)
        finally:
            proc.terminate()
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(out, b"")  # exactly one line was printed


if __name__ == "__main__":
    unittest.main()
