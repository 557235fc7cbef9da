"""Self-test of fake_line.py (standard library only), run against the fake as a subprocess.

A small HTTP server in this file plays the bot: it receives the fake's webhook deliveries and
checks X-Line-Signature independently with hmac.

Run: cd tests/fakes && python3 -m unittest -v test_fake_line
"""

import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 10.0
SECRET = "line-test-channel-secret"
TOKEN = "line-test-access-token"
PORT = None
PROC = None
USER = "U" + "a" * 32
GROUP = "C" + "b" * 32


def setUpModule():
    global PROC, PORT
    PROC = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_line.py"), "--port", "0",
                             "--channel-secret", SECRET, "--access-token", TOKEN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = [None]
    t = threading.Thread(target=lambda: line.__setitem__(0, PROC.stdout.readline().decode()),
                         daemon=True)
    t.start()
    t.join(TIMEOUT)
    if not line[0] or not line[0].startswith("FAKE_LINE_PORT="):
        PROC.kill()
        PROC.wait(5)
        raise RuntimeError("fake did not announce its port: %r" % (line[0],))
    PORT = int(line[0].strip().split("=", 1)[1])


def tearDownModule():
    if PROC.poll() is None:
        PROC.send_signal(signal.SIGTERM)
        try:
            PROC.wait(10)
        except subprocess.TimeoutExpired:
            PROC.kill()
            PROC.wait(5)
    err = PROC.stderr.read().decode("utf-8", "replace")
    PROC.stdout.close()
    PROC.stderr.close()
    if "Traceback" in err:
        raise AssertionError("fake printed a traceback:\n" + err)


def request(method, path, body=None, headers=None):
    """Returns (status, parsed JSON or bytes, lower-case headers)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=TIMEOUT)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = dict(headers or {}, **{"Content-Type": "application/json"})
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
    finally:
        c.close()
    try:
        return r.status, json.loads(data.decode()), hdrs
    except ValueError:
        return r.status, data, hdrs


def api(method, path, body=None, token=TOKEN, headers=None):
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + token
    return request(method, path, body, h)


def control(name, body=None):
    if body is None:
        return request("GET", "/_control/" + name)[1]
    status, out, _ = request("POST", "/_control/" + name, body)
    if status != 200:
        raise AssertionError("control %s -> %d %r" % (name, status, out))
    return out


def text(t):
    return {"type": "text", "text": t}


class Bot(object):
    """The bot's webhook: records each request and answers `status`."""

    def __init__(self):
        self.requests, self.status = [], 200
        bot = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                bot.requests.append((dict(self.headers.items()), raw))
                self.send_response(bot.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/bots/3c1d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def valid(headers, raw, secret=SECRET):
    want = base64.b64encode(hmac.new(secret.encode(), raw, hashlib.sha256).digest()).decode()
    return hmac.compare_digest(want, headers["X-Line-Signature"])


class LineTest(unittest.TestCase):
    def setUp(self):
        control("reset", {})
        control("config", {"reply_token_ttl": 60})
        self.bot = Bot()

    def tearDown(self):
        self.bot.close()

    def message(self, **kw):
        out = control("message", dict({"url": self.bot.url,
                                       "source": {"type": "user", "userId": USER},
                                       "text": "hello"}, **kw))
        self.assertEqual(out["status"], 200)
        return out["events"][0]

    def test_auth_and_bot_info(self):
        st, out, _ = api("GET", "/v2/bot/info", token=None)
        self.assertEqual(st, 401)
        self.assertTrue(out["message"].startswith("Authorization header required"))
        st, out, _ = api("GET", "/v2/bot/info", token="wrong")
        self.assertEqual(st, 401)
        self.assertTrue(out["message"].startswith("Authentication failed"))
        st, out, hdrs = api("GET", "/v2/bot/info")
        self.assertEqual(st, 200)
        self.assertIn("x-line-request-id", hdrs)
        self.assertRegex(out["userId"], r"^U[0-9a-f]{32}$")
        for k in ("basicId", "displayName", "chatMode", "markAsReadMode"):
            self.assertIn(k, out)
        self.assertEqual(api("GET", "/v2/bot/nothing")[0], 404)

    def test_message_webhook_and_reply(self):
        ev = self.message()
        (headers, raw), = self.bot.requests
        self.assertTrue(valid(headers, raw))
        self.assertFalse(valid(headers, raw, SECRET + "x"))
        body = json.loads(raw)
        self.assertEqual(body["destination"], api("GET", "/v2/bot/info")[1]["userId"])
        e = body["events"][0]
        self.assertEqual(e, ev)
        self.assertEqual((e["type"], e["mode"], e["message"]["type"], e["message"]["text"]),
                         ("message", "active", "text", "hello"))
        self.assertEqual(e["deliveryContext"], {"isRedelivery": False})
        self.assertRegex(e["webhookEventId"], r"^[0-9A-Z]{26}$")
        self.assertRegex(e["message"]["id"], r"^\d+$")
        self.assertIsInstance(e["timestamp"], int)
        tok = e["replyToken"]
        st, out, _ = api("POST", "/v2/bot/message/reply",
                         {"replyToken": tok, "messages": [text("hi"), text("there")]})
        self.assertEqual(st, 200)
        self.assertEqual(len(out["sentMessages"]), 2)
        st, out, _ = api("POST", "/v2/bot/message/reply",
                         {"replyToken": tok, "messages": [text("again")]})
        self.assertEqual((st, out), (400, {"message": "Invalid reply token"}))
        sent = control("sent")["sent"]
        self.assertEqual([(s["kind"], s["replyToken"], s["to"], [m["text"] for m in s["messages"]])
                          for s in sent], [("reply", tok, USER, ["hi", "there"])])
        d = control("deliveries")["deliveries"]
        self.assertEqual([(x["status"], x["event_ids"]) for x in d],
                         [(200, [e["webhookEventId"]])])

    def test_reply_token_expiry(self):
        tok = self.message()["replyToken"]
        control("expire", {"replyToken": tok})
        st, out, _ = api("POST", "/v2/bot/message/reply",
                         {"replyToken": tok, "messages": [text("late")]})
        self.assertEqual((st, out["message"]), (400, "Invalid reply token"))
        control("config", {"reply_token_ttl": 0})
        tok = self.message()["replyToken"]
        self.assertEqual(api("POST", "/v2/bot/message/reply",
                             {"replyToken": tok, "messages": [text("x")]})[0], 400)
        self.assertEqual(api("POST", "/v2/bot/message/reply",
                             {"replyToken": "nope", "messages": [text("x")]})[0], 400)
        st, out, _ = request("POST", "/_control/expire", {"replyToken": "unknown"})
        self.assertEqual(st, 400)
        self.assertEqual(control("sent")["sent"], [])

    def test_validation_errors_keep_the_token(self):
        tok = self.message()["replyToken"]
        st, out, _ = api("POST", "/v2/bot/message/reply",
                         {"replyToken": tok, "messages": [text("x")] * 6})
        self.assertEqual((st, out["details"]), (400, [{"message": "Size must be between 1 and 5",
                                                      "property": "messages"}]))
        bad = [text(""), text("y" * 5001), {"type": "image", "originalContentUrl":
                                            "http://x/a.jpg", "previewImageUrl": ""},
               {"type": "nope"}]
        st, out, _ = api("POST", "/v2/bot/message/reply", {"replyToken": tok, "messages": bad})
        self.assertEqual(st, 400)
        self.assertEqual(out["message"], "The request body has 5 error(s)")
        self.assertEqual([d["property"] for d in out["details"]],
                         ["messages[0].text", "messages[1].text",
                          "messages[2].originalContentUrl", "messages[2].previewImageUrl",
                          "messages[3].type"])
        st, out, _ = api("POST", "/v2/bot/message/reply", {"messages": [text("x")]})
        self.assertEqual(out["details"][0]["property"], "replyToken")
        st, out, _ = api("POST", "/v2/bot/message/reply", b"{not json",
                         headers={"Content-Type": "application/json"})
        self.assertEqual(st, 400)
        self.assertIn("could not be parsed as JSON", out["message"])
        # "\U0001F600" is two UTF-16 units: 2500 of them are exactly the 5000 limit
        img = {"type": "image", "originalContentUrl": "https://x/a.jpg",
               "previewImageUrl": "https://x/p.jpg"}
        st, out, _ = api("POST", "/v2/bot/message/reply",
                         {"replyToken": tok, "messages": [text("\U0001F600" * 2500), img]})
        self.assertEqual(st, 200, out)
        self.assertEqual(control("sent")["sent"][0]["messages"][1], img)

    def test_group_mention_and_push(self):
        ev = self.message(source={"type": "group", "groupId": GROUP, "userId": USER},
                          text="hi", mention_self=True)
        m = ev["message"]
        men = m["mention"]["mentionees"][0]
        self.assertTrue(men["isSelf"])
        self.assertEqual(m["text"][men["index"]:men["index"] + men["length"]], "@Switchboard")
        self.assertEqual(ev["source"], {"type": "group", "groupId": GROUP, "userId": USER})
        api("POST", "/v2/bot/message/reply", {"replyToken": ev["replyToken"],
                                              "messages": [text("ok")]})
        self.assertEqual(control("sent")["sent"][0]["to"], GROUP)
        v2 = {"type": "textV2", "text": "Hi {u}, {all}",
              "substitution": {"u": {"type": "mention", "mentionee": {"type": "user",
                                                                      "userId": USER}},
                               "all": {"type": "mention", "mentionee": {"type": "all"}}}}
        key = str(uuid.uuid4())
        st, out, h1 = api("POST", "/v2/bot/message/push", {"to": GROUP, "messages": [v2]},
                          headers={"X-Line-Retry-Key": key})
        self.assertEqual(st, 200)
        st, out2, h2 = api("POST", "/v2/bot/message/push", {"to": GROUP, "messages": [v2]},
                           headers={"X-Line-Retry-Key": key})
        self.assertEqual((st, out2["message"], out2["sentMessages"]),
                         (409, "The retry key is already accepted", out["sentMessages"]))
        self.assertEqual(h2["x-line-accepted-request-id"], h1["x-line-request-id"])
        self.assertNotEqual(h2["x-line-request-id"], h1["x-line-request-id"])
        sent = control("sent")["sent"]
        self.assertEqual(len(sent), 2)
        self.assertEqual((sent[1]["kind"], sent[1]["to"], sent[1]["retry_key"]),
                         ("push", GROUP, key))
        self.assertEqual(sent[1]["messages"][0]["rendered"], "Hi @%s, @All" % USER)
        bad = dict(v2, text="Hi {missing}")
        st, out, _ = api("POST", "/v2/bot/message/push", {"to": USER, "messages": [bad]})
        self.assertEqual((st, out["details"][0]["property"]), (400, "messages[0].text"))
        st, out, _ = api("POST", "/v2/bot/message/push", {"to": "U123", "messages": [text("x")]})
        self.assertEqual(st, 400)
        self.assertIn("'to'", out["message"])
        self.assertEqual(api("POST", "/v2/bot/message/push", {"to": USER, "messages": [
            text("x")]}, headers={"X-Line-Retry-Key": "not-a-uuid"})[0], 400)

    def test_injected_failures(self):
        control("fail", {"path": "/v2/bot/message/push", "status": 429})
        st, out, _ = api("POST", "/v2/bot/message/push", {"to": USER, "messages": [text("x")]})
        self.assertEqual((st, out["message"]),
                         (429, "The API rate limit has been exceeded. Try again later."))
        self.assertEqual(api("POST", "/v2/bot/message/push",
                             {"to": USER, "messages": [text("x")]})[0], 200)
        control("fail", {"path": "*", "status": 500, "times": 2})
        self.assertEqual(api("GET", "/v2/bot/info")[0], 500)
        self.assertEqual(api("GET", "/v2/bot/info")[0], 500)
        self.assertEqual(api("GET", "/v2/bot/info")[0], 200)
        self.assertEqual(len(control("sent")["sent"]), 1)

    def test_verify_raw_events_redelivery_and_bad_signature(self):
        out = control("verify", {"url": self.bot.url})
        self.assertEqual(out["status"], 200)
        headers, raw = self.bot.requests[0]
        self.assertTrue(valid(headers, raw))
        self.assertEqual(json.loads(raw)["events"], [])
        ev = {"type": "follow", "webhookEventId": "01FIXEDFIXEDFIXEDFIXEDFIXE",
              "source": {"type": "user", "userId": USER}}
        out = control("event", {"url": self.bot.url, "events": [ev, {"type": "unfollow"}],
                                "redelivery": True, "bad_signature": True})
        headers, raw = self.bot.requests[1]
        self.assertFalse(valid(headers, raw))
        evs = json.loads(raw)["events"]
        self.assertEqual(evs[0]["webhookEventId"], "01FIXEDFIXEDFIXEDFIXEDFIXE")
        self.assertTrue(evs[0]["deliveryContext"]["isRedelivery"])
        self.assertIn("replyToken", evs[0])
        self.assertNotIn("replyToken", evs[1])
        self.bot.status = 500
        self.assertEqual(control("verify", {"url": self.bot.url})["status"], 500)
        out = control("verify", {"url": "http://127.0.0.1:1/x"})
        self.assertTrue(out["error"].startswith("connection_failed"))
        self.assertEqual([d["status"] for d in control("deliveries")["deliveries"]],
                         [200, 200, 500, None])

    def test_loading_content_and_control_errors(self):
        self.assertEqual(api("POST", "/v2/bot/chat/loading/start",
                             {"chatId": USER, "loadingSeconds": 10})[0], 202)
        self.assertEqual(api("POST", "/v2/bot/chat/loading/start",
                             {"chatId": USER, "loadingSeconds": 7})[0], 400)
        control("content", {"messageId": "123", "content_base64":
                            base64.b64encode(b"\xff\xd8jpeg").decode()})
        st, data, hdrs = api("GET", "/v2/bot/message/123/content")
        self.assertEqual((st, data, hdrs["content-type"]), (200, b"\xff\xd8jpeg", "image/jpeg"))
        self.assertEqual(api("GET", "/v2/bot/message/999/content")[0], 404)
        self.assertEqual(request("POST", "/_control/message", {"url": self.bot.url})[0], 400)
        self.assertEqual(request("POST", "/_control/event", {"url": "x", "events": []})[0], 400)
        self.assertEqual(request("POST", "/_control/nothing", {})[0], 404)
        self.assertTrue(re.match(r"^\d+$", str(PORT)))


class InProcessTest(unittest.TestCase):
    def test_start_stop(self):
        global PORT
        sys.path.insert(0, HERE)
        import fake_line
        saved = PORT
        try:
            with fake_line.FakeLine(channel_secret="s2", access_token="t2") as fake:
                PORT = fake.port
                self.assertEqual(api("GET", "/v2/bot/info", token="t2")[1]["userId"],
                                 fake_line.BOT_USER_ID)
            with self.assertRaises(OSError):
                api("GET", "/v2/bot/info", token="t2")
        finally:
            PORT = saved


if __name__ == "__main__":
    unittest.main()
