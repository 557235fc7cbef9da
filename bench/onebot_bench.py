#!/usr/bin/env python3
"""OneBot v11 benchmarks of issue 14 (the `aiocqhttp` adapter of the real server, reverse
WebSocket):

1. Throughput: one long-lived connection, as a OneBot implementation holds it, pushes private
   message events (1,000 different senders, so 1,000 sessions, every message its own id) as fast
   as the server takes them, with at most WINDOW messages unanswered. Each goes through the
   pipeline to a zero-latency model (an nginx `return 200` location) and comes back as a
   send_private_msg action on the same socket, which the client answers with a message_id, as
   NapCat does. Messages per second = replies counted at the client / time, after a 1 s warm-up.
   The client is plain Python on a raw socket with every frame prepared before the run (one
   sendall per batch, frames parsed with a minimal RFC 6455 reader), so that it takes as little
   of the 2 cores as possible; it is not the fake of tests/fakes (a Python websockets client
   costs more CPU per frame than the server).
2. Server CPU per message: user + system time of the server process (/proc/<pid>/stat) over the
   run / replies.
3. Memory: RSS of the server with 1,000 idle OneBot connections to one bot, each with its own
   X-Self-ID (the adapter keeps one connection per account; 1,000 accounts is what 1,000
   connections to one listener mean), each having sent its lifecycle event.

Usage: onebot_bench.py --binary build/switchboard --out docs/performance.md
"""

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_bench import free_port, http, rss_kb  # noqa: E402
from bot_bench import cpu_seconds, lines, start_nginx, start_switchboard  # noqa: E402

DURATION = float(os.environ.get("BENCH_SECONDS", "10"))
WARMUP = 1.0
WINDOW = int(os.environ.get("BENCH_WINDOW", "2000"))
SENDERS = 1000
IDLE = int(os.environ.get("BENCH_IDLE_CONNECTIONS", "1000"))
SELF_ID = 10001
# BENCH_ONLY=throughput skips the memory run.
ONLY = os.environ.get("BENCH_ONLY", "")
PERF = os.environ.get("BENCH_PERF", "")
ECHO = re.compile(rb'"echo":"([^"]*)"')


def client_frame(payload, opcode=0x1):
    """A masked client frame. The mask key is zero, so the payload goes as it is (servers do not
    check the key's randomness; it saves the client the XOR)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    return head + b"\0\0\0\0" + payload


def dial(port, self_id, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\nX-Self-ID: %d\r\nX-Client-Role: Universal\r\n"
               "User-Agent: OneBot/11\r\n\r\n" % (port, self_id)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            raise RuntimeError("the server closed during the handshake")
        head += chunk
    status = head.split(b"\r\n", 1)[0]
    if b" 101 " not in status + b" ":
        raise RuntimeError("handshake refused: %r" % status)
    rest = head.split(b"\r\n\r\n", 1)[1]
    lifecycle = json.dumps({"time": int(time.time()), "self_id": self_id,
                            "post_type": "meta_event", "meta_event_type": "lifecycle",
                            "sub_type": "connect"}).encode()
    s.sendall(client_frame(lifecycle))
    return s, rest


def event(i):
    user = 20000 + i % SENDERS
    return json.dumps({"time": 1760000000, "self_id": SELF_ID, "post_type": "message",
                       "message_type": "private", "sub_type": "friend", "message_id": i + 1,
                       "user_id": user, "font": 0, "raw_message": "hello %d" % i,
                       "message": [{"type": "text", "data": {"text": "hello %d" % i}}],
                       "sender": {"user_id": user, "nickname": "u%d" % user}},
                      separators=(",", ":")).encode()


class Client:
    """One OneBot connection: pushes prepared events, answers every action with a message_id."""

    def __init__(self, port, total):
        self.sock, self.buf = dial(port, SELF_ID)
        self.sock.settimeout(None)
        self.frames = [client_frame(event(i)) for i in range(total)]
        self.send_lock = threading.Lock()
        self.cond = threading.Condition()
        self.sent = 0
        self.replies = 0
        self.stamps = []  # (time, replies) samples
        self.stop = False

    def run_sender(self):
        i = 0
        n = len(self.frames)
        while not self.stop and i < n:
            with self.cond:
                while self.sent - self.replies >= WINDOW and not self.stop:
                    self.cond.wait(0.5)
                room = WINDOW - (self.sent - self.replies)
            batch = self.frames[i:i + min(room, 256)]
            if not batch:
                continue
            try:
                with self.send_lock:
                    self.sock.sendall(b"".join(batch))
            except OSError:
                break
            i += len(batch)
            with self.cond:
                self.sent += len(batch)

    def run_receiver(self):
        buf = self.buf
        mid = 1000000
        while not self.stop:
            try:
                chunk = self.sock.recv(1 << 20)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            answers = []
            pos = 0
            while True:
                if len(buf) - pos < 2:
                    break
                b0, b1 = buf[pos], buf[pos + 1]
                n = b1 & 0x7F
                off = pos + 2
                if n == 126:
                    if len(buf) - off < 2:
                        break
                    n = struct.unpack_from("!H", buf, off)[0]
                    off += 2
                elif n == 127:
                    if len(buf) - off < 8:
                        break
                    n = struct.unpack_from("!Q", buf, off)[0]
                    off += 8
                if len(buf) - off < n:
                    break
                payload = buf[off:off + n]
                pos = off + n
                op = b0 & 0x0F
                if op == 0x1:
                    m = ECHO.search(payload)
                    if m:
                        mid += 1
                        answers.append(client_frame(
                            b'{"status":"ok","retcode":0,"data":{"message_id":%d},'
                            b'"message":"","wording":"","echo":"%s"}' % (mid, m.group(1))))
                elif op == 0x9:
                    answers.append(client_frame(payload, 0xA))
                elif op == 0x8:
                    self.stop = True
            buf = buf[pos:]
            if answers:
                try:
                    with self.send_lock:
                        self.sock.sendall(b"".join(answers))
                except OSError:
                    break
                with self.cond:
                    self.replies += len(answers)
                    self.cond.notify()
                self.stamps.append((time.monotonic(), self.replies))


def throughput(port, server_pid, model_log):
    total = int(os.environ.get("BENCH_MESSAGES", "250000"))
    client = Client(port, total)
    time.sleep(0.5)  # the lifecycle event and the account's registration
    sender = threading.Thread(target=client.run_sender, daemon=True)
    receiver = threading.Thread(target=client.run_receiver, daemon=True)
    models_before = lines(model_log)
    t0 = time.monotonic()
    receiver.start()
    sender.start()
    time.sleep(WARMUP)
    cpu0, r0, m0, t1 = (cpu_seconds(server_pid), client.replies, lines(model_log),
                        time.monotonic())
    own0 = own_cpu_seconds()
    if PERF:  # where the server's time goes: BENCH_PERF=/tmp/onebot.perf.data
        subprocess.run(["perf", "record", "-F", "499", "-g", "-p", str(server_pid), "-o", PERF,
                        "--", "sleep", str(DURATION)], capture_output=True, timeout=DURATION + 60)
    else:
        time.sleep(DURATION)
    cpu1, r1, m1, t2 = (cpu_seconds(server_pid), client.replies, lines(model_log),
                        time.monotonic())
    own1 = own_cpu_seconds()
    client.stop = True
    with client.cond:
        client.cond.notify_all()
    client.sock.close()
    replies = r1 - r0
    if client.sent >= total and replies < DURATION * 100:
        print("warning: the client ran out of prepared messages", file=sys.stderr)
    return {"rate": replies / (t2 - t1), "replies": replies, "model_calls": m1 - m0,
            "cpu_us": (cpu1 - cpu0) / max(replies, 1) * 1e6, "sent": client.sent,
            "client_cpu_us": (own1 - own0) / max(replies, 1) * 1e6,
            "all_replies": client.replies, "all_models": lines(model_log) - models_before,
            "elapsed": t2 - t0}


def own_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def idle_connections(port, count):
    socks = []
    for i in range(count):
        s, _ = dial(port, 500000 + i)
        socks.append(s)
    return socks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    # 1,000 idle connections need more descriptors than the usual soft limit of 1,024, here and
    # in the server (which inherits the limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    work = tempfile.mkdtemp(prefix="sb-onebotbench-")
    os.chmod(work, 0o755)
    nport = free_port()
    nginx = start_nginx(work, nport)
    port = free_port()
    obport = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_switchboard(args.binary, os.path.join(work, "data"), port)
    idle_rss = base_rss = 0
    idle_open = 0
    try:
        http("POST", base + "/api/v1/user/init", {"user": "bench@example.com",
                                                 "password": "bench-password"})
        token = json.loads(http("POST", base + "/api/v1/user/auth",
                                {"user": "bench@example.com",
                                 "password": "bench-password"}))["data"]["token"]
        auth = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

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
            "output": {"misc": {"quote-origin": False}},
            "safety": {"rate-limit": {"window-length": 60, "limitation": 1000000},
                       "content-filter": {"check-sensitive-words": False}}}})["uuid"]
        bot = api("POST", "/api/v1/platform/bots",
                  {"name": "onebot", "adapter": "aiocqhttp", "enable": True,
                   "use_pipeline_uuid": pipeline,
                   "config": {"host": "127.0.0.1", "port": obport, "access-token": ""}})["uuid"]
        deadline = time.monotonic() + 10
        while api("GET", "/api/v1/platform/bots/" + bot)["bot"]["runtime"]["status"] != "running":
            if time.monotonic() > deadline:
                raise RuntimeError("the OneBot bot did not start listening")
            time.sleep(0.1)

        if ONLY != "throughput":
            time.sleep(1)
            base_rss = rss_kb(server.pid)
            socks = idle_connections(obport, IDLE)
            time.sleep(3)
            idle_rss = rss_kb(server.pid)
            idle_open = sum(1 for s in socks if s.fileno() >= 0)
            for s in socks:
                s.close()
            time.sleep(1)

        result = throughput(obport, server.pid, os.path.join(work, "model.log"))
        after_rss = rss_kb(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        nginx.send_signal(signal.SIGQUIT)
        nginx.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)

    today = datetime.date.today().isoformat()
    rows = [
        f"### Bots through the OneBot v11 adapter (issue 14) — {today}", "",
        "Command: `make bench` (bench/onebot_bench.py). Server with `API__IO_THREADS=2 "
        "API__BLOCKING_THREADS=4`, unpinned, sharing the 2 cores with the Python client and "
        "nginx (the model is an nginx `return 200` location). One reverse-WebSocket connection "
        f"pushes private messages from {SENDERS} senders with at most {WINDOW} unanswered and "
        "answers every send_private_msg; replies counted at the client.", "",
        "| figure | value | target |", "|---|---|---|",
        f"| messages/s end to end, one connection ({DURATION:.0f} s after {WARMUP:.0f} s "
        f"warm-up; {result['replies']} replies, {result['model_calls']} model calls) "
        f"| {result['rate']:,.0f} | ≥ 15,000{'' if result['rate'] >= 15000 else ' (MISSED)'} |",
        f"| server CPU per message (user + system, all threads) | {result['cpu_us']:.0f} µs "
        "| — |",
        f"| load generator CPU per message (the Python client, same cores) "
        f"| {result['client_cpu_us']:.0f} µs | — |",
        f"| RSS after the throughput run | {after_rss / 1024:.1f} MB | — |",
    ]
    if ONLY != "throughput":
        rows.append(f"| RSS with {idle_open} idle OneBot connections, one per X-Self-ID "
                    f"(+{(idle_rss - base_rss) / 1024:.1f} MB over the idle server, "
                    f"{(idle_rss - base_rss) / max(idle_open, 1):.1f} KB each) "
                    f"| {idle_rss / 1024:.1f} MB | — |")
    text = "\n".join(rows)
    print(text)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "write_section.py"),
                    args.out, "onebot-bench"], input=text, text=True, check=True)


if __name__ == "__main__":
    main()
