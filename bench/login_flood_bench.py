#!/usr/bin/env python3
"""Login flood (issue 13 §3): 160 concurrent connections send wrong passwords for made-up users to
POST /api/v1/user/auth as fast as they are answered, while one authenticated client reads
GET /api/v1/pipelines every 20 ms and the server's RSS is sampled every 50 ms.

The attacker has addresses to spare (a botnet, or one IPv6 /48): each connection sends
REQUESTS_PER_ADDRESS requests, under the per-address limit, then reconnects from a fresh loopback
address (127.0.0.0/8 is all local; the server keys its throttles on the TCP peer and trusts no
X-Forwarded-For), and every request names another user, so neither the per-address nor the
per-account throttle ever fires: only the hashing capacity and the global login rate protect.

    python3 bench/login_flood_bench.py --binary build/switchboard [--out docs/performance.md]

Prints a Markdown section; with --out, writes it between <!-- login-flood --> markers.
"""
import argparse
import asyncio
import datetime
import json
import multiprocessing
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import http.client

CONNECTIONS = int(os.environ.get("BENCH_FLOOD_CONNECTIONS", "160"))
DURATION = float(os.environ.get("BENCH_FLOOD_SECONDS", "20"))
WARMUP = 3.0
PROBE_INTERVAL = 0.02
USER = "bench@example.com"
PASSWORD = "bench-password"
REQUESTS_PER_ADDRESS = 4


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def call(port, method, path, body=None, headers=None, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def source_address(n):
    """The n-th distinct loopback address: 127.10.1.1, 127.10.1.2, ..."""
    return "127.%d.%d.%d" % (10 + n // (254 * 254) % 240, 1 + n // 254 % 254, 1 + n % 254)


def login_request(user, password):
    body = json.dumps({"user": user, "password": password}).encode()
    return (b"POST /api/v1/user/auth HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json"
            b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


async def flood_connection(i, port, stop_at, counts):
    n = i
    while time.monotonic() < stop_at:
        n += CONNECTIONS
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, local_addr=(source_address(n), 0)), 5)
        except (OSError, asyncio.TimeoutError):
            counts["connect_error"] = counts.get("connect_error", 0) + 1
            await asyncio.sleep(0.05)
            continue
        try:
            for k in range(REQUESTS_PER_ADDRESS):
                if time.monotonic() >= stop_at:
                    break
                writer.write(login_request("user-%d-%d@example.com" % (n, k), "wrong-password"))
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
                status = int(head.split(b" ", 2)[1])
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await asyncio.wait_for(reader.readexactly(length), 30)
                counts[status] = counts.get(status, 0) + 1
                if b"connection: close" in head.lower():
                    break
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
            counts["dropped"] = counts.get("dropped", 0) + 1
        finally:
            writer.close()


def flood_process(port, seconds, queue):
    async def run():
        counts = {}
        stop_at = time.monotonic() + seconds
        await asyncio.gather(*(flood_connection(i, port, stop_at, counts)
                               for i in range(CONNECTIONS)))
        return counts
    queue.put(asyncio.run(run()))


def probe(port, token, stop, latencies, errors):
    headers = {"Authorization": "Bearer " + token}
    conn = None
    while not stop.is_set():
        started = time.monotonic()
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/api/v1/pipelines", headers=headers)
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                errors.append(resp.status)
        except OSError as e:
            errors.append(str(e))
            conn = None
        latencies.append((time.monotonic() - started) * 1000)
        time.sleep(max(0.0, PROBE_INTERVAL - (time.monotonic() - started)))


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sb-flood-")
    port = free_port()
    env = dict(os.environ, SYSTEM__LOG_LEVEL="warn")
    server = subprocess.Popen([args.binary, "serve", "--data-dir", os.path.join(work, "data"),
                               "--port", str(port), "--host", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        for _ in range(200):
            try:
                if call(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        call(port, "POST", "/api/v1/user/init", {"user": USER, "password": PASSWORD})
        status, body = call(port, "POST", "/api/v1/user/auth", {"user": USER, "password": PASSWORD})
        token = json.loads(body)["data"]["token"]
        idle_rss = rss_kb(server.pid)

        # Quiet baseline: the same probe without the flood.
        latencies, errors, stop = [], [], threading.Event()
        t = threading.Thread(target=probe, args=(port, token, stop, latencies, errors))
        t.start()
        time.sleep(3)
        stop.set()
        t.join()
        quiet_p99 = percentile(latencies, 0.99)

        queue = multiprocessing.Queue()
        flood = multiprocessing.Process(target=flood_process,
                                        args=(port, WARMUP + DURATION, queue))
        flood.start()
        time.sleep(WARMUP)
        latencies, errors, stop = [], [], threading.Event()
        t = threading.Thread(target=probe, args=(port, token, stop, latencies, errors))
        t.start()
        rss = []
        end = time.monotonic() + DURATION
        while time.monotonic() < end:
            rss.append(rss_kb(server.pid))
            time.sleep(0.05)
        stop.set()
        t.join()
        counts = queue.get(timeout=120)
        flood.join(30)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)

    total = sum(v for k, v in counts.items() if isinstance(k, int))
    statuses = ", ".join("%s: %d" % (k, v) for k, v in sorted(counts.items(), key=str))
    p50, p99, worst = (statistics.median(latencies), percentile(latencies, 0.99), max(latencies))
    today = datetime.date.today().isoformat()
    label = (" " + args.label) if args.label else ""
    lines = [
        f"### Login flood (issue 13 §3){label} — {today}",
        "",
        f"Command: `python3 bench/login_flood_bench.py --binary {args.binary}` (part of "
        "`make bench`). Server with its default threads (`api.io_threads` 2, "
        "`api.blocking_threads` 4), unpinned on the 2 cores it shares with the flood and the "
        f"probe. {CONNECTIONS} concurrent connections send wrong passwords for made-up users back "
        f"to back, each moving to a fresh 127.x.y.z source address after {REQUESTS_PER_ADDRESS} "
        "requests (so no per-address or per-account throttle fires); one client reads "
        f"`GET /api/v1/pipelines` with a user token every {PROBE_INTERVAL * 1000:.0f} ms; "
        f"{WARMUP:.0f} s of flood before measuring for {DURATION:.0f} s.",
        "",
        "| figure | value | target |",
        "|---|---|---|",
        f"| probe p99 without the flood | {quiet_p99:.1f} ms | — |",
        f"| probe p50 / p99 / max under the flood ({len(latencies)} requests, "
        f"{len(errors)} failed) | {p50:.1f} / {p99:.1f} / {worst:.0f} ms | p99 < 50 ms |",
        f"| server RSS idle / peak under the flood | {idle_rss / 1024:.1f} / "
        f"{max(rss) / 1024:.1f} MB | < 100 MB |",
        f"| flood answers ({total / (WARMUP + DURATION):,.0f}/s) | {statuses} | — |",
    ]
    section = "\n".join(lines)
    print(section)
    if args.out:
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "write_section.py"),
                        args.out, "login-flood"], input=section + "\n", text=True, check=True)


if __name__ == "__main__":
    main()
