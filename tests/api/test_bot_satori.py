"""A Satori bot end to end: the real binary talks to tests/fakes/fake_satori.py (the events
WebSocket at `satori_endpoint`, the HTTP API at `satori_api_base_url`) and answers through the fake
model of tests/fakes/fake_llm.py. Direct messages, group mentions (and no answer without one),
escaping both ways, send_message to a person (direct channel) and a channel, a refused token,
resuming after a drop with the missed event replayed, a malformed signal, disabling, the log."""

import json
import time
import unittest
import urllib.error

from fake_clients import wait_until
from platform_case import PlatformCase
from satori_fake import FakeSatori, PLATFORM, SELF_ID, TOKEN


class SatoriBotTest(PlatformCase):
    adapter = "satori"
    pipeline_name = "sat"

    def setUp(self):
        super().setUp()
        self.sat = FakeSatori()
        self.addCleanup(self.sat.stop)

    def bot(self, token=TOKEN):
        return self.platform_bot(self.sat.bot_config(token))

    def creates(self, count, timeout=10):
        def enough():
            got = self.sat.created()
            return got if len(got) >= count else None
        got = wait_until(enough, timeout)
        self.assertTrue(got, "expected %d message.create calls, got %r" % (count, self.sat.sent()))
        return got

    def test_a_direct_message_gets_the_model_reply(self):
        bot = self.bot()
        data = self.running(bot)
        # READY lists another platform's login first; the bot acts as the configured one.
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], SELF_ID)
        self.assertEqual(self.sat.events()["identifies"], [{"token_ok": True, "sn": None}])
        injected = self.sat.say("hello satori", "private:20001", channel_type=1)
        self.assertEqual(injected["delivered"], 1)
        reply = self.creates(1)[0]
        self.assertEqual(reply["body"]["channel_id"], "private:20001")
        self.assertIn("echo: hello satori", reply["body"]["content"])
        self.assertEqual((reply["platform"], reply["user_id"], reply["auth"]),
                         (PLATFORM, SELF_ID, True))
        self.assertIn("hello satori", json.dumps(self.llm.chat_requests()[0]["body"]))
        # The bot's own message, echoed by the SDK, is not answered.
        self.sat.say("my own words", "private:20001", channel_type=1, user_id=SELF_ID)
        # The reply is logged once its send has completed.
        self.assertTrue(wait_until(lambda: "echo: hello satori" in json.dumps(self.logs(bot)), 5))
        logs = json.dumps(self.logs(bot))
        self.assertIn("hello satori", logs)
        self.assertIn("connected to the Satori server", logs)
        self.assertNotIn(TOKEN, logs)
        time.sleep(0.5)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        # The reply went to the DM channel the event came from: no user.channel.create needed.
        self.assertEqual([s["method"] for s in self.sat.sent()], ["message.create"])

    def test_a_group_message_is_answered_only_when_it_mentions_the_bot(self):
        bot = self.bot()
        self.running(bot)
        self.sat.say("just chatting", "g1", guild_id="g1")
        self.sat.say('<at id="%s"/> is 1 &lt; 2 &amp;&amp; "x"?' % SELF_ID, "g1", guild_id="g1")
        reply = self.creates(1)[0]
        self.assertEqual(reply["body"]["channel_id"], "g1")
        # The model saw the text unescaped; the reply is escaped again for Satori.
        asked = json.dumps(self.llm.chat_requests()[0]["body"], ensure_ascii=False)
        self.assertIn('is 1 < 2 && \\"x\\"?', asked)
        self.assertIn("is 1 &lt; 2 &amp;&amp; &quot;x&quot;?", reply["body"]["content"])
        time.sleep(0.5)  # a reply to the first message would have come by now
        self.assertEqual(len(self.creates(1)), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))

    def test_send_message_reaches_a_person_and_a_channel(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "30001", [
            {"type": "Plain", "text": "hello <person>"}])
        person = self.assertOk(status, resp)
        self.sat.control("POST", "channel", {"id": "g5"})
        status, resp, _ = self.send(bot, "group", "g5", [
            {"type": "Plain", "text": "announcement for "},
            {"type": "At", "target": "20002"},
            {"type": "Image", "url": "https://example.com/a.png?x=1&y=2"}])
        group = self.assertOk(status, resp)
        sent = self.sat.sent()
        self.assertEqual([s["method"] for s in sent],
                         ["user.channel.create", "message.create", "message.create"])
        self.assertEqual(sent[0]["body"], {"user_id": "30001"})
        self.assertEqual(sent[1]["body"], {"channel_id": "private:30001",
                                           "content": "hello &lt;person&gt;"})
        self.assertEqual(str(person.get("message_id")), sent[1]["message_id"])
        self.assertEqual(sent[2]["body"]["channel_id"], "g5")
        self.assertEqual(sent[2]["body"]["content"],
                         'announcement for <at id="20002"/>'
                         '<img src="https://example.com/a.png?x=1&amp;y=2"/>')
        self.assertEqual(str(group.get("message_id")), sent[2]["message_id"])
        # A second message to the person reuses the direct channel.
        status, resp, _ = self.send(bot, "person", "30001", [{"type": "Plain", "text": "again"}])
        self.assertOk(status, resp)
        self.assertEqual([s["method"] for s in self.sat.sent()].count("user.channel.create"), 1)
        # A channel the SDK refuses is the platform's refusal, not a success.
        status, resp, _ = self.send(bot, "group", "nowhere", [{"type": "Plain", "text": "x"}])
        self.assertGreaterEqual(status, 400)
        self.assertIn("unknown channel", json.dumps(resp))

    def test_a_refused_token_shows_as_an_error_without_the_token(self):
        wrong = "not-the-satori-token"
        bot = self.bot(token=wrong)

        data = self.errored(bot)
        self.assertIn("refused the token", data["runtime"]["error"])
        self.assertIn("4004", data["runtime"]["error"])
        self.assertNotIn(wrong, json.dumps(data["runtime"]))
        logs = self.logs(bot)
        self.assertTrue(any(l["level"] == "error" for l in logs), logs)
        self.assertNotIn(wrong, json.dumps(logs))
        self.assertEqual(self.sat.events()["identifies"], [{"token_ok": False, "sn": None}])
        time.sleep(2.5)  # past the first backoff steps: a refused token is not retried
        self.assertEqual(self.sat.events()["connections"], 1)
        self.assertEqual(self.llm.chat_requests(), [])

    def test_after_a_drop_the_bot_resumes_and_gets_what_it_missed(self):
        bot = self.bot()
        self.running(bot)
        before = self.sat.say("before the drop", "private:20001", channel_type=1)
        self.creates(1)
        self.sat.control("POST", "drop", {})
        self.assertTrue(wait_until(lambda: self.sat.events()["connected"] == 0, 5))
        missed = self.sat.say("said while you were away", "private:20001", channel_type=1)
        self.assertEqual(missed["delivered"], 0)
        self.assertIn("said while you were away", self.creates(2, timeout=15)[1]["body"]["content"])
        events = self.sat.events()
        self.assertEqual(events["identifies"][1], {"token_ok": True, "sn": before["sn"]})
        self.assertEqual(events["replayed"], 1)
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")
        self.sat.say("still there?", "private:20001", channel_type=1)
        self.assertIn("still there?", self.creates(3)[2]["body"]["content"])
        self.assertEqual(len(self.llm.chat_requests()), 3)

    def test_a_malformed_signal_is_logged_and_skipped(self):
        bot = self.bot()
        self.running(bot)
        self.sat.control("POST", "raw", {"text": "{not json"})
        self.sat.control("POST", "raw", {"text": json.dumps(
            {"op": 0, "body": {"sn": 99, "type": "message-created", "message": {"id": "x"}}})})
        self.sat.say("after the noise", "private:20001", channel_type=1)
        self.assertIn("after the noise", self.creates(1)[0]["body"]["content"])
        logs = json.dumps(self.logs(bot))
        self.assertIn("malformed Satori signal", logs)
        self.assertIn("malformed Satori event", logs)
        self.assertEqual(self.sat.events()["connections"], 1)

    def test_disabling_closes_the_socket_and_the_bot_stops_answering(self):
        bot = self.bot()
        self.running(bot)
        self.assertEqual(self.sat.events()["connected"], 1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.sat.events()["connected"] == 0, 10))
        self.assertIn({"code": 1000, "by": "client"}, self.sat.events()["closes"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        self.sat.say("anyone?", "private:20001", channel_type=1)
        time.sleep(0.5)
        self.assertEqual(self.sat.sent(), [])
        self.assertEqual(self.llm.chat_requests(), [])


if __name__ == "__main__":
    unittest.main()
