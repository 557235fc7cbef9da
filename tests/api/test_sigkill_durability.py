"""Acknowledged writes survive SIGKILL (issue 13, "Tests and figures").

Eight writer threads create providers, models, pipelines and bots, update the bots and create and
delete scratch pipelines through the API as fast as they can. At a seeded moment (a number of
acknowledged writes) the server is SIGKILLed and started again on the same data directory. Every
write answered 200 before the kill must be there, field for field (a delete must have stayed
deleted); a write whose answer was lost may or may not be there, but if it is, it is complete;
nothing appears that was never sent; references hold (a bot's pipeline, a model's provider). Three
rounds, each killing at a different moment; after each kill a copy of the database files passes
`PRAGMA integrity_check`, and so does the database after the last, clean stop. The figures are
printed ("sigkill durability: ...") for docs/security.md.

On PostgreSQL (ctest api_pg_test_sigkill_durability, issue 19) the same writers, kills and checks
of every acknowledged write run against the server's PostgreSQL database; only the SQLite file
checks give way to one that no SQLite file was written (the writes really went to PostgreSQL).
There, a second test crashes PostgreSQL itself (immediate shutdown) under the same writers, on a
cluster of its own with the durable defaults: the server stays up, recovers when the database is
back, and every acknowledged write is there.
"""

import http.client
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from harness import ApiAssertions, Server, on_postgres
from fake_clients import wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import pg_cluster  # noqa: E402

SEED = 13
ROUNDS = 3
WRITERS = 8
KILL_AFTER = (500, 3000)  # acknowledged writes per round before the kill, drawn from the seed
ROUND_LIMIT = 60.0  # seconds; the kill comes at the latest then
WRITE_TIMEOUT = 15.0


class Op:
    """One API write and what became of it: 'acked' (200), 'unknown' (no answer: the kill
    came first), 'refused' (an answer other than 200)."""

    def __init__(self, kind, prefix, body=None, target=None):
        self.kind, self.prefix, self.body, self.target = kind, prefix, body, target
        self.outcome, self.uuid, self.detail = None, None, None


def provider_body(prefix):
    return {"name": "p-" + prefix, "requester": "openai-chat-completions",
            "base_url": "https://api.example.com/" + prefix,
            "api_keys": ["sk-%s-a" % prefix, "sk-%s-b" % prefix]}


def model_body(prefix, provider):
    return {"name": "m-" + prefix, "provider_uuid": provider, "abilities": ["chat"],
            "extra_args": {"marker": prefix}}


def pipeline_body(prefix, rounds):
    return {"name": "pl-" + prefix, "description": prefix,
            "config": {"ai": {"local-agent": {"max-round": rounds, "prompt": [
                {"role": "system", "content": "marker " + prefix}]}}}}


def bot_body(prefix, pipeline, description):
    return {"name": "b-" + prefix, "adapter": "webhook", "enable": False,
            "description": description, "use_pipeline_uuid": pipeline,
            "config": {"secret": "s-" + prefix, "callback_url": "http://127.0.0.1:1/" + prefix}}


class Writer(threading.Thread):
    """Writes until the server goes away; every write is recorded in `ops` before it is sent."""

    def __init__(self, srv, token, name, ops, acked, lock):
        super().__init__(daemon=True)
        self.srv, self.token, self.label = srv, token, name
        self.ops, self.acked, self.lock = ops, acked, lock

    def call(self, conn, op, method, path):
        with self.lock:
            self.ops.append(op)
        try:
            status, resp, _ = self.srv.req(method, path, op.body, token=self.token, conn=conn,
                                           timeout=WRITE_TIMEOUT)
        except (OSError, http.client.HTTPException) as e:
            op.outcome, op.detail = "unknown", repr(e)
            raise
        if status != 200:
            op.outcome, op.detail = "refused", (status, resp)
            raise RuntimeError("%s %s -> %s %r" % (method, path, status, resp))
        op.outcome = "acked"
        data = resp.get("data")
        op.uuid = (data.get("uuid") if isinstance(data, dict) else None) or op.target
        with self.lock:
            self.acked[0] += 1
        return op.uuid

    def run(self):
        conn = self.srv.connection(WRITE_TIMEOUT)
        try:
            for i in range(1000000):
                prefix = "%s-%d" % (self.label, i)
                provider = self.call(conn, Op("provider", prefix, provider_body(prefix)), "POST",
                                     "/api/v1/provider/providers")
                self.call(conn, Op("model", prefix, model_body(prefix, provider)), "POST",
                          "/api/v1/provider/models/llm")
                pipeline = self.call(conn, Op("pipeline", prefix, pipeline_body(prefix, i % 9 + 1)),
                                     "POST", "/api/v1/pipelines")
                bot = self.call(conn, Op("bot", prefix, bot_body(prefix, pipeline, prefix)), "POST",
                                "/api/v1/platform/bots")
                self.call(conn, Op("bot update", prefix,
                                   bot_body(prefix, pipeline, "updated " + prefix), target=bot),
                          "PUT", "/api/v1/platform/bots/" + bot)
                scratch = self.call(conn, Op("scratch", prefix, {"name": "x-" + prefix}), "POST",
                                    "/api/v1/pipelines")
                self.call(conn, Op("scratch delete", prefix, target=scratch), "DELETE",
                          "/api/v1/pipelines/" + scratch)
        except (OSError, http.client.HTTPException, RuntimeError):
            pass  # the server was killed (or refused, which the test reports)
        finally:
            conn.close()


def check_integrity(db_path):
    """(integrity_check rows, foreign_key_check rows) of the database at `db_path`."""
    db = sqlite3.connect(db_path, timeout=10)
    try:
        return (db.execute("PRAGMA integrity_check").fetchall(),
                db.execute("PRAGMA foreign_key_check").fetchall())
    finally:
        db.close()


class SigkillDurabilityTest(unittest.TestCase, ApiAssertions):

    def setUp(self):
        self.srv = Server()
        self.addCleanup(self.srv.cleanup)

    def get(self, path):
        status, body, _ = self.srv.req("GET", path, token=self.token)
        return self.assertOk(status, body, "GET %s -> %s %r" % (path, status, body))

    def snapshot(self):
        """What the server holds, by name: {kind: {name: object}}."""
        providers = self.get("/api/v1/provider/providers")["providers"]
        models = self.get("/api/v1/provider/models/llm")["models"]
        pipelines = self.get("/api/v1/pipelines")["pipelines"]
        bots = self.get("/api/v1/platform/bots")["bots"]
        out = {}
        for kind, items in (("provider", providers), ("model", models),
                            ("pipeline", pipelines), ("bot", bots)):
            by_name = {}
            for item in items:
                self.assertNotIn(item["name"], by_name, "two %ss named %r" % (kind, item["name"]))
                by_name[item["name"]] = item
            out[kind] = by_name
        return out

    def complete(self, kind, found, body):
        """Problems with `found` (as listed by the server) against the `body` that created it."""
        problems = []

        def same(field, have, want):
            if have != want:
                problems.append("%s %s: %s is %r, sent %r" % (kind, found.get("name"), field,
                                                               have, want))
        if kind == "provider":
            for field in ("name", "requester", "base_url", "api_keys"):
                same(field, found.get(field), body[field])
        elif kind == "model":
            for field in ("name", "provider_uuid", "abilities", "extra_args"):
                same(field, found.get(field), body[field])
        elif kind == "pipeline":
            same("name", found.get("name"), body["name"])
            same("description", found.get("description"), body["description"])
            agent = found.get("config", {}).get("ai", {}).get("local-agent", {})
            want = body["config"]["ai"]["local-agent"]
            same("max-round", agent.get("max-round"), want["max-round"])
            same("prompt", agent.get("prompt"), want["prompt"])
        elif kind == "bot":
            for field in ("name", "adapter", "enable", "use_pipeline_uuid"):
                same(field, found.get(field), body[field])
            same("callback_url", found.get("adapter_config", {}).get("callback_url"),
                 body["config"]["callback_url"])
        return problems

    def verify(self, ops):
        """Checks the restarted server against every write of every round so far.
        Returns (acknowledged writes, lost writes, unanswered writes that took effect,
        problems)."""
        snap = self.snapshot()
        problems, lost, acked, applied = [], [], 0, 0
        by_prefix = {}
        for op in ops:
            by_prefix.setdefault(op.prefix, {})[op.kind] = op
        seen = {kind: set() for kind in snap}
        for prefix, group in sorted(by_prefix.items()):
            for kind, name in (("provider", "p-"), ("model", "m-"), ("pipeline", "pl-"),
                               ("bot", "b-"), ("scratch", "x-")):
                op = group.get(kind)
                if op is None:
                    continue
                table = "pipeline" if kind == "scratch" else kind
                found = snap[table].get(name + prefix)
                if found is not None:
                    seen[table].add(name + prefix)
                    applied += op.outcome == "unknown"
                acked += op.outcome == "acked"
                if op.outcome == "acked" and kind != "scratch" and found is None:
                    lost.append("%s %s (acknowledged)" % (kind, prefix))
                    continue
                if found is None:
                    continue
                if op.uuid is not None and found["uuid"] != op.uuid:
                    problems.append("%s %s has uuid %s, acknowledged as %s" % (
                        kind, prefix, found["uuid"], op.uuid))
                if kind == "scratch":
                    continue
                body = op.body
                if kind == "bot":
                    update = group.get("bot update")
                    descriptions = {body["description"]}
                    if update is not None:
                        acked += update.outcome == "acked"
                        if update.outcome == "acked":
                            descriptions = {update.body["description"]}
                        else:  # its answer was lost: either state is right
                            descriptions.add(update.body["description"])
                            applied += found.get("description") == update.body["description"]
                    if found.get("description") not in descriptions:
                        if update is not None and update.outcome == "acked":
                            lost.append("bot update %s (acknowledged)" % prefix)
                        else:
                            problems.append("bot %s: description %r, expected one of %r" % (
                                prefix, found.get("description"), sorted(descriptions)))
                problems.extend(self.complete(kind, found, body))
            scratch, delete = group.get("scratch"), group.get("scratch delete")
            if delete is not None:
                acked += delete.outcome == "acked"
                if delete.outcome == "acked" and "x-" + prefix in snap["pipeline"]:
                    lost.append("scratch delete %s (acknowledged)" % prefix)
                applied += delete.outcome == "unknown" and "x-" + prefix not in snap["pipeline"]
            elif scratch is not None and scratch.outcome == "acked" and \
                    "x-" + prefix not in snap["pipeline"]:
                lost.append("scratch %s (acknowledged)" % prefix)
        # Nothing that was never sent; no object without its parts.
        for kind, by_name in snap.items():
            for name, item in by_name.items():
                if name not in seen[kind] and not (kind == "pipeline" and item["is_default"]):
                    problems.append("%s %r was never written" % (kind, name))
        providers = {p["uuid"]: p for p in snap["provider"].values()}
        pipelines = {p["uuid"] for p in snap["pipeline"].values()}
        counts = {}
        for model in snap["model"].values():
            if model["provider_uuid"] not in providers:
                problems.append("model %s without its provider" % model["name"])
            counts[model["provider_uuid"]] = counts.get(model["provider_uuid"], 0) + 1
        for uuid, provider in providers.items():
            if provider.get("llm_count") != counts.get(uuid, 0):
                problems.append("provider %s counts %r models, %d listed" % (
                    provider["name"], provider.get("llm_count"), counts.get(uuid, 0)))
        for bot in snap["bot"].values():
            if bot["use_pipeline_uuid"] not in pipelines:
                problems.append("bot %s without its pipeline" % bot["name"])
        return acked, lost, applied, problems

    def crash_copy_integrity(self):
        """integrity_check on a copy of the database files as the kill left them (the server's
        own files are not touched: opening them would recover the WAL in its place)."""
        tmp = tempfile.mkdtemp(prefix="sb-crash-")
        try:
            for suffix in ("", "-wal", "-shm"):
                src = os.path.join(self.srv.data_dir, "switchboard.db" + suffix)
                if os.path.exists(src):
                    shutil.copy2(src, os.path.join(tmp, "switchboard.db" + suffix))
            return check_integrity(os.path.join(tmp, "switchboard.db"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def assertNoSqliteFile(self):
        """On PostgreSQL: the server wrote no SQLite database (sqlite3.connect on a missing file
        would make an empty one and pass integrity_check, proving nothing)."""
        found = [n for n in os.listdir(self.srv.data_dir) if n.startswith("switchboard.db")]
        self.assertEqual(found, [], "a SQLite file in the data directory of a PostgreSQL run")

    def test_acknowledged_writes_survive_sigkill(self):
        rng = random.Random(SEED)
        srv = self.srv
        srv.start()
        self.token = srv.init_and_login()
        ops, lock = [], threading.Lock()
        figures = []
        for rnd in range(ROUNDS):
            kill_after = rng.randint(*KILL_AFTER)
            acked_box = [0]
            writers = [Writer(srv, self.token, "r%dw%d" % (rnd, w), ops, acked_box, lock)
                       for w in range(WRITERS)]
            started = time.monotonic()
            for w in writers:
                w.start()
            while acked_box[0] < kill_after and time.monotonic() - started < ROUND_LIMIT:
                if not any(w.is_alive() for w in writers):
                    break
                time.sleep(0.001)
            srv.kill()
            for w in writers:
                w.join(WRITE_TIMEOUT + 5)
            in_round = acked_box[0]  # every answer read was sent before the kill
            self.assertFalse([w for w in writers if w.is_alive()], "a writer hung")
            refused = [(op.kind, op.prefix, op.detail) for op in ops if op.outcome == "refused"]
            self.assertEqual(refused, [], "writes refused before the kill")
            self.assertGreaterEqual(in_round, kill_after, "the writers stopped before the kill")
            unknown = sum(1 for op in ops if op.outcome == "unknown" and op.prefix.startswith(
                "r%dw" % rnd))
            if on_postgres():
                self.assertNoSqliteFile()
            else:
                integrity, fk = self.crash_copy_integrity()
                self.assertEqual(integrity, [("ok",)], "database after the kill of round %d" % rnd)
                self.assertEqual(fk, [], "foreign keys after the kill of round %d" % rnd)

            srv.start()  # the database opens (start() fails otherwise)
            acked, lost, applied, problems = self.verify(ops)
            figures.append((rnd + 1, in_round, unknown, applied, acked, len(lost)))
            print("\nsigkill round %d: %d writes acknowledged before the kill, %d unanswered "
                  "(%d of them took effect); %d acknowledged in all rounds so far, %d lost"
                  % figures[-1], flush=True)
            self.assertEqual(lost, [], "acknowledged writes lost in round %d" % (rnd + 1))
            self.assertEqual(problems, [], "half-written or unknown data in round %d" % (rnd + 1))
        srv.stop()
        if on_postgres():
            self.assertNoSqliteFile()
            checked = "PostgreSQL"
        else:
            integrity, fk = check_integrity(os.path.join(srv.data_dir, "switchboard.db"))
            self.assertEqual(integrity, [("ok",)])
            self.assertEqual(fk, [])
            checked = "SQLite, integrity_check ok"
        total = sum(f[1] for f in figures)
        print("sigkill durability: %d rounds, %d writers, %d acknowledged writes before the "
              "kills, %d lost; %s" % (ROUNDS, WRITERS, total, sum(f[5] for f in figures),
                                      checked), flush=True)

    @unittest.skipUnless(on_postgres(), "the database server's own crash: PostgreSQL only")
    def test_acknowledged_writes_survive_a_postgresql_crash(self):
        """PostgreSQL itself crashes (immediate shutdown: no checkpoint, WAL buffers dropped)
        under the eight writers and comes back; the server stays up and every write it
        acknowledged is there. On a cluster of the test's own with PostgreSQL's durable
        defaults (the suite's shared cluster runs with synchronous_commit off)."""
        base = tempfile.mkdtemp(prefix="sb-pgcrash-")
        os.chmod(base, 0o755)  # the cluster may run as another user (root: postgres)
        cluster = os.path.join(base, "pg")
        os.mkdir(cluster)
        self.addCleanup(shutil.rmtree, base, True)
        self.addCleanup(pg_cluster.stop, cluster, True)
        pg_cluster.start(cluster)
        with open(os.path.join(cluster, "url")) as f:
            url = f.read().strip()
        subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-qc",
                        "ALTER SYSTEM SET synchronous_commit = on", "-c",
                        "ALTER SYSTEM SET fsync = on", "-c", "SELECT pg_reload_conf()"],
                       check=True, capture_output=True, timeout=60)
        self.srv = srv = Server(env={"DATABASE__URL": url})
        self.addCleanup(srv.cleanup)
        srv.start()
        self.token = srv.init_and_login()
        ops, lock, acked_box = [], threading.Lock(), [0]
        writers = [Writer(srv, self.token, "c%d" % w, ops, acked_box, lock)
                   for w in range(WRITERS)]
        for w in writers:
            w.start()
        self.assertTrue(wait_until(lambda: acked_box[0] >= 1500 or
                                   not any(w.is_alive() for w in writers), ROUND_LIMIT, 0.001))
        pg_cluster.halt(cluster, mode="immediate", quiet=True)
        for w in writers:
            w.join(WRITE_TIMEOUT + 5)
        self.assertFalse([w for w in writers if w.is_alive()], "a writer hung")
        before_crash = acked_box[0]
        self.assertGreaterEqual(before_crash, 1500, "the writers stopped before the crash")
        # A write refused while the database went away may still have committed (its COMMIT's
        # answer was lost): like an unanswered one, it may or may not be there.
        for op in ops:
            if op.outcome == "refused":
                self.assertEqual(op.detail[0], 503, op.detail)
                op.outcome = "unknown"
        pg_cluster.resume(cluster)
        self.assertTrue(wait_until(lambda: srv.req("GET", "/api/v1/pipelines",
                                                   token=self.token)[0] == 200, 30, 0.2),
                        "the server did not recover by itself")
        acked, lost, applied, problems = self.verify(ops)
        print("\npostgresql crash: %d writes acknowledged before PostgreSQL's immediate shutdown, "
              "%d unanswered or refused (%d of them took effect), %d lost" % (
                  before_crash, sum(1 for op in ops if op.outcome == "unknown"), applied,
                  len(lost)), flush=True)
        self.assertEqual(lost, [], "acknowledged writes lost in PostgreSQL's crash")
        self.assertEqual(problems, [], "half-written or unknown data after PostgreSQL's crash")
        srv.stop()


if __name__ == "__main__":
    unittest.main()
