"""A WeCom AI bot (企业微信智能机器人, adapter "wecombot") end to end: the real binary against
tests/fakes/fake_wecombot.py, the model being tests/fakes/fake_llm.py.

Long connection (enable-webhook off, LangBot's default; the fake's WebSocket server at the bot's
`ws_url`): direct and group messages answered with a finished stream on the callback's req_id,
redeliveries answered once, send_message to a person and a group (aibot_send_msg), a refused
subscription shown as the bot's error without the secret, drop and reconnect, disabling, the log.

Webhook (enable-webhook on; the fake posts encrypted callbacks to /bots/{uuid} and polls the
stream): URL verification, direct and group messages answered through the stream refreshes,
forged signatures refused with no model call, redeliveries, send_message refused (no API),
malformed callbacks, disabling."""

import json
import time
import unittest

from harness import ServerTestCase
from fake_clients import FakeProvider, wait_until
from wecombot_fake import (DEFAULT_AES_KEY, DEFAULT_BOT_ID, DEFAULT_SECRET, DEFAULT_TOKEN,
                           FakeWeComBot)


class WeComBotTestBase(ServerTestCase):
    llm = None

    @classmethod
    def setUpClass(cls):
        cls.llm = FakeProvider()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.llm.stop()

    def setUp(self):
        self.llm.reset()
        self.wc = FakeWeComBot()
        self.addCleanup(self.wc.stop)

    def pipeline(self):
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test")
        config = {"ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}},
                  "output": {"misc": {"quote-origin": False}}}
        return self.make_pipeline(name="wc", config=config)

    def make(self, config, enable=True):
        uuid = self.make_bot(adapter="wecombot", enable=enable,
                             use_pipeline_uuid=self.pipeline(), config=config)
        self.addCleanup(lambda: self.as_user("DELETE", "/api/v1/platform/bots/" + uuid))
        return uuid

    def status(self, bot):
        return self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]

    def running(self, bot):
        def check():
            data = self.status(bot)
            return data["runtime"]["status"] == "running" and data
        data = wait_until(check, 10)
        self.assertTrue(data, "bot did not reach running: %r" % self.status(bot)["runtime"])
        return data

    def logs(self, bot):
        return self.ok("POST", "/api/v1/platform/bots/%s/logs" % bot,
                       {"from_index": -1, "max_count": 1000})["logs"]

    def send(self, bot, target_type, target_id, text):
        return self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, {
            "target_type": target_type, "target_id": target_id,
            "message_chain": [{"type": "Plain", "text": text}]})

    def assertNoSecrets(self, bot):
        text = json.dumps(self.logs(bot)) + json.dumps(self.status(bot)["runtime"])
        for secret in (DEFAULT_SECRET, DEFAULT_TOKEN, DEFAULT_AES_KEY):
            self.assertNotIn(secret, text)


class WeComBotSocketTest(WeComBotTestBase):
    def bot(self, secret=DEFAULT_SECRET, enable=True):
        return self.make({"BotId": DEFAULT_BOT_ID, "Secret": secret, "enable-webhook": False,
                          "ws_url": self.wc.ws_url}, enable)

    def replies(self, count, timeout=15):
        got = wait_until(lambda: len(self.wc.sent()) >= count and self.wc.sent(), timeout)
        self.assertTrue(got, "expected %d frames, got %r" % (count, self.wc.sent()))
        return got

    def test_a_direct_message_is_answered_on_its_req_id_and_logged(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], DEFAULT_BOT_ID)
        self.assertEqual(self.wc.ws()["subscribes"], [{"bot_id": DEFAULT_BOT_ID, "ok": True}])
        got = self.wc.say("hello wecom", userid="zhangsan")
        reply = self.replies(1)[0]
        self.assertEqual(reply["kind"], "respond")
        self.assertEqual(reply["req_id"], got["req_id"])
        stream = reply["body"]["stream"]
        self.assertEqual(reply["body"]["msgtype"], "stream")
        self.assertTrue(stream["finish"])
        self.assertIn("echo: hello wecom", stream["content"])
        self.assertTrue(stream["id"])
        self.assertIn("hello wecom", json.dumps(self.llm.chat_requests()[0]["body"]))
        logs = wait_until(lambda: [l for l in self.logs(bot) if "message from" in l["text"]
                                   and "hello wecom" in l["text"]])
        self.assertTrue(logs, self.logs(bot))
        self.assertEqual(logs[0]["message_session_id"], "person_zhangsan")
        self.assertTrue(wait_until(lambda: any("echo: hello wecom" in l["text"]
                                               for l in self.logs(bot))))
        self.assertNoSecrets(bot)

    def test_a_group_at_message_is_answered_and_a_redelivery_only_once(self):
        bot = self.bot()
        self.running(bot)
        got = self.wc.say("@RobotA what is up", chattype="group", userid="lisi",
                          chatid="wrkGroup01", msgid="msg-group-1")
        reply = self.replies(1)[0]
        self.assertEqual(reply["req_id"], got["req_id"])
        self.assertIn("what is up", reply["body"]["stream"]["content"])
        logs = wait_until(lambda: [l for l in self.logs(bot) if "what is up" in l["text"]
                                   and "message from" in l["text"]])
        self.assertEqual(logs[0]["message_session_id"], "group_wrkGroup01")
        # The same msgid again (a redelivery): not answered twice.
        self.wc.say("@RobotA what is up", chattype="group", userid="lisi",
                    chatid="wrkGroup01", msgid="msg-group-1")
        time.sleep(1.0)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        self.assertEqual(len(self.wc.sent()), 1)

    def test_send_message_reaches_a_person_and_a_group(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "wangwu", "hello person")
        self.assertOk(status, resp)
        status, resp, _ = self.send(bot, "group", "wrkGroup02", "hello group")
        self.assertOk(status, resp)
        sent = self.replies(2)
        self.assertEqual([s["kind"] for s in sent], ["send", "send"])
        self.assertEqual(sent[0]["body"], {"chatid": "wangwu", "msgtype": "markdown",
                                           "markdown": {"content": "hello person"}})
        self.assertEqual(sent[1]["body"]["chatid"], "wrkGroup02")
        self.assertEqual(sent[1]["body"]["markdown"]["content"], "hello group")
        self.assertTrue(sent[0]["req_id"].startswith("aibot_send_msg_"))
        logs = json.dumps(self.logs(bot))
        self.assertIn("sent through the API", logs)

    def test_a_wrong_secret_is_refused_and_shown_as_the_bots_error(self):
        wrong = "not-the-secret-9876543210"
        bot = self.bot(secret=wrong)

        def errored():
            data = self.status(bot)
            return data["runtime"]["status"] == "error" and data
        data = wait_until(errored, 10)
        self.assertTrue(data, self.status(bot)["runtime"])
        self.assertIn("aibot_subscribe", data["runtime"]["error"])
        self.assertIn("40058", data["runtime"]["error"])
        self.assertNotIn(wrong, json.dumps(data["runtime"]))
        self.assertNotIn(wrong, json.dumps(self.logs(bot)))
        self.assertEqual(self.wc.ws()["subscribes"], [{"bot_id": DEFAULT_BOT_ID, "ok": False}])
        time.sleep(2.5)  # past the first backoff steps: a refused secret is not retried
        self.assertEqual(self.wc.ws()["connections"], 1)
        status, resp, _ = self.send(bot, "person", "wangwu", "x")
        self.assertNotEqual(status, 200)
        self.assertEqual(self.llm.chat_requests(), [])

    def test_after_a_drop_the_bot_reconnects_and_still_answers(self):
        bot = self.bot()
        self.running(bot)
        self.wc.control("POST", "drop", {})
        self.assertTrue(wait_until(
            lambda: len([s for s in self.wc.ws()["subscribes"] if s["ok"]]) == 2, 15),
            self.wc.ws())
        self.assertTrue(wait_until(lambda: self.status(bot)["runtime"]["status"] == "running",
                                   10))
        self.wc.say("still there?")
        self.assertIn("still there?", self.replies(1)[0]["body"]["stream"]["content"])
        logs = json.dumps(self.logs(bot))
        self.assertIn("retrying", logs)

    def test_disabling_closes_the_connection_and_the_bot_stops_answering(self):
        bot = self.bot()
        self.running(bot)
        self.assertEqual(self.wc.ws()["subscribed"], 1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.wc.ws()["connected"] == 0, 10))
        self.assertIn({"code": 1000, "by": "client"}, self.wc.ws()["closes"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        time.sleep(0.5)
        self.assertEqual(self.wc.ws()["connections"], 1)  # no reconnect
        self.assertEqual(self.wc.sent(), [])
        self.assertEqual(self.llm.chat_requests(), [])

    def test_a_reply_after_the_stream_expired_goes_out_as_a_new_message(self):
        # The fake expires streams after 0.3 s (WeCom: 6 minutes, errcode 846608); the model
        # takes 1 s, so the reply on the callback's req_id is refused and sent with
        # aibot_send_msg to the same chat instead.
        self.wc.control("POST", "config", {"stream_ttl": 0.3})
        bot = self.bot()
        self.running(bot)
        self.llm.script_next(path="/v1/chat/completions", delay_ms=1000, body={
            "id": "chatcmpl-slow", "object": "chat.completion", "created": int(time.time()),
            "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "late answer"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        self.wc.say("answer slowly", chattype="group", userid="lisi", chatid="wrkGroup04")
        sent = self.replies(1)
        self.assertEqual(sent[0]["kind"], "send")
        self.assertEqual(sent[0]["body"]["chatid"], "wrkGroup04")
        self.assertEqual(sent[0]["body"]["markdown"]["content"], "late answer")
        self.assertIn("846608", json.dumps(self.logs(bot)))

    def test_images_sent_to_the_bot_are_decrypted_for_the_model(self):
        png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
               "hQGAhKmMIQAAAABJRU5ErkJggg==")
        bot = self.bot()
        self.running(bot)
        self.wc.say("what is this", images=[png])
        self.replies(1)
        logs = wait_until(lambda: [l for l in self.logs(bot) if "message from" in l["text"]
                                   and "what is this" in l["text"]])
        self.assertTrue(logs)
        self.assertIn("what is this[Image]", logs[0]["text"])
        self.assertNotIn("left out an image", json.dumps(self.logs(bot)))
        self.assertIn("what is this", json.dumps(self.llm.chat_requests()[0]["body"]))


class WeComBotWebhookTest(WeComBotTestBase):
    def bot(self, enable=True, **extra):
        config = {"BotId": DEFAULT_BOT_ID, "enable-webhook": True, "Token": DEFAULT_TOKEN,
                  "EncodingAESKey": DEFAULT_AES_KEY, "Corpid": "ww0000000000000001"}
        config.update(extra)
        return self.make(config, enable)

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def test_url_verification_echoes_and_a_forged_one_is_refused(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], DEFAULT_BOT_ID)
        got = self.wc.webhook("verify", self.url(bot))
        self.assertEqual((got["status"], got["body"]), (200, got["echo"]))
        forged = self.wc.webhook("verify", self.url(bot), forge=True)
        self.assertEqual(forged["status"], 401)

    def test_a_direct_message_is_answered_through_the_stream(self):
        bot = self.bot()
        self.running(bot)
        first = self.wc.webhook("message", self.url(bot), chattype="single", userid="zhangsan",
                                text="hello webhook")
        self.assertEqual(first["status"], 200, first)
        self.assertTrue(first["signature_ok"])
        stream = first["reply"]["stream"]
        self.assertEqual(first["reply"]["msgtype"], "stream")
        self.assertFalse(stream["finish"])
        polled = self.wc.webhook("poll", self.url(bot), stream_id=stream["id"], interval=0.2,
                                 timeout=15)
        self.assertTrue(polled["finished"], polled)
        last = polled["answers"][-1]["reply"]["stream"]
        self.assertEqual(last["id"], stream["id"])
        self.assertIn("echo: hello webhook", last["content"])
        logs = wait_until(lambda: [l for l in self.logs(bot) if "message from" in l["text"]
                                   and "hello webhook" in l["text"]])
        self.assertEqual(logs[0]["message_session_id"], "person_zhangsan")
        # The reply is logged as delivered once WeCom fetched it.
        self.assertTrue(wait_until(lambda: any(l["text"].startswith("reply")
                                               and "hello webhook" in l["text"]
                                               for l in self.logs(bot))), self.logs(bot))
        self.assertNoSecrets(bot)

    def test_a_group_message_is_answered_and_a_redelivery_once(self):
        bot = self.bot()
        self.running(bot)
        first = self.wc.webhook("message", self.url(bot), chattype="group", userid="lisi",
                                chatid="wrkGroup03", text="@RobotA hi group", msgid="dup-1")
        again = self.wc.webhook("message", self.url(bot), chattype="group", userid="lisi",
                                chatid="wrkGroup03", text="@RobotA hi group", msgid="dup-1")
        sid = first["reply"]["stream"]["id"]
        self.assertEqual(again["reply"]["stream"]["id"], sid)
        polled = self.wc.webhook("poll", self.url(bot), stream_id=sid, timeout=15)
        self.assertTrue(polled["finished"], polled)
        self.assertIn("hi group", polled["answers"][-1]["reply"]["stream"]["content"])
        logs = wait_until(lambda: [l for l in self.logs(bot) if "message from" in l["text"]
                                   and "hi group" in l["text"]])
        self.assertEqual(logs[0]["message_session_id"], "group_wrkGroup03")
        time.sleep(0.5)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_a_forged_signature_is_refused_without_a_model_call(self):
        bot = self.bot()
        self.running(bot)
        forged = self.wc.webhook("message", self.url(bot), text="forged hello", forge=True)
        self.assertEqual(forged["status"], 401)
        status, _, _ = self.req("POST", "/bots/%s?msg_signature=x&timestamp=1&nonce=n" % bot,
                                {"encrypt": "AAAA"})
        self.assertEqual(status, 401)
        time.sleep(0.5)
        self.assertEqual(self.llm.chat_requests(), [])
        self.assertIn("wrong msg_signature", json.dumps(self.logs(bot)))

    def test_malformed_callbacks_are_refused_and_logged(self):
        bot = self.bot()
        self.running(bot)
        status, _, _ = self.req("POST", "/bots/%s?msg_signature=x&timestamp=1&nonce=n" % bot,
                                raw_body=b"{not json", headers={"Content-Type":
                                                                "application/json"})
        self.assertEqual(status, 400)
        got = self.wc.webhook("raw", self.url(bot), plaintext={"msgtype": "text"})
        self.assertEqual(got["status"], 400)
        logs = json.dumps(self.logs(bot))
        self.assertIn("malformed WeCom callback", logs)
        self.assertEqual(self.llm.chat_requests(), [])

    def test_images_are_decrypted_with_the_encoding_aes_key(self):
        png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
               "hQGAhKmMIQAAAABJRU5ErkJggg==")
        bot = self.bot()
        self.running(bot)
        first = self.wc.webhook("message", self.url(bot), text="see this", images=[png])
        polled = self.wc.webhook("poll", self.url(bot), stream_id=first["reply"]["stream"]["id"],
                                 timeout=15)
        self.assertTrue(polled["finished"], polled)
        self.assertIn("see this", polled["answers"][-1]["reply"]["stream"]["content"])
        self.assertNotIn("left out an image", json.dumps(self.logs(bot)))
        self.assertTrue([l for l in self.logs(bot) if "message from" in l["text"]
                         and "see this[Image]" in l["text"]], self.logs(bot))

    def test_send_message_is_refused_in_webhook_mode(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "zhangsan", "proactive")
        self.assertError(status, resp, 400, "webhook mode")

    def test_a_placeholder_shows_while_the_model_thinks(self):
        bot = self.bot(PullPendingPlaceholderEnabled=True, PullPendingPlaceholderDelayMs=0,
                       PullPendingPlaceholder="thinking...")
        self.running(bot)
        self.llm.script_next(path="/v1/chat/completions", delay_ms=1500, body={
            "id": "chatcmpl-slow", "object": "chat.completion", "created": int(time.time()),
            "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "slow answer"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        first = self.wc.webhook("message", self.url(bot), text="take your time")
        polled = self.wc.webhook("poll", self.url(bot), stream_id=first["reply"]["stream"]["id"],
                                 interval=0.1, timeout=15)
        contents = [a["reply"]["stream"]["content"] for a in polled["answers"]]
        self.assertEqual(contents[0], "thinking...")
        self.assertEqual(contents[-1], "slow answer")
        self.assertTrue(polled["finished"])

    def test_disabling_stops_answering_callbacks(self):
        bot = self.bot()
        self.running(bot)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.status(bot)["runtime"]["status"] == "stopped",
                                   10))
        got = self.wc.webhook("message", self.url(bot), text="anyone?")
        self.assertNotEqual(got["status"], 200)
        time.sleep(0.5)
        self.assertEqual(self.llm.chat_requests(), [])


if __name__ == "__main__":
    unittest.main()
