"""A KOOK bot end to end: the real binary talks to tests/fakes/fake_kook.py (REST v3 at the bot's
`api_base_url` + /v3 and the WebSocket gateway from gateway/index) and answers through the fake
model of tests/fakes/fake_llm.py. Direct messages, channel mentions, send_message to a person and
a channel (with images uploaded as assets), a refused token, resuming after a drop, RECONNECT,
duplicate and out-of-order sn, a 429 on send, PINGs and a missing PONG, disabling, and the log."""

import json
import time
import unittest
import urllib.error

from fake_clients import wait_until
from platform_case import PlatformCase
from kook_fake import BOT_ID, TOKEN, FakeKook

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5Er"
       "kJggg==")


class KookBotTest(PlatformCase):
    adapter = "kook"
    pipeline_name = "kook"

    def setUp(self):
        super().setUp()
        self.kook = FakeKook()
        self.addCleanup(self.kook.stop)

    def bot(self, token=TOKEN):
        return self.platform_bot({"token": token, "api_base_url": self.kook.base + "/api"})

    def replies(self, count, timeout=10):
        def enough():
            got = self.kook.sent()
            return got if len(got) >= count else None
        got = wait_until(enough, timeout)
        self.assertTrue(got, "expected %d sent messages, got %r" % (count, self.kook.sent()))
        return got

    def test_a_direct_message_gets_the_model_reply(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], BOT_ID)
        gw = self.kook.gateway()
        self.assertEqual(gw["queries"][0], {"compress": "0", "token_ok": True})
        self.assertEqual([h["code"] for h in gw["hellos"]], [0])
        injected = self.kook.say("hello kook", channel_type="PERSON", type=1)
        self.assertTrue(injected["delivered"])
        reply = self.replies(1)[0]
        self.assertEqual((reply["kind"], reply["target_id"]), ("direct", "2000000001"))
        self.assertIn("echo: hello kook", reply["content"])
        self.assertIsNone(reply["quote"])
        # The bot's own message and another bot's, echoed by the gateway, are not answered.
        self.kook.say("echo of myself", channel_type="PERSON", author_id=BOT_ID)
        self.kook.say("another bot", channel_type="PERSON", author_id="2000000009",
                      author={"username": "other", "bot": True})
        # The reply is logged once KOOK has taken it.
        logs = wait_until(lambda: (lambda text: "echo: hello kook" in text and text)(
            json.dumps(self.logs(bot), ensure_ascii=False)), 5)
        self.assertTrue(logs, self.logs(bot))
        self.assertIn("message from Ann: hello kook", logs)
        self.assertIn("connected to the KOOK gateway", logs)
        time.sleep(0.5)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        self.assertEqual(len(self.kook.sent()), 1)

    def test_zlib_frames_are_understood_too(self):
        # The bot asks for compress=0, but KOOK's default is zlib; a server that compresses
        # anyway still works.
        self.kook.control("POST", "config", {"force_compress": True})
        bot = self.bot()
        self.running(bot)
        self.kook.say("zipped hello", channel_type="PERSON")
        self.assertIn("zipped hello", self.replies(1)[0]["content"])

    def test_a_channel_message_is_answered_only_when_it_mentions_the_bot(self):
        bot = self.bot()
        self.running(bot)
        self.kook.say("just chatting", target_id="9100000002")
        mention = self.kook.say("(met)%s(met) are you there" % BOT_ID, target_id="9100000002")
        reply = self.replies(1)[0]
        self.assertEqual((reply["kind"], reply["target_id"]), ("channel", "9100000002"))
        self.assertIn("are you there", reply["content"])
        self.assertEqual(reply["quote"], mention["msg_id"])
        self.assertEqual(reply["type"], 9)
        time.sleep(0.5)  # a reply to the first message would have come by now
        self.assertEqual(len(self.kook.sent()), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))

    def test_send_message_reaches_a_person_and_a_channel(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "2000000003", [
            {"type": "Plain", "text": "hello person"}])
        person = self.assertOk(status, resp)
        self.kook.control("POST", "channel", {"id": "9100000005"})
        status, resp, _ = self.send(bot, "group", "9100000005", [
            {"type": "Plain", "text": "announcement for "},
            {"type": "At", "target": "2000000004"},
            {"type": "Plain", "text": " (met)all(met)"},
            {"type": "Image", "base64": "data:image/png;base64," + PNG},
            {"type": "Image", "url": self.kook.base + "/files/cat.png"}])
        group = self.assertOk(status, resp)
        sent = self.replies(4)
        dm, text, img1, img2 = sent
        self.assertEqual((dm["kind"], dm["target_id"], dm["content"]),
                         ("direct", "2000000003", "hello person"))
        self.assertEqual(str(person.get("message_id")), dm["msg_id"])
        self.assertEqual((text["kind"], text["target_id"]), ("channel", "9100000005"))
        # The mention is KOOK's syntax; the text's own "(met)all(met)" is escaped, not a ping.
        self.assertEqual(text["content"], "announcement for (met)2000000004(met) \\(met\\)all\\(met\\)")
        assets = [a["url"] for a in self.kook.assets()]
        self.assertEqual([(img1["type"], img1["content"]), (img2["type"], img2["content"])],
                         [(2, assets[0]), (2, assets[1])])
        self.assertEqual(str(group.get("message_id")), img2["msg_id"])
        # A target that is no KOOK id is refused before any call.
        status, resp, _ = self.send(bot, "group", "general channel", [
            {"type": "Plain", "text": "x"}])
        self.assertError(status, resp, 400, "target_id")
        # A channel KOOK does not know: the platform's refusal comes back.
        status, resp, _ = self.send(bot, "group", "9199999999", [{"type": "Plain", "text": "x"}])
        self.assertEqual(status, 502, resp)

    def test_a_refused_token_shows_as_an_error_without_the_token(self):
        wrong = "1/MTAwMDA=/not-the-token"
        bot = self.bot(token=wrong)
        data = self.errored(bot)
        self.assertIn("401", data["runtime"]["error"])
        self.assertNotIn(wrong, json.dumps(data["runtime"]))
        logs = self.logs(bot)
        self.assertTrue(any(l["level"] == "error" for l in logs), logs)
        self.assertNotIn(wrong, json.dumps(logs))
        self.assertEqual(self.kook.gateway()["connections"], 0)
        time.sleep(1.5)  # no retry loop against a refused token
        self.assertEqual(len(self.kook.calls()), 1)
        self.assertEqual(self.llm.chat_requests(), [])

    def test_a_hello_refusal_stops_the_bot(self):
        self.kook.control("POST", "config", {"hello_code": 40102})
        bot = self.bot()
        data = self.errored(bot)
        self.assertIn("40102", data["runtime"]["error"])
        time.sleep(2)  # past the first backoff steps: no reconnecting
        self.assertEqual(self.kook.gateway()["connections"], 1)

    def test_after_a_drop_the_bot_resumes_and_gets_what_it_missed(self):
        bot = self.bot()
        self.running(bot)
        first = self.kook.say("before the drop", channel_type="PERSON")
        self.replies(1)
        self.kook.control("POST", "drop", {})
        self.assertTrue(wait_until(lambda: self.kook.gateway()["connected"] == 0, 5))
        missed = self.kook.say("said while you were away", channel_type="PERSON")
        self.assertFalse(missed["delivered"])
        resumed = wait_until(lambda: [r for r in self.kook.gateway()["resumes"]
                                      if r["outcome"] == "resumed"], 15)
        self.assertTrue(resumed, self.kook.gateway())
        self.assertEqual(resumed[0]["sn"], str(first["sn"]))
        self.assertIn("said while you were away", self.replies(2)[1]["content"])
        gw = self.kook.gateway()
        self.assertEqual(len(gw["hellos"]), 2)
        self.assertTrue(gw["hellos"][1]["resume"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")
        self.assertIn("RESUME ACK", json.dumps(self.logs(bot)))

    def test_a_refused_resume_starts_a_new_session(self):
        bot = self.bot()
        self.running(bot)
        self.kook.control("POST", "expire", {})
        self.kook.control("POST", "drop", {})
        fresh = wait_until(lambda: len([h for h in self.kook.gateway()["hellos"]
                                        if h["code"] == 0 and not h["resume"]]) == 2, 15)
        self.assertTrue(fresh, self.kook.gateway())
        self.assertEqual([r["outcome"] for r in self.kook.gateway()["resumes"]],
                         ["session expired"])
        self.kook.say("after the new session", channel_type="PERSON")
        self.assertIn("after the new session", self.replies(1)[0]["content"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")

    def test_reconnect_starts_a_new_session_from_the_gateway(self):
        bot = self.bot()
        self.running(bot)
        self.kook.say("one", channel_type="PERSON")
        self.replies(1)
        self.kook.control("POST", "reconnect", {"code": 40108, "err": "invalid sn"})
        fresh = wait_until(lambda: len([h for h in self.kook.gateway()["hellos"]
                                        if h["code"] == 0 and not h["resume"]]) == 2, 10)
        self.assertTrue(fresh, self.kook.gateway())
        gw = self.kook.gateway()
        self.assertEqual(gw["resumes"], [])  # sn and session cleared: no resume
        self.assertEqual(len([c for c in self.kook.calls() if c["path"] == "/gateway/index"]), 2)
        two = self.kook.say("two", channel_type="PERSON")
        self.assertEqual(two["sn"], 1)
        self.assertIn("two", self.replies(2)[1]["content"])
        self.assertIn("RECONNECT", json.dumps(self.logs(bot)))

    def test_duplicate_and_early_events_are_answered_once_in_order(self):
        bot = self.bot()
        self.running(bot)
        first = self.kook.say("first", channel_type="PERSON", hold=True)
        self.assertFalse(first["delivered"])
        # sn 2 comes before sn 1: the bot holds it and asks for what it missed (RESUME, s=4,
        # with the last sn it handled); KOOK sends sn 1 and 2 again, and both are answered
        # once, in order.
        self.kook.say("second", channel_type="PERSON")
        sent = self.replies(2)
        self.assertIn("first", sent[0]["content"])
        self.assertIn("second", sent[1]["content"])
        self.assertEqual(self.kook.gateway()["resume_signals"], [0])
        # Duplicates of handled events are dropped.
        self.kook.control("POST", "resend", {"sn": 2})
        self.kook.control("POST", "resend", {"sn": first["sn"]})
        time.sleep(0.8)
        self.assertEqual(len(self.kook.sent()), 2)
        self.assertEqual(len(self.llm.chat_requests()), 2)
        self.assertIn("RESUME", json.dumps(self.logs(bot)))

    def test_disabling_closes_the_gateway_and_the_bot_stops_answering(self):
        bot = self.bot()
        self.running(bot)
        self.assertEqual(self.kook.gateway()["connected"], 1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.kook.gateway()["connected"] == 0, 10))
        self.assertIn({"code": 1000, "by": "client"}, self.kook.gateway()["closes"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        self.kook.say("anyone?", channel_type="PERSON")
        time.sleep(0.5)
        self.assertEqual(self.kook.sent(), [])
        self.assertEqual(self.llm.chat_requests(), [])

    def test_a_429_on_send_is_waited_out(self):
        bot = self.bot()
        self.running(bot)
        self.kook.control("POST", "ratelimit", {"method": "POST", "path": "/direct-message/",
                                                "times": 1, "reset": 2})
        started = time.monotonic()
        self.kook.say("slow down", channel_type="PERSON")
        reply = self.replies(1)[0]
        self.assertGreaterEqual(time.monotonic() - started, 2.0)
        self.assertIn("slow down", reply["content"])
        posts = [c for c in self.kook.calls() if c["path"] == "/direct-message/create"]
        self.assertEqual(len(posts), 2)

    def test_pings_carry_the_last_sn_and_a_missing_pong_resumes(self):
        # Slow by nature: KOOK's PING comes every 30 s (+-5) and its PONG is awaited for 6 s.
        bot = self.bot()
        self.running(bot)
        said = self.kook.say("count me", channel_type="PERSON")
        self.replies(1)
        self.kook.control("POST", "config", {"answer_pings": False})
        pinged = wait_until(lambda: self.kook.gateway()["pings"], 40, 0.2)
        self.assertEqual(pinged, [said["sn"]])
        # No PONG within 6 s: the bot drops the socket and resumes the session.
        self.kook.control("POST", "config", {"answer_pings": True})
        resumed = wait_until(lambda: [r for r in self.kook.gateway()["resumes"]
                                      if r["outcome"] == "resumed"], 15, 0.2)
        self.assertTrue(resumed, self.kook.gateway())
        self.assertIn("PONG", json.dumps(self.logs(bot)))
        self.kook.say("still there?", channel_type="PERSON")
        self.assertIn("still there?", self.replies(2)[1]["content"])


if __name__ == "__main__":
    unittest.main()
