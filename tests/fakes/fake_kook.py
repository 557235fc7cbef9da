#!/usr/bin/env python3
"""Fake KOOK (REST API v3 + the WebSocket gateway) for Switchboard end-to-end tests.

Built from KOOK's developer docs (kaiheila/api-docs, docs/zh-cn: websocket.md, http/gateway.md,
http/user.md, http/message.md, http/direct-message.md, http/asset.md, rate-limit.md,
reference.md, event/event-introduction.md, event/message.md, kmarkdown.md) and platforms.md 4.7.
The gateway runs on python3-websockets 10.4 (see fake_ws_common.py); REST and control share one
HTTP port.

REST, base http://127.0.0.1:PORT/api/v3, answers {code, message, data} (code 0 = success)
    Every call needs `Authorization: Bot <token>`, else HTTP 401 {"code":401,"message":
    "你的用户凭证不正确","data":[]} (the docs give no body for this; the shape is the standard one).
    Answers carry X-Rate-Limit-Limit/-Remaining/-Reset/-Bucket (rate-limit.md).
    GET  /gateway/index?compress=0|1 (default 1) -> data {url: ws://127.0.0.1:WSPORT/gateway?
         compress=N&token=<a gateway token>}: as KOOK's, the URL carries a credential.
    GET  /user/me -> data: the bot user {id, username, identify_num, online, os, status, avatar,
         nickname, bot: true, ...}
    POST /message/create {type? (default 9), target_id, content, quote?, nonce?, temp_target_id?}
         -> data {msg_id, msg_timestamp, nonce}. target_id must be a known channel (made by
         /_control/channel or by an injected GROUP message) else code 40000; content required,
         at most 8000 characters; type 2/3/4 content must be an asset this bot uploaded, else
         code 40000 "找不到资源" (message.md: resources must be created by the bot).
    POST /direct-message/create {type? (default 1), target_id | chat_code, content, quote?,
         nonce?} -> data {msg_id, msg_timestamp, nonce}; neither target_id nor chat_code ->
         code 40000. Same content rules.
    POST /asset/create multipart/form-data, part `file` -> data {url: http://127.0.0.1:PORT/
         assets/<id>.<ext>}; GET /assets/<name> serves the bytes back. No `file` part -> 40000.
    GET  /files/cat.png (no auth): a 1x1 PNG, an image "somewhere on the web" for URL images.
    429 injection (/_control/ratelimit): HTTP 429 {code: 429, message, data: []} with
         X-Rate-Limit-Limit, X-Rate-Limit-Remaining: 0, X-Rate-Limit-Reset: <s>,
         X-Rate-Limit-Bucket and, when global, X-Rate-Limit-Global.
Gateway, ws://127.0.0.1:WSPORT/gateway?compress=N&token=T[&resume=1&sn=N&session_id=ID],
frames {s, d, sn?}; with compress=1 every server frame is zlib-deflated binary.
    On open: without token HELLO {code 40100}; a wrong token {code 40101}; config hello_code
    (40102/40103/...) forces that code; after a non-zero HELLO the socket is closed. resume=1
    with a known session and sn <= its last -> HELLO {code 0, session_id} (the same), the
    events after sn again, then RESUME ACK (s=6 {session_id}); an unknown or expired session ->
    RECONNECT {code 40107}, an sn beyond the session's last -> RECONNECT {code 40108}, then
    close. Otherwise HELLO {code 0, session_id: new} and a new session whose events number from
    sn 1. Client signals: PING (s=2 {sn}) -> PONG (s=3) unless config answer_pings is false;
    a PING whose sn is behind the session's last makes the fake resend the events after it
    (websocket.md, signal 0 note 4); RESUME (s=4 {sn}) -> the events after sn, then s=6. Other
    signals are recorded. Events go to the session's current connection; a session keeps them
    for replay even when no socket is open.

Control API (no auth; JSON; errors {"error"} with 400/404/409)
    POST /_control/channel  {id?, guild_id?, name?} -> channel
    POST /_control/message  {channel_type: GROUP|PERSON, target_id? (GROUP: channel id),
                            author_id, content, type? (9), author?{username, nickname, bot},
                            mention? (default: the (met)id(met) ids in content), quote?,
                            hold?: false} -> {sn, msg_id, delivered, event}. With hold the
                            event gets its sn but is not sent (send it later with resend: the
                            way to deliver events out of order). 409 when no session exists.
    POST /_control/resend   {sn} -> sends the stored event with that sn again (a duplicate, or
                            a held one late)
    POST /_control/reconnect {code?: 40108, err?} -> RECONNECT to every socket; the session is
                            forgotten (a later resume of it is refused)
    POST /_control/drop     -> TCP closed without a close frame
    POST /_control/expire   -> the current session expires silently (a later resume of it gets
                            RECONNECT 40107)
    POST /_control/ratelimit {method?: "*", path?: "" (prefix after /api/v3), times?: 1,
                            reset?: 1, global?: false}
    POST /_control/config   {answer_pings?, hello_code?, force_compress? (zlib frames even on
                            compress=0 connections opened afterwards)}
    GET  /_control/sent     -> {sent: [{kind: channel|direct, target_id, chat_code, type,
                            content, quote, nonce, msg_id}]}
    GET  /_control/assets   -> {assets: [{url, filename, content_type, size}]}
    GET  /_control/calls    -> {calls: [{method, path, auth_ok}]} (REST calls, control excluded)
    GET  /_control/gateway  -> {connections, connected, queries (token replaced by token_ok),
                            hellos[{code, session_id, resume}], pings[sn], pongs, resumes[{
                            session_id, sn, outcome}], resume_signals[sn], reconnects,
                            closes[{code, by}], other_signals[], session_sn}

Command line: python3 fake_kook.py [--port 0] [--host 127.0.0.1] [--token T] [--verbose]
prints exactly "FAKE_KOOK_PORT=<http> FAKE_KOOK_GATEWAY_PORT=<ws>" once listening.
In process: fake = FakeKook(token=...); fake.start(); fake.port, fake.gateway_port; fake.stop().
"""

import argparse
import asyncio
import email.parser
import email.policy
import json
import re
import secrets
import sys
import threading
import time
import urllib.parse
import uuid
import zlib

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, json_reply,
                            parse_json_body, serve_cli, websockets)

DEFAULT_TOKEN = "1/MTAwMDA=/fakeKookBotToken+abc=="
BOT_ID = "3861577071"
MAX_CONTENT = 8000
REPLAY_KEEP = 1000
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201e2215dbc0000000049454e44ae426082")
MET_RE = re.compile(r"\(met\)([A-Za-z0-9-]+)\(met\)")


def _ok(data, headers=None):
    return json_reply(200, {"code": 0, "message": "操作成功", "data": data}, headers)


def _fail(code, message, status=200, headers=None):
    return json_reply(status, {"code": code, "message": message, "data": []}, headers)


def _now_ms():
    return int(time.time() * 1000)


class _Conn(object):
    def __init__(self, ws, query):
        self.ws, self.query = ws, query
        self.session = None
        self.compress = query.get("compress", "1") != "0"


class _Session(object):
    def __init__(self, sid):
        self.id, self.sn, self.events, self.conn, self.valid = sid, 0, {}, None, True


class FakeKook(object):
    def __init__(self, host="127.0.0.1", port=0, token=DEFAULT_TOKEN, verbose=False):
        self.host, self.token = host, token
        self.gateway_token = secrets.token_urlsafe(16)
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.Lock()  # guards REST state below
        self.bot = {"id": BOT_ID, "username": "fakebot", "identify_num": "0001", "online": True,
                    "os": "Websocket", "status": 0, "avatar": "", "vip_avatar": "", "banner": "",
                    "nickname": "fakebot", "roles": [], "is_vip": False, "bot": True,
                    "mobile_verified": False}
        self._channels = {}  # id -> {id, guild_id, name}
        self._sent, self._assets, self._calls, self._limits = [], {}, [], []
        self.answer_pings, self.hello_code, self.force_compress = True, None, False
        # Gateway state, touched only on the loop thread.
        self._conns, self._sessions, self._current = [], {}, None
        self._gw = {"connections": 0, "queries": [], "hellos": [], "pings": [], "pongs": 0,
                    "resumes": [], "resume_signals": [], "reconnects": 0, "closes": [],
                    "other_signals": []}

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

    # -- REST ---------------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if path.startswith("/_control/"):
            return self._control(method, path[len("/_control/"):], query, body)
        if method == "GET" and path == "/files/cat.png":
            return Reply(200, PNG_1X1, "image/png")
        if method == "GET" and path.startswith("/assets/"):
            with self._lock:
                asset = self._assets.get(path[len("/assets/"):])
            if asset is None:
                return _fail(404, "not found", 404)
            return Reply(200, asset["bytes"], asset["content_type"])
        if not path.startswith("/api/v3/"):
            return _fail(404, "not found", 404)
        path = path[len("/api/v3"):].rstrip("/")
        auth_ok = headers.get("authorization") == "Bot " + self.token
        with self._lock:
            self._calls.append({"method": method, "path": path, "auth_ok": auth_ok})
            if not auth_ok:
                return _fail(401, "你的用户凭证不正确", 401)
            limited = self._rate_limited(method, path)
            if limited is not None:
                return limited
            r = self._rest(method, path, query, headers, body)
        r.headers += [("X-Rate-Limit-Limit", "120"), ("X-Rate-Limit-Remaining", "119"),
                      ("X-Rate-Limit-Reset", "0"), ("X-Rate-Limit-Bucket", path.strip("/"))]
        return r

    def _rate_limited(self, method, path):
        for rule in self._limits:
            if rule["times"] > 0 and rule["method"] in ("*", method) and \
                    path.startswith(rule["path"]):
                rule["times"] -= 1
                hdrs = [("X-Rate-Limit-Limit", "5"), ("X-Rate-Limit-Remaining", "0"),
                        ("X-Rate-Limit-Reset", str(rule["reset"])),
                        ("X-Rate-Limit-Bucket", path.strip("/"))]
                if rule["global"]:
                    hdrs.append(("X-Rate-Limit-Global", "true"))
                return _fail(429, "请求过于频繁", 429, hdrs)
        return None

    def _gateway_url(self, compress):
        return "ws://127.0.0.1:%d/gateway?compress=%d&token=%s" % (
            self.gateway_port, compress, self.gateway_token)

    def _rest(self, method, path, query, headers, body):
        if method == "GET" and path == "/gateway/index":
            compress = 0 if query.get("compress") == "0" else 1
            return _ok({"url": self._gateway_url(compress)})
        if method == "GET" and path == "/user/me":
            return _ok(self.bot)
        if method == "POST" and path == "/asset/create":
            return self._asset(headers, body)
        if method == "POST" and path in ("/message/create", "/direct-message/create"):
            try:
                req = json.loads(body.decode("utf-8") if body else "{}")
            except (ValueError, UnicodeDecodeError):
                return _fail(40000, "请求参数错误: body is not JSON")
            if not isinstance(req, dict):
                return _fail(40000, "请求参数错误: body is not an object")
            return self._create(path == "/direct-message/create", req)
        return _fail(404, "not found", 404)

    def _asset(self, headers, body):
        ctype = headers.get("content-type", "")
        if not ctype.startswith("multipart/form-data"):
            return _fail(40000, "Content-Type must be form-data")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + body)
        if not msg.is_multipart():
            return _fail(40000, "malformed multipart body")
        for part in msg.iter_parts():
            if part.get_param("name", header="content-disposition") != "file":
                continue
            data = part.get_payload(decode=True) or b""
            if not data:
                return _fail(40000, "file is empty")
            filename = part.get_filename() or "file"
            ext = filename.rsplit(".", 1)[-1] if "." in filename else "bin"
            name = "%s.%s" % (uuid.uuid4().hex, re.sub(r"[^A-Za-z0-9]", "", ext) or "bin")
            url = "http://127.0.0.1:%d/assets/%s" % (self.port, name)
            self._assets[name] = {"url": url, "filename": filename,
                                  "content_type": part.get_content_type(), "bytes": data}
            return _ok({"url": url})
        return _fail(40000, "file is required")

    def _create(self, direct, req):
        mtype = req.get("type", 1 if direct else 9)
        content = req.get("content")
        if type(mtype) is not int or mtype not in (1, 2, 3, 4, 8, 9, 10):
            return _fail(40000, "请求参数错误: type")
        if not isinstance(content, str) or not content:
            return _fail(40000, "请求参数错误: content is required")
        if len(content) > MAX_CONTENT:
            return _fail(40000, "请求参数错误: content is longer than %d" % MAX_CONTENT)
        if mtype in (2, 3, 4) and not any(a["url"] == content for a in self._assets.values()):
            return _fail(40000, "找不到资源")
        target, chat_code = req.get("target_id"), req.get("chat_code")
        if direct:
            if not target and not chat_code:
                return _fail(40000, "请求参数错误: target_id or chat_code is required")
        elif not isinstance(target, str) or target not in self._channels:
            return _fail(40000, "频道不存在")
        msg_id = str(uuid.uuid4())
        nonce = req.get("nonce", "")
        self._sent.append({"kind": "direct" if direct else "channel", "target_id": target,
                           "chat_code": chat_code, "type": mtype, "content": content,
                           "quote": req.get("quote"), "nonce": nonce, "msg_id": msg_id})
        return _ok({"msg_id": msg_id, "msg_timestamp": _now_ms(), "nonce": nonce})

    # -- Gateway ------------------------------------------------------------------------------

    async def _gateway(self, ws, path=None):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(ws.path).query))
        conn = _Conn(ws, query)
        conn.compress = conn.compress or self.force_compress
        self._conns.append(conn)
        self._gw["connections"] += 1
        shown = {k: v for k, v in query.items() if k != "token"}
        shown["token_ok"] = query.get("token") == self.gateway_token
        self._gw["queries"].append(shown)
        try:
            if await self._handshake(conn):
                while True:
                    frame = await ws.recv()
                    await self._on_frame(conn, frame)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._conns.remove(conn)
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
            if not any(c.get("conn") is conn for c in self._gw["closes"]):
                self._gw["closes"].append({"conn": conn, "code": ws.close_code, "by": "client"})

    async def _handshake(self, conn):
        q = conn.query
        code = 0
        if not q.get("token"):
            code = 40100
        elif q.get("token") != self.gateway_token:
            code = 40101
        elif self.hello_code:
            code = self.hello_code
        resume = q.get("resume") == "1"
        if code:
            self._gw["hellos"].append({"code": code, "session_id": None, "resume": resume})
            await self._send(conn, {"s": 1, "d": {"code": code}})
            await self._close(conn, 1000, "hello failed")
            return False
        if resume:
            sid, sn = q.get("session_id", ""), q.get("sn", "")
            s = self._sessions.get(sid)
            rec = {"session_id": sid, "sn": sn, "outcome": None}
            self._gw["resumes"].append(rec)
            if not sid or not sn.isdigit():
                rec["outcome"] = "missing params"
                return await self._refuse_resume(conn, 40106, "resume failed, missing params")
            if s is None or not s.valid:
                rec["outcome"] = "session expired"
                return await self._refuse_resume(conn, 40107, "session expired")
            if int(sn) > s.sn:
                rec["outcome"] = "invalid sn"
                return await self._refuse_resume(conn, 40108, "invalid sn")
            rec["outcome"] = "resumed"
            self._attach(conn, s)
            self._gw["hellos"].append({"code": 0, "session_id": s.id, "resume": True})
            await self._send(conn, {"s": 1, "d": {"code": 0, "session_id": s.id}})
            await self._replay(conn, s, int(sn))
            await self._send(conn, {"s": 6, "d": {"session_id": s.id}})
            return True
        s = _Session(str(uuid.uuid4()))
        self._sessions[s.id] = s
        self._attach(conn, s)
        self._gw["hellos"].append({"code": 0, "session_id": s.id, "resume": False})
        await self._send(conn, {"s": 1, "d": {"code": 0, "session_id": s.id}})
        return True

    def _attach(self, conn, s):
        old = s.conn
        s.conn, conn.session, self._current = conn, s, s
        if old is not None and old is not conn:
            old.session = None

    async def _refuse_resume(self, conn, code, err):
        self._gw["reconnects"] += 1
        await self._send(conn, {"s": 5, "d": {"code": code, "err": err}})
        await self._close(conn, 1000, "resume failed")
        return False

    async def _replay(self, conn, s, after):
        for sn in sorted(k for k in s.events if k > after):
            await self._send(conn, s.events[sn])

    async def _close(self, conn, code, reason):
        self._gw["closes"].append({"conn": conn, "code": code, "by": "server"})
        await conn.ws.close(code, reason)

    async def _send(self, conn, obj):
        text = json.dumps(obj, ensure_ascii=False)
        if conn.compress:
            await conn.ws.send(zlib.compress(text.encode("utf-8")))
        else:
            await conn.ws.send(text)

    async def _on_frame(self, conn, frame):
        try:
            msg = json.loads(frame)
        except (ValueError, UnicodeDecodeError, TypeError):
            msg = None
        if not isinstance(msg, dict) or type(msg.get("s")) is not int:
            self._gw["other_signals"].append({"malformed": str(frame)[:200]})
            return
        s, sn = msg["s"], msg.get("sn")
        session = conn.session
        if s == 2:
            self._gw["pings"].append(sn)
            if not self.answer_pings:
                return
            await self._send(conn, {"s": 3})
            if session is not None and type(sn) is int and sn < session.sn:
                await self._replay(conn, session, sn)
        elif s == 4:
            self._gw["resume_signals"].append(sn)
            if session is not None and type(sn) is int:
                await self._replay(conn, session, sn)
                await self._send(conn, {"s": 6, "d": {"session_id": session.id}})
        else:
            self._gw["other_signals"].append(msg)

    async def _dispatch(self, s, d, hold):
        s.sn += 1
        ev = {"s": 0, "d": d, "sn": s.sn}
        s.events[s.sn] = ev
        for old in sorted(s.events)[:-REPLAY_KEEP]:
            del s.events[old]
        if hold or s.conn is None:
            return False
        try:
            await self._send(s.conn, ev)
            return True
        except websockets.exceptions.ConnectionClosed:
            return False

    # -- control ------------------------------------------------------------------------------

    def _control(self, method, name, query, body):
        if method == "GET" and name == "sent":
            with self._lock:
                return json_reply(200, {"sent": list(self._sent)})
        if method == "GET" and name == "assets":
            with self._lock:
                return json_reply(200, {"assets": [
                    {k: a[k] for k in ("url", "filename", "content_type")}
                    | {"size": len(a["bytes"])} for a in self._assets.values()]})
        if method == "GET" and name == "calls":
            with self._lock:
                return json_reply(200, {"calls": list(self._calls)})
        if method == "GET" and name == "gateway":
            return json_reply(200, self._lt.run(self._gateway_state()))
        if method != "POST" or name not in ("channel", "message", "resend", "reconnect", "drop",
                                            "expire", "ratelimit", "config"):
            return json_reply(404, {"error": "no such control"})
        req = parse_json_body(body)
        if name == "channel":
            with self._lock:
                return json_reply(200, self._new_channel(req.get("id"), req.get("guild_id"),
                                                         req.get("name")))
        if name == "ratelimit":
            with self._lock:
                self._limits.append({"method": req.get("method", "*"),
                                     "path": req.get("path", ""),
                                     "times": int(req.get("times", 1)),
                                     "reset": int(req.get("reset", 1)),
                                     "global": bool(req.get("global", False))})
            return json_reply(200, {"ok": True})
        if name == "config":
            if "answer_pings" in req:
                self.answer_pings = bool(req["answer_pings"])
            if "force_compress" in req:
                self.force_compress = bool(req["force_compress"])
            if "hello_code" in req:
                self.hello_code = int(req["hello_code"]) if req["hello_code"] else None
            return json_reply(200, {"ok": True})
        if name == "message":
            d = self._build_event(req)
            return json_reply(200, self._lt.run(self._inject(d, bool(req.get("hold")))))
        if name == "resend":
            return json_reply(200, self._lt.run(self._resend(req.get("sn"))))
        if name == "expire":
            return json_reply(200, self._lt.run(self._expire()))
        return json_reply(200, {"connections": self._lt.run(self._to_sockets(name, req))})

    def _new_channel(self, cid, guild_id, name):
        cid = str(cid or (9000000000 + len(self._channels) + 1))
        ch = {"id": cid, "guild_id": str(guild_id or "5000000001"), "name": name or "general"}
        self._channels.setdefault(cid, ch)
        return self._channels[cid]

    def _build_event(self, req):
        ctype = req.get("channel_type", "GROUP")
        content = req.get("content", "")
        author_id = str(req.get("author_id") or "2000000001")
        mtype = req.get("type", 9)
        if ctype not in ("GROUP", "PERSON") or not isinstance(content, str) or \
                type(mtype) is not int:
            raise BadRequest("channel_type GROUP|PERSON, a string content, an integer type")
        author = dict({"id": author_id, "username": "user" + author_id, "identify_num": "1234",
                       "nickname": "user" + author_id, "avatar": "", "online": True,
                       "roles": [], "bot": False}, **(req.get("author") or {}))
        mentions = req.get("mention")
        if mentions is None:
            mentions = [m for m in MET_RE.findall(content) if m not in ("all", "here")]
        extra = {"type": mtype, "mention": [str(m) for m in mentions],
                 "mention_all": "(met)all(met)" in content, "mention_roles": [],
                 "mention_here": "(met)here(met)" in content, "author": author}
        if ctype == "GROUP":
            with self._lock:
                ch = self._new_channel(req.get("target_id"), req.get("guild_id"), None)
            target = ch["id"]
            extra.update({"guild_id": ch["guild_id"], "channel_name": ch["name"], "code": ""})
        else:
            target = BOT_ID
            extra.update({"code": "%032x" % (hash((author_id, BOT_ID)) & (2 ** 128 - 1))})
        if mtype == 9:
            extra["kmarkdown"] = {"raw_content": content, "mention_part": [], "mention_role_part": []}
        if req.get("quote"):
            extra["quote"] = {"id": str(req["quote"]), "rong_id": str(req["quote"]), "type": 1,
                              "content": "", "create_at": _now_ms(), "author": author}
        return {"channel_type": ctype, "type": mtype, "target_id": target, "author_id": author_id,
                "content": content, "msg_id": str(uuid.uuid4()), "msg_timestamp": _now_ms(),
                "nonce": "", "extra": extra}

    async def _inject(self, d, hold):
        s = self._current
        if s is None or not s.valid:
            raise BadRequest("no gateway session to dispatch to", 409)
        delivered = await self._dispatch(s, d, hold)
        return {"sn": s.sn, "msg_id": d["msg_id"], "delivered": delivered, "event": d}

    async def _resend(self, sn):
        s = self._current
        if s is None or type(sn) is not int or sn not in s.events:
            raise BadRequest("no stored event with that sn", 404)
        if s.conn is None:
            return {"delivered": False}
        await self._send(s.conn, s.events[sn])
        return {"delivered": True}

    async def _expire(self):
        s = self._current
        if s is None:
            raise BadRequest("no session", 409)
        s.valid = False
        self._sessions.pop(s.id, None)
        return {"session_id": s.id}

    async def _to_sockets(self, name, req):
        conns = [c for c in list(self._conns) if c.ws.open]
        reached = 0
        for c in conns:
            try:
                if name == "reconnect":
                    self._gw["reconnects"] += 1
                    if c.session is not None:
                        c.session.valid = False
                        self._sessions.pop(c.session.id, None)
                    await self._send(c, {"s": 5, "d": {"code": int(req.get("code", 40108)),
                                                       "err": str(req.get("err", "invalid sn"))}})
                elif name == "drop":
                    self._gw["closes"].append({"conn": c, "code": None, "by": "server-drop"})
                    c.ws.transport.abort()
                reached += 1
            except websockets.exceptions.ConnectionClosed:
                pass
        if name == "reconnect":
            self._current = None
        return reached

    async def _gateway_state(self):
        g = {k: list(v) if isinstance(v, list) else v for k, v in self._gw.items()}
        g["closes"] = [{"code": c["code"], "by": c["by"]} for c in g["closes"]]
        g["connected"] = len(self._conns)
        g["session_sn"] = self._current.sn if self._current is not None else None
        return g


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake KOOK REST + gateway for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--token", default=DEFAULT_TOKEN)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeKook(args.host, args.port, args.token, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_KOOK_PORT=%d FAKE_KOOK_GATEWAY_PORT=%d" % (
        f.port, f.gateway_port))


if __name__ == "__main__":
    sys.exit(main())
