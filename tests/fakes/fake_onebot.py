#!/usr/bin/env python3
"""Fake OneBot v11 implementation (think NapCat) for Switchboard end-to-end tests.

Built from /work/shared/protocols/platforms.md "Part 3 - OneBot v11 in detail" (section numbers
3.x below) and the standard botuniverse/onebot-11 (communication/ws-reverse.md, event/message.md,
event/meta.md, api/public.md, message/segment.md, message/string.md). WebSockets come from
python3-websockets 10.4 (see fake_ws_common.py).

Reverse WebSocket client (3.1, 3.6)
    The fake is the WebSocket CLIENT: it dials the URL given to /_control/connect (our server's
    reverse-WS endpoint, e.g. ws://127.0.0.1:PORT/ws) with headers X-Self-ID: <self_id>,
    X-Client-Role: Universal (configurable, null omits it), User-Agent: OneBot/11 and
    Authorization: Bearer <access_token> (omitted when access_token is null or absent; "" sends
    "Bearer " as NapCat does). The handshake status is recorded (101, 401, 403, ...). After a drop
    or a refused handshake it dials again every reconnect_ms (default 3000, NapCat
    reconnectInterval) until /_control/disconnect stops it.
Frames (3.2, 3.3)
    On open: the lifecycle meta event {time, self_id, post_type:"meta_event",
    meta_event_type:"lifecycle", sub_type:"connect"}; then every heartbeat_ms (0 = never) a
    heartbeat {..., meta_event_type:"heartbeat", status:{online:true, good:true}, interval}.
    Message events: {time, self_id, post_type:"message", message_type, sub_type (friend|normal),
    message_id, user_id, message, raw_message (CQ string), font:0, sender, message_format};
    group events add group_id and anonymous:null. `message` is sent as given: a segment array
    stays an array, a CQ string stays a string (3.4: receivers must accept both).
Actions (3.5)
    Every action frame {action, params, echo} is answered with {status, retcode, data, echo}
    (echo verbatim, null when the frame had none):
      send_private_msg {user_id, message}, send_group_msg {group_id, message},
      send_msg {message_type?, user_id?, group_id?, message} -> {message_id} (increasing);
        missing/invalid target or message -> failed/400 (NapCat's parameter check; the standard
        leaves every failure but 1400/1404 to the implementation).
      get_msg {message_id} -> {time, message_type, message_id, real_id, sender, message} for
        messages it injected or was asked to send; unknown -> failed/200 (NapCat: an error
        raised by the action handler).
      send_group_forward_msg {group_id, messages}, send_private_forward_msg {user_id, messages}
        (go-cqhttp's extension, also in NapCat/Lagrange; the standard has no forward send):
        `messages` is an array of node segments, each {type:"node", data:{id}} (a stored message)
        or {type:"node", data:{content, and the sender as name/uin (go-cqhttp) or
        nickname/user_id (standard message/segment.md)}}; content a segment array or CQ string.
        -> {message_id, forward_id}; the stored message is one forward segment {id: forward_id}
        (what a receiver sees) and keeps the parsed nodes ({user_id, nickname, content:
        segments}) under "forward_nodes" for tests (GET /_control/messages).
        A bad target, an empty or malformed node list -> failed/400. `forward: false` in
        /_control/connect makes both actions unknown (failed/1404), as in a standard
        implementation.
      delete_msg -> ok/null; get_login_info -> {user_id: self_id, nickname};
      get_status -> {online:true, good:true}; get_version_info -> {app_name, app_version,
        protocol_version:"v11"}.
      unknown action -> failed/1404; a frame that is not a JSON object with a string `action`
        -> failed/1400 (NapCat: JSON parse failure).
    /_control/fail makes the next `times` calls of an action fail with a retcode, or go
    unanswered (`silent`), to exercise the server's deadline.

Control API (HTTP, no auth; JSON; errors {"error"} with 400/404/409)
    POST /_control/connect    {url, self_id, access_token?, role?: "Universal", heartbeat_ms?:
                              15000, reconnect_ms?: 3000, nickname?, forward?: true}
                              -> {ok:true}; starts (or
                              restarts, with fresh counters) the connection of that self_id.
    POST /_control/disconnect {self_id, mode?: "close"|"abrupt", code?: 1000, reason?,
                              reconnect?: false} -> {ok:true}; "abrupt" drops the TCP connection
                              without a close frame; reconnect:true lets it dial again.
    POST /_control/message    {self_id, message_type: private|group, user_id, group_id?, message:
                              segment array | CQ string, sender?, sub_type?}
                              -> {message_id, event}; 409 when not connected.
    POST /_control/message_sent {self_id, message_id?} echoes an own message (post_type
                              "message_sent", NapCat reportSelfMessage) the fake sent on an
                              action, or {self_id, message_type, user_id?, group_id?, message}.
    POST /_control/raw        {self_id, text} -> sends the text as one frame, unchanged.
    POST /_control/fail       {self_id, action ("*" = any), retcode?: 100, times?: 1,
                              silent?: false, message?} -> {ok:true}
    GET  /_control/actions?self_id=  -> {actions: [{action, params, echo, raw?, response}]}
                              (response null when not answered)
    GET  /_control/events?self_id=   -> {events: [every event frame sent]}
    GET  /_control/messages?self_id= -> {messages: [every stored message, oldest first]}
    GET  /_control/state?self_id=    -> {connected, connects, attempts, last_handshake_status,
                              last_close_code, last_close_reason, last_error, heartbeats}

Command line: python3 fake_onebot.py [--port 0] [--host 127.0.0.1] [--verbose] prints exactly
"FAKE_ONEBOT_PORT=<control port>" once listening, serves until SIGTERM/SIGINT (exit code 0).
In process: fake = FakeOneBot(); port = fake.start(); ... fake.stop().
"""

import argparse
import asyncio
import json
import re
import sys
import time

from fake_ws_common import (BadRequest, ControlServer, LoopThread, dumps, json_reply,
                            parse_json_body, serve_cli, websockets)

MAX_FRAME = 4 * 1024 * 1024
CQ_RE = re.compile(r"\[CQ:([A-Za-z0-9_.-]+)((?:,[^\]]*)?)\]")


def cq_escape(s, in_param=False):
    s = s.replace("&", "&amp;").replace("[", "&#91;").replace("]", "&#93;")
    return s.replace(",", "&#44;") if in_param else s


def cq_unescape(s):
    return (s.replace("&#44;", ",").replace("&#91;", "[").replace("&#93;", "]")
            .replace("&amp;", "&"))


def segments_to_cq(segments):
    out = []
    for seg in segments:
        data = seg.get("data") or {}
        if seg.get("type") == "text":
            out.append(cq_escape(str(data.get("text", ""))))
        else:
            params = "".join(",%s=%s" % (k, cq_escape(str(v), True)) for k, v in data.items())
            out.append("[CQ:%s%s]" % (seg.get("type"), params))
    return "".join(out)


def cq_to_segments(s):
    segs, pos = [], 0
    for m in CQ_RE.finditer(s):
        if m.start() > pos:
            segs.append({"type": "text", "data": {"text": cq_unescape(s[pos:m.start()])}})
        data = {}
        for item in m.group(2).split(",")[1:]:
            k, _, v = item.partition("=")
            data[k] = cq_unescape(v)
        segs.append({"type": m.group(1), "data": data})
        pos = m.end()
    if pos < len(s):
        segs.append({"type": "text", "data": {"text": cq_unescape(s[pos:])}})
    return segs


def to_segments(message, auto_escape=False):
    """A message as the standard allows it (array, one segment, string) -> segment list."""
    if isinstance(message, str):
        return [{"type": "text", "data": {"text": message}}] if auto_escape else \
            cq_to_segments(message)
    if isinstance(message, dict):
        message = [message]
    if not isinstance(message, list) or not all(
            isinstance(s, dict) and isinstance(s.get("type"), str) for s in message):
        raise ValueError("message must be a string or an array of segments")
    return message


def _int(obj, key, required=True):
    v = obj.get(key)
    if v is None and not required:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        raise BadRequest("%s must be an integer" % key)


class _Bot(object):
    """One account's connection; touched only on the loop thread."""

    def __init__(self, cfg):
        self.self_id = cfg["self_id"]
        self.url = cfg["url"]
        self.token = cfg.get("access_token")
        self.role = cfg.get("role", "Universal")
        self.heartbeat_ms = int(cfg.get("heartbeat_ms", 15000))
        self.reconnect_ms = int(cfg.get("reconnect_ms", 3000))
        self.nickname = cfg.get("nickname") or "FakeBot"
        self.forward = bool(cfg.get("forward", True))
        self.ws = None
        self.task = None
        self.stopping = False
        self.wake = asyncio.Event()
        self.connects = self.attempts = self.heartbeats = 0
        self.last_handshake_status = self.last_close_code = None
        self.last_close_reason = self.last_error = None
        self.actions, self.events, self.fail_rules = [], [], []
        self.messages = {}
        self.next_id = 1000

    def new_id(self):
        self.next_id += 1
        return self.next_id


class FakeOneBot(object):
    def __init__(self, host="127.0.0.1", port=0, verbose=False):
        self.verbose = verbose
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._bots = {}

    def start(self):
        self._lt.start()
        return self._http.start()

    @property
    def port(self):
        return self._http.server_address[1]

    def stop(self):
        self._http.stop()
        self._lt.stop(self._shutdown)

    async def _shutdown(self):
        for bot in list(self._bots.values()):
            await self._stop_bot(bot, abrupt=True)

    # -- connection ---------------------------------------------------------------------------

    def _headers(self, bot):
        h = [("X-Self-ID", str(bot.self_id)), ("User-Agent", "OneBot/11")]
        if bot.role is not None:
            h.append(("X-Client-Role", bot.role))
        if bot.token is not None:
            h.append(("Authorization", "Bearer " + bot.token))
        return h

    async def _run(self, bot):
        while not bot.stopping:
            bot.attempts += 1
            try:
                ws = await websockets.connect(bot.url, extra_headers=self._headers(bot),
                                              open_timeout=5, close_timeout=2,
                                              ping_interval=None, max_size=MAX_FRAME)
            except websockets.exceptions.InvalidStatusCode as e:
                bot.last_handshake_status, bot.last_error = e.status_code, str(e)
            except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException) as e:
                bot.last_handshake_status, bot.last_error = None, "%s: %s" % (type(e).__name__, e)
            else:
                if bot.stopping:
                    ws.transport.abort()
                    break
                await self._session(bot, ws)
            if bot.stopping:
                break
            bot.wake.clear()
            try:
                await asyncio.wait_for(bot.wake.wait(), bot.reconnect_ms / 1000.0)
            except asyncio.TimeoutError:
                pass

    async def _session(self, bot, ws):
        bot.ws = ws
        bot.last_handshake_status = 101
        bot.connects += 1
        hb = asyncio.ensure_future(self._heartbeats(bot, ws))
        try:
            await self._send_event(bot, {"post_type": "meta_event",
                                         "meta_event_type": "lifecycle", "sub_type": "connect"})
            while True:
                frame = await ws.recv()
                await self._on_frame(bot, ws, frame)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            hb.cancel()
            bot.ws = None
            bot.last_close_code, bot.last_close_reason = ws.close_code, ws.close_reason

    async def _heartbeats(self, bot, ws):
        if bot.heartbeat_ms <= 0:
            return
        try:
            while True:
                await asyncio.sleep(bot.heartbeat_ms / 1000.0)
                await self._send_event(bot, {
                    "post_type": "meta_event", "meta_event_type": "heartbeat",
                    "status": {"online": True, "good": True}, "interval": bot.heartbeat_ms})
                bot.heartbeats += 1
        except websockets.exceptions.ConnectionClosed:
            pass

    async def _send_event(self, bot, event):
        ev = {"time": int(time.time()), "self_id": bot.self_id}
        ev.update(event)
        if bot.ws is None:
            raise BadRequest("not connected", 409)
        await bot.ws.send(dumps(ev))
        bot.events.append(ev)
        return ev

    async def _stop_bot(self, bot, abrupt, code=1000, reason=""):
        bot.stopping = True
        bot.wake.set()
        await self._drop(bot, abrupt, code, reason)
        if bot.task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(bot.task), 5)
            except asyncio.TimeoutError:
                bot.task.cancel()

    async def _drop(self, bot, abrupt, code=1000, reason=""):
        ws = bot.ws
        if ws is None:
            return
        if abrupt:
            ws.transport.abort()
        else:
            await ws.close(code, reason)

    # -- actions ------------------------------------------------------------------------------

    async def _on_frame(self, bot, ws, frame):
        rec = {"action": None, "params": None, "echo": None, "response": None}
        try:
            req = json.loads(frame)
        except (ValueError, UnicodeDecodeError):
            req = None
        if not isinstance(req, dict) or not isinstance(req.get("action"), str):
            rec["raw"] = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
            if isinstance(req, dict):
                rec["echo"] = req.get("echo")
            resp = self._result(1400, None, "request is not a JSON object with an action")
        else:
            rec.update(action=req["action"], params=req.get("params"), echo=req.get("echo"))
            resp = self._fail_rule(bot, req["action"])
            if resp is None:
                params = req.get("params") if isinstance(req.get("params"), dict) else {}
                resp = self._call(bot, req["action"], params)
        bot.actions.append(rec)
        if resp == "silent":
            return
        resp["echo"] = rec["echo"]
        rec["response"] = resp
        await ws.send(dumps(resp))

    @staticmethod
    def _result(retcode, data=None, message=""):
        return {"status": "ok" if retcode == 0 else "failed", "retcode": retcode, "data": data,
                "message": message, "wording": message}

    def _fail_rule(self, bot, action):
        for rule in bot.fail_rules:
            if rule["times"] > 0 and rule["action"] in ("*", action):
                rule["times"] -= 1
                if rule["silent"]:
                    return "silent"
                return self._result(rule["retcode"], None, rule["message"])
        return None

    def _store(self, bot, message_type, user_id, group_id, segments, sender):
        mid = bot.new_id()
        bot.messages[mid] = {"time": int(time.time()), "message_type": message_type,
                             "message_id": mid, "real_id": mid, "user_id": user_id,
                             "group_id": group_id, "sender": sender, "message": segments,
                             "raw_message": segments_to_cq(segments)}
        return mid

    def _call(self, bot, action, params):
        if action in ("send_private_msg", "send_group_msg", "send_msg"):
            mtype = {"send_private_msg": "private", "send_group_msg": "group"}.get(action) or \
                params.get("message_type") or ("group" if "group_id" in params else "private")
            key = "group_id" if mtype == "group" else "user_id"
            try:
                target = int(params.get(key))
                segs = to_segments(params.get("message"), bool(params.get("auto_escape")))
            except (TypeError, ValueError) as e:
                return self._result(400, None, "bad %s or message: %s" % (key, e))
            if not segs:
                return self._result(400, None, "message is empty")
            sender = {"user_id": bot.self_id, "nickname": bot.nickname}
            mid = self._store(bot, mtype, bot.self_id if mtype == "group" else target,
                              target if mtype == "group" else None, segs, sender)
            bot.messages[mid]["target_id"] = target
            return self._result(0, {"message_id": mid})
        if action in ("send_group_forward_msg", "send_private_forward_msg") and bot.forward:
            return self._forward(bot, action, params)
        if action == "get_msg":
            try:
                m = bot.messages.get(int(params.get("message_id")))
            except (TypeError, ValueError):
                m = None
            if m is None:
                return self._result(200, None, "message not found")
            return self._result(0, {k: m[k] for k in ("time", "message_type", "message_id",
                                                      "real_id", "sender", "message")})
        if action == "delete_msg":
            return self._result(0, None)
        if action == "get_login_info":
            return self._result(0, {"user_id": bot.self_id, "nickname": bot.nickname})
        if action == "get_status":
            return self._result(0, {"online": True, "good": True})
        if action == "get_version_info":
            return self._result(0, {"app_name": "fake_onebot", "app_version": "1.0",
                                    "protocol_version": "v11"})
        return self._result(1404, None, "unknown action " + action)

    def _forward(self, bot, action, params):
        mtype = "group" if action == "send_group_forward_msg" else "private"
        key = "group_id" if mtype == "group" else "user_id"
        try:
            target = int(params.get(key))
        except (TypeError, ValueError):
            return self._result(400, None, "bad " + key)
        nodes = params.get("messages")
        if not isinstance(nodes, list) or not nodes:
            return self._result(400, None, "messages must be a non-empty node array")
        parsed = []
        for node in nodes:
            data = node.get("data") if isinstance(node, dict) else None
            if not isinstance(node, dict) or node.get("type") != "node" or \
                    not isinstance(data, dict):
                return self._result(400, None, "every message must be a node segment")
            if "content" not in data:
                try:
                    ref = bot.messages.get(int(data.get("id")))
                except (TypeError, ValueError):
                    ref = None
                if ref is None:
                    return self._result(400, None, "a node needs content or a known id")
                parsed.append({"user_id": ref["sender"].get("user_id"),
                               "nickname": ref["sender"].get("nickname"),
                               "content": ref["message"]})
                continue
            try:
                content = to_segments(data.get("content"))
                uin = data.get("uin", data.get("user_id"))
                uin = int(uin) if uin is not None else None
            except (TypeError, ValueError) as e:
                return self._result(400, None, "bad node: %s" % e)
            name = data.get("name", data.get("nickname"))
            if not content or uin is None or not isinstance(name, str):
                return self._result(400, None, "a custom node needs content, uin and name")
            parsed.append({"user_id": uin, "nickname": name, "content": content})
        sender = {"user_id": bot.self_id, "nickname": bot.nickname}
        mid = self._store(bot, mtype, bot.self_id if mtype == "group" else target,
                          target if mtype == "group" else None, [], sender)
        forward_id = "fwd%d" % mid
        bot.messages[mid].update(message=[{"type": "forward", "data": {"id": forward_id}}],
                                 raw_message="[CQ:forward,id=%s]" % forward_id,
                                 target_id=target, forward_nodes=parsed)
        return self._result(0, {"message_id": mid, "forward_id": forward_id})

    # -- control API --------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        name = path[len("/_control/"):] if path.startswith("/_control/") else None
        if method == "GET" and name in ("actions", "events", "state", "messages"):
            return json_reply(200, self._lt.run(self._get(name, query)))
        posts = {"connect", "disconnect", "message", "message_sent", "raw", "fail"}
        if method == "POST" and name in posts:
            req = parse_json_body(body)
            return json_reply(200, self._lt.run(getattr(self, "_ctl_" + name)(req), 15))
        return json_reply(404 if name not in posts else 405, {"error": "no such control"})

    def _bot(self, obj):
        sid = _int(obj, "self_id")
        bot = self._bots.get(sid)
        if bot is None:
            raise BadRequest("unknown self_id %d" % sid, 404)
        return bot

    async def _get(self, name, query):
        bot = self._bot(query)
        if name == "actions":
            return {"actions": bot.actions}
        if name == "events":
            return {"events": bot.events}
        if name == "messages":
            return {"messages": [bot.messages[k] for k in sorted(bot.messages)]}
        return {"connected": bot.ws is not None, "connects": bot.connects,
                "attempts": bot.attempts, "last_handshake_status": bot.last_handshake_status,
                "last_close_code": bot.last_close_code,
                "last_close_reason": bot.last_close_reason, "last_error": bot.last_error,
                "heartbeats": bot.heartbeats}

    async def _ctl_connect(self, req):
        if not isinstance(req.get("url"), str):
            raise BadRequest("url is required")
        req["self_id"] = _int(req, "self_id")
        old = self._bots.get(req["self_id"])
        if old is not None:
            await self._stop_bot(old, abrupt=True)
        bot = _Bot(req)
        self._bots[bot.self_id] = bot
        bot.task = asyncio.ensure_future(self._run(bot))
        return {"ok": True}

    async def _ctl_disconnect(self, req):
        bot = self._bot(req)
        abrupt = req.get("mode", "close") == "abrupt"
        code, reason = int(req.get("code", 1000)), str(req.get("reason", ""))
        if req.get("reconnect"):
            await self._drop(bot, abrupt, code, reason)
        else:
            await self._stop_bot(bot, abrupt, code, reason)
        return {"ok": True}

    async def _ctl_message(self, req):
        bot = self._bot(req)
        mtype = req.get("message_type")
        if mtype not in ("private", "group"):
            raise BadRequest("message_type must be private or group")
        user_id = _int(req, "user_id")
        group_id = _int(req, "group_id") if mtype == "group" else None
        try:
            segs = to_segments(req.get("message"))
        except ValueError as e:
            raise BadRequest(str(e))
        sender = {"user_id": user_id, "nickname": "User%d" % user_id, "sex": "unknown", "age": 0}
        if mtype == "group":
            sender.update(card="", role="member", area="", level="", title="")
        sender.update(req.get("sender") or {})
        mid = self._store(bot, mtype, user_id, group_id, segs, sender)
        ev = {"post_type": "message", "message_type": mtype,
              "sub_type": req.get("sub_type") or ("friend" if mtype == "private" else "normal"),
              "message_id": mid, "user_id": user_id, "message": req.get("message"),
              "raw_message": segments_to_cq(segs), "font": 0, "sender": sender,
              "message_format": "string" if isinstance(req.get("message"), str) else "array"}
        if mtype == "group":
            ev.update(group_id=group_id, anonymous=None)
        ev = await self._send_event(bot, ev)
        return {"message_id": mid, "event": ev}

    async def _ctl_message_sent(self, req):
        bot = self._bot(req)
        if req.get("message_id") is not None:
            m = bot.messages.get(_int(req, "message_id"))
            if m is None:
                raise BadRequest("unknown message_id", 404)
            mtype, segs, mid = m["message_type"], m["message"], m["message_id"]
            target = m.get("target_id")
        else:
            mtype = req.get("message_type")
            if mtype not in ("private", "group"):
                raise BadRequest("message_type must be private or group")
            target = _int(req, "group_id" if mtype == "group" else "user_id")
            try:
                segs = to_segments(req.get("message"))
            except ValueError as e:
                raise BadRequest(str(e))
            mid = self._store(bot, mtype, bot.self_id, target if mtype == "group" else None,
                              segs, {"user_id": bot.self_id, "nickname": bot.nickname})
        ev = {"post_type": "message_sent", "message_type": mtype,
              "sub_type": "friend" if mtype == "private" else "normal", "message_id": mid,
              "user_id": bot.self_id, "message": segs, "raw_message": segments_to_cq(segs),
              "font": 0, "sender": {"user_id": bot.self_id, "nickname": bot.nickname},
              "message_format": "array"}
        if mtype == "group":
            ev["group_id"] = target
        else:
            ev["target_id"] = target
        ev = await self._send_event(bot, ev)
        return {"message_id": mid, "event": ev}

    async def _ctl_raw(self, req):
        bot = self._bot(req)
        if not isinstance(req.get("text"), str):
            raise BadRequest("text is required")
        if bot.ws is None:
            raise BadRequest("not connected", 409)
        await bot.ws.send(req["text"])
        return {"ok": True}

    async def _ctl_fail(self, req):
        bot = self._bot(req)
        if not isinstance(req.get("action"), str):
            raise BadRequest("action is required")
        bot.fail_rules.append({"action": req["action"], "retcode": int(req.get("retcode", 100)),
                               "times": int(req.get("times", 1)),
                               "silent": bool(req.get("silent")),
                               "message": str(req.get("message", "injected failure"))})
        return {"ok": True}


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake OneBot v11 implementation (reverse WS client)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeOneBot(args.host, args.port, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_ONEBOT_PORT=%d" % f.port)


if __name__ == "__main__":
    sys.exit(main())
