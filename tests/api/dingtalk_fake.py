"""tests/fakes/fake_dingtalk.py as a child process, for test_bot_dingtalk.py (one per test: the
fake's state is global)."""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

from fake_clients import FAKES

CLIENT_ID = "dingfakeclientid0001"
CLIENT_SECRET = "fake-dingtalk-client-secret-0123456789"
ROBOT_CODE = "dingfakerobotcode001"


class FakeDingTalk:
    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(FAKES, "fake_dingtalk.py"), "--port", "0",
             "--client-id", CLIENT_ID, "--client-secret", CLIENT_SECRET,
             "--robot-code", ROBOT_CODE], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_DINGTALK_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_DINGTALK_PORT"])
        self.base = "http://127.0.0.1:%d" % self.port

    def control(self, method, name, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + name, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def say(self, text, conversation_type="1", **extra):
        body = {"conversationType": conversation_type, "text": text}
        body.update(extra)
        return self.control("POST", "message", body)

    def sent(self):
        return self.control("GET", "sent")["sent"]

    def stream(self):
        return self.control("GET", "stream")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
