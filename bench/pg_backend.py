#!/usr/bin/env python3
"""The storage backend of a benchmark run (issue 19): SQLite (the default, a file in the data
directory) or PostgreSQL, either at a URL the caller gives or on a throw-away cluster started with
tests/tools/pg_cluster.py and stopped at the end.

    ap = argparse.ArgumentParser(); pg_backend.add_arguments(ap); args = ap.parse_args()
    with pg_backend.Backend(args, work_dir) as backend:
        env = backend.server_env()          # {} on SQLite, {"DATABASE__URL": ...} on PostgreSQL
        other = backend.server_env(fresh=True)  # a new empty database on the same cluster
"""

import os
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
PG_CLUSTER = os.path.join(HERE, "..", "tests", "tools", "pg_cluster.py")


def add_arguments(ap):
    ap.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite",
                    help="storage of the server(s) under test (default: sqlite)")
    ap.add_argument("--database-url", default=None,
                    help="postgresql://... of a server to use (implies --backend postgresql; the "
                         "bench creates databases of its own there); without it a throw-away "
                         "cluster is started")


class Backend:
    def __init__(self, args, work_dir):
        self.postgres = args.backend == "postgresql" or bool(args.database_url)
        self.base_url = args.database_url
        self.cluster_dir = None
        self.work_dir = work_dir
        self._first = None

    @property
    def label(self):
        return "PostgreSQL" if self.postgres else "SQLite"

    def __enter__(self):
        if self.postgres and not self.base_url:
            os.chmod(self.work_dir, 0o755)  # the cluster may run as another user (root: postgres)
            self.cluster_dir = os.path.join(self.work_dir, "pg")
            os.makedirs(self.cluster_dir, exist_ok=True)
            subprocess.run([sys.executable, PG_CLUSTER, "start", self.cluster_dir], check=True,
                           capture_output=True, timeout=180)
            with open(os.path.join(self.cluster_dir, "url")) as f:
                self.base_url = f.read().strip()
            # The test cluster trades durability for speed (fsync, synchronous_commit and
            # full_page_writes off); a benchmark measures what production pays: the defaults.
            subprocess.run(["psql", self.base_url, "-v", "ON_ERROR_STOP=1", "-qc",
                            "ALTER SYSTEM SET fsync = on", "-c",
                            "ALTER SYSTEM SET synchronous_commit = on", "-c",
                            "ALTER SYSTEM SET full_page_writes = on", "-c",
                            "SELECT pg_reload_conf()"], check=True, capture_output=True,
                           timeout=60)
        return self

    def __exit__(self, *exc):
        if self.cluster_dir:
            subprocess.run([sys.executable, PG_CLUSTER, "stop", self.cluster_dir],
                           capture_output=True, timeout=180)

    def fresh_database(self):
        name = "sbbench_" + uuid.uuid4().hex[:16]
        subprocess.run(["psql", self.base_url, "-v", "ON_ERROR_STOP=1", "-qc",
                        'CREATE DATABASE "%s"' % name], check=True, capture_output=True,
                       timeout=60)
        return self.base_url.rsplit("/", 1)[0] + "/" + name

    def server_env(self, fresh=False):
        """The environment that points a server at this backend: one database for every call
        unless `fresh` (several instances share the first)."""
        if not self.postgres:
            return {}
        if fresh or self._first is None:
            url = self.fresh_database()
            if self._first is None:
                self._first = url
        else:
            url = self._first
        return {"DATABASE__URL": url}

    def describe(self):
        if not self.postgres:
            return "SQLite (WAL file in the data directory)"
        if self.cluster_dir:
            return ("PostgreSQL 15, a throw-away cluster of tests/tools/pg_cluster.py on "
                    "loopback, unpinned, with PostgreSQL's durable defaults (fsync, "
                    "synchronous_commit, full_page_writes on)")
        return "PostgreSQL at the given --database-url"
