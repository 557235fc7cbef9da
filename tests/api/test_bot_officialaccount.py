"""A WeChat Official Account bot end to end: tests/fakes/fake_officialaccount.py plays WeChat
(signed plaintext and safe-mode callbacks, 5-second attempts retried three times, the token and
customer-service APIs) against the real binary's /bots/{uuid} route; the model is fake_llm.py.
Passive replies in both modes and both LangBot reply modes (drop, passive), slow models, replies
too late for every attempt, send_message, forged and replayed callbacks, disabling, and logs.
Official Accounts have no groups or mentions: the group half of the matrix is a refusal."""

import json
import time
import unittest
import urllib.parse

from fake_clients import wait_until
from platform_case import PlatformCase
from oa_fake import FakeOfficialAccount

import sys, os  # noqa: E401  (wechat_envelope lives with the fakes)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import wechat_envelope as env  # noqa: E402

TOKEN = "oa-callback-token"
AES = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
APP_ID = "wxfake0000000001"
SECRET = "fake-app-secret-0001"
USER = "oUserAAAAAAAAAAAAAAAAAAAAAAA"


class OfficialAccountBotTest(PlatformCase):
    adapter = "officialaccount"
    pipeline_name = "oa"
    oa = None

    @classmethod
    def setUpClass(cls):
        cls.oa = FakeOfficialAccount()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.oa.stop()

    def setUp(self):
        super().setUp()
        self.oa.reset()

    # Helpers

    def bot(self, mode="drop", enable=True, **extra):
        config = dict({"token": TOKEN, "EncodingAESKey": AES, "AppID": APP_ID,
                       "AppSecret": SECRET, "Mode": mode, "LoadingMessage": "thinking...",
                       "api_base_url": self.oa.base}, **extra)
        uuid = self.platform_bot(config, enable=enable)
        if enable:
            self.running(uuid)
        return uuid

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def say(self, bot, text, **spec):
        return self.oa.delivery(self.oa.message(self.url(bot), USER, text, **spec))

    def raw_post(self, bot, body, query):
        return self.srv.req("POST", "/bots/%s?%s" % (bot, urllib.parse.urlencode(query)),
                            raw_body=body, headers={"Content-Type": "text/xml"})

    def signed_query(self, timestamp=None, nonce="1234"):
        timestamp = str(int(time.time()) if timestamp is None else timestamp)
        return {"timestamp": timestamp, "nonce": nonce,
                "signature": env.signature(TOKEN, timestamp, nonce)}

    # Tests

    def test_url_verification_echoes_and_a_forged_one_is_refused(self):
        bot = self.bot()
        got = self.oa.control("POST", "/_control/verify", {"url": self.url(bot)})
        self.assertEqual((got["status"], got["body"]), (200, got["echostr"]))
        got = self.oa.control("POST", "/_control/verify", {"url": self.url(bot),
                                                           "bad_signature": True})
        self.assertEqual(got["status"], 401)

    def test_direct_message_answered_passively_in_safe_and_plain_mode_and_logged(self):
        bot = self.bot()
        data = self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], APP_ID)
        for mode in ("safe", "plain"):
            got = self.say(bot, "hello " + mode, mode=mode)
            self.assertEqual([a["status"] for a in got["attempts"]], [200], got)
            self.assertEqual(got["reply"]["Content"], "echo: hello " + mode)
            self.assertEqual(got["reply"]["ToUserName"], USER)
            self.assertEqual(got["reply"]["FromUserName"], "gh_fake0account")
        self.assertEqual(len(self.llm.chat_requests()), 2)
        logs = wait_until(lambda: [l for l in self.logs(bot) if "hello safe" in l["text"]])
        self.assertTrue(logs, self.logs(bot))
        self.assertEqual(logs[0]["message_session_id"], "person_" + USER)
        text = json.dumps(self.logs(bot))
        for secret in (SECRET, AES, TOKEN):
            self.assertNotIn(secret, text)

    def test_a_slow_model_is_answered_on_wechats_retry_and_asked_once(self):
        bot = self.bot()
        self.slow_model(6000, "worth the wait")
        got = self.say(bot, "think hard", mode="safe")
        self.assertEqual([a["status"] for a in got["attempts"]], [503, 200], got)
        self.assertEqual(got["reply"]["Content"], "worth the wait")
        self.assertEqual(len(self.llm.chat_requests()), 1)
        # WeChat redelivering a message already answered: "success", no second model call.
        again = self.say(bot, "think hard", msg_id=got["msg_id"], mode="safe")
        self.assertEqual((again["attempts"][0]["body"], again["reply"]), ("success", None))
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_a_reply_too_late_for_the_callback_goes_through_customer_service(self):
        bot = self.bot()
        self.slow_model(5000, "late answer")
        got = self.say(bot, "slow", attempts=1)  # WeChat gave up after one attempt
        self.assertEqual([a["status"] for a in got["attempts"]], [503])
        sent = wait_until(lambda: self.oa.sent(), 20)
        self.assertEqual(sent, [{"touser": USER, "content": "late answer"}])

    def test_passive_mode_answers_loading_then_the_reply_on_the_next_message(self):
        bot = self.bot(mode="passive")
        got = self.say(bot, "first")
        self.assertEqual(got["reply"]["Content"], "thinking...")
        self.assertTrue(wait_until(lambda: self.llm.chat_requests()))
        time.sleep(0.3)  # the reply is queued for the user's next message
        got = self.say(bot, "anything")
        self.assertEqual(got["reply"]["Content"], "echo: first")
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_send_message_to_a_person_groups_refused_and_an_expired_token_renewed(self):
        bot = self.bot()
        path = "/api/v1/platform/bots/%s/send_message" % bot
        person = {"target_type": "person", "target_id": USER,
                  "message_chain": [{"type": "Plain", "text": "hello from the API"}]}
        self.assertOk(*self.as_key("POST", path, person)[:2])
        self.assertEqual(self.oa.sent(), [{"touser": USER, "content": "hello from the API"}])
        self.assertEqual(self.oa.tokens_issued(), 1)
        self.oa.control("POST", "/_control/expire", {})
        self.assertOk(*self.as_key("POST", path, person)[:2])
        self.assertEqual(len(self.oa.sent()), 2)
        self.assertEqual(self.oa.tokens_issued(), 2)
        group = dict(person, target_type="group", target_id="somegroup")
        status, resp, _ = self.as_key("POST", path, group)
        self.assertError(status, resp, 400, "people only")
        image = dict(person, message_chain=[{"type": "Image", "url": "https://x.test/a.png"}])
        status, resp, _ = self.as_key("POST", path, image)
        self.assertError(status, resp, 400, "message_chain[0]")
        # An account without the customer-service API: WeChat's refusal, no secret in it.
        self.oa.config(customer_service=False)
        status, resp, _ = self.as_key("POST", path, person)
        self.assertError(status, resp, 502, "48001")
        self.assertNotIn(SECRET, json.dumps(resp))

    def test_forged_stale_replayed_and_malformed_callbacks_are_refused_with_no_model_call(self):
        bot = self.bot()
        got = self.say(bot, "forged", bad_signature=True, attempts=1)
        self.assertEqual(got["attempts"][0]["status"], 401)
        got = self.say(bot, "forged", bad_signature=True, mode="safe", attempts=1)
        self.assertEqual(got["attempts"][0]["status"], 401)
        got = self.say(bot, "stale", stale=True, attempts=1)
        self.assertEqual(got["attempts"][0]["status"], 401)
        plain = env.xml([("ToUserName", "gh_x"), ("FromUserName", USER), ("CreateTime", 1),
                         ("MsgType", "text"), ("Content", "x"), ("MsgId", 5)]).encode()
        query = self.signed_query(nonce="reused-1")
        status, _, _ = self.raw_post(bot, plain, query)
        self.assertEqual(status, 200)
        # The same signature again with another body: a replay, not WeChat's retry.
        other = plain.replace(b"<![CDATA[x]]>", b"<![CDATA[evil]]>")
        for _ in range(2):  # and again: a refused replay is not remembered as accepted
            status, body, _ = self.raw_post(bot, other, query)
            self.assertEqual(status, 401, body)
        # Safe mode sealed for another AppID.
        key = env.aes_key(AES)
        ts = str(int(time.time()))
        enc = env.encrypt(key, plain.decode(), "wxsomeoneelse0001")
        status, body, _ = self.raw_post(bot, env.xml([("Encrypt", enc)]).encode(), {
            "timestamp": ts, "nonce": "9", "encrypt_type": "aes",
            "signature": env.signature(TOKEN, ts, "9"),
            "msg_signature": env.signature(TOKEN, ts, "9", enc)})
        self.assertEqual(status, 401, body)
        for bad in (b"<xml><unclosed>", b"not xml", b"<!DOCTYPE x [<!ENTITY e 'x'>]><xml/>",
                    env.xml([("MsgType", "text")]).encode()):
            status, body, _ = self.raw_post(bot, bad, self.signed_query(nonce=str(len(bad))))
            self.assertEqual(status, 400, (bad, body))
        status, body, _ = self.raw_post(bot, b" " * (2 * 1024 * 1024), self.signed_query())
        self.assertEqual(status, 413)
        self.assertEqual(len(self.llm.chat_requests()), 1)  # only the one honest message
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "refused a forged callback" in l["text"]]))
        got = self.say(bot, "still alive")
        self.assertEqual(got["reply"]["Content"], "echo: still alive")

    def test_events_are_acknowledged_and_disabling_stops_the_bot(self):
        bot = self.bot()
        got = self.say(bot, None, msg_type="event", event="subscribe")
        self.assertEqual((got["attempts"][0]["body"], got["reply"]), ("success", None))
        self.assertEqual(self.llm.chat_requests(), [])
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.ok("GET", "/api/v1/platform/bots/" + bot)
                                   ["bot"]["runtime"]["status"] == "stopped"))
        got = self.say(bot, "after", attempts=1)
        self.assertEqual(got["attempts"][0]["status"], 409, got)
        self.assertEqual(self.llm.chat_requests(), [])


if __name__ == "__main__":
    unittest.main()
