"""Self-test of fake_kook.py against KOOK's documented protocol (kaiheila/api-docs): REST with
http.client, the gateway with python3-websockets as client. Each test runs its own fake in process
(its gateway state is global); one runs it as a subprocess to check the command line.

Run: cd tests/fakes && python3 -m unittest -v test_fake_kook
"""

import json
import queue
import unittest
import urllib.parse
import uuid
import zlib

from fake_kook import BOT_ID, DEFAULT_TOKEN, FakeKook
from fake_ws_common import LoopThread, http_json, start_fake, stop_fake, websockets

TIMEOUT = 10.0
AUTH = {"Authorization": "Bot " + DEFAULT_TOKEN}
LT = None


def setUpModule():
    global LT
    LT = LoopThread()
    LT.start()


def tearDownModule():
    if LT is not None:
        LT.stop()


class Client(object):
    """A gateway client whose frames (zlib-inflated when binary) are read with a deadline."""

    def __init__(self, url):
        self.frames = queue.Queue()

        async def dial():
            return await websockets.connect(url, ping_interval=None, close_timeout=2)
        self.ws = LT.run(dial())
        self.binary = []
        LT.loop.call_soon_threadsafe(lambda: LT.loop.create_task(self._read()))

    async def _read(self):
        try:
            async for f in self.ws:
                if isinstance(f, bytes):
                    self.binary.append(True)
                    f = zlib.decompress(f).decode("utf-8")
                self.frames.put(json.loads(f))
        except websockets.exceptions.ConnectionClosed:
            pass
        self.frames.put(None)

    def recv(self, timeout=TIMEOUT):
        try:
            f = self.frames.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no frame within %.1fs" % timeout)
        if f is None:
            raise AssertionError("socket closed with %s" % self.ws.close_code)
        return f

    def nothing(self, timeout=0.3):
        try:
            f = self.frames.get(timeout=timeout)
        except queue.Empty:
            return True
        raise AssertionError("unexpected frame %r" % (f,))

    def send(self, obj):
        LT.run(self.ws.send(json.dumps(obj)))

    def closed(self, timeout=TIMEOUT):
        while True:
            try:
                if self.frames.get(timeout=timeout) is None:
                    return True
            except queue.Empty:
                raise AssertionError("socket still open after %.1fs" % timeout)

    def close(self):
        LT.run(self.ws.close(1000))


class FakeCase(unittest.TestCase):
    def setUp(self):
        self.fake = FakeKook()
        self.fake.start()
        self.addCleanup(self.fake.stop)

    def api(self, method, path, body=None, headers=AUTH):
        return http_json(self.fake.port, method, "/api/v3" + path, body, headers)

    def ctl(self, path, body=None):
        return http_json(self.fake.port, "POST" if body is not None else "GET",
                         "/_control/" + path, body)[1]

    def gateway_url(self, compress=0):
        st, js, _ = self.api("GET", "/gateway/index?compress=%d" % compress)
        self.assertEqual((st, js["code"]), (200, 0), js)
        return js["data"]["url"]

    def connect(self, extra="", compress=0):
        c = Client(self.gateway_url(compress) + extra)
        self.addCleanup(lambda: LT.run(c.ws.close(1000)))
        hello = c.recv()
        return c, hello

    def say(self, content="hello", **kw):
        body = dict({"channel_type": "GROUP", "target_id": "9100", "author_id": "2000000001",
                     "content": content}, **kw)
        return self.ctl("message", body)


class RestTest(FakeCase):
    def test_auth_envelope_and_rate_limit_headers(self):
        for h in ({}, {"Authorization": "Bot wrong"}, {"Authorization": DEFAULT_TOKEN},
                  {"Authorization": "Bearer " + DEFAULT_TOKEN}):
            st, js, _ = self.api("GET", "/user/me", headers=h)
            self.assertEqual((st, js["code"]), (401, 401))
        st, js, h = self.api("GET", "/user/me")
        self.assertEqual((st, js["code"], js["message"]), (200, 0, "操作成功"))
        self.assertEqual((js["data"]["id"], js["data"]["bot"]), (BOT_ID, True))
        for name in ("x-rate-limit-limit", "x-rate-limit-remaining", "x-rate-limit-reset",
                     "x-rate-limit-bucket"):
            self.assertIn(name, h)
        calls = self.ctl("calls")["calls"]
        self.assertEqual([c["auth_ok"] for c in calls], [False] * 4 + [True])

    def test_gateway_index_carries_compress_and_a_token(self):
        for q, want in (("?compress=0", "0"), ("?compress=1", "1"), ("", "1")):
            url = self.api("GET", "/gateway/index" + q)[1]["data"]["url"]
            parts = urllib.parse.urlsplit(url)
            query = dict(urllib.parse.parse_qsl(parts.query))
            self.assertEqual((parts.scheme, parts.path, query["compress"]), ("ws", "/gateway", want))
            self.assertTrue(query["token"])

    def test_message_create_rules(self):
        st, js, _ = self.api("POST", "/message/create", {"target_id": "1", "content": "x"})
        self.assertEqual((st, js["code"]), (200, 40000))  # unknown channel
        cid = self.ctl("channel", {"id": "9200"})["id"]
        st, js, _ = self.api("POST", "/message/create",
                             {"target_id": cid, "content": "é" * 8000, "quote": "m1",
                              "nonce": "n1"})
        self.assertEqual(js["code"], 0, js)
        self.assertEqual(js["data"]["nonce"], "n1")
        uuid.UUID(js["data"]["msg_id"])
        self.assertIsInstance(js["data"]["msg_timestamp"], int)
        self.assertEqual(self.api("POST", "/message/create",
                                  {"target_id": cid, "content": "a" * 8001})[1]["code"], 40000)
        self.assertEqual(self.api("POST", "/message/create",
                                  {"target_id": cid, "content": ""})[1]["code"], 40000)
        self.assertEqual(self.api("POST", "/message/create", b"{bad")[1]["code"], 40000)
        # An image must be an asset the bot uploaded (message.md).
        st, js, _ = self.api("POST", "/message/create",
                             {"target_id": cid, "type": 2, "content": "https://x.example/a.png"})
        self.assertEqual((js["code"], js["message"]), (40000, "找不到资源"))
        sent = self.ctl("sent")["sent"]
        self.assertEqual(len(sent), 1)
        self.assertEqual((sent[0]["kind"], sent[0]["type"], sent[0]["quote"]),
                         ("channel", 9, "m1"))  # type defaults to 9 (KMarkdown)

    def test_direct_message_create_rules(self):
        st, js, _ = self.api("POST", "/direct-message/create", {"content": "x"})
        self.assertEqual(js["code"], 40000)
        self.assertEqual(self.api("POST", "/direct-message/create",
                                  {"target_id": "2000000001", "content": "hi"})[1]["code"], 0)
        self.assertEqual(self.api("POST", "/direct-message/create",
                                  {"chat_code": "abc", "content": "hi", "type": 9})[1]["code"], 0)
        sent = self.ctl("sent")["sent"]
        self.assertEqual([(s["kind"], s["type"]) for s in sent], [("direct", 1), ("direct", 9)])

    def test_asset_upload_then_image_message(self):
        b = "----b" + uuid.uuid4().hex
        png = http_json(self.fake.port, "GET", "/files/cat.png")[1]
        body = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n"
                "Content-Type: image/png\r\n\r\n" % b).encode() + png + ("\r\n--%s--\r\n" % b
                                                                        ).encode()
        st, js, _ = self.api("POST", "/asset/create", body,
                             dict(AUTH, **{"Content-Type": "multipart/form-data; boundary=" + b}))
        self.assertEqual(js["code"], 0, js)
        url = js["data"]["url"]
        self.assertEqual(http_json(self.fake.port, "GET", urllib.parse.urlsplit(url).path)[1], png)
        cid = self.ctl("channel", {})["id"]
        js = self.api("POST", "/message/create", {"target_id": cid, "type": 2, "content": url})[1]
        self.assertEqual(js["code"], 0, js)
        self.assertEqual(self.ctl("assets")["assets"][0]["content_type"], "image/png")
        st, js, _ = self.api("POST", "/asset/create", {"x": 1})
        self.assertEqual(js["code"], 40000)

    def test_rate_limit_injection(self):
        self.ctl("ratelimit", {"path": "/message/", "times": 1, "reset": 3, "global": True})
        cid = self.ctl("channel", {})["id"]
        st, js, h = self.api("POST", "/message/create", {"target_id": cid, "content": "x"})
        self.assertEqual((st, js["code"]), (429, 429))
        self.assertEqual((h["x-rate-limit-remaining"], h["x-rate-limit-reset"]), ("0", "3"))
        self.assertIn("x-rate-limit-global", h)
        self.assertEqual(self.api("POST", "/message/create",
                                  {"target_id": cid, "content": "x"})[0], 200)


class GatewayTest(FakeCase):
    def test_hello_with_and_without_a_valid_token(self):
        c, hello = self.connect()
        self.assertEqual(hello["s"], 1)
        self.assertEqual(hello["d"]["code"], 0)
        uuid.UUID(hello["d"]["session_id"])
        base = self.gateway_url()
        for url, code in ((base.split("&token=")[0], 40100),
                          (base.split("&token=")[0] + "&token=nope", 40101)):
            bad = Client(url)
            self.assertEqual(bad.recv(), {"s": 1, "d": {"code": code}})
            self.assertTrue(bad.closed())
        self.ctl("config", {"hello_code": 40103})
        bad = Client(base)
        self.assertEqual(bad.recv()["d"]["code"], 40103)
        self.assertTrue(bad.closed())
        gw = self.ctl("gateway")
        self.assertEqual([h["code"] for h in gw["hellos"]], [0, 40100, 40101, 40103])
        self.assertNotIn(self.fake.gateway_token, json.dumps(gw["queries"]))
        self.assertEqual([q["token_ok"] for q in gw["queries"]], [True, False, False, True])

    def test_events_are_numbered_and_pings_answered(self):
        c, _ = self.connect()
        for i in range(3):
            r = self.say("m%d (met)%s(met)" % (i, BOT_ID))
            self.assertEqual((r["sn"], r["delivered"]), (i + 1, True))
        for i in range(3):
            f = c.recv()
            self.assertEqual((f["s"], f["sn"]), (0, i + 1))
            d = f["d"]
            self.assertEqual((d["channel_type"], d["type"], d["target_id"]), ("GROUP", 9, "9100"))
            self.assertEqual(d["extra"]["mention"], [BOT_ID])
            self.assertEqual(d["extra"]["author"]["id"], d["author_id"])
        c.send({"s": 2, "sn": 3})
        self.assertEqual(c.recv(), {"s": 3})
        # A PING behind the last sn makes the server resend what followed it.
        c.send({"s": 2, "sn": 1})
        self.assertEqual(c.recv(), {"s": 3})
        self.assertEqual([c.recv()["sn"], c.recv()["sn"]], [2, 3])
        self.ctl("config", {"answer_pings": False})
        c.send({"s": 2, "sn": 3})
        c.nothing()
        self.assertEqual(self.ctl("gateway")["pings"], [3, 1, 3])

    def test_direct_message_events(self):
        c, _ = self.connect()
        self.ctl("message", {"channel_type": "PERSON", "author_id": "2000000002",
                             "content": "hi", "type": 1})
        d = c.recv()["d"]
        self.assertEqual((d["channel_type"], d["target_id"], d["type"]), ("PERSON", BOT_ID, 1))
        self.assertTrue(d["extra"]["code"])

    def test_resume_replays_then_acks_and_bad_resumes_are_refused(self):
        c, hello = self.connect()
        sid = hello["d"]["session_id"]
        self.say("one")
        c.recv()
        self.ctl("drop", {})
        self.assertTrue(c.closed())
        missed = self.say("two")
        self.assertFalse(missed["delivered"])
        r, hello2 = self.connect("&resume=1&sn=1&session_id=" + sid)
        self.assertEqual(hello2["d"], {"code": 0, "session_id": sid})
        f = r.recv()
        self.assertEqual((f["s"], f["sn"], f["d"]["content"]), (0, 2, "two"))
        self.assertEqual(r.recv(), {"s": 6, "d": {"session_id": sid}})
        # RESUME (s=4) on a live connection replays as well.
        r.send({"s": 4, "sn": 0})
        self.assertEqual([r.recv()["sn"], r.recv()["sn"]], [1, 2])
        self.assertEqual(r.recv()["s"], 6)
        base = self.gateway_url()
        for extra, code in (("&resume=1&sn=99&session_id=" + sid, 40108),
                            ("&resume=1&sn=1&session_id=nope", 40107),
                            ("&resume=1&session_id=" + sid, 40106)):
            bad = Client(base + extra)
            self.assertEqual(bad.recv()["s"], 5)  # no HELLO: RECONNECT with the reason
            self.assertTrue(bad.closed())
        outcomes = [x["outcome"] for x in self.ctl("gateway")["resumes"]]
        self.assertEqual(outcomes, ["resumed", "invalid sn", "session expired", "missing params"])

    def test_reconnect_forgets_the_session(self):
        c, hello = self.connect()
        self.say("one")
        c.recv()
        self.assertEqual(self.ctl("reconnect", {})["connections"], 1)
        self.assertEqual(c.recv(), {"s": 5, "d": {"code": 40108, "err": "invalid sn"}})
        bad = Client(self.gateway_url() + "&resume=1&sn=1&session_id=" + hello["d"]["session_id"])
        self.assertEqual(bad.recv()["d"]["code"], 40107)
        fresh, hello2 = self.connect()
        self.assertNotEqual(hello2["d"]["session_id"], hello["d"]["session_id"])
        self.assertEqual(self.say("again")["sn"], 1)  # a new session numbers from 1

    def test_an_expired_session_cannot_be_resumed(self):
        c, hello = self.connect()
        self.assertEqual(self.ctl("expire", {})["session_id"], hello["d"]["session_id"])
        self.ctl("drop", {})
        self.assertTrue(c.closed())
        bad = Client(self.gateway_url() + "&resume=1&sn=0&session_id=" + hello["d"]["session_id"])
        self.assertEqual(bad.recv(), {"s": 5, "d": {"code": 40107, "err": "session expired"}})
        self.assertTrue(bad.closed())

    def test_held_events_and_resends(self):
        c, _ = self.connect()
        held = self.say("first", hold=True)
        self.assertFalse(held["delivered"])
        self.say("second")
        self.assertEqual(c.recv()["sn"], 2)
        self.assertTrue(self.ctl("resend", {"sn": 1})["delivered"])
        self.assertEqual(c.recv()["sn"], 1)
        self.ctl("resend", {"sn": 2})
        self.assertEqual(c.recv()["d"]["content"], "second")
        self.assertEqual(http_json(self.fake.port, "POST", "/_control/resend", {"sn": 9})[0], 404)

    def test_compressed_frames(self):
        c, hello = self.connect(compress=1)
        self.assertEqual(hello["d"]["code"], 0)
        self.say("zipped")
        self.assertEqual(c.recv()["d"]["content"], "zipped")
        self.assertTrue(c.binary and all(c.binary))
        self.ctl("config", {"force_compress": True})
        forced, hello = self.connect(compress=0)
        self.assertEqual(hello["d"]["code"], 0)
        self.assertTrue(forced.binary)

    def test_no_session_is_a_conflict(self):
        st, js, _ = http_json(self.fake.port, "POST", "/_control/message",
                              {"channel_type": "GROUP", "content": "x"})
        self.assertEqual(st, 409)


class CommandLineTest(unittest.TestCase):
    def test_port_line_and_clean_exit(self):
        proc, ports = start_fake("fake_kook.py", "FAKE_KOOK_PORT=")
        try:
            self.assertIn("FAKE_KOOK_GATEWAY_PORT", ports)
            st, js, _ = http_json(ports["FAKE_KOOK_PORT"], "GET", "/api/v3/user/me",
                                  headers=AUTH)
            self.assertEqual((st, js["data"]["id"]), (200, BOT_ID))
        finally:
            stop_fake(proc)


if __name__ == "__main__":
    unittest.main()
