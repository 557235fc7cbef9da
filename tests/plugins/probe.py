#!/usr/bin/env python3
"""A test plugin that misbehaves on request (tests/unit/plugin_process_test.cpp): each action the
core sends names what to do: echo, fail, report its environment and limits, hang, crash, write to
stderr, write a huge line or garbage, ask the core something, or refuse to stop."""

import json
import os
import resource
import signal
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    next_seq = 100
    stubborn = False
    for line in sys.stdin:
        message = json.loads(line)
        if "action" not in message:
            continue  # an answer to one of our calls; "ask" reads its own
        seq, action, data = message["seq_id"], message["action"], message.get("data") or {}
        if action == "shutdown":
            if stubborn:
                continue
            return
        if action == "stubborn":  # ignore shutdown, stdin's end and SIGTERM: only SIGKILL works
            stubborn = True
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            send({"seq_id": seq, "code": 0, "data": {}})
        if action == "handshake":
            send({"seq_id": seq, "code": 0, "data": {"protocol_version": 1}})
        elif action == "echo":
            send({"seq_id": seq, "code": 0, "message": "ok", "data": data})
        elif action == "fail":
            send({"seq_id": seq, "code": 7, "message": "no such thing", "data": None})
        elif action == "env":
            send({"seq_id": seq, "code": 0, "data": {
                "env": dict(os.environ), "cwd": os.getcwd(),
                "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                "as": resource.getrlimit(resource.RLIMIT_AS)[0],
                "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd"))}})
        elif action == "hang":
            pass
        elif action == "crash":
            os._exit(3)
        elif action == "stderr":
            sys.stderr.write("something went wrong\n")
            sys.stderr.flush()
            send({"seq_id": seq, "code": 0, "data": {}})
        elif action == "huge":
            sys.stdout.write("x" * (2 << 20) + "\n")
            sys.stdout.flush()
        elif action == "ask":
            next_seq += 1
            send({"seq_id": next_seq, "action": "storage_get", "data": {"key": data.get("key")}})
            answer = json.loads(sys.stdin.readline())
            send({"seq_id": seq, "code": 0, "data": {"core_said": answer}})
        elif action == "garbage":
            sys.stdout.write("not json\n{\"no_seq\": 1}\n")
            send({"seq_id": seq, "code": 0, "data": {"after": "garbage"}})
    return "stubborn" if stubborn else None


if __name__ == "__main__":
    if main() == "stubborn":
        while True:  # stdin ended: a stubborn plugin keeps running until it is killed
            time.sleep(1)
