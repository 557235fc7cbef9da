"""A WeCom customer-service bot (`wecomcs`, 微信客服) end to end: tests/fakes/fake_wecom.py keeps
the customers' messages, sends the encrypted kf_msg_or_event callback to the real binary's
/bots/{uuid} route and serves /cgi-bin/kf/sync_msg, /kf/send_msg and the media APIs at the bot's
`api_base_url`; the model is tests/fakes/fake_llm.py.

Customer-service chats are one external customer with one service account: there are no groups
and no mentions, so the matrix has no group cases (a group target is refused). Covered: the
URL-verification echo, a customer message pulled with the callback's token and answered through
kf/send_msg, the cursor kept between pulls and pages followed while has_more, servicer and system
messages not answered, history from before the bot started not answered, the cursor kept
across a restart of the bot (nothing answered twice), a repeated callback
answered once, forged callbacks refused with no pull and no model call, send_message in both
target forms, an access token expiring mid-send, images from customers, and disabling the bot."""

import base64
import json
import time
import unittest

from fake_clients import wait_until
from platform_case import PlatformCase
from wecom_fake import FakeWeComClient

CORPID = "wwcse2etest00000001"
KF_SECRET = "wecomcs-e2e-kf-secret"
TOKEN = "wecomcse2etoken"
AES_KEY = "CsE2eWeComKey0123456789abcdefghijklmnopqrst"
KFID = "wkcse2eaccount000001"
CUSTOMER = "wmcustomer0000000001"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


class WeComCsBotTest(PlatformCase):
    adapter = "wecomcs"
    pipeline_name = "wecomcs"
    model_abilities = ["chat", "vision"]
    wecom = None

    @classmethod
    def setUpClass(cls):
        cls.wecom = FakeWeComClient()
        try:
            cls.wecom.config(corpid=CORPID, kf_secret=KF_SECRET, token=TOKEN,
                             encoding_aes_key=AES_KEY, kf_accounts=[KFID])
            super().setUpClass()
        except Exception:
            cls.wecom.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.wecom.stop()

    def setUp(self):
        super().setUp()
        self.wecom.reset()
        self.wecom.config(page_size=1000)

    # Helpers

    def bot(self):
        return self.platform_bot({"corpid": CORPID, "secret": KF_SECRET, "token": TOKEN,
                                  "EncodingAESKey": AES_KEY,
                                  "api_base_url": self.wecom.base + "/cgi-bin"})

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def customer_says(self, bot, text, notify=True, **opts):
        body = dict({"external_userid": CUSTOMER, "open_kfid": KFID, "content": text}, **opts)
        if notify:
            body["url"] = self.url(bot)
        return self.wecom.control("POST", "/_control/kf_message", body)

    def wait_sent(self, count, timeout=10):
        got = wait_until(lambda: len(self.wecom.sent()) >= count and self.wecom.sent(), timeout)
        self.assertTrue(got, "expected %d sends, got %r" % (count, self.wecom.sent()))
        return got

    def send_text(self, bot, target, text):
        return self.send(bot, "person", target, text)[:2]

    # Tests

    def test_url_verification_echo(self):
        bot = self.bot()
        self.running(bot)
        got = self.wecom.control("POST", "/_control/verify", {"url": self.url(bot)})
        self.assertTrue(got["ok"], got)

    def test_customer_message_is_pulled_and_answered_and_the_cursor_kept(self):
        bot = self.bot()
        self.running(bot)
        got = self.customer_says(bot, "hello service")
        self.assertEqual((got["delivery"]["status"], got["delivery"]["body"]), (200, ""), got)
        self.assertLess(got["delivery"]["elapsed"], 1.0)
        sent = self.wait_sent(1)[0]
        self.assertEqual(sent["api"], "kf/send_msg")
        body = sent["body"]
        self.assertEqual((body["touser"], body["open_kfid"], body["msgtype"]),
                         (CUSTOMER, KFID, "text"))
        self.assertIn("echo: hello service", body["text"]["content"])
        pull = self.wecom.calls("/kf/sync_msg")[0]["body"]
        self.assertTrue(pull["token"].startswith("ENC"))
        self.assertEqual(pull["open_kfid"], KFID)
        self.assertNotIn("cursor", pull)
        logs = wait_until(lambda: [l for l in self.logs(bot) if "hello service" in l["text"]
                                   and "message from" in l["text"]])
        self.assertTrue(logs, self.logs(bot))
        self.assertEqual(logs[0]["message_session_id"], "person_u" + CUSTOMER)
        # The next pull starts where the first ended.
        self.customer_says(bot, "and again")
        self.wait_sent(2)
        pulls = [c for c in self.wecom.calls("/kf/sync_msg") if c["errcode"] == 0]
        self.assertEqual(len(pulls), 2)
        self.assertTrue(pulls[1]["body"].get("cursor"))
        self.assertEqual(len(self.llm.chat_requests()), 2)
        self.assertNotIn(KF_SECRET, json.dumps(self.logs(bot)))

    def test_pages_are_followed_and_only_customer_messages_answered(self):
        bot = self.bot()
        self.running(bot)
        self.wecom.config(page_size=1)
        self.customer_says(bot, "one", notify=False)
        self.customer_says(bot, "servicer speaking", notify=False, origin=5)
        self.customer_says(bot, "", notify=False, origin=4,
                           event={"event_type": "enter_session"})
        self.customer_says(bot, "two")
        sent = self.wait_sent(2)
        time.sleep(0.5)
        self.assertEqual(len(self.wecom.sent()), 2)
        prompts = json.dumps([r["body"] for r in self.llm.chat_requests()])
        self.assertIn("one", prompts)
        self.assertIn("two", prompts)
        self.assertNotIn("servicer speaking", prompts)
        self.assertGreaterEqual(len(self.wecom.calls("/kf/sync_msg")), 4)
        self.assertTrue(all(s["body"]["touser"] == CUSTOMER for s in sent))

    def test_history_from_before_the_start_is_not_answered(self):
        self.customer_says(None, "old question", notify=False, send_time=int(time.time()) - 3600)
        bot = self.bot()
        self.running(bot)
        self.customer_says(bot, "new question")
        sent = self.wait_sent(1)
        time.sleep(0.5)
        self.assertEqual(len(self.wecom.sent()), 1)
        self.assertIn("new question", sent[0]["body"]["text"]["content"])
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "predates" in l["text"]]))

    def test_repeated_callbacks_are_answered_once_and_forged_ones_refused(self):
        bot = self.bot()
        self.running(bot)
        got = self.customer_says(bot, "once please")
        self.assertEqual(got["delivery"]["status"], 200)
        self.wait_sent(1)
        again = self.wecom.control("POST", "/_control/kf_notify",
                                   {"url": self.url(bot), "open_kfid": KFID})
        self.assertEqual(again["delivery"]["status"], 200)
        pulls = len(self.wecom.calls("/kf/sync_msg"))
        self.assertTrue(wait_until(lambda: len(self.wecom.calls("/kf/sync_msg")) >= 2))
        for forge in ("signature", "receive_id", "stale"):
            bad = self.wecom.control("POST", "/_control/kf_notify",
                                     {"url": self.url(bot), "open_kfid": KFID, "forge": forge})
            self.assertEqual(bad["delivery"]["status"], 401, (forge, bad))
        time.sleep(0.5)
        self.assertEqual(len(self.wecom.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        self.assertLessEqual(len(self.wecom.calls("/kf/sync_msg")), pulls + 1)
        self.assertTrue([l for l in self.logs(bot) if "refused" in l["text"]])

    def test_send_message_in_both_forms_and_token_expiry_mid_send(self):
        bot = self.bot()
        self.running(bot)
        status, data = self.send_text(bot, "u" + CUSTOMER, "before any message")
        self.assertNotEqual(status, 200, data)
        self.assertIn("<external_userid>|<open_kfid>", json.dumps(data))
        self.customer_says(bot, "hi")
        self.wait_sent(1)
        status, data = self.send_text(bot, "u" + CUSTOMER, "session form")
        data = self.assertOk(status, data)
        self.assertTrue(data.get("message_id"))
        self.wecom.control("POST", "/_control/expire_tokens", {})
        status, data = self.send_text(bot, "%s|%s" % (CUSTOMER, KFID), "explicit form")
        self.assertOk(status, data)
        sent = self.wait_sent(3)
        self.assertEqual([s["body"]["text"]["content"] for s in sent[1:]],
                         ["session form", "explicit form"])
        codes = [(c["path"].rsplit("/", 1)[-1], c["errcode"]) for c in self.wecom.calls()]
        self.assertIn([("send_msg", 42001), ("gettoken", 0), ("send_msg", 0)],
                      [codes[i:i + 3] for i in range(len(codes))], codes)
        status, data = self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, {
            "target_type": "group", "target_id": KFID,
            "message_chain": [{"type": "Plain", "text": "x"}]})[:2]
        self.assertError(status, data, 400, "no groups")

    def test_customer_images_reach_the_model(self):
        bot = self.bot()
        self.running(bot)
        self.customer_says(bot, None, image_base64=base64.b64encode(PNG).decode(),
                           content_type="image/png")
        self.wait_sent(1)
        request = json.dumps(self.llm.chat_requests()[0]["body"])
        self.assertIn("data:image/png;base64," + base64.b64encode(PNG).decode(), request)

    def test_a_restarted_bot_pulls_on_from_its_cursor(self):
        bot = self.bot()
        self.running(bot)
        self.customer_says(bot, "before the restart")
        self.wait_sent(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.status(bot)["runtime"]["status"] == "stopped"))
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": True})
        self.running(bot)
        self.customer_says(bot, "after the restart")
        sent = self.wait_sent(2)
        time.sleep(0.5)
        self.assertEqual(len(self.wecom.sent()), 2)
        self.assertIn("after the restart", sent[1]["body"]["text"]["content"])
        self.assertEqual(len(self.llm.chat_requests()), 2)
        pulls = [c["body"] for c in self.wecom.calls("/kf/sync_msg")]
        self.assertNotIn("cursor", pulls[0])
        self.assertTrue(pulls[-1].get("cursor"), pulls)

    def test_disabling_the_bot_stops_it_answering(self):
        bot = self.bot()
        self.running(bot)
        self.customer_says(bot, "before")
        self.wait_sent(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.status(bot)["runtime"]["status"] == "stopped"))
        got = self.customer_says(bot, "after")
        self.assertEqual(got["delivery"]["status"], 409, got)
        time.sleep(0.3)
        self.assertEqual(len(self.wecom.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)


if __name__ == "__main__":
    unittest.main()
