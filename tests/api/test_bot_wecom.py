"""A WeCom internal-application bot (`wecom`) end to end: tests/fakes/fake_wecom.py encrypts and
delivers callbacks to the real binary's /bots/{uuid} route and serves the corp API (gettoken,
message/send, media/upload, media/get) at the bot's `api_base_url`; the model is
tests/fakes/fake_llm.py.

A WeCom app chat is one member with the app: there are no groups and no mentions, so the matrix
has no group cases; a group target is refused instead. Covered: the URL-verification echo, a
direct message answered and logged, send_message to a person (LangBot's <userid>|<agentid> and the
session form), text cut at 2048 bytes, images both ways, forged signatures / wrong receive id /
stale timestamps refused with no model call, WeCom's retries answered once, an access token
expiring mid-send, wrong credentials, malformed and oversized bodies, and disabling the bot."""

import base64
import json
import time
import unittest

from fake_clients import wait_until
from platform_case import PlatformCase
from wecom_fake import FakeWeComClient

CORPID = "wwe2etest0000000001"
SECRET = "wecom-e2e-app-secret"
TOKEN = "wecome2etoken"
AES_KEY = "E2eWeComKey0123456789abcdefghijklmnopqrstuv"
AGENT = 1000002
USER = "zhangsan"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


class WeComBotTest(PlatformCase):
    adapter = "wecom"
    pipeline_name = "wecom"
    model_abilities = ["chat", "vision"]
    wecom = None

    @classmethod
    def setUpClass(cls):
        cls.wecom = FakeWeComClient()
        try:
            cls.wecom.config(corpid=CORPID, secret=SECRET, token=TOKEN, encoding_aes_key=AES_KEY,
                             agent_id=AGENT)
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

    # Helpers

    def bot(self, secret=SECRET):
        return self.platform_bot({"corpid": CORPID, "secret": secret, "token": TOKEN,
                                  "EncodingAESKey": AES_KEY,
                                  "api_base_url": self.wecom.base + "/cgi-bin"})

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def say(self, bot, text, **opts):
        body = dict({"url": self.url(bot), "from": USER, "content": text}, **opts)
        return self.wecom.control("POST", "/_control/app_message", body)

    def wait_sent(self, count, timeout=10):
        got = wait_until(lambda: len(self.wecom.sent()) >= count and self.wecom.sent(), timeout)
        self.assertTrue(got, "expected %d sends, got %r" % (count, self.wecom.sent()))
        return got

    def send_body(self, bot, body):
        return self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot, body)[:2]

    def assertNoSecrets(self, text):
        for secret in [SECRET, TOKEN, AES_KEY] + [c["query"].get("access_token", "")
                                                  for c in self.wecom.calls()]:
            if secret:
                self.assertNotIn(secret, text)

    # Tests

    def test_url_verification_echo(self):
        bot = self.bot()
        self.running(bot)
        got = self.wecom.control("POST", "/_control/verify", {"url": self.url(bot)})
        self.assertTrue(got["ok"], got)
        forged = self.wecom.control("POST", "/_control/verify",
                                    {"url": self.url(bot), "forge": "signature"})
        self.assertEqual(forged["status"], 401, forged)

    def test_direct_message_is_answered_through_message_send_and_logged(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], CORPID)
        got = self.say(bot, "hello wecom")
        delivery = got["deliveries"][0]
        self.assertEqual((delivery["status"], delivery["body"]), (200, ""), delivery)
        self.assertLess(delivery["elapsed"], 1.0)
        sent = self.wait_sent(1)[0]
        self.assertEqual(sent["api"], "message/send")
        body = sent["body"]
        self.assertEqual((body["touser"], body["msgtype"], body["agentid"]),
                         (USER, "text", AGENT))
        self.assertIn("echo: hello wecom", body["text"]["content"])
        logs = wait_until(lambda: [l for l in self.logs(bot) if "hello wecom" in l["text"]
                                   and "message from" in l["text"]])
        self.assertTrue(logs, self.logs(bot))
        self.assertEqual(logs[0]["message_session_id"], "person_u" + USER)
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if l["text"].startswith("reply")]))
        self.assertNoSecrets(json.dumps(self.logs(bot)))

    def test_send_message_to_a_person_text_cut_images_and_no_groups(self):
        bot = self.bot()
        self.running(bot)
        status, data = self.send_body(bot, {"target_type": "person",
                                       "target_id": "%s|%d" % (USER, AGENT),
                                       "message_chain": [{"type": "Plain", "text": "hi"}]})
        data = self.assertOk(status, data)
        sent = self.wait_sent(1)
        self.assertEqual(sent[0]["body"]["text"]["content"], "hi")
        self.assertEqual(data.get("message_id"), sent[0]["msgid"])
        # WeCom app chats have no groups.
        status, data = self.send_body(bot, {"target_type": "group", "target_id": "g1",
                                       "message_chain": [{"type": "Plain", "text": "x"}]})
        self.assertError(status, data, 400, "no groups")
        status, data = self.send_body(bot, {"target_type": "person", "target_id": USER,
                                       "message_chain": [{"type": "Plain", "text": "x"}]})
        self.assertError(status, data, 400, "<userid>|<agentid>")
        # 3000 bytes of CJK go out in two messages of at most 2048 bytes; the image is uploaded.
        long = "好" * 1000
        status, data = self.send_body(bot, {"target_type": "person",
                                       "target_id": "%s|%d" % (USER, AGENT),
                                       "message_chain": [
                                           {"type": "Plain", "text": long},
                                           {"type": "Image", "base64": "data:image/png;base64,"
                                            + base64.b64encode(PNG).decode()}]})
        self.assertOk(status, data)
        sent = self.wait_sent(4)[1:]
        texts = [s["body"]["text"]["content"] for s in sent if s["body"]["msgtype"] == "text"]
        self.assertEqual("".join(texts), long)
        self.assertTrue(all(len(t.encode()) <= 2048 for t in texts))
        self.assertFalse(any(s["truncated"] for s in sent))
        image = sent[-1]["body"]
        self.assertEqual(image["msgtype"], "image")
        upload = self.wecom.uploads()[0]
        self.assertEqual((upload["type"], upload["size"], upload["media_id"]),
                         ("image", len(PNG), image["image"]["media_id"]))
        # The session form names the user as the callbacks do; the agent is learned from them.
        self.say(bot, "remember me")
        self.wait_sent(5)
        status, data = self.send_body(bot, {"target_type": "person", "target_id": "u" + USER,
                                       "message_chain": [{"type": "Plain", "text": "again"}]})
        self.assertOk(status, data)
        self.assertEqual(self.wait_sent(6)[5]["body"]["agentid"], AGENT)

    def test_forged_wrong_receiver_and_stale_callbacks_are_refused_without_a_model_call(self):
        bot = self.bot()
        self.running(bot)
        for forge in ("signature", "receive_id", "key", "stale"):
            got = self.say(bot, "forged " + forge, forge=forge)
            self.assertIn(got["deliveries"][0]["status"], (400, 401), (forge, got))
            if forge != "key":
                self.assertEqual(got["deliveries"][0]["status"], 401, (forge, got))
        time.sleep(0.5)
        self.assertEqual(self.llm.chat_requests(), [])
        self.assertEqual(self.wecom.sent(), [])
        # The log lines are written beside the answers: wait for them rather than race them.
        refused = wait_until(lambda: len([l for l in self.logs(bot) if "refused" in l["text"]]) >= 3)
        self.assertTrue(refused, self.logs(bot))
        self.assertNoSecrets(json.dumps(self.logs(bot)))

    def test_retries_are_answered_once(self):
        bot = self.bot()
        self.running(bot)
        got = self.say(bot, "only once", msg_id="7000000001", times=3)
        self.assertEqual([d["status"] for d in got["deliveries"]], [200, 200, 200])
        self.wait_sent(1)
        time.sleep(0.5)
        self.assertEqual(len(self.wecom.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_an_access_token_expiring_mid_send_is_fetched_again_once(self):
        bot = self.bot()
        self.running(bot)
        self.say(bot, "first")
        self.wait_sent(1)
        self.wecom.control("POST", "/_control/expire_tokens", {})
        self.say(bot, "second")
        sent = self.wait_sent(2)
        self.assertIn("echo: second", sent[1]["body"]["text"]["content"])
        codes = [(c["path"].rsplit("/", 1)[-1], c["errcode"]) for c in self.wecom.calls()]
        self.assertIn([("send", 42001), ("gettoken", 0), ("send", 0)],
                      [codes[i:i + 3] for i in range(len(codes))], codes)
        # A refusal that is not about the token is not retried.
        self.wecom.control("POST", "/_control/fail", {"path": "/message/send", "errcode": 45009,
                                                      "errmsg": "api freq out of limit"})
        status, data = self.send_body(bot, {"target_type": "person",
                                       "target_id": "%s|%d" % (USER, AGENT),
                                       "message_chain": [{"type": "Plain", "text": "x"}]})
        self.assertNotEqual(status, 200, data)
        self.assertIn("45009", json.dumps(data))
        self.assertNoSecrets(json.dumps(data))

    def test_user_images_reach_the_model(self):
        bot = self.bot()
        self.running(bot)
        got = self.wecom.control("POST", "/_control/app_message", {
            "url": self.url(bot), "from": USER, "image_base64": base64.b64encode(PNG).decode(),
            "content_type": "image/png"})
        self.assertEqual(got["deliveries"][0]["status"], 200, got)
        self.wait_sent(1)
        request = json.dumps(self.llm.chat_requests()[0]["body"])
        self.assertIn("data:image/png;base64," + base64.b64encode(PNG).decode(), request)
        self.assertTrue(self.wecom.calls("/media/get"))

    def test_wrong_secret_is_reported(self):
        bot = self.bot(secret="not-the-secret")
        data = wait_until(lambda: self.status(bot)["runtime"]["status"] == "error"
                          and self.status(bot), 10)
        self.assertTrue(data, self.status(bot))
        self.assertIn("40001", json.dumps(data["runtime"]))
        self.assertNotIn("not-the-secret", json.dumps(data["runtime"]))

    def test_malformed_and_oversized_bodies_are_refused_without_harm(self):
        bot = self.bot()
        self.running(bot)
        status, body, _ = self.srv.req("POST", "/bots/%s?msg_signature=x&timestamp=%d&nonce=1"
                                       % (bot, int(time.time())), raw_body=b"<xml><not")
        self.assertIn(status, (400, 401), body)
        status, body, _ = self.srv.req("POST", "/bots/" + bot, raw_body=b" " * (300 * 1024))
        self.assertEqual(status, 413, body)
        got = self.wecom.control("POST", "/_control/callback", {
            "url": self.url(bot), "fields": {"ToUserName": CORPID, "MsgType": "text"}})
        self.assertEqual(got["deliveries"][0]["status"], 400, got)
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "malformed WeCom" in l["text"]]))
        self.say(bot, "still alive")
        self.assertIn("still alive", self.wait_sent(1)[0]["body"]["text"]["content"])

    def test_disabling_the_bot_stops_it_answering(self):
        bot = self.bot()
        self.running(bot)
        self.say(bot, "before")
        self.wait_sent(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.status(bot)["runtime"]["status"] == "stopped"))
        got = self.say(bot, "after")
        self.assertEqual(got["deliveries"][0]["status"], 409, got)
        time.sleep(0.3)
        self.assertEqual(len(self.wecom.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)


if __name__ == "__main__":
    unittest.main()
