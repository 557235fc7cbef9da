"""A DingTalk bot end to end: the real binary opens a Stream-mode connection to
tests/fakes/fake_dingtalk.py (ticket from /v1.0/gateway/connections/open at the bot's
`api_base_url`, then the WebSocket), acknowledges every frame, echoes pings, answers robot
messages through their session webhook (or the robot OpenAPI once that has expired) with the
fake model of tests/fakes/fake_llm.py. Direct messages, group mentions, send_message to a person
and a group, refused credentials, drop / disconnect and reconnect, repeated frames, expired
session webhooks and access tokens, pictures, disabling and the bot's log."""

import base64
import json
import time
import unittest
import urllib.error

from harness import ServerTestCase
from fake_clients import FakeProvider, wait_until
from dingtalk_fake import CLIENT_ID, CLIENT_SECRET, ROBOT_CODE, FakeDingTalk

ROBOT_NAME = "Helper"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


class DingTalkBotTest(ServerTestCase):
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
        self.dt = FakeDingTalk()
        self.addCleanup(self.dt.stop)

    # Helpers

    def pipeline(self, abilities=()):
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test", abilities=list(abilities))
        config = {"ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}},
                  "output": {"misc": {"quote-origin": False}}}
        return self.make_pipeline(name="dt", config=config)

    def bot(self, secret=CLIENT_SECRET, markdown=True, abilities=()):
        cfg = {"client_id": CLIENT_ID, "client_secret": secret, "robot_code": ROBOT_CODE,
               "robot_name": ROBOT_NAME, "markdown_card": markdown,
               "api_base_url": self.dt.base}
        uuid = self.make_bot(adapter="dingtalk", enable=True,
                             use_pipeline_uuid=self.pipeline(abilities), config=cfg)
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
        self.assertTrue(wait_until(lambda: self.dt.stream()["connected"] == 1, 5))
        return data

    def logs(self, bot):
        return self.ok("POST", "/api/v1/platform/bots/%s/logs" % bot,
                       {"from_index": -1, "max_count": 1000})["logs"]

    def sent(self, count, kind=None, timeout=10):
        def enough():
            got = [s for s in self.dt.sent() if kind is None or s["kind"] == kind]
            return got if len(got) >= count else None
        got = wait_until(enough, timeout)
        self.assertTrue(got, "expected %d %s sends, got %r" % (count, kind, self.dt.sent()))
        return got

    @staticmethod
    def text_of(sent):
        body = sent["body"]
        if sent["kind"] == "webhook":
            return body["markdown"]["text"] if body["msgtype"] == "markdown" else \
                body["text"]["content"]
        param = sent["msgParam"]
        return param.get("text", param.get("content"))

    def send(self, bot, target_type, target_id, chain):
        return self.as_key("POST", "/api/v1/platform/bots/%s/send_message" % bot,
                           {"target_type": target_type, "target_id": target_id,
                            "message_chain": chain})

    # Tests

    def test_a_direct_message_is_answered_through_its_session_webhook(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], ROBOT_NAME)
        opens = self.dt.stream()["opens"]
        self.assertEqual(len(opens), 1)
        self.assertIn({"type": "CALLBACK", "topic": "/v1.0/im/bot/messages/get"},
                      opens[0]["subscriptions"])
        self.assertIn({"type": "EVENT", "topic": "*"}, opens[0]["subscriptions"])
        pushed = self.dt.say("hello dingtalk", senderStaffId="manager1234")
        reply = self.sent(1)[0]
        self.assertEqual(reply["kind"], "webhook")
        self.assertEqual(reply["session"], pushed["session"])
        self.assertEqual(reply["body"]["msgtype"], "markdown")  # markdown_card is on
        self.assertIn("echo: hello dingtalk", self.text_of(reply))
        self.assertIn("hello dingtalk", json.dumps(self.llm.chat_requests()[0]["body"]))
        stream = self.dt.stream()
        acks = [a for a in stream["acks"] if a["messageId"] == pushed["messageId"]]
        self.assertEqual([a["code"] for a in acks], [200])
        self.assertEqual(stream["bad_frames"], 0)
        self.assertEqual(stream["unacked"], [])
        # A ping is acknowledged with its data echoed.
        self.dt.control("POST", "ping", {})
        self.assertTrue(wait_until(lambda: self.dt.stream()["pings"], 5))
        self.assertEqual(self.dt.stream()["pings"][0]["echoed"], True)
        logs = json.dumps(self.logs(bot))
        self.assertIn("hello dingtalk", logs)
        self.assertIn("connected to the DingTalk stream", logs)
        self.assertNotIn(CLIENT_SECRET, logs)
        # No OpenAPI call was needed: no token was fetched.
        self.assertEqual(self.dt.stream()["token_fetches"], 0)

    def test_a_group_message_is_answered_only_when_it_mentions_the_bot(self):
        bot = self.bot(markdown=False)
        self.running(bot)
        self.dt.say("just chatting", "2", conversationId="cidGroupA==", isInAtList=False,
                    senderStaffId="staff2")
        mention = self.dt.say(" @%s are you there" % ROBOT_NAME, "2",
                              conversationId="cidGroupA==", senderStaffId="staff2")
        reply = self.sent(1)[0]
        self.assertEqual(reply["session"], mention["session"])
        self.assertEqual(reply["body"]["msgtype"], "text")
        self.assertIn("are you there", self.text_of(reply))
        time.sleep(0.5)  # a reply to the first message would have come by now
        self.assertEqual(len(self.dt.sent()), 1)
        bodies = json.dumps([r["body"] for r in self.llm.chat_requests()])
        self.assertNotIn("just chatting", bodies)
        self.assertNotIn("@" + ROBOT_NAME, bodies)  # the mention is taken out of the text

    def test_send_message_reaches_a_person_and_a_group_through_the_openapi(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "manager1234",
                                    [{"type": "Plain", "text": "hello person"}])
        person = self.assertOk(status, resp)
        status, resp, _ = self.send(bot, "group", "cidGroupB==",
                                    [{"type": "Plain", "text": "announcement for "},
                                     {"type": "At", "target": "staff9"}])
        group = self.assertOk(status, resp)
        one, two = self.sent(2)
        self.assertEqual((one["kind"], one["userIds"]), ("batchSend", ["manager1234"]))
        self.assertEqual(one["msgKey"], "sampleMarkdown")
        self.assertEqual(one["msgParam"]["text"], "hello person")
        self.assertEqual(one["body"]["robotCode"], ROBOT_CODE)
        self.assertEqual(str(person.get("message_id")), one["processQueryKey"])
        self.assertEqual((two["kind"], two["openConversationId"]), ("groupSend", "cidGroupB=="))
        self.assertEqual(two["msgParam"]["text"], "announcement for @staff9")
        self.assertEqual(str(group.get("message_id")), two["processQueryKey"])
        self.assertEqual(self.dt.stream()["token_fetches"], 1)  # the token is cached
        # What DingTalk robots cannot carry is refused before any call.
        status, resp, _ = self.send(bot, "group", "cidGroupB==",
                                    [{"type": "Voice", "url": "https://example.com/a.amr"}])
        self.assertError(status, resp, 400, "message_chain[0]")
        self.assertEqual(len(self.dt.sent()), 2)

    def test_refused_credentials_show_as_an_error_without_the_secret(self):
        wrong = "not-the-dingtalk-client-secret-42"
        bot = self.bot(secret=wrong)

        def errored():
            data = self.status(bot)
            return data["runtime"]["status"] == "error" and data
        data = wait_until(errored, 10)
        self.assertTrue(data, self.status(bot)["runtime"])
        self.assertIn("refused the client_id/client_secret", data["runtime"]["error"])
        self.assertIn("invalidClientIdOrSecret", data["runtime"]["error"])
        self.assertNotIn(wrong, json.dumps(data["runtime"]))
        logs = self.logs(bot)
        self.assertTrue(any(l["level"] == "error" for l in logs), logs)
        self.assertNotIn(wrong, json.dumps(logs))
        time.sleep(2.5)  # past the first backoff steps: refused credentials are not retried
        stream = self.dt.stream()
        self.assertEqual(len(stream["opens"]), 1)
        self.assertEqual(stream["connections"], 0)
        self.assertEqual(self.llm.chat_requests(), [])

    def test_after_a_drop_and_a_disconnect_the_bot_reconnects_with_a_new_ticket(self):
        self.dt.control("POST", "config", {"disconnect_grace": 5})
        bot = self.bot()
        self.running(bot)
        self.dt.control("POST", "drop", {})
        self.assertTrue(wait_until(lambda: self.dt.stream()["connections"] == 2 and
                                   self.dt.stream()["connected"] == 1, 15), self.dt.stream())
        self.dt.say("after the drop")
        self.assertIn("after the drop", self.text_of(self.sent(1)[0]))
        # disconnect: the bot closes the socket itself (well before the fake's 5 s grace) and
        # opens a new one.
        self.dt.control("POST", "disconnect", {})
        self.assertTrue(wait_until(lambda: self.dt.stream()["connections"] == 3 and
                                   self.dt.stream()["connected"] == 1, 15), self.dt.stream())
        stream = self.dt.stream()
        self.assertIn({"code": 1000}, stream["closes"])
        self.assertEqual(len(stream["opens"]), 3)  # a fresh ticket for every connection
        self.assertEqual(stream["refused_upgrades"], 0)
        self.dt.say("after the disconnect")
        self.assertIn("after the disconnect", self.text_of(self.sent(2)[1]))
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")
        logs = json.dumps(self.logs(bot))
        self.assertIn("disconnect", logs)

    def test_a_repeated_frame_is_acknowledged_each_time_and_answered_once(self):
        bot = self.bot()
        self.running(bot)
        pushed = self.dt.say("only once please", times=3)
        self.sent(1)
        # The same message again in a new frame (a redelivery after a lost acknowledgement).
        again = self.dt.say("only once please", msgId=pushed["msgId"])
        self.assertTrue(wait_until(lambda: len(
            [a for a in self.dt.stream()["acks"]
             if a["messageId"] in (pushed["messageId"], again["messageId"])]) == 4, 5))
        time.sleep(0.5)
        self.assertEqual(len(self.dt.sent()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_malformed_and_oversized_frames_are_logged_and_survived(self):
        bot = self.bot()
        self.running(bot)
        bad = self.dt.control("POST", "raw", {"data": "{not json"})
        self.dt.control("POST", "raw", {"text": "not a frame"})
        self.assertTrue(wait_until(lambda: [a for a in self.dt.stream()["acks"]
                                            if a["messageId"] == bad["messageId"]], 5))
        # A frame over the bot's 1 MiB bound: the bot drops that connection and opens another.
        self.dt.control("POST", "raw", {"text": "x" * (2 << 20)})
        self.assertTrue(wait_until(lambda: self.dt.stream()["connections"] == 2 and
                                   self.dt.stream()["connected"] == 1, 15), self.dt.stream())
        self.dt.say("still here?")
        self.assertIn("still here?", self.text_of(self.sent(1)[0]))
        logs = json.dumps(self.logs(bot))
        self.assertIn("skipped a malformed robot message", logs)
        self.assertIn("skipped a malformed stream frame", logs)
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")

    def test_an_expired_session_webhook_gives_way_to_the_openapi(self):
        bot = self.bot()
        self.running(bot)
        # Expired by its sessionWebhookExpiredTime: the webhook is not tried.
        self.dt.say("late reply", senderStaffId="manager1234", session_ttl=-1)
        reply = self.sent(1)[0]
        self.assertEqual((reply["kind"], reply["userIds"]), ("batchSend", ["manager1234"]))
        self.assertIn("echo: late reply", self.text_of(reply))
        # Refused by DingTalk although the time has not run out: the OpenAPI takes over.
        self.dt.control("POST", "expire_sessions", {})
        self.dt.say(" @%s group question" % ROBOT_NAME, "2", conversationId="cidGroupC==")
        reply = self.sent(2)[1]
        self.assertEqual((reply["kind"], reply["openConversationId"]),
                         ("groupSend", "cidGroupC=="))
        self.assertIn("group question", self.text_of(reply))
        logs = json.dumps(self.logs(bot))
        self.assertIn("session webhook", logs)

    def test_an_expired_access_token_is_fetched_again_and_the_send_repeated(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "manager1234",
                                    [{"type": "Plain", "text": "first"}])
        self.assertOk(status, resp)
        self.dt.control("POST", "expire_tokens", {})
        status, resp, _ = self.send(bot, "person", "manager1234",
                                    [{"type": "Plain", "text": "second"}])
        self.assertOk(status, resp)
        sent = self.sent(2)
        self.assertEqual([self.text_of(s) for s in sent], ["first", "second"])
        self.assertEqual(self.dt.stream()["token_fetches"], 2)

    def test_a_429_is_waited_out_and_a_refusal_comes_back_with_its_reason(self):
        bot = self.bot()
        self.running(bot)
        self.dt.control("POST", "fail", {"path": "/v1.0/robot/groupMessages/send",
                                         "status": 429, "retry_after": 1})
        started = time.monotonic()
        status, resp, _ = self.send(bot, "group", "cidGroupD==",
                                    [{"type": "Plain", "text": "after the wait"}])
        self.assertOk(status, resp)
        self.assertGreaterEqual(time.monotonic() - started, 1.0)
        self.assertEqual(self.text_of(self.sent(1)[0]), "after the wait")
        self.dt.control("POST", "fail", {"path": "/v1.0/robot/oToMessages/batchSend",
                                         "status": 400,
                                         "code": "invalidParameter.userIds.invalid",
                                         "message": "no such user"})
        status, resp, _ = self.send(bot, "person", "nobody",
                                    [{"type": "Plain", "text": "x"}])
        self.assertError(status, resp, 502, "invalidParameter.userIds.invalid")
        self.assertNotIn(CLIENT_SECRET, json.dumps(resp))

    def callback(self, bot, **body):
        body["url"] = "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)
        return self.dt.control("POST", "callback", body)

    def test_http_mode_callbacks_are_verified_then_answered(self):
        bot = self.bot()
        self.running(bot)
        forged = self.callback(bot, text="forged", bad_sign=True)
        self.assertEqual(forged["status"], 401)
        stale = self.callback(bot, text="stale", timestamp_offset_ms=-2 * 3600 * 1000)
        self.assertEqual(stale["status"], 401)
        malformed = self.callback(bot, raw_body="{not json")
        self.assertEqual(malformed["status"], 400)
        good = self.callback(bot, text="over http", senderStaffId="manager1234")
        self.assertEqual(good["status"], 200, good)
        reply = self.sent(1)[0]
        self.assertEqual((reply["kind"], reply["session"]), ("webhook", good["session"]))
        self.assertIn("echo: over http", self.text_of(reply))
        # The same message again (a retry) is answered once.
        self.assertEqual(self.callback(bot, text="over http", msgId=good["msgId"])["status"],
                         200)
        time.sleep(0.5)
        self.assertEqual(len(self.dt.sent()), 1)
        bodies = json.dumps([r["body"] for r in self.llm.chat_requests()])
        self.assertNotIn("forged", bodies)
        self.assertNotIn("stale", bodies)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        self.assertIn("refused a malformed DingTalk callback", json.dumps(self.logs(bot)))

    def test_pictures_reach_the_model_as_images(self):
        self.dt.control("POST", "file", {"downloadCode": "dc-picture-1",
                                         "content_base64": base64.b64encode(PNG).decode(),
                                         "content_type": "image/png"})
        bot = self.bot(abilities=["vision"])
        self.running(bot)
        self.dt.say("", msgtype="richText", content={"richText": [
            {"text": "what is this"},
            {"type": "picture", "downloadCode": "dc-picture-1", "pictureDownloadCode": "p"}]})
        self.sent(1)
        body = json.dumps(self.llm.chat_requests()[0]["body"])
        self.assertIn("what is this", body)
        self.assertIn("data:image/png;base64," + base64.b64encode(PNG).decode(), body)

    def test_a_file_arrives_as_a_file_with_its_download_link(self):
        self.dt.control("POST", "file", {"downloadCode": "dc-file-1",
                                         "content_base64": base64.b64encode(b"%PDF").decode(),
                                         "content_type": "application/pdf"})
        bot = self.bot()
        self.running(bot)
        self.dt.say("", msgtype="file",
                    content={"downloadCode": "dc-file-1", "fileName": "report.pdf"})
        self.assertTrue(wait_until(lambda: "[File report.pdf]" in json.dumps(self.logs(bot)), 10),
                        self.logs(bot))
        # A file whose code DingTalk does not know is left out with a log line.
        self.dt.say("", msgtype="file", content={"downloadCode": "unknown", "fileName": "x.pdf"})
        self.assertTrue(wait_until(lambda: "left out a file" in json.dumps(self.logs(bot)), 10))

    def test_disabling_closes_the_stream_and_the_bot_stops_answering(self):
        bot = self.bot()
        self.running(bot)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.dt.stream()["connected"] == 0, 10))
        self.assertIn({"code": 1000}, self.dt.stream()["closes"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        with self.assertRaises(urllib.error.HTTPError) as refused:
            self.dt.say("anyone?")
        self.assertEqual(refused.exception.code, 409)  # no stream connection is open
        time.sleep(1.5)  # past the first reconnect step: nothing reconnects
        self.assertEqual(self.dt.stream()["connections"], 1)
        self.assertEqual(self.dt.sent(), [])
        self.assertEqual(self.llm.chat_requests(), [])


if __name__ == "__main__":
    unittest.main()
