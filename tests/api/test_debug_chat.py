"""The console's pipeline debug chat over WebSocket (LangBot's protocol at
/api/v1/pipelines/{uuid}/ws/connect): authentication, a model reply streamed and final, memory
across turns and its reset, group rules, history over HTTP, and refusals."""

import json
import unittest

from harness import ServerTestCase, unknown_uuid
from fake_clients import FakeProvider
from ws_client import HandshakeError, WebSocket


class DebugChatTest(ServerTestCase):
    fake = None

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeProvider()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.fake.stop()

    def setUp(self):
        self.fake.reset()

    def pipeline(self, **sections):
        provider = self.make_provider(base_url=self.fake.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test")
        config = {"ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}}}
        for name, value in sections.items():
            config[name.replace("_", "-")] = value
        return self.make_pipeline(name="debug", config=config)

    def connect(self, pipe, session_type="person", token=None, headers=None):
        path = "/api/v1/pipelines/%s/ws/connect?session_type=%s" % (pipe, session_type)
        if token is not None:
            path += "&token=" + token
        ws = WebSocket("127.0.0.1", self.srv.port, path, headers=headers)
        self.addCleanup(ws.close)
        hello = ws.recv_json()
        self.assertEqual(hello["type"], "connected", hello)
        self.assertEqual(hello["pipeline_uuid"], pipe)
        self.assertEqual(hello["session_type"], session_type)
        return ws

    def until(self, ws, kind, final=None):
        """Frames until one of `kind` (and is_final == final when given); returns them all."""
        seen = []
        while True:
            frame = ws.recv_json()
            self.assertIsNotNone(frame, "connection closed; saw %r" % seen)
            seen.append(frame)
            if frame["type"] == kind and (final is None or frame["data"]["is_final"] == final):
                return seen

    def say(self, ws, text, stream=True, extra=None):
        chain = (extra or []) + [{"type": "Plain", "text": text}]
        ws.send_json({"type": "message", "message": chain, "stream": stream})

    def test_reply_streams_then_arrives_final_and_memory_carries_over(self):
        pipe = self.pipeline()
        ws = self.connect(pipe, token=self.token)
        self.say(ws, "hello debug")
        frames = self.until(ws, "response", final=True)
        self.assertEqual(frames[0]["type"], "user_message")
        self.assertEqual(frames[0]["data"]["role"], "user")
        self.assertEqual(frames[0]["data"]["content"], "hello debug")
        final = frames[-1]["data"]
        self.assertEqual(final["role"], "assistant")
        self.assertIn("echo: hello debug", final["content"])
        self.assertTrue(final["is_final"])
        partial = [f for f in frames if f["type"] == "response" and not f["data"]["is_final"]]
        self.assertTrue(partial, frames)  # streamed pieces first, under the same id
        self.assertTrue(all(p["data"]["id"] == final["id"] for p in partial))
        self.assertTrue(self.fake.chat_requests()[0]["body"].get("stream"))

        self.say(ws, "second turn", stream=False)
        frames = self.until(ws, "response", final=True)
        self.assertFalse([f for f in frames if f["type"] == "response" and
                          not f["data"]["is_final"]])
        history = json.dumps(self.fake.chat_requests()[-1]["body"]["messages"])
        self.assertIn("hello debug", history)

        messages = self.ok("GET", "/api/v1/pipelines/%s/ws/messages/person" % pipe)["messages"]
        self.assertEqual([m["role"] for m in messages], ["user", "assistant", "user", "assistant"])
        self.ok("POST", "/api/v1/pipelines/%s/ws/reset/person" % pipe)
        self.assertEqual(
            self.ok("GET", "/api/v1/pipelines/%s/ws/messages/person" % pipe)["messages"], [])
        self.say(ws, "after reset", stream=False)
        self.until(ws, "response", final=True)
        self.assertNotIn("hello debug", json.dumps(self.fake.chat_requests()[-1]["body"]))

    def test_group_rules_apply_and_ignored_messages_are_reported(self):
        pipe = self.pipeline()
        ws = self.connect(pipe, session_type="group", headers={"X-API-Key": self.api_key})
        self.say(ws, "nobody asked")
        frames = self.until(ws, "ignored")
        self.assertEqual(frames[-1]["reason"], "not_triggered")
        self.say(ws, "now you", extra=[{"type": "At", "target": "websocketbot"}])
        frames = self.until(ws, "response", final=True)
        self.assertIn("now you", frames[-1]["data"]["content"])

    def test_ping_bad_frames_and_commands(self):
        pipe = self.pipeline()
        ws = self.connect(pipe, token=self.token)
        ws.send_json({"type": "ping"})
        self.assertEqual(ws.recv_json()["type"], "pong")
        ws.send_text("{not json")
        self.assertEqual(ws.recv_json(), {"type": "error", "message": "Invalid JSON format"})
        ws.send_json({"type": "message", "message": [{"type": "Sticker"}]})
        error = ws.recv_json()
        self.assertEqual(error["type"], "error")
        self.assertIn("message[0].type", error["message"])
        self.say(ws, "!help")
        frames = self.until(ws, "response", final=True)
        self.assertIn("!reset", frames[-1]["data"]["content"])
        self.assertEqual(self.fake.chat_requests(), [])
        ws.send_json({"type": "disconnect"})
        self.assertIsNone(ws.recv_json())

    def test_refusals_before_the_upgrade(self):
        pipe = self.pipeline()
        with self.assertRaises(HandshakeError) as e:
            WebSocket("127.0.0.1", self.srv.port, "/api/v1/pipelines/%s/ws/connect" % pipe)
        self.assertEqual(e.exception.status, 401)
        with self.assertRaises(HandshakeError) as e:
            WebSocket("127.0.0.1", self.srv.port,
                      "/api/v1/pipelines/%s/ws/connect?token=%s" % (unknown_uuid(), self.token))
        self.assertEqual(e.exception.status, 404)
        with self.assertRaises(HandshakeError) as e:
            WebSocket("127.0.0.1", self.srv.port,
                      "/api/v1/pipelines/%s/ws/connect?session_type=channel&token=%s"
                      % (pipe, self.token))
        self.assertEqual(e.exception.status, 400)
        status, body, _ = self.as_user("GET", "/api/v1/pipelines/%s/ws/connect" % pipe)
        self.assertError(status, body, 400)
        status, body, _ = self.as_user("GET", "/api/v1/pipelines/%s/ws/messages/channel" % pipe)
        self.assertError(status, body, 400)

    def test_messages_and_reset_of_an_unknown_pipeline_are_404(self):
        ghost = unknown_uuid()
        status, body, _ = self.as_user("GET", "/api/v1/pipelines/%s/ws/messages/person" % ghost)
        self.assertError(status, body, 404, ghost)
        status, body, _ = self.as_user("POST", "/api/v1/pipelines/%s/ws/reset/person" % ghost)
        self.assertError(status, body, 404, ghost)
        # A known pipeline without a chat yet has an empty history.
        pipe = self.pipeline()
        self.assertEqual(
            self.ok("GET", "/api/v1/pipelines/%s/ws/messages/group" % pipe)["messages"], [])


if __name__ == "__main__":
    unittest.main()
