"""Self-test of fake_wecombot.py against the documented protocol (platforms.md 4.5 items 9-12, the
official SDK's frames): the crypto against published vectors, the long connection with
python3-websockets as client, and the webhook driver against a minimal callback server written
here from the docs. The fake runs as a subprocess.

Run: cd tests/fakes && python3 -m unittest -v test_fake_wecombot
"""

import base64
import http.server
import json
import queue
import threading
import unittest
import urllib.parse

import wecombot_aes as aes
from fake_wecombot import DEFAULT_AES_KEY, DEFAULT_BOT_ID, DEFAULT_SECRET, DEFAULT_TOKEN
from fake_ws_common import LoopThread, http_json, start_fake, stop_fake, websockets

TIMEOUT = 10.0
PROC = PORT = WSPORT = LT = None
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


def setUpModule():
    global PROC, PORT, WSPORT, LT
    PROC, ports = start_fake("fake_wecombot.py", "FAKE_WECOMBOT_PORT=")
    PORT, WSPORT = ports["FAKE_WECOMBOT_PORT"], ports["FAKE_WECOMBOT_WS_PORT"]
    LT = LoopThread()
    LT.start()


def tearDownModule():
    try:
        stop_fake(PROC)
    finally:
        if LT is not None:
            LT.stop()


def ctl(path, body=None):
    return http_json(PORT, "POST" if body is not None else "GET", "/_control/" + path, body)


class Client(object):
    """A long-connection client whose frames are read with a deadline."""

    def __init__(self):
        self.frames = queue.Queue()

        async def dial():
            return await websockets.connect("ws://127.0.0.1:%d" % WSPORT, ping_interval=None,
                                            close_timeout=2)
        self.ws = LT.run(dial())
        LT.loop.call_soon_threadsafe(lambda: LT.loop.create_task(self._read()))

    async def _read(self):
        try:
            async for raw in self.ws:
                self.frames.put(json.loads(raw))
        except websockets.exceptions.ConnectionClosed:
            pass
        self.frames.put(None)

    def send(self, cmd, req_id, body=None):
        frame = {"cmd": cmd, "headers": {"req_id": req_id}}
        if body is not None:
            frame["body"] = body
        LT.run(self.ws.send(json.dumps(frame)))

    def next(self):
        return self.frames.get(timeout=TIMEOUT)

    def subscribe(self, secret=DEFAULT_SECRET):
        self.send("aibot_subscribe", "aibot_subscribe_1_ab", {"bot_id": DEFAULT_BOT_ID,
                                                             "secret": secret})
        return self.next()

    def close(self):
        LT.run(self.ws.close())


class CryptoTest(unittest.TestCase):
    def test_wxbizmsgcrypt_layout_padding_and_signature(self):
        key = aes.aes_key(DEFAULT_AES_KEY)
        enc = aes.wx_encrypt(key, b'{"msgid":"1"}', b"", random16=b"r" * 16)
        plain = aes.cbc_decrypt(key, key[:16], base64.b64decode(enc))
        self.assertEqual(len(plain) % 32, 0)  # padded to 32, not to the AES block
        self.assertEqual(plain[:16], b"r" * 16)
        self.assertEqual(plain[16:20], (13).to_bytes(4, "big"))
        self.assertEqual(aes.wx_decrypt(key, enc), (b'{"msgid":"1"}', b""))
        # sha1 of the four values sorted and joined without separators
        import hashlib
        self.assertEqual(aes.wx_signature("b", "a", "d", "c"),
                         hashlib.sha1(b"abcd").hexdigest())


class LongConnectionTest(unittest.TestCase):
    def setUp(self):
        ctl("reset", {})
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            try:
                c.close()
            except Exception:
                pass

    def client(self):
        c = Client()
        self.clients.append(c)
        return c

    def test_wrong_secret_is_refused_and_closed(self):
        c = self.client()
        ack = c.subscribe(secret="wrong")
        self.assertEqual(ack["headers"]["req_id"], "aibot_subscribe_1_ab")
        self.assertNotEqual(ack["errcode"], 0)
        self.assertIsNone(c.next())  # closed
        self.assertEqual(ctl("ws")[1]["subscribes"][-1], {"bot_id": DEFAULT_BOT_ID, "ok": False})

    def test_frames_before_subscribe_are_refused_then_ping_is_acked(self):
        c = self.client()
        c.send("ping", "ping_1_aa")
        self.assertEqual(c.next()["errcode"], 846609)
        self.assertEqual(c.subscribe()["errcode"], 0)
        c.send("ping", "ping_2_bb")
        self.assertEqual(c.next(), {"headers": {"req_id": "ping_2_bb"}, "errcode": 0,
                                    "errmsg": "ok"})
        self.assertEqual(ctl("ws")[1]["pings"], 1)

    def test_callback_reply_stream_and_proactive_send(self):
        c = self.client()
        c.subscribe()
        status, got, _ = ctl("message", {"chattype": "group", "userid": "lisi",
                                         "chatid": "wrkGroup1", "text": "@bot hi"})
        self.assertEqual(status, 200)
        frame = c.next()
        self.assertEqual(frame["cmd"], "aibot_msg_callback")
        self.assertEqual(frame["headers"]["req_id"], got["req_id"])
        body = frame["body"]
        self.assertEqual((body["chattype"], body["chatid"], body["from"]["userid"],
                          body["msgtype"], body["text"]["content"], body["aibotid"]),
                         ("group", "wrkGroup1", "lisi", "text", "@bot hi", DEFAULT_BOT_ID))
        req = got["req_id"]
        stream = {"msgtype": "stream", "stream": {"id": "s1", "finish": False, "content": "he"}}
        c.send("aibot_respond_msg", req, stream)
        self.assertEqual(c.next()["errcode"], 0)
        stream["stream"].update(finish=True, content="hello")
        c.send("aibot_respond_msg", req, stream)
        self.assertEqual(c.next()["errcode"], 0)
        c.send("aibot_respond_msg", req, stream)  # the stream is finished
        self.assertEqual(c.next()["errcode"], 846608)
        c.send("aibot_respond_msg", "aibot_msg_callback_0_00", stream)
        self.assertEqual(c.next()["errcode"], 846605)
        c.send("aibot_respond_msg", req, {"msgtype": "stream", "stream": {
            "id": "s2", "finish": True, "content": "x" * 20481}})
        self.assertNotEqual(c.next()["errcode"], 0)
        c.send("aibot_send_msg", "aibot_send_msg_1_cc",
               {"chatid": "wangwu", "msgtype": "markdown", "markdown": {"content": "hey"}})
        self.assertEqual(c.next()["errcode"], 0)
        c.send("aibot_send_msg", "aibot_send_msg_2_dd", {"msgtype": "markdown",
                                                         "markdown": {"content": "no chat"}})
        self.assertNotEqual(c.next()["errcode"], 0)
        sent = ctl("sent")[1]["sent"]
        self.assertEqual([s["kind"] for s in sent], ["respond", "respond", "send"])
        self.assertEqual(sent[1]["body"]["stream"]["content"], "hello")
        self.assertEqual(sent[2]["body"]["chatid"], "wangwu")

    def test_reply_feedback_id_is_checked_and_feedback_events_are_sent(self):
        c = self.client()
        c.subscribe()
        req = ctl("message", {"userid": "lisi", "text": "hi"})[1]["req_id"]
        c.next()
        bad = {"msgtype": "stream", "stream": {"id": "s1", "finish": False, "content": "",
                                               "feedback": {"id": "x" * 257}}}
        c.send("aibot_respond_msg", req, bad)
        ack = c.next()
        self.assertEqual(ack["errcode"], 40058)
        self.assertIn("feedback", ack["errmsg"])
        bad["stream"]["feedback"] = {"id": "s1|m1"}
        c.send("aibot_respond_msg", req, bad)
        self.assertEqual(c.next()["errcode"], 0)
        # A dislike in a group, with the comment and reason codes WeCom sends for type 2 only.
        status, got, _ = ctl("event", {"eventtype": "feedback_event", "userid": "lisi",
                                       "chattype": "group", "chatid": "wrkG",
                                       "feedback": {"id": "s1|m1", "type": 2, "content": "no",
                                                    "inaccurate_reason_list": [1, 3]}})
        self.assertEqual(status, 200)
        frame = c.next()
        self.assertEqual((frame["cmd"], frame["headers"]["req_id"]),
                         ("aibot_event_callback", got["req_id"]))
        body = frame["body"]
        self.assertEqual((body["msgtype"], body["chattype"], body["chatid"],
                          body["from"]["userid"], body["aibotid"]),
                         ("event", "group", "wrkG", "lisi", DEFAULT_BOT_ID))
        self.assertEqual(body["event"], {"eventtype": "feedback_event", "feedback_event": {
            "id": "s1|m1", "type": 2, "content": "no", "inaccurate_reason_list": [1, 3]}})
        ctl("event", {"eventtype": "feedback_event",
                      "feedback": {"id": "s1|m1", "type": 1, "content": "ignored"}})
        self.assertEqual(c.next()["body"]["event"]["feedback_event"], {"id": "s1|m1", "type": 1})
        self.assertEqual(ctl("event", {"eventtype": "feedback_event",
                                       "feedback": {"id": "s1", "type": 5}})[0], 400)
        self.assertEqual(ctl("event", {"eventtype": "feedback_event", "feedback": {}})[0], 400)

    def test_images_are_encrypted_with_their_aeskey(self):
        c = self.client()
        c.subscribe()
        ctl("message", {"chattype": "single", "userid": "u1", "text": "look",
                        "images": [base64.b64encode(PNG).decode()]})
        body = c.next()["body"]
        self.assertEqual(body["msgtype"], "mixed")
        items = body["mixed"]["msg_item"]
        self.assertEqual(items[0], {"msgtype": "text", "text": {"content": "look"}})
        image = items[1]["image"]
        path = urllib.parse.urlsplit(image["url"]).path
        status, data, _ = http_json(PORT, "GET", path)
        self.assertEqual(status, 200)
        key = base64.b64decode(image["aeskey"] + "=" * (-len(image["aeskey"]) % 4))
        self.assertEqual(aes.unpad32(aes.cbc_decrypt(key, key[:16], data)), PNG)

    def test_a_second_subscription_displaces_the_first(self):
        a = self.client()
        a.subscribe()
        b = self.client()
        self.assertEqual(b.subscribe()["errcode"], 0)
        event = a.next()
        self.assertEqual(event["cmd"], "aibot_event_callback")
        self.assertEqual(event["body"]["event"]["eventtype"], "disconnected_event")
        self.assertIsNone(a.next())

    def test_drop_closes_without_a_close_frame(self):
        c = self.client()
        c.subscribe()
        self.assertEqual(ctl("drop", {})[1]["connections"], 1)
        self.assertIsNone(c.next())
        self.assertEqual(ctl("ws")[1]["connected"], 0)


class _Bot(http.server.BaseHTTPRequestHandler):
    """A callback server written from the docs: verify, decrypt, answer an encrypted stream."""

    def log_message(self, *args):
        pass

    def _params(self):
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        return q

    def _send(self, status, body, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        q = self._params()
        if aes.wx_signature(DEFAULT_TOKEN, q["timestamp"], q["nonce"], q["echostr"]) != \
                q["msg_signature"]:
            return self._send(401, b"")
        key = aes.aes_key(DEFAULT_AES_KEY)
        self._send(200, aes.wx_decrypt(key, q["echostr"])[0], "text/plain")

    def do_POST(self):
        q = self._params()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if aes.wx_signature(DEFAULT_TOKEN, q["timestamp"], q["nonce"], body["encrypt"]) != \
                q["msg_signature"]:
            return self._send(401, b"")
        key = aes.aes_key(DEFAULT_AES_KEY)
        msg = json.loads(aes.wx_decrypt(key, body["encrypt"])[0])
        self.server.seen.append(msg)
        if msg["msgtype"] == "stream":
            self.server.polls += 1
            reply = {"msgtype": "stream", "stream": {"id": msg["stream"]["id"],
                     "finish": self.server.polls >= 2, "content": "partial" * self.server.polls}}
        else:
            reply = {"msgtype": "stream", "stream": {"id": "sid-1", "finish": False,
                                                     "content": ""}}
        enc = aes.wx_encrypt(key, json.dumps(reply).encode(), b"")
        env = {"encrypt": enc, "msgsignature": aes.wx_signature(DEFAULT_TOKEN, "1", "n", enc),
               "timestamp": "1", "nonce": "n"}
        self._send(200, json.dumps(env).encode())


class WebhookDriverTest(unittest.TestCase):
    def setUp(self):
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Bot)
        self.srv.seen, self.srv.polls = [], 0
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d/bots/x" % self.srv.server_address[1]

    def tearDown(self):
        self.srv.shutdown()
        self.srv.server_close()

    def test_verify_message_and_poll(self):
        got = ctl("webhook/verify", {"url": self.url})[1]
        self.assertEqual((got["status"], got["body"]), (200, got["echo"]))
        self.assertEqual(ctl("webhook/verify", {"url": self.url, "forge": True})[1]["status"],
                         401)
        got = ctl("webhook/message", {"url": self.url, "chattype": "single", "userid": "u9",
                                      "text": "hello"})[1]
        self.assertEqual(got["status"], 200)
        self.assertTrue(got["signature_ok"])
        self.assertEqual(got["reply"]["stream"]["id"], "sid-1")
        seen = self.srv.seen[0]
        self.assertEqual((seen["msgid"], seen["from"]["userid"], seen["text"]["content"],
                          seen["chattype"]), (got["msgid"], "u9", "hello", "single"))
        polled = ctl("webhook/poll", {"url": self.url, "stream_id": "sid-1", "interval": 0.05})[1]
        self.assertTrue(polled["finished"])
        self.assertEqual([a["reply"]["stream"]["content"] for a in polled["answers"]],
                         ["partial", "partialpartial"])
        self.assertEqual(self.srv.seen[1]["stream"], {"id": "sid-1"})
        forged = ctl("webhook/message", {"url": self.url, "text": "x", "forge": True})[1]
        self.assertEqual(forged["status"], 401)

    def test_feedback_event_is_posted_encrypted(self):
        got = ctl("webhook/event", {"url": self.url, "eventtype": "feedback_event",
                                    "userid": "u7", "feedback": {"id": "sid-1|m", "type": 3}})[1]
        self.assertEqual(got["status"], 200)
        seen = self.srv.seen[-1]
        self.assertEqual((seen["msgtype"], seen["from"]["userid"], seen["chattype"]),
                         ("event", "u7", "single"))
        self.assertEqual(seen["event"], {"eventtype": "feedback_event",
                                         "feedback_event": {"id": "sid-1|m", "type": 3}})


if __name__ == "__main__":
    unittest.main()
