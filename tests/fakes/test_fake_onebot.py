"""Self-test of fake_onebot.py, run as a subprocess against a tiny reverse-WS server built here
with python3-websockets (it checks the upgrade headers as aiocqhttp does: 401/403/400).

Run: cd tests/fakes && python3 -m unittest -v test_fake_onebot
"""

import http
import itertools
import json
import queue
import time
import unittest

from fake_ws_common import (LoopThread, http_json, start_fake, stop_fake, wait_until,
                            websockets)

TIMEOUT = 10.0
TOKEN = "s3cret"
PROC = PORT = None
_ids = itertools.count(20001)


class ReverseServer(object):
    """Our side of reverse WebSocket: records connections and frames per X-Self-ID."""

    def __init__(self):
        self.lt = LoopThread()
        self.conns = {}  # self_id -> list of {"headers", "ws", "frames": Queue, "close_code"}
        self.rejected = []

    def start(self):
        self.lt.start()

        async def go():
            self.server = await websockets.serve(self._handler, "127.0.0.1", 0,
                                                 process_request=self._check)
            return self.server.sockets[0].getsockname()[1]
        self.port = self.lt.run(go())
        self.url = "ws://127.0.0.1:%d/ws" % self.port

    def stop(self):
        async def close():
            self.server.close()
            await self.server.wait_closed()
        self.lt.stop(close)

    async def _check(self, path, headers):
        auth = headers.get("Authorization")
        status = None
        if auth is None or not auth.startswith("Bearer "):
            status = http.HTTPStatus.UNAUTHORIZED
        elif auth[len("Bearer "):] != TOKEN:
            status = http.HTTPStatus.FORBIDDEN
        elif headers.get("X-Client-Role") is None:
            status = http.HTTPStatus.BAD_REQUEST
        if status is not None:
            self.rejected.append((headers.get("X-Self-ID"), int(status)))
            return status, [], b""
        return None

    async def _handler(self, ws, path=None):
        c = {"headers": dict(ws.request_headers), "ws": ws, "frames": queue.Queue(),
             "close_code": None}
        self.conns.setdefault(int(ws.request_headers["X-Self-ID"]), []).append(c)
        try:
            async for frame in ws:
                c["frames"].put(json.loads(frame))
        except websockets.exceptions.ConnectionClosed:
            pass
        c["close_code"] = ws.close_code

    def conn(self, self_id, n=1):
        wait_until(lambda: len(self.conns.get(self_id, [])) >= n, TIMEOUT, what="connection")
        return self.conns[self_id][n - 1]

    def send(self, c, obj):
        self.lt.run(c["ws"].send(obj if isinstance(obj, str) else json.dumps(obj)))

    def call(self, c, action, params=None, echo=None):
        self.send(c, {"action": action, "params": params or {}, "echo": echo})
        return next_frame(c, lambda f: "post_type" not in f)

    def close(self, c, abrupt=False):
        if abrupt:
            async def abort():
                c["ws"].transport.abort()
            self.lt.run(abort())
        else:
            self.lt.run(c["ws"].close(1000))


def next_frame(c, pred=lambda f: True, timeout=TIMEOUT):
    try:
        while True:
            f = c["frames"].get(timeout=timeout)
            if pred(f):
                return f
    except queue.Empty:
        raise AssertionError("no matching frame within %.1fs" % timeout)


SRV = None


def setUpModule():
    global PROC, PORT, SRV
    PROC, ports = start_fake("fake_onebot.py", "FAKE_ONEBOT_PORT=")
    PORT = ports["FAKE_ONEBOT_PORT"]
    SRV = ReverseServer()
    SRV.start()


def tearDownModule():
    try:
        stop_fake(PROC)
    finally:
        if SRV is not None:
            SRV.stop()


def ctl(path, body=None):
    return http_json(PORT, "POST" if body is not None else "GET", "/_control/" + path, body)


def state(self_id):
    return ctl("state?self_id=%d" % self_id)[1]


def connect(token=TOKEN, **kw):
    sid = next(_ids)
    body = {"url": SRV.url, "self_id": sid, "access_token": token, "heartbeat_ms": 0,
            "reconnect_ms": 50}
    body.update(kw)
    st, js, _ = ctl("connect", body)
    assert st == 200, js
    return sid


class OneBotTest(unittest.TestCase):
    def test_handshake_lifecycle_and_heartbeats(self):
        sid = connect(heartbeat_ms=100)
        c = SRV.conn(sid)
        h = {k.lower(): v for k, v in c["headers"].items()}
        self.assertEqual(h["x-self-id"], str(sid))
        self.assertEqual(h["x-client-role"], "Universal")
        self.assertEqual(h["authorization"], "Bearer " + TOKEN)
        self.assertEqual(h["user-agent"], "OneBot/11")
        life = next_frame(c)
        self.assertEqual((life["post_type"], life["meta_event_type"], life["sub_type"]),
                         ("meta_event", "lifecycle", "connect"))
        self.assertEqual(life["self_id"], sid)
        self.assertIsInstance(life["time"], int)
        for _ in range(2):
            hb = next_frame(c)
            self.assertEqual(hb["meta_event_type"], "heartbeat")
            self.assertEqual(hb["interval"], 100)
            self.assertTrue(hb["status"]["online"])
        s = state(sid)
        self.assertTrue(s["connected"])
        self.assertEqual((s["connects"], s["last_handshake_status"]), (1, 101))
        self.assertGreaterEqual(s["heartbeats"], 2)
        ctl("disconnect", {"self_id": sid})

    def test_refused_handshakes_are_retried(self):
        for token, role, status in ((None, "Universal", 401), ("wrong", "Universal", 403),
                                    (TOKEN, None, 400)):
            sid = connect(token=token, role=role)
            wait_until(lambda: state(sid)["attempts"] >= 3, TIMEOUT, what="retries")
            s = state(sid)
            self.assertEqual(s["last_handshake_status"], status, s)
            self.assertFalse(s["connected"])
            self.assertEqual(s["connects"], 0)
            self.assertNotIn(sid, SRV.conns)
            ctl("disconnect", {"self_id": sid})

    def test_actions(self):
        sid = connect()
        c = SRV.conn(sid)
        next_frame(c)
        r1 = SRV.call(c, "send_private_msg", {"user_id": 30001, "message": "hi &#91;x&#93;"},
                      {"seq": 1})
        self.assertEqual((r1["status"], r1["retcode"], r1["echo"]), ("ok", 0, {"seq": 1}))
        r2 = SRV.call(c, "send_group_msg",
                      {"group_id": 40001, "message": [{"type": "text", "data": {"text": "a"}}]},
                      "e2")
        self.assertEqual(r2["echo"], "e2")
        self.assertGreater(r2["data"]["message_id"], r1["data"]["message_id"])
        r3 = SRV.call(c, "send_msg", {"group_id": 40001, "message": "b"}, 3)
        self.assertGreater(r3["data"]["message_id"], r2["data"]["message_id"])
        got = SRV.call(c, "get_msg", {"message_id": r1["data"]["message_id"]}, 4)
        self.assertEqual(got["data"]["message"], [{"type": "text", "data": {"text": "hi [x]"}}])
        self.assertEqual(got["data"]["message_type"], "private")
        self.assertEqual(SRV.call(c, "get_msg", {"message_id": 1}, 5)["retcode"], 200)
        li = SRV.call(c, "get_login_info", None, 6)
        self.assertEqual(li["data"]["user_id"], sid)
        self.assertIsInstance(li["data"]["nickname"], str)
        bad = SRV.call(c, "send_private_msg", {"message": "no target"}, 7)
        self.assertEqual((bad["status"], bad["retcode"]), ("failed", 400))
        unk = SRV.call(c, "no_such_action", {}, 8)
        self.assertEqual((unk["status"], unk["retcode"], unk["echo"]), ("failed", 1404, 8))
        SRV.send(c, "{not json")
        nj = next_frame(c)
        self.assertEqual((nj["retcode"], nj["echo"]), (1400, None))
        acts = ctl("actions?self_id=%d" % sid)[1]["actions"]
        self.assertEqual([a["action"] for a in acts],
                         ["send_private_msg", "send_group_msg", "send_msg", "get_msg", "get_msg",
                          "get_login_info", "send_private_msg", "no_such_action", None])
        self.assertEqual(acts[0]["echo"], {"seq": 1})
        self.assertEqual(acts[0]["response"]["data"], r1["data"])
        self.assertEqual(acts[-1]["raw"], "{not json")
        ctl("disconnect", {"self_id": sid})

    def test_forward_messages(self):
        sid = connect()
        c = SRV.conn(sid)
        next_frame(c)
        stored = SRV.call(c, "send_private_msg", {"user_id": 30001, "message": "earlier"}, 1)
        nodes = [
            # go-cqhttp's custom node (name/uin), content as segments
            {"type": "node", "data": {"name": "Bot", "uin": "10001",
                                      "content": [{"type": "text", "data": {"text": "part 1"}}]}},
            # the standard's custom node (nickname/user_id), content as a CQ string
            {"type": "node", "data": {"nickname": "Someone", "user_id": 10002,
                                      "content": "part &#91;2&#93;"}},
            # a reference to a stored message
            {"type": "node", "data": {"id": stored["data"]["message_id"]}},
        ]
        r = SRV.call(c, "send_group_forward_msg", {"group_id": 40001, "messages": nodes}, 2)
        self.assertEqual((r["status"], r["retcode"]), ("ok", 0), r)
        self.assertTrue(r["data"]["forward_id"])
        p = SRV.call(c, "send_private_forward_msg", {"user_id": 30001, "messages": nodes[:1]}, 3)
        self.assertEqual(p["retcode"], 0, p)
        msgs = ctl("messages?self_id=%d" % sid)[1]["messages"]
        group = [m for m in msgs if m["message_id"] == r["data"]["message_id"]][0]
        self.assertEqual(group["message_type"], "group")
        self.assertEqual(group["target_id"], 40001)
        self.assertEqual(group["message"],
                         [{"type": "forward", "data": {"id": r["data"]["forward_id"]}}])
        self.assertEqual([(n["user_id"], n["nickname"]) for n in group["forward_nodes"]],
                         [(10001, "Bot"), (10002, "Someone"), (sid, "FakeBot")])
        self.assertEqual(group["forward_nodes"][1]["content"],
                         [{"type": "text", "data": {"text": "part [2]"}}])
        self.assertEqual(group["forward_nodes"][2]["content"],
                         [{"type": "text", "data": {"text": "earlier"}}])
        for bad in ([], [{"type": "text", "data": {"text": "x"}}],
                    [{"type": "node", "data": {"content": "no sender"}}],
                    [{"type": "node", "data": {"id": 999999}}]):
            b = SRV.call(c, "send_group_forward_msg", {"group_id": 40001, "messages": bad}, 4)
            self.assertEqual((b["status"], b["retcode"]), ("failed", 400), bad)
        nt = SRV.call(c, "send_group_forward_msg", {"messages": nodes}, 5)
        self.assertEqual(nt["retcode"], 400)
        ctl("disconnect", {"self_id": sid})
        # A standard implementation has no forward send.
        plain = connect(forward=False)
        c2 = SRV.conn(plain)
        next_frame(c2)
        u = SRV.call(c2, "send_group_forward_msg", {"group_id": 40001, "messages": nodes}, 6)
        self.assertEqual((u["status"], u["retcode"]), ("failed", 1404))
        ctl("disconnect", {"self_id": plain})

    def test_fail_and_silent(self):
        sid = connect()
        c = SRV.conn(sid)
        next_frame(c)
        ctl("fail", {"self_id": sid, "action": "send_msg", "retcode": 1200, "times": 1})
        r = SRV.call(c, "send_msg", {"user_id": 1, "message": "x"}, 1)
        self.assertEqual((r["status"], r["retcode"], r["echo"]), ("failed", 1200, 1))
        self.assertEqual(SRV.call(c, "send_msg", {"user_id": 1, "message": "x"}, 2)["retcode"], 0)
        ctl("fail", {"self_id": sid, "action": "*", "silent": True})
        SRV.send(c, {"action": "get_status", "params": {}, "echo": 3})
        with self.assertRaises(AssertionError):
            next_frame(c, timeout=0.3)
        self.assertEqual(SRV.call(c, "get_status", {}, 4)["echo"], 4)
        acts = ctl("actions?self_id=%d" % sid)[1]["actions"]
        self.assertIsNone(acts[2]["response"])
        self.assertEqual(ctl("fail", {"self_id": sid})[0], 400)
        ctl("disconnect", {"self_id": sid})

    def test_message_events(self):
        sid = connect()
        c = SRV.conn(sid)
        next_frame(c)
        segs = [{"type": "text", "data": {"text": "a[1],&"}},
                {"type": "image", "data": {"file": "x.png", "url": "http://h/x,y"}}]
        st, js, _ = ctl("message", {"self_id": sid, "message_type": "private", "user_id": 30001,
                                    "message": segs})
        self.assertEqual(st, 200, js)
        ev = next_frame(c)
        self.assertEqual((ev["post_type"], ev["message_type"], ev["sub_type"]),
                         ("message", "private", "friend"))
        self.assertEqual(ev["message"], segs)
        self.assertEqual(ev["raw_message"],
                         "a&#91;1&#93;,&amp;[CQ:image,file=x.png,url=http://h/x&#44;y]")
        self.assertEqual((ev["user_id"], ev["self_id"], ev["font"]), (30001, sid, 0))
        self.assertEqual(ev["sender"]["user_id"], 30001)
        self.assertEqual(ev["message_id"], js["message_id"])
        cq = "[CQ:at,qq=%d] hello &#91;" % sid
        ctl("message", {"self_id": sid, "message_type": "group", "user_id": 30002,
                        "group_id": 40001, "message": cq, "sender": {"nickname": "Bob"}})
        ev = next_frame(c)
        self.assertEqual((ev["message_type"], ev["sub_type"], ev["group_id"]),
                         ("group", "normal", 40001))
        self.assertEqual((ev["message"], ev["raw_message"]), (cq, cq))
        self.assertIsNone(ev["anonymous"])
        self.assertEqual((ev["sender"]["nickname"], ev["sender"]["role"]), ("Bob", "member"))
        got = SRV.call(c, "get_msg", {"message_id": ev["message_id"]}, 1)
        self.assertEqual(got["data"]["message"][0], {"type": "at", "data": {"qq": str(sid)}})
        self.assertEqual(got["data"]["message"][1]["data"]["text"], " hello [")
        sent = SRV.call(c, "send_group_msg", {"group_id": 40001, "message": "pong"}, 2)
        ctl("message_sent", {"self_id": sid, "message_id": sent["data"]["message_id"]})
        ev = next_frame(c)
        self.assertEqual((ev["post_type"], ev["user_id"], ev["group_id"], ev["message_id"]),
                         ("message_sent", sid, 40001, sent["data"]["message_id"]))
        ctl("message_sent", {"self_id": sid, "message_type": "private", "user_id": 30001,
                             "message": "own"})
        ev = next_frame(c)
        self.assertEqual((ev["post_type"], ev["target_id"], ev["raw_message"]),
                         ("message_sent", 30001, "own"))
        self.assertEqual(len(ctl("events?self_id=%d" % sid)[1]["events"]), 5)
        ctl("raw", {"self_id": sid, "text": "[1,2]"})
        self.assertEqual(next_frame(c), [1, 2])
        self.assertEqual(ctl("message", {"self_id": sid, "message_type": "channel",
                                         "user_id": 1, "message": "x"})[0], 400)
        self.assertEqual(ctl("message", {"self_id": sid, "message_type": "private",
                                         "user_id": 1, "message": 5})[0], 400)
        ctl("disconnect", {"self_id": sid})

    def test_reconnects_after_drops(self):
        sid = connect()
        c1 = SRV.conn(sid, 1)
        SRV.close(c1)
        c2 = SRV.conn(sid, 2)
        self.assertEqual(next_frame(c2)["sub_type"], "connect")
        wait_until(lambda: state(sid)["connects"] == 2, TIMEOUT, what="2 connects")
        self.assertEqual(state(sid)["last_close_code"], 1000)
        SRV.close(c2, abrupt=True)
        SRV.conn(sid, 3)
        wait_until(lambda: state(sid)["last_close_code"] == 1006, TIMEOUT, what="1006")
        ctl("disconnect", {"self_id": sid, "mode": "abrupt", "reconnect": True})
        c4 = SRV.conn(sid, 4)
        self.assertEqual(SRV.conns[sid][2]["close_code"], 1006)
        ctl("disconnect", {"self_id": sid, "code": 4000, "reason": "bye"})
        wait_until(lambda: c4["close_code"] is not None, TIMEOUT, what="close seen")
        self.assertEqual(c4["close_code"], 4000)
        s = state(sid)
        self.assertEqual((s["connected"], s["connects"]), (False, 4))
        st, js, _ = ctl("message", {"self_id": sid, "message_type": "private", "user_id": 1,
                                    "message": "x"})
        self.assertEqual(st, 409, js)

    def test_unreachable_server_is_retried(self):
        sid = next(_ids)
        ctl("connect", {"url": "ws://127.0.0.1:1/ws", "self_id": sid, "reconnect_ms": 20})
        wait_until(lambda: state(sid)["attempts"] >= 2, TIMEOUT, what="retries")
        s = state(sid)
        self.assertIsNone(s["last_handshake_status"])
        self.assertIn("ConnectionRefused", s["last_error"])
        ctl("disconnect", {"self_id": sid})
        attempts = state(sid)["attempts"]
        time.sleep(0.2)  # ten reconnect intervals: absence of a dial cannot be awaited
        self.assertEqual(state(sid)["attempts"], attempts)

    def test_control_errors(self):
        self.assertEqual(ctl("state?self_id=1")[0], 404)
        self.assertEqual(ctl("connect", {"self_id": 5})[0], 400)
        self.assertEqual(http_json(PORT, "POST", "/_control/connect", b"{x")[0], 400)
        self.assertEqual(ctl("nothing")[0], 404)


if __name__ == "__main__":
    unittest.main()
