"""Several instances on one PostgreSQL database: a platform's webhook call may reach any instance.
One that does not run the bot hands the call to the instance holding the bot's lease and relays
its answer; when that instance stops, another takes the bot and answers itself. Only meaningful on
PostgreSQL (the api_pg_ run); on SQLite it is skipped."""

import json
import time
import unittest

from fake_clients import sign, wait_until
from harness import Server, on_postgres
from test_bot_webhook import SECRET, WebhookBotCase

SECRETS_KEY = "forwarding-test-secrets-key-0123456789abcdef"


@unittest.skipUnless(on_postgres(), "several instances need PostgreSQL (the api_pg_ run)")
class ForwardingTest(WebhookBotCase):
    server_env = {"SWITCHBOARD_SECRETS_KEY": SECRETS_KEY}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.other = Server(env={"DATABASE__URL": cls.srv.env["DATABASE__URL"],
                                "SWITCHBOARD_SECRETS_KEY": SECRETS_KEY})
        cls.other.start()

    @classmethod
    def tearDownClass(cls):
        cls.other.stop()
        cls.other.cleanup()
        super().tearDownClass()

    def info(self, srv):
        status, body, _ = srv.req("GET", "/api/v1/system/info")
        self.assertEqual(status, 200, body)
        return body["data"]

    def post_to(self, srv, bot, body, headers=None):
        data = json.dumps(body).encode()
        ts = int(time.time())
        all_headers = {"Content-Type": "application/json", "X-Switchboard-Timestamp": str(ts),
                       "X-Switchboard-Signature": sign(SECRET, ts, data)}
        all_headers.update(headers or {})
        return srv.req("POST", "/bots/" + bot, raw_body=data, headers=all_headers)

    def test_a_call_to_the_other_instance_is_answered_by_the_owner_then_by_the_next(self):
        bot = self.bot(self.pipeline())
        self.wait_running(bot)
        owner, other = self.info(self.srv), self.info(self.other)
        self.assertNotEqual(owner["instance_id"], other["instance_id"])
        self.assertIn(bot, owner["owned_bots"])
        self.assertNotIn(bot, other["owned_bots"])
        # A key issued by the owner works here: the instances share their secrets.
        status, metrics, _ = self.other.req("GET", "/metrics", api_key=self.api_key)
        self.assertEqual(status, 200)
        self.assertIn('switchboard_instance_info{instance_id="%s"} 1' % other["instance_id"],
                      metrics)

        # The instance that does not run the bot forwards the call; the owner replies.
        status, resp, _ = self.post_to(self.other, bot, self.message("hello via the other one"))
        self.assertEqual(status, 200, resp)
        self.assertEqual(len(self.replies(1)), 1)
        self.assertEqual(len(self.fake.chat_requests()), 1)

        # A call that was forwarded once is not forwarded again (no loops between instances).
        status, resp, headers = self.post_to(self.other, bot, self.message("looped"),
                                             headers={"X-Switchboard-Forwarded-By": "x"})
        self.assertEqual(status, 503, resp)
        self.assertEqual(headers.get("retry-after"), "1")

        # The owner stops cleanly: it releases the lease and the other instance takes the bot.
        self.srv.stop()
        try:
            took = wait_until(lambda: bot in self.info(self.other)["owned_bots"], 10)
            self.assertTrue(took, "the other instance did not take the bot")
            self.callback.clear()
            status, resp, _ = self.post_to(self.other, bot, self.message("hello again"))
            self.assertEqual(status, 200, resp)
            self.assertEqual(len(self.replies(1)), 1)
        finally:
            self.srv.start()


if __name__ == "__main__":
    unittest.main()
