"""Outgoing webhooks (issue 18, part 3): /api/v1/webhooks in LangBot's shape, every message a
running bot receives pushed as bot.person_message / bot.group_message, signed with the webhook's
secret, retried after a 500, visible in the webhook's last delivery; a receiver's skip_pipeline
stops the reply, and a receiver that hangs never holds a reply up."""

import os
import sys
import time
import unittest

from fake_clients import wait_until
from test_bot_webhook import WebhookBotCase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
from fake_webhook_receiver import FakeWebhookReceiver  # noqa: E402

HOOKS = "/api/v1/webhooks"


class OutgoingWebhookCase(WebhookBotCase):
    receiver = None

    @classmethod
    def setUpClass(cls):
        cls.receiver = FakeWebhookReceiver()
        cls.receiver.start()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.receiver.stop()

    def setUp(self):
        super().setUp()
        self.receiver.reset()
        for hook in self.ok("GET", HOOKS)["webhooks"]:
            self.ok("DELETE", "%s/%d" % (HOOKS, hook["id"]))

    def hook(self, enabled=True, path="/hook"):
        created = self.ok("POST", HOOKS, {"name": "crm", "url": self.receiver.base + path,
                                          "description": "test", "enabled": enabled})["webhook"]
        self.receiver.configure(secret=created["secret"])
        return created

    def hook_state(self, hook_id):
        return self.ok("GET", "%s/%d" % (HOOKS, hook_id))["webhook"]


class WebhookCrudTest(OutgoingWebhookCase):

    def test_crud_validation_and_the_secret_shown_once(self):
        for body, fragment in (({"url": "https://x.example/h"}, "name is required"),
                               ({"name": "a"}, "url is required"),
                               ({"name": "a", "url": "ftp://x.example/h"}, "http:// or https://"),
                               ({"name": "a", "url": "https://x.example/a b"}, "spaces"),
                               ({"name": "a" * 300, "url": "https://x.example/"}, "too long")):
            status, answer, _ = self.as_user("POST", HOOKS, body)
            self.assertError(status, answer, 400, fragment)
        created = self.hook()
        self.assertTrue(created["secret"].startswith("whsec_") and len(created["secret"]) > 30)
        self.assertEqual((created["name"], created["enabled"], created["description"]),
                         ("crm", True, "test"))
        self.assertEqual(created["last_delivery"]["status"], "")
        listed = self.ok("GET", HOOKS)["webhooks"]
        self.assertEqual([w["id"] for w in listed], [created["id"]])
        self.assertNotEqual(listed[0]["secret"], created["secret"])  # masked after creation
        self.assertTrue(created["secret"].endswith(listed[0]["secret"][-4:]))

        path = "%s/%d" % (HOOKS, created["id"])
        updated = self.ok("PUT", path, {"name": "crm2", "enabled": False})["webhook"]
        self.assertEqual((updated["name"], updated["enabled"], updated["url"]),
                         ("crm2", False, created["url"]))
        rotated = self.ok("PUT", path, {"rotate_secret": True})["webhook"]
        self.assertNotEqual(rotated["secret"], created["secret"])
        self.assertTrue(rotated["secret"].startswith("whsec_"))
        status, answer, _ = self.as_user("PUT", path, {"url": "javascript:alert(1)"})
        self.assertError(status, answer, 400)

        self.ok("DELETE", path)
        for method in ("GET", "PUT", "DELETE"):
            status, answer, _ = self.as_user(method, path, {} if method == "PUT" else None)
            self.assertError(status, answer, 404)
        status, _, _ = self.as_key("GET", HOOKS)
        self.assertEqual(status, 401)  # user token only, as in LangBot


class WebhookPushTest(OutgoingWebhookCase):
    server_env = {"WEBHOOKS__MAX_ATTEMPTS": "2"}

    def test_person_and_group_messages_are_pushed_signed(self):
        hook = self.hook()
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        self.say(bot, "hello hooks", sender="u7", mid="m-person")
        self.replies(1)
        self.say(bot, "in the group", sender="u8", chat_type="group", chat_id="g1",
                 extra=[{"type": "At", "target": bot}])
        pushes = self.receiver.wait_for(2)
        person, group = sorted(pushes, key=lambda p: p["body"]["event_type"], reverse=True)
        for push in (person, group):
            self.assertTrue(push["signature_ok"], push["headers"])
            self.assertEqual(push["headers"]["x-switchboard-event"], push["body"]["event_type"])
            self.assertEqual(push["headers"]["content-type"], "application/json")
            data = push["body"]["data"]
            self.assertEqual((data["bot_uuid"], data["adapter_name"]), (bot, "webhook"))
            self.assertIsInstance(data["timestamp"], int)
            self.assertTrue(push["body"]["uuid"])
        self.assertEqual(person["body"]["event_type"], "bot.person_message")
        self.assertEqual(person["body"]["data"]["sender"], {"id": "u7", "name": "Ann"})
        self.assertNotIn("group", person["body"]["data"])
        self.assertIn({"type": "Plain", "text": "hello hooks"},
                      person["body"]["data"]["message"])
        self.assertEqual(group["body"]["event_type"], "bot.group_message")
        self.assertEqual(group["body"]["data"]["group"]["id"], "g1")
        self.assertEqual(group["body"]["data"]["sender"]["id"], "u8")
        state = wait_until(lambda: (lambda s: s["last_delivery"]["deliveries"] == 2 and s)(
            self.hook_state(hook["id"])))
        self.assertTrue(state, self.hook_state(hook["id"]))
        self.assertEqual(state["last_delivery"]["status"], "ok")
        self.assertEqual(state["last_delivery"]["http_status"], 200)
        self.assertTrue(state["last_delivery"]["at"])
        # A push leaves the in-flight count just after its status is recorded.
        metrics = wait_until(lambda: (lambda m: "switchboard_webhook_pushes_pending 0" in m and m)(
            self.as_user("GET", "/metrics")[1]))
        self.assertTrue(metrics)
        self.assertIn("switchboard_webhook_pushes_dropped_total 0", metrics)

    def test_a_500_is_retried_and_a_dead_receiver_shows_in_the_status(self):
        hook = self.hook()
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        self.receiver.configure(fail=1, status=500)
        self.say(bot, "first")
        pushes = self.receiver.wait_for(2, timeout=15)
        self.assertEqual([p["answered"] for p in pushes], [500, 200])
        self.assertEqual([p["headers"]["x-switchboard-attempt"] for p in pushes], ["1", "2"])
        self.assertEqual(pushes[0]["body"]["uuid"], pushes[1]["body"]["uuid"])
        self.assertEqual(pushes[0]["headers"]["x-switchboard-delivery"],
                         pushes[1]["headers"]["x-switchboard-delivery"])
        self.assertTrue(all(p["signature_ok"] for p in pushes))
        self.replies(1)  # the reply never waited for the retries

        self.receiver.reset()
        self.receiver.configure(secret=None, fail=10, status=503)
        self.say(bot, "second")
        self.receiver.wait_for(2, timeout=15)  # both attempts (webhooks.max_attempts = 2)
        state = wait_until(lambda: (lambda s: s["last_delivery"]["status"] == "failed" and s)(
            self.hook_state(hook["id"])), timeout=15)
        self.assertTrue(state, self.hook_state(hook["id"]))
        self.assertEqual(state["last_delivery"]["http_status"], 503)
        self.assertIn("503", state["last_delivery"]["error"])
        self.assertEqual(state["last_delivery"]["failures"], 1)
        self.assertEqual(state["last_delivery"]["deliveries"], 1)
        time.sleep(0.5)
        self.assertEqual(len(self.receiver.pushes()), 2)  # no third attempt

    def test_skip_pipeline_stops_the_reply(self):
        self.hook()
        self.receiver.configure(skip_pipeline=True)
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        # The model takes its time, so the takeover is known before the reply is ready.
        self.fake.script_next(path="/v1/chat/completions", delay_ms=1500)
        self.say(bot, "handled elsewhere")
        self.receiver.wait_for(1)
        logged = wait_until(lambda: [l for l in self.logs(bot) if "took the message over" in
                                     l["text"]], timeout=10)
        self.assertTrue(logged, self.logs(bot))
        time.sleep(0.5)
        self.assertEqual(self.callback.messages(), [])
        self.assertIn("webhook crm", logged[0]["text"])

    def test_a_hanging_receiver_never_delays_the_reply_and_disabled_ones_get_nothing(self):
        self.hook()
        self.receiver.configure(hang_seconds=4)
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        start = time.monotonic()
        self.say(bot, "quick please")
        self.replies(1, timeout=10)
        self.assertLess(time.monotonic() - start, 2.0)
        self.assertEqual(len(self.receiver.wait_for(1)), 1)

        for hook in self.ok("GET", HOOKS)["webhooks"]:
            self.ok("PUT", "%s/%d" % (HOOKS, hook["id"]), {"enabled": False})
        self.receiver.reset()
        self.callback.clear()
        self.say(bot, "nobody listens")
        self.replies(1)
        time.sleep(0.3)
        self.assertEqual(self.receiver.pushes(), [])


class DecisionWindowTest(OutgoingWebhookCase):
    """webhooks.decision_window_ms: the pipeline waits that long for the receivers' answers, so a
    takeover costs no model call; a receiver answering at once does not slow the reply."""
    server_env = {"WEBHOOKS__DECISION_WINDOW_MS": "3000"}

    def test_a_takeover_within_the_window_costs_no_model_call(self):
        self.hook()
        self.receiver.configure(skip_pipeline=True)
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        self.say(bot, "mine")
        self.assertTrue(wait_until(lambda: [l for l in self.logs(bot)
                                            if "no pipeline run" in l["text"]]))
        time.sleep(0.5)
        self.assertEqual(self.fake.chat_requests(), [])
        self.assertEqual(self.callback.messages(), [])

        self.receiver.configure(skip_pipeline=False)
        start = time.monotonic()
        self.say(bot, "yours")
        self.replies(1)
        self.assertLess(time.monotonic() - start, 2.0)


if __name__ == "__main__":
    unittest.main()
