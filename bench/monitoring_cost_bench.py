#!/usr/bin/env python3
"""What monitoring costs the message path (issue 18): the webhook bench's set-up (bot_bench.py:
signed messages to a webhook bot, model and callback as nginx `return 200` locations), run with
`monitoring.enabled` on and off in the same run, alternating, several rounds; throughput is model
calls nginx logged per second, plus server CPU per message. wrk is not required: the load comes
from a few client processes with keep-alive connections (so the absolute figures are lower than
bot_bench.py's; the comparison is what counts).

Usage: monitoring_cost_bench.py --binary build/switchboard --out docs/performance.md
"""

import argparse
import datetime
import http.client as httpclient
import json
import multiprocessing
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bot_bench import SECRET, cpu_seconds, lines, message, sign, start_nginx  # noqa: E402
from http_bench import free_port, http  # noqa: E402

SECONDS = float(os.environ.get("BENCH_SECONDS", "8"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "6"))


def client(port, bot, seconds, worker, out):
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=10)
    deadline = time.monotonic() + seconds
    sent = i = 0
    while time.monotonic() < deadline:
        body = message("user-%d-%d" % (worker, i % 200), mid="w%d-%d-%f" % (worker, i, time.time()))
        ts = int(time.time())
        conn.request("POST", "/bots/" + bot, body=body, headers={
            "Content-Type": "application/json", "X-Switchboard-Timestamp": str(ts),
            "X-Switchboard-Signature": sign(ts, body)})
        r = conn.getresponse()
        r.read()
        sent += r.status == 200
        i += 1
    out.put(sent)


def run_once(binary, work, nport, enabled):
    import subprocess
    port = free_port()
    data = tempfile.mkdtemp(dir=work)
    env = dict(os.environ, API__IO_THREADS="2", API__BLOCKING_THREADS="4",
               SYSTEM__LOG_LEVEL="warn", RUNTIME__MAX_QUEUED_MESSAGES="100000",
               MONITORING__ENABLED="true" if enabled else "false")
    server = subprocess.Popen([binary, "serve", "--data-dir", data, "--port", str(port),
                               "--host", "127.0.0.1"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env)
    base = "http://127.0.0.1:%d" % port
    try:
        for _ in range(200):
            try:
                http("GET", base + "/healthz")
                break
            except OSError:
                time.sleep(0.05)
        http("POST", base + "/api/v1/user/init", {"user": "b@example.com", "password": "bench-pass"})
        token = json.loads(http("POST", base + "/api/v1/user/auth",
                                {"user": "b@example.com", "password": "bench-pass"}))["data"]["token"]
        auth = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

        def api(method, path, body=None):
            return json.loads(http(method, base + path, body, auth))["data"]

        provider = api("POST", "/api/v1/provider/providers",
                       {"name": "nginx", "requester": "openai-chat-completions",
                        "base_url": "http://127.0.0.1:%d/v1" % nport, "api_keys": ["sk-bench"]})
        model = api("POST", "/api/v1/provider/models/llm",
                    {"name": "bench", "provider_uuid": provider["uuid"]})["uuid"]
        pipeline = api("POST", "/api/v1/pipelines", {"name": "bench", "config": {
            "ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}, "max-round": 2}},
            "safety": {"rate-limit": {"window-length": 60, "limitation": 1000000},
                       "content-filter": {"check-sensitive-words": False}}}})["uuid"]
        bot = api("POST", "/api/v1/platform/bots",
                  {"name": "bench", "adapter": "webhook", "enable": True,
                   "use_pipeline_uuid": pipeline,
                   "config": {"secret": SECRET,
                              "callback_url": "http://127.0.0.1:%d/callback" % nport}})["uuid"]
        time.sleep(0.5)
        model_log = os.path.join(work, "model.log")
        before = lines(model_log)
        cpu_before = cpu_seconds(server.pid)
        out = multiprocessing.Queue()
        procs = [multiprocessing.Process(target=client, args=(port, bot, SECONDS, w, out))
                 for w in range(CLIENTS)]
        t0 = time.monotonic()
        for p in procs:
            p.start()
        accepted = sum(out.get(timeout=SECONDS + 60) for _ in procs)
        for p in procs:
            p.join()
        # Every accepted message reaches the model (or nothing moves for 3 s).
        last, last_change = lines(model_log) - before, time.monotonic()
        while last < accepted and time.monotonic() - last_change < 3:
            time.sleep(0.1)
            now = lines(model_log) - before
            if now != last:
                last, last_change = now, time.monotonic()
        elapsed = time.monotonic() - t0 - (time.monotonic() - last_change)
        processed = last
        cpu = (cpu_seconds(server.pid) - cpu_before) / max(processed, 1) * 1e6
        recorded = None
        if enabled:
            time.sleep(1.5)  # the writer's interval
            recorded = api("GET", "/api/v1/monitoring/overview")["total_messages"]
        return processed / max(elapsed, 1e-9), cpu, processed, recorded
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sb-moncost-")
    os.chmod(work, 0o755)
    nport = free_port()
    nginx = start_nginx(work, nport)
    results = {True: [], False: []}
    try:
        for r in range(ROUNDS):
            for enabled in ((True, False) if r % 2 == 0 else (False, True)):
                res = run_once(args.binary, work, nport, enabled)
                results[enabled].append(res)
                print("round %d monitoring %s: %.0f msg/s, %.0f us CPU/msg, %d messages%s" % (
                    r + 1, "on" if enabled else "off", res[0], res[1], res[2],
                    "" if res[3] is None else ", %d recorded" % res[3]), file=sys.stderr)
    finally:
        nginx.send_signal(signal.SIGQUIT)
        nginx.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    on = statistics.median(x[0] for x in results[True])
    off = statistics.median(x[0] for x in results[False])
    cpu_on = statistics.median(x[1] for x in results[True])
    cpu_off = statistics.median(x[1] for x in results[False])
    loss = (off - on) / off * 100
    # Each message leaves two message records (the user's and the reply); the writer runs at a
    # lower priority, so at saturation some wait past the run or are dropped from its queue.
    kept = statistics.median(min(1.0, x[3] / max(2 * x[2], 1)) for x in results[True]) * 100
    today = datetime.date.today().isoformat()
    section = f"""### Monitoring's cost on the message path (issue 18) — {today}

Command: `make bench` (bench/monitoring_cost_bench.py): the webhook bot of bot_bench.py (model and
callback are nginx `return 200` locations), {CLIENTS} client processes with one keep-alive
connection each for {SECONDS:.0f} s, server restarted per run with `MONITORING__ENABLED` true or
false, alternating, {ROUNDS} runs each; medians. Server `API__IO_THREADS=2
API__BLOCKING_THREADS=4`, sharing the 2 cores with the clients and nginx.

| figure | monitoring on | monitoring off | difference | target |
|---|---|---|---|---|
| messages/s end to end | {on:,.0f} | {off:,.0f} | {loss:+.1f} % lost | ≤ 5 % lost{"" if loss <= 5 else " MISSED"} |
| server CPU per message | {cpu_on:.0f} µs | {cpu_off:.0f} µs | {cpu_on - cpu_off:+.0f} µs | — |
| message records written 1.5 s after the load | {kept:.0f} % | — | — | — |

Runs (messages/s): on {", ".join("%.0f" % x[0] for x in results[True])}; off {", ".join("%.0f" % x[0] for x in results[False])}."""
    import subprocess
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "write_section.py"),
                    args.out, "monitoring-cost-bench"], input=section, text=True, check=True)
    print(section)


if __name__ == "__main__":
    main()
