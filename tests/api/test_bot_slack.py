"""A Slack bot end to end: tests/fakes/fake_slack.py signs and delivers Events API calls to the
real binary's /bots/{uuid} route and serves the Web API (auth.test, chat.postMessage) at the
bot's `api_base_url`; the model is tests/fakes/fake_llm.py. Direct messages, group mentions (the
double `message` + `app_mention` delivery answered once), retries, url_verification, the 3 s
acknowledgement with a slow model, forged and stale signatures, send_message, disabling, and
malformed or oversized bodies."""

import base64
import json
import time
import unittest

from fake_clients import FakeSlack, slack_sign, wait_until
from platform_case import PlatformCase

SECRET = "slack-signing-secret-for-tests"
TOKEN = "xoxb-1111-2222-switchboardtest"
BOT_USER = "U0FAKEBOT1"  # what the fake's auth.test answers
# A 1x1 PNG.
PNG_B64 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJ"
           "RU5ErkJggg==")


class SlackBotTest(PlatformCase):
    adapter = "slack"
    pipeline_name = "slack"
    slack = None

    @classmethod
    def setUpClass(cls):
        cls.slack = FakeSlack()
        # Retries after 50 ms instead of Slack's 1 and 5 minutes.
        cls.slack.control("POST", "/_control/config", {
            "signing_secret": SECRET, "bot_token": TOKEN, "retry_delays": [0.05, 0.05, 0.05]})
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.slack.stop()

    def setUp(self):
        super().setUp()
        self.slack.reset()
        self.next_ts = int(time.time())

    # Helpers

    def bot(self, enable=True, secret=SECRET):
        return self.platform_bot({"bot_token": TOKEN, "signing_secret": secret,
                                  "api_base_url": self.slack.base + "/api"}, enable=enable)

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def ts(self):
        self.next_ts += 1
        return "%d.000100" % self.next_ts

    def event(self, bot, text, channel="D0DIRECT01", channel_type="im", user="U0ANN00001",
              **opts):
        event = {"type": "message", "channel": channel, "channel_type": channel_type,
                 "user": user, "text": text, "ts": opts.pop("ts", None) or self.ts()}
        body = dict({"url": self.url(bot), "event": event, "wait": True}, **opts)
        return self.slack.control("POST", "/_control/event", body)["event_id"]

    def posts(self):
        return [s for s in self.slack.sent() if s["method"] == "chat.postMessage"]

    def wait_posts(self, count, timeout=10):
        got = wait_until(lambda: len(self.posts()) >= count and self.posts(), timeout)
        self.assertTrue(got, "expected %d chat.postMessage calls, got %r" % (count, self.posts()))
        return got

    def signed_post(self, bot, raw, timestamp=None):
        ts = int(time.time()) if timestamp is None else timestamp
        headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": str(ts),
                   "X-Slack-Signature": slack_sign(SECRET, ts, raw)}
        return self.srv.req("POST", "/bots/" + bot, raw_body=raw, headers=headers)

    # Tests

    def test_direct_message_gets_the_model_reply_and_is_logged(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], BOT_USER)
        event_id = self.event(bot, "hello slack")
        self.assertEqual([d["status"] for d in self.slack.deliveries(event_id)], [200])
        post = self.wait_posts(1)[0]
        # A person's chat is the user id: Slack posts it into the app's DM with them, which the
        # fake names D + the rest of the user id.
        self.assertEqual(post["channel"], "D0ANN00001")
        self.assertIn("echo: hello slack", post["text"])
        self.assertIn("hello slack", json.dumps(self.llm.chat_requests()[0]["body"]))
        logs = wait_until(lambda: [l for l in self.logs(bot) if "hello slack" in l["text"]
                                   and "message from" in l["text"]])
        self.assertTrue(logs, self.logs(bot))
        self.assertEqual(logs[0]["message_session_id"], "person_U0ANN00001")
        self.assertNotIn(TOKEN, json.dumps(self.logs(bot)))

    def test_group_mention_is_answered_once_in_the_group_and_chatter_is_not(self):
        bot = self.bot()
        self.running(bot)
        self.event(bot, "just chatting", channel="C0GROUP001", channel_type="channel")
        got = self.slack.control("POST", "/_control/mention", {
            "url": self.url(bot), "channel": "C0GROUP001", "user": "U0BOB00001",
            "text": "are you there", "wait": True})
        for event_id in got["event_ids"]:
            self.assertEqual([d["status"] for d in self.slack.deliveries(event_id)], [200])
        post = self.wait_posts(1)[0]
        self.assertEqual(post["channel"], "C0GROUP001")
        self.assertIn("are you there", post["text"])
        time.sleep(0.5)
        self.assertEqual(len(self.posts()), 1, self.posts())
        self.assertEqual(len(self.llm.chat_requests()), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))

    def test_retries_and_replays_are_handled_once(self):
        bot = self.bot()
        self.running(bot)
        ts = self.ts()
        self.event(bot, "only once", ts=ts, event_id="Ev0DUPLICATE1")
        self.event(bot, "only once", ts=ts, event_id="Ev0DUPLICATE1", retry_num=1)
        self.event(bot, "only once", ts=ts, event_id="Ev0DUPLICATE1", retry_num=2)
        self.wait_posts(1)
        time.sleep(0.5)
        self.assertEqual(len(self.posts()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        statuses = [d["status"] for d in self.slack.deliveries("Ev0DUPLICATE1")]
        self.assertEqual(statuses, [200, 200, 200])

    def test_events_are_acknowledged_within_three_seconds_with_a_slow_model(self):
        bot = self.bot()
        self.running(bot)
        self.llm.script_next(path="/v1/chat/completions", delay_ms=4000, body={
            "id": "chatcmpl-slow", "object": "chat.completion", "created": int(time.time()),
            "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "slow but sure"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        event_id = self.event(bot, "take your time")
        deliveries = self.slack.deliveries(event_id)
        self.assertEqual(len(deliveries), 1, deliveries)  # no retry: the first answer was in time
        self.assertEqual(deliveries[0]["status"], 200)
        self.assertLess(deliveries[0]["elapsed"], 1.0)
        post = self.wait_posts(1, timeout=20)[0]
        self.assertIn("slow but sure", post["text"])

    def test_url_verification_answers_the_challenge(self):
        bot = self.bot()
        self.running(bot)
        got = self.slack.control("POST", "/_control/url_verification", {"url": self.url(bot)})
        self.assertTrue(got["ok"], got)
        forged = self.slack.control("POST", "/_control/url_verification",
                                    {"url": self.url(bot), "bad_signature": True})
        self.assertEqual(forged["status"], 401, forged)
        self.assertFalse(forged["ok"])

    def test_forged_and_stale_events_are_refused_and_reach_no_model(self):
        bot = self.bot()
        self.running(bot)
        forged = self.event(bot, "forged", bad_signature=True)
        stale = self.event(bot, "stale", timestamp_offset=-600)
        for event_id in (forged, stale):
            statuses = [d["status"] for d in self.slack.deliveries(event_id)]
            self.assertTrue(statuses and all(s == 401 for s in statuses), statuses)
        time.sleep(0.3)
        self.assertEqual(self.llm.chat_requests(), [])
        self.assertEqual(self.posts(), [])

    def test_send_message_to_a_person_and_a_group_with_a_mention(self):
        bot = self.bot()
        self.running(bot)
        self.slack.control("POST", "/_control/channels", {
            "channels": [{"id": "C0GROUP002", "name": "general"}],
            "users": [{"id": "U0BOB00001", "name": "bob"}]})
        path = "/api/v1/platform/bots/%s/send_message" % bot
        person = {"target_type": "person", "target_id": "U0BOB00001",
                  "message_chain": [{"type": "Plain", "text": "hello <bob> & co"}]}
        data = self.assertOk(*self.as_key("POST", path, person)[:2])
        self.assertTrue(data["sent"])
        group = {"target_type": "group", "target_id": "C0GROUP002",
                 "message_chain": [{"type": "At", "target": "U0BOB00001"},
                                   {"type": "Plain", "text": " news"},
                                   {"type": "Image", "url": "https://example.com/cat.png"}]}
        self.assertOk(*self.as_key("POST", path, group)[:2])
        posts = self.wait_posts(3)
        self.assertEqual(posts[0]["channel"], "D0BOB00001")  # the app's DM with U0BOB00001
        self.assertEqual(posts[0]["text"], "hello &lt;bob&gt; &amp; co")
        self.assertEqual(posts[1]["channel"], "C0GROUP002")
        self.assertEqual(posts[1]["text"], "<@U0BOB00001> news")
        self.assertEqual(posts[2]["blocks"][0]["image_url"], "https://example.com/cat.png")
        self.assertEqual(str(data.get("message_id")), posts[0]["ts"])
        # An inline image is uploaded as a file into the channel; one that is no base64 is
        # refused before any call.
        inline = dict(group, message_chain=[{"type": "Image",
                                             "base64": "data:image/png;base64," + PNG_B64}])
        self.assertOk(*self.as_key("POST", path, inline)[:2])
        uploads = [s for s in self.slack.sent() if s["method"] == "files.completeUploadExternal"]
        self.assertEqual(len(uploads), 1, self.slack.sent())
        self.assertEqual(uploads[0]["channel"], "C0GROUP002")
        self.assertEqual(uploads[0]["files"][0]["filename"], "image.png")
        self.assertEqual(uploads[0]["files"][0]["size"], len(base64.b64decode(PNG_B64)))
        broken = dict(group, message_chain=[{"type": "Image", "base64": "!!not base64!!"}])
        status, resp, _ = self.as_key("POST", path, broken)
        self.assertError(status, resp, 400, "message_chain[0]")
        # Slack's refusal comes back as 502 with its error name.
        self.slack.control("POST", "/_control/fail",
                           {"method": "chat.postMessage", "error": "channel_not_found"})
        status, resp, _ = self.as_key("POST", path, group)
        self.assertError(status, resp, 502, "channel_not_found")
        self.assertNotIn(TOKEN, json.dumps(resp))

    def test_disabling_the_bot_stops_it_answering(self):
        bot = self.bot()
        self.running(bot)
        self.event(bot, "before")
        self.wait_posts(1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.ok("GET", "/api/v1/platform/bots/" + bot)
                                   ["bot"]["runtime"]["status"] == "stopped"))
        event_id = self.event(bot, "after")
        statuses = [d["status"] for d in self.slack.deliveries(event_id)]
        self.assertTrue(statuses and all(s == 409 for s in statuses), statuses)
        time.sleep(0.3)
        self.assertEqual(len(self.posts()), 1)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_malformed_and_oversized_bodies_are_refused_without_harm(self):
        bot = self.bot()
        self.running(bot)
        status, body, _ = self.signed_post(bot, b"{not json")
        self.assertEqual(status, 400, body)
        status, body, _ = self.signed_post(bot, b'{"type":"event_callback","event":7}')
        self.assertEqual(status, 400, body)
        status, body, _ = self.signed_post(bot, b" " * (2 * 1024 * 1024))
        self.assertEqual(status, 413, body)
        # A signed event whose inner event is malformed is acknowledged (else Slack retries it)
        # and logged.
        raw = json.dumps({"type": "event_callback", "event_id": "Ev0BROKEN01",
                          "event": {"type": "message", "channel": 5}}).encode()
        status, body, _ = self.signed_post(bot, raw)
        self.assertEqual(status, 200, body)
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "malformed Slack event" in l["text"]]))
        self.event(bot, "still alive")
        self.assertIn("still alive", self.wait_posts(1)[0]["text"])


if __name__ == "__main__":
    unittest.main()
