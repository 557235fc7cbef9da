#!/usr/bin/env python3
"""HTTP benchmarks of issue 2: wrk on loopback against the real server and against nginx serving
the same response bytes as static files (the machine's ceiling). Writes docs/performance.md.

Server pinned to CPU 0, wrk to CPU 1 (2-core machine), 64 connections, 10 s, 3 runs, median.
`--backend postgresql` (or `--database-url postgresql://...`) runs the server on PostgreSQL (a
throw-away cluster of tests/tools/pg_cluster.py unless a URL is given) and writes its own section
(`http-bench-postgresql`) next to the SQLite one.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request

import pg_backend

DURATION = os.environ.get("BENCH_DURATION", "10s")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
CONNECTIONS = 64


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read()


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def parse_wrk(text):
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return rate, float(p99.group(1)) * scale, int(non2xx.group(1)) if non2xx else 0


def wrk(url, headers=(), script=None, env=None):
    results = []
    # A short unmeasured run first: connection setup, page faults and caches settle.
    warm = ["taskset", "-c", "1", "wrk", "-t1", f"-c{CONNECTIONS}", "-d2s"]
    for h in headers:
        warm += ["-H", h]
    if script:
        warm += ["-s", script]
    subprocess.run(warm + [url], capture_output=True, env=env, timeout=60)
    for _ in range(RUNS):
        cmd = ["taskset", "-c", "1", "wrk", "-t1", f"-c{CONNECTIONS}", f"-d{DURATION}", "--latency"]
        for h in headers:
            cmd += ["-H", h]
        if script:
            cmd += ["-s", script]
        cmd.append(url)
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120).stdout
        results.append(parse_wrk(out))
    rates = [r[0] for r in results]
    median_rate = statistics.median(rates)
    p99 = statistics.median(r[1] for r in results)
    errors = sum(r[2] for r in results)
    return median_rate, p99, errors


def start_switchboard(binary, data_dir, port, extra_env=None):
    env = dict(os.environ, API__IO_THREADS="1", API__BLOCKING_THREADS="2",
               SYSTEM__LOG_LEVEL="warn")
    env.update(extra_env or {})
    proc = subprocess.Popen(["taskset", "-c", "0", binary, "serve", "--data-dir", data_dir,
                             "--port", str(port), "--host", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    for _ in range(200):
        try:
            http("GET", f"http://127.0.0.1:{port}/healthz")
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("switchboard did not start")


def start_nginx(root, port):
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 1;
worker_cpu_affinity 01;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  default_type application/json;
  keepalive_requests 1000000;
  server {{
    listen 127.0.0.1:{port};
    root {root}/www;
  }}
}}
""")
    proc = subprocess.Popen(["nginx", "-c", conf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            http("GET", f"http://127.0.0.1:{port}/info.json")
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    pg_backend.add_arguments(ap)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sb-bench-")
    try:
        with pg_backend.Backend(args, work) as backend:
            run(args, work, backend)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work, backend):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_switchboard(args.binary, os.path.join(work, "data"), port,
                               backend.server_env())
    try:
        time.sleep(1.0)
        idle_rss = rss_kb(server.pid)
        http("POST", base + "/api/v1/user/init", {"user": "bench@example.com",
                                                 "password": "bench-password"})
        token = json.loads(http("POST", base + "/api/v1/user/auth",
                                {"user": "bench@example.com",
                                 "password": "bench-password"}))["data"]["token"]
        auth = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        key = json.loads(http("POST", base + "/api/v1/apikeys", {"name": "bench"},
                              auth))["data"]["key"]["key"]
        for i in range(20):
            http("POST", base + "/api/v1/provider/providers",
                 {"name": f"provider-{i}", "requester": "openai-chat-completions",
                  "base_url": "https://api.openai.com/v1", "api_keys": [f"sk-bench-{i:04d}"]},
                 auth)
        info_body = http("GET", base + "/api/v1/system/info")
        list_body = http("GET", base + "/api/v1/provider/providers", headers={"X-API-Key": key})
        create_body = http("POST", base + "/api/v1/provider/providers",
                           {"name": "x", "requester": "openai-chat-completions",
                            "base_url": "https://api.openai.com/v1"}, {"X-API-Key": key})
        uuid = json.loads(create_body)["data"]["uuid"]
        delete_body = http("DELETE", base + f"/api/v1/provider/providers/{uuid}",
                           headers={"X-API-Key": key})

        results = {}
        results["info"] = wrk(base + "/api/v1/system/info")
        results["list"] = wrk(base + "/api/v1/provider/providers", headers=[f"X-API-Key: {key}"])
        env = dict(os.environ, SB_API_KEY=key)
        results["cycle"] = wrk(base + "/", script=os.path.join(os.path.dirname(__file__),
                                                               "create_delete.lua"), env=env)
        load_rss = rss_kb(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    www = os.path.join(work, "www")
    os.makedirs(www)
    os.chmod(work, 0o755)  # nginx workers run as www-data
    for name, body in (("info.json", info_body), ("list.json", list_body),
                       ("create.json", create_body), ("delete.json", delete_body)):
        with open(os.path.join(www, name), "wb") as f:
            f.write(body)
    nport = free_port()
    nginx = start_nginx(work, nport)
    try:
        nbase = f"http://127.0.0.1:{nport}"
        ceiling = {"info": wrk(nbase + "/info.json"), "list": wrk(nbase + "/list.json"),
                   # the cycle alternates two bodies; nginx serves the larger, create's
                   "cycle": wrk(nbase + "/create.json")}
    finally:
        nginx.send_signal(signal.SIGQUIT)
        nginx.wait(timeout=30)

    rows = [("info", "`GET /api/v1/system/info` (public)", len(info_body), 0.50),
            ("list", "`GET /api/v1/provider/providers`, API key, 20 providers", len(list_body),
             0.35),
            ("cycle", "create + delete provider cycle (API key)", len(create_body), None)]
    today = datetime.date.today().isoformat()
    if backend.postgres:
        title = f"### HTTP API on PostgreSQL (issue 19) — {today}"
        command = ("Command: `python3 bench/http_bench.py --binary build/switchboard --out "
                   "docs/performance.md --backend postgresql` (storage: "
                   f"{backend.describe()}). Server pinned to CPU 0 ")
    else:
        title = f"### HTTP API (issue 2) — {today}"
        command = "Command: `make bench` (bench/http_bench.py). Server pinned to CPU 0 "
    lines = [title, "", command +
             "(`API__IO_THREADS=1 API__BLOCKING_THREADS=2`), wrk pinned to CPU 1, "
             f"`wrk -t1 -c{CONNECTIONS} -d{DURATION} --latency`, median of {RUNS} runs after a 2 s "
             "warm-up. "
             "nginx 1.22 (1 worker, CPU 0) serves the same response bytes as static files.", "",
             "| request | body bytes | switchboard req/s | p99 ms | nginx req/s | nginx p99 ms "
             "| ratio | target | errors |",
             "|---|---|---|---|---|---|---|---|---|"]
    for key, label, size, target in rows:
        rate, p99, errors = results[key]
        nrate, np99, _ = ceiling[key]
        ratio = rate / nrate if nrate else 0
        tgt = f"≥ {target:.0%}, p99 ≤ 5 ms" if target else "p99 ≤ 5 ms"
        lines.append(f"| {label} | {size} | {rate:,.0f} | {p99:.2f} | {nrate:,.0f} | {np99:.2f} "
                     f"| {ratio:.0%} | {tgt} | {errors} |")
    lines += ["", f"RSS: idle {idle_rss / 1024:.1f} MB (target ≤ 15 MB), "
              f"after load {load_rss / 1024:.1f} MB.", ""]
    section = "\n".join(lines)
    print(section)

    out = args.out
    name = "http-bench-postgresql" if backend.postgres else "http-bench"
    existing = open(out).read() if os.path.exists(out) else "# Performance\n\n"
    marker = f"<!-- {name} -->"
    if marker in existing:
        head, _, rest = existing.partition(marker)
        _, _, tail = rest.partition(f"<!-- /{name} -->")
        existing = head + marker + "\n" + section + f"\n<!-- /{name} -->" + tail
    else:
        existing += f"\n{marker}\n{section}\n<!-- /{name} -->\n"
    with open(out, "w") as f:
        f.write(existing)


if __name__ == "__main__":
    main()
