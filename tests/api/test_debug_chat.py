"""The console's pipeline debug chat over WebSocket (LangBot's protocol at
/api/v1/pipelines/{uuid}/ws/connect): authentication, a model reply streamed and final, memory
across turns and its reset, group rules, history over HTTP, and refusals."""

import json
import time
import unittest

from harness import ServerTestCase, unknown_uuid
from fake_clients import FakeProvider
from ws_client import HandshakeError, WebSocket


class DebugChatCase(ServerTestCase):
    """A server with a fake provider, and helpers to open and drive the chat."""
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


class DebugChatTest(DebugChatCase):

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

    def test_connections_are_listed_and_a_broadcast_reaches_every_socket(self):
        pipe = self.pipeline()
        other = self.pipeline()
        sockets = [self.connect(pipe, token=self.token), self.connect(pipe, token=self.token),
                   self.connect(pipe, session_type="group", token=self.token)]
        bystander = self.connect(other, token=self.token)
        answer = self.ok("GET", "/api/v1/pipelines/%s/ws/connections" % pipe)
        self.assertEqual([c["session_type"] for c in answer["connections"]],
                         ["person", "person", "group"])
        for c in answer["connections"]:
            self.assertTrue(c["is_active"])
            self.assertTrue(c["created_at"] <= c["last_active"], c)
        stats = answer["stats"]
        self.assertEqual(stats["connections_by_pipeline"][pipe], 3)
        self.assertEqual(stats["connections_by_pipeline"][other], 1)
        self.assertGreaterEqual(stats["total_connections"], 4)
        self.assertGreaterEqual(stats["connections_by_session_type"]["group"], 1)

        sent = self.ok("POST", "/api/v1/pipelines/%s/ws/broadcast" % pipe,
                       {"message": "maintenance at noon"})
        self.assertEqual(sent["connections"], 3)
        for ws in sockets:
            frame = ws.recv_json()
            self.assertEqual((frame["type"], frame["message"]), ("broadcast", "maintenance at noon"))
        bystander.send_json({"type": "ping"})  # its next frame is the pong: no broadcast reached it
        self.assertEqual(bystander.recv_json()["type"], "pong")
        # Not part of the chat's history.
        self.assertEqual(
            self.ok("GET", "/api/v1/pipelines/%s/ws/messages/person" % pipe)["messages"], [])

        sockets[0].send_json({"type": "disconnect"})
        self.assertIsNone(sockets[0].recv_json())
        sockets[0].close()
        deadline = time.time() + 10
        while time.time() < deadline:
            left = self.ok("GET", "/api/v1/pipelines/%s/ws/connections" % pipe)["connections"]
            if len(left) == 2:
                break
            time.sleep(0.05)
        self.assertEqual(len(left), 2)

    def test_broadcast_refusals(self):
        pipe = self.pipeline()
        for body in ({}, {"message": ""}, {"message": None}):
            status, answer, _ = self.as_user("POST", "/api/v1/pipelines/%s/ws/broadcast" % pipe,
                                             body)
            self.assertError(status, answer, 400, "message is required")
        status, answer, _ = self.as_user(
            "POST", "/api/v1/pipelines/%s/ws/broadcast" % unknown_uuid(), {"message": "x"})
        self.assertError(status, answer, 404)
        status, answer, _ = self.as_user("GET",
                                         "/api/v1/pipelines/%s/ws/connections" % unknown_uuid())
        self.assertError(status, answer, 404)


class AnonymousDebugChatTest(DebugChatCase):
    """api.anonymous_debug_chat: LangBot's console opens the socket without a credential."""
    server_env = {"API__ANONYMOUS_DEBUG_CHAT": "loopback,http://console.example:8080"}

    def refused(self, pipe, headers=None, token=None):
        path = "/api/v1/pipelines/%s/ws/connect" % pipe
        if token:
            path += "?token=" + token
        with self.assertRaises(HandshakeError) as e:
            WebSocket("127.0.0.1", self.srv.port, path, headers=headers)
        return e.exception.status

    def test_loopback_pages_and_the_listed_origin_are_admitted(self):
        pipe = self.pipeline()
        ws = self.connect(pipe)  # no credential, no Origin: a client on this machine
        self.say(ws, "hello without a login")
        frames = self.until(ws, "response", final=True)
        self.assertIn("echo: hello without a login", frames[-1]["data"]["content"])
        self.connect(pipe, headers={"Origin": "http://localhost:3000"})
        self.connect(pipe, headers={"Origin": "HTTP://console.example:8080"})

    def test_other_origins_and_wrong_credentials_are_refused(self):
        pipe = self.pipeline()
        # A website the operator happens to visit cannot use their browser to get in.
        self.assertEqual(self.refused(pipe, headers={"Origin": "https://evil.example"}), 401)
        self.assertEqual(self.refused(pipe, headers={"Origin": "http://console.example"}), 401)
        # A credential that is presented is checked, as always.
        self.assertEqual(self.refused(pipe, token="not-a-valid-token"), 401)
        self.assertEqual(self.refused(pipe, headers={"X-API-Key": "sk-wrong"}), 401)
        # Only the socket is opened up: the chat's HTTP routes still need a credential.
        status, _, _ = self.req("GET", "/api/v1/pipelines/%s/ws/messages/person" % pipe)
        self.assertEqual(status, 401)


if __name__ == "__main__":
    unittest.main()
