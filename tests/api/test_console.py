"""The web console served by the binary: files, caching, compression, the single-page fallback,
and the paths that must stay the API's. Against a binary built without the console (no web/dist
when it was built) the console paths answer 503 in plain text, and that is what is checked."""

import gzip
import os
import re
import shutil
import tempfile
import unittest
import uuid

from harness import Server, ServerTestCase

CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob: https:; connect-src 'self'; font-src 'self' data:; "
       "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'")
NOT_BUILT = "the web console is not built into this binary: run `make build`\n"


def fetch(srv, method, path, headers=None):
    """(status, raw body bytes, headers with lower-case names): no decoding of any kind."""
    c = srv.connection()
    try:
        c.request(method, path, headers=headers or {})
        resp = c.getresponse()
        return resp.status, resp.read(), {k.lower(): v for k, v in resp.getheaders()}
    finally:
        c.close()


class ConsoleAssertions:

    def assertSecurityHeaders(self, headers):
        self.assertEqual(headers.get("content-security-policy"), CSP)
        self.assertEqual(headers.get("x-frame-options"), "DENY")
        self.assertEqual(headers.get("x-content-type-options"), "nosniff")
        self.assertEqual(headers.get("referrer-policy"), "no-referrer")

    def assertApiPathsStayJson(self, srv):
        status, body, headers = srv.req("GET", "/api/v1/nope")
        self.assertError(status, body, 404)
        # The webhook route answers an unknown bot itself, in JSON.
        status, body, headers = srv.req("GET", "/bots/%s" % uuid.uuid4())
        self.assertEqual(status, 404, body)
        self.assertTrue(headers["content-type"].startswith("application/json"), headers)
        self.assertIsInstance(body, dict)
        status, body, _ = srv.req("GET", "/healthz/deeper")
        self.assertError(status, body, 404)
        # Not GET or HEAD: no console, the usual 404.
        status, body, _ = srv.req("POST", "/pipelines/x", body={})
        self.assertError(status, body, 404)


class EmbeddedConsoleTest(ServerTestCase, ConsoleAssertions):
    init_admin = False

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.built = fetch(cls.srv, "GET", "/")[0] != 503

    def test_root_serves_html_with_security_headers_and_no_cache(self):
        status, body, headers = fetch(self.srv, "GET", "/")
        self.assertSecurityHeaders(headers)
        if not self.built:
            self.assertEqual(status, 503)
            self.assertEqual(headers["content-type"], "text/plain; charset=utf-8")
            self.assertEqual(body.decode(), NOT_BUILT)
            return
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "text/html; charset=utf-8")
        self.assertIn(b"<html", body.lower())
        self.assertEqual(headers["cache-control"], "no-cache")
        self.assertEqual(headers["vary"], "Accept-Encoding")
        self.assertRegex(headers["etag"], r'^"[0-9a-f]{16}"$')
        self.assertNotIn("content-encoding", headers)

    def test_assets_are_immutable_and_compressed_when_asked(self):
        if not self.built:
            self.skipTest("built without the web console")
        index = fetch(self.srv, "GET", "/")[1].decode()
        assets = re.findall(r'(?:src|href)="(/assets/[^"]+)"', index)
        self.assertTrue(assets, index)
        script = [a for a in assets if a.endswith(".js")][0]
        status, plain, headers = fetch(self.srv, "GET", script)
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "text/javascript; charset=utf-8")
        self.assertEqual(headers["cache-control"], "public, max-age=31536000, immutable")
        self.assertSecurityHeaders(headers)
        status, packed, gz_headers = fetch(self.srv, "GET", script, {"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertEqual(gz_headers.get("content-encoding"), "gzip")
        self.assertEqual(gzip.decompress(packed), plain)
        self.assertLess(len(packed), len(plain))
        self.assertNotEqual(gz_headers["etag"], headers["etag"])
        self.assertEqual(gz_headers["vary"], "Accept-Encoding")
        # A browser's usual header: brotli when the build had node to make it.
        _, _, br_headers = fetch(self.srv, "GET", script,
                                 {"Accept-Encoding": "gzip, deflate, br, zstd"})
        self.assertIn(br_headers.get("content-encoding"), ("br", "gzip"))

        # Revalidation: 304 with the same tag, no body, no Content-Length of 0.
        status, body, nm = fetch(self.srv, "GET", script,
                                 {"Accept-Encoding": "gzip", "If-None-Match": gz_headers["etag"]})
        self.assertEqual(status, 304)
        self.assertEqual(body, b"")
        self.assertEqual(nm["etag"], gz_headers["etag"])
        self.assertNotEqual(nm.get("content-length"), "0")
        self.assertSecurityHeaders(nm)

        # HEAD: the GET headers and length, no body.
        status, body, head = fetch(self.srv, "HEAD", script, {"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertEqual(body, b"")
        self.assertEqual(head["content-length"], str(len(packed)))

    def test_client_routes_get_index(self):
        if not self.built:
            self.skipTest("built without the web console")
        _, index, _ = fetch(self.srv, "GET", "/")
        for path in ("/pipelines/some/client/route", "/bots", "/bot/%s" % uuid.uuid4(), "/login"):
            status, body, headers = fetch(self.srv, "GET", path)
            self.assertEqual(status, 200, path)
            self.assertEqual(body, index, path)
            self.assertEqual(headers["cache-control"], "no-cache", path)
            self.assertSecurityHeaders(headers)

    def test_missing_files_are_plain_404s(self):
        for path in ("/assets/nope.js", "/nope.css"):
            status, body, headers = fetch(self.srv, "GET", path)
            self.assertSecurityHeaders(headers)
            if not self.built:
                self.assertEqual(status, 503)
                continue
            self.assertEqual(status, 404, path)
            self.assertEqual(headers["content-type"], "text/plain; charset=utf-8")
            self.assertNotIn(b"<html", body.lower())

    def test_api_and_webhook_paths_never_get_the_console(self):
        self.assertApiPathsStayJson(self.srv)


class DirectoryConsoleTest(unittest.TestCase, ConsoleAssertions):
    """`serve --console-dir DIR`: files read per request, identity only, no long caching."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sb-console-")
        cls.dist = os.path.join(cls.tmp, "dist")
        os.makedirs(os.path.join(cls.dist, "assets"))
        with open(os.path.join(cls.dist, "index.html"), "w") as f:
            f.write('<!doctype html><html><script src="/assets/app-1.js"></script></html>')
        with open(os.path.join(cls.dist, "assets", "app-1.js"), "w") as f:
            f.write("console.log('x');\n" * 200)
        with open(os.path.join(cls.dist, ".env"), "w") as f:
            f.write("SECRET=1")
        with open(os.path.join(cls.tmp, "secret.txt"), "w") as f:
            f.write("outside the console")
        os.symlink(os.path.join(cls.tmp, "secret.txt"), os.path.join(cls.dist, "link.txt"))
        cls.srv = Server(args=["--console-dir", cls.dist])
        try:
            cls.srv.start()
        except BaseException:
            cls.srv.cleanup()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.srv.stop()
        finally:
            cls.srv.cleanup()
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_files_from_the_directory_follow_edits(self):
        status, body, headers = fetch(self.srv, "GET", "/assets/app-1.js",
                                      {"Accept-Encoding": "gzip, br"})
        self.assertEqual(status, 200)
        self.assertNotIn("content-encoding", headers)
        self.assertEqual(headers["cache-control"], "no-cache")
        self.assertSecurityHeaders(headers)
        self.assertEqual(body, b"console.log('x');\n" * 200)
        status, body, _ = fetch(self.srv, "GET", "/pipelines/x")
        self.assertEqual(status, 200)
        self.assertIn(b"/assets/app-1.js", body)
        with open(os.path.join(self.dist, "assets", "new-2.css"), "w") as f:
            f.write("body{}")
        status, body, headers = fetch(self.srv, "GET", "/assets/new-2.css")
        self.assertEqual((status, body), (200, b"body{}"))
        self.assertEqual(headers["content-type"], "text/css; charset=utf-8")

    def test_traversal_dotfiles_and_escaping_links_are_refused(self):
        for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt",
                     "/.env", "/link.txt"):
            status, body, headers = fetch(self.srv, "GET", path)
            self.assertEqual(status, 404, path)
            self.assertNotIn(b"outside", body, path)
            self.assertNotIn(b"SECRET", body, path)

    def test_api_and_webhook_paths_never_get_the_console(self):
        self.assertApiPathsStayJson(self.srv)

    def assertError(self, status, body, expected_status):
        self.assertEqual(status, expected_status, body)
        self.assertIsInstance(body, dict, body)
        self.assertEqual(body.get("code"), -1)


if __name__ == "__main__":
    unittest.main()
