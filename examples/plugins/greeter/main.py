#!/usr/bin/env python3
"""Greeter: an example Switchboard plugin (docs/plugins.md), Python 3 standard library only.

- answers the command `!greet [name]` with "<greeting>, <name>!";
- when a message is exactly the configured trigger word, greets the sender itself and tells the
  core not to ask the model (prevent_default);
- offers the tool `word_count` to models that can call functions;
- counts its greetings in the core's key-value storage and logs through the core.
"""

import json
import sys

PROTOCOL_VERSION = 1


class Connection:
    """Newline-delimited JSON over stdin/stdout. Each side numbers its own requests."""

    def __init__(self):
        self.next_seq = 0
        self.waiting = []  # requests from the core read while waiting for one of our answers

    def send(self, message):
        sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def answer(self, seq_id, data=None, error=None):
        if error is None:
            self.send({"seq_id": seq_id, "code": 0, "message": "ok", "data": data or {}})
        else:
            self.send({"seq_id": seq_id, "code": -1, "message": error, "data": None})

    def call(self, action, data):
        """A request to the core; returns its data, or raises RuntimeError with its message."""
        self.next_seq += 1
        seq = self.next_seq
        self.send({"seq_id": seq, "action": action, "data": data})
        while True:
            message = self.read()
            if message is None:
                raise EOFError
            if "action" in message:
                self.waiting.append(message)
                continue
            if message.get("seq_id") == seq:
                if message.get("code") != 0:
                    raise RuntimeError(message.get("message", "error"))
                return message.get("data")

    def read(self):
        line = sys.stdin.readline()
        if not line:
            return None
        return json.loads(line)

    def requests(self):
        while True:
            if self.waiting:
                yield self.waiting.pop(0)
                continue
            message = self.read()
            if message is None:
                return
            if "action" in message:
                yield message


class Greeter:
    def __init__(self, conn):
        self.conn = conn
        self.config = {}

    def greet(self, name):
        try:
            count = int(self.conn.call("storage_get", {"key": "greetings"}).get("value") or 0)
            self.conn.call("storage_set", {"key": "greetings", "value": str(count + 1)})
        except RuntimeError as e:
            self.conn.call("log", {"level": "warning", "text": "storage failed: %s" % e})
        return "%s, %s!" % (self.config.get("greeting", "Hello"), name)

    def handshake(self, data):
        self.config = data.get("config") or {}
        self.conn.send({"seq_id": 0, "action": "log",
                        "data": {"level": "info", "text": "greeter ready"}})
        return {
            "protocol_version": PROTOCOL_VERSION,
            "commands": [{"name": "greet", "description": "greet someone: !greet [name]"}],
            "tools": [{
                "name": "word_count",
                "description": "Counts the words of a text.",
                "parameters": {"type": "object",
                               "properties": {"text": {"type": "string"}},
                               "required": ["text"]},
            }],
            "events": ["message_received"],
        }

    def event(self, data):
        if data.get("event") != "message_received":
            return {}
        text = (data.get("text") or "").strip().lower()
        if text and text == str(self.config.get("trigger", "hi")).lower():
            return {"reply": self.greet(data.get("sender_id") or "friend"),
                    "prevent_default": True}
        return {}

    def command(self, data):
        if data.get("command") != "greet":
            raise RuntimeError("unknown command %s" % data.get("command"))
        args = data.get("args") or []
        return {"reply": self.greet(" ".join(args) if args else data.get("sender_id") or "friend")}

    def tool_call(self, data):
        if data.get("tool") != "word_count":
            raise RuntimeError("unknown tool %s" % data.get("tool"))
        text = (data.get("arguments") or {}).get("text", "")
        return {"result": {"words": len(text.split())}}


def main():
    conn = Connection()
    plugin = Greeter(conn)
    handlers = {"handshake": plugin.handshake, "event": plugin.event,
                "command": plugin.command, "tool_call": plugin.tool_call}
    for request in conn.requests():
        action = request.get("action")
        if action == "shutdown":
            return
        handler = handlers.get(action)
        try:
            if handler is None:
                raise RuntimeError("unknown action %s" % action)
            conn.answer(request["seq_id"], handler(request.get("data") or {}))
        except RuntimeError as e:
            conn.answer(request["seq_id"], error=str(e))


if __name__ == "__main__":
    main()
