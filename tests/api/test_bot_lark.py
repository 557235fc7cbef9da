"""A Lark bot end to end, in both of its modes: the real binary talks to tests/fakes/fake_lark.py
(the Open API at the bot's `api_base_url`, the long connection it hands out) and answers through
the fake model of tests/fakes/fake_llm.py. The same matrix runs over the long connection
(LangBot's default) and over the webhook route with the Encrypt Key and Verification Token:
direct messages, group mentions and chatter, send_message to a person and a group (post with an
at, image upload), an invalid token mid-send, redeliveries answered once, user images reaching the
model, disabling, the bot's log; then per mode: forged or unencrypted webhook calls refused and
the URL challenge (webhook), pings, a dropped connection and a reconnect (long connection)."""

import base64
import json
import time
import unittest

from harness import ServerTestCase
from fake_clients import FakeProvider, wait_until
from lark_fake import FakeLark

APP_ID = "cli_fake0000000001"
APP_SECRET = "fake-lark-app-secret"
ENCRYPT_KEY = "lark-encrypt-key-for-tests"
VERIFICATION_TOKEN = "fake-verification-token"
USER = "ou_" + "a" * 32
OTHER = "ou_" + "b" * 32
GROUP = "oc_" + "c" * 32
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


class LarkMatrix:
    """The tests both modes share; a subclass sets WEBHOOK."""
    WEBHOOK = False
    llm = None
    lark = None
    bot_open_id = None

    @classmethod
    def setUpClass(cls):
        cls.llm = FakeProvider()
        cls.lark = FakeLark()
        cls.bot_open_id = cls.lark.config(
            encrypt_key=ENCRYPT_KEY if cls.WEBHOOK else "", ping_interval=1)["bot_open_id"]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.llm.stop()
        cls.lark.stop()

    def setUp(self):
        self.llm.reset()
        self.lark.reset()

    # Helpers

    def pipeline(self):
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test", abilities=["chat", "vision"])
        return self.make_pipeline(name="lark", config={
            "ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}},
            "output": {"misc": {"quote-origin": False}}})

    def bot(self, stream=False):
        config = {"enable-webhook": self.WEBHOOK, "app_id": APP_ID, "app_secret": APP_SECRET,
                  "bot_name": "Switchboard", "encrypt-key": ENCRYPT_KEY if self.WEBHOOK else "",
                  "enable-stream-reply": stream, "api_base_url": self.lark.base}
        if self.WEBHOOK:
            config["verification-token"] = VERIFICATION_TOKEN
        uuid = self.make_bot(adapter="lark", enable=True, use_pipeline_uuid=self.pipeline(),
                             config=config)
        self.addCleanup(lambda: self.as_user("DELETE", "/api/v1/platform/bots/" + uuid))
        data = wait_until(lambda: self.status(uuid)["runtime"]["status"] == "running"
                          and self.status(uuid), 15)
        self.assertTrue(data, "bot did not reach running: %r" % self.status(uuid)["runtime"])
        if not self.WEBHOOK:
            self.assertTrue(wait_until(lambda: self.lark.state()["connected"] >= 1, 10))
        return uuid, data

    def status(self, bot):
        return self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def say(self, bot, **spec):
        spec.setdefault("chat_type", "p2p")
        spec.setdefault("sender", USER)
        if self.WEBHOOK:
            spec.update(via="webhook", url=self.url(bot))
        else:
            spec["via"] = "ws"
        got = self.lark.message(**spec)
        if self.WEBHOOK:
            self.assertEqual(got["delivery"]["status"], 200, got)
            self.assertLess(got["delivery"]["elapsed"], 1.0)
        else:
            self.assertTrue(got["delivery"]["delivered"], got)
        return got

    def wait_sent(self, count, timeout=10):
        got = wait_until(lambda: len(self.lark.sent()) >= count and self.lark.sent(), timeout)
        self.assertTrue(got, "expected %d sends, got %r" % (count, self.lark.sent()))
        return got

    def logs(self, bot):
        return self.ok("POST", "/api/v1/platform/bots/%s/logs" % bot,
                       {"from_index": -1, "max_count": 1000})["logs"]

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

    @staticmethod
    def card_text(content):
        return content["elements"][0]["content"]

    # The shared matrix

    def test_stream_reply_shows_a_card_updated_while_the_model_writes(self):
        bot, _ = self.bot(stream=True)
        words = ["word%d " % i for i in range(10)]
        self.slow_stream(words, 250)
        got = self.say(bot, text="tell me slowly")
        full = "".join(words).strip()  # the pipeline trims the final reply
        done = wait_until(lambda: [s for s in self.lark.sent() if s["updates"] and
                                   self.card_text(s["updates"][-1]["content"]) == full], 20)
        self.assertTrue(done, self.lark.sent())
        time.sleep(0.5)  # nothing more may follow the final update
        sent = self.lark.sent()
        self.assertEqual(len(sent), 1, sent)  # one message: the card, never a second reply
        card = sent[0]
        self.assertEqual((card["kind"], card["reply_to"], card["msg_type"]),
                         ("reply", got["message_id"], "interactive"))
        self.assertTrue(card["content"]["config"]["update_multi"])
        self.assertTrue(full.startswith(self.card_text(card["content"])))
        self.assertNotEqual(self.card_text(card["content"]), full)  # shown before the end
        texts = [self.card_text(u["content"]) for u in card["updates"]]
        self.assertGreaterEqual(len(texts), 2, texts)  # updated while written, not only at the end
        for before, after in zip(texts, texts[1:]):
            self.assertTrue(after.startswith(before.rstrip()), texts)  # the text only grows
        times = [card["updates"][0]["time"]] + [u["time"] for u in card["updates"]]
        # Paced: at most about two updates a second (the fake refuses more than 5).
        self.assertLessEqual(len(card["updates"]), 2 * (times[-1] - times[0]) + 3, times)
        chat = [r for r in self.llm.chat_requests()]
        self.assertTrue(chat and chat[-1]["body"].get("stream") is True)
        wait_until(lambda: any("reply streamed" in l["text"] for l in self.logs(bot)), 5)
        self.assertTrue(any("reply streamed" in l["text"] and full in l["text"]
                            for l in self.logs(bot)), self.logs(bot))

    def test_stream_reply_off_sends_the_reply_whole(self):
        bot, _ = self.bot(stream=False)
        self.slow_stream(["a ", "b"], 50)
        self.say(bot, text="no stream")
        sent = self.wait_sent(1)
        time.sleep(0.3)
        sent = self.lark.sent()
        self.assertEqual([(s["msg_type"], s["updates"]) for s in sent], [("text", [])])

    def test_stream_reply_with_a_failed_card_still_answers_once(self):
        bot, _ = self.bot(stream=True)
        self.lark.control("POST", "fail", {"path": "/open-apis/im/v1/messages/", "times": 1,
                                           "code": 230002})
        self.slow_stream(["x ", "y ", "z"], 100)
        self.say(bot, text="fail the card")
        sent = self.wait_sent(1)
        time.sleep(0.5)
        sent = self.lark.sent()
        self.assertEqual(len(sent), 1, sent)
        self.assertEqual(sent[0]["msg_type"], "text")
        self.assertEqual(sent[0]["content"]["text"], "x y z")
        self.assertTrue(wait_until(lambda: any("could not be updated" in l["text"]
                                               for l in self.logs(bot)), 5))

    def test_direct_message_is_answered_with_a_reply_and_logged(self):
        bot, data = self.bot()
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], self.bot_open_id)
        got = self.say(bot, text="hello lark")
        sent = self.wait_sent(1)[0]
        self.assertEqual(sent["kind"], "reply")
        self.assertEqual(sent["reply_to"], got["message_id"])
        self.assertEqual(sent["msg_type"], "text")
        self.assertIn("echo: hello lark", sent["content"]["text"])
        self.assertTrue(sent["uuid"])
        logs = wait_until(lambda: [l for l in self.logs(bot) if "hello lark" in l["text"]
                                   and "message from" in l["text"]])
        self.assertTrue(logs, self.logs(bot))
        self.assertEqual(logs[0]["message_session_id"], "person_" + USER)
        self.assertNotIn(APP_SECRET, json.dumps(self.logs(bot)))
        if not self.WEBHOOK:
            acks = wait_until(lambda: self.lark.state()["acks"])
            self.assertEqual(acks[0]["code"], 200)
            self.assertEqual(acks[0]["message_id"], got["delivery"]["frame_message_id"])
            self.assertTrue(acks[0]["biz_rt"].isdigit())

    def test_a_reply_brings_the_quoted_message_to_the_model(self):
        bot, _ = self.bot()
        quoted = self.say(bot, text="the launch is on friday")
        self.wait_sent(1)
        self.llm.reset()
        self.say(bot, text="which day again?", parent_id=quoted["message_id"])
        self.wait_sent(2)
        last = json.dumps(self.llm.chat_requests()[0]["body"]["messages"][-1])
        self.assertIn("the launch is on friday", last)
        self.assertIn("which day again?", last)
        # A parent Lark does not know: the message is answered without the quote.
        self.llm.reset()
        self.say(bot, text="and this?", parent_id="om_unknown_parent")
        self.wait_sent(3)
        self.assertIn("and this?", json.dumps(self.llm.chat_requests()[0]["body"]["messages"]))

    def test_group_mention_is_answered_and_chatter_is_not(self):
        bot, _ = self.bot()
        self.say(bot, chat_type="group", chat_id=GROUP, sender=OTHER, text="just chatting")
        got = self.say(bot, chat_type="group", chat_id=GROUP, sender=OTHER,
                       text="are you there", mention_bot=True)
        sent = self.wait_sent(1)[0]
        self.assertEqual(sent["reply_to"], got["message_id"])
        self.assertEqual(sent["chat_id"], GROUP)
        self.assertIn("are you there", json.dumps(sent["content"]))
        time.sleep(0.5)
        self.assertEqual(len(self.lark.sent()), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))
        logs = wait_until(lambda: [l for l in self.logs(bot) if "are you there" in l["text"]])
        self.assertEqual(logs[0]["message_session_id"], "group_" + GROUP)

    def test_send_message_to_a_person_and_a_group_with_an_at_and_an_image(self):
        bot, _ = self.bot()
        path = "/api/v1/platform/bots/%s/send_message" % bot
        person = {"target_type": "person", "target_id": USER,
                  "message_chain": [{"type": "Plain", "text": "hello from the API"}]}
        data = self.assertOk(*self.as_key("POST", path, person)[:2])
        self.assertTrue(data["sent"])
        group = {"target_type": "group", "target_id": GROUP,
                 "message_chain": [{"type": "At", "target": OTHER},
                                   {"type": "Plain", "text": " news"},
                                   {"type": "Image", "base64": base64.b64encode(PNG).decode()}]}
        self.assertOk(*self.as_key("POST", path, group)[:2])
        sent = self.wait_sent(3)
        self.assertEqual((sent[0]["kind"], sent[0]["receive_id_type"], sent[0]["receive_id"]),
                         ("create", "open_id", USER))
        self.assertEqual(sent[0]["content"], {"text": "hello from the API"})
        self.assertEqual((sent[1]["receive_id_type"], sent[1]["msg_type"]), ("chat_id", "post"))
        self.assertEqual(sent[1]["content"]["zh_cn"]["content"],
                         [[{"tag": "at", "user_id": OTHER}, {"tag": "text", "text": " news"}]])
        self.assertEqual(sent[2]["msg_type"], "image")
        images = self.lark.state()["images"]
        self.assertEqual(sent[2]["content"]["image_key"], images[0]["image_key"])
        self.assertEqual(images[0]["size"], len(PNG))
        # Lark's refusal comes back as 502 with its reason.
        self.lark.control("POST", "fail", {"path": "/open-apis/im/v1/messages", "code": 230002})
        status, resp, _ = self.as_key("POST", path, person)
        self.assertError(status, resp, 502, "230002")
        self.assertNotIn(APP_SECRET, json.dumps(resp))
        # A Voice cannot go: refused before any call.
        status, resp, _ = self.as_key("POST", path, dict(person, message_chain=[
            {"type": "Voice", "url": "https://example.com/a.ogg"}]))
        self.assertError(status, resp, 400, "message_chain[0]")

    def test_an_invalid_token_mid_send_is_refetched_and_the_send_retried_once(self):
        bot, _ = self.bot()
        issued = self.lark.state()["tokens_issued"]
        self.lark.control("POST", "expire_tokens", {})
        path = "/api/v1/platform/bots/%s/send_message" % bot
        self.assertOk(*self.as_key("POST", path, {
            "target_type": "person", "target_id": USER,
            "message_chain": [{"type": "Plain", "text": "after expiry"}]})[:2])
        self.assertEqual(self.wait_sent(1)[0]["content"], {"text": "after expiry"})
        self.assertEqual(self.lark.state()["tokens_issued"], issued + 1)

    def test_a_redelivered_event_is_answered_once(self):
        bot, _ = self.bot()
        for _ in range(2):
            self.say(bot, text="only once", event_id="evt-redelivered-1",
                     message_id="om_redelivered1")
        self.wait_sent(1)
        time.sleep(0.7)
        self.assertEqual(len(self.lark.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_user_images_reach_the_model(self):
        bot, _ = self.bot()
        self.lark.control("POST", "resource", {"message_id": "om_image0001", "key": "img_v3_in",
                                               "content_base64": base64.b64encode(PNG).decode(),
                                               "content_type": "image/png"})
        self.say(bot, message_id="om_image0001", message_type="image",
                 content={"image_key": "img_v3_in"})
        self.wait_sent(1)
        request = json.dumps(self.llm.chat_requests()[0]["body"])
        self.assertIn("data:image/png;base64," + base64.b64encode(PNG).decode(), request)

    def test_a_refused_app_secret_shows_as_an_error_without_the_secret(self):
        wrong = "wrong-lark-secret-123"
        uuid = self.make_bot(adapter="lark", enable=True, use_pipeline_uuid=self.pipeline(),
                             config={"enable-webhook": self.WEBHOOK, "app_id": APP_ID,
                                     "app_secret": wrong, "api_base_url": self.lark.base})
        self.addCleanup(lambda: self.as_user("DELETE", "/api/v1/platform/bots/" + uuid))
        data = wait_until(lambda: self.status(uuid)["runtime"]["status"] == "error"
                          and self.status(uuid), 10)
        self.assertTrue(data, self.status(uuid)["runtime"])
        self.assertIn("10014", json.dumps(data["runtime"]))
        calls = self.lark.state()["token_calls"]
        time.sleep(1.5)  # no retry loop against a refused secret
        self.assertEqual(self.lark.state()["token_calls"], calls)
        self.assertNotIn(wrong, json.dumps(self.logs(uuid)) + json.dumps(data["runtime"]))

    def test_disabling_the_bot_stops_it_answering(self):
        bot, _ = self.bot()
        self.say(bot, text="before")
        self.wait_sent(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.status(bot)["runtime"]["status"] == "stopped"))
        if self.WEBHOOK:
            got = self.lark.message(via="webhook", url=self.url(bot), chat_type="p2p",
                                    sender=USER, text="after")
            self.assertEqual(got["delivery"]["status"], 409, got)
        else:
            self.assertTrue(wait_until(lambda: self.lark.state()["connected"] == 0, 10))
            got = self.lark.message(via="ws", chat_type="p2p", sender=USER, text="after")
            self.assertFalse(got["delivery"]["delivered"])
        time.sleep(0.3)
        self.assertEqual(len(self.lark.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)


class LarkLongConnectionTest(LarkMatrix, ServerTestCase):
    WEBHOOK = False

    def test_pings_a_dropped_connection_and_a_reconnect(self):
        bot, _ = self.bot()
        pings = wait_until(lambda: len(self.lark.state()["pings"]) >= 2 and
                           self.lark.state()["pings"], 10)
        self.assertTrue(pings, "the bot did not ping every PingInterval (1 s)")
        calls = self.lark.state()["endpoint_calls"]
        self.assertEqual(self.lark.control("POST", "drop", {})["connections"], 1)
        # A new endpoint call (a new ticket) and a new connection, after a backoff of ~1 s.
        self.assertTrue(wait_until(lambda: self.lark.state()["endpoint_calls"] > calls
                                   and self.lark.state()["connected"] == 1, 15))
        self.say(bot, text="after the drop", parts=3)
        sent = self.wait_sent(1)[0]
        self.assertIn("after the drop", sent["content"]["text"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")
        logs = json.dumps(self.logs(bot))
        self.assertIn("long connection was lost", logs)
        self.assertEqual(self.lark.state()["refused_handshakes"], 0)

    def test_webhook_calls_are_refused_in_long_connection_mode(self):
        bot, _ = self.bot()
        got = self.lark.message(via="webhook", url=self.url(bot), text="wrong door")
        self.assertEqual(got["delivery"]["status"], 404, got)
        time.sleep(0.3)
        self.assertEqual(self.llm.chat_requests(), [])


class LarkWebhookTest(LarkMatrix, ServerTestCase):
    WEBHOOK = True

    def test_the_url_challenge_is_answered_encrypted_and_with_the_token(self):
        bot, _ = self.bot()
        got = self.lark.control("POST", "challenge", {"url": self.url(bot)})
        self.assertEqual(got["status"], 200, got)
        self.assertTrue(got["echoed"], got)
        self.assertLess(got["elapsed"], 1.0)
        bad = self.lark.control("POST", "challenge", {"url": self.url(bot), "token": "forged"})
        self.assertEqual(bad["status"], 401, bad)

    def test_forged_unencrypted_and_malformed_calls_are_refused_without_a_model_call(self):
        bot, _ = self.bot()
        for spec in ({"bad_signature": True}, {"bad_token": True}, {"plain": True},
                     {"encrypt_key": "another-key"}):
            got = self.lark.message(via="webhook", url=self.url(bot), chat_type="p2p",
                                    sender=USER, text="forged", **spec)
            self.assertEqual(got["delivery"]["status"], 401, (spec, got))
        status, body, _ = self.srv.req("POST", "/bots/" + bot, raw_body=b"{not json",
                                       headers={"Content-Type": "application/json"})
        self.assertEqual(status, 400, body)
        status, body, _ = self.srv.req("POST", "/bots/" + bot, raw_body=b" " * (2 * 1024 * 1024),
                                       headers={"Content-Type": "application/json"})
        self.assertEqual(status, 413, body)
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "malformed Lark webhook call" in l["text"]]))
        time.sleep(0.3)
        self.assertEqual(self.llm.chat_requests(), [])
        self.say(bot, text="still alive")
        self.assertIn("still alive", self.wait_sent(1)[0]["content"]["text"])


if __name__ == "__main__":
    unittest.main()
