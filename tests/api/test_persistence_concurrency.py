"""Persistence across restarts, the CLI against a data directory, and 64 concurrent writers."""

import os
import re
import sqlite3
import threading
import time
import unittest

from harness import (ADMIN_PASSWORD, ADMIN_USER, API_KEY_RE, ApiAssertions, Server,
                     ServerTestCase)

WRITERS = 64


class PersistenceTest(unittest.TestCase, ApiAssertions):

    def setUp(self):
        self.srv = Server()
        self.addCleanup(self.srv.cleanup)

    def get(self, path, token):
        status, body, _ = self.srv.req("GET", path, token=token)
        return self.assertOk(status, body)

    def post(self, path, body, token):
        status, resp, _ = self.srv.req("POST", path, body, token=token)
        return self.assertOk(status, resp)

    def snapshot(self, token, ids):
        def strip_runtime(bot):
            bot = dict(bot)
            bot.pop("runtime", None)
            return bot
        return {
            "providers": self.get("/api/v1/provider/providers", token)["providers"],
            "llm": self.get("/api/v1/provider/models/llm/" + ids["llm"], token)["model"],
            "embedding": self.get("/api/v1/provider/models/embedding/" + ids["emb"],
                                  token)["model"],
            "pipelines": self.get("/api/v1/pipelines?sort_by=name&sort_order=ASC",
                                  token)["pipelines"],
            "bot": strip_runtime(self.get("/api/v1/platform/bots/" + ids["bot"], token)["bot"]),
            "bots": [strip_runtime(b) for b in self.get("/api/v1/platform/bots",
                                                        token)["bots"]],
            "keys": self.get("/api/v1/apikeys", token)["keys"],
            "info": self.get("/api/v1/system/info", token),
        }

    def test_everything_survives_a_restart(self):
        srv = self.srv
        srv.start()
        first_key = srv.recovery_key
        self.assertTrue(first_key, srv.stdout_lines)
        self.assertTrue(srv.setup_code, srv.stdout_lines)
        token = srv.init_and_login()
        api_key = srv.create_api_key(token, "persisted")

        provider = self.post("/api/v1/provider/providers",
                             {"name": "p", "requester": "openai-chat-completions",
                              "base_url": "https://api.openai.com/v1", "api_keys": ["sk-1"]},
                             token)["uuid"]
        ids = {
            "llm": self.post("/api/v1/provider/models/llm",
                             {"name": "gpt", "provider_uuid": provider, "abilities": ["chat"],
                              "extra_args": {"t": 1}}, token)["uuid"],
            "emb": self.post("/api/v1/provider/models/embedding",
                             {"name": "emb", "provider_uuid": provider}, token)["uuid"],
        }
        pipeline = self.post("/api/v1/pipelines",
                             {"name": "kept", "config": {"ai": {"local-agent": {"max-round": 2}}}},
                             token)["uuid"]
        ids["bot"] = self.post("/api/v1/platform/bots",
                               {"name": "b", "adapter": "telegram", "config": {"token": "1:x"},
                                "use_pipeline_uuid": pipeline, "description": "kept"},
                               token)["uuid"]
        self.post("/api/v1/system/wizard/completed", {"status": "skipped"}, token)
        status, resp, _ = srv.req("PUT", "/api/v1/system/wizard/progress", {"step": 4},
                                  token=token)
        self.assertOk(status, resp)
        before = self.snapshot(token, ids)

        srv.restart()
        self.assertIsNone(srv.recovery_key, "recovery key printed again: %r" % srv.stdout_lines)
        self.assertIsNone(srv.setup_code, srv.stdout_lines)
        self.assertFalse([l for l in srv.stdout_lines if first_key in l])
        # Tokens and keys issued before the restart still work.
        after = self.snapshot(token, ids)
        self.assertEqual(after, before)
        self.assertEqual(after["info"]["wizard_status"], "skipped")
        self.assertEqual(after["info"]["wizard_progress"], {"step": 4})
        status, resp, _ = srv.req("GET", "/api/v1/provider/providers", api_key=api_key)
        self.assertOk(status, resp)
        status, resp, _ = srv.req("GET", "/api/v1/user/init")
        self.assertEqual(resp["data"], {"initialized": True})
        # The recovery key printed at first start still resets the password.
        status, resp, _ = srv.req("POST", "/api/v1/user/reset-password",
                                  {"user": ADMIN_USER, "recovery_key": first_key,
                                   "new_password": "after-restart-1"})
        self.assertOk(status, resp)
        # The reset ended the tokens issued before it (issue 13 §4): log in again.
        status, resp, _ = srv.req("GET", "/api/v1/pipelines", token=token)
        self.assertError(status, resp, 401)
        token = srv.login(password="after-restart-1")

        # A deletion is persistent too.
        status, resp, _ = srv.req("DELETE", "/api/v1/platform/bots/" + ids["bot"], token=token)
        self.assertOk(status, resp)
        srv.restart()
        status, resp, _ = srv.req("GET", "/api/v1/platform/bots/" + ids["bot"], token=token)
        self.assertError(status, resp, 404)
        srv.stop()

    def test_cli_api_key_and_user(self):
        srv = self.srv
        srv.start()
        srv.init_admin()
        srv.stop()
        r = srv.cli("apikey", "create", "--name", "from-cli")
        self.assertEqual(r.returncode, 0, r.stderr)
        keys = re.findall(r"lbk_[A-Za-z0-9_-]{43}", r.stdout)
        self.assertEqual(len(keys), 1, r.stdout)
        self.assertRegex(keys[0], API_KEY_RE)
        r = srv.cli("user", "create", "--user", ADMIN_USER, "--password", "set-by-cli-1")
        self.assertEqual(r.returncode, 0, r.stderr)
        srv.start()
        status, resp, _ = srv.req("GET", "/api/v1/provider/providers", api_key=keys[0])
        self.assertOk(status, resp)
        token = srv.login(password="set-by-cli-1")
        names = [k["name"] for k in self.get("/api/v1/apikeys", token)["keys"]]
        self.assertIn("from-cli", names)
        status, resp, _ = srv.req("POST", "/api/v1/user/auth",
                                  {"user": ADMIN_USER, "password": ADMIN_PASSWORD})
        self.assertError(status, resp, 401)
        srv.stop()


class ShutdownTest(unittest.TestCase, ApiAssertions):
    """SIGTERM: idle keep-alive connections do not hold the process, an in-flight request is
    answered, and the exit code is 0."""

    def test_sigterm_with_idle_and_in_flight_connections(self):
        srv = Server()
        self.addCleanup(srv.cleanup)
        srv.start()
        token = srv.init_and_login()
        idle = srv.connection()
        self.assertEqual(srv.req("GET", "/healthz", conn=idle)[0], 200)

        # Hold the database so that a write stays in flight while SIGTERM arrives.
        db = sqlite3.connect(os.path.join(srv.data_dir, "switchboard.db"), timeout=10,
                             isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        result = {}

        def slow_write():
            try:
                result["status"] = srv.req("POST", "/api/v1/pipelines", {"name": "late"},
                                           token=token)[0]
            except OSError as e:
                result["error"] = repr(e)

        t = threading.Thread(target=slow_write)
        t.start()
        time.sleep(0.5)
        exit_codes = []
        stopper = threading.Thread(target=lambda: exit_codes.append(srv.stop(check=False)))
        stopper.start()  # SIGTERM, then waits up to 15 s for the exit
        time.sleep(0.5)
        db.execute("ROLLBACK")
        db.close()
        t.join(20)
        stopper.join(20)
        self.assertFalse(t.is_alive())
        self.assertIn(result.get("status"), (200, 503), result)
        self.assertEqual(exit_codes, [0])
        idle.close()
        # Whatever was answered 200 is really stored.
        srv.start()
        names = [p["name"] for p in srv.req("GET", "/api/v1/pipelines", token=token)[1]
                 ["data"]["pipelines"]]
        self.assertEqual("late" in names, result["status"] == 200)
        srv.stop()


class ConcurrentWritersTest(ServerTestCase):

    def run_threads(self, work):
        barrier = threading.Barrier(WRITERS)
        results, errors = [None] * WRITERS, []

        def runner(i):
            try:
                barrier.wait(10)
                results[i] = work(i)
            except BaseException as e:  # reported below
                errors.append((i, repr(e)))

        threads = [threading.Thread(target=runner, args=(i,)) for i in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertFalse([t for t in threads if t.is_alive()], "writer threads hung")
        self.assertEqual(errors, [])
        return results

    def test_64_concurrent_writers(self):
        def cred(i):
            return {"token": self.token} if i % 2 else {"api_key": self.api_key}

        def create_all(i):
            statuses = []
            conn = self.srv.connection()
            try:
                def post(path, body):
                    status, resp, _ = self.srv.req("POST", path, body, conn=conn, **cred(i))
                    statuses.append(status)
                    assert status == 200, (path, status, resp)
                    return resp["data"]["uuid"]
                provider = post("/api/v1/provider/providers",
                                {"name": "prov-%02d" % i, "requester": "openai-chat-completions",
                                 "base_url": "https://api.openai.com/v1", "api_keys": ["k%d" % i]})
                model = post("/api/v1/provider/models/llm",
                             {"name": "model-%02d" % i, "provider_uuid": provider})
                pipeline = post("/api/v1/pipelines", {"name": "pipe-%02d" % i})
                bot = post("/api/v1/platform/bots",
                           {"name": "bot-%02d" % i, "adapter": "telegram",
                            "config": {"token": "%d:x" % i}, "use_pipeline_uuid": pipeline})
                # A read in the middle of the writes.
                status, resp, _ = self.srv.req("GET", "/api/v1/platform/bots/" + bot, conn=conn,
                                               **cred(i))
                statuses.append(status)
                assert status == 200 and resp["data"]["bot"]["use_pipeline_uuid"] == pipeline
            finally:
                conn.close()
            return {"provider": provider, "model": model, "pipeline": pipeline, "bot": bot,
                    "statuses": statuses}

        results = self.run_threads(create_all)
        for r in results:
            self.assertEqual(set(r["statuses"]), {200})

        providers = self.ok("GET", "/api/v1/provider/providers")["providers"]
        self.assertEqual(len(providers), WRITERS)
        self.assertEqual({p["uuid"] for p in providers}, {r["provider"] for r in results})
        self.assertEqual({p["name"] for p in providers}, {"prov-%02d" % i for i in range(WRITERS)})
        for p in providers:
            self.assertEqual((p["llm_count"], p["embedding_count"]), (1, 0))
        models = self.ok("GET", "/api/v1/provider/models/llm")["models"]
        self.assertEqual({m["uuid"] for m in models}, {r["model"] for r in results})
        pipelines = self.ok("GET", "/api/v1/pipelines")["pipelines"]
        self.assertEqual(len(pipelines), WRITERS + 1)  # plus the default pipeline
        self.assertEqual({p["uuid"] for p in pipelines if not p["is_default"]},
                         {r["pipeline"] for r in results})
        bots = self.ok("GET", "/api/v1/platform/bots")["bots"]
        self.assertEqual(len(bots), WRITERS)
        by_uuid = {b["uuid"]: b for b in bots}
        for r in results:
            self.assertEqual(by_uuid[r["bot"]]["use_pipeline_uuid"], r["pipeline"])
        self.assertEqual(len({r["bot"] for r in results}), WRITERS)

        # Concurrent deletes: every bot once, pipelines and models after; all succeed exactly.
        def delete_all(i):
            r = results[i]
            out = []
            for path in ("/api/v1/platform/bots/" + r["bot"],
                         "/api/v1/pipelines/" + r["pipeline"],
                         "/api/v1/provider/models/llm/" + r["model"],
                         "/api/v1/provider/providers/" + r["provider"]):
                status, resp, _ = self.srv.req("DELETE", path, **cred(i))
                out.append((path, status, resp))
            return out

        for out in self.run_threads(delete_all):
            for path, status, resp in out:
                self.assertEqual(status, 200, (path, resp))
        self.assertEqual(self.ok("GET", "/api/v1/platform/bots")["bots"], [])
        self.assertEqual(self.ok("GET", "/api/v1/provider/providers")["providers"], [])
        self.assertEqual(self.ok("GET", "/api/v1/provider/models/llm")["models"], [])
        self.assertEqual(len(self.ok("GET", "/api/v1/pipelines")["pipelines"]), 1)

    def test_concurrent_provider_delete_vs_model_create(self):
        """A provider delete racing model creates either wins (then the creates fail with 400)
        or loses with 400 naming the counts; never a 500 and never an orphaned model."""
        provider = self.make_provider("contested")

        def work(i):
            if i == 0:
                return self.srv.req("DELETE", "/api/v1/provider/providers/" + provider,
                                    token=self.token)[:2]
            return self.srv.req("POST", "/api/v1/provider/models/llm",
                                {"name": "m%d" % i, "provider_uuid": provider},
                                api_key=self.api_key)[:2]

        results = self.run_threads(work)
        for status, resp in results:
            self.assertIn(status, (200, 400), resp)
        models = self.ok("GET", "/api/v1/provider/models/llm?provider_uuid=" + provider)["models"]
        created = sum(1 for status, _ in results[1:] if status == 200)
        self.assertEqual(len(models), created)
        if results[0][0] == 200:
            self.assertEqual(created, 0)
        else:
            self.assertGreater(created, 0)
            self.assertIn("LLM", results[0][1]["msg"])
        for m in models:
            self.ok("DELETE", "/api/v1/provider/models/llm/" + m["uuid"])


if __name__ == "__main__":
    unittest.main()
