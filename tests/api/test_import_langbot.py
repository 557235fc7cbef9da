"""`switchboard import-langbot`: moving in from a LangBot 4.9.5 data directory.

The LangBot side is built by tests/tools/make_langbot_fixture.py from 4.9.5's schema facts. Each
test runs the real binary's import into a fresh data directory, then starts the server on that
directory and looks at what arrived through the HTTP API.
"""

import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest
import zipfile

from fake_clients import wait_until
from harness import BIN, ApiAssertions, Server, database_url_for, on_postgres

HERE = os.path.dirname(os.path.abspath(__file__))
GREETER = os.path.join(HERE, "..", "..", "examples", "plugins", "greeter")
FIXTURE_TOOL = os.path.join(HERE, "..", "tools", "make_langbot_fixture.py")
RUN_TIMEOUT = 60


def import_env(target):
    """The import writes where `serve` on `target` reads: on PostgreSQL, its database."""
    env = dict(os.environ)
    if on_postgres():
        env["DATABASE__URL"] = database_url_for(target)
    return env
PG_BIN = "/usr/lib/postgresql/15/bin"


def make_fixture(root, variant="good"):
    out = subprocess.run([sys.executable, FIXTURE_TOOL, root, "--variant", variant],
                         capture_output=True, text=True, timeout=RUN_TIMEOUT, check=True)
    return json.loads(out.stdout)


def fingerprint(folder):
    """Every file under `folder` with its bytes' hash, size and mtime, and nothing else."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            digest = None
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            seen[os.path.relpath(path, folder)] = (digest, st.st_size, st.st_mtime_ns, st.st_mode)
    return seen


class ImportLangbotCase(unittest.TestCase, ApiAssertions):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sb-import-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.fx = make_fixture(os.path.join(self.tmp, "langbot"))
        self.source = self.fx["data_dir"]
        self.target = os.path.join(self.tmp, "switchboard")
        self.server = None

    def tearDown(self):
        if self.server is not None and self.server.proc is not None:
            self.server.stop()

    def run_import(self, *args, source=None, target=None):
        cmd = [BIN, "import-langbot", "--data-dir", target or self.target,
               "--from", source or self.source] + list(args)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                              env=import_env(target or self.target))

    def serve(self):
        self.server = Server(data_dir=self.target)
        self.server.start()
        return self.server.login(self.fx["account"], self.fx["account_password"])

    def get(self, path, token):
        status, body, _ = self.server.req("GET", path, token=token)
        return self.assertOk(status, body)


class FirstImportTest(ImportLangbotCase):
    def test_import_then_serve_and_run_again(self):
        before = fingerprint(os.path.dirname(self.source))
        first = self.run_import()
        self.assertEqual(first.returncode, 0, first.stderr + first.stdout)
        report = first.stdout
        self.assertIn("providers: 2 created, 1 skipped", report)
        self.assertIn("requester 'some-future-requester' is not a known requester", report)
        self.assertIn("LLM models: 1 created, 1 skipped", report)
        self.assertIn("embedding models: 1 created", report)
        self.assertIn("pipelines: 2 created", report)
        self.assertIn("bots: 2 created, 2 skipped", report)
        self.assertIn("adapter 'nakuru' is not available here", report)
        self.assertIn("its pipeline 8c3e7c73-7d90-4da0-9f77-2da05f3d4eff is not in the LangBot "
                      "database", report)
        self.assertIn("API keys: 1 created", report)
        self.assertIn("MCP servers: 1 created, 1 skipped", report)
        self.assertIn("another MCP server of the LangBot database has this name", report)
        self.assertIn("webhooks: 1 created", report)
        self.assertIn("install langbot-team/weather from the marketplace", report)
        self.assertIn("knowledge bases: 1 skipped", report)
        self.assertIn("note: uses knowledge base 'Manuals', which is not imported", report)
        self.assertIn("system.jwt.expire -> auth.jwt_expire_seconds: created", report)
        self.assertIn("system.jwt.secret: skipped", report)
        # No secret of the source reaches the report.
        for secret in ("sk-fixture-provider-key-0001", "fixture-telegram-token",
                       "fixture-webhook-secret", self.fx["api_key"], "langbot-jwt-secret",
                       "Bearer x"):
            self.assertNotIn(secret, report + first.stderr)
        self.assertEqual(fingerprint(os.path.dirname(self.source)), before,
                         "the LangBot directory changed")

        second = self.run_import()
        self.assertEqual(second.returncode, 0, second.stderr + second.stdout)
        self.assertIn("Summary: 0 created, 0 overwritten, 15 already present, 0 conflicting",
                      second.stdout)
        self.assertNotIn(": created", second.stdout)
        self.assertEqual(fingerprint(os.path.dirname(self.source)), before,
                         "the LangBot directory changed")

        token = self.serve()  # the imported account signs in with its LangBot password
        ids = self.fx
        openai = self.get("/api/v1/provider/providers/%s" % ids["providers"]["openai"],
                          token)["provider"]
        self.assertEqual(openai["name"], "OpenAI")
        self.assertEqual(openai["requester"], "openai-chat-completions")
        self.assertEqual(openai["api_keys"], ["sk-fixture-provider-key-0001"])
        space = self.get("/api/v1/provider/providers/%s" % ids["providers"]["space"],
                         token)["provider"]
        self.assertEqual(space["requester"], "space-chat-completions")
        status, _, _ = self.server.req(
            "GET", "/api/v1/provider/providers/%s" % ids["providers"]["future"], token=token)
        self.assertEqual(status, 404)

        llm = self.get("/api/v1/provider/models/llm/%s" % ids["models"]["llm"], token)["model"]
        self.assertEqual(llm["name"], "gpt-4o-mini")
        self.assertEqual(llm["provider_uuid"], ids["providers"]["openai"])
        self.assertEqual(sorted(llm["abilities"]), ["func_call", "vision"])
        self.assertEqual(llm["extra_args"], {"temperature": 0.5})
        self.assertEqual(llm["prefered_ranking"], 2)
        emb = self.get("/api/v1/provider/models/embedding/%s" % ids["models"]["embedding"],
                       token)["model"]
        self.assertEqual(emb["name"], "text-embedding-3-small")

        support = self.get("/api/v1/pipelines/%s" % ids["pipelines"]["second"],
                           token)["pipeline"]
        self.assertEqual(support["name"], "Support")
        self.assertEqual(support["config"]["ai"]["local-agent"]["model"]["primary"],
                         ids["models"]["llm"])
        self.assertEqual(support["config"]["ai"]["local-agent"]["prompt"][0]["content"],
                         "You answer support questions.")
        langbot_default = self.get("/api/v1/pipelines/%s" % ids["pipelines"]["default"],
                                   token)["pipeline"]
        self.assertFalse(langbot_default["is_default"])  # this server's default stays

        tg = self.get("/api/v1/platform/bots/%s" % ids["bots"]["telegram"], token)["bot"]
        self.assertEqual(tg["adapter"], "telegram")
        self.assertFalse(tg["enable"])
        self.assertEqual(tg["use_pipeline_uuid"], ids["pipelines"]["second"])
        hook = self.get("/api/v1/platform/bots/%s" % ids["bots"]["webhook"], token)["bot"]
        self.assertTrue(hook["enable"])
        self.assertEqual(hook["use_pipeline_uuid"], ids["pipelines"]["default"])
        for skipped in ("unknown_adapter", "missing_pipeline"):
            status, _, _ = self.server.req(
                "GET", "/api/v1/platform/bots/%s" % ids["bots"][skipped], token=token)
            self.assertEqual(status, 404)

        mcp = self.get("/api/v1/mcp/servers/docs-search", token)["server"]
        self.assertEqual(mcp["uuid"], ids["mcp"]["http"])
        self.assertEqual(mcp["mode"], "http")
        hooks = self.get("/api/v1/webhooks", token)["webhooks"]
        self.assertEqual([(h["name"], h["url"]) for h in hooks],
                         [("audit", "http://127.0.0.1:9/audit")])

        keys = self.get("/api/v1/apikeys", token)["keys"]
        self.assertEqual([k["name"] for k in keys], ["ci"])
        # LangBot's key itself authenticates here.
        status, body, _ = self.server.req("GET", "/api/v1/provider/providers",
                                          api_key=self.fx["api_key"])
        self.assertOk(status, body)
        status, _, _ = self.server.req("GET", "/api/v1/provider/providers",
                                       api_key=self.fx["api_key"][:-1] + "x")
        self.assertEqual(status, 401)

        with open(os.path.join(self.target, "config.yaml"), encoding="utf-8") as f:
            config = f.read()
        self.assertIn("webhook_prefix: https://bots.example.org", config)
        self.assertIn("jwt_expire_seconds: 86400", config)
        self.assertIn("retention_days: 14", config)


class WalSourceTest(unittest.TestCase):
    def test_uncheckpointed_wal_is_read_without_touching_the_source(self):
        tmp = tempfile.mkdtemp(prefix="sb-import-wal-")
        self.addCleanup(shutil.rmtree, tmp, True)
        fx = make_fixture(os.path.join(tmp, "langbot"), "wal")
        self.assertTrue(os.path.exists(fx["db"] + "-wal"))
        before = fingerprint(os.path.join(tmp, "langbot"))
        run = subprocess.run([BIN, "import-langbot", "--data-dir", os.path.join(tmp, "sb"),
                              "--from", fx["data_dir"]],
                             capture_output=True, text=True, timeout=RUN_TIMEOUT,
                             env=import_env(os.path.join(tmp, "sb")))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("providers: 2 created, 1 skipped", run.stdout)  # from the WAL
        self.assertIn("bots: 2 created, 2 skipped", run.stdout)
        # No -shm, no checkpoint: the source's files are as they were.
        self.assertEqual(fingerprint(os.path.join(tmp, "langbot")), before)


class DryRunTest(ImportLangbotCase):
    def test_dry_run_writes_nothing(self):
        if on_postgres():
            # Without a data directory there is no secrets key to open the database with.
            refused = self.run_import("--dry-run")
            self.assertEqual(refused.returncode, 1, refused.stdout)
            self.assertIn("needs the data directory", refused.stderr)
            self.assertFalse(os.path.exists(self.target))
            Server(data_dir=self.target).start().stop()  # an instance on this database
            dry = self.run_import("--dry-run")
            self.assertEqual(dry.returncode, 0, dry.stderr)
            self.assertIn("providers: 2 to create, 1 skipped", dry.stdout)
            real = self.run_import()
            self.assertIn("providers: 2 created, 1 skipped", real.stdout)
            return
        dry = self.run_import("--dry-run")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        self.assertIn("Dry run: nothing was written.", dry.stdout)
        self.assertIn("providers: 2 to create, 1 skipped", dry.stdout)
        self.assertFalse(os.path.exists(self.target), "a dry run created the data directory")
        again = self.run_import("--dry-run")
        self.assertIn("providers: 2 to create, 1 skipped", again.stdout)
        real = self.run_import()
        self.assertEqual(real.returncode, 0, real.stderr)
        self.assertIn("providers: 2 created, 1 skipped", real.stdout)


class ConflictTest(ImportLangbotCase):
    def test_changed_record_is_reported_then_overwritten_on_request(self):
        self.assertEqual(self.run_import().returncode, 0)
        token = self.serve()
        second = self.fx["pipelines"]["second"]
        status, body, _ = self.server.req("PUT", "/api/v1/pipelines/%s" % second,
                                          {"name": "Renamed here"}, token=token)
        self.assertOk(status, body)
        self.server.stop()

        kept = self.run_import()
        self.assertEqual(kept.returncode, 0, kept.stderr)
        self.assertIn("Support [%s]: conflict: exists here with other content; kept" % second,
                      kept.stdout)
        self.assertIn("1 conflicting", kept.stdout)

        over = self.run_import("--overwrite")
        self.assertEqual(over.returncode, 0, over.stderr)
        self.assertIn("Support [%s]: overwritten" % second, over.stdout)
        self.server.start()
        token = self.server.login(self.fx["account"], self.fx["account_password"])
        self.assertEqual(self.get("/api/v1/pipelines/%s" % second, token)["pipeline"]["name"],
                         "Support")
        self.server.stop()
        self.assertIn("15 already present, 0 conflicting", self.run_import().stdout)


class PluginSettingsTest(ImportLangbotCase):
    def install_greeter(self, token):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for name in os.listdir(GREETER):
                z.write(os.path.join(GREETER, name), name)
        boundary = "----sbimportboundary"
        body = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.zip\"\r\n"
                "Content-Type: application/zip\r\n\r\n" % boundary).encode() + buf.getvalue() + \
            ("\r\n--%s--\r\n" % boundary).encode()
        status, resp, _ = self.server.req(
            "POST", "/api/v1/plugins/install/local", token=token, raw_body=body,
            headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
        task_id = self.assertOk(status, resp)["task_id"]

        def finished():
            task = self.get("/api/v1/system/tasks/%d" % task_id, token)["task"]
            return task if task["status"] in ("succeeded", "failed") else None
        task = wait_until(finished, 30)
        self.assertTrue(task and task["status"] == "succeeded", task)

    def test_settings_apply_to_a_plugin_installed_here(self):
        first = self.run_import()
        self.assertIn("switchboard/greeter: skipped: plugin packages are not copied: install "
                      "switchboard/greeter from the marketplace", first.stdout)
        token = self.serve()
        self.install_greeter(token)
        self.assertEqual(self.get("/api/v1/plugins/switchboard/greeter/config", token)["config"],
                         {"greeting": "Hello", "trigger": "hi"})
        self.server.stop()

        kept = self.run_import()
        self.assertIn("switchboard/greeter: conflict: installed here with other settings; kept",
                      kept.stdout)
        applied = self.run_import("--overwrite")
        self.assertEqual(applied.returncode, 0, applied.stderr)
        self.assertIn("switchboard/greeter: overwritten", applied.stdout)
        self.server.start()
        token = self.server.login(self.fx["account"], self.fx["account_password"])
        self.assertEqual(self.get("/api/v1/plugins/switchboard/greeter/config", token)["config"],
                         {"greeting": "Moin", "trigger": "moin"})
        plugin = self.get("/api/v1/plugins/switchboard/greeter", token)["plugin"]
        self.assertFalse(plugin["enabled"])
        self.assertEqual(plugin["priority"], 5)
        self.server.stop()
        self.assertIn("switchboard/greeter: already present, unchanged", self.run_import().stdout)


class FailedWriteTest(ImportLangbotCase):
    def test_a_failed_write_undoes_the_run(self):
        # The config file is written after every record; a directory where its temporary file
        # goes makes that write fail (for root too), so the records must be taken back.
        self.server = Server(data_dir=self.target)  # a data directory as a first start leaves it
        self.server.start()
        self.server.stop()
        os.mkdir(os.path.join(self.target, "config.yaml.tmp"))
        run = self.run_import()
        self.assertEqual(run.returncode, 4, run.stdout + run.stderr)
        self.assertIn("FAILED: writing", run.stdout)
        # 2 providers, 2 models, 2 pipelines, 2 bots, 1 key, 1 MCP server, 1 webhook.
        self.assertIn("Undone: 11 of 11 writes of this run.", run.stdout)
        self.assertIn("Summary: 15 not created, 0 not overwritten", run.stdout)
        self.assertNotIn("could not undo", run.stdout)
        os.rmdir(os.path.join(self.target, "config.yaml.tmp"))

        self.server.start()
        token = self.server.init_and_login()  # the account was not created either
        for path in ("/api/v1/provider/providers/%s" % self.fx["providers"]["openai"],
                     "/api/v1/provider/models/llm/%s" % self.fx["models"]["llm"],
                     "/api/v1/pipelines/%s" % self.fx["pipelines"]["second"],
                     "/api/v1/platform/bots/%s" % self.fx["bots"]["telegram"],
                     "/api/v1/mcp/servers/docs-search"):
            status, _, _ = self.server.req("GET", path, token=token)
            self.assertEqual(status, 404, path)
        self.assertEqual(self.get("/api/v1/apikeys", token)["keys"], [])
        self.assertEqual(self.get("/api/v1/webhooks", token)["webhooks"], [])
        status, _, _ = self.server.req("GET", "/api/v1/provider/providers",
                                       api_key=self.fx["api_key"])
        self.assertEqual(status, 401)


class FailedOverwriteTest(ImportLangbotCase):
    def test_a_failed_write_puts_overwritten_records_back(self):
        self.assertEqual(self.run_import().returncode, 0)
        token = self.serve()
        second = self.fx["pipelines"]["second"]
        status, body, _ = self.server.req("PUT", "/api/v1/pipelines/%s" % second,
                                          {"name": "Renamed here"}, token=token)
        self.assertOk(status, body)
        self.server.stop()
        # Back to this server's default, so the import writes the config file again; that write
        # fails (a directory where its temporary file goes).
        path = os.path.join(self.target, "config.yaml")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("jwt_expire_seconds: 86400", "jwt_expire_seconds: 604800"))
        os.mkdir(path + ".tmp")
        run = self.run_import("--overwrite")
        self.assertEqual(run.returncode, 4, run.stdout + run.stderr)
        self.assertIn("Support [%s]: not overwritten (undone)" % second, run.stdout)
        self.assertIn("Undone: 1 of 1 writes of this run.", run.stdout)
        os.rmdir(path + ".tmp")
        self.server.start()
        token = self.server.login(self.fx["account"], self.fx["account_password"])
        self.assertEqual(self.get("/api/v1/pipelines/%s" % second, token)["pipeline"]["name"],
                         "Renamed here")


class BadSourceTest(unittest.TestCase):
    def check_refused(self, variant, code, fragment, extra_args=()):
        tmp = tempfile.mkdtemp(prefix="sb-import-bad-")
        self.addCleanup(shutil.rmtree, tmp, True)
        fx = make_fixture(os.path.join(tmp, "langbot"), variant)
        before = fingerprint(os.path.join(tmp, "langbot"))
        target = os.path.join(tmp, "switchboard")
        run = subprocess.run([BIN, "import-langbot", "--data-dir", target, "--from",
                              fx["data_dir"]] + list(extra_args),
                             capture_output=True, text=True, timeout=RUN_TIMEOUT,
                             env=import_env(target))
        self.assertEqual(run.returncode, code, (variant, run.stdout, run.stderr))
        self.assertIn(fragment, run.stderr + run.stdout, variant)
        self.assertFalse(os.path.exists(target), "%s: the data directory was created" % variant)
        self.assertEqual(fingerprint(os.path.join(tmp, "langbot")), before, variant)
        return run

    def test_refusals(self):
        cases = [
            ("damaged", 2, "cannot be read: database disk image is malformed"),
            ("foreign", 2, "is not a LangBot database"),
            ("old-version", 2, "has LangBot schema version 23; this import reads version 24"),
            ("new-version", 2, "has LangBot schema version 25"),
            ("missing-table", 2, "has no table 'bots'"),
            ("no-db", 2, "langbot.db does not exist"),
            ("bad-json", 3, "adapter_config is not valid JSON"),
        ]
        for variant, code, fragment in cases:
            with self.subTest(variant=variant):
                self.check_refused(variant, code, fragment)

    def test_not_a_directory(self):
        tmp = tempfile.mkdtemp(prefix="sb-import-bad-")
        self.addCleanup(shutil.rmtree, tmp, True)
        target = os.path.join(tmp, "switchboard")
        for source, fragment in ((os.path.join(tmp, "nowhere"), "is not a directory"),
                                 (tmp, "is not a LangBot data directory")):
            run = subprocess.run([BIN, "import-langbot", "--data-dir", target, "--from", source],
                                 capture_output=True, text=True, timeout=RUN_TIMEOUT,
                             env=import_env(target))
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn(fragment, run.stderr)
            self.assertFalse(os.path.exists(target))

    def test_skip_invalid_imports_the_rest(self):
        tmp = tempfile.mkdtemp(prefix="sb-import-bad-")
        self.addCleanup(shutil.rmtree, tmp, True)
        fx = make_fixture(os.path.join(tmp, "langbot"), "bad-json")
        run = subprocess.run([BIN, "import-langbot", "--data-dir", os.path.join(tmp, "sb"),
                              "--from", fx["data_dir"], "--skip-invalid"],
                             capture_output=True, text=True, timeout=RUN_TIMEOUT,
                             env=import_env(os.path.join(tmp, "sb")))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("rows that cannot be read (1), skipped (--skip-invalid)", run.stdout)
        self.assertIn("bots: 1 created, 2 skipped", run.stdout)


class PostgresCluster:
    """A throw-away PostgreSQL 15 cluster in a temporary directory, on a free loopback port, run
    by the unprivileged `postgres` user when the tests run as root (initdb refuses root)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sb-import-pg-")
        self.data = os.path.join(self.dir, "data")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.prefix = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self.url = "postgresql://postgres@127.0.0.1:%d/postgres" % self.port

    def run(self, *args, timeout=RUN_TIMEOUT):
        return subprocess.run(self.prefix + list(args), capture_output=True, text=True,
                              timeout=timeout, check=True)

    def start(self):
        self.run(os.path.join(PG_BIN, "initdb"), "-D", self.data, "-U", "postgres",
                 "--auth=trust", "-E", "UTF8", "--no-sync")
        # -w waits until the server accepts connections (pg_ctl's own bounded wait).
        self.run(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-w", "-t", "30", "-l",
                 os.path.join(self.dir, "log"), "-o",
                 "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off" % (self.port, self.dir),
                 "start")

    def psql_file(self, path):
        subprocess.run([os.path.join(PG_BIN, "psql"), "-v", "ON_ERROR_STOP=1", "-q", "-h",
                        "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "postgres",
                        "-f", path], capture_output=True, text=True, timeout=RUN_TIMEOUT,
                       check=True)

    def stop(self):
        subprocess.run(self.prefix + [os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m",
                                      "immediate", "-w", "stop"],
                       capture_output=True, timeout=RUN_TIMEOUT)
        shutil.rmtree(self.dir, True)


@unittest.skipUnless(os.path.exists(os.path.join(PG_BIN, "initdb")), "PostgreSQL 15 not installed")
class PostgresSourceTest(unittest.TestCase):
    def test_import_from_postgresql(self):
        tmp = tempfile.mkdtemp(prefix="sb-import-")
        self.addCleanup(shutil.rmtree, tmp, True)
        cluster = PostgresCluster()
        cluster.start()
        self.addCleanup(cluster.stop)
        sql = os.path.join(tmp, "langbot.sql")
        fx = make_fixture(os.path.join(tmp, "langbot"), "good")
        subprocess.run([sys.executable, FIXTURE_TOOL, os.path.join(tmp, "langbot"),
                        "--postgres-sql", sql], capture_output=True, timeout=RUN_TIMEOUT,
                       check=True)
        target = os.path.join(tmp, "sb")

        def run(*extra):
            return subprocess.run([BIN, "import-langbot", "--data-dir", target,
                                   "--from-database-url", cluster.url] + list(extra),
                                  capture_output=True, text=True, timeout=RUN_TIMEOUT,
                                  env=import_env(target))

        empty = run()  # a database without LangBot's tables
        self.assertEqual(empty.returncode, 2, empty.stdout + empty.stderr)
        self.assertIn("is not a LangBot database", empty.stderr)
        self.assertFalse(os.path.exists(target))
        cluster.psql_file(sql)

        first = run("--from", fx["data_dir"])
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        self.assertIn("PostgreSQL database 127.0.0.1:%d/postgres" % cluster.port, first.stdout)
        for line in ("providers: 2 created, 1 skipped", "LLM models: 1 created, 1 skipped",
                     "pipelines: 2 created", "bots: 2 created, 2 skipped", "API keys: 1 created",
                     "MCP servers: 1 created", "webhooks: 1 created", "accounts: 1 created",
                     "system.jwt.expire -> auth.jwt_expire_seconds: created"):
            self.assertIn(line, first.stdout)
        second = run()
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("0 created, 0 overwritten, 12 already present, 0 conflicting",
                      second.stdout)

        server = Server(data_dir=target)
        server.start()
        self.addCleanup(server.stop)
        token = server.login(fx["account"], fx["account_password"])
        status, body, _ = server.req("GET", "/api/v1/platform/bots/%s" % fx["bots"]["telegram"],
                                     token=token)
        self.assertEqual(status, 200, body)
        self.assertEqual(body["data"]["bot"]["use_pipeline_uuid"], fx["pipelines"]["second"])
        status, _, _ = server.req("GET", "/api/v1/provider/providers", api_key=fx["api_key"])
        self.assertEqual(status, 200)

    def test_unreachable_postgresql(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        tmp = tempfile.mkdtemp(prefix="sb-import-")
        self.addCleanup(shutil.rmtree, tmp, True)
        run = subprocess.run([BIN, "import-langbot", "--data-dir", os.path.join(tmp, "sb"),
                              "--from-database-url",
                              "postgresql://postgres:s3cret-pw@127.0.0.1:%d/langbot" % port],
                             capture_output=True, text=True, timeout=RUN_TIMEOUT,
                             env=import_env(os.path.join(tmp, "sb")))
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("cannot connect to PostgreSQL at 127.0.0.1:%d/langbot" % port, run.stderr)
        self.assertNotIn("s3cret-pw", run.stderr + run.stdout)
        self.assertFalse(os.path.exists(os.path.join(tmp, "sb")))


if __name__ == "__main__":
    unittest.main()
