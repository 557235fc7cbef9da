"""Routes LangBot 4.9.5's console calls that are not resources of their own (issue 18, part 5):
the adapter and requester icons (our own monograms, public like LangBot's), the user survey
(this server runs none), the plugin system's state as LangBot reports it, and LangBot Space
accounts (not offered: every account is local)."""

import unittest
import xml.etree.ElementTree as ET

from harness import Server, ServerTestCase

SVG = "{http://www.w3.org/2000/svg}"


class ConsoleCompatTest(ServerTestCase):

    def check_icon(self, path, label):
        status, body, headers = self.req("GET", path)  # no credential: an <img> sends none
        self.assertEqual(status, 200, (path, body))
        self.assertEqual(headers["content-type"], "image/svg+xml")
        self.assertIn("default-src 'none'", headers["content-security-policy"])
        self.assertEqual(headers["x-content-type-options"], "nosniff")
        self.assertNotIn("<script", body.lower())
        root = ET.fromstring(body)  # well-formed, every character escaped
        self.assertEqual(root.tag, SVG + "svg")
        self.assertEqual(root.find(SVG + "title").text, label)
        initials = root.find(SVG + "text").text
        self.assertTrue(initials and len(initials) <= 2, initials)
        return initials

    def test_every_adapter_and_requester_has_an_icon(self):
        adapters = self.ok("GET", "/api/v1/platform/adapters")["adapters"]
        requesters = self.ok("GET", "/api/v1/provider/requesters")["requesters"]
        self.assertGreater(len(adapters), 10)
        colours = set()
        for kind, entries in (("platform/adapters", adapters), ("provider/requesters", requesters)):
            for e in entries:
                path = "/api/v1/%s/%s/icon" % (kind, e["name"])
                self.check_icon(path, e["label"]["en_US"])
                colours.add(self.req("GET", path)[1].split('fill="')[1].split('"')[0])
        self.assertGreater(len(colours), 10)  # a colour of each entry's own, not one for all
        self.assertEqual(self.check_icon("/api/v1/platform/adapters/telegram/icon", "Telegram"),
                         "TE")

    def test_unknown_icons_are_404(self):
        for path in ("/api/v1/platform/adapters/nope/icon",
                     "/api/v1/provider/requesters/nope/icon",
                     "/api/v1/platform/adapters/..%2F..%2Fetc/icon"):
            status, body, _ = self.req("GET", path)
            self.assertEqual(status, 404, (path, body))

    def test_no_survey_is_ever_pending(self):
        self.assertEqual(self.ok("GET", "/api/v1/survey/pending"), {"survey": None})
        for path in ("/api/v1/survey/respond", "/api/v1/survey/dismiss"):
            status, body, _ = self.as_user("POST", path, {"survey_id": "s1"})
            self.assertError(status, body, 400, "Survey not available")


    def test_plugin_system_status_is_the_real_state(self):
        status = self.ok("GET", "/api/v1/system/status/plugin-system")
        self.assertEqual(set(status), {"is_enable", "is_connected", "plugin_connector_error"})
        self.assertTrue(status["is_enable"])
        if status["is_connected"]:
            self.assertEqual(status["plugin_connector_error"], "ok")
        else:  # a machine without a sandbox
            self.assertIn("sandbox", status["plugin_connector_error"])
        s, body, _ = self.as_key("GET", "/api/v1/system/status/plugin-system")
        self.assertEqual(s, 401)  # user only, as in LangBot


    def test_space_accounts_are_not_offered_and_there_are_no_credits(self):
        self.assertEqual(self.ok("GET", "/api/v1/user/space-credits"), {"credits": None})
        s, _, _ = self.as_key("GET", "/api/v1/user/space-credits")
        self.assertEqual(s, 401)  # user only, as in LangBot
        for method, path, body in (
                ("GET", "/api/v1/user/space/authorize-url?redirect_uri=http://x/cb", None),
                ("POST", "/api/v1/user/space/callback", {"code": "c"}),
                ("POST", "/api/v1/user/bind-space", {"code": "c", "state": "s"})):
            status, answer, _ = self.req(method, path, body)  # public, as in LangBot
            self.assertError(status, answer, 400, "LangBot Space accounts are not supported")


class SetPasswordTest(unittest.TestCase):
    """LangBot's set-password (for Space accounts without a password) is a password change here:
    every account is local and has one, so the current password is required."""

    def test_set_password_needs_the_current_one_and_changes_it(self):
        from harness import ADMIN_PASSWORD, ADMIN_USER
        srv = Server()
        try:
            srv.start()
            token = srv.init_and_login()
            path = "/api/v1/user/set-password"
            s, body, _ = srv.req("POST", path, {"new_password": "another-long-pass"}, token=token)
            self.assertEqual(s, 400, body)
            self.assertIn("current_password", body["msg"])
            s, body, _ = srv.req("POST", path, {"new_password": "another-long-pass",
                                                "current_password": "wrong-password"},
                                 token=token)
            self.assertIn(s, (400, 401, 403), body)
            s, body, _ = srv.req("POST", path, {"new_password": "another-long-pass",
                                                "current_password": ADMIN_PASSWORD},
                                 token=token)
            self.assertEqual(s, 200, body)
            self.assertEqual(body["data"], {"user": ADMIN_USER})
            s, _, _ = srv.req("POST", "/api/v1/user/auth",
                              {"user": ADMIN_USER, "password": ADMIN_PASSWORD})
            self.assertNotEqual(s, 200)
            s, body, _ = srv.req("POST", "/api/v1/user/auth",
                                 {"user": ADMIN_USER, "password": "another-long-pass"})
            self.assertEqual(s, 200, body)
        finally:
            srv.stop()
            srv.cleanup()


class PluginSystemStatusTest(unittest.TestCase):
    """The state follows the machine: a sandbox that cannot start is reported, and turning the
    sandbox off (trusted plugins only) connects the plugin system."""

    def status(self, env):
        srv = Server(env=env)
        try:
            srv.start()
            token = srv.init_and_login()
            s, body, _ = srv.req("GET", "/api/v1/system/status/plugin-system", token=token)
            self.assertEqual(s, 200, body)
            return body["data"]
        finally:
            srv.stop()
            srv.cleanup()

    def test_a_missing_sandbox_is_reported_and_sandbox_off_connects(self):
        broken = self.status({"PLUGINS__BWRAP_PATH": "/nonexistent/bwrap"})
        self.assertFalse(broken["is_connected"], broken)
        self.assertIn("no sandbox on this machine", broken["plugin_connector_error"])
        self.assertIn("plugins.sandbox: off", broken["plugin_connector_error"])
        off = self.status({"PLUGINS__SANDBOX": "off"})
        self.assertEqual(off, {"is_enable": True, "is_connected": True,
                               "plugin_connector_error": "ok"})


if __name__ == "__main__":
    unittest.main()
