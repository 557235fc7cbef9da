"""tests/fakes/fake_kook.py as a child process (one per test: its gateway state is global), with
helpers for its control API.

    kook = FakeKook()
    kook.say("hello", channel_type="PERSON")   # an event on the gateway -> {sn, msg_id, ...}
    kook.sent(); kook.gateway(); kook.stop()
"""

import json
import os
import subprocess
import sys
import urllib.request

from fake_clients import FAKES

TOKEN = "1/MTAwMDA=/fakeKookBotToken+abc=="
BOT_ID = "3861577071"


class FakeKook:
    def __init__(self, token=TOKEN):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_kook.py"),
                                      "--port", "0", "--token", token],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_KOOK_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_KOOK_PORT"])
        self.base = "http://127.0.0.1:%d" % self.port

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def say(self, content, channel_type="GROUP", target_id="9100000001", author_id="2000000001",
            **extra):
        body = dict({"channel_type": channel_type, "target_id": target_id,
                     "author_id": author_id, "content": content,
                     "author": {"username": "ann", "nickname": "Ann"}}, **extra)
        return self.control("POST", "message", body)

    def sent(self):
        return self.control("GET", "sent")["sent"]

    def gateway(self):
        return self.control("GET", "gateway")

    def calls(self):
        return self.control("GET", "calls")["calls"]

    def assets(self):
        return self.control("GET", "assets")["assets"]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
