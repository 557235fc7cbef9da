"""Self-test of fake_discord.py: REST with http.client, the Gateway with python3-websockets as
client; the fake runs as a subprocess (and once in process, for the no-session path).

Run: cd tests/fakes && python3 -m unittest -v test_fake_discord
"""

import json
import queue
import unittest
import uuid

from fake_discord import DEFAULT_TOKEN, FakeDiscord
from fake_ws_common import LoopThread, http_json, start_fake, stop_fake, websockets

TIMEOUT = 10.0
AUTH = {"Authorization": "Bot " + DEFAULT_TOKEN}
PROC = PORT = WSPORT = LT = None


def setUpModule():
    global PROC, PORT, WSPORT, LT
    PROC, ports = start_fake("fake_discord.py", "FAKE_DISCORD_PORT=")
    PORT, WSPORT = ports["FAKE_DISCORD_PORT"], ports["FAKE_DISCORD_GATEWAY_PORT"]
    LT = LoopThread()
    LT.start()


def tearDownModule():
    try:
        stop_fake(PROC)
    finally:
        if LT is not None:
            LT.stop()


def api(method, path, body=None, headers=AUTH, port=None):
    return http_json(port or PORT, method, "/api/v10" + path, body, headers)


def ctl(path, body=None, port=None):
    return http_json(port or PORT, "POST" if body is not None else "GET", "/_control/" + path,
                     body)


def gw_state():
    return ctl("gateway")[1]


class Client(object):
    """A Gateway client whose frames are read with a deadline."""

    def __init__(self, query="/?v=10&encoding=json"):
        self.frames = queue.Queue()
        async def dial():
            return await websockets.connect("ws://127.0.0.1:%d%s" % (WSPORT, query),
                                            ping_interval=None, close_timeout=2)
        self.ws = LT.run(dial())
        LT.loop.call_soon_threadsafe(lambda: LT.loop.create_task(self._read()))

    async def _read(self):
        try:
            async for f in self.ws:
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

    def send(self, obj):
        LT.run(self.ws.send(obj if isinstance(obj, str) else json.dumps(obj)))

    def closed_code(self, timeout=TIMEOUT):
        """Skips frames until the socket closes; returns its close code."""
        while True:
            try:
                if self.frames.get(timeout=timeout) is None:
                    return self.ws.close_code
            except queue.Empty:
                raise AssertionError("socket still open after %.1fs" % timeout)

    def close(self):
        LT.run(self.ws.close(1000))

    def identify(self, token=DEFAULT_TOKEN, intents=(1 << 0) | (1 << 9) | (1 << 12) | (1 << 15)):
        hello = self.recv()
        assert hello["op"] == 10, hello
        self.send({"op": 2, "d": {"token": token, "intents": intents,
                                  "properties": {"os": "linux", "browser": "sb", "device": "sb"}}})
        return hello


def new_channel(guild=True):
    return ctl("channel", {"guild_id": "900"} if guild else {})[1]["id"]


def post_multipart(cid, parts):
    """parts: [(content-disposition parameters, content type, bytes)]."""
    b = "----b" + uuid.uuid4().hex
    body = b"".join(("--%s\r\nContent-Disposition: form-data; %s\r\nContent-Type: %s\r\n\r\n"
                     % (b, d, t)).encode() + v + b"\r\n" for d, t, v in parts)
    body += ("--%s--\r\n" % b).encode()
    h = dict(AUTH, **{"Content-Type": "multipart/form-data; boundary=" + b})
    return api("POST", "/channels/%s/messages" % cid, body, h)


class RestTest(unittest.TestCase):
    def test_auth_and_discovery(self):
        for h in ({}, {"Authorization": "Bot wrong"}, {"Authorization": DEFAULT_TOKEN}):
            st, js, _ = api("GET", "/users/@me", headers=h)
            self.assertEqual((st, js), (401, {"message": "401: Unauthorized", "code": 0}))
        st, js, h = api("GET", "/users/@me")
        self.assertEqual(st, 200)
        self.assertTrue(js["bot"])
        self.assertTrue(js["id"].isdigit())
        self.assertIn("x-ratelimit-bucket", h)
        st, js, _ = api("GET", "/gateway/bot")
        self.assertEqual(js["url"], "ws://127.0.0.1:%d" % WSPORT)
        self.assertEqual(js["shards"], 1)
        self.assertEqual(set(js["session_start_limit"]),
                         {"total", "remaining", "reset_after", "max_concurrency"})
        self.assertEqual(api("GET", "/gateway", headers={})[1]["url"], js["url"])
        self.assertEqual(api("GET", "/nothing")[1], {"message": "404: Not Found", "code": 0})

    def test_create_message_json_and_errors(self):
        st, js, _ = api("POST", "/channels/123/messages", {"content": "x"})
        self.assertEqual((st, js), (404, {"message": "Unknown Channel", "code": 10003}))
        cid = new_channel()
        st, m, _ = api("POST", "/channels/%s/messages" % cid, {"content": "é" * 2000})
        self.assertEqual(st, 200, m)
        self.assertEqual((m["channel_id"], m["type"], m["author"]["bot"]), (cid, 0, True))
        st, js, _ = api("POST", "/channels/%s/messages" % cid, {"content": "a" * 2001})
        self.assertEqual((st, js["code"], js["message"]), (400, 50035, "Invalid Form Body"))
        self.assertEqual(js["errors"]["content"]["_errors"][0]["code"], "BASE_TYPE_MAX_LENGTH")
        st, js, _ = api("POST", "/channels/%s/messages" % cid, {"content": ""})
        self.assertEqual((st, js["code"]), (400, 50006))
        st, r, _ = api("POST", "/channels/%s/messages" % cid,
                       {"content": "re", "message_reference": {"message_id": m["id"]}})
        self.assertEqual((st, r["type"], r["referenced_message"]["id"]), (200, 19, m["id"]))
        st, js, _ = api("POST", "/channels/%s/messages" % cid,
                        {"content": "re", "message_reference": {"message_id": "1"}})
        self.assertEqual((st, js["code"]), (400, 50035))
        self.assertIn("message_reference", js["errors"])
        st, js, _ = api("POST", "/channels/%s/messages" % cid,
                        {"content": "re", "message_reference": {"message_id": "1",
                                                                "fail_if_not_exists": False}})
        self.assertEqual((st, js["type"]), (200, 0))
        st, e, _ = api("PATCH", "/channels/%s/messages/%s" % (cid, m["id"]), {"content": "new"})
        self.assertEqual((st, e["content"]), (200, "new"))
        self.assertIsNotNone(e["edited_timestamp"])
        self.assertEqual(api("PATCH", "/channels/%s/messages/1" % cid, {"content": "n"})[1]
                         ["code"], 10008)
        self.assertEqual(api("POST", "/channels/%s/typing" % cid)[0], 204)
        self.assertEqual(api("POST", "/channels/%s/messages" % cid, b"{bad")[0], 400)
        sent = [s for s in ctl("sent")[1]["sent"] if s["channel_id"] == cid]
        self.assertEqual([s["kind"] for s in sent], ["create", "create", "create", "edit"])
        self.assertEqual(sent[1]["message_reference"], {"message_id": m["id"]})

    def test_multipart_upload(self):
        cid = new_channel()
        payload = {"content": "files", "attachments": [{"id": 1, "filename": "renamed.txt"}]}
        st, m, _ = post_multipart(cid, [
            ('name="payload_json"', "application/json", json.dumps(payload).encode()),
            ('name="files[0]"; filename="a.png"', "image/png", b"PNGDATA"),
            ('name="files[1]"; filename="b.txt"', "text/plain", b"hello world")])
        self.assertEqual(st, 200, m)
        self.assertEqual(m["content"], "files")
        self.assertEqual([(a["filename"], a["size"], a["content_type"])
                          for a in m["attachments"]],
                         [("a.png", 7, "image/png"), ("renamed.txt", 11, "text/plain")])
        ids = [a["id"] for a in m["attachments"]]
        self.assertTrue(all(i.isdigit() and int(i) > int(cid) for i in ids), ids)
        last = ctl("sent")[1]["sent"][-1]
        self.assertTrue(last["multipart"])
        self.assertEqual([a["file_index"] for a in last["attachments"]], ["0", "1"])
        st, js, _ = post_multipart(cid, [('name="files[0]"', "text/plain", b"x")])
        self.assertEqual((st, js["code"]), (400, 50035))
        st, js, _ = post_multipart(cid, [('name="files[0]"; filename="big.bin"',
                                          "application/octet-stream",
                                          b"\0" * (10 * 1024 * 1024 + 1))])
        self.assertEqual((st, js["code"]), (413, 40005))

    def test_dm_channel_reuse(self):
        st, ch, _ = api("POST", "/users/@me/channels", {"recipient_id": "777001"})
        self.assertEqual((st, ch["type"], ch["recipients"][0]["id"]), (200, 1, "777001"))
        self.assertEqual(api("POST", "/users/@me/channels", {"recipient_id": 777001})[1]["id"],
                         ch["id"])
        self.assertEqual(api("POST", "/channels/%s/messages" % ch["id"], {"content": "hi"})[0],
                         200)
        self.assertEqual(api("POST", "/users/@me/channels", {"recipient_id": "x"})[0], 400)

    def test_rate_limit_injection(self):
        cid = new_channel()
        ctl("ratelimit", {"method": "POST", "path": "/channels/", "retry_after": 1.25})
        st, js, h = api("POST", "/channels/%s/messages" % cid, {"content": "x"})
        self.assertEqual(st, 429)
        self.assertEqual(js, {"message": "You are being rate limited.", "retry_after": 1.25,
                              "global": False})
        self.assertEqual((h["retry-after"], h["x-ratelimit-remaining"],
                          h["x-ratelimit-scope"]), ("2", "0", "user"))
        self.assertNotIn("x-ratelimit-global", h)
        self.assertEqual(api("POST", "/channels/%s/messages" % cid, {"content": "x"})[0], 200)
        ctl("ratelimit", {"global": True, "scope": "global", "retry_after": 0.5})
        st, js, h = api("GET", "/users/@me")
        self.assertEqual((st, js["global"], h["x-ratelimit-global"]), (429, True, "true"))


class GatewayTest(unittest.TestCase):
    def test_identify_ready_heartbeat_dispatch(self):
        c = Client()
        hello = c.identify()
        self.assertEqual(hello["d"]["heartbeat_interval"], 41250)
        ready = c.recv()
        self.assertEqual((ready["op"], ready["t"]), (0, "READY"))
        d = ready["d"]
        self.assertEqual((d["v"], d["user"]["bot"]), (10, True))
        self.assertEqual(d["resume_gateway_url"], "ws://127.0.0.1:%d" % WSPORT)
        self.assertTrue(d["session_id"])
        c.send({"op": 1, "d": ready["s"]})
        self.assertEqual(c.recv()["op"], 11)
        cid = new_channel()
        st, js, _ = ctl("message", {"channel_id": cid, "guild_id": "900", "content": "<@1> hi",
                                    "author": {"id": "555", "username": "alice"},
                                    "mentions": ["1"],
                                    "attachments": [{"filename": "p.png", "size": 3}]})
        self.assertEqual(st, 200, js)
        self.assertTrue(js["delivered"])
        ev = c.recv()
        self.assertEqual((ev["op"], ev["t"], ev["s"]), (0, "MESSAGE_CREATE", ready["s"] + 1))
        m = ev["d"]
        self.assertEqual((m["guild_id"], m["channel_id"], m["content"]), ("900", cid, "<@1> hi"))
        self.assertEqual((m["author"]["id"], m["mentions"][0]["id"]), ("555", "1"))
        self.assertEqual(m["attachments"][0]["filename"], "p.png")
        ctl("message", {"channel_id": "4242", "content": "dm", "author": {"id": "556"}})
        dm = c.recv()
        self.assertEqual(dm["s"], ev["s"] + 1)
        self.assertNotIn("guild_id", dm["d"])
        self.assertEqual(api("GET", "/channels/4242")[1]["type"], 1)
        g = gw_state()
        self.assertEqual(g["identifies"][-1]["intents"], 37377)
        self.assertTrue(g["identifies"][-1]["token_ok"])
        self.assertNotIn("token", g["identifies"][-1])
        self.assertEqual(g["identifies"][-1]["properties"]["browser"], "sb")
        self.assertEqual(g["last_seq_acked"], ready["s"])
        self.assertGreaterEqual(g["identified"], 1)
        c.send({"op": 2, "d": {"token": DEFAULT_TOKEN}})
        self.assertEqual(c.closed_code(), 4005)

    def test_protocol_violations_close(self):
        cases = [("/?v=9&encoding=json", None, 4012), ("/?v=10&encoding=etf", None, 4002),
                 ("/?v=10&encoding=json", {"op": 2, "d": {"token": "bad"}}, 4004),
                 ("/?v=10&encoding=json", {"op": 42, "d": None}, 4001),
                 ("/?v=10&encoding=json", "{not json", 4002),
                 ("/?v=10&encoding=json", {"d": 1}, 4002),
                 ("/?v=10&encoding=json", {"op": 3, "d": {"status": "online"}}, 4003),
                 ("/?v=10&encoding=json", {"op": 2, "d": "token"}, 4001),
                 ("/?v=10&encoding=json", {"op": 6, "d": {"token": "bad", "session_id": "x",
                                                          "seq": 1}}, 4004)]
        for query, frame, code in cases:
            c = Client(query)
            if frame is not None:
                self.assertEqual(c.recv()["op"], 10)
                c.send(frame)
            self.assertEqual(c.closed_code(), code, (query, frame))
        self.assertFalse(gw_state()["identifies"][-1]["token_ok"])

    def test_resume_replays_missed_dispatches(self):
        c = Client()
        c.identify()
        ready = c.recv()
        sid = ready["d"]["session_id"]
        cid = new_channel()
        ctl("message", {"channel_id": cid, "guild_id": "900", "content": "one"})
        seen = c.recv()["s"]
        ctl("drop", {})
        self.assertEqual(c.closed_code(), 1006)
        missed = [ctl("message", {"channel_id": cid, "guild_id": "900", "content": t})[1]
                  for t in ("two", "three")]
        self.assertEqual([m["delivered"] for m in missed], [False, False])
        c2 = Client()
        self.assertEqual(c2.recv()["op"], 10)
        c2.send({"op": 6, "d": {"token": DEFAULT_TOKEN, "session_id": sid, "seq": seen}})
        got = [c2.recv() for _ in range(3)]
        self.assertEqual([g["d"].get("content") for g in got[:2]], ["two", "three"])
        self.assertEqual([g["s"] for g in got[:2]], [m["s"] for m in missed])
        self.assertEqual(got[2]["t"], "RESUMED")
        self.assertEqual(gw_state()["resumes"][-1]["outcome"], "resumed")
        c3 = Client()
        c3.recv()
        c3.send({"op": 6, "d": {"token": DEFAULT_TOKEN, "session_id": "nope", "seq": 1}})
        f = c3.recv()
        self.assertEqual((f["op"], f["d"]), (9, False))
        c3.send({"op": 6, "d": {"token": DEFAULT_TOKEN, "session_id": sid, "seq": 10 ** 6}})
        self.assertEqual(c3.closed_code(), 4007)
        ctl("invalid_session", {"resumable": False})
        f = c2.recv()
        self.assertEqual((f["op"], f["d"]), (9, False))
        c2.close()
        c4 = Client()
        c4.recv()
        c4.send({"op": 6, "d": {"token": DEFAULT_TOKEN, "session_id": sid, "seq": seen}})
        f = c4.recv()
        self.assertEqual((f["op"], f["d"]), (9, False))
        self.assertEqual(gw_state()["resumes"][-1]["outcome"], "invalid session")
        self.assertEqual(ctl("message", {"channel_id": cid, "content": "x"})[0], 409)
        c4.close()

    def test_server_requests(self):
        c = Client()
        c.identify()
        c.recv()
        for name, body, op, d in (("reconnect", {}, 7, None), ("heartbeat_request", {}, 1, None),
                                  ("invalid_session", {"resumable": True}, 9, True)):
            st, js, _ = ctl(name, body)
            self.assertGreaterEqual(js["connections"], 1)
            f = c.recv()
            self.assertEqual((f["op"], f["d"]), (op, d), name)
        c.send({"op": 3, "d": {"status": "idle"}})
        c.send({"op": 1, "d": None})
        self.assertEqual(c.recv()["op"], 11)
        self.assertEqual(gw_state()["other_ops"][-1]["op"], 3)
        ctl("close", {"code": 4000, "reason": "test"})
        self.assertEqual(c.closed_code(), 4000)
        self.assertEqual(gw_state()["closes"][-1], {"code": 4000, "by": "server"})
        self.assertEqual(ctl("bogus", {})[0], 404)

    def test_missed_heartbeats(self):
        ctl("config", {"heartbeat_interval": 100, "enforce_heartbeat": True})
        try:
            before = gw_state()["overdue"]
            c = Client()
            self.assertEqual(c.identify()["d"]["heartbeat_interval"], 100)
            self.assertEqual(c.closed_code(), 4009)
            self.assertGreater(gw_state()["overdue"], before)
        finally:
            ctl("config", {"heartbeat_interval": 41250, "enforce_heartbeat": False})


class InProcessTest(unittest.TestCase):
    def test_no_session_and_custom_token(self):
        fake = FakeDiscord(token="other-token")
        port = fake.start()
        try:
            self.assertEqual(fake.port, port)
            self.assertEqual(ctl("message", {"channel_id": "1", "content": "x"}, port)[0], 409)
            self.assertEqual(ctl("message", {"channel_id": "abc"}, port)[0], 400)
            self.assertEqual(api("GET", "/users/@me", port=port)[0], 401)
            self.assertEqual(api("GET", "/users/@me", headers={"Authorization": "Bot other-token"},
                                 port=port)[0], 200)
        finally:
            fake.stop()


if __name__ == "__main__":
    unittest.main()
