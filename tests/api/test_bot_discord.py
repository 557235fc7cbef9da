"""A Discord bot end to end: the real binary talks to tests/fakes/fake_discord.py (REST v10 at the
bot's `api_base_url` + /v10 and Gateway v10 from Get Gateway Bot) and answers through the fake
model of tests/fakes/fake_llm.py. Direct messages, guild mentions, send_message to a person (DM
channel) and a channel, a refused token, resuming after a drop and after op 7 (with the events
missed meanwhile replayed), disabling, the bot's log, and a 429 on send."""

import json
import os
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

from fake_clients import FAKES, wait_until
from platform_case import PlatformCase

TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAx.GsTest.fake-discord-token"


class FakeDiscord:
    """tests/fakes/fake_discord.py as a child process (one per test: its state is global)."""

    def __init__(self, token=TOKEN):
        self.proc = subprocess.Popen([sys.executable, os.path.join(FAKES, "fake_discord.py"),
                                      "--port", "0", "--token", token],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("FAKE_DISCORD_PORT="), line
        fields = dict(f.split("=", 1) for f in line.split())
        self.port = int(fields["FAKE_DISCORD_PORT"])
        self.base = "http://127.0.0.1:%d" % self.port

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/_control/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def sent(self):
        return self.control("GET", "sent")["sent"]

    def gateway(self):
        return self.control("GET", "gateway")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()


class DiscordBotTest(PlatformCase):
    adapter = "discord"
    pipeline_name = "dc"

    def setUp(self):
        super().setUp()
        self.dc = FakeDiscord()
        self.addCleanup(self.dc.stop)

    def bot(self, token=TOKEN, abilities=()):
        cfg = {"client_id": "1", "token": token, "api_base_url": self.dc.base + "/api"}
        return self.platform_bot(cfg, pipeline=self.pipeline(abilities))

    def say(self, content, channel_id="1300000000000000001", guild_id=None, author_id=None,
            mentions=None):
        body = {"channel_id": channel_id, "content": content,
                "author": {"id": author_id or "2000", "username": "ann", "global_name": "Ann"}}
        if guild_id:
            body["guild_id"] = guild_id
        if mentions:
            body["mentions"] = mentions
        return self.dc.control("POST", "message", body)

    def creates(self, count, timeout=10):
        def enough():
            got = [s for s in self.dc.sent() if s["kind"] == "create"]
            return got if len(got) >= count else None
        got = wait_until(enough, timeout)
        self.assertTrue(got, "expected %d created messages, got %r" % (count, self.dc.sent()))
        return got

    def test_a_direct_message_gets_the_model_reply(self):
        bot = self.bot()
        data = self.running(bot)
        bot_id = data["adapter_runtime_values"]["bot_account_id"]
        gw = self.dc.gateway()
        self.assertEqual(len(gw["identifies"]), 1)
        self.assertEqual(gw["identifies"][0]["intents"], 1 | 1 << 9 | 1 << 12 | 1 << 15)
        self.assertEqual(gw["queries"][0], {"v": "10", "encoding": "json"})
        injected = self.say("hello discord", channel_id="1300000000000000001")
        reply = self.creates(1)[0]
        self.assertEqual(reply["channel_id"], "1300000000000000001")
        self.assertIn("echo: hello discord", reply["content"])
        self.assertIn("hello discord", json.dumps(self.llm.chat_requests()[0]["body"]))
        self.assertNotEqual(bot_id, "")
        # The bot's own message, echoed by the gateway as Discord does, is not answered.
        self.say("echo of myself", author_id=bot_id)
        # The bot's log holds the message and the reply.
        logs = json.dumps(self.logs(bot))
        self.assertIn("hello discord", logs)
        self.assertIn("echo: hello discord", logs)
        self.assertEqual(len(self.llm.chat_requests()), 1)
        self.assertTrue(injected["delivered"])

    def test_a_guild_message_is_answered_only_when_it_mentions_the_bot(self):
        bot = self.bot()
        bot_id = self.running(bot)["adapter_runtime_values"]["bot_account_id"]
        guild, channel = "1400000000000000001", "1300000000000000002"
        self.say("just chatting", channel_id=channel, guild_id=guild, author_id="2001")
        mention = self.say("<@%s> are you there" % bot_id, channel_id=channel, guild_id=guild,
                           author_id="2001", mentions=[bot_id])
        reply = self.creates(1)[0]
        self.assertEqual(reply["channel_id"], channel)
        self.assertIn("are you there", reply["content"])
        self.assertEqual(reply["message_reference"]["message_id"], mention["id"])
        time.sleep(0.5)  # a reply to the first message would have come by now
        self.assertEqual(len(self.creates(1)), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))

    def test_send_message_reaches_a_person_and_a_channel(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "3000", [
            {"type": "Plain", "text": "hello person"}])
        person = self.assertOk(status, resp)
        self.dc.control("POST", "channel", {"id": "1300000000000000005",
                                            "guild_id": "1400000000000000001"})
        status, resp, _ = self.send(bot, "group", "1300000000000000005", [
            {"type": "Plain", "text": "announcement for "},
            {"type": "At", "target": "2002"}])
        group = self.assertOk(status, resp)
        sent = self.creates(2)
        dm, channel = sent[0], sent[1]
        self.assertEqual(dm["content"], "hello person")
        self.assertNotEqual(dm["channel_id"], "3000")  # the DM channel the bot opened
        self.assertEqual(str(person.get("message_id")), dm["id"])
        self.assertEqual(channel["channel_id"], "1300000000000000005")
        self.assertEqual(channel["content"], "announcement for <@2002>")
        self.assertEqual(str(group.get("message_id")), channel["id"])
        # A second message to the person reuses the DM channel.
        status, resp, _ = self.send(bot, "person", "3000", [{"type": "Plain", "text": "again"}])
        self.assertOk(status, resp)
        self.assertEqual(self.creates(3)[2]["channel_id"], dm["channel_id"])
        # A target that is no Discord id is refused before any call.
        status, resp, _ = self.send(bot, "group", "general", [{"type": "Plain", "text": "x"}])
        self.assertError(status, resp, 400, "target_id")

    def test_a_refused_token_shows_as_an_error_without_the_token(self):
        wrong = "MTEwMDAwMDAwMDAwMDAwMDAx.GsTest.not-the-token"
        bot = self.bot(token=wrong)

        data = self.errored(bot)
        self.assertIn("401", data["runtime"]["error"])
        self.assertNotIn(wrong, json.dumps(data["runtime"]))
        logs = self.logs(bot)
        self.assertTrue(any(l["level"] == "error" for l in logs), logs)
        self.assertNotIn(wrong, json.dumps(logs))
        self.assertEqual(self.dc.gateway()["connections"], 0)
        self.assertEqual(self.llm.chat_requests(), [])

    def test_after_a_drop_and_op_7_the_bot_resumes_and_still_answers(self):
        bot = self.bot()
        self.running(bot)
        self.dc.control("POST", "drop", {})
        # Said while the bot is away: the session keeps it and RESUME replays it.
        self.assertTrue(wait_until(lambda: self.dc.gateway()["connected"] == 0, 5))
        missed = self.say("said while you were away")
        self.assertFalse(missed["delivered"])
        self.assertTrue(wait_until(
            lambda: [r for r in self.dc.gateway()["resumes"] if r["outcome"] == "resumed"], 15))
        self.assertIn("said while you were away", self.creates(1)[0]["content"])
        self.dc.control("POST", "reconnect", {})
        self.assertTrue(wait_until(
            lambda: len([r for r in self.dc.gateway()["resumes"]
                         if r["outcome"] == "resumed"]) == 2, 10))
        self.say("still there?")
        self.assertIn("still there?", self.creates(2)[1]["content"])
        gw = self.dc.gateway()
        self.assertEqual(len(gw["identifies"]), 1)  # resumed both times, never identified again
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")

    def test_disabling_closes_the_gateway_and_the_bot_stops_answering(self):
        bot = self.bot()
        self.running(bot)
        self.assertEqual(self.dc.gateway()["connected"], 1)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.dc.gateway()["connected"] == 0, 10))
        closes = self.dc.gateway()["closes"]
        self.assertIn({"code": 1000, "by": "client"}, closes)
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        try:
            self.say("anyone?")
        except urllib.error.HTTPError as e:
            self.assertEqual(e.code, 409)  # the session ended with the 1000 close
        time.sleep(0.5)
        self.assertEqual(self.dc.sent(), [])
        self.assertEqual(self.llm.chat_requests(), [])

    def test_a_429_on_send_is_waited_out(self):
        bot = self.bot()
        self.running(bot)
        self.dc.control("POST", "ratelimit", {"method": "POST", "path": "/channels/",
                                              "times": 1, "retry_after": 1.2})
        started = time.monotonic()
        self.say("slow down")
        reply = self.creates(1)[0]
        self.assertGreaterEqual(time.monotonic() - started, 1.2)
        self.assertIn("slow down", reply["content"])
        logs = json.dumps(self.logs(bot))
        self.assertIn("rate limits", logs)

    def test_heartbeats_carry_the_last_sequence_and_a_request_is_answered_at_once(self):
        # A short interval, enforced: a late heartbeat would close the socket with 4009.
        self.dc.control("POST", "config", {"heartbeat_interval": 1000, "enforce_heartbeat": True})
        bot = self.bot()
        self.running(bot)
        injected = self.say("count me")
        self.creates(1)
        self.assertTrue(wait_until(
            lambda: self.dc.gateway()["last_seq_acked"] == injected["s"], 5), self.dc.gateway())
        # Right after a regular beat the next is a second away: an answer within 0.3 s is the
        # answer to the request.
        seen = len(self.dc.gateway()["heartbeats"])
        self.assertTrue(wait_until(lambda: len(self.dc.gateway()["heartbeats"]) > seen, 3))
        beats = len(self.dc.gateway()["heartbeats"])
        self.dc.control("POST", "heartbeat_request", {})
        self.assertTrue(wait_until(lambda: len(self.dc.gateway()["heartbeats"]) > beats, 0.3))
        time.sleep(3.5)  # several intervals: the bot must keep beating in time
        gw = self.dc.gateway()
        self.assertEqual(gw["overdue"], 0, gw)
        self.assertEqual(gw["connections"], 1, gw["closes"])
        self.assertGreaterEqual(len(gw["heartbeats"]), beats + 3)

    def test_op_9_identifies_again_and_a_fatal_close_stops_reconnecting(self):
        bot = self.bot()
        self.running(bot)
        self.dc.control("POST", "invalid_session", {"resumable": False})
        self.assertTrue(wait_until(lambda: len(self.dc.gateway()["identifies"]) == 2, 10))
        self.assertTrue(wait_until(lambda: self.dc.gateway()["identified"] == 1, 5))
        self.say("after op 9")
        self.assertIn("after op 9", self.creates(1)[0]["content"])
        # 4014: the MESSAGE CONTENT intent is not enabled; reconnecting cannot help.
        self.dc.control("POST", "close", {"code": 4014, "reason": "Disallowed intent(s)."})

        data = self.errored(bot)
        self.assertIn("MESSAGE CONTENT", data["runtime"]["error"])
        connections = self.dc.gateway()["connections"]
        time.sleep(2.5)  # past the first backoff steps
        self.assertEqual(self.dc.gateway()["connections"], connections)

    def test_long_texts_and_images_reach_discord_within_its_limits(self):
        bot = self.bot()
        self.running(bot)
        self.dc.control("POST", "channel", {"id": "1300000000000000006",
                                            "guild_id": "1400000000000000001"})
        long_text = " ".join("word%d" % i for i in range(900))  # about 6,900 characters
        png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAA"
               "BJRU5ErkJggg==")
        status, resp, _ = self.as_key(
            "POST", "/api/v1/platform/bots/%s/send_message" % bot,
            {"target_type": "group", "target_id": "1300000000000000006",
             "message_chain": [{"type": "Plain", "text": long_text},
                               {"type": "Image", "base64": "data:image/png;base64," + png},
                               {"type": "Image", "url": "https://example.com/cat.png"}]})
        self.assertOk(status, resp)
        sent = self.creates(4)
        self.assertEqual(len(sent), 4)
        self.assertTrue(all(len(s["content"]) <= 2000 for s in sent))
        self.assertEqual(" ".join(s["content"] for s in sent), long_text)
        last = sent[-1]
        self.assertTrue(last["multipart"])
        self.assertEqual([(a["filename"], a["content_type"]) for a in last["attachments"]],
                         [("image0.png", "image/png")])
        self.assertEqual(last["payload"]["embeds"],
                         [{"image": {"url": "https://example.com/cat.png"}}])

    def test_images_sent_to_the_bot_reach_the_model_as_images(self):
        bot = self.bot(abilities=["vision"])
        self.running(bot)
        self.dc.control("POST", "message", {
            "channel_id": "1300000000000000001", "content": "what is this",
            "author": {"id": "2000", "username": "ann"},
            "attachments": [{"filename": "cat.png", "content_type": "image/png", "size": 10,
                             "url": "https://cdn.example/cat.png"}]})
        self.creates(1)
        body = json.dumps(self.llm.chat_requests()[0]["body"])
        self.assertIn("what is this", body)
        self.assertIn("https://cdn.example/cat.png", body)


if __name__ == "__main__":
    unittest.main()
