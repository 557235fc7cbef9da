"""tests/fakes/fake_satori.py as a child process for the end-to-end tests (one per test: its state
is global): its control API, and the bot config that points a `satori` bot at it."""

import json
import os
import subprocess
import sys
import urllib.request

from fake_clients import FAKES

TOKEN = "satori-e2e-token"
PLATFORM = "llonebot"
SELF_ID = "10001"


class FakeSatori:
    def __init__(self, token=TOKEN):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_satori.py"),
                                      "--port", "0", "--token", token, "--platform", PLATFORM,
                                      "--self-id", SELF_ID],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_SATORI_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_SATORI_PORT"])
        self.ws_port = int(fields["FAKE_SATORI_WS_PORT"])
        self.base = "http://127.0.0.1:%d" % self.port

    def bot_config(self, token=TOKEN):
        """The bot's adapter config, in LangBot's fields."""
        return {"platform": PLATFORM, "host": "127.0.0.1", "port": self.port,
                "satori_api_base_url": self.base + "/v1",
                "satori_endpoint": "ws://127.0.0.1:%d/v1/events" % self.ws_port,
                "token": token}

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def say(self, content, channel_id, channel_type=0, user_id="20001", guild_id=None):
        body = {"channel_id": channel_id, "channel_type": channel_type, "content": content,
                "user": {"id": user_id, "name": "ann", "nick": "Ann"}}
        if guild_id:
            body["guild_id"] = guild_id
        return self.control("POST", "message", body)

    def sent(self):
        return self.control("GET", "sent")["sent"]

    def created(self):
        return [s for s in self.sent() if s["method"] == "message.create"]

    def events(self):
        return self.control("GET", "events")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
