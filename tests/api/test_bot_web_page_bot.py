"""A web page bot end to end: the real binary serves the widget script and the full-page chat on
the bot's URL, and visitors talk to the bot over WebSockets at /bots/{uuid}/ws (tests/api/
ws_client.py plays the browser); the model is tests/fakes/fake_llm.py and Cloudflare Turnstile's
siteverify is tests/fakes/fake_turnstile.py. The script and page in the bot's title and language,
a visitor answered over its socket, two visitors kept apart, a reconnect continuing the
conversation, send_message to a visitor, Turnstile required/refused/accepted (no model call when
refused), oversized frames and floods, disabling, and the bot's log."""

import json
import time
import unittest

from harness import ServerTestCase
from fake_clients import FakeProvider, wait_until
from web_page_fake import FakeTurnstile, Visitor, new_visitor, text_of
from ws_client import HandshakeError, WebSocket

SITE_KEY = "0x4AAAAAAAsiteKeyForTests"
SECRET = "0x4AAAAAAAsecretKeyForTests"


class WebPageBotTest(ServerTestCase):
    llm = None
    turnstile = None

    @classmethod
    def setUpClass(cls):
        cls.llm = FakeProvider()
        cls.turnstile = FakeTurnstile()
        cls.turnstile.configure(secret=SECRET)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.llm.stop()
        cls.turnstile.stop()

    def setUp(self):
        self.llm.reset()
        self.turnstile.reset()

    # Helpers

    def pipeline(self):
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test")
        return self.make_pipeline(name="web", config={
            "ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}},
            "output": {"misc": {"quote-origin": False}}})

    def bot(self, turnstile=False, **config):
        cfg = {"title": "Shop help", "language": "en_US"}
        if turnstile:
            cfg.update(turnstile_site_key=SITE_KEY, turnstile_secret_key=SECRET,
                       api_base_url=self.turnstile.base)
        cfg.update(config)
        uuid = self.make_bot(adapter="web_page_bot", enable=True, use_pipeline_uuid=self.pipeline(),
                             config=cfg)
        self.addCleanup(lambda: self.as_user("DELETE", "/api/v1/platform/bots/" + uuid))
        self.running(uuid)
        return uuid

    def running(self, bot):
        def check():
            data = self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]
            return data["runtime"]["status"] == "running" and data
        data = wait_until(check, 10)
        self.assertTrue(data, "bot did not reach running")
        return data

    def visitor(self, bot, **kw):
        v = Visitor(self.srv.port, bot, **kw)
        self.addCleanup(v.close)
        return v

    def logs(self, bot):
        return self.ok("POST", "/api/v1/platform/bots/%s/logs" % bot,
                       {"from_index": -1, "max_count": 1000})["logs"]

    def log_with(self, bot, *needles):
        return wait_until(lambda: [l for l in self.logs(bot)
                                   if all(n in l["text"] for n in needles)], 10)

    def refused(self, path):
        with self.assertRaises(HandshakeError) as ctx:
            WebSocket("127.0.0.1", self.srv.port, path)
        return ctx.exception

    # Tests

    def test_widget_script_and_page_carry_the_title_and_language(self):
        bot = self.bot(title="客服 <Help>", language="zh_Hans")
        status, js, headers = self.req("GET", "/bots/%s/widget.js" % bot)
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("application/javascript"), headers)
        self.assertIn("max-age=", headers["cache-control"])
        self.assertIn("public", headers["cache-control"])
        self.assertLess(len(js.encode()), 16 * 1024)
        self.assertIn("客服 \\u003cHelp>", js)  # the title, unable to end a <script>
        self.assertIn("发送", js)              # the UI in the bot's language
        self.assertIn("attachShadow", js)
        self.assertIn('"siteKey":""', js)     # no Turnstile configured
        self.assertNotIn("http://", js)       # nothing fetched from elsewhere
        absolute = "/bots/%s/widget.js" % bot
        for path, script in (("/", absolute), ("/chat", "widget.js"), ("", absolute)):
            status, html, headers = self.req("GET", "/bots/%s%s" % (bot, path))
            self.assertEqual(status, 200, path)
            self.assertTrue(headers["content-type"].startswith("text/html"), headers)
            self.assertIn('<html lang="zh-Hans">', html)
            self.assertIn("<title>客服 &lt;Help&gt;</title>", html)
            self.assertIn('<script src="%s" data-mode="page"></script>' % script, html)
            self.assertIn("default-src 'none'", headers["content-security-policy"])
        status, body, _ = self.req("GET", "/bots/%s/nothing-here" % bot)
        self.assertEqual(status, 404)
        status, body, _ = self.req("GET", "/bots/%s/ws" % bot)
        self.assertEqual(status, 400, body)  # a plain GET on the socket URL

    def test_a_visitor_is_answered_over_its_socket_and_logged(self):
        bot = self.bot()
        v = self.visitor(bot)
        self.assertEqual(v.ready["history"], [])
        self.assertEqual(v.ready["visitor"], v.id)
        v.say("hello widget")
        frame = v.next()
        self.assertEqual(frame["role"], "bot")
        self.assertIn("echo: hello widget", text_of(frame))
        logs = self.log_with(bot, "hello widget")
        self.assertTrue(logs, self.logs(bot))
        self.assertIn("person_" + v.id, [l["message_session_id"] for l in logs])
        self.assertTrue(self.log_with(bot, "visitor %s connected" % v.id[:8]))
        # Pings are answered.
        v.ws.send_json({"type": "ping"})
        self.assertEqual(v.next("pong")["type"], "pong")
        # A malformed frame is answered with an error, and the socket stays.
        v.ws.send_text("{not json")
        self.assertEqual(v.next("error")["code"], "bad_frame")
        v.say("still here")
        self.assertIn("echo: still here", v.reply_text())

    def test_two_visitors_are_kept_apart(self):
        bot = self.bot()
        a, b = self.visitor(bot), self.visitor(bot)
        a.say("alpha secret")
        self.assertIn("echo: alpha secret", a.reply_text())
        b.say("beta question")
        self.assertIn("echo: beta question", b.reply_text())
        # Nothing of a's went to b, neither on the socket nor into b's conversation.
        b.ws.send_json({"type": "ping"})
        self.assertEqual(b.next("pong")["type"], "pong")  # no stray message frame before it
        last = json.dumps(self.llm.chat_requests()[-1]["body"]["messages"])
        self.assertIn("beta question", last)
        self.assertNotIn("alpha secret", last)

    def test_a_reconnect_continues_the_conversation(self):
        bot = self.bot()
        first = self.visitor(bot)
        first.say("my name is Ada")
        self.assertIn("echo: my name is Ada", first.reply_text())
        first.close()
        again = self.visitor(bot, visitor=first.id)  # the id the browser kept in localStorage
        history = again.ready["history"]
        self.assertEqual([h["role"] for h in history], ["visitor", "bot"])
        self.assertEqual(text_of(history[0]), "my name is Ada")
        self.assertIn("echo: my name is Ada", text_of(history[1]))
        again.say("what is my name")
        self.assertIn("echo: what is my name", again.reply_text())
        self.assertIn("my name is Ada",
                      json.dumps(self.llm.chat_requests()[-1]["body"]["messages"]))
        # A second tab of the same visitor gets the bot's messages too.
        tab = self.visitor(bot, visitor=first.id)
        self.assertEqual(len(tab.ready["history"]), 4)

    def test_send_message_reaches_a_connected_visitor(self):
        bot = self.bot()
        v = self.visitor(bot)
        path = "/api/v1/platform/bots/%s/send_message" % bot
        msg = {"target_type": "person", "target_id": v.id,
               "message_chain": [{"type": "Plain", "text": "hello from the API"},
                                 {"type": "Image", "url": "https://example.com/cat.png"}]}
        data = self.assertOk(*self.as_key("POST", path, msg)[:2])
        self.assertTrue(data["sent"])
        frame = v.next()
        self.assertEqual(frame["id"], data["message_id"])
        self.assertEqual(frame["elements"], [{"type": "text", "text": "hello from the API"},
                                             {"type": "image",
                                              "url": "https://example.com/cat.png"}])
        # A visitor who left gets it on return; one never seen cannot be reached.
        v.close()
        self.assertOk(*self.as_key("POST", path, dict(msg, message_chain=[
            {"type": "Plain", "text": "while you were away"}]))[:2])
        back = self.visitor(bot, visitor=v.id)
        self.assertEqual(text_of(back.ready["history"][-1]), "while you were away")
        status, body, _ = self.as_key("POST", path, dict(msg, target_id=new_visitor()))
        self.assertEqual(status, 502, body)
        status, body, _ = self.as_key("POST", path, dict(msg, target_type="group"))
        self.assertEqual(status, 400, body)
        status, body, _ = self.as_key("POST", path, dict(msg, target_id="not-a-visitor"))
        self.assertEqual(status, 400, body)

    def test_turnstile_token_required_refused_and_accepted(self):
        bot = self.bot(turnstile=True)
        status, js, _ = self.req("GET", "/bots/%s/widget.js" % bot)
        self.assertIn('"siteKey":"%s"' % SITE_KEY, js)
        status, _, headers = self.req("GET", "/bots/%s/" % bot)
        self.assertIn("challenges.cloudflare.com", headers["content-security-policy"])
        visitor = new_visitor()
        # No ticket: the upgrade is refused.
        err = self.refused("/bots/%s/ws?visitor=%s" % (bot, visitor))
        self.assertEqual(err.status, 403)
        err = self.refused("/bots/%s/ws?visitor=%s&ticket=9999999999.%s" % (bot, visitor, "0" * 64))
        self.assertEqual(err.status, 403)
        # No token, and a token Cloudflare refuses.
        status, body, _ = self.req("POST", "/bots/%s/session" % bot, {"visitor": visitor})
        self.assertEqual(status, 403, body)
        status, body, _ = self.req("POST", "/bots/%s/session" % bot,
                                   {"visitor": visitor, "token": "forged-token"})
        self.assertEqual(status, 403, body)
        self.assertEqual(body["error-codes"], ["invalid-input-response"])
        call = self.turnstile.calls()[-1]
        self.assertEqual((call["secret"], call["response"], call["remoteip"]),
                         (SECRET, "forged-token", "127.0.0.1"))
        self.assertTrue(self.log_with(bot, "Turnstile refused visitor", "invalid-input-response"))
        self.assertNotIn(SECRET, json.dumps(self.logs(bot)))
        # A real token: a ticket, and the socket opens.
        token = self.turnstile.token()
        status, body, _ = self.req("POST", "/bots/%s/session" % bot,
                                   {"visitor": visitor, "token": token})
        self.assertEqual(status, 200, body)
        ticket = body["ticket"]
        # The ticket is the visitor's own; the token is spent.
        err = self.refused("/bots/%s/ws?visitor=%s&ticket=%s" % (bot, new_visitor(), ticket))
        self.assertEqual(err.status, 403)
        status, body, _ = self.req("POST", "/bots/%s/session" % bot,
                                   {"visitor": visitor, "token": token})
        self.assertEqual(body["error-codes"], ["timeout-or-duplicate"])
        self.assertEqual(self.llm.chat_requests(), [])  # nothing refused reached the model
        v = self.visitor(bot, visitor=visitor, ticket=ticket)
        v.say("verified hello")
        self.assertIn("echo: verified hello", v.reply_text())
        # siteverify down: 502, no ticket.
        self.turnstile.control("POST", "/_control/fail", {"status": 500, "times": 1})
        status, body, _ = self.req("POST", "/bots/%s/session" % bot,
                                   {"visitor": visitor, "token": self.turnstile.token()})
        self.assertEqual(status, 502, body)

    def test_oversized_frames_floods_and_bad_visitor_ids_are_refused(self):
        bot = self.bot()
        self.assertEqual(self.refused("/bots/%s/ws?visitor=bob" % bot).status, 400)
        self.assertEqual(self.refused("/bots/%s/ws" % bot).status, 400)
        self.assertEqual(self.refused("/bots/%s/elsewhere?visitor=%s"
                                      % (bot, new_visitor())).status, 404)
        v = self.visitor(bot)
        v.say("x" * 12500)  # within a frame, over the text limit
        self.assertEqual(v.next("error")["code"], "too_large")
        v.ws.send_text(json.dumps({"type": "message", "text": "y" * 17000}))
        self.assertIsNone(v.next("never"))
        self.assertEqual(v.ws.close_code, 1009)
        self.assertTrue(self.log_with(bot, "closed the socket of visitor", "-byte frame"))
        # A flood: a burst goes through, the rest is refused, then the socket is closed.
        flood = self.visitor(bot)
        for i in range(30):
            try:
                flood.say("flood %d" % i)
            except OSError:
                break
        kinds = []
        while True:
            frame = flood.ws.recv_json(15)
            if frame is None:
                break
            kinds.append(frame.get("code") or frame["type"])
        self.assertEqual(flood.ws.close_code, 1008)
        self.assertIn("rate_limited", kinds)
        self.assertTrue(self.log_with(bot, "kept sending too fast"))
        time.sleep(0.5)
        # The burst is 5; a sixth token may have refilled on a very slow machine (one per 3 s).
        self.assertLessEqual(len(self.llm.chat_requests()), 6)
        self.assertNotIn("flood 29", json.dumps([r["body"] for r in self.llm.chat_requests()]))

    def test_disable_closes_the_sockets_and_stops_serving(self):
        bot = self.bot()
        v = self.visitor(bot)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": False})
        self.assertIsNone(v.next("never"))
        self.assertEqual(v.ws.close_code, 1001)
        status, body, _ = self.req("GET", "/bots/%s/widget.js" % bot)
        self.assertEqual(status, 409, body)
        self.assertEqual(self.refused("/bots/%s/ws?visitor=%s" % (bot, v.id)).status, 409)
        self.ok("PUT", "/api/v1/platform/bots/" + bot, {"enable": True})
        self.running(bot)
        again = self.visitor(bot, visitor=v.id)
        again.say("back again")
        self.assertIn("echo: back again", again.reply_text())


if __name__ == "__main__":
    unittest.main()
