#!/usr/bin/env python3
"""Messages per second with one and with two instances on one PostgreSQL (issue 19).

For each run: a fresh database on a throw-away cluster (tests/tools/pg_cluster.py, or databases
of their own at --database-url), N switchboard processes sharing it (same DATABASE__URL and
SWITCHBOARD_SECRETS_KEY, a data directory each), and BOTS webhook bots created round-robin through
the instances as a load balancer would send the requests, so each instance takes the leases of
the bots created through it. The script then checks that every bot is owned by exactly one
instance (owned_bots of /system/info) and drives each instance's bots (bench/loadgen.py, one
asyncio process, the connections split evenly between the instances;
signed webhook messages, 1,000 senders), each message to the instance that owns its bot. The model and the reply callback are nginx `return 200` locations as
in bot_bench.py; messages per second = model calls nginx logged / time from the first to the last.

Usage: instances_bench.py --binary build/switchboard --out docs/performance.md [--database-url URL]
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_bench import free_port, http  # noqa: E402
from bot_bench import (SECRET, SENDERS, admin_headers, cpu_seconds, lines, message,  # noqa: E402
                       sign, start_nginx)
import loadgen  # noqa: E402
import pg_backend  # noqa: E402

DURATION = float(os.environ.get("BENCH_SECONDS", "10"))
CONNECTIONS = 32
BOTS = int(os.environ.get("BENCH_BOTS", "8"))
# 1 and 2 instances alternate this many times; the table shows the run of median rate of each
# (the machine is shared, so single runs vary a lot).
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
UNIQUE_BODIES = int(os.environ.get("BENCH_UNIQUE_BODIES", "60000"))
SERVER_ENV = {"API__IO_THREADS": "2", "API__BLOCKING_THREADS": "4", "SYSTEM__LOG_LEVEL": "warn",
              "RUNTIME__MAX_QUEUED_MESSAGES": "100000"}


def start_instance(binary, data_dir, port, env):
    full = dict(os.environ, **SERVER_ENV)
    full.update(env)
    proc = subprocess.Popen([binary, "serve", "--data-dir", data_dir, "--port", str(port),
                             "--host", "127.0.0.1"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=full)
    for _ in range(400):
        try:
            http("GET", f"http://127.0.0.1:{port}/healthz")
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("switchboard exited with %r" % proc.returncode)
            time.sleep(0.05)
    raise RuntimeError("switchboard did not start")


def signed_requests(bots, count, tag):
    """Pre-signed webhook messages, each its own id, cycling over `bots` and SENDERS senders."""
    now = int(time.time())
    out = []
    for i in range(count):
        body = message("user-%d" % (i % SENDERS), mid="%s-%d" % (tag, i))
        out.append(loadgen.request("POST", "/bots/" + bots[i % len(bots)], body, {
            "Content-Type": "application/json", "X-Switchboard-Timestamp": str(now),
            "X-Switchboard-Signature": sign(now, body)}))
    return out


def run_instances(args, work, backend, nport, count):
    """One measurement with `count` instances; a dict of figures."""
    env = backend.server_env(fresh=True)
    env["SWITCHBOARD_SECRETS_KEY"] = "bench-" + uuid.uuid4().hex + uuid.uuid4().hex
    ports = [free_port() for _ in range(count)]
    procs = []
    try:
        for i, port in enumerate(ports):
            procs.append(start_instance(args.binary, os.path.join(work, "data-%d-%d" % (count, i)),
                                        port, env))
        bases = ["http://127.0.0.1:%d" % p for p in ports]
        auth = admin_headers(bases[0])

        def api(base, method, path, body=None):
            return json.loads(http(method, base + path, body, auth))["data"]

        provider = api(bases[0], "POST", "/api/v1/provider/providers",
                       {"name": "nginx", "requester": "openai-chat-completions",
                        "base_url": f"http://127.0.0.1:{nport}/v1", "api_keys": ["sk-bench"]})
        model = api(bases[0], "POST", "/api/v1/provider/models/llm",
                    {"name": "bench", "provider_uuid": provider["uuid"]})["uuid"]
        pipeline = api(bases[0], "POST", "/api/v1/pipelines", {"name": "bench", "config": {
            "ai": {"local-agent": {"model": {"primary": model, "fallbacks": []},
                                   "max-round": 2}},
            "safety": {"rate-limit": {"window-length": 60, "limitation": 1000000},
                       "content-filter": {"check-sensitive-words": False}}}})["uuid"]
        bots = []
        for i in range(BOTS):  # round-robin, as a load balancer would spread the requests
            bots.append(api(bases[i % count], "POST", "/api/v1/platform/bots",
                            {"name": "bench-%d" % i, "adapter": "webhook", "enable": True,
                             "use_pipeline_uuid": pipeline,
                             "config": {"secret": SECRET,
                                        "callback_url": f"http://127.0.0.1:{nport}/callback"}}
                            )["uuid"])
        owned = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            owned = [set(json.loads(http("GET", b + "/api/v1/system/info"))["data"]["owned_bots"])
                     for b in bases]
            if sum(len(o) for o in owned) == len(bots) and set().union(*owned) == set(bots):
                break
            time.sleep(0.2)
        else:
            raise RuntimeError("the bots are not owned once each: %r" % owned)
        time.sleep(1)

        model_log = os.path.join(work, "model.log")
        before = lines(model_log)
        cpu_before = sum(cpu_seconds(p.pid) for p in procs)
        targets = []
        busy = [i for i in range(count) if owned[i]]
        for i in busy:
            targets.append(("127.0.0.1", ports[i],
                            signed_requests(sorted(owned[i]), UNIQUE_BODIES // len(busy),
                                            "i%d-%d" % (count, i)),
                            CONNECTIONS // len(busy)))
        results = loadgen.run_many(targets, DURATION)
        accepted = sum(r.count - r.non2xx for r in results)
        last, last_change = lines(model_log) - before, time.monotonic()
        while last < accepted and time.monotonic() - last_change < 5:
            time.sleep(0.2)
            now = lines(model_log) - before
            if now != last:
                last, last_change = now, time.monotonic()
        with open(model_log, "rb") as f:
            stamps = [float(x) for x in f.read().split()[before:]]
        elapsed = stamps[-1] - stamps[0] if len(stamps) > 1 else 1
        processed = len(stamps)
        cpu = sum(cpu_seconds(p.pid) for p in procs) - cpu_before
        return {"instances": count, "split": [len(o) for o in owned], "accepted": accepted,
                "processed": processed, "rate": processed / max(elapsed, 1e-9),
                "cpu_us": cpu / max(processed, 1) * 1e6}
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--database-url", default=None,
                    help="postgresql://... to use instead of a throw-away cluster")
    args = ap.parse_args()
    args.backend = "postgresql"
    work = tempfile.mkdtemp(prefix="sb-instbench-")
    os.chmod(work, 0o755)
    results = []
    try:
        with pg_backend.Backend(args, work) as backend:
            nport = free_port()
            nginx = start_nginx(work, nport)
            try:
                runs = {1: [], 2: []}
                for _ in range(REPEATS):
                    for count in (1, 2):
                        runs[count].append(run_instances(args, work, backend, nport, count))
                        print(runs[count][-1], flush=True)
                for count in (1, 2):
                    ordered = sorted(runs[count], key=lambda r: r["rate"])
                    median = dict(ordered[len(ordered) // 2])
                    median["all"] = [r["rate"] for r in runs[count]]
                    results.append(median)
            finally:
                nginx.send_signal(signal.SIGQUIT)
                nginx.wait(timeout=30)
            described = backend.describe()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load = " / ".join("%.1f" % x for x in os.getloadavg())
    today = datetime.date.today().isoformat()
    rows = ["| instances | bots per instance (leases) | accepted | reached the model | "
            f"messages/s (median of {REPEATS}) | every run | server CPU per message |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        every = ", ".join("%.0f" % x for x in r["all"])
        rows.append(f"| {r['instances']} | {' + '.join(map(str, r['split']))} | {r['accepted']} "
                    f"| {r['processed']} | {r['rate']:,.0f} | {every} | {r['cpu_us']:.0f} µs |")
    ratio = results[1]["rate"] / results[0]["rate"] if results[0]["rate"] else 0
    text = "\n".join([
        f"### Several instances on one PostgreSQL (issue 19) — {today}", "",
        "Command: `python3 bench/instances_bench.py --binary build/switchboard --out "
        f"docs/performance.md` (storage: {described}). {BOTS} webhook bots created round-robin "
        "through the instances (each instance holds the leases of the bots created through it); "
        f"bench/loadgen.py (Python asyncio, one process) with "
        f"{CONNECTIONS} keep-alive connections split evenly between the instances, "
        f"{DURATION:.0f} s, {SENDERS} senders, posts signed messages for each bot to the "
        "instance that owns it; model and "
        "callback are nginx `return 200` locations. Every instance with `API__IO_THREADS=2 "
        f"API__BLOCKING_THREADS=4`, unpinned; one and two instances alternate {REPEATS} times, "
        "each run on a fresh database. Messages/s counts from the first model call to the "
        "last, so a backlog drained after the load ends lowers it. Load average at the end "
        f"(1 / 5 / 15 min): {load} (the machine is shared).", "",
        *rows, "",
        f"Two instances against one: {ratio:.2f}×. The machine has 2 cores, shared by the "
        "instances, PostgreSQL, the load generator and nginx, so a second instance adds no CPU: the figure shows "
        "what sharing the work costs (leases, a second process), not how it scales on more "
        "cores or machines.",
    ])
    print(text)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "write_section.py"),
                    args.out, "instances-bench"], input=text, text=True, check=True)


if __name__ == "__main__":
    main()
