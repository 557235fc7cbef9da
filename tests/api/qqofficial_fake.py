"""Client of tests/fakes/fake_qqofficial.py (the QQ official bot platform: token host, API,
gateway and a webhook driver that signs callbacks with Ed25519) as a child process. One per test:
its state is global.

    qq = FakeQQ()
    qq.event({"type": "c2c", "content": "hi"})                      # over the gateway
    qq.event({"type": "c2c", "content": "hi", "via": "webhook", "url": bot_url})
    qq.sent()                                                      # what the bot posted
"""

import json
import os
import subprocess
import sys
import urllib.request

from fake_clients import FAKES

APPID = "102000001"
SECRET = "qqBotSecretForSwitchboardTests01"


class FakeQQ:
    def __init__(self, appid=APPID, secret=SECRET):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_qqofficial.py"),
                                      "--port", "0", "--appid", appid, "--secret", secret],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_QQ_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_QQ_PORT"])
        self.base = "http://127.0.0.1:%d" % self.port

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=20) as r:
            return json.loads(r.read() or b"null")

    def event(self, body):
        return self.control("POST", "event", body)

    def sent(self, ok_only=True):
        return [s for s in self.control("GET", "sent")["sent"] if s["ok"] or not ok_only]

    def uploads(self):
        return self.control("GET", "uploads")["uploads"]

    def gateway(self):
        return self.control("GET", "gateway")

    def tokens(self):
        return self.control("GET", "tokens")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
