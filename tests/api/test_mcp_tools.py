"""MCP tools reach models, end to end: an enabled server gets a session (runtime_info shows it),
a pipeline bound to it offers its tools to a func_call model, the fake model calls one, the call
goes to the fake MCP server and its result reaches the model and the reply. A server that dies
mid-call costs that one call and is restarted with backoff; hostile servers cost a failed call or
an error status, never a hang. Transports: Streamable HTTP throughout, stdio (sandboxed) and
HTTP+SSE end to end too (tests/fakes/fake_mcp.py)."""

import json
import os
import socket
import sys
import time
import unittest

from fake_clients import FAKES, CallbackReceiver, FakeProvider, sign, wait_until
from harness import ServerTestCase, unknown_uuid
from test_mcp import FakeMcp

BASE = "/api/v1/mcp/servers"
SECRET = "whsec_mcp_tools"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class McpToolsTest(ServerTestCase):
    # Short enough for tests: a never-answering tool costs 3 s, restarts come every second.
    server_env = {"MCP__TOOL_TIMEOUT_SECONDS": "3", "MCP__MAX_BACKOFF_SECONDS": "1",
                  "MCP__PING_INTERVAL_SECONDS": "1"}

    @classmethod
    def setUpClass(cls):
        cls.llm = FakeProvider()
        cls.callback = CallbackReceiver(SECRET)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.llm.stop()
        cls.callback.stop()

    def setUp(self):
        self.llm.reset()
        self.callback.clear()

    # -- helpers ------------------------------------------------------------------------------
    def fake(self, *args):
        fake = FakeMcp(*args)
        self.addCleanup(fake.stop)
        return fake

    def server(self, name, url, enable=True, mode="http", **extra):
        args = {"url": url, "timeout": 5} if mode != "stdio" else {}
        args.update(extra)
        self.ok("POST", BASE, {"name": name, "mode": mode, "enable": enable, "extra_args": args})
        self.addCleanup(lambda: self.as_user("DELETE", BASE + "/" + name))

    def stdio_server(self, name, *fake_args):
        self.server(name, None, mode="stdio", command=sys.executable,
                    args=[os.path.join(FAKES, "fake_mcp.py"), "--stdio"] + list(fake_args))

    def runtime(self, name):
        return self.ok("GET", BASE + "/" + name)["server"]["runtime_info"]

    def wait_status(self, name, status, timeout=15):
        got = wait_until(lambda: (self.runtime(name) or {}).get("status") == status, timeout)
        self.assertTrue(got, "%s never became %s: %r" % (name, status, self.runtime(name)))
        return self.runtime(name)

    def bot(self, preferences=None, output=None):
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test", abilities=["chat", "func_call"])
        config = {"ai": {
            "runner": {"runner": "local-agent"},
            "local-agent": {"model": {"primary": model, "fallbacks": []}, "max-round": 10,
                            "prompt": [{"role": "system", "content": "Be brief."}]}}}
        if output:
            config["output"] = output
        pipeline = self.make_pipeline(name="p", config=config)
        if preferences is not None:
            self.ok("PUT", "/api/v1/pipelines/%s/extensions" % pipeline, preferences)
        bot = self.make_bot(adapter="webhook", enable=True, use_pipeline_uuid=pipeline,
                            config={"secret": SECRET, "callback_url": self.callback.url})
        self.assertTrue(wait_until(lambda: self.ok("GET", "/api/v1/platform/bots/" + bot)
                                   ["bot"]["runtime"]["status"] == "running"))
        return bot

    def ask(self, bot, text, timeout=20):
        """Sends `text` as a user of `bot`; the text of the next reply."""
        before = len(self.callback.messages())
        body = json.dumps({"message_id": "m-" + unknown_uuid(), "sender": {"id": "u1"},
                           "chat": {"type": "person", "id": "u1"},
                           "message_chain": [{"type": "Plain", "text": text}]}).encode()
        ts = int(time.time())
        status, resp, _ = self.srv.req("POST", "/bots/" + bot, raw_body=body, headers={
            "Content-Type": "application/json", "X-Switchboard-Timestamp": str(ts),
            "X-Switchboard-Signature": sign(SECRET, ts, body)})
        self.assertEqual(status, 200, resp)
        got = self.callback.wait_for(before + 1, timeout)
        self.assertGreater(len(got), before, "no reply to %r" % text)
        return "".join(e.get("text", "") for e in got[before]["body"]["message_chain"])

    def offered(self):
        """The tool names each model request offered."""
        return [[t["function"]["name"] for t in r["body"].get("tools", [])]
                for r in self.llm.chat_requests()]

    def tool_calls(self, fake):
        calls = []
        for r in fake.requests():
            try:
                msg = json.loads(r["body"] or "null")
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("method") == "tools/call":
                calls.append(msg["params"])
        return calls

    # -- tests --------------------------------------------------------------------------------
    def test_a_tool_call_reaches_the_server_and_its_result_the_reply(self):
        fake = self.fake("--tools", "echo")
        self.server("tools", fake.base + "/mcp")
        info = self.wait_status("tools", "connected")
        self.assertEqual((info["tool_count"], info["tools"][0]["name"], info["restarts"]),
                         (1, "echo", 0))
        self.assertIsNone(info["error_message"])
        bot = self.bot()
        reply = self.ask(bot, "please call tool now")
        self.assertIn("[tool result: echo: ]", reply)
        self.assertEqual(self.offered(), [["echo"], ["echo"]])
        self.assertEqual(self.tool_calls(fake), [{"name": "echo", "arguments": {"q": "x"}}])
        tool_message = self.llm.chat_requests()[1]["body"]["messages"][-1]
        self.assertEqual((tool_message["role"], tool_message["content"]), ("tool", "echo: "))

    def test_stdio_and_sse_servers_reach_the_model_too(self):
        self.stdio_server("over-stdio", "--tools", "echo")
        fake = self.fake("--tools", "echo")
        self.server("over-sse", fake.base + "/sse", mode="sse")
        for name in ("over-stdio", "over-sse"):
            with self.subTest(transport=name):
                self.assertEqual(self.wait_status(name, "connected")["tool_count"], 1)
                self.llm.reset()
                bot = self.bot({"enable_all_mcp_servers": False, "bound_mcp_servers": [name]})
                self.assertIn("[tool result: echo: ]", self.ask(bot, "please call tool now"))
                self.assertEqual(self.offered(), [["echo"], ["echo"]])
        self.assertEqual(self.tool_calls(fake), [{"name": "echo", "arguments": {"q": "x"}}])

    def test_a_stdio_server_dying_mid_call_is_started_again(self):
        self.stdio_server("mortal", "--tools", "crash")
        self.wait_status("mortal", "connected")
        bot = self.bot({"enable_all_mcp_servers": False, "bound_mcp_servers": ["mortal"]})
        reply = self.ask(bot, "please call tool now")
        self.assertIn("[tool result: error: MCP server 'mortal'", reply)
        # The child exited; a new one is started and connects by itself.
        self.assertTrue(wait_until(lambda: (self.runtime("mortal") or {}).get("restarts", 0) >= 1
                                   and self.runtime("mortal")["status"] == "connected", 20),
                        self.runtime("mortal"))

    def test_tracked_function_calls_are_told_to_the_user_first(self):
        fake = self.fake("--tools", "echo")
        self.server("tracked", fake.base + "/mcp")
        self.wait_status("tracked", "connected")
        bot = self.bot({"enable_all_mcp_servers": False, "bound_mcp_servers": ["tracked"]},
                       output={"misc": {"track-function-calls": True}})
        self.ask(bot, "please call tool now")
        got = self.callback.wait_for(2, 10)
        texts = ["".join(e.get("text", "") for e in g["body"]["message_chain"]) for g in got]
        self.assertEqual(len(texts), 2, texts)
        self.assertEqual(texts[0], "Call echo...")
        self.assertIn("[tool result: echo: ]", texts[1])

    def test_pipelines_offer_only_the_servers_bound_to_them(self):
        fake = self.fake("--tools", "echo,add")
        self.server("bound-one", fake.base + "/mcp")
        self.wait_status("bound-one", "connected")
        unbound = self.bot({"enable_all_mcp_servers": False, "bound_mcp_servers": []})
        self.assertIn("echo: please call tool now", self.ask(unbound, "please call tool now"))
        self.assertEqual(self.offered(), [[]])
        self.llm.reset()
        bound = self.bot({"enable_all_mcp_servers": False, "bound_mcp_servers": ["bound-one"]})
        self.ask(bound, "please call tool now")
        self.assertEqual(self.offered()[0], ["echo", "add"])

    def test_a_server_dying_mid_call_costs_one_call_and_is_restarted(self):
        port = free_port()
        fake = FakeMcp("--tools", "crash", "--port", str(port))
        self.server("crashy", fake.base + "/mcp")
        self.wait_status("crashy", "connected")
        bot = self.bot()
        t0 = time.monotonic()
        reply = self.ask(bot, "please call tool now")
        self.assertIn("[tool result: error: MCP server 'crashy'", reply)
        self.assertLess(time.monotonic() - t0, 10)
        fake.proc.wait(10)
        fake.stop()
        self.assertTrue(wait_until(lambda: (self.runtime("crashy") or {}).get("restarts", 0) >= 2,
                                   15), self.runtime("crashy"))
        info = self.runtime("crashy")
        self.assertIn(info["status"], ("error", "connecting"))
        # The server comes back on its address: the session is made again without anyone acting.
        back = self.fake("--tools", "echo", "--port", str(port))
        self.wait_status("crashy", "connected")
        self.assertIn("[tool result: echo: ]", self.ask(bot, "please call tool now"))
        self.assertEqual(self.tool_calls(back), [{"name": "echo", "arguments": {"q": "x"}}])
        status, text, _ = self.as_user("GET", "/metrics")
        self.assertEqual(status, 200)
        self.assertIn('switchboard_mcp_server_restarts{server="crashy"}', text)
        self.assertIn('switchboard_mcp_servers{status="connected"}', text)

    def test_hostile_servers_cost_a_failed_call_not_a_hang(self):
        never = self.fake("--tools", "slow", "--hostile", "never")
        self.server("never", never.base + "/mcp")
        self.wait_status("never", "connected")
        bot = self.bot({"enable_all_mcp_servers": False, "bound_mcp_servers": ["never"]})
        t0 = time.monotonic()
        reply = self.ask(bot, "please call tool now")
        self.assertIn("[tool result: error: MCP server 'never'", reply)
        self.assertLess(time.monotonic() - t0, 12)  # the 3 s tool deadline, not forever
        self.assertEqual(self.runtime("never")["status"], "connected")

        endless = self.fake("--tools", "slow", "--hostile", "endless")
        self.server("endless", endless.base + "/mcp")
        self.wait_status("endless", "connected")
        bot = self.bot({"enable_all_mcp_servers": False, "bound_mcp_servers": ["endless"]})
        reply = self.ask(bot, "please call tool now")
        self.assertIn("[tool result: error: MCP server 'endless'", reply)

        for mode, fragment in (("invalid", "invalid JSON-RPC"), ("huge-list", "bytes")):
            with self.subTest(mode=mode):
                fake = self.fake("--hostile", mode)
                self.server(mode, fake.base + "/mcp")
                info = self.wait_status(mode, "error")
                self.assertIn(fragment, info["error_message"])
                self.assertEqual(info["tools"], [])
                self.assertTrue(wait_until(lambda: self.runtime(mode)["restarts"] >= 2, 15))

    def test_disabling_ends_the_session(self):
        fake = self.fake("--tools", "echo")
        self.server("toggled", fake.base + "/mcp", enable=False)
        self.assertIsNone(self.runtime("toggled"))
        self.ok("PUT", BASE + "/toggled", {"enable": True})
        self.wait_status("toggled", "connected")
        self.ok("PUT", BASE + "/toggled", {"enable": False})
        self.assertIsNone(self.runtime("toggled"))
        self.assertTrue(wait_until(
            lambda: any(r["method"] == "DELETE" for r in fake.requests()), 10))


if __name__ == "__main__":
    unittest.main()
