"""System routes: info, wizard, health, metrics, request ids and the 500 envelope."""

import os
import shutil
import sqlite3
import tempfile
import threading
import unittest

from harness import Server, ServerTestCase, on_postgres

INFO_FIELDS = {
    "version": str, "debug": bool, "edition": str, "enable_marketplace": bool,
    "cloud_service_url": str, "allow_modify_login_info": bool, "disable_models_service": bool,
    "limitation": dict, "wizard_status": str,
}


class SystemInfoTest(ServerTestCase):

    def test_info_needs_no_credential_and_has_seed_fields(self):
        status, body, _ = self.req("GET", "/api/v1/system/info")
        data = self.assertOk(status, body)
        for field, kind in INFO_FIELDS.items():
            self.assertIn(field, data)
            self.assertIsInstance(data[field], kind, field)
        self.assertIn("wizard_progress", data)
        self.assertTrue(data["wizard_progress"] is None or isinstance(data["wizard_progress"], dict))
        self.assertIn(data["wizard_status"], ("none", "skipped", "completed"))
        self.assertEqual(data["api_version"], "4.9.5")
        self.assertTrue(data["version"])
        self.assertEqual(data["cloud_service_url"], "https://space.langbot.app")

    def test_banner_version_matches_info(self):
        data = self.ok("GET", "/api/v1/system/info")
        banner = [l for l in self.srv.stdout_lines if "listening on" in l][0]
        self.assertIn(" %s " % data["version"], banner)

    def test_health_and_ready(self):
        for path, text in (("/healthz", "ok"), ("/readyz", "ready")):
            status, body, headers = self.req("GET", path)
            self.assertEqual(status, 200, body)
            self.assertEqual(body.strip(), text)
            self.assertIn("x-request-id", headers)

    def test_metrics_with_either_credential(self):
        for kw in ({"token": self.token}, {"api_key": self.api_key}):
            status, body, headers = self.req("GET", "/metrics", **kw)
            self.assertEqual(status, 200, body)
            self.assertTrue(headers["content-type"].startswith("text/plain"))
            self.assertIsInstance(body, str)
            self.assertTrue(body.strip())

    def test_about_names_where_the_instance_keeps_its_state(self):
        status, _, _ = self.req("GET", "/api/v1/system/about")
        self.assertEqual(status, 401)
        for kw in ({"token": self.token}, {"api_key": self.api_key}):
            status, body, _ = self.req("GET", "/api/v1/system/about", **kw)
            data = self.assertOk(status, body)
            data_dir = os.path.realpath(self.srv.data_dir)
            self.assertEqual(os.path.realpath(data["data_dir"]), data_dir)
            self.assertEqual(os.path.realpath(data["config_file"]),
                             os.path.join(data_dir, "config.yaml"))
            if on_postgres():
                # The URL, never with a password.
                self.assertEqual(data["database"], "postgresql")
                self.assertEqual(data["database_path"], self.srv.env["DATABASE__URL"])
            else:
                self.assertEqual(data["database"], "sqlite")
                self.assertTrue(os.path.realpath(data["database_path"]).startswith(data_dir))
                self.assertTrue(os.path.exists(data["database_path"]))
            self.assertIn(data["console"].split(" ")[0], ("embedded", "directory", "not"))
            self.assertEqual(data["marketplace_url"], "https://space.langbot.app")
            self.assertGreaterEqual(data["uptime_seconds"], 0)
            self.assertEqual(data["api_version"], "4.9.5")

    def test_public_info_never_names_the_data_directory(self):
        status, body, _ = self.req("GET", "/api/v1/system/info")
        self.assertNotIn(os.path.realpath(self.srv.data_dir), body if isinstance(body, str) else str(body))


class WizardTest(ServerTestCase):

    def wizard(self):
        return self.ok("GET", "/api/v1/system/info")

    def test_wizard_status_transitions(self):
        self.ok("POST", "/api/v1/system/wizard/completed", {"status": "skipped"})
        self.assertEqual(self.wizard()["wizard_status"], "skipped")
        self.ok("POST", "/api/v1/system/wizard/completed", {"status": "none"})
        self.assertEqual(self.wizard()["wizard_status"], "none")
        # No body (or no status) means completed.
        status, body, _ = self.req("POST", "/api/v1/system/wizard/completed", token=self.token)
        self.assertOk(status, body)
        self.assertEqual(self.wizard()["wizard_status"], "completed")
        self.ok("POST", "/api/v1/system/wizard/completed", {"status": "none"}, )
        self.ok("POST", "/api/v1/system/wizard/completed", {})
        self.assertEqual(self.wizard()["wizard_status"], "completed")

    def test_wizard_status_works_with_api_key(self):
        status, body, _ = self.as_key("POST", "/api/v1/system/wizard/completed",
                                      {"status": "completed"})
        self.assertOk(status, body)

    def test_wizard_status_errors(self):
        cases = [
            ("unknown status value", {"status": "finished"}, None, "status"),
            ("status of wrong type", {"status": 1}, None, "status"),
            ("array body", None, "[1]", "object"),
            ("malformed JSON", None, "{\"status\":", None),
        ]
        for desc, body, raw, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.as_user("POST", "/api/v1/system/wizard/completed", body,
                                               raw_body=raw)
                self.assertError(status, resp, 400, fragment)

    def test_wizard_progress(self):
        self.ok("PUT", "/api/v1/system/wizard/progress", {"progress": {"step": 2, "done": ["a"]}})
        self.assertEqual(self.wizard()["wizard_progress"], {"step": 2, "done": ["a"]})
        # A bare object is the progress itself.
        self.ok("PUT", "/api/v1/system/wizard/progress", {"step": 3})
        self.assertEqual(self.wizard()["wizard_progress"], {"step": 3})
        self.ok("PUT", "/api/v1/system/wizard/progress", {"progress": None})
        self.assertIsNone(self.wizard()["wizard_progress"])

    def test_wizard_progress_is_capped(self):
        # The public /system/info echoes the progress, so its size is bounded (4 KiB as JSON).
        self.ok("PUT", "/api/v1/system/wizard/progress", {"step": 1})
        big = {"notes": "x" * 5000}
        status, resp, _ = self.as_user("PUT", "/api/v1/system/wizard/progress", big)
        self.assertError(status, resp, 413, "limit is 4096")
        self.assertEqual(self.wizard()["wizard_progress"], {"step": 1})
        # Just under the limit is stored.
        fits = {"notes": "y" * 4000}
        self.ok("PUT", "/api/v1/system/wizard/progress", {"progress": fits})
        self.assertEqual(self.wizard()["wizard_progress"], fits)

    def test_wizard_progress_errors(self):
        cases = [
            ("progress is a number", None, "{\"progress\": 5}", "progress"),
            ("progress is an array", None, "[1,2]", "progress"),
            ("malformed JSON", None, "{oops", None),
        ]
        for desc, body, raw, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.as_user("PUT", "/api/v1/system/wizard/progress", body,
                                               raw_body=raw)
                self.assertError(status, resp, 400, fragment)


class FileModesTest(unittest.TestCase):
    """The data directory the server creates is 0700; the database, its WAL files and the key
    files are 0600, whatever the umask."""

    def test_created_private(self):
        root = tempfile.mkdtemp(prefix="sb-modes-")
        data_dir = os.path.join(root, "data")  # created by the server
        old_umask = os.umask(0o022)
        srv = Server(data_dir=data_dir)
        try:
            srv.start()
            os.umask(old_umask)
            srv.init_and_login()  # writes, so the WAL files exist
            mode = lambda p: os.stat(p).st_mode & 0o777
            self.assertEqual(mode(data_dir), 0o700)
            # On PostgreSQL the shared secrets are in the database (sealed with secrets_key).
            names = (("secrets_key", "instance_id") if on_postgres() else
                     ("switchboard.db", "switchboard.db-wal", "switchboard.db-shm",
                      "jwt_secret", "recovery_key", "secrets_key", "instance_id"))
            for name in names:
                with self.subTest(name):
                    self.assertEqual(mode(os.path.join(data_dir, name)), 0o600)
        finally:
            os.umask(old_umask)
            srv.cleanup()
            shutil.rmtree(root, ignore_errors=True)


class RequestIdTest(ServerTestCase):

    def test_generated_request_ids_are_unique(self):
        seen = set()
        for path in ("/healthz", "/api/v1/system/info", "/api/v1/nope", "/api/v1/provider/providers"):
            _, _, headers = self.req("GET", path)
            rid = headers.get("x-request-id")
            self.assertTrue(rid, path)
            self.assertNotIn(rid, seen)
            seen.add(rid)

    def test_client_request_id_is_echoed(self):
        for method, path, expected in (("GET", "/api/v1/system/info", 200),
                                       ("GET", "/api/v1/provider/providers", 401),
                                       ("GET", "/api/no/such/route", 404),
                                       ("DELETE", "/api/v1/system/info", 405)):
            with self.subTest(path=path):
                status, _, headers = self.req(method, path, headers={"X-Request-Id": "trace-42-abc"})
                self.assertEqual(status, expected)
                self.assertEqual(headers.get("x-request-id"), "trace-42-abc")


class InternalErrorTest(ServerTestCase):
    """A database that stays locked longer than the server's busy timeout is an internal error:
    500 with code -2 and the request id, and no internals in the message."""

    def test_500_envelope_carries_request_id(self):
        if on_postgres():
            self.skipTest("holds SQLite's write lock; PostgreSQL outages: test_pg_instances.py")
        db = sqlite3.connect(os.path.join(self.srv.data_dir, "switchboard.db"),
                             timeout=10, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            status, body, headers = self.as_user(
                "POST", "/api/v1/provider/providers",
                {"name": "locked", "requester": "openai-chat-completions",
                 "base_url": "https://api.openai.com/v1"},
                headers={"X-Request-Id": "rid-500-check"})
        finally:
            db.execute("ROLLBACK")
            db.close()
        self.assertError(status, body, 500)
        self.assertEqual(headers.get("x-request-id"), "rid-500-check")
        self.assertIn("rid-500-check", body["msg"])
        self.assertNotIn("INSERT", body["msg"].upper())
        self.assertNotIn("sqlite", body["msg"].lower())
        # The server recovers once the lock is gone.
        status, body, _ = self.as_user(
            "POST", "/api/v1/provider/providers",
            {"name": "after", "requester": "openai-chat-completions",
             "base_url": "https://api.openai.com/v1"})
        self.assertOk(status, body)


if __name__ == "__main__":
    unittest.main()
