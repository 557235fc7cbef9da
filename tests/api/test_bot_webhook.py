"""Running bots end to end through the generic `webhook` adapter: signed messages POSTed to
/bots/{uuid} go through the bot's pipeline to the fake model (tests/fakes/fake_llm.py), and the
reply is POSTed, signed, to the bot's callback URL. Also the event log, group rules, ban words,
rate limits, memory across turns and restarts, `!reset`, failure hints and send_message."""

import json
import time
import unittest

from harness import ServerTestCase, unknown_uuid
from fake_clients import CallbackReceiver, FakeAgents, FakeProvider, sign, wait_until

SECRET = "whsec_test_secret"


class WebhookBotCase(ServerTestCase):
    server_env = {"RUNTIME__BAN_WORDS": "forbiddenword"}
    fake = None
    callback = None

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeProvider()
        cls.callback = CallbackReceiver(SECRET)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.fake.stop()
        cls.callback.stop()

    def setUp(self):
        self.fake.reset()
        self.callback.clear()
        self.callback.status = 200

    # Helpers

    def model(self):
        provider = self.make_provider(base_url=self.fake.base + "/v1", api_keys=["sk-good-1"])
        return self.make_model(provider, name="gpt-test")

    def pipeline(self, **sections):
        config = {"ai": {"runner": {"runner": "local-agent"},
                         "local-agent": {"model": {"primary": self.model(), "fallbacks": []},
                                         "max-round": 10,
                                         "prompt": [{"role": "system", "content": "Be brief."}]}}}
        for name, value in sections.items():
            config[name.replace("_", "-")] = value
        return self.make_pipeline(name="p", config=config)

    def bot(self, pipeline, enable=True, secret=SECRET):
        return self.make_bot(adapter="webhook", enable=enable, use_pipeline_uuid=pipeline,
                             config={"secret": secret, "callback_url": self.callback.url})

    def post(self, bot, body, secret=SECRET, timestamp=None, raw=None):
        data = raw if raw is not None else json.dumps(body).encode()
        ts = int(time.time()) if timestamp is None else timestamp
        headers = {"Content-Type": "application/json", "X-Switchboard-Timestamp": str(ts),
                   "X-Switchboard-Signature": sign(secret, ts, data)}
        return self.srv.req("POST", "/bots/" + bot, raw_body=data, headers=headers)

    def message(self, text, sender="u1", chat_type="person", chat_id=None, extra=None, mid=None):
        # Every message its own id: the adapter handles a repeated id only once.
        mid = mid or "m-" + unknown_uuid()
        chain = [{"type": "Plain", "text": text}]
        if extra:
            chain = extra + chain
        return {"message_id": mid, "sender": {"id": sender, "name": "Ann"},
                "chat": {"type": chat_type, "id": chat_id or sender}, "message_chain": chain}

    def say(self, bot, text, **kw):
        status, resp, _ = self.post(bot, self.message(text, **kw))
        self.assertEqual(status, 200, resp)
        return resp

    def wait_running(self, bot):
        def running():
            data = self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]
            return data["runtime"]["status"] == "running" and data
        data = wait_until(running, 10)
        self.assertTrue(data, "bot did not reach running")
        return data

    def logs(self, bot):
        return self.ok("POST", "/api/v1/platform/bots/%s/logs" % bot,
                       {"from_index": -1, "max_count": 1000})["logs"]

    def replies(self, count, timeout=10):
        got = self.callback.wait_for(count, timeout)
        self.assertGreaterEqual(len(got), count, got)
        return got

    def reply_text(self, received):
        return "".join(e.get("text", "") for e in received["body"]["message_chain"]
                       if e["type"] == "Plain")


class WebhookConversationTest(WebhookBotCase):

    def test_private_message_gets_a_signed_model_reply_and_is_logged(self):
        bot = self.bot(self.pipeline())
        data = self.wait_running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], bot)
        self.say(bot, "hello there", mid="m1")
        got = self.replies(1)[0]
        self.assertTrue(got["verified"], got)
        self.assertEqual(got["body"]["bot_uuid"], bot)
        self.assertEqual(got["body"]["target"], {"type": "person", "id": "u1"})
        self.assertEqual(got["body"].get("reply_to"), "m1")
        self.assertIn("echo: hello there", self.reply_text(got))
        chats = self.fake.chat_requests()
        self.assertEqual(len(chats), 1)
        messages = chats[0]["body"]["messages"]
        self.assertEqual(messages[0], {"role": "system", "content": "Be brief."})
        self.assertIn("hello there", json.dumps(messages[-1]))
        logs = wait_until(lambda: [l for l in self.logs(bot) if l["text"].startswith("reply")])
        self.assertTrue(logs)
        self.assertRegex(logs[0]["text"], r"^reply \(model [0-9a-f-]{36}, \d+ ms\): .*echo: hello there")
        entries = self.logs(bot)
        received = [l for l in entries if "hello there" in l["text"] and "message from" in l["text"]]
        self.assertEqual(len(received), 1, entries)
        self.assertEqual(received[0]["message_session_id"], "person_u1")
        self.assertEqual(received[0]["level"], "info")
        seqs = [l["seq_id"] for l in entries]
        self.assertEqual(seqs, sorted(seqs))

    def test_history_goes_with_the_second_turn_and_reset_clears_it(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        self.say(bot, "first", sender="u2")
        self.replies(1)
        self.say(bot, "second", sender="u2")
        self.replies(2)
        second = self.fake.chat_requests()[-1]["body"]["messages"]
        texts = json.dumps(second)
        self.assertIn("first", texts)
        self.assertIn("echo: first", texts)
        self.assertIn("second", texts)
        self.say(bot, "!reset", sender="u2")
        got = self.replies(3)
        self.assertIn("reset", self.reply_text(got[2]))
        self.say(bot, "third", sender="u2")
        self.replies(4)
        third = json.dumps(self.fake.chat_requests()[-1]["body"]["messages"])
        self.assertNotIn("first", third)
        self.assertEqual(len(self.fake.chat_requests()), 3)  # !reset never reached the model

    def test_help_command_answers_without_the_model(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        self.say(bot, "!help", sender="u3")
        got = self.replies(1)
        self.assertIn("!reset", self.reply_text(got[0]))
        self.assertEqual(self.fake.chat_requests(), [])

    def test_group_rules_decide(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        # Default rules: at the bot, or the "ai" prefix.
        self.say(bot, "just chatting", sender="u4", chat_type="group", chat_id="g1", mid="g-1")
        self.say(bot, "ai what time is it", sender="u4", chat_type="group", chat_id="g1",
                 mid="g-2")
        self.say(bot, "are you there", sender="u4", chat_type="group", chat_id="g1",
                 extra=[{"type": "At", "target": bot}], mid="g-3")
        got = self.replies(2)
        time.sleep(0.3)
        self.assertEqual(len(self.callback.messages()), 2)
        texts = [self.reply_text(g) for g in got]
        self.assertTrue(any("what time is it" in t for t in texts), texts)
        self.assertTrue(any("are you there" in t for t in texts), texts)
        for g in got:
            self.assertEqual(g["body"]["target"], {"type": "group", "id": "g1"})
        prompts = json.dumps([r["body"]["messages"][-1] for r in self.fake.chat_requests()])
        self.assertNotIn("just chatting", prompts)
        self.assertNotIn("ai what", prompts)  # the prefix is stripped

    def test_message_aggregation_merges_a_burst(self):
        bot = self.bot(self.pipeline(trigger={"message-aggregation": {"enabled": True,
                                                                      "delay": 0.6}}))
        self.wait_running(bot)
        self.say(bot, "part one", sender="u11", mid="a1")
        self.say(bot, "part two", sender="u11", mid="a2")
        got = self.replies(1)
        time.sleep(0.8)
        self.assertEqual(len(self.callback.messages()), 1)
        chats = self.fake.chat_requests()
        self.assertEqual(len(chats), 1)
        last = json.dumps(chats[0]["body"]["messages"][-1])
        self.assertIn("part one", last)
        self.assertIn("part two", last)
        self.assertEqual(got[0]["body"].get("reply_to"), "a2")

    def test_force_delay_holds_the_reply(self):
        bot = self.bot(self.pipeline(output={"force-delay": {"min": 1, "max": 1}}))
        self.wait_running(bot)
        start = time.monotonic()
        self.say(bot, "slowly", sender="u12")
        self.replies(1)
        self.assertGreaterEqual(time.monotonic() - start, 0.9)

    def test_ban_words_refuse_without_the_model(self):
        bot = self.bot(self.pipeline(safety={"content-filter": {"scope": "all",
                                                                "check-sensitive-words": True}}))
        self.wait_running(bot)
        self.say(bot, "this has forbiddenword inside", sender="u5")
        got = self.replies(1)
        self.assertNotIn("forbiddenword", self.reply_text(got[0]))
        self.assertEqual(self.fake.chat_requests(), [])

    def test_rate_limit_drops_over_the_limit(self):
        bot = self.bot(self.pipeline(safety={"rate-limit": {"window-length": 60, "limitation": 1,
                                                            "strategy": "drop"}}))
        self.wait_running(bot)
        self.say(bot, "one", sender="u6", mid="r1")
        self.replies(1)
        self.say(bot, "two", sender="u6", mid="r2")
        time.sleep(0.5)
        self.assertEqual(len(self.callback.messages()), 1)
        self.assertEqual(len(self.fake.chat_requests()), 1)
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "rate limit" in l["text"]]))

    def test_model_failure_gives_the_configured_hint(self):
        bot = self.bot(self.pipeline(output={"misc": {"exception-handling": "show-hint",
                                                      "failure-hint": "Sorry, try later."}}))
        self.wait_running(bot)
        self.fake.script_next(path="/v1/chat/completions", times=10, preset="openai_500")
        self.say(bot, "will fail", sender="u7")
        got = self.replies(1, timeout=20)
        self.assertIn("Sorry, try later.", self.reply_text(got[0]))
        errors = wait_until(lambda: [l for l in self.logs(bot) if l["level"] == "error"])
        self.assertTrue(errors)


class WebhookEdgeTest(WebhookBotCase):

    def test_forged_unsigned_and_stale_calls_are_refused_before_any_work(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        # The lifecycle entries are committed a moment after the status changes.
        self.assertTrue(wait_until(lambda: any("running" in l["text"] for l in self.logs(bot))))
        before = len(self.logs(bot))
        body = json.dumps(self.message("hi")).encode()
        status, resp, _ = self.srv.req("POST", "/bots/" + bot, raw_body=body)
        self.assertError(status, resp, 401)
        status, resp, _ = self.post(bot, self.message("hi"), secret="wrong-secret")
        self.assertError(status, resp, 401)
        status, resp, _ = self.post(bot, self.message("hi"), timestamp=int(time.time()) - 3600)
        self.assertError(status, resp, 401)
        time.sleep(0.3)
        self.assertEqual(self.fake.chat_requests(), [])
        self.assertEqual(len(self.logs(bot)), before)

    def test_a_replayed_message_is_handled_once(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        body = self.message("only once", sender="u20", mid="dup-1")
        for _ in range(3):
            status, resp, _ = self.post(bot, body)
            self.assertEqual(status, 200, resp)
        self.replies(1)
        time.sleep(0.5)
        self.assertEqual(len(self.callback.messages()), 1)
        self.assertEqual(len(self.fake.chat_requests()), 1)

    def test_malformed_signed_body_is_400_naming_the_field(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        status, resp, _ = self.post(bot, None, raw=b"{not json")
        self.assertError(status, resp, 400)
        msg = self.message("x")
        msg["message_chain"] = [{"type": "Sticker"}]
        status, resp, _ = self.post(bot, msg)
        self.assertError(status, resp, 400, "message_chain[0].type")

    def test_unknown_disabled_and_re_enabled_bots(self):
        status, resp, _ = self.post(unknown_uuid(), self.message("hi"))
        self.assertError(status, resp, 404)
        pipe = self.pipeline()
        bot = self.bot(pipe, enable=False)
        status, resp, _ = self.post(bot, self.message("hi"))
        self.assertError(status, resp, 409)
        data = self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]
        self.assertEqual(data["runtime"]["status"], "stopped")
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": True})
        self.wait_running(bot)
        self.say(bot, "now on", sender="u8")
        self.replies(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        status, resp, _ = self.post(bot, self.message("off again"))
        self.assertError(status, resp, 409)
        logs = [l["text"] for l in self.logs(bot)]
        self.assertTrue(any("starting" in t for t in logs), logs)
        self.assertTrue(wait_until(lambda: any(l["text"] == "stopped" for l in self.logs(bot))))

    def test_send_message_reaches_the_callback_or_says_why_not(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        body = {"target_type": "group", "target_id": "g9",
                "message_chain": [{"type": "Plain", "text": "announcement"}]}
        status, resp, _ = self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, body)
        self.assertEqual(self.assertOk(status, resp)["sent"], True)
        got = self.replies(1)[0]
        self.assertTrue(got["verified"])
        self.assertEqual(got["body"]["target"], {"type": "group", "id": "g9"})
        self.assertNotIn("reply_to", got["body"])
        self.callback.status = 500
        status, resp, _ = self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, body)
        self.assertError(status, resp, 502)
        stopped = self.bot(self.pipeline(), enable=False)
        status, resp, _ = self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % stopped,
                                      body)
        self.assertError(status, resp, 409)

    def test_pipeline_change_reaches_a_running_bot(self):
        pipe = self.pipeline()
        bot = self.bot(pipe)
        self.wait_running(bot)
        self.ok("PUT", "/api/v1/pipelines/" + pipe,
                {"config": {"output": {"misc": {"exception-handling": "show-hint",
                                                "failure-hint": "Changed hint."}}}})
        self.fake.script_next(path="/v1/chat/completions", times=10, preset="openai_500")
        self.say(bot, "fail please", sender="u9")
        got = self.replies(1, timeout=20)
        self.assertIn("Changed hint.", self.reply_text(got[0]))


class ExternalRunnerTest(WebhookBotCase):
    """Pipelines whose runner is an external agent service instead of a model."""
    agents = None

    @classmethod
    def setUpClass(cls):
        cls.agents = FakeAgents()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.agents.stop()

    def test_dify_answers_and_keeps_its_conversation(self):
        pipe = self.make_pipeline(name="dify", config={"ai": {
            "runner": {"runner": "dify-service-api"},
            "dify-service-api": {"base-url": self.agents.base + "/v1", "app-type": "chat",
                                 "api-key": "app-chat-test", "timeout": 10}}})
        bot = self.bot(pipe)
        self.wait_running(bot)
        self.say(bot, "first question", sender="d1")
        self.assertIn("echo(1): first question", self.reply_text(self.replies(1)[0]))
        self.say(bot, "second question", sender="d1")
        self.assertIn("echo(2): second question", self.reply_text(self.replies(2)[1]))
        self.assertEqual(self.fake.chat_requests(), [])
        self.say(bot, "!reset", sender="d1")
        self.replies(3)
        self.say(bot, "after reset", sender="d1")  # a new Dify conversation: turn 1 again
        self.assertIn("echo(1): after reset", self.reply_text(self.replies(4)[3]))

    def test_n8n_answers_with_its_output_key(self):
        pipe = self.make_pipeline(name="n8n", config={"ai": {
            "runner": {"runner": "n8n-service-api"},
            "n8n-service-api": {"webhook-url": self.agents.base + "/webhook/header/json",
                                "auth-type": "header", "header-name": "X-N8n-Token",
                                "header-value": "tok-123", "output-key": "response"}}})
        bot = self.bot(pipe)
        self.wait_running(bot)
        self.say(bot, "to the workflow", sender="n1")
        self.assertIn("echo: to the workflow", self.reply_text(self.replies(1)[0]))


class WebhookRestartTest(WebhookBotCase):

    def test_memory_and_logs_survive_a_restart(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        self.say(bot, "remember the word banana", sender="u10")
        self.replies(1)
        wait_until(lambda: [l for l in self.logs(bot) if l["text"].startswith("reply")])
        before = self.logs(bot)
        self.srv.restart()
        self.wait_running(bot)
        after = self.logs(bot)
        self.assertGreaterEqual(len(after), len(before))
        self.assertEqual(after[:len(before)], before)
        self.say(bot, "what was the word", sender="u10")
        self.replies(2)
        texts = json.dumps(self.fake.chat_requests()[-1]["body"]["messages"])
        self.assertIn("banana", texts)

    def test_sealed_secret_is_hidden_and_still_verifies_after_a_restart(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        shown = self.ok("GET", "/api/v1/platform/bots/%s?include_secret=false" % bot)["bot"]
        self.assertNotIn(SECRET, json.dumps(shown))
        self.srv.restart()
        self.wait_running(bot)
        # The secret came back from the database through the data directory's key: signatures
        # made with it still verify, and forged ones still fail.
        self.say(bot, "hello after restart", sender="u11")
        received = self.replies(1)
        self.assertTrue(received[-1]["verified"], received[-1])
        status, resp, _ = self.post(bot, self.message("forged"), secret="not-the-secret")
        self.assertError(status, resp, 401)
        db = self.srv.data_dir + "/switchboard.db"
        for path in (db, db + "-wal"):
            try:
                with open(path, "rb") as f:
                    self.assertNotIn(SECRET.encode(), f.read(), path)
            except FileNotFoundError:
                pass


if __name__ == "__main__":
    unittest.main()
