"""A QQ bot through OneBot v11 end to end: the real binary listens for the reverse WebSocket of the
`aiocqhttp` adapter; tests/fakes/fake_onebot.py (a OneBot implementation, think NapCat) dials it
and injects events; replies come from the fake model of tests/fakes/fake_llm.py and arrive at the
fake as send_private_msg / send_group_msg actions. Private and group messages (segment arrays and
CQ strings), send_message, the access token, a dropped and a silent connection, disabling, the
bot's log, a port already taken, and malformed, oversized and flooding frames."""

import json
import socket
import time
import unittest
import urllib.error

from fake_clients import _FakeProcess, wait_until
from platform_case import PlatformCase

SELF_ID = 3000100


class FakeOneBot(_FakeProcess):
    """tests/fakes/fake_onebot.py: a reverse-WebSocket OneBot client with a control API."""
    script = "fake_onebot.py"
    banner = "FAKE_ONEBOT_PORT"

    def state(self, self_id):
        return self.control("GET", "/_control/state?self_id=%d" % self_id)

    def actions(self, self_id, names=("send_private_msg", "send_group_msg", "send_msg")):
        got = self.control("GET", "/_control/actions?self_id=%d" % self_id)["actions"]
        return [a for a in got if names is None or a["action"] in names]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OneBotBotTest(PlatformCase):
    adapter = "aiocqhttp"
    pipeline_name = "qq"
    output_misc = {"quote-origin": False, "at-sender": True}
    ob = None
    serial = 0

    @classmethod
    def setUpClass(cls):
        cls.ob = FakeOneBot()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.ob.stop()

    def setUp(self):
        super().setUp()
        OneBotBotTest.serial += 1
        # A fresh account per test: the fake keeps its counters per self_id.
        self.self_id = SELF_ID + OneBotBotTest.serial
        self.port = free_port()

    def bot(self, token="", pipeline=None):
        cfg = {"host": "127.0.0.1", "port": self.port, "access-token": token}
        return self.platform_bot(cfg, pipeline=pipeline)

    def connect(self, token=None, heartbeat_ms=15000, self_id=None, path="/ws"):
        self_id = self_id or self.self_id
        body = {"url": "ws://127.0.0.1:%d%s" % (self.port, path), "self_id": self_id,
                "heartbeat_ms": heartbeat_ms, "reconnect_ms": 100}
        if token is not None:
            body["access_token"] = token
        self.ob.control("POST", "/_control/connect", body)
        self.addCleanup(lambda: self.ob.control("POST", "/_control/disconnect",
                                                {"self_id": self_id, "mode": "abrupt"}))

    def connected(self, connects=1, timeout=10):
        state = wait_until(lambda: (lambda s: s["connected"] and s["connects"] >= connects and s)(
            self.ob.state(self.self_id)), timeout)
        self.assertTrue(state, self.ob.state(self.self_id))
        return state

    def running(self, bot, account=None):
        def check():
            data = self.status(bot)
            ok = data["runtime"]["status"] == "running"
            if account is not None:
                ok = ok and data["adapter_runtime_values"].get("bot_account_id") == account
            return ok and data
        data = wait_until(check, 10)
        self.assertTrue(data, "bot did not reach running: %r" % self.status(bot))
        return data

    def say(self, message, message_type="private", user_id=4242, group_id=None):
        body = {"self_id": self.self_id, "message_type": message_type, "user_id": user_id,
                "message": message}
        if group_id is not None:
            body["group_id"] = group_id
        return self.ob.control("POST", "/_control/message", body)

    def raw(self, text):
        self.ob.control("POST", "/_control/raw", {"self_id": self.self_id, "text": text})

    def sends(self, count, timeout=10):
        got = wait_until(lambda: (lambda a: len(a) >= count and a)(self.ob.actions(self.self_id)),
                         timeout)
        self.assertTrue(got, "expected %d send actions, got %r" % (
            count, self.ob.actions(self.self_id, None)))
        return got

    @staticmethod
    def text_of(action):
        return "".join(s["data"].get("text", "") for s in action["params"]["message"]
                       if s["type"] == "text")

    def configured_pipeline(self, **sections):
        """A pipeline of the fake model with `sections` (trigger={...}, output={...}) merged in."""
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test")
        config = {"ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}},
                  "output": {"misc": dict(self.output_misc)}}
        for name, value in sections.items():
            config[name] = dict(config.get(name, {}), **value)
        return self.make_pipeline(name=self.pipeline_name, config=config)

    def ready(self, token=None, pipeline=None, **kw):
        bot = self.bot(token or "", pipeline=pipeline)
        self.running(bot)
        self.connect(token, **kw)
        self.connected()
        self.running(bot, str(self.self_id))
        return bot

    def test_private_message_gets_a_model_reply_and_account_id_is_known(self):
        self.ready()
        self.say([{"type": "text", "data": {"text": "hello onebot"}}])
        action = self.sends(1)[0]
        self.assertEqual(action["action"], "send_private_msg")
        self.assertEqual(action["params"]["user_id"], 4242)
        self.assertIn("echo: hello onebot", self.text_of(action))
        self.assertIsNotNone(action["response"])  # answered by the fake, matched by echo
        self.assertEqual(action["response"]["retcode"], 0)
        self.assertIn("hello onebot", json.dumps(self.llm.chat_requests()[0]["body"]))

    def test_a_quoted_message_goes_to_the_model_with_the_question(self):
        self.ready()
        quoted = self.say([{"type": "text", "data": {"text": "the meeting moved to room 7"}}],
                          user_id=5151)["message_id"]
        self.sends(1)
        self.llm.reset()
        self.say([{"type": "reply", "data": {"id": str(quoted)}},
                  {"type": "text", "data": {"text": "where is it now?"}}])
        self.sends(2)
        lookups = self.ob.actions(self.self_id, ("get_msg",))
        self.assertEqual([a["params"] for a in lookups], [{"message_id": quoted}])
        body = json.dumps(self.llm.chat_requests()[0]["body"]["messages"][-1])
        self.assertIn("the meeting moved to room 7", body)
        self.assertIn("where is it now?", body)
        # A quote the implementation cannot find: the message goes on without it.
        self.llm.reset()
        self.say([{"type": "reply", "data": {"id": "987654"}},
                  {"type": "text", "data": {"text": "and this one?"}}])
        self.sends(3)
        self.assertIn("and this one?",
                      json.dumps(self.llm.chat_requests()[0]["body"]["messages"][-1]))

    def test_an_unanswered_quote_lookup_holds_the_message_five_seconds_at_most(self):
        self.ready()
        quoted = self.say("remember the milk", user_id=5151)["message_id"]
        self.sends(1)
        self.llm.reset()
        self.ob.control("POST", "/_control/fail", {"self_id": self.self_id, "action": "get_msg",
                                                   "silent": True})
        started = time.monotonic()
        self.say("[CQ:reply,id=%d]did I forget something?" % quoted)
        self.sends(2, timeout=15)
        waited = time.monotonic() - started
        self.assertGreaterEqual(waited, 4.0)
        self.assertLess(waited, 12.0)
        body = json.dumps(self.llm.chat_requests()[0]["body"]["messages"])
        self.assertIn("did I forget something?", body)
        self.assertNotIn("remember the milk", body)

    def test_combine_quote_message_off_leaves_the_quote_out(self):
        pipeline = self.configured_pipeline(trigger={"misc": {"combine-quote-message": False}})
        self.ready(pipeline=pipeline)
        quoted = self.say("a secret plan", user_id=5151)["message_id"]
        self.sends(1)
        self.llm.reset()
        self.say("[CQ:reply,id=%d]what was that?" % quoted)
        self.sends(2)
        body = json.dumps(self.llm.chat_requests()[0]["body"]["messages"])
        self.assertIn("what was that?", body)
        self.assertNotIn("a secret plan", body)

    def test_a_long_reply_goes_as_one_forward_message(self):
        pipeline = self.configured_pipeline(
            output={"long-text-processing": {"threshold": 100, "strategy": "forward"}})
        self.ready(pipeline=pipeline)
        question = "长文本 " * 40 + "🙂 end"
        self.say("[CQ:at,qq=%d] %s" % (self.self_id, question), "group", 4242, 778)
        forwards = wait_until(lambda: self.ob.actions(self.self_id, ("send_group_forward_msg",)),
                              10)
        self.assertTrue(forwards, self.ob.actions(self.self_id, None))
        forward = forwards[0]
        self.assertEqual(forward["params"]["group_id"], 778)
        nodes = forward["params"]["messages"]
        self.assertEqual(len(nodes), 1)
        data = nodes[0]["data"]
        self.assertEqual((data["uin"], data["user_id"]), (str(self.self_id), str(self.self_id)))
        text = "".join(s["data"]["text"] for s in data["content"] if s["type"] == "text")
        self.assertIn("echo: " + question.strip(), text)
        self.assertEqual(forward["response"]["retcode"], 0)
        time.sleep(0.3)
        self.assertEqual(len(self.ob.actions(self.self_id)), 0)  # nothing else was sent
        # A short reply is an ordinary message.
        self.say("[CQ:at,qq=%d] short" % self.self_id, "group", 4242, 778)
        wait_until(lambda: self.ob.actions(self.self_id), 10)
        self.assertIn("echo: short", self.text_of(self.ob.actions(self.self_id)[0]))

    def test_without_forward_actions_a_long_reply_is_sent_normally(self):
        pipeline = self.configured_pipeline(
            output={"long-text-processing": {"threshold": 20, "strategy": "forward"}})
        bot = self.bot(pipeline=pipeline)
        self.running(bot)
        body = {"url": "ws://127.0.0.1:%d/ws" % self.port, "self_id": self.self_id,
                "heartbeat_ms": 15000, "reconnect_ms": 100, "forward": False}
        self.ob.control("POST", "/_control/connect", body)
        self.addCleanup(lambda: self.ob.control("POST", "/_control/disconnect",
                                                {"self_id": self.self_id, "mode": "abrupt"}))
        self.connected()
        self.running(bot, str(self.self_id))
        self.say([{"type": "text", "data": {"text": "please answer at some length"}}])
        action = self.sends(1)[0]
        self.assertEqual(action["action"], "send_private_msg")
        self.assertIn("echo: please answer at some length", self.text_of(action))
        tried = self.ob.actions(self.self_id, ("send_private_forward_msg",))
        self.assertEqual(len(tried), 1)
        self.assertEqual(tried[0]["response"]["retcode"], 1404)
        self.assertTrue(wait_until(lambda: any("forward message" in l["text"]
                                               for l in self.logs(bot)), 5), self.logs(bot))

    def test_group_message_needs_a_mention_of_the_bot(self):
        self.ready()
        self.say([{"type": "text", "data": {"text": "just chatting"}}], "group", 4242, 777)
        self.say([{"type": "at", "data": {"qq": "999"}}, {"type": "text", "data": {"text": " hi"}}],
                 "group", 4242, 777)
        # The CQ-string form, mentioning the bot.
        self.say("[CQ:at,qq=%d] are you there &#91;ok&#93;" % self.self_id, "group", 4242, 777)
        action = self.sends(1)[0]
        self.assertEqual(action["action"], "send_group_msg")
        self.assertEqual(action["params"]["group_id"], 777)
        segments = action["params"]["message"]
        self.assertIn({"type": "at", "data": {"qq": "4242"}}, segments)  # at-sender
        self.assertIn("are you there [ok]", self.text_of(action))
        time.sleep(0.5)
        self.assertEqual(len(self.ob.actions(self.self_id)), 1)
        prompts = json.dumps([r["body"] for r in self.llm.chat_requests()])
        self.assertNotIn("just chatting", prompts)
        self.assertNotIn(" hi", prompts.replace("are you there", ""))

    def test_own_messages_are_ignored(self):
        self.ready()
        self.ob.control("POST", "/_control/message_sent",
                        {"self_id": self.self_id, "message_type": "private", "user_id": 4242,
                         "message": "my own words"})
        self.say("from myself", "private", self.self_id)
        self.say("from someone")
        self.sends(1)
        time.sleep(0.3)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        self.assertNotIn("my own words", json.dumps(self.llm.chat_requests()))

    def test_two_accounts_each_answer_their_own_chats(self):
        bot = self.ready()
        first = self.self_id
        second = first + 50000
        self.connect(self_id=second)
        self.assertTrue(wait_until(lambda: self.ob.state(second)["connected"], 10))
        self.running(bot, str(second))  # the newest account is the one the status names
        self.say("to the first account", "group", 4242, 777)  # no mention: ignored
        self.say([{"type": "at", "data": {"qq": str(first)}},
                  {"type": "text", "data": {"text": " first"}}], "group", 4242, 777)
        self.self_id = second
        self.say([{"type": "at", "data": {"qq": str(second)}},
                  {"type": "text", "data": {"text": " second"}}], "group", 4343, 888)
        on_second = self.sends(1)
        self.self_id = first
        on_first = self.sends(1)
        self.assertEqual(on_first[0]["params"]["group_id"], 777)
        self.assertIn("first", self.text_of(on_first[0]))
        self.assertEqual(on_second[0]["params"]["group_id"], 888)
        self.assertIn("second", self.text_of(on_second[0]))
        time.sleep(0.3)
        self.assertEqual(len(self.ob.actions(first)), 1)
        self.assertEqual(len(self.ob.actions(second)), 1)

    def test_send_message_to_a_person_and_a_group(self):
        bot = self.ready()
        url = "/api/v1/platform/bots/%s/send_message" % bot
        status, resp, _ = self.as_key("POST", url, {
            "target_type": "person", "target_id": "4242",
            "message_chain": [{"type": "Plain", "text": "private note"}]})
        data = self.assertOk(status, resp)
        self.assertTrue(data["sent"])
        status, resp, _ = self.as_key("POST", url, {
            "target_type": "group", "target_id": "777",
            "message_chain": [{"type": "At", "target": "4242"},
                              {"type": "Plain", "text": " announcement"}]})
        group_data = self.assertOk(status, resp)
        first, second = self.sends(2)
        self.assertEqual(first["action"], "send_private_msg")
        self.assertEqual(first["params"], {"user_id": 4242, "message": [
            {"type": "text", "data": {"text": "private note"}}]})
        self.assertEqual(second["action"], "send_group_msg")
        self.assertEqual(second["params"], {"group_id": 777, "message": [
            {"type": "at", "data": {"qq": "4242"}},
            {"type": "text", "data": {"text": " announcement"}}]})
        self.assertEqual(str(data.get("message_id")),
                         str(first["response"]["data"]["message_id"]))
        self.assertEqual(str(group_data.get("message_id")),
                         str(second["response"]["data"]["message_id"]))
        # The implementation refuses: 502 with its text.
        self.ob.control("POST", "/_control/fail", {"self_id": self.self_id, "action": "*",
                                                   "retcode": 100, "message": "群已被禁言"})
        status, resp, _ = self.as_key("POST", url, {
            "target_type": "group", "target_id": "777",
            "message_chain": [{"type": "Plain", "text": "x"}]})
        self.assertError(status, resp, 502, "群已被禁言")
        # A target that is no QQ number is refused before anything is sent.
        status, resp, _ = self.as_key("POST", url, {
            "target_type": "person", "target_id": "bob",
            "message_chain": [{"type": "Plain", "text": "x"}]})
        self.assertEqual(status, 400, resp)

    def test_token_is_checked(self):
        bot = self.bot("s3cret-token")
        self.running(bot)
        self.connect(None)
        self.assertTrue(wait_until(
            lambda: self.ob.state(self.self_id)["last_handshake_status"] == 401, 5))
        self.connect("wrong-token")
        self.assertTrue(wait_until(
            lambda: self.ob.state(self.self_id)["last_handshake_status"] == 403, 5))
        state = self.ob.state(self.self_id)
        self.assertFalse(state["connected"])
        self.assertEqual(state["connects"], 0)
        status, _, _ = self.srv.req("GET", "/healthz")
        self.assertEqual(status, 200)
        self.assertEqual(self.llm.chat_requests(), [])
        logs = json.dumps(self.logs(bot))
        self.assertNotIn("s3cret-token", logs)
        self.assertNotIn("wrong-token", logs)
        self.connect("s3cret-token")
        self.connected()
        self.say("with the right token")
        self.assertIn("with the right token", self.text_of(self.sends(1)[0]))

    def test_reconnects_after_a_drop_and_still_answers(self):
        bot = self.ready()
        self.ob.control("POST", "/_control/disconnect",
                        {"self_id": self.self_id, "mode": "abrupt", "reconnect": True})
        self.connected(connects=2)
        self.running(bot, str(self.self_id))
        self.say("after the drop")
        self.assertIn("after the drop", self.text_of(self.sends(1)[0]))

    def test_a_silent_connection_is_dropped_and_comes_back(self):
        bot = self.bot()
        self.running(bot)
        self.connect(heartbeat_ms=0)  # the fake sends no heartbeats of its own
        self.connected()
        # One heartbeat announcing 300 ms, then silence: dropped after about two intervals.
        self.raw(json.dumps({"time": int(time.time()), "self_id": self.self_id,
                             "post_type": "meta_event", "meta_event_type": "heartbeat",
                             "status": {"online": True, "good": True}, "interval": 300}))
        self.connected(connects=2, timeout=10)
        self.assertTrue(wait_until(lambda: any("no heartbeat" in l["text"]
                                               for l in self.logs(bot)), 5), self.logs(bot))
        self.say("still here")
        self.assertIn("still here", self.text_of(self.sends(1)[0]))

    def test_disabling_closes_the_connection_and_stops_answering(self):
        bot = self.ready()
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: not self.ob.state(self.self_id)["connected"], 5))
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        # The port is closed: the fake's redials fail.
        attempts = self.ob.state(self.self_id)["attempts"]
        self.assertTrue(wait_until(
            lambda: self.ob.state(self.self_id)["attempts"] >= attempts + 2, 5))
        self.assertFalse(self.ob.state(self.self_id)["connected"])
        self.assertEqual(self.llm.chat_requests(), [])
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": True})
        self.running(bot)
        self.connected(connects=2)
        self.say("back again")
        self.assertIn("back again", self.text_of(self.sends(1)[0]))

    def test_the_bots_log_holds_the_message(self):
        bot = self.ready()
        self.say("remember this line")
        self.sends(1)
        entries = wait_until(lambda: [l for l in self.logs(bot)
                                      if "remember this line" in l["text"]
                                      and "message from" in l["text"]])
        self.assertTrue(entries, self.logs(bot))
        self.assertEqual(entries[0]["message_session_id"], "person_4242")

    def test_a_port_in_use_shows_in_the_status_without_a_crash(self):
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", self.port))
        blocker.listen(1)
        try:
            bot = self.bot()
            data = wait_until(lambda: (lambda d: d["runtime"]["status"] == "error" and d)(
                self.status(bot)), 10)
            self.assertTrue(data, self.status(bot))
            self.assertIn(str(self.port), data["runtime"]["error"])
            self.assertIn("retrying", data["runtime"]["error"])
            status, _, _ = self.srv.req("GET", "/healthz")
            self.assertEqual(status, 200)
        finally:
            blocker.close()
        # The retry finds the port free.
        self.running(bot)
        self.connect()
        self.connected()
        self.say("port is free")
        self.assertIn("port is free", self.text_of(self.sends(1)[0]))

    def test_bad_frames_do_not_break_the_bot(self):
        bot = self.ready()
        for text in ["not json", "[1,2]", "{}", '{"post_type":"message"}',
                     '{"post_type":"message","message_type":"private","user_id":"x",'
                     '"message":"y"}', "\"" + "a" * 100 + "\""]:
            self.raw(text)
        self.raw("{\"pad\":\"" + "x" * (2 << 20) + "\"}")  # over the 1 MiB frame limit
        self.say("after the garbage")
        self.assertIn("after the garbage", self.text_of(self.sends(1)[0]))
        self.assertEqual(self.ob.state(self.self_id)["connects"], 1)  # the connection was kept
        self.assertTrue(any("bad OneBot frame" in l["text"] for l in self.logs(bot)))
        # A frame over the transport's hard limit closes that connection (1009) while the fake
        # is still sending it (its control call then fails); the fake redials.
        try:
            self.raw("{\"pad\":\"" + "x" * (5 << 20) + "\"}")
        except urllib.error.HTTPError:
            pass
        self.connected(connects=2)
        self.say("after the big one")
        self.sends(2)
        # A flood of garbage closes the connection (1008); the bot answers after the redial.
        sent = 0
        for _ in range(60):
            try:
                self.raw("garbage")
            except urllib.error.HTTPError:
                break  # the server closed the connection
            sent += 1
        self.assertGreater(sent, 50)
        self.connected(connects=3)
        self.assertEqual(self.ob.state(self.self_id)["last_close_code"], 1008)
        self.say("after the flood")
        self.assertIn("after the flood", self.text_of(self.sends(3)[2]))
        status, _, _ = self.srv.req("GET", "/healthz")
        self.assertEqual(status, 200)


if __name__ == "__main__":
    unittest.main()
