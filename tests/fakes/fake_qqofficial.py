#!/usr/bin/env python3
"""Fake QQ official bot platform (API v2 + gateway + webhook callbacks) for Switchboard tests.

Built from tencent-connect/bot-docs (develop/api-v2: dev-prepare/interface-framework/api-use.md,
event-emit.md, sign.md; server-inter/message/send-receive/send.md, rich-media.md, event.md), the
official Python SDK tencent-connect/botpy (gateway.py: opcodes, IDENTIFY / RESUME shapes) and
/work/shared/protocols/platforms.md (QQ rows and section "QQ official"). One HTTP port serves the
token host, the API and the control API; the gateway is a python3-websockets server.

Token (bots.qq.com in real life)
    POST /app/getAppAccessToken {appId, clientSecret} -> {access_token, expires_in: "7200"} (a
        string, as QQ sends it). While the current token has more than 60 s left the same token is
        returned with its remaining expires_in; in its last 60 s a new one is issued and the old
        one stays valid until it expires. Wrong appId / clientSecret -> 200 {"code": 100016,
        "message": "invalid appid or secret"} (QQ's exact answer is not documented).
API (api.sgroup.qq.com), `Authorization: QQBot <access_token>`; a missing, unknown or expired
token -> 401 {"code": 11244, "message": "token not exist or expire"}
    GET  /gateway -> {url: ws://127.0.0.1:WS/websocket}; /gateway/bot adds shards and
         session_start_limit.
    POST /v2/users/{openid}/messages, /v2/groups/{group_openid}/messages
         {content, msg_type (0 text, 2 markdown, 7 media), markdown?, media{file_info}?, msg_id?,
         event_id?, msg_seq?} -> {id, timestamp}. msg_type 0 needs a non-empty content; 7 needs
         a file_info issued for the same target. A passive reply (msg_id) must name a message
         delivered in that chat within the reply window (C2C 60 min, group 5 min) -> else 400
         {"code": 40034024, "message": "msg_id invalid or expired"}; a msg_id + msg_seq pair used
         before -> 400 {"code": 40054005, "message": "msg_seq duplicated"}; more than 5 replies to
         one msg_id -> 400 {"code": 22009, "message": "msg limit exceed"}. Without msg_id /
         event_id (proactive): refused with 400 {"code": 22009, "message": "msg limit exceed"}
         as QQ has done since 2025-04-21, unless config `proactive` is on.
    POST /v2/users/{openid}/files, /v2/groups/{group_openid}/files {file_type (1 image, 2 video,
         3 voice, 4 file), url | file_data (base64), srv_send_msg} -> {file_uuid, file_info, ttl}
         (neither url nor file_data -> 400 {"code": 40034001}).
    POST /channels/{channel_id}/messages, /dms/{guild_id}/messages {content?, image?, msg_id?}
         -> {id, channel_id, guild_id, content, timestamp, author (the bot)}; a msg_id must name
         a message delivered in that channel / DM guild (else 400 40034024); content or image
         required (400 {"code": 50006, "message": "empty message"}).
Gateway ws://127.0.0.1:WS/websocket, frames {op, d, s, t, id?}
    On open HELLO {heartbeat_interval} (default 41250 ms). op 1 -> op 11 (d recorded).
    IDENTIFY {token: "QQBot <token>", intents, shard} -> READY {version: 1, session_id, user {id,
    username, bot: true}, shard}; a wrong token -> close 4004. RESUME {token, session_id, seq}:
    unknown or invalidated session -> op 9 d false; else the dispatches after seq are replayed,
    then RESUMED. A frame that is not a JSON object with an integer op -> close 4002. Events are
    delivered only when IDENTIFY's intents include them: C2C_MESSAGE_CREATE and
    GROUP_AT_MESSAGE_CREATE 1<<25, AT_MESSAGE_CREATE 1<<30, DIRECT_MESSAGE_CREATE 1<<12,
    MESSAGE_CREATE (every guild message, private bots) 1<<9.
Media: GET /_media/<name> -> a 1x1 PNG (image/png), /_media/missing.png -> 404; no auth (QQ's
CDN); use it as an attachment URL.
Webhook driver: the fake posts callbacks as QQ does: headers X-Signature-Ed25519 (hex Ed25519 of
X-Signature-Timestamp + raw body with the key from the bot secret, qq_ed25519.py),
X-Signature-Timestamp, X-Signature-Method: Ed25519, X-Bot-Appid, User-Agent: QQBot-Callback.
Payload {id (event id), op: 0, d, s, t}; op 13 {plain_token, event_ts}.

Control API (no auth; JSON; errors {"error"} with 400/404/409)
    POST /_control/config {appid?, secret?, token_ttl?, heartbeat_interval?, proactive?}
    POST /_control/expire_tokens        every issued token stops working
    POST /_control/event {type: c2c | group_at | group | at | dm | guild_message, content,
         user_openid?, group_openid?, member_openid?, channel_id?, guild_id?, author_id?,
         username?, attachments?[{content_type, url, filename}], event_id?, via: gateway |
         webhook, url? (webhook), forge? (sign with a wrong key), unsigned?, force? (deliver
         regardless of intents)} -> {id, event_id, delivered, reason?, status?, body?, elapsed?}
         A `group` message (no @) is never delivered: QQ sends group messages only with an @.
    POST /_control/callback {url, body (object or string), forge?, unsigned?} -> {status, body}
    POST /_control/validate {url} -> {status, body, plain_token, event_ts, valid}
    POST /_control/reconnect (op 7), /_control/invalid_session (op 9 false, session invalidated),
         /_control/drop (TCP closed without a close frame), /_control/close {code?: 4009}
    GET  /_control/sent -> {sent: [{route, target, path, body, msg_id, msg_seq, msg_type,
         content, ok, status, answer}]}  (refused sends are listed with ok false)
    GET  /_control/uploads -> {uploads: [{route, target, body, file_info}]}
    GET  /_control/gateway -> {connections, connected, identifies[{intents, shard, token_ok}],
         resumes[{session_id, seq, outcome}], heartbeats[d...], closes[{code, by}]}
    GET  /_control/tokens -> {fetches, refused, issued}

Command line: python3 fake_qqofficial.py [--port 0] [--host 127.0.0.1] [--appid A] [--secret S]
prints exactly "FAKE_QQ_PORT=<http> FAKE_QQ_GATEWAY_PORT=<ws>" once listening.
"""

import argparse
import asyncio
import base64
import http.client
import json
import re
import secrets
import sys
import threading
import time
import urllib.parse

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, json_reply,
                            parse_json_body, serve_cli, websockets)
import qq_ed25519

DEFAULT_APPID = "102000001"
DEFAULT_SECRET = "qqBotSecretForSwitchboardTests01"
BOT_USER_ID = "11586990140073229091"
C2C_WINDOW, GROUP_WINDOW = 3600, 300
INTENT_GUILD_MESSAGES, INTENT_DM, INTENT_GROUP_C2C, INTENT_PUBLIC = 1 << 9, 1 << 12, 1 << 25, 1 << 30
EVENT_INTENT = {"C2C_MESSAGE_CREATE": INTENT_GROUP_C2C, "GROUP_AT_MESSAGE_CREATE": INTENT_GROUP_C2C,
                "AT_MESSAGE_CREATE": INTENT_PUBLIC, "DIRECT_MESSAGE_CREATE": INTENT_DM,
                "MESSAGE_CREATE": INTENT_GUILD_MESSAGES}
V2_MSG_RE = re.compile(r"^/v2/(users|groups)/([A-Za-z0-9_-]+)/(messages|files)$")
GUILD_MSG_RE = re.compile(r"^/(channels|dms)/(\d+)/messages$")
REPLAY_KEEP = 1000
# A 1x1 PNG, served for every /_media/ path but /_media/missing.png (404).
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


def _iso(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%S+08:00", time.localtime(t or time.time()))


def _err(status, code, message):
    return json_reply(status, {"code": code, "message": message, "err_code": code,
                               "trace_id": secrets.token_hex(8)})


class _Conn(object):
    def __init__(self, ws):
        self.ws, self.session = ws, None


class _Session(object):
    def __init__(self, sid, intents):
        self.id, self.intents, self.seq, self.events = sid, intents, 0, []
        self.conn, self.valid = None, True


class FakeQQ(object):
    def __init__(self, host="127.0.0.1", port=0, appid=DEFAULT_APPID, secret=DEFAULT_SECRET,
                 verbose=False):
        self.host, self.appid, self.secret = host, appid, secret
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.Lock()  # guards the REST state below
        self.token_ttl, self.heartbeat_interval, self.proactive = 7200, 41250, False
        self._tokens = {}  # token -> expiry (monotonic)
        self._current_token = None
        self._token_stats = {"fetches": 0, "refused": 0, "issued": 0}
        self._delivered = {}  # msg id -> {route, target, at}
        self._seq_used = {}  # msg id -> set of msg_seq
        self._files = {}  # file_info -> (route, target)
        self._sent, self._uploads = [], []
        # Gateway state, touched only on the loop thread.
        self._conns, self._sessions, self._current = [], {}, None
        self._gw = {"connections": 0, "identifies": [], "resumes": [], "heartbeats": [],
                    "closes": []}

    def start(self):
        self._lt.start()

        async def serve():
            self._ws_server = await websockets.serve(self._gateway, self.host, 0,
                                                     max_size=1 << 20, ping_interval=None)
            return self._ws_server.sockets[0].getsockname()[1]
        self.gateway_port = self._lt.run(serve())
        return self._http.start()

    @property
    def port(self):
        return self._http.server_address[1]

    def stop(self):
        self._http.stop()

        async def close():
            self._ws_server.close()
            await self._ws_server.wait_closed()
        self._lt.stop(close)

    # -- token and API ------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if path.startswith("/_control/"):
            return self._control(method, path[len("/_control/"):], body)
        if method == "POST" and path == "/app/getAppAccessToken":
            return self._issue_token(body)
        if method == "GET" and path.startswith("/_media/"):
            # QQ's media CDN (multimedia.nt.qq.com.cn): attachments' URLs, no credentials.
            if path == "/_media/missing.png":
                return Reply(404, b"", None)
            return Reply(200, PNG, "image/png")
        auth = headers.get("authorization", "")
        with self._lock:
            token = auth[len("QQBot "):] if auth.startswith("QQBot ") else None
            if token is None or self._tokens.get(token, 0) <= time.monotonic():
                return _err(401, 11244, "token not exist or expire")
            return self._api(method, path, body)

    def _issue_token(self, body):
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            return _err(400, 100001, "invalid json")
        with self._lock:
            self._token_stats["fetches"] += 1
            if not isinstance(req, dict) or req.get("appId") != self.appid or \
                    req.get("clientSecret") != self.secret:
                self._token_stats["refused"] += 1
                return json_reply(200, {"code": 100016, "message": "invalid appid or secret"})
            now = time.monotonic()
            cur = self._current_token
            left = self._tokens.get(cur, 0) - now if cur else 0
            if cur is None or left <= 60:
                cur = secrets.token_urlsafe(24)
                self._tokens[cur] = now + self.token_ttl
                self._current_token = cur
                self._token_stats["issued"] += 1
                left = self.token_ttl
            return json_reply(200, {"access_token": cur, "expires_in": str(int(left))})

    def _gateway_url(self):
        return "ws://127.0.0.1:%d/websocket" % self.gateway_port

    def _api(self, method, path, body):
        if method == "GET" and path == "/gateway":
            return json_reply(200, {"url": self._gateway_url()})
        if method == "GET" and path == "/gateway/bot":
            return json_reply(200, {"url": self._gateway_url(), "shards": 1,
                                    "session_start_limit": {"total": 1000, "remaining": 1000,
                                                            "reset_after": 86400000,
                                                            "max_concurrency": 1}})
        if method != "POST":
            return _err(404, 404, "not found")
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            return _err(400, 40034001, "invalid json")
        if not isinstance(req, dict):
            return _err(400, 40034001, "body must be an object")
        m = V2_MSG_RE.match(path)
        if m:
            route = "c2c" if m.group(1) == "users" else "group"
            if m.group(3) == "files":
                return self._upload(route, m.group(2), req)
            return self._send_v2(route, m.group(2), path, req)
        m = GUILD_MSG_RE.match(path)
        if m:
            return self._send_guild("channel" if m.group(1) == "channels" else "dm", m.group(2),
                                    path, req)
        return _err(404, 404, "not found")

    def _record(self, route, target, path, req, status, answer):
        self._sent.append({"route": route, "target": target, "path": path, "body": req,
                           "msg_id": req.get("msg_id"), "msg_seq": req.get("msg_seq"),
                           "msg_type": req.get("msg_type"), "content": req.get("content"),
                           "ok": status == 200, "status": status, "answer": answer})

    def _refuse(self, route, target, path, req, code, message):
        self._record(route, target, path, req, 400, {"code": code, "message": message})
        return _err(400, code, message)

    def _check_anchor(self, route, target, req):
        """None when the passive-reply fields are acceptable, else (code, message)."""
        msg_id = req.get("msg_id")
        if not msg_id and not req.get("event_id"):
            if route in ("c2c", "group") and not self.proactive:
                return 22009, "msg limit exceed"
            return None
        if not msg_id:
            return None
        got = self._delivered.get(msg_id)
        window = C2C_WINDOW if route == "c2c" else GROUP_WINDOW
        if got is None or got["route"] != route or got["target"] != target or \
                time.time() - got["at"] > window:
            return 40034024, "msg_id invalid or expired"
        if route in ("c2c", "group"):
            seq = req.get("msg_seq", 1)
            used = self._seq_used.setdefault(msg_id, set())
            if seq in used:
                return 40054005, "msg_seq duplicated"
            if len(used) >= 5:
                return 22009, "msg limit exceed"
            used.add(seq)
        return None

    def _send_v2(self, route, target, path, req):
        mtype = req.get("msg_type", 0)
        if mtype == 0 and not (isinstance(req.get("content"), str) and req["content"].strip()):
            return self._refuse(route, target, path, req, 50006, "empty message")
        if mtype == 7:
            info = (req.get("media") or {}).get("file_info") if isinstance(
                req.get("media"), dict) else None
            if self._files.get(info) != (route, target):
                return self._refuse(route, target, path, req, 40034010, "invalid file_info")
        if mtype not in (0, 2, 3, 4, 7):
            return self._refuse(route, target, path, req, 40034001, "invalid msg_type")
        problem = self._check_anchor(route, target, req)
        if problem:
            return self._refuse(route, target, path, req, *problem)
        answer = {"id": "ROBOT1.0_" + secrets.token_urlsafe(12), "timestamp": _iso()}
        self._record(route, target, path, req, 200, answer)
        return json_reply(200, answer)

    def _upload(self, route, target, req):
        if not req.get("url") and not req.get("file_data"):
            return _err(400, 40034001, "url or file_data required")
        if req.get("file_type") not in (1, 2, 3, 4):
            return _err(400, 40034001, "invalid file_type")
        info = secrets.token_urlsafe(32)
        self._files[info] = (route, target)
        self._uploads.append({"route": route, "target": target, "body": req, "file_info": info})
        return json_reply(200, {"file_uuid": secrets.token_hex(8), "file_info": info,
                                "ttl": 3600})

    def _send_guild(self, route, target, path, req):
        if not req.get("content") and not req.get("image") and not req.get("markdown"):
            return self._refuse(route, target, path, req, 50006, "empty message")
        problem = self._check_anchor(route, target, req)
        if problem:
            return self._refuse(route, target, path, req, *problem)
        answer = {"id": secrets.token_hex(16), "channel_id": target if route == "channel" else "",
                  "guild_id": target if route == "dm" else "", "content": req.get("content", ""),
                  "timestamp": _iso(), "author": {"id": BOT_USER_ID, "username": "fakebot",
                                                  "bot": True}}
        self._record(route, target, path, req, 200, answer)
        return json_reply(200, answer)

    # -- gateway ------------------------------------------------------------------------------

    async def _gateway(self, ws, path=None):
        conn = _Conn(ws)
        self._conns.append(conn)
        self._gw["connections"] += 1
        try:
            await self._send(conn, 10, {"heartbeat_interval": self.heartbeat_interval})
            while True:
                frame = await ws.recv()
                if not await self._on_frame(conn, frame):
                    break
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._conns.remove(conn)
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
            if not any(c.get("conn") is conn for c in self._gw["closes"]):
                self._gw["closes"].append({"conn": conn, "code": ws.close_code, "by": "client"})

    async def _close(self, conn, code, reason):
        self._gw["closes"].append({"conn": conn, "code": code, "by": "server"})
        await conn.ws.close(code, reason)
        return False

    async def _send(self, conn, op, d, t=None, s=None):
        await conn.ws.send(json.dumps({"op": op, "d": d, "s": s, "t": t}))

    def _token_ok(self, token):
        with self._lock:
            if not isinstance(token, str) or not token.startswith("QQBot "):
                return False
            return self._tokens.get(token[len("QQBot "):], 0) > time.monotonic()

    async def _on_frame(self, conn, frame):
        try:
            msg = json.loads(frame)
        except (ValueError, UnicodeDecodeError):
            msg = None
        if not isinstance(msg, dict) or type(msg.get("op")) is not int:
            return await self._close(conn, 4002, "invalid payload")
        op, d = msg["op"], msg.get("d")
        if op == 1:
            self._gw["heartbeats"].append(d)
            await self._send(conn, 11, None)
            return True
        if op in (2, 6) and isinstance(d, dict):
            return await (self._identify(conn, d) if op == 2 else self._resume(conn, d))
        return await self._close(conn, 4001, "invalid opcode")

    async def _identify(self, conn, d):
        ok = self._token_ok(d.get("token"))
        intents = d.get("intents") if type(d.get("intents")) is int else 0
        self._gw["identifies"].append({"intents": intents, "shard": d.get("shard"),
                                       "token_ok": ok})
        if not ok:
            return await self._close(conn, 4004, "invalid token")
        s = _Session(secrets.token_hex(16), intents)
        self._sessions[s.id] = s
        self._current, s.conn, conn.session = s, conn, s
        await self._dispatch(s, "READY", {"version": 1, "session_id": s.id,
                                          "user": {"id": BOT_USER_ID, "username": "fakebot",
                                                   "bot": True},
                                          "shard": d.get("shard") or [0, 1]}, keep=False)
        return True

    async def _resume(self, conn, d):
        s = self._sessions.get(d.get("session_id"))
        rec = {"session_id": d.get("session_id"), "seq": d.get("seq"), "outcome": None}
        self._gw["resumes"].append(rec)
        if not self._token_ok(d.get("token")):
            rec["outcome"] = "bad token"
            return await self._close(conn, 4004, "invalid token")
        if s is None or not s.valid:
            rec["outcome"] = "invalid session"
            await self._send(conn, 9, False)
            return True
        seq = d.get("seq") if type(d.get("seq")) is int else 0
        if seq > s.seq:
            rec["outcome"] = "invalid seq"
            return await self._close(conn, 4007, "invalid seq")
        rec["outcome"] = "resumed"
        old = s.conn
        s.conn, conn.session, self._current = conn, s, s
        if old is not None:
            old.session = None
        for ev in [e for e in s.events if e["s"] > seq]:
            await conn.ws.send(json.dumps(ev))
        await self._dispatch(s, "RESUMED", "", keep=False)
        return True

    async def _dispatch(self, s, t, d, keep=True, event_id=None):
        s.seq += 1
        ev = {"op": 0, "d": d, "s": s.seq, "t": t}
        if event_id:
            ev["id"] = event_id
        if keep:
            s.events = (s.events + [ev])[-REPLAY_KEEP:]
        if s.conn is None:
            return False
        try:
            await s.conn.ws.send(json.dumps(ev))
            return True
        except websockets.exceptions.ConnectionClosed:
            return False

    # -- events -------------------------------------------------------------------------------

    def _build_event(self, req):
        kind = req.get("type")
        content = req.get("content", "")
        if not isinstance(content, str):
            raise BadRequest("content must be a string")
        now = time.time()
        atts = [dict({"content_type": "image/png", "filename": "a.png", "height": 1, "width": 1,
                      "size": 1}, **a) for a in req.get("attachments") or []]
        if kind == "c2c":
            msg_id, t = "ROBOT1.0_" + secrets.token_urlsafe(12), "C2C_MESSAGE_CREATE"
            user = req.get("user_openid") or "E4F4AEA33253A2797FB897C50B81D7ED"
            d = {"id": msg_id, "content": content, "timestamp": _iso(now), "attachments": atts,
                 "author": {"id": user, "user_openid": user, "union_openid": user}}
            where = ("c2c", user)
        elif kind in ("group_at", "group"):
            msg_id, t = "ROBOT1.0_" + secrets.token_urlsafe(12), "GROUP_AT_MESSAGE_CREATE"
            group = req.get("group_openid") or "C9F778FE6ADF9D1D1DBE395BF744A33A"
            member = req.get("member_openid") or "C9F778FE6ADF9D1D1DBE395BF744A33B"
            # The @ itself is not in the content; a space stands where it was.
            d = {"id": msg_id, "content": " " + content, "timestamp": _iso(now),
                 "group_id": group, "group_openid": group, "attachments": atts,
                 "author": {"id": member, "member_openid": member, "union_openid": member}}
            where = ("group", group)
        elif kind in ("at", "guild_message", "dm"):
            msg_id = secrets.token_hex(20)
            channel = str(req.get("channel_id") or "100010")
            guild = str(req.get("guild_id") or "200020")
            author = {"id": str(req.get("author_id") or "5566"),
                      "username": req.get("username") or "ann", "bot": False,
                      "avatar": "https://thirdqq.qlogo.cn/x"}
            d = {"id": msg_id, "channel_id": channel, "guild_id": guild, "author": author,
                 "member": {"joined_at": _iso(now), "roles": ["1"]}, "timestamp": _iso(now),
                 "seq": 1, "seq_in_channel": "1", "attachments": atts}
            if kind == "at":
                t = "AT_MESSAGE_CREATE"
                d["content"] = "<@!%s> %s" % (BOT_USER_ID, content)
                d["mentions"] = [{"id": BOT_USER_ID, "username": "fakebot", "bot": True}]
                where = ("channel", channel)
            elif kind == "dm":
                t = "DIRECT_MESSAGE_CREATE"
                d["content"] = content
                d["direct_message"] = True
                d["src_guild_id"] = str(req.get("src_guild_id") or "200020")
                where = ("dm", guild)
            else:
                t = "MESSAGE_CREATE"
                d["content"] = content
                where = ("channel", channel)
        else:
            raise BadRequest("type must be c2c, group_at, group, at, dm or guild_message")
        event_id = req.get("event_id") or "%s:%s" % (t, secrets.token_hex(12))
        return kind, t, d, event_id, where

    def _event(self, req):
        kind, t, d, event_id, where = self._build_event(req)
        out = {"id": d["id"], "event_id": event_id, "t": t, "d": d}
        if kind == "group":
            out.update(delivered=False,
                       reason="QQ delivers group messages only when the bot is @-mentioned")
            return out
        with self._lock:
            self._delivered[d["id"]] = {"route": where[0], "target": where[1], "at": time.time()}
        if req.get("via", "gateway") == "webhook":
            payload = {"op": 0, "id": event_id, "d": d, "t": t, "s": 0}
            r = self._post_callback(req.get("url"), json.dumps(payload, ensure_ascii=False),
                                    req.get("forge"), req.get("unsigned"))
            out.update(r, delivered=r["status"] == 200)
            return out
        out.update(self._lt.run(self._inject(t, d, event_id, bool(req.get("force")))))
        return out

    async def _inject(self, t, d, event_id, force):
        s = self._current
        if s is None or not s.valid:
            raise BadRequest("no gateway session to dispatch to", 409)
        if not force and not s.intents & EVENT_INTENT.get(t, 0):
            return {"delivered": False, "reason": "the session's intents do not include " + t}
        return {"delivered": await self._dispatch(s, t, d, event_id=event_id), "s": s.seq}

    def _post_callback(self, url, raw, forge=False, unsigned=False):
        if not url:
            raise BadRequest("url is required")
        parts = urllib.parse.urlsplit(url)
        data = raw.encode("utf-8") if isinstance(raw, str) else raw
        ts = str(int(time.time()))
        headers = {"Content-Type": "application/json", "User-Agent": "QQBot-Callback",
                   "X-Bot-Appid": self.appid, "X-Signature-Method": "Ed25519",
                   "X-Signature-Timestamp": ts}
        if not unsigned:
            key = "not-the-bot-secret-at-all" if forge else self.secret
            headers["X-Signature-Ed25519"] = qq_ed25519.qq_sign_hex(key, ts.encode() + data)
        started = time.monotonic()
        c = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=10)
        try:
            c.request("POST", parts.path or "/", body=data, headers=headers)
            r = c.getresponse()
            body = r.read()
            status = r.status
        finally:
            c.close()
        try:
            parsed = json.loads(body.decode("utf-8"))
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        return {"status": status, "body": parsed, "elapsed": time.monotonic() - started}

    def _validate(self, url):
        token = secrets.token_urlsafe(15).replace("-", "a").replace("_", "b")
        event_ts = str(int(time.time()))
        r = self._post_callback(url, json.dumps({"op": 13, "d": {"plain_token": token,
                                                                 "event_ts": event_ts}}),
                                unsigned=True)
        body = r["body"] if isinstance(r["body"], dict) else {}
        valid = body.get("plain_token") == token and qq_ed25519.qq_verify_hex(
            self.secret, event_ts + token, str(body.get("signature", "")))
        return dict(r, plain_token=token, event_ts=event_ts, valid=bool(valid))

    # -- control ------------------------------------------------------------------------------

    def _control(self, method, name, body):
        if method == "GET":
            with self._lock:
                if name == "sent":
                    return json_reply(200, {"sent": list(self._sent)})
                if name == "uploads":
                    return json_reply(200, {"uploads": list(self._uploads)})
                if name == "tokens":
                    return json_reply(200, dict(self._token_stats))
            if name == "gateway":
                return json_reply(200, self._lt.run(self._gateway_state()))
            return json_reply(404, {"error": "no such control"})
        if method != "POST":
            return json_reply(404, {"error": "no such control"})
        req = parse_json_body(body)
        if name == "config":
            with self._lock:
                for key in ("appid", "secret"):
                    if key in req:
                        setattr(self, key, str(req[key]))
                if "token_ttl" in req:
                    self.token_ttl = int(req["token_ttl"])
                if "heartbeat_interval" in req:
                    self.heartbeat_interval = int(req["heartbeat_interval"])
                if "proactive" in req:
                    self.proactive = bool(req["proactive"])
            return json_reply(200, {"ok": True})
        if name == "expire_tokens":
            with self._lock:
                self._tokens = {k: 0 for k in self._tokens}
                self._current_token = None
            return json_reply(200, {"ok": True})
        if name == "event":
            return json_reply(200, self._event(req))
        if name == "callback":
            raw = req.get("body")
            raw = raw if isinstance(raw, str) else json.dumps(raw)
            return json_reply(200, self._post_callback(req.get("url"), raw, req.get("forge"),
                                                       req.get("unsigned")))
        if name == "validate":
            return json_reply(200, self._validate(req.get("url")))
        if name in ("reconnect", "invalid_session", "drop", "close"):
            return json_reply(200, {"connections": self._lt.run(self._to_sockets(name, req))})
        return json_reply(404, {"error": "no such control"})

    async def _to_sockets(self, name, req):
        reached = 0
        for c in [c for c in list(self._conns) if c.ws.open]:
            try:
                if name == "reconnect":
                    await self._send(c, 7, None)
                elif name == "invalid_session":
                    if c.session is not None:
                        c.session.valid = False
                    await self._send(c, 9, False)
                elif name == "drop":
                    self._gw["closes"].append({"conn": c, "code": None, "by": "server-drop"})
                    c.ws.transport.abort()
                else:
                    await self._close(c, int(req.get("code", 4009)), str(req.get("reason", "")))
                reached += 1
            except websockets.exceptions.ConnectionClosed:
                pass
        return reached

    async def _gateway_state(self):
        g = {k: list(v) if isinstance(v, list) else v for k, v in self._gw.items()}
        g["closes"] = [{"code": c["code"], "by": c["by"]} for c in g["closes"]]
        g["connected"] = len(self._conns)
        g["identified"] = sum(1 for c in self._conns if c.session is not None)
        return g


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake QQ official bot platform for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--appid", default=DEFAULT_APPID)
    ap.add_argument("--secret", default=DEFAULT_SECRET)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeQQ(args.host, args.port, args.appid, args.secret, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_QQ_PORT=%d FAKE_QQ_GATEWAY_PORT=%d" % (
        f.port, f.gateway_port))


if __name__ == "__main__":
    sys.exit(main())
