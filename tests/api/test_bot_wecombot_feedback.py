"""WeCom AI bot reply feedback (点赞/点踩) end to end: the real binary against
tests/fakes/fake_wecombot.py. Each reply carries `stream.feedback.id` in its first frame (webhook:
the first encrypted answer; long connection: the first aibot_respond_msg); a feedback_event
callback naming that id becomes a monitoring feedback record with the bot, pipeline, session, user
and the rated message and stream, shown by /monitoring/feedback and counted by
/monitoring/feedback/stats. One row per reply and user: a changed rating replaces the earlier one.
A malformed feedback event is logged and records nothing."""

import json

from fake_clients import wait_until
from test_bot_wecombot import WeComBotTestBase
from wecombot_fake import DEFAULT_AES_KEY, DEFAULT_BOT_ID, DEFAULT_TOKEN


class WeComBotFeedbackTest(WeComBotTestBase):
    # Records reach the database within 50 ms.
    server_env = {"MONITORING__FLUSH_INTERVAL_MS": "50"}

    def webhook_bot(self):
        return self.make({"BotId": DEFAULT_BOT_ID, "enable-webhook": True,
                          "Token": DEFAULT_TOKEN, "EncodingAESKey": DEFAULT_AES_KEY,
                          "Corpid": "ww0000000000000001"})

    def url(self, bot):
        return "http://127.0.0.1:%d/bots/%s" % (self.srv.port, bot)

    def feedback(self, bot, n):
        """Waits until bot `bot` has `n` feedback records; returns the list answer."""
        def got():
            r = self.ok("GET", "/api/v1/monitoring/feedback?botId=" + bot)
            return r["total"] == n and r
        answer = wait_until(got, 10)
        self.assertTrue(answer, self.ok("GET", "/api/v1/monitoring/feedback?botId=" + bot))
        return answer

    def stats(self, bot):
        return self.ok("GET", "/api/v1/monitoring/feedback/stats?botId=" + bot)

    def test_webhook_group_reply_rated_by_two_members_and_a_changed_mind(self):
        bot = self.webhook_bot()
        self.running(bot)
        pipeline = self.status(bot)["use_pipeline_uuid"]
        first = self.wc.webhook("message", self.url(bot), chattype="group", userid="zhangsan",
                                chatid="wrkGroup7", text="rate me")
        self.assertEqual(first["status"], 200, first)
        stream = first["reply"]["stream"]
        feedback_id = stream["feedback"]["id"]  # set on the first answer, as WeCom asks
        self.assertTrue(feedback_id.startswith(stream["id"]), stream)
        self.assertLessEqual(len(feedback_id.encode()), 256)
        polled = self.wc.webhook("poll", self.url(bot), stream_id=stream["id"], interval=0.2,
                                 timeout=15)
        self.assertTrue(polled["finished"], polled)

        # zhangsan: inaccurate, with a comment and reason codes; lisi: accurate.
        for userid, fb in (("zhangsan", {"id": feedback_id, "type": 2, "content": "太简单",
                                         "inaccurate_reason_list": [1, 3]}),
                           ("lisi", {"id": feedback_id, "type": 1})):
            got = self.wc.webhook("event", self.url(bot), eventtype="feedback_event",
                                  userid=userid, chattype="group", chatid="wrkGroup7",
                                  feedback=fb)
            self.assertEqual(got["status"], 200, got)
            self.assertTrue(got["signature_ok"])
            self.assertEqual(got["reply"], {})  # events take an empty encrypted answer
        rows = {r["user_id"]: r for r in self.feedback(bot, 2)["feedback"]}
        z = rows["zhangsan"]
        self.assertEqual((z["feedback_id"], z["feedback_type"], z["feedback_content"]),
                         (feedback_id, 2, "太简单"))
        self.assertEqual(json.loads(z["inaccurate_reasons"]), [1, 3])
        self.assertEqual((z["bot_id"], z["pipeline_id"], z["session_id"], z["platform"]),
                         (bot, pipeline, "group_wrkGroup7", "wecombot"))
        self.assertEqual((z["message_id"], z["stream_id"]), (first["msgid"], stream["id"]))
        self.assertEqual(rows["lisi"]["feedback_type"], 1)
        self.assertIsNone(rows["lisi"]["feedback_content"])
        s = self.stats(bot)
        self.assertEqual((s["total_feedback"], s["total_likes"], s["total_dislikes"],
                          s["satisfaction_rate"]), (2, 1, 1, 50.0))
        self.assertEqual([(b["bot_id"], b["total"], b["likes"], b["dislikes"])
                          for b in s["by_bot"]], [(bot, 2, 1, 1)])

        # zhangsan changes their mind: the like replaces the dislike (still two rows).
        self.wc.webhook("event", self.url(bot), eventtype="feedback_event", userid="zhangsan",
                        chattype="group", chatid="wrkGroup7", feedback={"id": feedback_id,
                                                                        "type": 1})
        self.assertTrue(wait_until(lambda: self.stats(bot)["total_likes"] == 2, 10),
                        self.stats(bot))
        s = self.stats(bot)
        self.assertEqual((s["total_feedback"], s["total_dislikes"], s["satisfaction_rate"]),
                         (2, 0, 100.0))
        likes = self.ok("GET", "/api/v1/monitoring/feedback?feedbackType=1&botId=" + bot)
        self.assertEqual(likes["total"], 2)
        self.assertTrue(any("feedback 2 from zhangsan" in l["text"] for l in self.logs(bot)))
        self.assertNoSecrets(bot)

    def test_a_malformed_feedback_event_is_logged_and_records_nothing(self):
        bot = self.webhook_bot()
        self.running(bot)
        bad = {"msgid": "e1", "aibotid": DEFAULT_BOT_ID, "chattype": "single",
               "from": {"userid": "u1"}, "msgtype": "event",
               "event": {"eventtype": "feedback_event",
                         "feedback_event": {"id": "x" * 300, "type": 9}}}
        got = self.wc.webhook("raw", self.url(bot), plaintext=bad)
        self.assertEqual((got["status"], got["reply"]), (200, {}))
        self.assertTrue(wait_until(lambda: any("malformed feedback_event" in l["text"]
                                               for l in self.logs(bot)), 10), self.logs(bot))
        self.assertEqual(self.stats(bot)["total_feedback"], 0)
        self.assertEqual(self.status(bot)["runtime"]["status"], "running")

    def test_long_connection_reply_carries_the_id_and_a_like_is_recorded(self):
        bot = self.make({"BotId": DEFAULT_BOT_ID, "Secret": "fake-wecombot-secret-0123456789",
                         "enable-webhook": False, "ws_url": self.wc.ws_url})
        self.running(bot)
        said = self.wc.say("hello feedback", userid="wangwu")
        reply = wait_until(lambda: [f for f in self.wc.sent()
                                    if f["body"].get("stream", {}).get("finish")], 20)
        self.assertTrue(reply, self.wc.sent())
        stream = reply[0]["body"]["stream"]
        feedback_id = stream["feedback"]["id"]
        self.wc.control("POST", "event", {"eventtype": "feedback_event", "userid": "wangwu",
                                          "feedback": {"id": feedback_id, "type": 1}})
        row = self.feedback(bot, 1)["feedback"][0]
        self.assertEqual((row["user_id"], row["session_id"], row["feedback_type"],
                          row["message_id"], row["stream_id"]),
                         ("wangwu", "person_wangwu", 1, said["msgid"], stream["id"]))
        self.assertEqual(self.stats(bot)["satisfaction_rate"], 100.0)
