#!/usr/bin/env python3
"""Fake hosted agent services for Switchboard tests (Python 3 standard library only).

Everything tests/fakes/fake_agents.py serves (Dify, n8n, the /_control endpoints and scripting),
plus, on the same loopback server:

    Langflow   base http://127.0.0.1:PORT   (docs.langflow.org, "Flow trigger endpoints")
        POST /api/v1/run/<flow>?stream=false|true
          header "x-api-key: lf-test-key" (else 403 {"detail": ...}, as Langflow answers)
          flows: "echo-flow" answers "echo(<turn>): <input_value>", <turn> counting the
                 messages of the request's session_id; "fail-flow" fails (500 {"detail"} when
                 blocking, an {"event":"error"} when streaming); any other: 404 {"detail"}.
          stream=false: a RunResponse {"session_id", "outputs":[{"inputs", "outputs":[{"results":
                 {"message": {"text", "sender": "Machine", "session_id", ...}}, ...}]}]}
          stream=true: text/event-stream of JSON objects each followed by a blank line:
                 add_message (User), add_message (Machine), token x3 ({"chunk"}), end
                 ({"result": RunResponse}).

Command line: python3 fake_hosted_agents.py [--port 0]; prints "FAKE_AGENTS_PORT=<port>".
"""

import json
import sys
import time
import uuid

import fake_agents
from fake_agents import Reply, _dumps, _split3, json_reply

LANGFLOW_KEY = "lf-test-key"


def event_line(obj):
    return (_dumps(obj) + "\n\n").encode("utf-8")


class HostedFake(fake_agents.Fake):
    def __init__(self):
        fake_agents.Fake.__init__(self)
        self.sessions = {}  # (service, session id) -> turns so far

    def reset(self):
        fake_agents.Fake.reset(self)
        with self.lock:
            self.sessions = {}

    def turn(self, service, session):
        with self.lock:
            n = self.sessions.get((service, session), 0) + 1
            self.sessions[(service, session)] = n
            return n

    def route(self, method, path, headers, raw, query=None):
        query = query or {}
        if path.startswith("/api/v1/run/"):
            return self.langflow(method, path[len("/api/v1/run/"):], headers, raw, query)
        return fake_agents.Fake.route(self, method, path, headers, raw, query)

    # -- Langflow -----------------------------------------------------------------------------
    def langflow(self, method, flow, headers, raw, query):
        if method != "POST":
            return json_reply(405, {"detail": "Method Not Allowed"})
        if headers.get("x-api-key") != LANGFLOW_KEY:
            return json_reply(403, {"detail": "An API key must be passed as query or header"})
        if flow not in ("echo-flow", "fail-flow"):
            return json_reply(404, {"detail": "Flow identifier %s not found" % flow})
        try:
            body = json.loads(raw or b"{}")
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            return json_reply(422, {"detail": [{"msg": "body must be a JSON object"}]})
        stream = query.get("stream", "false").lower() == "true"
        text = body.get("input_value") or ""
        session = body.get("session_id") or flow
        if flow == "fail-flow":
            if stream:
                return Reply(200, content_type="text/event-stream", events=[event_line(
                    {"event": "error", "data": {"error": "The flow failed: component error"}})])
            return json_reply(500, {"detail": "The flow failed: component error"})
        answer = "echo(%d): %s" % (self.turn("langflow", session), text)
        message_id = str(uuid.uuid4())
        message = {"text": answer, "sender": "Machine", "sender_name": "AI",
                   "session_id": session, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
                   "flow_id": flow, "files": [], "error": False}
        result = {"session_id": session, "outputs": [{
            "inputs": {"input_value": text},
            "outputs": [{"results": {"message": message},
                         "artifacts": {"message": answer, "sender": "Machine", "files": []},
                         "outputs": {"message": {"message": answer, "type": "text"}},
                         "logs": {"message": []}, "messages": [], "component_display_name":
                         "Chat Output", "component_id": "ChatOutput-1"}]}]}
        if not stream:
            return json_reply(200, result)
        events = [
            event_line({"event": "add_message", "data": {"sender": "User", "text": text,
                                                          "session_id": session}}),
            event_line({"event": "add_message", "data": {"sender": "Machine", "text": "",
                                                          "session_id": session,
                                                          "id": message_id}}),
        ]
        for piece in _split3(answer):
            events.append(event_line({"event": "token", "data": {"chunk": piece,
                                                                  "id": message_id}}))
        events.append(event_line({"event": "end", "data": {"result": result}}))
        return Reply(200, content_type="text/event-stream", events=events)


if __name__ == "__main__":
    sys.exit(fake_agents.main(fake_class=HostedFake))
