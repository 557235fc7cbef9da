"""tests/fakes/fake_wecombot.py as a child process, for test_bot_wecombot.py: the WeCom AI bot's
long connection server and its webhook driver (see the fake's docstring for the control API)."""

import json
import os
import subprocess
import sys
import urllib.request

from fake_clients import FAKES

sys.path.insert(0, FAKES)
from fake_wecombot import (DEFAULT_AES_KEY, DEFAULT_BOT_ID, DEFAULT_SECRET,  # noqa: E402,F401
                           DEFAULT_TOKEN)


class FakeWeComBot:
    """One per test: its sockets and records are global to the process."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_wecombot.py"),
                                      "--port", "0"], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_WECOMBOT_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_WECOMBOT_PORT"])
        self.ws_url = "ws://127.0.0.1:%s" % fields["FAKE_WECOMBOT_WS_PORT"]
        self.base = "http://127.0.0.1:%d" % self.port

    def control(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read() or b"null")

    def ws(self):
        return self.control("GET", "ws")

    def sent(self):
        return self.control("GET", "sent")["sent"]

    def say(self, text, chattype="single", userid="zhangsan", chatid=None, **extra):
        body = dict({"chattype": chattype, "userid": userid, "text": text}, **extra)
        if chatid:
            body["chatid"] = chatid
        return self.control("POST", "message", body)

    def webhook(self, action, url, **body):
        return self.control("POST", "webhook/" + action, dict(body, url=url))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
