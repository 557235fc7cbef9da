"""The plugin routes LangBot 4.9.5's console calls beside install and config: a plugin's public
assets (types, headers, traversal and links refused), the debug-info answer (no remote
debugging here), and config files uploaded for a plugin, which the plugin reads back through the
core's get_config_file call."""

import base64
import io
import os
import unittest
import zipfile

import test_plugins
from fake_clients import wait_until

SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
HTML = b"<html><body><script>alert(1)</script>page</body></html>"
JS = b"alert(document.cookie)"

# Answers !cfg by reading the file its config names through get_config_file.
READER_MANIFEST = """apiVersion: v1
kind: Plugin
metadata:
  author: switchboard
  name: reader
  version: 1.0.0
spec:
  config:
    - name: key_file
      type: string
      required: false
      default: ""
execution:
  command: [python3, main.py]
"""
READER_MAIN = r"""
import base64, json, sys
seq = 1000
config = {}
def call(action, data):
    global seq
    seq += 1
    print(json.dumps({"seq_id": seq, "action": action, "data": data}), flush=True)
    while True:
        m = json.loads(sys.stdin.readline())
        if m.get("seq_id") == seq and "code" in m:
            return m
for line in sys.stdin:
    m = json.loads(line)
    if "action" not in m:
        continue
    seq_id, data = m["seq_id"], m.get("data") or {}
    if m["action"] == "handshake":
        config = data.get("config") or {}
        out = {"protocol_version": 1, "commands": [{"name": "cfg"}]}
    elif m["action"] == "command":
        key = data["args"][0] if data.get("args") else config.get("key_file", "")
        r = call("get_config_file", {"file_key": key})
        if r["code"] == 0:
            out = {"reply": "file: " + base64.b64decode(r["data"]["file_base64"]).decode()}
        else:
            out = {"reply": "refused: " + r["message"]}
    elif m["action"] == "shutdown":
        break
    else:
        out = {}
    print(json.dumps({"seq_id": seq_id, "code": 0, "data": out}), flush=True)
"""


def multipart(field, filename, data, boundary="----sbpluginroutes"):
    body = ("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n" % (boundary, field, filename)
            ).encode() + data + ("\r\n--%s--\r\n" % boundary).encode()
    return body, {"Content-Type": "multipart/form-data; boundary=" + boundary}


class PluginRoutesTest(test_plugins.PluginMessageCase):
    # Room above the config files' own 10 MB limit, so that limit is what refuses.
    extra_env = {"API__BODY_LIMIT_BYTES": str(12 * 1024 * 1024)}

    def install_with_assets(self, name):
        package = test_plugins.zip_dir(test_plugins.GREETER, {"name: greeter": "name: " + name},
                                       {"assets/logo.svg": SVG, "assets/page.html": HTML,
                                        "assets/app.js": JS, "assets/notes.txt": b"notes",
                                        "secret.txt": b"outside the assets folder"})
        self.publish("switchboard", name, "1.0.0", package)
        self.assertEqual(self.install("switchboard/" + name)["status"], "succeeded")

    def test_assets_are_public_typed_and_never_run_scripts(self):
        self.install_with_assets("assets1")
        base = "/api/v1/plugins/switchboard/assets1/assets/"
        status, body, headers = self.req("GET", base + "logo.svg")  # no credential at all
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["content-type"], "image/svg+xml")
        self.assertEqual(body.encode(), SVG)
        self.assertEqual(headers["x-content-type-options"], "nosniff")
        csp = headers["content-security-policy"]
        self.assertIn("default-src 'none'", csp)
        self.assertIn("sandbox", csp)
        self.assertNotIn("script-src", csp)
        self.assertIn("max-age", headers["cache-control"])
        status, body, headers = self.req("GET", base + "page.html")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/html"), headers)
        self.assertIn("sandbox", headers["content-security-policy"])
        # A script is served as text: with nosniff no browser runs it from this origin.
        status, body, headers = self.req("GET", base + "app.js")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/plain"), headers)
        status, body, headers = self.req("GET", base + "notes.txt")
        self.assertEqual((status, body), (200, "notes"))
        # The icon is public too (LangBot's console shows it in an <img>): no credential needed
        # to learn that this package has none.
        status, body, headers = self.req("GET", "/api/v1/plugins/switchboard/assets1/icon")
        self.assertError(status, body, 404, "has no icon")

        # Unknown files and plugins, and anything outside assets/: 404.
        for path in (base + "missing.png", "/api/v1/plugins/switchboard/nobody/assets/logo.svg",
                     base + "..%2Fsecret.txt", base + "%2E%2E", base + "..",
                     base + "..%2F..%2F..%2Fjwt_secret", base + "%2Fetc%2Fpasswd"):
            status, body, _ = self.req("GET", path)
            self.assertEqual(status, 404, (path, body))
            self.assertNotIn("outside the assets", str(body))
        self.delete("switchboard/assets1")

    def test_asset_links_are_not_followed(self):
        self.install_with_assets("assets2")
        folder = os.path.join(self.srv.data_dir, "plugins", "switchboard", "assets2", "1.0.0")
        secret = os.path.join(self.srv.data_dir, "jwt_secret")
        with open(secret) as f:
            secret_text = f.read().strip()
        # What a plugin able to write its own folder would do: a file link, then a folder link.
        os.symlink(secret, os.path.join(folder, "assets", "leak.txt"))
        status, body, _ = self.req("GET", "/api/v1/plugins/switchboard/assets2/assets/leak.txt")
        self.assertEqual(status, 404, body)
        self.assertNotIn(secret_text, str(body))
        os.rename(os.path.join(folder, "assets"), os.path.join(folder, "real_assets"))
        os.symlink(self.srv.data_dir, os.path.join(folder, "assets"))
        status, body, _ = self.req("GET", "/api/v1/plugins/switchboard/assets2/assets/jwt_secret")
        self.assertEqual(status, 404, body)
        self.assertNotIn(secret_text, str(body))
        self.delete("switchboard/assets2")

    def test_an_oversized_asset_is_refused(self):
        self.install_with_assets("assets3")
        folder = os.path.join(self.srv.data_dir, "plugins", "switchboard", "assets3", "1.0.0")
        with open(os.path.join(folder, "assets", "big.txt"), "wb") as f:
            f.write(b"x" * (4 * 1024 * 1024 + 1))
        status, body, _ = self.req("GET", "/api/v1/plugins/switchboard/assets3/assets/big.txt")
        self.assertEqual(status, 413, body)
        self.delete("switchboard/assets3")

    def test_debug_info_says_remote_debugging_is_not_offered(self):
        data = self.ok("GET", "/api/v1/plugins/debug-info")
        self.assertEqual(data["debug_url"], "")
        self.assertEqual(data["plugin_debug_key"], "")
        self.assertIs(data["supported"], False)
        self.assertIn("not supported", data["message"])
        status, resp, _ = self.as_key("GET", "/api/v1/plugins/debug-info")
        self.assertEqual(status, 200, resp)

    def test_config_files_upload_delete_and_limits(self):
        body, headers = multipart("file", "My Key.PEM", b"-----BEGIN KEY-----")
        status, resp, _ = self.srv.req("POST", "/api/v1/plugins/config-files", token=self.token,
                                       raw_body=body, headers=headers)
        self.assertEqual(status, 200, resp)
        key = resp["data"]["file_key"]
        self.assertRegex(key, r"^plugin_config_[0-9a-f]{16}\.pem$")
        stored = os.path.join(self.srv.data_dir, "files", "plugin_config", key)
        with open(stored, "rb") as f:
            self.assertEqual(f.read(), b"-----BEGIN KEY-----")
        self.assertEqual(os.stat(stored).st_mode & 0o777, 0o600)

        # User token only, as in LangBot.
        status, resp, _ = self.srv.req("POST", "/api/v1/plugins/config-files",
                                       api_key=self.api_key, raw_body=body, headers=headers)
        self.assertEqual(status, 401, resp)
        status, resp, _ = self.as_key("DELETE", "/api/v1/plugins/config-files/" + key)
        self.assertEqual(status, 401, resp)
        # No file part; an empty body.
        status, resp, _ = self.srv.req("POST", "/api/v1/plugins/config-files", token=self.token,
                                       raw_body=b"{}")
        self.assertError(status, resp, 400, "file is required")
        # Over 10 MB: refused; exactly 10 MB: kept.
        big, headers_big = multipart("file", "big.bin", b"x" * (10 * 1024 * 1024 + 1))
        status, resp, _ = self.srv.req("POST", "/api/v1/plugins/config-files", token=self.token,
                                       raw_body=big, headers=headers_big)
        self.assertError(status, resp, 413, "exceeds 10MB")
        big, headers_big = multipart("file", "big.bin", b"x" * (10 * 1024 * 1024))
        status, resp, _ = self.srv.req("POST", "/api/v1/plugins/config-files", token=self.token,
                                       raw_body=big, headers=headers_big)
        self.assertEqual(status, 200, resp)
        self.ok("DELETE", "/api/v1/plugins/config-files/" + resp["data"]["file_key"])

        # Only plugin_config_ keys may be deleted; unknown ones are 404.
        for other in ("jwt_secret", "manual_0123456789abcdef.pdf"):
            status, resp, _ = self.as_user("DELETE", "/api/v1/plugins/config-files/" + other)
            self.assertError(status, resp, 400, "invalid file key")
        status, resp, _ = self.as_user("DELETE",
                                       "/api/v1/plugins/config-files/plugin_config_0000.pem")
        self.assertEqual(status, 404, resp)
        status, resp, _ = self.as_user("DELETE", "/api/v1/plugins/config-files/plugin_config_..")
        self.assertIn(status, (400, 404), resp)
        self.assertTrue(os.path.exists(os.path.join(self.srv.data_dir, "jwt_secret")))
        self.assertEqual(self.ok("DELETE", "/api/v1/plugins/config-files/" + key),
                         {"deleted": True})
        self.assertFalse(os.path.exists(stored))
        status, resp, _ = self.as_user("DELETE", "/api/v1/plugins/config-files/" + key)
        self.assertEqual(status, 404, resp)

    def test_a_plugin_reads_its_config_file_through_the_core(self):
        body, headers = multipart("file", "token.txt", b"s3cret-token")
        status, resp, _ = self.srv.req("POST", "/api/v1/plugins/config-files", token=self.token,
                                       raw_body=body, headers=headers)
        self.assertEqual(status, 200, resp)
        key = resp["data"]["file_key"]
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("manifest.yaml", READER_MANIFEST)
            z.writestr("main.py", READER_MAIN)
        self.publish("switchboard", "reader", "1.0.0", buf.getvalue())
        self.assertEqual(self.install("switchboard/reader")["status"], "succeeded")
        self.ok("PUT", "/api/v1/plugins/switchboard/reader/config", {"key_file": key})
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/reader")["status"] == "running", 10))
        bot = self.bot()
        self.say(bot, "!cfg")
        self.assertIn("file: s3cret-token", self.replies(1)[0])
        # Nothing but plugin config files: another key is refused.
        self.say(bot, "!cfg jwt_secret")
        self.assertIn("refused:", self.replies(2)[1])
        self.delete("switchboard/reader")


if __name__ == "__main__":
    unittest.main()
