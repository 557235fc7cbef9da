"""A Telegram bot end to end: the real binary long-polls tests/fakes/fake_telegram.py (the Bot
API from the protocol notes, at the bot's `api_base_url`) and answers through the fake model of
tests/fakes/fake_llm.py. Private replies, group rules, ban words, rate limits, memory across turns
and a restart, `!reset`, send_message, a model failure's hint, webhook mode, and that disabling a
bot stops its polling."""

import json
import time
import unittest

from harness import ServerTestCase
from fake_clients import FakeProvider, FakeTelegram, wait_until

BOT_ID = 5550001


def utf16(text):
    """Telegram's length: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


class TelegramBotTest(ServerTestCase):
    # Telegram only takes https webhooks; the fake records the URL and the test posts the updates.
    server_env = {"RUNTIME__BAN_WORDS": "forbiddenword",
                  "API__WEBHOOK_PREFIX": "https://bots.example.com"}
    llm = None
    tg = None
    tokens = 0

    @classmethod
    def setUpClass(cls):
        cls.llm = FakeProvider()
        cls.tg = FakeTelegram()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.llm.stop()
        cls.tg.stop()

    def setUp(self):
        self.llm.reset()
        TelegramBotTest.tokens += 1
        # A fresh bot id (and token) per test: the fake keeps state per token.
        self.bot_id = BOT_ID + TelegramBotTest.tokens
        self.tg_token = "%d:TESTtoken_%d" % (self.bot_id, TelegramBotTest.tokens)
        self.next_message = 100

    def pipeline(self, **sections):
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test")
        config = {"ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}},
                  "output": {"misc": {"quote-origin": False}}}
        for name, value in sections.items():
            config[name.replace("_", "-")] = dict(config.get(name.replace("_", "-"), {}), **value)
        return self.make_pipeline(name="tg", config=config)

    def bot(self, pipeline, **config):
        cfg = {"token": self.tg_token, "api_base_url": self.tg.base, "markdown_card": False}
        cfg.update(config)
        uuid = self.make_bot(adapter="telegram", enable=True, use_pipeline_uuid=pipeline,
                             config=cfg)
        self.addCleanup(lambda: self.as_user("DELETE", "/api/v1/platform/bots/" + uuid))
        return uuid

    def running(self, bot):
        def check():
            data = self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]
            return data["runtime"]["status"] == "running" and data
        data = wait_until(check, 10)
        self.assertTrue(data, "bot did not reach running")
        return data

    def user_message(self, text, chat_id=1001, chat_type="private", entities=None, **extra):
        self.next_message += 1
        chat = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = "Ann"
        else:
            chat["title"] = "Group"
        message = {"message_id": self.next_message, "date": int(time.time()), "chat": chat,
                   "from": {"id": 1001 if chat_type == "private" else 4242, "is_bot": False,
                            "first_name": "Ann"},
                   "text": text}
        if entities:
            message["entities"] = entities
        message.update(extra)
        self.tg.push(self.tg_token, {"message": message})

    def sent(self, count, timeout=10):
        got = wait_until(lambda: [s for s in self.tg.sent(self.tg_token)
                                  if s["method"].lower() == "sendmessage"][:count]
                         if len([s for s in self.tg.sent(self.tg_token)
                                 if s["method"].lower() == "sendmessage"]) >= count else None,
                         timeout)
        self.assertTrue(got, "expected %d sendMessage calls, got %r" % (
            count, self.tg.sent(self.tg_token)))
        return got

    def sends(self):
        return [s for s in self.tg.sent(self.tg_token) if s["method"].lower() == "sendmessage"]

    def slow_stream(self, words, delay_ms):
        """The model's next answer streams `words` one SSE chunk each, `delay_ms` apart."""
        def chunk(delta, finish=None):
            return "data: " + json.dumps({
                "id": "chatcmpl-slow", "object": "chat.completion.chunk", "created": 1,
                "model": "gpt-test", "choices": [{"index": 0, "delta": delta,
                                                  "finish_reason": finish}]}) + "\n\n"
        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks += [chunk({"content": w}) for w in words]
        chunks += [chunk({}, "stop"), "data: [DONE]\n\n"]
        self.llm.script_next(path="/v1/chat/completions", delay_ms=delay_ms, chunks=chunks)

    def test_stream_reply_edits_one_message_while_the_model_writes(self):
        bot = self.bot(self.pipeline(), **{"enable-stream-reply": True, "markdown_card": True})
        self.running(bot)
        words = ["word%d " % i for i in range(10)]
        self.slow_stream(words, 250)
        self.user_message("tell me slowly")
        full = "".join(words).strip()

        def calls():
            return [s for s in self.tg.sent(self.tg_token)
                    if s["method"] in ("sendMessage", "editMessageText")]
        done = wait_until(lambda: [c for c in calls() if c["method"] == "editMessageText"
                                   and c["parse_mode"] == "MarkdownV2"], 20)
        self.assertTrue(done, calls())
        time.sleep(0.5)
        got = calls()
        self.assertEqual(got[0]["method"], "sendMessage")  # one message, then edits of it
        self.assertTrue(all(c["method"] == "editMessageText" for c in got[1:]), got)
        self.assertGreaterEqual(len(got), 3, got)  # updated while written
        self.assertTrue(all(c["message_id"] == got[0]["message_id"] for c in got), got)
        self.assertEqual(got[-1]["parse_mode"], "MarkdownV2")  # the final reply as configured
        self.assertEqual(got[-1]["params"]["text"].replace("\\", ""), full)
        texts = [c["text"] for c in got[:-1]]
        for before, after in zip(texts, texts[1:]):
            self.assertTrue(after.startswith(before.rstrip()), texts)
        times = [c["time"] for c in got]
        self.assertLessEqual(len(got), 2 * (times[-1] - times[0]) + 3, times)  # paced

    def test_private_message_gets_a_model_reply_and_account_id_is_known(self):
        bot = self.bot(self.pipeline())
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], str(self.bot_id))
        self.user_message("hello telegram")
        reply = self.sent(1)[0]
        self.assertEqual(str(reply["chat_id"]), "1001")
        self.assertIn("echo: hello telegram", reply["text"])
        self.assertIn("hello telegram", json.dumps(self.llm.chat_requests()[0]["body"]))

    def replied_to(self, text):
        """A `reply_to_message` (Bot API Message) of an earlier message of someone else."""
        return {"message_id": 42, "date": int(time.time()) - 60,
                "chat": {"id": 1001, "type": "private", "first_name": "Ann"},
                "from": {"id": 777, "is_bot": False, "first_name": "Bob"}, "text": text}

    def test_a_quoted_message_goes_to_the_model_with_the_question(self):
        bot = self.bot(self.pipeline())
        self.running(bot)
        self.user_message("when does it leave?",
                          reply_to_message=self.replied_to("the train leaves at nine"))
        self.sent(1)
        last = json.dumps(self.llm.chat_requests()[0]["body"]["messages"][-1], ensure_ascii=False)
        self.assertIn("the train leaves at nine", last)
        self.assertIn("when does it leave?", last)
        # A selected part of the message (Bot API TextQuote) is what was quoted.
        self.llm.reset()
        self.user_message("which platform?",
                          reply_to_message=self.replied_to("the train leaves from platform 4"),
                          quote={"text": "platform 4", "position": 24})
        self.sent(2)
        last = json.dumps(self.llm.chat_requests()[0]["body"]["messages"][-1], ensure_ascii=False)
        self.assertIn("platform 4", last)
        self.assertNotIn("the train leaves", last)

    def test_combine_quote_message_off_leaves_the_quote_out(self):
        bot = self.bot(self.pipeline(trigger={"misc": {"combine-quote-message": False}}))
        self.running(bot)
        self.user_message("what was that?", reply_to_message=self.replied_to("a secret plan"))
        self.sent(1)
        body = json.dumps(self.llm.chat_requests()[0]["body"]["messages"])
        self.assertIn("what was that?", body)
        self.assertNotIn("a secret plan", body)

    def test_an_over_limit_reply_is_split_at_paragraphs_whatever_the_strategy(self):
        for strategy in ("none", "forward"):  # Telegram has no forward message: split too
            with self.subTest(strategy=strategy):
                self.llm.reset()
                self.tokens_for_subtest()
                bot = self.bot(self.pipeline(output={"long-text-processing": {
                    "threshold": 1000, "strategy": strategy}}))
                self.running(bot)
                paragraph = "这是一个很长的段落，带着表情🙂。" * 10
                text = ""
                while utf16(text + paragraph) < 3900:
                    text += paragraph + "\n"
                # 4094 units: a message Telegram lets a user send, whose echo is over 4096.
                text += "末" * (4094 - utf16(text))
                self.user_message(text)
                sends = self.sent(2, timeout=20)
                time.sleep(0.3)
                self.assertEqual(len(self.sends()), 2)
                pieces = [s["params"]["text"] for s in sends]
                for piece in pieces:
                    self.assertLessEqual(utf16(piece), 4096)
                self.assertTrue(pieces[0].endswith("。"), pieces[0][-20:])  # cut at a line break
                self.assertEqual("\n".join(pieces), "echo: " + text)

    def tokens_for_subtest(self):
        TelegramBotTest.tokens += 1
        self.bot_id = BOT_ID + TelegramBotTest.tokens
        self.tg_token = "%d:TESTtoken_%d" % (self.bot_id, TelegramBotTest.tokens)

    def test_group_rules_decide(self):
        bot = self.bot(self.pipeline())
        self.running(bot)
        self.user_message("just chatting", chat_id=-2001, chat_type="group")
        mention = "@test_bot_%d" % self.bot_id
        self.user_message(mention + " are you there", chat_id=-2001, chat_type="group",
                          entities=[{"type": "mention", "offset": 0, "length": len(mention)}])
        reply = self.sent(1)[0]
        self.assertEqual(str(reply["chat_id"]), "-2001")
        self.assertIn("are you there", reply["text"])
        time.sleep(0.3)
        self.assertEqual(len(self.sends()), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))

    def test_ban_words_and_rate_limit_act(self):
        bot = self.bot(self.pipeline(safety={"rate-limit": {"window-length": 60, "limitation": 2,
                                                            "strategy": "drop"},
                                             "content-filter": {"check-sensitive-words": True}}))
        self.running(bot)
        self.user_message("say forbiddenword please")
        notice = self.sent(1)[0]
        self.assertNotIn("forbiddenword", notice["text"])
        self.assertEqual(self.llm.chat_requests(), [])
        # The content filter comes before the rate limit: the refused message used no slot.
        self.user_message("one")
        self.user_message("two")
        self.user_message("three")
        self.sent(3)
        time.sleep(0.5)
        self.assertEqual(len(self.sends()), 3)
        prompts = json.dumps([r["body"] for r in self.llm.chat_requests()])
        self.assertEqual(len(self.llm.chat_requests()), 2)
        self.assertNotIn("three", prompts)

    def test_history_survives_a_restart_and_reset_clears_it(self):
        bot = self.bot(self.pipeline())
        self.running(bot)
        self.user_message("my cat is called Tom")
        self.sent(1)
        self.srv.restart()
        self.running(bot)
        self.user_message("what is my cat called")
        self.sent(2)
        asked = [r for r in self.llm.chat_requests()
                 if "what is my cat called" in json.dumps(r["body"]["messages"][-1])]
        self.assertEqual(len(asked), 1)
        self.assertIn("called Tom", json.dumps(asked[0]["body"]["messages"][:-1]))
        self.user_message("!reset")
        self.assertIn("reset", self.sent(3)[2]["text"])
        self.user_message("fresh start")
        self.sent(4)
        self.assertNotIn("Tom", json.dumps(self.llm.chat_requests()[-1]["body"]["messages"]))

    def test_send_message_reaches_telegram(self):
        bot = self.bot(self.pipeline())
        self.running(bot)
        body = {"target_type": "group", "target_id": "-3003",
                "message_chain": [{"type": "Plain", "text": "announcement"}]}
        status, resp, _ = self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, body)
        data = self.assertOk(status, resp)
        self.assertTrue(data["sent"])
        sent = self.sent(1)[0]
        self.assertEqual(str(sent["chat_id"]), "-3003")
        self.assertEqual(sent["text"], "announcement")
        self.assertEqual(str(data.get("message_id")), str(sent["message_id"]))
        # Telegram refuses: 502 with its reason.
        self.tg.control("POST", "/_control/fail", {"token": self.tg_token, "method": "sendMessage",
                                                   "error_code": 403, "times": 1,
                                                   "description": "Forbidden: bot was blocked"})
        status, resp, _ = self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, body)
        self.assertError(status, resp, 502, "blocked")
        self.assertNotIn(self.tg_token, json.dumps(resp))

    def test_model_failure_gives_the_configured_hint(self):
        bot = self.bot(self.pipeline(output={"misc": {"exception-handling": "show-hint",
                                                      "failure-hint": "Try again later."}}))
        self.running(bot)
        self.llm.script_next(path="/v1/chat/completions", times=10, preset="openai_500")
        self.user_message("fail")
        self.assertIn("Try again later.", self.sent(1, timeout=20)[0]["text"])

    def test_disabling_stops_polling_and_enabling_resumes(self):
        bot = self.bot(self.pipeline())
        self.running(bot)
        self.assertTrue(wait_until(lambda: self.tg.stats(self.tg_token)["active_polls"] == 1))
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.tg.stats(self.tg_token)["active_polls"] == 0, 5))
        calls = self.tg.stats(self.tg_token)["calls"].get("getupdates", 0)
        time.sleep(1.0)
        self.assertEqual(self.tg.stats(self.tg_token)["calls"].get("getupdates", 0), calls)
        data = self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]
        self.assertEqual(data["runtime"]["status"], "stopped")
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": True})
        self.running(bot)
        self.user_message("back again")
        self.sent(1)

    def test_a_refused_token_shows_as_an_error_without_the_token(self):
        self.tg.control("POST", "/_control/revoke", {"token": self.tg_token})
        bot = self.bot(self.pipeline())
        def errored():
            data = self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]
            return data["runtime"]["status"] == "error" and data
        data = wait_until(errored, 10)
        self.assertTrue(data)
        self.assertIn("401", data["runtime"]["error"])
        self.assertNotIn(self.tg_token, data["runtime"]["error"])
        logs = self.ok("POST", "/api/v1/platform/bots/%s/logs" % bot,
                       {"from_index": -1, "max_count": 100})["logs"]
        self.assertTrue(any(l["level"] == "error" for l in logs), logs)
        self.assertNotIn(self.tg_token, json.dumps(logs))

    def test_webhook_mode_checks_the_secret_token(self):
        bot = self.bot(self.pipeline(), mode="webhook")
        self.assertTrue(wait_until(lambda: self.tg.stats(self.tg_token)["webhook"], 10))
        hook = self.tg.stats(self.tg_token)["webhook"]
        self.assertTrue(hook["url"].endswith("/bots/" + bot), hook)
        update = {"update_id": 1, "message": {
            "message_id": 1, "date": int(time.time()), "chat": {"id": 77, "type": "private"},
            "from": {"id": 77, "is_bot": False, "first_name": "W"}, "text": "via webhook"}}
        status, body, _ = self.srv.req("POST", "/bots/" + bot, update,
                                       headers={"X-Telegram-Bot-Api-Secret-Token": "wrong"})
        self.assertEqual(status, 401, body)
        status, body, _ = self.srv.req(
            "POST", "/bots/" + bot, update,
            headers={"X-Telegram-Bot-Api-Secret-Token": hook["secret_token"]})
        self.assertEqual(status, 200, body)
        reply = self.sent(1)[0]
        self.assertIn("via webhook", reply["text"])


if __name__ == "__main__":
    unittest.main()
