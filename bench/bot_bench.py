#!/usr/bin/env python3
"""Bot benchmarks of issues 4 and 14, through the generic `webhook` adapter of the real server:

1. Throughput: wrk POSTs signed messages (1,000 different senders, so 1,000 sessions) to
   /bots/{uuid}; each goes through the pipeline to a zero-latency model and the reply is POSTed
   to the bot's callback. Both the model (OpenAI chat completions) and the callback are nginx
   `return 200` locations, so neither limits the figure. Messages per second = model calls
   nginx logged / time from the first request until the last one arrived.
2. Added latency: one message at a time, from the POST to the reply reaching a callback
   receiver of this script (zero-latency model), p50/p99 over 300 messages.
3. Memory: RSS of the server with 1,000 enabled idle webhook bots.

Usage: bot_bench.py --binary build/switchboard --out docs/performance.md
           [--backend postgresql | --database-url postgresql://...]
On PostgreSQL (issue 19; a throw-away cluster of tests/tools/pg_cluster.py unless a URL is given)
the figures go to their own section, `bot-bench-postgresql`.
"""

import argparse
import datetime
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_bench import free_port, http, rss_kb  # noqa: E402
import pg_backend  # noqa: E402

DURATION = os.environ.get("BENCH_DURATION", "10s")
CONNECTIONS = 64
SENDERS = 1000
UNIQUE_BODIES = int(os.environ.get("BENCH_UNIQUE_BODIES", "150000"))
# BENCH_ONLY=throughput skips the memory and latency runs (quick iterations while tuning).
ONLY = os.environ.get("BENCH_ONLY", "")
SECRET = "bench-secret"
REPLY = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion", "created": 0,
                    "model": "bench", "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant",
                                                               "content": "ok"}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def sign(timestamp, body):
    mac = hmac.new(SECRET.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def message(sender, text="hello", mid=None):
    # Every message its own id: the adapter answers a repeated id once only.
    return json.dumps({"message_id": mid or "m-%s-%s" % (sender, os.urandom(6).hex()),
                       "sender": {"id": sender},
                       "chat": {"type": "person", "id": sender},
                       "message_chain": [{"type": "Plain", "text": text}]},
                      separators=(",", ":")).encode()


def start_nginx(root, port):
    conf = os.path.join(root, "nginx.conf")
    reply = REPLY.replace("'", "\\'")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 1;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  log_format bare '$msec';
  server {{
    listen 127.0.0.1:{port};
    location = /v1/chat/completions {{
      access_log {root}/model.log bare;
      default_type application/json;
      return 200 '{reply}';
    }}
    location = /callback {{ return 200 ''; }}
    location = /ping {{ return 200 'pong'; }}
  }}
}}
""")
    proc = subprocess.Popen(["nginx", "-c", conf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            http("GET", f"http://127.0.0.1:{port}/ping")
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def admin_headers(base):
    """Creates the admin of the fresh server at `base`, logs in, and returns the headers that
    carry its token."""
    http("POST", base + "/api/v1/user/init", {"user": "bench@example.com",
                                             "password": "bench-password"})
    token = json.loads(http("POST", base + "/api/v1/user/auth",
                            {"user": "bench@example.com",
                             "password": "bench-password"}))["data"]["token"]
    return {"Authorization": "Bearer " + token, "Content-Type": "application/json"}


def start_switchboard(binary, data_dir, port, extra_env=None):
    env = dict(os.environ, API__IO_THREADS="2", API__BLOCKING_THREADS="4",
               SYSTEM__LOG_LEVEL="warn", RUNTIME__MAX_QUEUED_MESSAGES="100000")
    env.update(extra_env or {})
    env.update(json.loads(os.environ.get("BENCH_SERVER_ENV", "{}")))  # experiments
    proc = subprocess.Popen([binary, "serve", "--data-dir", data_dir, "--port", str(port),
                             "--host", "127.0.0.1"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    for _ in range(200):
        try:
            http("GET", f"http://127.0.0.1:{port}/healthz")
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("switchboard did not start")


def cpu_seconds(pid):
    """User + system CPU time the process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def wrk_script(path, bot, count):
    """A Lua script posting `count` pre-signed bodies, each its own message id, in turn over
    SENDERS senders (wrk's Lua has no HMAC). Past `count` the bodies repeat; the adapter drops
    repeats, and the figure counts only what reached the model. The bodies live in a data file
    next to the script (a Lua table literal that size exceeds LuaJIT's constant limit)."""
    now = int(time.time())
    data = path + ".bodies"
    with open(data, "w") as f:
        for i in range(count):
            body = message("user-%d" % (i % SENDERS), mid="b-%d" % i)
            f.write("%s\t%s\n" % (sign(now, body), body.decode()))
    with open(path, "w") as f:
        f.write(f"""
local bodies = {{}}
for line in io.lines("{data}") do
  local sig, body = line:match("^(%S+)\t(.*)$")
  bodies[#bodies + 1] = {{body, sig}}
end
local i = 0
request = function()
  i = i % #bodies + 1
  local e = bodies[i]
  return wrk.format("POST", "/bots/{bot}", {{
    ["Content-Type"] = "application/json",
    ["X-Switchboard-Timestamp"] = "{now}",
    ["X-Switchboard-Signature"] = e[2]}}, e[1])
end
""")


class Receiver:
    """Callback endpoint timing the replies of the latency run."""

    def __init__(self):
        self.event = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                outer.event.set()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/callback" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def post_signed(base, bot, body):
    ts = int(time.time())
    req = urllib.request.Request(base + "/bots/" + bot, data=body, method="POST", headers={
        "Content-Type": "application/json", "X-Switchboard-Timestamp": str(ts),
        "X-Switchboard-Signature": sign(ts, body)})
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    pg_backend.add_arguments(ap)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sb-botbench-")
    os.chmod(work, 0o755)
    try:
        with pg_backend.Backend(args, work) as backend:
            run(args, work, backend)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work, backend):
    nport = free_port()
    nginx = start_nginx(work, nport)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_switchboard(args.binary, os.path.join(work, "data"), port,
                               backend.server_env())
    try:
        auth = admin_headers(base)

        def api(method, path, body=None):
            return json.loads(http(method, base + path, body, auth))["data"]

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

        def bot(callback, name="bench"):
            return api("POST", "/api/v1/platform/bots",
                       {"name": name, "adapter": "webhook", "enable": True,
                        "use_pipeline_uuid": pipeline,
                        "config": {"secret": SECRET, "callback_url": callback}})["uuid"]

        base_rss = idle_rss = tg_rss = polling = 0
        p50 = p99 = 0.0
        if ONLY != "throughput":
            # 3. 1,000 idle webhook bots, on a fresh server (they stay for the other runs).
            time.sleep(1)
            base_rss = rss_kb(server.pid)
            for i in range(1000):
                bot(f"http://127.0.0.1:{nport}/callback", "idle-%d" % i)
            time.sleep(2)
            idle_rss = rss_kb(server.pid)

            # 3b. 1,000 idle Telegram bots, each holding a long poll open to the fake Bot API.
            tg = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "..",
                                                                "tests", "fakes", "fake_telegram.py"),
                                   "--port", "0"], stdout=subprocess.PIPE, text=True)
            tg_port = int(tg.stdout.readline().strip().split("=", 1)[1])
            tg_bots = []
            try:
                for i in range(1000):
                    tg_bots.append(api("POST", "/api/v1/platform/bots", {
                        "name": "tg-%d" % i, "adapter": "telegram", "enable": True,
                        "use_pipeline_uuid": pipeline,
                        "config": {"token": "%d:bench" % (900000 + i),
                                   "api_base_url": f"http://127.0.0.1:{tg_port}"}})["uuid"])
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    bots = api("GET", "/api/v1/platform/bots")["bots"]
                    polling = sum(1 for b in bots if b["adapter"] == "telegram" and
                                  b["runtime"]["status"] == "running")
                    if polling == len(tg_bots):
                        break
                    time.sleep(1)
                time.sleep(3)
                tg_rss = rss_kb(server.pid)
                for uuid in tg_bots:  # stop them: the rest of the run measures the webhook path
                    http("DELETE", base + "/api/v1/platform/bots/" + uuid, headers=auth)
            finally:
                tg.terminate()
                tg.wait(timeout=30)

            # 2. Latency, on a quiet server.
            receiver = Receiver()
            slow = bot(receiver.url, "latency")
            time.sleep(0.5)
            samples = []
            for i in range(330):
                receiver.event.clear()
                body = message("lat-%d" % (i % 30), "ping %d" % i)
                t0 = time.perf_counter()
                post_signed(base, slow, body)
                if not receiver.event.wait(10):
                    raise RuntimeError("no reply within 10 s")
                if i >= 30:  # warm-up
                    samples.append((time.perf_counter() - t0) * 1000)
            samples.sort()
            p50 = samples[len(samples) // 2]
            p99 = samples[int(len(samples) * 0.99) - 1]

        # 1. Throughput.
        fast = bot(f"http://127.0.0.1:{nport}/callback", "throughput")
        script = os.path.join(work, "post.lua")
        wrk_script(script, fast, UNIQUE_BODIES)
        model_log = os.path.join(work, "model.log")
        before = lines(model_log)
        cpu_before = cpu_seconds(server.pid)
        out = subprocess.run(["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{DURATION}", "-s", script,
                              base + "/"], capture_output=True, text=True, timeout=300).stdout
        accepted = int(re.search(r"(\d+) requests in", out).group(1))
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        accepted -= int(non2xx.group(1)) if non2xx else 0
        # Wait until every accepted message reached the model (or nothing moves for 5 s).
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
        rate = processed / max(elapsed, 1e-9)
        cpu_per_message_us = (cpu_seconds(server.pid) - cpu_before) / max(processed, 1) * 1e6
        after_load_rss = rss_kb(server.pid)

    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        nginx.send_signal(signal.SIGQUIT)
        nginx.wait(timeout=30)

    today = datetime.date.today().isoformat()
    if backend.postgres:
        title = f"### Bots through the webhook adapter on PostgreSQL (issue 19) — {today}"
        command = ("Command: `python3 bench/bot_bench.py --binary build/switchboard --out "
                   f"docs/performance.md --backend postgresql` (storage: {backend.describe()}). ")
    else:
        title = f"### Bots through the webhook adapter (issues 4 and 14) — {today}"
        command = "Command: `make bench` (bench/bot_bench.py). "
    text = "\n".join([
        title, "",
        command + "Server with `API__IO_THREADS=2 "
        "API__BLOCKING_THREADS=4`, unpinned, sharing the 2 cores with wrk and nginx (model and "
        "callback are nginx `return 200` locations).", "",
        "| figure | value | target |", "|---|---|---|",
        f"| messages/s end to end (wrk -c{CONNECTIONS} -d{DURATION}, {SENDERS} sessions; "
        f"{accepted} accepted, {processed} reached the model) | {rate:,.0f} | ≥ 12,000 "
        f"(issue 14){'' if rate >= 12000 else ' MISSED'} |",
        f"| server CPU per message (user + system, all threads) | {cpu_per_message_us:.0f} µs "
        f"| ≤ 80 µs (issue 14){'' if cpu_per_message_us <= 80 else ' MISSED'} |",
        f"| added latency p50 / p99 (one at a time, 300 messages) | {p50:.2f} ms / {p99:.2f} ms "
        "| — |",
        f"| RSS after the throughput run | {after_load_rss / 1024:.1f} MB | — |",
        f"| RSS with 1,000 enabled idle webhook bots (+{(idle_rss - base_rss) / 1024:.1f} MB "
        f"for them), measured first | {idle_rss / 1024:.1f} MB | ≤ 100 MB |",
        f"| RSS with those plus 1,000 enabled Telegram bots long-polling a fake Bot API "
        f"({polling} running) | {tg_rss / 1024:.1f} MB | ≤ 100 MB |",
    ])
    print(text)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "write_section.py"),
                    args.out, "bot-bench-postgresql" if backend.postgres else "bot-bench"],
                   input=text, text=True, check=True)


if __name__ == "__main__":
    main()
