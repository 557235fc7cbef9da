"""Client of tests/fakes/fake_turnstile.py (Cloudflare Turnstile siteverify) for the web page
bot's end-to-end test, and a visitor of the bot's chat socket."""

import json
import uuid

from fake_clients import _FakeProcess
from ws_client import WebSocket


class FakeTurnstile(_FakeProcess):
    """tests/fakes/fake_turnstile.py: POST /turnstile/v0/siteverify."""
    script = "fake_turnstile.py"
    banner = "FAKE_TURNSTILE_PORT"

    def token(self, **opts):
        """A token as a browser gets it after passing the challenge."""
        return self.control("POST", "/_control/token", opts)["token"]

    def calls(self):
        return self.control("GET", "/_control/calls")["calls"]

    def configure(self, **config):
        self.control("POST", "/_control/config", config)

    def reset(self):
        self.control("POST", "/_control/reset", {})


def new_visitor():
    return str(uuid.uuid4())


class Visitor:
    """One browser tab of a visitor: its socket to /bots/{uuid}/ws, opened at once. `ready` is
    the server's first frame (the remembered history)."""

    def __init__(self, port, bot, visitor=None, ticket=None):
        self.id = visitor or new_visitor()
        path = "/bots/%s/ws?visitor=%s" % (bot, self.id)
        if ticket is not None:
            path += "&ticket=" + ticket
        self.ws = WebSocket("127.0.0.1", port, path)
        self.ready = self.ws.recv_json()
        assert self.ready and self.ready["type"] == "ready", self.ready

    def say(self, text):
        self.ws.send_json({"type": "message", "text": text})

    def next(self, kind="message", timeout=15.0):
        """The next frame of `kind` (others are skipped); None once the socket closed."""
        while True:
            frame = self.ws.recv_json(timeout)
            if frame is None or frame["type"] == kind:
                return frame

    def reply_text(self, timeout=15.0):
        frame = self.next("message", timeout)
        assert frame is not None, "the socket closed"
        return "".join(e.get("text", "") for e in frame["elements"] if e["type"] == "text")

    def close(self):
        self.ws.close()


def text_of(frame):
    return "".join(e.get("text", "") for e in frame["elements"] if e["type"] == "text")


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False)
