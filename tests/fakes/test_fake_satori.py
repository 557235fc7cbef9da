"""Self-test of fake_satori.py against the Satori protocol pages (events.html: signals, IDENTIFY,
READY, PING/PONG, resuming by sn; api.html: POST /v1/{resource}.{method}, Authorization and the
Satori-Platform / Satori-User-ID headers, status codes) and the reference SDK's choices the pages
leave open (close 4004 for a wrong token, 403 for a wrong token or unknown login). The fake runs
as a subprocess; its event socket is driven with python3-websockets.

Run: cd tests/fakes && python3 -m unittest -v test_fake_satori
"""

import json
import queue
import unittest

from fake_satori import DEFAULT_TOKEN
from fake_ws_common import LoopThread, http_json, start_fake, stop_fake, websockets

TIMEOUT = 10.0
PROC = PORT = WSPORT = LT = None
SELF = {"Authorization": "Bearer " + DEFAULT_TOKEN, "Satori-Platform": "llonebot",
        "Satori-User-ID": "10001"}


def setUpModule():
    global PROC, PORT, WSPORT, LT
    PROC, ports = start_fake("fake_satori.py", "FAKE_SATORI_PORT=")
    PORT, WSPORT = ports["FAKE_SATORI_PORT"], ports["FAKE_SATORI_WS_PORT"]
    LT = LoopThread()
    LT.start()


def tearDownModule():
    try:
        stop_fake(PROC)
    finally:
        if LT is not None:
            LT.stop()


def api(method, body=None, headers=SELF, verb="POST"):
    return http_json(PORT, verb, "/v1/" + method, body if body is not None else {}, headers)


def ctl(path, body=None):
    return http_json(PORT, "POST" if body is not None else "GET", "/_control/" + path, body)


class Client(object):
    """An events client whose signals are read with a deadline."""

    def __init__(self, path="/v1/events"):
        self.frames = queue.Queue()

        async def dial():
            return await websockets.connect("ws://127.0.0.1:%d%s" % (WSPORT, path),
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
            raise AssertionError("no signal within %.1fs" % timeout)
        if f is None:
            raise AssertionError("socket closed with %s" % self.ws.close_code)
        return f

    def send(self, obj):
        LT.run(self.ws.send(obj if isinstance(obj, str) else json.dumps(obj)))

    def closed_code(self, timeout=TIMEOUT):
        while True:
            try:
                if self.frames.get(timeout=timeout) is None:
                    return self.ws.close_code
            except queue.Empty:
                raise AssertionError("socket still open after %.1fs" % timeout)

    def close(self):
        LT.run(self.ws.close(1000))

    def identify(self, token=DEFAULT_TOKEN, sn=None):
        body = {"token": token}
        if sn is not None:
            body["sn"] = sn
        self.send({"op": 3, "body": body})
        return self.recv()


def say(content="hi", channel="c1", channel_type=0, user_id="20001"):
    return ctl("message", {"channel_id": channel, "channel_type": channel_type,
                           "user": {"id": user_id, "name": "ann"}, "content": content})[1]


class EventsTest(unittest.TestCase):
    def test_identify_gets_ready_with_the_logins(self):
        c = Client()
        ready = c.identify()
        self.assertEqual(ready["op"], 4)
        logins = ready["body"]["logins"]
        self.assertEqual([l["platform"] for l in logins], ["discord", "llonebot"])
        self.assertEqual(logins[1]["user"]["id"], "10001")
        self.assertEqual(ready["body"]["proxy_urls"], [])
        c.send({"op": 1, "body": {}})
        self.assertEqual(c.recv(), {"op": 2, "body": {}})
        c.close()

    def test_a_wrong_token_is_closed_with_4004(self):
        c = Client()
        c.send({"op": 3, "body": {"token": "wrong"}})
        self.assertEqual(c.closed_code(), 4004)
        self.assertIn({"token_ok": False, "sn": None}, ctl("events")[1]["identifies"])

    def test_malformed_signals_and_other_paths_are_refused(self):
        c = Client()
        c.send("not json")
        self.assertEqual(c.closed_code(), 4000)
        with self.assertRaises(Exception):
            Client("/v1/other")

    def test_events_reach_identified_sockets_with_rising_sn(self):
        idle = Client()  # not identified: gets nothing
        c = Client()
        c.identify()
        first = say("<at id=\"10001\"/> hello &amp; bye", channel="g1")
        second = say("dm", channel="private:20002", channel_type=1, user_id="20002")
        self.assertEqual(first["delivered"], 1)
        e1, e2 = c.recv(), c.recv()
        self.assertEqual((e1["op"], e2["op"]), (0, 0))
        body = e1["body"]
        self.assertEqual(body["sn"], first["sn"])
        self.assertEqual(e2["body"]["sn"], second["sn"])
        self.assertGreater(second["sn"], first["sn"])
        self.assertEqual(body["type"], "message-created")
        self.assertEqual(body["login"]["platform"], "llonebot")
        self.assertEqual(body["channel"], {"id": "g1", "type": 0})
        self.assertEqual(body["user"]["id"], "20001")
        self.assertEqual(body["message"]["content"], "<at id=\"10001\"/> hello &amp; bye")
        self.assertEqual(e2["body"]["channel"]["type"], 1)
        with self.assertRaises(AssertionError):
            idle.recv(timeout=0.3)
        idle.close()
        c.close()

    def test_identify_with_sn_replays_the_events_after_it(self):
        c = Client()
        c.identify()
        seen = say("one")
        c.recv()
        c.close()
        missed = say("two")
        self.assertEqual(missed["delivered"], 0)
        again = Client()
        again.identify(sn=seen["sn"])
        replay = again.recv()
        self.assertEqual(replay["body"]["sn"], missed["sn"])
        self.assertEqual(replay["body"]["message"]["content"], "two")
        again.close()

    def test_drop_ends_the_socket_without_a_close_frame(self):
        c = Client()
        c.identify()
        self.assertEqual(ctl("drop", {})[1]["connections"], 1)
        self.assertEqual(c.closed_code(), 1006)


class ApiTest(unittest.TestCase):
    def test_message_create_answers_a_list_of_messages(self):
        ctl("channel", {"id": "g9"})
        status, body, _ = api("message.create", {"channel_id": "g9", "content": "a &amp; b"})
        self.assertEqual(status, 200)
        self.assertIsInstance(body, list)
        self.assertEqual(body[0]["content"], "a &amp; b")
        self.assertTrue(body[0]["id"])
        sent = ctl("sent")[1]["sent"][-1]
        self.assertEqual((sent["method"], sent["platform"], sent["user_id"]),
                         ("message.create", "llonebot", "10001"))
        self.assertEqual(sent["message_id"], body[0]["id"])
        status, _, _ = api("message.create", {"channel_id": "nowhere", "content": "x"})
        self.assertEqual(status, 400)

    def test_user_channel_create_opens_a_direct_channel(self):
        status, body, _ = api("user.channel.create", {"user_id": "20003"})
        self.assertEqual(status, 200)
        self.assertEqual(body["type"], 1)
        status, _, _ = api("message.create", {"channel_id": body["id"], "content": "hi"})
        self.assertEqual(status, 200)

    def test_authentication_and_login_headers(self):
        ctl("channel", {"id": "g8"})
        no_auth = {k: v for k, v in SELF.items() if k != "Authorization"}
        self.assertEqual(api("message.create", {"channel_id": "g8", "content": "x"},
                             no_auth)[0], 401)
        wrong = dict(SELF, Authorization="Bearer nope")
        self.assertEqual(api("message.create", {"channel_id": "g8", "content": "x"}, wrong)[0],
                         403)
        other = dict(SELF, **{"Satori-User-ID": "1"})
        self.assertEqual(api("message.create", {"channel_id": "g8", "content": "x"}, other)[0],
                         403)
        self.assertEqual(api("login.get", {}, dict(SELF, **{"Satori-Platform": "discord",
                                                          "Satori-User-ID": "900000"}))[0], 200)

    def test_status_codes_of_the_spec(self):
        self.assertEqual(api("message.create", verb="GET")[0], 405)
        self.assertEqual(api("no.such")[0], 404)
        self.assertEqual(http_json(PORT, "POST", "/v1/message.create", b"[1", SELF)[0], 400)


if __name__ == "__main__":
    unittest.main()
