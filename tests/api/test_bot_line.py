"""A LINE bot end to end: tests/fakes/fake_line.py signs and delivers webhook events to the real
binary's /bots/{uuid} route and serves the Messaging API (bot info, reply, push, content) at the
bot's `api_base_url`; the model is tests/fakes/fake_llm.py. Direct messages answered with the
reply token, group mentions, the console's Verify call, forged signatures, an expired reply token
falling back to push, redeliveries, send_message, images, disabling, and malformed or oversized
bodies."""

import base64
import json
import time
import unittest

from fake_clients import FakeLine, line_sign, wait_until
from platform_case import PlatformCase

SECRET = "line-channel-secret-for-tests"
TOKEN = "line-channel-access-token-for-tests"
USER = "U" + "a" * 32
OTHER = "U" + "b" * 32
GROUP = "C" + "c" * 32
# A 1x1 PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


class LineBotTest(PlatformCase):
    adapter = "LINE"
    pipeline_name = "line"
    model_abilities = ["chat", "vision"]
    line = None
    bot_user = None

    @classmethod
    def setUpClass(cls):
        cls.line = FakeLine()
        cls.line.control("POST", "/_control/config",
                         {"channel_secret": SECRET, "access_token": TOKEN})
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.line.stop()

    def setUp(self):
        super().setUp()
        self.line.reset()
        self.line.control("POST", "/_control/config", {"reply_token_ttl": 60})

    # Helpers

    def bot(self, enable=True):
        return self.platform_bot({"channel_access_token": TOKEN, "channel_secret": SECRET,
                                  "api_base_url": self.line.base}, enable=enable)

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def say(self, bot, text, source=None, **opts):
        body = dict({"url": self.url(bot), "text": text,
                     "source": source or {"type": "user", "userId": USER}}, **opts)
        return self.line.control("POST", "/_control/message", body)

    def wait_sent(self, count, timeout=10):
        got = wait_until(lambda: len(self.line.sent()) >= count and self.line.sent(), timeout)
        self.assertTrue(got, "expected %d sends, got %r" % (count, self.line.sent()))
        return got

    def signed_post(self, bot, raw):
        headers = {"Content-Type": "application/json", "X-Line-Signature": line_sign(SECRET, raw)}
        return self.srv.req("POST", "/bots/" + bot, raw_body=raw, headers=headers)

    # Tests

    def test_direct_message_is_answered_with_the_reply_token_and_logged(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertTrue(data["adapter_runtime_values"]["bot_account_id"].startswith("U"))
        got = self.say(bot, "hello line")
        self.assertEqual(got["status"], 200, got)
        self.assertLess(got["elapsed"], 1.0)
        sent = self.wait_sent(1)[0]
        self.assertEqual(sent["kind"], "reply")
        self.assertEqual(sent["replyToken"], got["events"][0]["replyToken"])
        self.assertIn("echo: hello line", sent["messages"][0]["text"])
        logs = wait_until(lambda: [l for l in self.logs(bot) if "hello line" in l["text"]
                                   and "message from" in l["text"]])
        self.assertTrue(logs, self.logs(bot))
        self.assertEqual(logs[0]["message_session_id"], "person_" + USER)
        self.assertNotIn(TOKEN, json.dumps(self.logs(bot)))

    def test_group_mention_is_answered_in_the_group_and_chatter_is_not(self):
        bot = self.bot()
        data = self.running(bot)
        source = {"type": "group", "groupId": GROUP, "userId": OTHER}
        self.say(bot, "just chatting", source=source)
        got = self.say(bot, "are you there", source=source, mention_self=True)
        self.assertEqual(got["status"], 200, got)
        sent = self.wait_sent(1)[0]
        self.assertEqual(sent["kind"], "reply")
        self.assertEqual(sent["replyToken"], got["events"][0]["replyToken"])
        self.assertIn("are you there", sent["messages"][0]["text"])
        time.sleep(0.5)
        self.assertEqual(len(self.line.sent()), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"],
                         got["events"][0]["message"]["mention"]["mentionees"][0]["userId"])

    def test_verify_call_forged_signatures_and_redeliveries(self):
        bot = self.bot()
        self.running(bot)
        verify = self.line.control("POST", "/_control/verify", {"url": self.url(bot)})
        self.assertEqual(verify["status"], 200, verify)
        forged = self.say(bot, "forged", bad_signature=True)
        self.assertEqual(forged["status"], 401, forged)
        event = {"type": "message", "webhookEventId": "01FAKEREDELIVERY0000000001",
                 "source": {"type": "user", "userId": USER},
                 "message": {"type": "text", "id": "5550001", "text": "only once",
                             "quoteToken": "q1"}}
        for redelivery in (False, True):
            got = self.line.control("POST", "/_control/event", {
                "url": self.url(bot), "events": [event], "redelivery": redelivery})
            self.assertEqual(got["status"], 200, got)
        self.wait_sent(1)
        time.sleep(0.5)
        self.assertEqual(len(self.line.sent()), 1)
        prompts = json.dumps([r["body"] for r in self.llm.chat_requests()])
        self.assertNotIn("forged", prompts)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_an_expired_reply_token_falls_back_to_push(self):
        bot = self.bot()
        self.running(bot)
        self.line.control("POST", "/_control/config", {"reply_token_ttl": 0.2})
        self.slow_model(800, "late but here")
        self.say(bot, "answer slowly")
        sent = self.wait_sent(1, timeout=20)[0]
        self.assertEqual(sent["kind"], "push")
        self.assertEqual(sent["to"], USER)
        self.assertEqual(sent["messages"][0]["text"], "late but here")
        self.assertTrue(sent["retry_key"])
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "pushing instead" in l["text"]]))

    def test_send_message_to_a_person_and_a_group_with_a_mention_and_an_image(self):
        bot = self.bot()
        self.running(bot)
        path = "/api/v1/platform/bots/%s/send_message" % bot
        person = {"target_type": "person", "target_id": USER,
                  "message_chain": [{"type": "Plain", "text": "hello from the API"}]}
        data = self.assertOk(*self.as_key("POST", path, person)[:2])
        self.assertTrue(data["sent"])
        group = {"target_type": "group", "target_id": GROUP,
                 "message_chain": [{"type": "At", "target": OTHER},
                                   {"type": "Plain", "text": " news"},
                                   {"type": "Image", "url": "https://example.com/cat.png"}]}
        self.assertOk(*self.as_key("POST", path, group)[:2])
        sent = self.wait_sent(2)
        self.assertEqual(sent[0]["kind"], "push")
        self.assertEqual(sent[0]["to"], USER)
        self.assertEqual(sent[0]["messages"], [{"type": "text", "text": "hello from the API"}])
        self.assertTrue(data.get("message_id"), data)  # LINE's sentMessages[0].id
        self.assertEqual(sent[1]["to"], GROUP)
        v2 = sent[1]["messages"][0]
        self.assertEqual(v2["type"], "textV2")
        self.assertEqual(v2["substitution"]["m0"]["mentionee"], {"type": "user", "userId": OTHER})
        self.assertEqual(v2["text"], "{m0} news")
        self.assertEqual(sent[1]["messages"][1]["originalContentUrl"],
                         "https://example.com/cat.png")
        # Base64 images cannot go to LINE without hosting: refused before any call.
        inline = dict(group, message_chain=[{"type": "Image", "base64": "iVBORw0KGgo="}])
        status, resp, _ = self.as_key("POST", path, inline)
        self.assertError(status, resp, 400, ["message_chain[0]", "https"])
        # LINE's refusal comes back as 502 with its reason.
        self.line.control("POST", "/_control/fail", {"path": "/v2/bot/message/push",
                                                     "status": 403})
        status, resp, _ = self.as_key("POST", path, person)
        self.assertError(status, resp, 502, "not available")
        self.assertNotIn(TOKEN, json.dumps(resp))

    def test_user_images_reach_the_model(self):
        bot = self.bot()
        self.running(bot)
        self.line.control("POST", "/_control/content", {
            "messageId": "7770001", "content_base64": base64.b64encode(PNG).decode(),
            "content_type": "image/png"})
        got = self.line.control("POST", "/_control/event", {"url": self.url(bot), "events": [{
            "type": "message", "source": {"type": "user", "userId": USER},
            "message": {"type": "image", "id": "7770001", "contentProvider": {"type": "line"},
                        "quoteToken": "q2"}}]})
        self.assertEqual(got["status"], 200, got)
        self.wait_sent(1)
        request = json.dumps(self.llm.chat_requests()[0]["body"])
        self.assertIn("data:image/png;base64," + base64.b64encode(PNG).decode(), request)

    def test_disabling_the_bot_stops_it_answering(self):
        bot = self.bot()
        self.running(bot)
        self.say(bot, "before")
        self.wait_sent(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.ok("GET", "/api/v1/platform/bots/" + bot)
                                   ["bot"]["runtime"]["status"] == "stopped"))
        got = self.say(bot, "after")
        self.assertEqual(got["status"], 409, got)
        time.sleep(0.3)
        self.assertEqual(len(self.line.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_malformed_and_oversized_bodies_are_refused_without_harm(self):
        bot = self.bot()
        self.running(bot)
        status, body, _ = self.signed_post(bot, b"{not json")
        self.assertEqual(status, 400, body)
        status, body, _ = self.signed_post(bot, b'{"destination":"U1","events":{}}')
        self.assertEqual(status, 400, body)
        status, body, _ = self.signed_post(bot, b" " * (2 * 1024 * 1024))
        self.assertEqual(status, 413, body)
        status, body, _ = self.srv.req("POST", "/bots/" + bot, raw_body=b"{}")
        self.assertEqual(status, 401, body)
        raw = json.dumps({"destination": USER, "events": [
            {"type": "message", "webhookEventId": "01BROKEN", "source": {"type": "user"},
             "message": {"type": "text", "id": "1", "text": "x"}}]}).encode()
        status, body, _ = self.signed_post(bot, raw)
        self.assertEqual(status, 200, body)
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "malformed LINE event" in l["text"]]))
        self.say(bot, "still alive")
        self.assertIn("still alive", self.wait_sent(1)[0]["messages"][0]["text"])


if __name__ == "__main__":
    unittest.main()
