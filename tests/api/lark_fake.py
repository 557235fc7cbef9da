"""tests/fakes/fake_lark.py as a child process for the Lark end-to-end tests: the Open API and
the long connection on loopback, webhook delivery to the bot's URL, and its control API.

    lark = FakeLark()
    lark.config(encrypt_key="ek")
    lark.message(via="webhook", url=bot_url, chat_type="p2p", text="hi")
    lark.sent(); lark.state(); lark.stop()
"""

import json
import os
import subprocess
import sys
import urllib.request

from fake_clients import FAKES


class FakeLark:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_lark.py"),
                                      "--port", "0"], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_LARK_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_LARK_PORT"])
        self.base = "http://127.0.0.1:%d" % self.port

    def control(self, method, name, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + name, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=20) as r:
            return json.loads(r.read() or b"null")

    def config(self, **values):
        return self.control("POST", "config", values)

    def message(self, **spec):
        return self.control("POST", "message", spec)

    def event(self, **spec):
        return self.control("POST", "event", spec)

    def sent(self):
        return self.control("GET", "sent")["sent"]

    def state(self):
        return self.control("GET", "state")

    def reset(self):
        self.control("POST", "reset", {})

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
