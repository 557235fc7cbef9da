"""Hosted agent runners end to end: a pipeline whose runner is one of the hosted services of
tests/fakes/fake_hosted_agents.py (Langflow, Coze, DashScope, Tbox), driven through the console's debug chat
over WebSocket against the real binary. Each runner: the reply reaches the user, streamed pieces come
first, the service's session/conversation id is reused on the second message and dropped after
!reset, and a service failure gives the pipeline's failure hint."""

import unittest

from harness import ServerTestCase
from fake_clients import FakeAgents
from ws_client import WebSocket

HINT = "The agent service failed, sorry."


class HostedRunnerCase(ServerTestCase):
    agents = None

    @classmethod
    def setUpClass(cls):
        cls.agents = FakeAgents()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.agents.stop()

    def setUp(self):
        self.agents.control("POST", "/_control/reset", {})

    def pipeline(self, runner, settings):
        config = {"ai": {"runner": {"runner": runner}, runner: settings},
                  "output": {"misc": {"exception-handling": "show-hint", "failure-hint": HINT}}}
        return self.make_pipeline(name=runner, config=config)

    def connect(self, pipe):
        path = "/api/v1/pipelines/%s/ws/connect?session_type=person&token=%s" % (pipe, self.token)
        ws = WebSocket("127.0.0.1", self.srv.port, path)
        self.addCleanup(ws.close)
        self.assertEqual(ws.recv_json()["type"], "connected")
        return ws

    def ask(self, ws, text, stream=True):
        """Sends `text`; returns (final reply text, streamed partial texts)."""
        ws.send_json({"type": "message", "message": [{"type": "Plain", "text": text}],
                      "stream": stream})
        partial = []
        while True:
            frame = ws.recv_json()
            self.assertIsNotNone(frame, "connection closed")
            if frame["type"] != "response":
                continue
            if frame["data"]["is_final"]:
                return frame["data"]["content"], partial
            partial.append(frame["data"]["content"])

    def service_requests(self, path_prefix):
        return [r for r in self.agents.requests() if r["path"].startswith(path_prefix)]

    def check_runner(self, runner, settings, failing, path_prefix, session_of):
        """The common end-to-end story; `session_of(request)` is the service session id a
        recorded request carried (None or "" when it started a new one)."""
        ws = self.connect(self.pipeline(runner, settings))
        text, partial = self.ask(ws, "first question")
        self.assertIn("echo(1): first question", text)
        self.assertTrue(partial, "no streamed pieces before the final reply")
        text, _ = self.ask(ws, "second question", stream=False)
        self.assertIn("echo(2): second question", text)
        calls = self.service_requests(path_prefix)
        self.assertEqual(len(calls), 2, calls)
        self.assertTrue(session_of(calls[1]), calls[1])
        first_session = session_of(calls[0])
        if first_session:  # a session id we chose is reused as is
            self.assertEqual(session_of(calls[1]), first_session)

        text, _ = self.ask(ws, "!reset", stream=False)
        text, _ = self.ask(ws, "after reset", stream=False)
        self.assertIn("echo(1): after reset", text)
        after = self.service_requests(path_prefix)[-1]
        self.assertNotEqual(session_of(after) or "", session_of(calls[1]))

        ws_fail = self.connect(self.pipeline(runner, failing))
        text, _ = self.ask(ws_fail, "this will fail", stream=False)
        self.assertIn(HINT, text)
        self.assertNotIn(failing["api-key"], text)


class LangflowRunnerTest(HostedRunnerCase):

    def test_langflow_flow_answers_streams_and_keeps_its_session(self):
        settings = {"base-url": self.agents.base, "api-key": "lf-test-key",
                    "flow-id": "echo-flow", "input-type": "chat", "output-type": "chat",
                    "tweaks": "{}", "timeout": 10}
        self.check_runner("langflow-api", settings, dict(settings, **{"flow-id": "fail-flow"}),
                          "/api/v1/run/", lambda r: r["body"].get("session_id"))


class CozeRunnerTest(HostedRunnerCase):

    def test_coze_bot_answers_streams_and_keeps_its_conversation(self):
        settings = {"api-base": self.agents.base, "api-key": "pat-coze-test",
                    "bot-id": "bot-echo", "auto-save-history": True, "timeout": 10}
        self.check_runner("coze-api", settings, dict(settings, **{"bot-id": "bot-fail"}),
                          "/v3/chat", lambda r: r["query"].get("conversation_id"))


class DashScopeRunnerTest(HostedRunnerCase):

    def test_dashscope_app_answers_streams_and_keeps_its_session(self):
        settings = {"base-url": self.agents.base + "/api/v1", "api-key": "sk-ds-test",
                    "app-type": "agent", "app-id": "app-agent", "references_quote": "Source:"}
        self.check_runner("dashscope-app-api", settings, dict(settings, **{"app-id": "app-fail"}),
                          "/api/v1/apps/", lambda r: r["body"]["input"].get("session_id"))


class TboxRunnerTest(HostedRunnerCase):

    def test_tbox_app_answers_streams_and_keeps_its_conversation(self):
        settings = {"base-url": self.agents.base, "api-key": "tbox-test-token",
                    "app-id": "app-echo", "timeout": 10}
        self.check_runner("tbox-app-api", settings, dict(settings, **{"app-id": "app-fail"}),
                          "/api/chat", lambda r: r["body"].get("conversationId"))

    def test_tbox_refusals_reach_the_user_as_clear_errors(self):
        def pipe(token, app):
            settings = {"base-url": self.agents.base, "api-key": token, "app-id": app,
                        "timeout": 10}
            config = {"ai": {"runner": {"runner": "tbox-app-api"}, "tbox-app-api": settings},
                      "output": {"misc": {"exception-handling": "show-error"}}}
            return self.make_pipeline(name="tbox-" + app, config=config)
        text, _ = self.ask(self.connect(pipe("tbox-wrong-token", "app-echo")), "hi", stream=False)
        self.assertIn("tbox", text)
        self.assertIn("refused", text)
        self.assertNotIn("tbox-wrong-token", text)
        text, _ = self.ask(self.connect(pipe("tbox-test-token", "app-nope")), "hi", stream=False)
        self.assertIn("APP_NOT_FOUND", text)
        text, _ = self.ask(self.connect(pipe("tbox-test-token", "app-fail")), "hi")
        self.assertIn("the agent failed", text)
        calls = self.service_requests("/api/chat")
        self.assertEqual([c["headers"]["authorization"] for c in calls],
                         ["tbox-wrong-token", "tbox-test-token", "tbox-test-token"])

if __name__ == "__main__":
    unittest.main()
