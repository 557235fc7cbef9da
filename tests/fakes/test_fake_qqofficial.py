"""Self-test of fake_qqofficial.py and qq_ed25519.py against the documented protocol: Ed25519 with
RFC 8032's test vectors and QQ's worked examples, the token endpoint, the API's passive-reply
rules and files API, the gateway (python3-websockets as client) and the signed webhook driver
(a loopback receiver checks the signatures). Each test class starts its own fake subprocess.

Run: cd tests/fakes && python3 -m unittest -v test_fake_qqofficial
"""

import http.server
import json
import queue
import threading
import time
import unittest

import qq_ed25519 as ed
from fake_qqofficial import BOT_USER_ID, DEFAULT_APPID, DEFAULT_SECRET
from fake_ws_common import LoopThread, http_json, start_fake, stop_fake, websockets

TIMEOUT = 10.0
USER = "E4F4AEA33253A2797FB897C50B81D7ED"
GROUP = "C9F778FE6ADF9D1D1DBE395BF744A33A"
ALL_INTENTS = (1 << 0) | (1 << 1) | (1 << 12) | (1 << 25) | (1 << 26) | (1 << 30)

# RFC 8032 section 7.1, TEST 1-3: (secret key, public key, message, signature).
RFC8032 = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701c"
     "f9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0"
     "f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f76098"
     "4dc6594a7c15e9716ed28dc027beceea1ec40a"),
]


class Ed25519Test(unittest.TestCase):
    def test_rfc8032_vectors(self):
        for sk, pk, msg, sig in RFC8032:
            seed, message = bytes.fromhex(sk), bytes.fromhex(msg)
            self.assertEqual(ed.public_key(seed).hex(), pk)
            self.assertEqual(ed.sign(seed, message).hex(), sig)
            self.assertTrue(ed.verify(bytes.fromhex(pk), message, bytes.fromhex(sig)))
            self.assertFalse(ed.verify(bytes.fromhex(pk), message + b"x", bytes.fromhex(sig)))
            bad = bytearray(bytes.fromhex(sig))
            bad[5] ^= 1
            self.assertFalse(ed.verify(bytes.fromhex(pk), message, bytes(bad)))

    def test_qq_worked_examples(self):
        # bot-docs interface-framework/sign.md: the seed, the public key and a signature (over
        # the pretty-printed body the doc shows), and event-emit.md's op 13 answer.
        seed = ed.qq_seed("naOC0ocQE3shWLAfffVLB1rhYPG7")
        self.assertEqual(seed, b"naOC0ocQE3shWLAfffVLB1rhYPG7naOC")
        self.assertEqual(ed.public_key(seed).hex(),
                         "d7c362fe78aef81ff23287b493628b5db02a3c4fe30b215e4d19609b5d76673a")
        body = '{\n  "op": 0,\n  "d": {},\n  "t": "GATEWAY_EVENT_NAME"\n}'
        self.assertEqual(ed.qq_sign_hex("naOC0ocQE3shWLAfffVLB1rhYPG7", "1725442341" + body),
                         "865ad13a61752ca65e26bde6676459cd36cf1be609375b37bd62af366e1dc25a8dc789b"
                         "a7f14e017ada3d554c671a911bfdf075ba54835b23391d509579ed002")
        self.assertEqual(ed.qq_sign_hex("DG5g3B4j9X2KOErG", "1725442341Arq0D5A61EgUu4OxUvOp"),
                         "87befc99c42c651b3aac0278e71ada338433ae26fcb24307bdc5ad38c1adc2d01bcfcad"
                         "c0842edac85e85205028a1132afe09280305f13aa6909ffc2d652c706")
        self.assertEqual(ed.qq_seed("abc"), b"abcabcabcabcabcabcabcabcabcabcab")


class FakeCase(unittest.TestCase):
    """Starts a fresh fake per test (its state is global)."""

    def setUp(self):
        self.proc, ports = start_fake("fake_qqofficial.py", "FAKE_QQ_PORT=")
        self.port, self.ws_port = ports["FAKE_QQ_PORT"], ports["FAKE_QQ_GATEWAY_PORT"]
        self.addCleanup(stop_fake, self.proc)

    def ctl(self, path, body=None):
        return http_json(self.port, "POST" if body is not None else "GET", "/_control/" + path,
                         body)[1]

    def token(self):
        status, body, _ = http_json(self.port, "POST", "/app/getAppAccessToken",
                                    {"appId": DEFAULT_APPID, "clientSecret": DEFAULT_SECRET})
        self.assertEqual(status, 200, body)
        return body

    def api(self, method, path, body=None, token=None):
        token = token or self.token()["access_token"]
        return http_json(self.port, method, path, body, {"Authorization": "QQBot " + token})


class TokenAndApiTest(FakeCase):
    def test_token_is_reused_until_its_last_minute_and_credentials_are_checked(self):
        first = self.token()
        self.assertIsInstance(first["expires_in"], str)  # QQ sends "7200"
        self.assertEqual(self.token()["access_token"], first["access_token"])
        status, body, _ = http_json(self.port, "POST", "/app/getAppAccessToken",
                                    {"appId": DEFAULT_APPID, "clientSecret": "wrong"})
        self.assertEqual((status, body["code"]), (200, 100016))
        self.ctl("config", {"token_ttl": 30})
        self.ctl("expire_tokens", {})
        a, b = self.token(), self.token()
        self.assertNotEqual(a["access_token"], b["access_token"])  # 30 s left: always renewed
        self.assertEqual(self.ctl("tokens")["refused"], 1)

    def test_media_is_served_without_credentials(self):
        status, body, headers = http_json(self.port, "GET", "/_media/cat.png")
        self.assertEqual((status, headers["content-type"]), (200, "image/png"))
        self.assertTrue(body.startswith(b"\x89PNG"))
        self.assertEqual(http_json(self.port, "GET", "/_media/missing.png")[0], 404)

    def test_calls_need_a_live_token(self):
        status, body, _ = http_json(self.port, "GET", "/gateway")
        self.assertEqual((status, body["code"]), (401, 11244))
        token = self.token()["access_token"]
        status, body, _ = self.api("GET", "/gateway", token=token)
        self.assertEqual(status, 200)
        self.assertTrue(body["url"].startswith("ws://127.0.0.1:%d" % self.ws_port))
        self.ctl("expire_tokens", {})
        status, body, _ = self.api("GET", "/gateway", token=token)
        self.assertEqual((status, body["code"]), (401, 11244))

    def test_passive_replies_msg_seq_and_the_proactive_ban(self):
        # Deliver through a webhook receiver that just acknowledges.
        rx = Receiver()
        self.addCleanup(rx.stop)
        ev = self.ctl("event", {"type": "c2c", "content": "hi", "via": "webhook", "url": rx.url})
        self.assertEqual(ev["status"], 200)
        path = "/v2/users/%s/messages" % USER
        ok = self.api("POST", path, {"content": "a", "msg_type": 0, "msg_id": ev["id"],
                                     "msg_seq": 1})
        self.assertEqual(ok[0], 200, ok)
        self.assertTrue(ok[1]["id"])
        dup = self.api("POST", path, {"content": "b", "msg_type": 0, "msg_id": ev["id"],
                                      "msg_seq": 1})
        self.assertEqual((dup[0], dup[1]["code"]), (400, 40054005))
        for seq in (2, 3, 4, 5):
            self.assertEqual(self.api("POST", path, {"content": "c", "msg_type": 0,
                                                     "msg_id": ev["id"], "msg_seq": seq})[0], 200)
        sixth = self.api("POST", path, {"content": "d", "msg_type": 0, "msg_id": ev["id"],
                                        "msg_seq": 6})
        self.assertEqual((sixth[0], sixth[1]["code"]), (400, 22009))
        proactive = self.api("POST", path, {"content": "e", "msg_type": 0})
        self.assertEqual((proactive[0], proactive[1]["code"]), (400, 22009))
        other = self.api("POST", "/v2/groups/%s/messages" % GROUP,
                         {"content": "f", "msg_type": 0, "msg_id": ev["id"], "msg_seq": 1})
        self.assertEqual((other[0], other[1]["code"]), (400, 40034024))
        sent = self.ctl("sent")["sent"]
        self.assertEqual([s["ok"] for s in sent], [True, False, True, True, True, True, False,
                                                   False, False])

    def test_media_goes_through_the_files_api(self):
        rx = Receiver()
        self.addCleanup(rx.stop)
        ev = self.ctl("event", {"type": "group_at", "content": "pic?", "via": "webhook",
                                "url": rx.url})
        files = "/v2/groups/%s/files" % GROUP
        self.assertEqual(self.api("POST", files, {"file_type": 1, "srv_send_msg": False})[0], 400)
        status, up, _ = self.api("POST", files, {"file_type": 1, "url": "https://e.com/a.png",
                                                 "srv_send_msg": False})
        self.assertEqual(status, 200)
        path = "/v2/groups/%s/messages" % GROUP
        ok = self.api("POST", path, {"content": " ", "msg_type": 7, "msg_id": ev["id"],
                                     "msg_seq": 1, "media": {"file_info": up["file_info"]}})
        self.assertEqual(ok[0], 200, ok)
        wrong = self.api("POST", "/v2/users/%s/messages" % USER,
                         {"content": " ", "msg_type": 7, "media": {"file_info": up["file_info"]}})
        self.assertEqual(wrong[0], 400)


class Receiver(object):
    """A loopback webhook receiver: records each call and answers as `answer(call)` says."""

    def __init__(self, answer=None):
        self.calls = []
        answer = answer or (lambda call: (200, {"op": 12}))
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                call = {"headers": {k.lower(): v for k, v in self.headers.items()}, "raw": raw}
                outer.calls.append(call)
                status, body = answer(call)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/bots/x" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def signature_ok(call, secret=DEFAULT_SECRET):
    h = call["headers"]
    return ed.qq_verify_hex(secret, h["x-signature-timestamp"].encode() + call["raw"],
                            h.get("x-signature-ed25519", ""))


class WebhookDriverTest(FakeCase):
    def test_callbacks_are_signed_as_qq_signs_them(self):
        rx = Receiver()
        self.addCleanup(rx.stop)
        ev = self.ctl("event", {"type": "c2c", "content": "hello", "via": "webhook",
                                "url": rx.url})
        self.assertTrue(ev["delivered"])
        call = rx.calls[-1]
        self.assertTrue(signature_ok(call))
        self.assertEqual(call["headers"]["user-agent"], "QQBot-Callback")
        self.assertEqual(call["headers"]["x-bot-appid"], DEFAULT_APPID)
        payload = json.loads(call["raw"])
        self.assertEqual((payload["op"], payload["t"], payload["id"]),
                         (0, "C2C_MESSAGE_CREATE", ev["event_id"]))
        self.assertEqual(payload["d"]["author"]["user_openid"], USER)
        forged = self.ctl("event", {"type": "c2c", "content": "x", "via": "webhook",
                                    "url": rx.url, "forge": True})
        self.assertTrue(forged["delivered"])  # the receiver here accepts anything
        self.assertFalse(signature_ok(rx.calls[-1]))
        self.ctl("event", {"type": "group_at", "content": "yo", "via": "webhook", "url": rx.url})
        d = json.loads(rx.calls[-1]["raw"])["d"]
        self.assertEqual(d["content"], " yo")  # a space where the @ was
        group = self.ctl("event", {"type": "group", "content": "chatter", "via": "webhook",
                                   "url": rx.url})
        self.assertFalse(group["delivered"])
        self.assertEqual(len(rx.calls), 3)

    def test_validation_checks_the_answer(self):
        def good(call):
            d = json.loads(call["raw"])["d"]
            return 200, {"plain_token": d["plain_token"],
                         "signature": ed.qq_sign_hex(DEFAULT_SECRET, d["event_ts"] +
                                                     d["plain_token"])}
        rx = Receiver(good)
        self.addCleanup(rx.stop)
        got = self.ctl("validate", {"url": rx.url})
        self.assertTrue(got["valid"], got)
        self.assertEqual(json.loads(rx.calls[0]["raw"])["op"], 13)
        bad = Receiver(lambda call: (200, {"plain_token": "x", "signature": "00"}))
        self.addCleanup(bad.stop)
        self.assertFalse(self.ctl("validate", {"url": bad.url})["valid"])


class Client(object):
    """A gateway client whose frames are read with a deadline."""

    def __init__(self, lt, port):
        self.lt, self.frames = lt, queue.Queue()

        async def dial():
            return await websockets.connect("ws://127.0.0.1:%d/websocket" % port,
                                            ping_interval=None, close_timeout=2)
        self.ws = lt.run(dial())
        lt.loop.call_soon_threadsafe(lambda: lt.loop.create_task(self._read()))

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

    def closed_code(self, timeout=TIMEOUT):
        while True:
            try:
                if self.frames.get(timeout=timeout) is None:
                    return self.ws.close_code
            except queue.Empty:
                raise AssertionError("socket still open after %.1fs" % timeout)

    def send(self, obj):
        self.lt.run(self.ws.send(json.dumps(obj)))


class GatewayTest(FakeCase):
    def setUp(self):
        super().setUp()
        self.lt = LoopThread()
        self.lt.start()
        self.addCleanup(self.lt.stop)

    def identify(self, intents=ALL_INTENTS, token=None):
        c = Client(self.lt, self.ws_port)
        hello = c.recv()
        self.assertEqual(hello["op"], 10)
        self.assertEqual(hello["d"]["heartbeat_interval"], 41250)
        c.send({"op": 2, "d": {"token": "QQBot " + (token or self.token()["access_token"]),
                               "intents": intents, "shard": [0, 1]}})
        return c

    def test_identify_ready_heartbeat_and_events(self):
        c = self.identify()
        ready = c.recv()
        self.assertEqual((ready["op"], ready["t"]), (0, "READY"))
        self.assertEqual(ready["d"]["user"]["id"], BOT_USER_ID)
        c.send({"op": 1, "d": ready["s"]})
        self.assertEqual(c.recv()["op"], 11)
        ev = self.ctl("event", {"type": "c2c", "content": "yo"})
        self.assertTrue(ev["delivered"])
        f = c.recv()
        self.assertEqual((f["t"], f["id"], f["d"]["id"]),
                         ("C2C_MESSAGE_CREATE", ev["event_id"], ev["id"]))
        at = self.ctl("event", {"type": "at", "content": "hi"})
        f = c.recv()
        self.assertEqual(f["d"]["content"], "<@!%s> hi" % BOT_USER_ID)
        self.assertTrue(at["delivered"])
        plain = self.ctl("event", {"type": "guild_message", "content": "chatter"})
        self.assertFalse(plain["delivered"])  # GUILD_MESSAGES (1<<9) was not asked for
        forced = self.ctl("event", {"type": "guild_message", "content": "x", "force": True})
        self.assertTrue(forced["delivered"])
        self.assertEqual(c.recv()["t"], "MESSAGE_CREATE")
        self.assertEqual(self.ctl("gateway")["identifies"][0]["intents"], ALL_INTENTS)

    def test_wrong_token_closes_4004(self):
        c = self.identify(token="not-a-token")
        self.assertEqual(c.closed_code(), 4004)

    def test_resume_replays_what_was_missed_and_invalid_sessions_refuse(self):
        c = self.identify()
        ready = c.recv()
        token = self.token()["access_token"]
        self.assertEqual(self.ctl("drop", {})["connections"], 1)
        c.closed_code()
        missed = self.ctl("event", {"type": "group_at", "content": "while away"})
        self.assertFalse(missed["delivered"])
        c2 = Client(self.lt, self.ws_port)
        c2.recv()
        c2.send({"op": 6, "d": {"token": "QQBot " + token,
                                "session_id": ready["d"]["session_id"], "seq": ready["s"]}})
        replay = c2.recv()
        self.assertEqual((replay["t"], replay["d"]["id"]), ("GROUP_AT_MESSAGE_CREATE",
                                                             missed["id"]))
        self.assertEqual(c2.recv()["t"], "RESUMED")
        self.ctl("invalid_session", {})
        self.assertEqual(c2.recv(), {"op": 9, "d": False, "s": None, "t": None})
        c3 = Client(self.lt, self.ws_port)
        c3.recv()
        c3.send({"op": 6, "d": {"token": "QQBot " + token,
                                "session_id": ready["d"]["session_id"], "seq": 1}})
        self.assertEqual(c3.recv()["op"], 9)
        self.ctl("reconnect", {})
        self.assertEqual(self.ctl("gateway")["resumes"][-1]["outcome"], "invalid session")


if __name__ == "__main__":
    unittest.main()
