"""A WeChatPad bot end to end: the real binary talks to tests/fakes/fake_wechatpad.py (the HTTP API
at `wechatpad_url`, the message socket at `wechatpad_ws`/GetSyncMsg) and answers through the fake
model of tests/fakes/fake_llm.py. Contact messages, chatroom @-mentions (and no answer without
one), send_message to a contact and a chatroom (nicknames for @, an image by URL), a refused key,
reconnecting after a drop, a malformed frame, disabling, the log."""

import base64
import json
import time
import unittest

from fake_clients import wait_until
from platform_case import PlatformCase
from wechatpad_fake import FakeWeChatPad, TOKEN, WXID

MENTION_END = "\u2005"


class WeChatPadBotTest(PlatformCase):
    adapter = "wechatpad"
    pipeline_name = "pad"

    def setUp(self):
        super().setUp()
        self.pad = FakeWeChatPad()
        self.addCleanup(self.pad.stop)

    def bot(self, token=TOKEN):
        return self.platform_bot(self.pad.bot_config(token))

    def running(self, bot):
        data = super().running(bot)
        self.assertTrue(wait_until(lambda: self.pad.state()["connected"] == 1, 5))
        return data

    def texts(self, count, timeout=10):
        def enough():
            got = self.pad.texts()
            return got if len(got) >= count else None
        got = wait_until(enough, timeout)
        self.assertTrue(got, "expected %d SendTextMessage calls, got %r" % (count, self.pad.sent()))
        return got

    @staticmethod
    def item(call):
        return call["body"]["MsgItem"][0]

    def test_a_contact_message_gets_the_model_reply(self):
        bot = self.bot()
        data = self.running(bot)
        self.assertEqual(data["adapter_runtime_values"]["bot_account_id"], WXID)
        state = self.pad.state()
        self.assertEqual((state["status_checks"], state["profile_reads"]), (1, 1))
        self.pad.say("wxid_ann001", "hello pad", push_content="Ann : hello pad")
        reply = self.item(self.texts(1)[0])
        self.assertEqual(reply["ToUserName"], "wxid_ann001")
        self.assertIn("echo: hello pad", reply["TextContent"])
        self.assertEqual(reply["AtWxIDList"], [])
        self.assertIn("hello pad", json.dumps(self.llm.chat_requests()[0]["body"]))
        # The bot's own messages (sent from the phone) and official accounts are not answered.
        self.pad.say(WXID, "my own words")
        self.pad.say("gh_news", "breaking news")
        # The reply is logged once its send has completed.
        self.assertTrue(wait_until(lambda: "echo: hello pad" in json.dumps(self.logs(bot)), 5))
        logs = json.dumps(self.logs(bot), ensure_ascii=False)
        self.assertIn("hello pad", logs)
        self.assertIn("connected to WeChatPad as PadBot", logs)
        self.assertNotIn(TOKEN, logs)
        time.sleep(0.5)
        self.assertEqual(len(self.llm.chat_requests()), 1)

    def test_a_chatroom_message_is_answered_only_when_it_mentions_the_bot(self):
        bot = self.bot()
        self.running(bot)
        room = "4455@chatroom"
        self.pad.say(room, "wxid_bob001:\njust chatting")
        self.pad.say(room, "wxid_bob001:\n@PadBot%s are you there" % MENTION_END,
                     msg_source="<msgsource><atuserlist><![CDATA[,%s]]></atuserlist></msgsource>"
                     % WXID, push_content="Bob在群聊中@了你")
        reply = self.item(self.texts(1)[0])
        self.assertEqual(reply["ToUserName"], room)
        self.assertIn("are you there", reply["TextContent"])
        self.assertNotIn("@PadBot", json.dumps(self.llm.chat_requests()[0]["body"]))
        time.sleep(0.5)  # a reply to the first message would have come by now
        self.assertEqual(len(self.texts(1)), 1)
        self.assertNotIn("just chatting", json.dumps([r["body"] for r in
                                                      self.llm.chat_requests()]))

    def test_send_message_reaches_a_contact_and_a_chatroom(self):
        bot = self.bot()
        self.running(bot)
        status, resp, _ = self.send(bot, "person", "wxid_carl01", [
            {"type": "Plain", "text": "hello person"}])
        self.assertOk(status, resp)
        room = "7788@chatroom"
        self.pad.control("POST", "members", {"chatroom": room, "members": [
            {"user_name": "wxid_dora01", "nick_name": "Dora"}]})
        status, resp, _ = self.send(bot, "group", room, [
            {"type": "Plain", "text": "announcement for "},
            {"type": "At", "target": "wxid_dora01"},
            {"type": "Image", "url": self.pad.base + "/files/cat.png"}])
        self.assertOk(status, resp)
        sent = self.pad.sent()
        self.assertEqual([s["path"] for s in sent],
                         ["/message/SendTextMessage", "/group/GetChatroomMemberDetail",
                          "/message/SendTextMessage", "/message/SendImageMessage"])
        self.assertEqual(self.item(sent[0])["ToUserName"], "wxid_carl01")
        self.assertEqual(self.item(sent[0])["TextContent"], "hello person")
        self.assertEqual(sent[1]["body"], {"ChatRoomName": room})
        group = self.item(sent[2])
        self.assertEqual(group["ToUserName"], room)
        self.assertEqual(group["TextContent"], "announcement for @Dora ")
        self.assertEqual(group["AtWxIDList"], ["wxid_dora01"])
        image = self.item(sent[3])
        self.assertEqual(image["ToUserName"], room)
        self.assertTrue(base64.b64decode(image["ImageContent"]).startswith(b"\x89PNG"))
        # What WeChatPad cannot carry is refused before any call.
        status, resp, _ = self.send(bot, "person", "wxid_carl01", [
            {"type": "Voice", "url": "https://example.com/v.silk"}])
        self.assertError(status, resp, 400, "Voice")

    def test_a_refused_key_shows_as_an_error_without_the_key(self):
        wrong = "not-the-wechatpad-key"
        bot = self.bot(token=wrong)

        data = self.errored(bot)
        self.assertIn("Code 300", data["runtime"]["error"])
        self.assertNotIn(wrong, json.dumps(data["runtime"]))
        logs = self.logs(bot)
        self.assertTrue(any(l["level"] == "error" for l in logs), logs)
        self.assertNotIn(wrong, json.dumps(logs))
        time.sleep(2.5)  # past the first backoff steps: a refused key is not retried
        state = self.pad.state()
        self.assertEqual(state["connections"], 0)
        self.assertEqual(state["profile_reads"], 0)
        self.assertEqual(self.llm.chat_requests(), [])

    def test_after_a_drop_the_bot_reconnects_and_still_answers(self):
        bot = self.bot()
        self.running(bot)
        self.pad.control("POST", "drop", {})
        self.assertTrue(wait_until(lambda: self.pad.state()["connections"] == 2, 15))
        self.assertTrue(wait_until(lambda: self.pad.state()["connected"] == 1, 5))
        self.assertEqual(self.pad.state()["status_checks"], 2)  # the login is checked again
        self.pad.say("wxid_ann001", "still there?")
        self.assertIn("still there?", self.item(self.texts(1)[0])["TextContent"])
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")

    def test_a_malformed_frame_is_logged_and_skipped(self):
        bot = self.bot()
        self.running(bot)
        self.pad.control("POST", "raw", {"text": "{not json"})
        self.pad.control("POST", "raw", {"text": json.dumps({"msg_type": 1})})
        self.pad.say("wxid_ann001", "after the noise")
        self.assertIn("after the noise", self.item(self.texts(1)[0])["TextContent"])
        logs = json.dumps(self.logs(bot))
        self.assertIn("malformed WeChatPad frame", logs)
        self.assertIn("from_user_name", logs)
        self.assertEqual(self.pad.state()["connections"], 1)

    def test_disabling_closes_the_socket_and_the_bot_stops_answering(self):
        bot = self.bot()
        self.running(bot)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertTrue(wait_until(lambda: self.pad.state()["connected"] == 0, 10))
        self.assertEqual(self.status(bot)["runtime"]["status"], "stopped")
        self.pad.say("wxid_ann001", "anyone?")
        time.sleep(0.5)
        self.assertEqual(self.pad.sent(), [])
        self.assertEqual(self.llm.chat_requests(), [])


if __name__ == "__main__":
    unittest.main()
