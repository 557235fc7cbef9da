"""Monitoring end to end: messages through two webhook bots (tests/api/test_bot_webhook.py's
setup) with the fake model, then every /monitoring route and /stats/basic: counts, filters by
bot, pipeline, session and time, pages, clamped limits and ranges, the CSV export read back with
Python's csv module, and the monitoring series of /metrics."""

import csv
import datetime
import io
import json
import time
import unittest
import urllib.parse

from harness import ServerTestCase, unknown_uuid
from fake_clients import CallbackReceiver, FakeProvider, sign, wait_until

SECRET = "whsec_monitoring"


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S")


class MonitoringTest(ServerTestCase):
    # Records reach the database within 50 ms, so the test waits briefly for them.
    server_env = {"MONITORING__FLUSH_INTERVAL_MS": "50"}

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeProvider()
        cls.callback = CallbackReceiver(SECRET)
        super().setUpClass()
        cls.started = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=2)
        status, resp, _ = cls.srv.req("POST", "/api/v1/provider/providers",
                                      {"name": "p", "requester": "openai-chat-completions",
                                       "base_url": cls.fake.base + "/v1",
                                       "api_keys": ["sk-good-1"]}, token=cls.token)
        assert status == 200, resp
        model = cls.create("/api/v1/provider/models/llm",
                           {"name": "gpt-test", "provider_uuid": resp["data"]["uuid"]})["uuid"]
        config = {"ai": {"runner": {"runner": "local-agent"},
                         "local-agent": {"model": {"primary": model, "fallbacks": []},
                                         "max-round": 10, "prompt": []}}}
        cls.pipe_a = cls.create("/api/v1/pipelines", {"name": "pa", "config": config})["uuid"]
        cls.pipe_b = cls.create("/api/v1/pipelines", {"name": "pb", "config": config})["uuid"]
        cls.bot_a = cls.create("/api/v1/platform/bots", {
            "name": "bot-a", "adapter": "webhook", "enable": True, "use_pipeline_uuid": cls.pipe_a,
            "config": {"secret": SECRET, "callback_url": cls.callback.url}})["uuid"]
        cls.bot_b = cls.create("/api/v1/platform/bots", {
            "name": "bot-b", "adapter": "webhook", "enable": True, "use_pipeline_uuid": cls.pipe_b,
            "config": {"secret": SECRET, "callback_url": cls.callback.url}})["uuid"]
        for bot in (cls.bot_a, cls.bot_b):
            def running(bot=bot):
                _, r, _ = cls.srv.req("GET", "/api/v1/platform/bots/" + bot, token=cls.token)
                return r["data"]["bot"]["runtime"]["status"] == "running"
            assert wait_until(running, 10), bot
        # bot A: u1 twice and u2 once; bot B: u1 once (same chat id, another bot).
        for bot, sender, text in ((cls.bot_a, "u1", "one"), (cls.bot_a, "u2", "two"),
                                  (cls.bot_a, "u1", "three"), (cls.bot_b, "u1", "four")):
            cls.say(bot, sender, text)
            assert len(cls.callback.wait_for(cls.count + 1, 10)) > cls.count, "no reply to " + text
            cls.count += 1

    count = 0

    @classmethod
    def say(cls, bot, sender, text):
        body = {"message_id": "m-" + unknown_uuid(), "sender": {"id": sender, "name": "Ann"},
                "chat": {"type": "person", "id": sender},
                "message_chain": [{"type": "Plain", "text": text}]}
        data = json.dumps(body).encode()
        ts = int(time.time())
        headers = {"Content-Type": "application/json", "X-Switchboard-Timestamp": str(ts),
                   "X-Switchboard-Signature": sign(SECRET, ts, data)}
        status, resp, _ = cls.srv.req("POST", "/bots/" + bot, raw_body=data, headers=headers)
        assert status == 200, resp

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.fake.stop()
        cls.callback.stop()

    def get(self, path, **params):
        query = urllib.parse.urlencode(params, doseq=True)
        return self.ok("GET", "/api/v1/monitoring/" + path + ("?" + query if query else ""))

    def settled(self):
        """Waits until the writer has stored the 8 messages (4 received, 4 replies)."""
        def done():
            o = self.get("overview")
            return o["total_messages"] == 8 and o["llm_calls"] == 4 and o
        overview = wait_until(done, 10)
        self.assertTrue(overview, self.get("overview"))
        return overview

    def test_overview_counts_messages_calls_and_sessions(self):
        o = self.settled()
        self.assertEqual(o, {"total_messages": 8, "llm_calls": 4, "embedding_calls": 0,
                             "model_calls": 4, "success_rate": 100.0, "active_sessions": 3})
        only_b = self.get("overview", botId=self.bot_b)
        self.assertEqual(only_b["total_messages"], 2)
        self.assertEqual(only_b["active_sessions"], 1)

    def test_messages_filters_and_pages(self):
        self.settled()
        a = self.get("messages", botId=self.bot_a)
        self.assertEqual(a["total"], 6)
        self.assertEqual((a["limit"], a["offset"]), (100, 0))
        self.assertEqual({m["bot_id"] for m in a["messages"]}, {self.bot_a})
        self.assertEqual(sorted(m["role"] for m in a["messages"]), ["assistant"] * 3 + ["user"] * 3)
        users = [m for m in a["messages"] if m["role"] == "user"]
        self.assertEqual({m["status"] for m in users}, {"success"})
        self.assertEqual(sorted(m["message_content"] for m in users), ["one", "three", "two"])
        self.assertEqual({m["platform"] for m in users}, {"webhook"})
        # Newest first.
        stamps = [m["timestamp"] for m in a["messages"]]
        self.assertEqual(stamps, sorted(stamps, reverse=True))
        b = self.get("messages", pipelineId=self.pipe_b)
        self.assertEqual(b["total"], 2)
        both = self.get("messages", botId=[self.bot_a, self.bot_b])
        self.assertEqual(both["total"], 8)
        u2 = self.get("messages", botId=self.bot_a, sessionId="person_u2")
        self.assertEqual(u2["total"], 2)
        page = self.get("messages", limit=3, offset=2)
        self.assertEqual((page["total"], len(page["messages"])), (8, 3))
        self.assertEqual([m["id"] for m in page["messages"]],
                         [m["id"] for m in self.get("messages")["messages"][2:5]])

    def test_time_range_filters(self):
        self.settled()
        now = datetime.datetime.now(datetime.timezone.utc)
        self.assertEqual(self.get("messages", startTime=iso(self.started))["total"], 8)
        self.assertEqual(self.get("messages", startTime=iso(now + datetime.timedelta(hours=1)))
                         ["total"], 0)
        self.assertEqual(self.get("messages", endTime=iso(self.started))["total"], 0)
        # With a zone: the same instant written in UTC+02:00.
        plus2 = (self.started + datetime.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
        self.assertEqual(self.get("messages", startTime=plus2)["total"], 8)
        self.assertEqual(self.get("messages", startTime=iso(self.started) + "Z")["total"], 8)
        status, resp, _ = self.as_user("GET", "/api/v1/monitoring/messages?startTime=yesterday")
        self.assertError(status, resp, 400, "ISO 8601")

    def test_absurd_limits_and_ranges_are_clamped(self):
        self.settled()
        huge = self.get("messages", limit=10**15, offset=-7)
        self.assertEqual((huge["limit"], huge["offset"]), (1000, 0))
        self.assertEqual(len(huge["messages"]), 8)
        far = self.get("messages", offset=10**15)
        self.assertEqual((far["offset"], far["messages"], far["total"]), (10000000, [], 8))
        # An end before the start: an empty answer, not an error or a scan.
        backwards = self.get("messages", startTime="2030-01-01T00:00:00",
                             endTime="1999-01-01T00:00:00")
        self.assertEqual((backwards["messages"], backwards["limit"]), ([], 0))
        wide = self.get("messages", startTime="1970-01-01T00:00:00",
                        endTime="9999-12-31T23:59:59")
        self.assertEqual(wide["total"], 8)
        status, resp, _ = self.as_user("GET", "/api/v1/monitoring/messages?limit=ten")
        self.assertError(status, resp, 400, "limit")
        # More ids than a query takes (100): the rest are ignored, not turned into SQL.
        many = "&".join("botId=" + unknown_uuid() for _ in range(120))
        status, resp, _ = self.as_user("GET", "/api/v1/monitoring/messages?" + many)
        self.assertOk(status, resp)
        self.assertEqual(resp["data"]["total"], 0)

    def test_llm_calls_sessions_errors_and_data(self):
        self.settled()
        calls = self.get("llm-calls")
        self.assertEqual(calls["total"], 4)
        for c in calls["llm_calls"]:
            self.assertEqual((c["model_name"], c["status"]), ("gpt-test", "success"))
            self.assertGreater(c["input_tokens"], 0)
            self.assertGreater(c["output_tokens"], 0)
            self.assertEqual(c["total_tokens"], c["input_tokens"] + c["output_tokens"])
            self.assertGreaterEqual(c["duration"], 0)
        # Each call names the bot, pipeline and session it answered for.
        self.assertEqual({c["bot_id"] for c in calls["llm_calls"]}, {self.bot_a, self.bot_b})
        self.assertTrue(all(c["pipeline_id"] and c["session_id"] for c in calls["llm_calls"]))
        only_b = self.get("llm-calls", botId=self.bot_b)
        self.assertEqual(only_b["total"], 1)
        self.assertEqual(only_b["llm_calls"][0]["session_id"], "person_u1")
        sessions = self.get("sessions")
        self.assertEqual(sessions["total"], 3)
        by_key = {(s["bot_id"], s["session_id"]): s for s in sessions["sessions"]}
        self.assertEqual(by_key[(self.bot_a, "person_u1")]["message_count"], 2)
        self.assertEqual(by_key[(self.bot_a, "person_u2")]["message_count"], 1)
        self.assertEqual(by_key[(self.bot_b, "person_u1")]["message_count"], 1)
        self.assertTrue(all(s["is_active"] is True for s in sessions["sessions"]))
        self.assertEqual(self.get("sessions", botId=self.bot_b)["total"], 1)
        self.assertEqual(self.get("errors")["total"], 0)
        self.assertEqual(self.get("embedding-calls")["total"], 0)
        data = self.get("data", limit=2)
        self.assertEqual(data["totalCount"], {"messages": 8, "llmCalls": 4, "embeddingCalls": 0,
                                              "sessions": 3, "errors": 0})
        self.assertEqual(len(data["messages"]), 2)
        self.assertEqual(data["overview"]["total_messages"], 8)
        self.assertEqual(self.get("data", botId=self.bot_b)["totalCount"]["messages"], 2)

    def test_message_details_and_session_analysis(self):
        self.settled()
        user = [m for m in self.get("messages", botId=self.bot_b)["messages"]
                if m["role"] == "user"][0]
        details = self.get("messages/%s/details" % user["id"])
        self.assertTrue(details["found"])
        self.assertEqual(details["message"]["id"], user["id"])
        self.assertEqual(details["message"]["message_content"], "four")
        self.assertEqual(details["errors"], [])
        self.assertEqual(details["llm_stats"]["total_calls"], len(details["llm_calls"]))
        status, resp, _ = self.as_user(
            "GET", "/api/v1/monitoring/messages/%s/details" % unknown_uuid())
        self.assertError(status, resp, 404, "not found")
        analysis = self.get("sessions/person_u2/analysis")
        self.assertTrue(analysis["found"])
        self.assertEqual(analysis["message_stats"]["total"], 2)
        self.assertEqual(analysis["message_stats"]["success"], 2)
        self.assertEqual(self.get("sessions/person_nobody/analysis"),
                         {"session_id": "person_nobody", "found": False})

    def test_feedback_routes_answer_on_an_empty_table(self):
        self.settled()
        self.assertEqual(self.get("feedback"), {"feedback": [], "total": 0, "limit": 100,
                                                "offset": 0})
        self.assertEqual(self.get("feedback/stats"), {"total_feedback": 0, "total_likes": 0,
                                                      "total_dislikes": 0,
                                                      "satisfaction_rate": 0.0, "by_bot": []})

    def export(self, **params):
        query = urllib.parse.urlencode(params, doseq=True)
        status, body, headers = self.as_user("GET", "/api/v1/monitoring/export?" + query)
        self.assertEqual(status, 200, body)
        self.assertTrue(headers["content-type"].startswith("text/csv"), headers)
        self.assertIn("attachment;", headers["content-disposition"])
        self.assertTrue(body.startswith("\ufeff"), body[:10])
        return list(csv.DictReader(io.StringIO(body[1:])))

    def test_csv_export_parses_with_the_right_rows(self):
        self.settled()
        rows = self.export(type="messages")
        self.assertEqual(len(rows), 8)
        self.assertEqual(list(rows[0].keys())[:4], ["id", "timestamp", "bot_id", "bot_name"])
        texts = {r["message_text"]
                 for r in rows if r["bot_id"] == self.bot_b}
        self.assertIn("four", texts)
        self.assertTrue(any("echo: four" in t for t in texts), texts)
        self.assertRegex(rows[0]["timestamp"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
        self.assertEqual(len(self.export(type="messages", botId=self.bot_b)), 2)
        self.assertEqual(len(self.export(type="llm-calls")), 4)
        sessions = self.export(type="sessions")
        self.assertEqual(len(sessions), 3)
        self.assertEqual({s["is_active"] for s in sessions}, {"True"})
        self.assertEqual(self.export(type="errors"), [])
        self.assertEqual(len(self.export(type="messages", limit=3)), 3)
        status, resp, _ = self.as_user("GET", "/api/v1/monitoring/export?type=bogus")
        self.assertError(status, resp, 400, "Invalid export type")

    def test_stats_basic(self):
        self.settled()
        self.assertEqual(self.ok("GET", "/api/v1/stats/basic"),
                         {"active_session_count": 3, "conversation_count": 3, "query_count": 8})

    def metrics(self):
        status, body, _ = self.as_user("GET", "/metrics")
        self.assertEqual(status, 200)
        samples = {}
        for line in body.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                samples[name] = float(value)
        return body, samples

    def test_metrics_show_messages_model_calls_bots_and_the_queue(self):
        self.settled()
        body, m = self.metrics()
        a = 'switchboard_messages_total{bot="%s",adapter="webhook",outcome="%s"}'
        self.assertEqual(m[a % (self.bot_a, "received")], 3)
        self.assertEqual(m[a % (self.bot_a, "replied")], 3)
        self.assertEqual(m[a % (self.bot_b, "received")], 1)
        self.assertEqual(m[a % (self.bot_b, "replied")], 1)
        self.assertIn("# TYPE switchboard_model_call_duration_seconds histogram", body)
        count = 'switchboard_model_call_duration_seconds_count{kind="chat",model="gpt-test",' \
                'outcome="success"}'
        self.assertEqual(m[count], 4)
        inf = 'switchboard_model_call_duration_seconds_bucket{kind="chat",model="gpt-test",' \
              'outcome="success",le="+Inf"}'
        self.assertEqual(m[inf], 4)
        calls = self.get("llm-calls")["llm_calls"]
        self.assertEqual(m['switchboard_model_tokens_total{model="gpt-test",direction="input"}'],
                         sum(c["input_tokens"] for c in calls))
        self.assertEqual(m['switchboard_model_tokens_total{model="gpt-test",direction="output"}'],
                         sum(c["output_tokens"] for c in calls))
        self.assertEqual(m['switchboard_bots{status="running"}'], 2)
        self.assertEqual(m['switchboard_bots{status="error"}'], 0)
        self.assertEqual(m["switchboard_monitoring_queue_depth"], 0)
        self.assertEqual(m['switchboard_monitoring_records_total{fate="dropped"}'], 0)
        # 8 messages, 4 status changes, 4 model calls.
        self.assertEqual(m['switchboard_monitoring_records_total{fate="written"}'], 16)

    def test_routes_need_a_user_token(self):
        for path in ("/api/v1/monitoring/overview", "/api/v1/monitoring/export",
                     "/api/v1/stats/basic"):
            status, resp, _ = self.req("GET", path)
            self.assertEqual(status, 401, (path, resp))


if __name__ == "__main__":
    unittest.main()
