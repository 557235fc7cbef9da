"""A QQ official bot end to end, in both of its modes: the real binary against
tests/fakes/fake_qqofficial.py (token host, API and gateway at the bot's `api_base_url`, and a
webhook driver that signs callbacks with Ed25519) and the model of tests/fakes/fake_llm.py.
WebSocket mode: C2C, group @ and guild @ / DM answered as passive replies (msg_id + msg_seq),
chatter not answered, send_message to a person and a group (with an image through the files
API), a proactive message refused honestly, drop / op 7 / op 9 with resume or identify, an expired
token fetched again, wrong credentials, disabling. Webhook mode: the op 13 validation, signed
dispatches acknowledged with op 12 at once, forged or unsigned calls refused with no model call,
redeliveries answered once, malformed bodies, send_message, disabling."""

import json
import time
import unittest
import urllib.error

from fake_clients import wait_until
from platform_case import PlatformCase
from qqofficial_fake import APPID, SECRET, FakeQQ

USER = "E4F4AEA33253A2797FB897C50B81D7ED"
GROUP = "C9F778FE6ADF9D1D1DBE395BF744A33A"
MEMBER = "C9F778FE6ADF9D1D1DBE395BF744A33B"
LANGBOT_INTENTS = (1 << 0) | (1 << 1) | (1 << 12) | (1 << 25) | (1 << 26) | (1 << 30)


class QqCase(PlatformCase):
    adapter = "qqofficial"
    pipeline_name = "qq"
    model_abilities = ["chat", "vision"]
    running_timeout = 15
    webhook = False

    def setUp(self):
        super().setUp()
        self.qq = FakeQQ()
        self.addCleanup(self.qq.stop)

    def bot(self, secret=SECRET, enable=True):
        cfg = {"appid": APPID, "secret": secret, "token": "",
               "enable-webhook": self.webhook, "enable-stream-reply": False,
               "api_base_url": self.qq.base}
        return self.platform_bot(cfg, enable=enable)

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def say(self, bot, kind, content, **extra):
        body = dict({"type": kind, "content": content}, **extra)
        if self.webhook:
            body.update(via="webhook", url=self.url(bot))
        return self.qq.event(body)

    def wait_sent(self, count, timeout=15):
        got = wait_until(lambda: len(self.qq.sent()) >= count and self.qq.sent(), timeout)
        self.assertTrue(got, "expected %d sends, got %r" % (count, self.qq.sent(False)))
        return got

    def send_message(self, bot, body):
        return self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, body)[:2]

    # Shared by both modes.

    def check_c2c_group_and_guild_answers(self, bot):
        c2c = self.say(bot, "c2c", "hello qq")
        sent = self.wait_sent(1)[0]
        self.assertEqual((sent["route"], sent["target"]), ("c2c", USER))
        self.assertEqual((sent["msg_id"], sent["msg_seq"], sent["msg_type"]), (c2c["id"], 1, 0))
        self.assertIn("echo: hello qq", sent["content"])
        group = self.say(bot, "group_at", "what time is it")
        sent = self.wait_sent(2)[1]
        self.assertEqual((sent["route"], sent["target"], sent["msg_id"]),
                         ("group", GROUP, group["id"]))
        self.assertIn("echo: what time is it", sent["content"])
        self.assertNotIn("echo:  ", sent["content"])  # the leading space is gone
        at = self.say(bot, "at", "guild question", channel_id="100010")
        sent = self.wait_sent(3)[2]
        self.assertEqual((sent["route"], sent["target"], sent["msg_id"]),
                         ("channel", "100010", at["id"]))
        self.assertIn("echo: guild question", sent["content"])
        self.assertNotIn("<@!", sent["content"])
        dm = self.say(bot, "dm", "a guild dm", guild_id="400040")
        sent = self.wait_sent(4)[3]
        self.assertEqual((sent["route"], sent["target"], sent["msg_id"]),
                         ("dm", "400040", dm["id"]))
        # Group messages without an @ never come from QQ at all.
        chatter = self.say(bot, "group", "just chatting")
        self.assertFalse(chatter["delivered"])
        logs = self.logs(bot)
        sessions = {l.get("message_session_id") for l in logs}
        for session in ("person_" + USER, "group_" + GROUP, "group_100010", "person_400040"):
            self.assertIn(session, sessions)
        self.assertNotIn(SECRET, json.dumps(logs))
        self.assertEqual(len(self.llm.chat_requests()), 4)

    def check_send_message(self, bot):
        self.say(bot, "c2c", "remember me")
        self.say(bot, "group_at", "and us")
        self.wait_sent(2)
        person = self.send_message(bot, {"target_type": "person", "target_id": USER,
                                         "message_chain": [{"type": "Plain",
                                                            "text": "hello from the API"}]})
        data = self.assertOk(*person)
        group = self.send_message(bot, {
            "target_type": "group", "target_id": GROUP,
            "message_chain": [{"type": "At", "target": MEMBER},
                              {"type": "Plain", "text": "news"},
                              {"type": "Image", "url": "https://example.com/cat.png"}]})
        self.assertOk(*group)
        sent = self.wait_sent(5)
        to_person, text, image = sent[2], sent[3], sent[4]
        # The latest message of each chat anchors the send (QQ ended proactive messages).
        self.assertEqual((to_person["route"], to_person["target"], to_person["msg_seq"]),
                         ("c2c", USER, 2))
        self.assertEqual(to_person["content"], "hello from the API")
        self.assertEqual(data.get("message_id"), to_person["answer"]["id"])
        self.assertEqual((text["route"], text["content"], text["msg_seq"]), ("group", "news", 2))
        self.assertEqual((image["msg_type"], image["msg_seq"], image["msg_id"]),
                         (7, 3, text["msg_id"]))
        upload = self.qq.uploads()[0]
        self.assertEqual((upload["route"], upload["body"]["url"], upload["body"]["file_type"]),
                         ("group", "https://example.com/cat.png", 1))
        self.assertEqual(image["body"]["media"]["file_info"], upload["file_info"])
        # A person the bot never heard from: a proactive message, refused by QQ, said so.
        status, resp = self.send_message(bot, {
            "target_type": "person", "target_id": "A" * 32,
            "message_chain": [{"type": "Plain", "text": "hi stranger"}]})
        self.assertError(status, resp, 502, "22009")
        self.assertIn("proactive", json.dumps(resp))
        self.assertNotIn(SECRET, json.dumps(resp))
        status, resp = self.send_message(bot, {
            "target_type": "group", "target_id": "../x",
            "message_chain": [{"type": "Plain", "text": "x"}]})
        self.assertError(status, resp, 400, "target_id")


class QqGatewayBotTest(QqCase):
    webhook = False

    def test_c2c_group_and_guild_messages_are_answered_as_passive_replies(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], APPID)
        gw = self.qq.gateway()
        self.assertEqual(len(gw["identifies"]), 1)
        self.assertEqual(gw["identifies"][0]["intents"], LANGBOT_INTENTS)
        self.assertEqual(gw["identifies"][0]["shard"], [0, 1])
        self.check_c2c_group_and_guild_answers(bot)
        self.assertTrue(any("connected to the QQ gateway as fakebot" in l["text"]
                            for l in self.logs(bot)))

    def test_a_guild_message_without_a_mention_is_ignored(self):
        bot = self.bot()
        self.running(bot)
        # Not subscribed (no GUILD_MESSAGES intent), so QQ would not send it; forced, it is
        # still not answered.
        self.assertFalse(self.say(bot, "guild_message", "chatter")["delivered"])
        self.assertTrue(self.say(bot, "guild_message", "chatter", force=True)["delivered"])
        self.say(bot, "at", "but this")
        sent = self.wait_sent(1)
        time.sleep(0.5)
        self.assertEqual(len(self.qq.sent()), 1)
        self.assertIn("echo: but this", sent[0]["content"])
        self.assertNotIn("chatter", json.dumps([r["body"] for r in self.llm.chat_requests()]))

    def test_send_message_to_a_person_and_a_group(self):
        bot = self.bot()
        self.running(bot)
        self.check_send_message(bot)

    def test_after_a_drop_and_op_7_the_bot_resumes_and_op_9_identifies_again(self):
        bot = self.bot()
        self.running(bot)
        self.qq.control("POST", "drop", {})
        self.assertTrue(wait_until(lambda: self.qq.gateway()["connected"] == 0, 5))
        missed = self.say(bot, "c2c", "said while you were away")
        self.assertFalse(missed["delivered"])
        self.assertTrue(wait_until(
            lambda: [r for r in self.qq.gateway()["resumes"] if r["outcome"] == "resumed"], 15))
        self.assertIn("said while you were away", self.wait_sent(1)[0]["content"])
        self.qq.control("POST", "reconnect", {})
        self.assertTrue(wait_until(
            lambda: len([r for r in self.qq.gateway()["resumes"]
                         if r["outcome"] == "resumed"]) == 2, 10))
        self.say(bot, "c2c", "still there?")
        self.assertIn("still there?", self.wait_sent(2)[1]["content"])
        self.assertEqual(len(self.qq.gateway()["identifies"]), 1)
        self.qq.control("POST", "invalid_session", {})
        self.assertTrue(wait_until(lambda: len(self.qq.gateway()["identifies"]) == 2, 10))
        self.assertTrue(wait_until(lambda: self.qq.gateway()["identified"] == 1, 5))
        self.say(bot, "c2c", "after op 9")
        self.assertIn("after op 9", self.wait_sent(3)[2]["content"])
        heartbeats = self.qq.gateway()["heartbeats"]
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")
        logs = json.dumps(self.logs(bot))
        self.assertIn("resumed the QQ gateway session", logs)
        self.assertIn("op 9", logs)
        self.assertIsInstance(heartbeats, list)

    def test_an_expired_token_is_fetched_again_and_the_reply_retried(self):
        bot = self.bot()
        self.running(bot)
        fetched = self.qq.tokens()["fetches"]
        self.qq.control("POST", "expire_tokens", {})
        # Events still arrive over the open socket; the reply meets the expired token.
        got = self.qq.event({"type": "c2c", "content": "after expiry"})
        self.assertTrue(got["delivered"])
        sent = self.wait_sent(1)[0]
        self.assertIn("after expiry", sent["content"])
        self.assertGreater(self.qq.tokens()["fetches"], fetched)
        refused = [s for s in self.qq.sent(False) if not s["ok"]]
        self.assertEqual(refused, [])  # the 401 came before the fake's message checks
        self.assertIn("fetching a new one", json.dumps(self.logs(bot)))

    def test_images_sent_to_the_bot_reach_the_model_as_bytes(self):
        bot = self.bot()
        self.running(bot)
        self.qq.event({"type": "c2c", "content": "what is this", "attachments": [
            {"content_type": "image/png", "url": self.qq.base + "/_media/cat.png"},
            {"content_type": "image/jpeg", "url": self.qq.base + "/_media/missing.png"}]})
        self.wait_sent(1)
        body = json.dumps(self.llm.chat_requests()[0]["body"])
        self.assertIn("what is this", body)
        self.assertIn("data:image/png;base64,iVBORw0KGgo", body)
        self.assertIn(self.qq.base + "/_media/missing.png", body)  # kept by URL
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "on by URL: HTTP 404" in l["text"]]))

    def test_heartbeats_carry_the_last_seq(self):
        self.qq.control("POST", "config", {"heartbeat_interval": 1000})
        bot = self.bot()
        self.running(bot)
        got = self.qq.event({"type": "c2c", "content": "count me"})
        self.wait_sent(1)
        self.assertTrue(wait_until(lambda: got["s"] in self.qq.gateway()["heartbeats"], 5),
                        self.qq.gateway()["heartbeats"])
        self.assertEqual(self.qq.gateway()["connections"], 1)

    def test_close_4004_renews_the_token_and_4915_stops_reconnecting(self):
        bot = self.bot()
        self.running(bot)
        fetched = self.qq.tokens()["fetches"]
        self.qq.control("POST", "close", {"code": 4004, "reason": "invalid token"})
        self.assertTrue(wait_until(lambda: len(self.qq.gateway()["identifies"]) == 2, 10))
        self.assertGreater(self.qq.tokens()["fetches"], fetched)
        self.assertTrue(wait_until(lambda: self.qq.gateway()["identified"] == 1, 5))
        self.qq.control("POST", "close", {"code": 4915, "reason": "banned"})

        data = self.errored(bot)
        self.assertIn("4915", data["runtime"]["error"])
        connections = self.qq.gateway()["connections"]
        time.sleep(2.5)  # past the first backoff steps
        self.assertEqual(self.qq.gateway()["connections"], connections)

    def test_a_token_in_its_last_minute_is_renewed_before_it_is_used(self):
        self.qq.control("POST", "config", {"token_ttl": 52})
        bot = self.bot()
        self.running(bot)
        issued = self.qq.tokens()["issued"]
        time.sleep(2.5)  # now less than 50 s are left
        self.qq.event({"type": "c2c", "content": "fresh token please"})
        self.assertIn("fresh token please", self.wait_sent(1)[0]["content"])
        self.assertGreater(self.qq.tokens()["issued"], issued)
        self.assertNotIn("expired", json.dumps(self.logs(bot)))

    def test_wrong_credentials_show_as_an_error_without_the_secret(self):
        wrong = "not-the-secret-of-this-bot"
        bot = self.bot(secret=wrong)

        data = self.errored(bot)
        self.assertIn("100016", data["runtime"]["error"])
        self.assertNotIn(wrong, json.dumps(data["runtime"]))
        self.assertNotIn(wrong, json.dumps(self.logs(bot)))
        self.assertEqual(self.qq.gateway()["connections"], 0)

    def test_disabling_closes_the_gateway_and_the_bot_stops_answering(self):
        bot = self.bot()
        self.running(bot)
        self.assertEqual(self.qq.gateway()["connected"], 1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.qq.gateway()["connected"] == 0, 10))
        self.assertIn({"code": 1000, "by": "client"}, self.qq.gateway()["closes"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        got = self.qq.event({"type": "c2c", "content": "anyone?"})
        self.assertFalse(got["delivered"])
        time.sleep(0.5)
        self.assertEqual(self.qq.sent(), [])
        self.assertEqual(self.llm.chat_requests(), [])


class QqWebhookBotTest(QqCase):
    webhook = True

    def test_the_validation_callback_is_answered_with_its_signature(self):
        bot = self.bot()
        self.running(bot)
        got = self.qq.control("POST", "validate", {"url": self.url(bot)})
        self.assertEqual(got["status"], 200, got)
        self.assertTrue(got["valid"], got)
        self.assertEqual(self.qq.gateway()["connections"], 0)  # no gateway in webhook mode
        self.assertIn("validation", json.dumps(self.logs(bot)))

    def test_signed_dispatches_are_acknowledged_at_once_and_answered(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], APPID)
        got = self.say(bot, "c2c", "quick ack please")
        self.assertEqual(got["status"], 200, got)
        self.assertEqual(got["body"]["op"], 12)
        self.assertLess(got["elapsed"], 1.0)
        self.wait_sent(1)
        self.check_c2c_group_and_guild_answers_after_one(bot)

    def check_c2c_group_and_guild_answers_after_one(self, bot):
        group = self.say(bot, "group_at", "in the group")
        sent = self.wait_sent(2)[1]
        self.assertEqual((sent["route"], sent["target"], sent["msg_id"], sent["msg_seq"]),
                         ("group", GROUP, group["id"], 1))
        at = self.say(bot, "at", "in the guild")
        sent = self.wait_sent(3)[2]
        self.assertEqual((sent["route"], sent["msg_id"]), ("channel", at["id"]))
        self.assertIn("echo: in the guild", sent["content"])
        self.assertFalse(self.say(bot, "group", "chatter")["delivered"])
        self.assertNotIn(SECRET, json.dumps(self.logs(bot)))

    def test_forged_and_unsigned_calls_are_refused_without_a_model_call(self):
        bot = self.bot()
        self.running(bot)
        forged = self.say(bot, "c2c", "forged", forge=True)
        self.assertEqual(forged["status"], 401, forged)
        unsigned = self.say(bot, "c2c", "unsigned", unsigned=True)
        self.assertEqual(unsigned["status"], 401, unsigned)
        # An op 13 whose plain_token is a body would make the bot sign that body.
        oracle = self.qq.control("POST", "callback", {
            "url": self.url(bot), "unsigned": True,
            "body": {"op": 13, "d": {"plain_token": '{"op":0}', "event_ts": "1"}}})
        self.assertEqual(oracle["status"], 400, oracle)
        time.sleep(0.5)
        self.assertEqual(self.llm.chat_requests(), [])
        self.assertEqual(self.qq.sent(False), [])
        self.say(bot, "c2c", "genuine")
        self.assertIn("genuine", self.wait_sent(1)[0]["content"])

    def test_a_redelivered_event_is_answered_once(self):
        bot = self.bot()
        self.running(bot)
        first = self.say(bot, "c2c", "only once", event_id="C2C_MESSAGE_CREATE:redelivered1")
        again = self.qq.control("POST", "callback", {"url": self.url(bot), "body": {
            "op": 0, "id": "C2C_MESSAGE_CREATE:redelivered1", "t": "C2C_MESSAGE_CREATE",
            "d": first["d"]}})
        self.assertEqual((first["status"], again["status"]), (200, 200))
        self.assertEqual(again["body"]["op"], 12)
        self.wait_sent(1)
        time.sleep(0.5)
        self.assertEqual(len(self.qq.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_malformed_bodies_are_refused_and_logged(self):
        bot = self.bot()
        self.running(bot)
        bad = self.qq.control("POST", "callback", {"url": self.url(bot), "body": "{not json"})
        self.assertEqual(bad["status"], 400, bad)
        broken = self.qq.control("POST", "callback", {"url": self.url(bot), "body": {
            "op": 0, "id": "C2C_MESSAGE_CREATE:broken", "t": "C2C_MESSAGE_CREATE",
            "d": {"id": "x1", "content": "x", "author": {}}}})
        self.assertEqual(broken["status"], 200, broken)
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "malformed QQ" in l["text"]]))
        self.say(bot, "c2c", "still alive")
        self.assertIn("still alive", self.wait_sent(1)[0]["content"])

    def test_send_message_to_a_person_and_a_group(self):
        bot = self.bot()
        self.running(bot)
        self.check_send_message(bot)

    def test_disabling_the_bot_stops_it_answering(self):
        bot = self.bot()
        self.running(bot)
        self.say(bot, "c2c", "before")
        self.wait_sent(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.status(bot)["runtime"]["status"] == "stopped"))
        got = self.say(bot, "c2c", "after")
        self.assertEqual(got["status"], 409, got)
        time.sleep(0.3)
        self.assertEqual(len(self.qq.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)


if __name__ == "__main__":
    unittest.main()
