"""tests/fakes/fake_wechatpad.py as a child process for the end-to-end tests (one per test: its
state is global): its control API, and the bot config that points a `wechatpad` bot at it."""

import json
import os
import subprocess
import sys
import urllib.request

from fake_clients import FAKES

TOKEN = "wechatpad-e2e-key"
WXID = "wxid_padbot01"


class FakeWeChatPad:
    def __init__(self, token=TOKEN):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_wechatpad.py"),
                                      "--port", "0", "--token", token, "--wxid", WXID],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_WECHATPAD_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_WECHATPAD_PORT"])
        self.ws_port = int(fields["FAKE_WECHATPAD_WS_PORT"])
        self.base = "http://127.0.0.1:%d" % self.port

    def bot_config(self, token=TOKEN):
        """The bot's adapter config, in LangBot's fields."""
        return {"wechatpad_url": self.base, "wechatpad_ws": "ws://127.0.0.1:%d/ws" % self.ws_port,
                "admin_key": "", "token": token, "wxid": WXID}

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def say(self, sender, content, **extra):
        body = {"from": sender, "content": content}
        body.update(extra)
        return self.control("POST", "message", body)

    def sent(self):
        return self.control("GET", "sent")["sent"]

    def texts(self):
        return [s for s in self.sent() if s["path"] == "/message/SendTextMessage"]

    def state(self):
        return self.control("GET", "state")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
