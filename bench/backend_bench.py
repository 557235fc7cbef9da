#!/usr/bin/env python3
"""The HTTP and bot benchmarks on SQLite and on PostgreSQL side by side (issue 19), with the same
load generator (bench/loadgen.py, standard library, one generator for every case) so the two columns
compare. For each backend a fresh server (`API__IO_THREADS=2 API__BLOCKING_THREADS=4`, unpinned)
with 20 providers and one webhook bot whose model and callback are nginx `return 200` locations:

- `GET /api/v1/provider/providers` with an API key (a read, served from the server's cache);
- `POST /api/v1/provider/providers` with an API key (a write transaction each);
- webhook messages to the bot (signed, each its own id, 1,000 senders): messages per second that
  reached the model (nginx's log), as in bot_bench.py;
- the added latency of one message at a time, from the POST to the reply at a callback receiver.

PostgreSQL is a throw-away cluster (tests/tools/pg_cluster.py) with PostgreSQL's durable defaults,
or --database-url. Writes the `backend-bench` section of docs/performance.md.

Usage: backend_bench.py --binary build/switchboard --out docs/performance.md [--database-url URL]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loadgen  # noqa: E402
import pg_backend  # noqa: E402
from http_bench import free_port, http  # noqa: E402
from bot_bench import (SECRET, SENDERS, Receiver, admin_headers, cpu_seconds, lines,  # noqa: E402
                       message, post_signed, sign, start_nginx, start_switchboard)

DURATION = float(os.environ.get("BENCH_SECONDS", "10"))
CONNECTIONS = 32
LATENCY_MESSAGES = 200
# SQLite and PostgreSQL alternate this many times; each figure is the median of its runs (the
# machine is shared, so single runs vary a lot).
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))


def drain(model_log, before, accepted):
    """Stamps of the model calls since `before`, once `accepted` arrived or 5 s passed idle."""
    last, last_change = lines(model_log) - before, time.monotonic()
    while last < accepted and time.monotonic() - last_change < 5:
        time.sleep(0.2)
        now = lines(model_log) - before
        if now != last:
            last, last_change = now, time.monotonic()
    with open(model_log, "rb") as f:
        return [float(x) for x in f.read().split()[before:]]


def median_by(runs, name, key):
    ordered = sorted((r[name] for r in runs), key=key)
    return ordered[len(ordered) // 2]


def measure(args, work, backend, nport, label):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data_dir = os.path.join(work, "data-" + label)
    server = start_switchboard(args.binary, data_dir, port, backend.server_env(fresh=True)
                               if backend.postgres else {})
    out = {}
    try:
        auth = admin_headers(base)

        def api(method, path, body=None):
            return json.loads(http(method, base + path, body, auth))["data"]

        key = api("POST", "/api/v1/apikeys", {"name": "bench"})["key"]["key"]
        for i in range(20):
            api("POST", "/api/v1/provider/providers",
                {"name": f"provider-{i}", "requester": "openai-chat-completions",
                 "base_url": "https://api.openai.com/v1", "api_keys": [f"sk-bench-{i:04d}"]})
        provider = api("POST", "/api/v1/provider/providers",
                       {"name": "nginx", "requester": "openai-chat-completions",
                        "base_url": f"http://127.0.0.1:{nport}/v1", "api_keys": ["sk-bench"]})
        model = api("POST", "/api/v1/provider/models/llm",
                    {"name": "bench", "provider_uuid": provider["uuid"]})["uuid"]
        pipeline = api("POST", "/api/v1/pipelines", {"name": "bench", "config": {
            "ai": {"local-agent": {"model": {"primary": model, "fallbacks": []},
                                   "max-round": 2}},
            "safety": {"rate-limit": {"window-length": 60, "limitation": 1000000},
                       "content-filter": {"check-sensitive-words": False}}}})["uuid"]

        def bot(callback, name):
            return api("POST", "/api/v1/platform/bots",
                       {"name": name, "adapter": "webhook", "enable": True,
                        "use_pipeline_uuid": pipeline,
                        "config": {"secret": SECRET, "callback_url": callback}})["uuid"]

        hkey = {"X-API-Key": key}
        read = [loadgen.request("GET", "/api/v1/provider/providers", headers=hkey)]
        loadgen.run("127.0.0.1", port, read, CONNECTIONS, 2)  # warm-up
        out["read"] = loadgen.run("127.0.0.1", port, read, CONNECTIONS, DURATION)
        writes = [loadgen.request("POST", "/api/v1/provider/providers", json.dumps(
            {"name": "w-%d" % i, "requester": "openai-chat-completions",
             "base_url": "https://api.openai.com/v1"}).encode(),
            dict(hkey, **{"Content-Type": "application/json"})) for i in range(1000)]
        out["write"] = loadgen.run("127.0.0.1", port, writes, CONNECTIONS, DURATION)

        # Latency first, on a quiet server.
        receiver = Receiver()
        slow = bot(receiver.url, "latency")
        time.sleep(0.5)
        samples = []
        for i in range(LATENCY_MESSAGES + 20):
            receiver.event.clear()
            body = message("lat-%d" % (i % 30), "ping %d" % i)
            t0 = time.perf_counter()
            post_signed(base, slow, body)
            if not receiver.event.wait(10):
                raise RuntimeError("no reply within 10 s")
            if i >= 20:
                samples.append((time.perf_counter() - t0) * 1000)
        samples.sort()
        out["latency"] = (samples[len(samples) // 2], samples[int(len(samples) * 0.99) - 1])

        fast = bot(f"http://127.0.0.1:{nport}/callback", "throughput")
        now = int(time.time())
        bodies = []
        for i in range(60000):
            body = message("user-%d" % (i % SENDERS), mid="%s-%d" % (label, i))
            bodies.append(loadgen.request("POST", "/bots/" + fast, body, {
                "Content-Type": "application/json", "X-Switchboard-Timestamp": str(now),
                "X-Switchboard-Signature": sign(now, body)}))
        model_log = os.path.join(work, "model.log")
        before = lines(model_log)
        cpu_before = cpu_seconds(server.pid)
        result = loadgen.run("127.0.0.1", port, bodies, CONNECTIONS, DURATION)
        accepted = result.count - result.non2xx
        stamps = drain(model_log, before, accepted)
        elapsed = stamps[-1] - stamps[0] if len(stamps) > 1 else 1
        out["bot"] = (accepted, len(stamps), len(stamps) / max(elapsed, 1e-9),
                      (cpu_seconds(server.pid) - cpu_before) / max(len(stamps), 1) * 1e6)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--database-url", default=None,
                    help="postgresql://... to use instead of a throw-away cluster")
    args = ap.parse_args()
    args.backend = "postgresql"
    work = tempfile.mkdtemp(prefix="sb-backendbench-")
    os.chmod(work, 0o755)
    figures = {}
    try:
        with pg_backend.Backend(args, work) as backend:
            described = backend.describe()
            nport = free_port()
            nginx = start_nginx(work, nport)
            try:
                sqlite = argparse.Namespace(backend="sqlite", database_url=None)
                runs = {"SQLite": [], "PostgreSQL": []}
                for r in range(REPEATS):
                    with pg_backend.Backend(sqlite, work) as lite:
                        runs["SQLite"].append(measure(args, work, lite, nport, "sqlite%d" % r))
                    runs["PostgreSQL"].append(measure(args, work, backend, nport, "pg%d" % r))
                    for name in runs:
                        print(name, {k: getattr(v, "rate", v) for k, v in runs[name][-1].items()},
                              flush=True)
                for name, got in runs.items():
                    figures[name] = {
                        "read": median_by(got, "read", lambda x: x.rate),
                        "write": median_by(got, "write", lambda x: x.rate),
                        "latency": median_by(got, "latency", lambda x: x[0]),
                        "bot": median_by(got, "bot", lambda x: x[2])}
            finally:
                nginx.send_signal(signal.SIGQUIT)
                nginx.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    s, p = figures["SQLite"], figures["PostgreSQL"]

    def req(r):
        return f"{r.rate:,.0f} req/s, p99 {r.percentile(99):.1f} ms" + (
            f", {r.non2xx + r.errors} errors" if r.non2xx + r.errors else "")

    load = " / ".join("%.1f" % x for x in os.getloadavg())
    today = datetime.date.today().isoformat()
    text = "\n".join([
        f"### SQLite and PostgreSQL side by side (issue 19) — {today}", "",
        "Command: `python3 bench/backend_bench.py --binary build/switchboard --out "
        f"docs/performance.md`. PostgreSQL: {described}; SQLite: the WAL file in the data "
        "directory (`synchronous=NORMAL`). One server at a time, `API__IO_THREADS=2 "
        "API__BLOCKING_THREADS=4`, unpinned; the load generator is bench/loadgen.py (Python "
        f"asyncio, one process, {CONNECTIONS} keep-alive connections, {DURATION:.0f} s per "
        f"figure; the backends alternate {REPEATS} times, each figure the median run): one load "
        "generator for every case (signed bot messages, many bot URLs); it shares the 2 cores with the server, nginx and "
        "PostgreSQL and is itself the ceiling of the cheap requests, so these figures compare "
        "the backends with each other, not with the wrk figures above. Load average at the end "
        f"(1 / 5 / 15 min): {load} (the machine is shared).", "",
        "| figure | SQLite | PostgreSQL |", "|---|---|---|",
        f"| `GET /api/v1/provider/providers`, API key, 20 providers | {req(s['read'])} "
        f"| {req(p['read'])} |",
        f"| `POST /api/v1/provider/providers` (one write transaction each) | {req(s['write'])} "
        f"| {req(p['write'])} |",
        f"| webhook bot messages/s end to end ({SENDERS} senders; accepted / reached the model) "
        f"| {s['bot'][2]:,.0f} ({s['bot'][0]} / {s['bot'][1]}) "
        f"| {p['bot'][2]:,.0f} ({p['bot'][0]} / {p['bot'][1]}) |",
        f"| server CPU per bot message (user + system) | {s['bot'][3]:.0f} µs "
        f"| {p['bot'][3]:.0f} µs (PostgreSQL's own processes not counted) |",
        f"| added latency of one message at a time, p50 / p99 ({LATENCY_MESSAGES} messages) "
        f"| {s['latency'][0]:.2f} / {s['latency'][1]:.2f} ms "
        f"| {p['latency'][0]:.2f} / {p['latency'][1]:.2f} ms |",
    ])
    print(text)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "write_section.py"),
                    args.out, "backend-bench"], input=text, text=True, check=True)


if __name__ == "__main__":
    main()
