#!/usr/bin/env python3
"""Fake Discord (REST API v10 + Gateway v10) for Switchboard end-to-end tests.

Built from /work/shared/protocols/platforms.md 4.2 (items 4.2.n below) and discord/discord-api-docs
(developers/events/gateway.mdx, gateway-events.mdx, topics/rate-limits.mdx, topics/opcodes-and-
status-codes.mdx, resources/message.mdx, resources/channel.mdx, resources/user.mdx). The Gateway
runs on python3-websockets 10.4 (see fake_ws_common.py); REST and control share one HTTP port.

REST (4.2.1, 4.2.9-11), base http://127.0.0.1:PORT/api/v10, JSON bodies
    Every call but GET /gateway needs `Authorization: Bot <token>`, else 401
    {"message":"401: Unauthorized","code":0}. Answers carry X-RateLimit-Limit/-Remaining/-Reset/
    -Reset-After/-Bucket. Unknown route: 404 {"message":"404: Not Found","code":0}.
    GET  /gateway, /gateway/bot -> {url: ws://127.0.0.1:WSPORT, shards:1, session_start_limit
         {total:1000, remaining, reset_after, max_concurrency:1}} (/gateway: url only)
    GET  /users/@me -> the bot user {id, username, discriminator:"0", global_name, avatar, bot}
    GET  /channels/{id} -> channel; unknown -> 404 {"message":"Unknown Channel","code":10003}
         (channels exist once created by /_control/channel, /_control/message or a DM open)
    POST /channels/{id}/messages  JSON or multipart/form-data (part payload_json + files[n]) ->
         Message {id, channel_id, author (the bot), content, timestamp, edited_timestamp, tts,
         mention_everyone, mentions, mention_roles, attachments[{id (a new snowflake; files[n]'s
         n only names the part, and payload_json attachments[{id:n, filename}] may rename it),
         filename, size, url, proxy_url, content_type}], embeds, pinned, type (0; 19 replies),
         message_reference?, referenced_message?, nonce?}. Errors: content > 2000 characters ->
         400 {"message":"Invalid Form Body","code":50035,"errors":{"content":{"_errors":
         [{"code":"BASE_TYPE_MAX_LENGTH","message":"Must be 2000 or fewer in length."}]}}};
         no content/embeds/files -> 400 {"message":"Cannot send an empty message","code":50006};
         reply to an unknown message (fail_if_not_exists not false) -> 400 50035 with
         errors.message_reference REPLIES_UNKNOWN_MESSAGE; a files[n] part without filename ->
         400 50035; a file over 10 MiB -> 413 {"message":"Request entity too large",
         "code":40005}.
    PATCH /channels/{cid}/messages/{mid} -> edits a message the bot sent (404 10008 otherwise).
    POST /channels/{id}/typing -> 204.
    POST /users/@me/channels {recipient_id} -> DM channel {id, type:1, recipients}, same id on
         reuse.
    429 injection (/_control/ratelimit): {"message":"You are being rate limited.",
         "retry_after": <float>, "global": bool} with Retry-After (whole seconds, rounded up),
         X-RateLimit-Limit/-Remaining:0/-Reset/-Reset-After/-Bucket/-Scope and, when global,
         X-RateLimit-Global: true.
Gateway (4.2.2-8, 4.2.12-13), ws://127.0.0.1:WSPORT/?v=10&encoding=json, frames {op, d, s, t}
    v other than 10 -> close 4012; encoding other than json -> close 4002 (ETF and zlib-stream
    are not implemented). On open: HELLO {heartbeat_interval} (default 41250 ms, /_control/
    config). op 1 -> op 11 (allowed before IDENTIFY; d recorded). IDENTIFY with the right token ->
    READY {v:10, user, guilds (unavailable), session_id, resume_gateway_url, shard?,
    application}; wrong token -> 4004; a second IDENTIFY/RESUME -> 4005; intents are recorded,
    not enforced; an IDENTIFY or RESUME whose d is not an object -> 4001. RESUME {token,
    session_id, seq}: unknown/invalidated session -> op 9 d:false; seq beyond the session's last
    -> 4007; else the dispatches after seq are replayed, then RESUMED. op 3/4/8 before IDENTIFY
    -> 4003, after it recorded and ignored; any other op -> 4001; a frame that is not a JSON
    object with an integer op -> 4002; more than 120 frames in 60 s -> 4008. A heartbeat later
    than 1.5 x interval is counted (`overdue`); with config enforce_heartbeat the socket is
    closed with 4009 (the docs say only that the connection is closed, not with which code).

Control API (no auth; JSON; errors {"error"} with 400/404/409)
    POST /_control/channel   {id?, guild_id?, name?} -> channel (guild text, or DM without guild)
    POST /_control/message   {channel_id, guild_id?, author{id, username, bot?}, content,
                             mentions?[user or id], attachments?[{filename, url?, size?,
                             content_type?}], message_reference?} -> {id, s, delivered, message}:
                             MESSAGE_CREATE to the current session (kept for RESUME replay even
                             when no socket is open; 409 when no session exists yet).
    POST /_control/reconnect (op 7), /_control/invalid_session {resumable} (op 9; false also
                             invalidates the session), /_control/heartbeat_request (op 1),
                             /_control/drop (TCP closed without a close frame),
                             /_control/close {code?: 4000, reason?} -> {connections: n affected}
    POST /_control/ratelimit {method?: "*", path?: "" (prefix after /api/v10), times?: 1,
                             retry_after?: 1.0, global?: false, scope?: "user"}
    POST /_control/config    {heartbeat_interval?, enforce_heartbeat?}
    GET  /_control/sent      -> {sent: [{kind: create|edit, id, channel_id, content, attachments
                             (as answered, plus file_index),
                             message_reference, payload, multipart}]}
    GET  /_control/gateway   -> {connections, connected, identified, identifies[{IDENTIFY d
                             without its token, token_ok}], resumes[{session_id, seq, outcome}],
                             heartbeats[d...], last_seq_acked, overdue, closes[{code, by}],
                             other_ops[...], queries[...]}

Command line: python3 fake_discord.py [--port 0] [--host 127.0.0.1] [--token T] [--verbose]
prints exactly "FAKE_DISCORD_PORT=<http> FAKE_DISCORD_GATEWAY_PORT=<ws>" once listening.
In process: fake = FakeDiscord(token=...); fake.start(); fake.port, fake.gateway_port; fake.stop().
"""

import argparse
import asyncio
import email.parser
import email.policy
import json
import math
import re
import secrets
import sys
import threading
import time
import urllib.parse

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, json_reply,
                            parse_json_body, serve_cli, websockets)

DEFAULT_TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.fake.discord-token"
DISCORD_EPOCH_MS = 1420070400000
MAX_CONTENT = 2000
MAX_FILE = 10 * 1024 * 1024
GATEWAY_SEND_LIMIT = 120
REPLAY_KEEP = 1000
CHANNEL_MSG_RE = re.compile(r"^/channels/(\d+)/messages(?:/(\d+))?$")


def _iso(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t or time.time())) + ".000000+00:00"


def _api_error(status, message, code, errors=None, headers=None):
    body = {"message": message, "code": code}
    if errors is not None:
        body["errors"] = errors
    return json_reply(status, body, headers)


def _form_error(field, code, message):
    return _api_error(400, "Invalid Form Body", 50035,
                      {field: {"_errors": [{"code": code, "message": message}]}})


class _Conn(object):
    def __init__(self, ws, query):
        self.ws, self.query = ws, query
        self.session = None
        self.last_hb = time.monotonic()
        self.sends = []


class _Session(object):
    def __init__(self, sid):
        self.id, self.seq, self.events, self.conn, self.valid = sid, 0, [], None, True


class FakeDiscord(object):
    def __init__(self, host="127.0.0.1", port=0, token=DEFAULT_TOKEN, verbose=False):
        self.host, self.token = host, token
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.Lock()  # guards REST state below
        self._flake_lock, self._last_flake = threading.Lock(), 0
        self.bot = {"id": self._snowflake(), "username": "fakebot", "discriminator": "0",
                    "global_name": None, "avatar": None, "bot": True, "verified": True,
                    "flags": 0}
        self._channels = {}  # id -> channel
        self._dms = {}  # recipient id -> channel id
        self._messages = {}  # id -> message (injected and sent)
        self._sent = []
        self._limits = []
        self._identify_remaining = 1000
        self.heartbeat_interval, self.enforce_heartbeat = 41250, False
        # Gateway state, touched only on the loop thread.
        self._conns, self._sessions, self._current = [], {}, None
        self._gw = {"connections": 0, "identifies": [], "resumes": [], "heartbeats": [],
                    "overdue": 0, "closes": [], "other_ops": [], "queries": []}

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

    def _snowflake(self):
        with self._flake_lock:
            flake = max(self._last_flake + 1,
                        (int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22)
            self._last_flake = flake
        return str(flake)

    # -- REST ---------------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if path.startswith("/_control/"):
            return self._control(method, path[len("/_control/"):], query, body)
        if not path.startswith("/api/v10/"):
            return _api_error(404, "404: Not Found", 0)
        path = path[len("/api/v10"):].rstrip("/")
        if method == "GET" and path == "/gateway":
            return json_reply(200, {"url": self._gateway_url()})
        if headers.get("authorization") != "Bot " + self.token:
            return _api_error(401, "401: Unauthorized", 0)
        with self._lock:
            limited = self._rate_limited(method, path)
            if limited is not None:
                return limited
            r = self._rest(method, path, headers, body)
        bucket = "%08x" % (hash((method, path.split("/")[1] if "/" in path else path))
                           & 0xFFFFFFFF)
        r.headers += [("X-RateLimit-Limit", "5"), ("X-RateLimit-Remaining", "4"),
                      ("X-RateLimit-Reset", "%.3f" % (time.time() + 1)),
                      ("X-RateLimit-Reset-After", "1.000"), ("X-RateLimit-Bucket", bucket)]
        return r

    def _gateway_url(self):
        return "ws://127.0.0.1:%d" % self.gateway_port

    def _rate_limited(self, method, path):
        for rule in self._limits:
            if rule["times"] > 0 and rule["method"] in ("*", method) and \
                    path.startswith(rule["path"]):
                rule["times"] -= 1
                ra = rule["retry_after"]
                hdrs = [("Retry-After", str(int(math.ceil(ra)))), ("X-RateLimit-Limit", "5"),
                        ("X-RateLimit-Remaining", "0"),
                        ("X-RateLimit-Reset", "%.3f" % (time.time() + ra)),
                        ("X-RateLimit-Reset-After", "%.3f" % ra),
                        ("X-RateLimit-Bucket", "fakebucket"),
                        ("X-RateLimit-Scope", rule["scope"])]
                if rule["global"]:
                    hdrs.append(("X-RateLimit-Global", "true"))
                return json_reply(429, {"message": "You are being rate limited.",
                                        "retry_after": ra, "global": rule["global"]}, hdrs)
        return None

    def _rest(self, method, path, headers, body):
        if method == "GET" and path == "/gateway/bot":
            return json_reply(200, {"url": self._gateway_url(), "shards": 1,
                                    "session_start_limit": {
                                        "total": 1000, "remaining": self._identify_remaining,
                                        "reset_after": 86400000, "max_concurrency": 1}})
        if method == "GET" and path == "/users/@me":
            return json_reply(200, self.bot)
        if method == "POST" and path == "/users/@me/channels":
            try:
                rid = str(int(json.loads(body or b"{}").get("recipient_id")))
            except (ValueError, TypeError, AttributeError):
                return _form_error("recipient_id", "NUMBER_TYPE_COERCE", "Value is not snowflake.")
            if rid not in self._dms:
                ch = self._new_channel(None, None, recipient=rid)
                self._dms[rid] = ch["id"]
            return json_reply(200, self._channels[self._dms[rid]])
        m = re.match(r"^/channels/(\d+)(/typing)?$", path)
        if m and (method, bool(m.group(2))) in (("GET", False), ("POST", True)):
            ch = self._channels.get(m.group(1))
            if ch is None:
                return _api_error(404, "Unknown Channel", 10003)
            return json_reply(200, ch) if method == "GET" else Reply(204, b"", None)
        m = CHANNEL_MSG_RE.match(path)
        if m and ((method == "POST" and not m.group(2)) or (method == "PATCH" and m.group(2))):
            if m.group(1) not in self._channels:
                return _api_error(404, "Unknown Channel", 10003)
            try:
                payload, files, multipart = self._decode_message_body(headers, body)
            except ValueError as e:
                return _api_error(400, "Invalid Form Body: %s" % e, 50035, {})
            if method == "PATCH":
                return self._edit(m.group(1), m.group(2), payload)
            return self._create(m.group(1), payload, files, multipart)
        return _api_error(404, "404: Not Found", 0)

    @staticmethod
    def _decode_message_body(headers, body):
        ctype = headers.get("content-type", "")
        if not ctype.startswith("multipart/form-data"):
            payload = json.loads(body.decode("utf-8") if body else "{}")
            if not isinstance(payload, dict):
                raise ValueError("body is not an object")
            return payload, [], False
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + body)
        if not msg.is_multipart():
            raise ValueError("malformed multipart body")
        payload, files = {}, []
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True) or b""
            if name == "payload_json":
                payload = json.loads(data.decode("utf-8"))
                if not isinstance(payload, dict):
                    raise ValueError("payload_json is not an object")
            elif name and re.match(r"^files\[(\d+)\]$", name):
                files.append({"file_index": name[len("files["):-1],
                              "filename": part.get_filename(),
                              "content_type": part.get_content_type(), "size": len(data)})
        return payload, files, True

    def _create(self, cid, payload, files, multipart):
        content = payload.get("content")
        if content is not None and not isinstance(content, str):
            return _form_error("content", "STRING_TYPE_CONVERT", "Could not interpret as string.")
        if content is not None and len(content) > MAX_CONTENT:
            return _form_error("content", "BASE_TYPE_MAX_LENGTH",
                               "Must be %d or fewer in length." % MAX_CONTENT)
        if not content and not payload.get("embeds") and not files and \
                not payload.get("sticker_ids"):
            return _api_error(400, "Cannot send an empty message", 50006)
        ref = payload.get("message_reference")
        referenced = None
        if isinstance(ref, dict) and ref.get("message_id") is not None:
            referenced = self._messages.get(str(ref["message_id"]))
            if referenced is None:
                if ref.get("fail_if_not_exists", True) is not False:
                    return _form_error("message_reference", "REPLIES_UNKNOWN_MESSAGE",
                                       "Unknown message")
                ref = None
        described = {str(a.get("id")): a for a in payload.get("attachments") or []
                     if isinstance(a, dict)}
        mid, atts = self._snowflake(), []
        for f in files:
            if not f["filename"]:
                return _form_error("files[%s]" % f["file_index"], "BASE_TYPE_REQUIRED",
                                   "This field is required")
            if f["size"] > MAX_FILE:
                return _api_error(413, "Request entity too large", 40005)
            filename = described.get(f["file_index"], {}).get("filename") or f["filename"]
            url = "http://127.0.0.1:%d/attachments/%s/%s/%s" % (self.port, cid, mid, filename)
            atts.append(dict(f, id=self._snowflake(), filename=filename, url=url, proxy_url=url))
        msg = self._message(mid, cid, None, self.bot, content or "", [],
                            [{k: v for k, v in a.items() if k != "file_index"} for a in atts])
        msg["embeds"] = payload.get("embeds") or []
        if payload.get("nonce") is not None:
            msg["nonce"] = payload["nonce"]
        if referenced is not None:
            msg["type"] = 19
            msg["message_reference"] = {"type": 0, "message_id": referenced["id"],
                                        "channel_id": referenced["channel_id"]}
            msg["referenced_message"] = referenced
        self._messages[mid] = msg
        self._sent.append({"kind": "create", "id": mid, "channel_id": cid,
                           "content": content, "attachments": atts,
                           "message_reference": payload.get("message_reference"),
                           "payload": payload, "multipart": multipart})
        return json_reply(200, msg)

    def _edit(self, cid, mid, payload):
        msg = self._messages.get(mid)
        if msg is None or msg["channel_id"] != cid or msg["author"]["id"] != self.bot["id"]:
            return _api_error(404, "Unknown Message", 10008)
        content = payload.get("content")
        if isinstance(content, str) and len(content) > MAX_CONTENT:
            return _form_error("content", "BASE_TYPE_MAX_LENGTH",
                               "Must be %d or fewer in length." % MAX_CONTENT)
        if isinstance(content, str):
            msg["content"] = content
        msg["edited_timestamp"] = _iso()
        self._sent.append({"kind": "edit", "id": mid, "channel_id": cid, "content": content,
                           "attachments": [], "message_reference": None, "payload": payload,
                           "multipart": False})
        return json_reply(200, msg)

    def _new_channel(self, cid, guild_id, recipient=None, name=None):
        cid = cid or self._snowflake()
        if recipient is not None or guild_id is None:
            ch = {"id": cid, "type": 1, "last_message_id": None, "flags": 0,
                  "recipients": [{"id": recipient or "0", "username": "user" + (recipient or "0"),
                                  "discriminator": "0", "global_name": None, "avatar": None}]}
        else:
            ch = {"id": cid, "type": 0, "guild_id": guild_id, "name": name or "general",
                  "position": 0, "permission_overwrites": [], "nsfw": False,
                  "last_message_id": None, "parent_id": None}
        self._channels[cid] = ch
        return ch

    @staticmethod
    def _message(mid, cid, guild_id, author, content, mentions, attachments):
        msg = {"id": mid, "channel_id": cid, "author": author, "content": content,
               "timestamp": _iso(), "edited_timestamp": None, "tts": False,
               "mention_everyone": False, "mentions": mentions, "mention_roles": [],
               "attachments": attachments, "embeds": [], "pinned": False, "type": 0}
        if guild_id is not None:
            msg["guild_id"] = guild_id
            msg["member"] = {"roles": [], "joined_at": _iso(), "deaf": False, "mute": False}
        return msg

    # -- Gateway ------------------------------------------------------------------------------

    async def _gateway(self, ws, path=None):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(ws.path).query))
        conn = _Conn(ws, query)
        self._conns.append(conn)
        self._gw["connections"] += 1
        self._gw["queries"].append(query)
        watchdog = None
        try:
            if query.get("v") != "10":
                return await self._close(conn, 4012, "Invalid API version")
            if query.get("encoding") != "json":
                return await self._close(conn, 4002, "Error while decoding payload.")
            await self._send(conn, 10, {"heartbeat_interval": self.heartbeat_interval})
            watchdog = asyncio.ensure_future(self._watchdog(conn))
            while True:
                frame = await ws.recv()
                if not await self._on_frame(conn, frame):
                    break
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            if watchdog is not None:
                watchdog.cancel()
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

    async def _watchdog(self, conn):
        period = self.heartbeat_interval / 1000.0
        while True:
            await asyncio.sleep(period / 4)
            if time.monotonic() - conn.last_hb > period * 1.5:
                self._gw["overdue"] += 1
                conn.last_hb = time.monotonic()  # count each missed window once
                if self.enforce_heartbeat:
                    await self._close(conn, 4009, "Session timed out.")
                    return

    async def _on_frame(self, conn, frame):
        now = time.monotonic()
        conn.sends = [t for t in conn.sends if now - t < 60] + [now]
        if len(conn.sends) > GATEWAY_SEND_LIMIT:
            return await self._close(conn, 4008, "Rate limited.")
        try:
            msg = json.loads(frame)
        except (ValueError, UnicodeDecodeError):
            msg = None
        if not isinstance(msg, dict) or type(msg.get("op")) is not int:
            return await self._close(conn, 4002, "Error while decoding payload.")
        op, d = msg["op"], msg.get("d")
        if op == 1:
            conn.last_hb = now
            self._gw["heartbeats"].append(d)
            await self._send(conn, 11, None)
        elif op in (2, 6):
            if conn.session is not None:
                return await self._close(conn, 4005, "Already authenticated.")
            if not isinstance(d, dict):
                return await self._close(conn, 4001, "Invalid payload for opcode.")
            return await (self._identify(conn, d) if op == 2 else self._resume(conn, d))
        elif op in (3, 4, 8):
            if conn.session is None:
                return await self._close(conn, 4003, "Not authenticated.")
            self._gw["other_ops"].append({"op": op, "d": d})
        else:
            return await self._close(conn, 4001, "Unknown opcode.")
        return True

    async def _identify(self, conn, d):
        ok = d.get("token") == self.token
        self._gw["identifies"].append(dict({k: v for k, v in d.items() if k != "token"},
                                           token_ok=ok))
        if not ok:
            return await self._close(conn, 4004, "Authentication failed.")
        with self._lock:
            self._identify_remaining -= 1
            guilds = sorted({c["guild_id"] for c in self._channels.values() if "guild_id" in c})
        s = _Session(secrets.token_hex(16))
        self._sessions[s.id] = s
        self._current = s
        s.conn = conn
        conn.session = s
        ready = {"v": 10, "user": self.bot, "guilds": [{"id": g, "unavailable": True}
                                                       for g in guilds],
                 "session_id": s.id, "resume_gateway_url": self._gateway_url(),
                 "application": {"id": self.bot["id"], "flags": 0}}
        if d.get("shard") is not None:
            ready["shard"] = d["shard"]
        await self._dispatch(s, "READY", ready, keep=False)
        return True

    async def _resume(self, conn, d):
        s = self._sessions.get(d.get("session_id"))
        rec = {"session_id": d.get("session_id"), "seq": d.get("seq"), "outcome": None}
        self._gw["resumes"].append(rec)
        if d.get("token") != self.token:
            rec["outcome"] = "bad token"
            return await self._close(conn, 4004, "Authentication failed.")
        if s is None or not s.valid:
            rec["outcome"] = "invalid session"
            await self._send(conn, 9, False)
            return True
        seq = d.get("seq") if type(d.get("seq")) is int else 0
        if seq > s.seq:
            rec["outcome"] = "invalid seq"
            return await self._close(conn, 4007, "Invalid seq.")
        rec["outcome"] = "resumed"
        old = s.conn
        s.conn, conn.session, self._current = conn, s, s
        if old is not None:
            old.session = None
        for ev in [e for e in s.events if e["s"] > seq]:
            await conn.ws.send(json.dumps(ev))
        await self._dispatch(s, "RESUMED", {}, keep=False)
        return True

    async def _dispatch(self, s, t, d, keep=True):
        s.seq += 1
        ev = {"op": 0, "d": d, "s": s.seq, "t": t}
        if keep:
            s.events = (s.events + [ev])[-REPLAY_KEEP:]
        if s.conn is None:
            return False
        try:
            await s.conn.ws.send(json.dumps(ev))
            return True
        except websockets.exceptions.ConnectionClosed:
            return False

    # -- control ------------------------------------------------------------------------------

    def _control(self, method, name, query, body):
        if method == "GET" and name == "sent":
            with self._lock:
                return json_reply(200, {"sent": list(self._sent)})
        if method == "GET" and name == "gateway":
            return json_reply(200, self._lt.run(self._gateway_state()))
        if method != "POST" or name not in ("channel", "message", "reconnect", "invalid_session",
                                            "heartbeat_request", "drop", "close", "ratelimit",
                                            "config"):
            return json_reply(404, {"error": "no such control"})
        req = parse_json_body(body)
        if name == "channel":
            with self._lock:
                return json_reply(200, self._new_channel(
                    str(req["id"]) if req.get("id") else None,
                    str(req["guild_id"]) if req.get("guild_id") else None, name=req.get("name")))
        if name == "ratelimit":
            with self._lock:
                self._limits.append({"method": req.get("method", "*"),
                                     "path": req.get("path", ""),
                                     "times": int(req.get("times", 1)),
                                     "retry_after": float(req.get("retry_after", 1.0)),
                                     "global": bool(req.get("global", False)),
                                     "scope": req.get("scope", "user")})
            return json_reply(200, {"ok": True})
        if name == "config":
            if "heartbeat_interval" in req:
                self.heartbeat_interval = int(req["heartbeat_interval"])
            if "enforce_heartbeat" in req:
                self.enforce_heartbeat = bool(req["enforce_heartbeat"])
            return json_reply(200, {"ok": True})
        if name == "message":
            return json_reply(200, self._lt.run(self._inject(self._build_message(req))))
        return json_reply(200, {"connections": self._lt.run(self._to_sockets(name, req))})

    def _build_message(self, req):
        cid = str(req.get("channel_id") or "")
        if not cid.isdigit() or not isinstance(req.get("content", ""), str):
            raise BadRequest("channel_id (snowflake) and a string content are required")
        gid = str(req["guild_id"]) if req.get("guild_id") else None
        author = dict({"username": "user", "discriminator": "0", "global_name": None,
                       "avatar": None}, **(req.get("author") or {}))
        author["id"] = str(author.get("id") or "2000")
        mentions = [m if isinstance(m, dict) else
                    {"id": str(m), "username": "user" + str(m), "discriminator": "0"}
                    for m in req.get("mentions") or []]
        with self._lock:
            if cid not in self._channels:
                self._new_channel(cid, gid, recipient=None if gid else author["id"])
            mid = self._snowflake()
            atts = []
            for a in req.get("attachments") or []:
                aid = self._snowflake()
                url = a.get("url") or "http://127.0.0.1:%d/attachments/%s/%s/%s" % (
                    self.port, cid, aid, a.get("filename", "file"))
                atts.append({"id": aid, "filename": a.get("filename", "file"),
                             "size": int(a.get("size", 0)), "url": url, "proxy_url": url,
                             "content_type": a.get("content_type", "application/octet-stream")})
            msg = self._message(mid, cid, gid, author, req.get("content", ""), mentions, atts)
            if req.get("message_reference"):
                msg["message_reference"] = req["message_reference"]
                ref = self._messages.get(str(req["message_reference"].get("message_id")))
                if ref is not None:
                    msg["type"], msg["referenced_message"] = 19, ref
            self._messages[mid] = msg
        return msg

    async def _inject(self, msg):
        s = self._current
        if s is None or not s.valid:
            raise BadRequest("no gateway session to dispatch to", 409)
        delivered = await self._dispatch(s, "MESSAGE_CREATE", msg)
        return {"id": msg["id"], "s": s.seq, "delivered": delivered, "message": msg}

    async def _to_sockets(self, name, req):
        # A socket already closing (a client's close racing this control call) is skipped, not
        # an error: the count says how many were reached.
        conns = [c for c in list(self._conns) if c.ws.open]
        reached = 0
        for c in conns:
            try:
                await self._to_socket(c, name, req)
                reached += 1
            except websockets.exceptions.ConnectionClosed:
                pass
        return reached

    async def _to_socket(self, c, name, req):
        if name == "reconnect":
            await self._send(c, 7, None)
        elif name == "heartbeat_request":
            await self._send(c, 1, None)
        elif name == "invalid_session":
            resumable = bool(req.get("resumable"))
            if not resumable and c.session is not None:
                c.session.valid = False
            await self._send(c, 9, resumable)
        elif name == "drop":
            self._gw["closes"].append({"conn": c, "code": None, "by": "server-drop"})
            c.ws.transport.abort()
        else:
            await self._close(c, int(req.get("code", 4000)), str(req.get("reason", "")))

    async def _gateway_state(self):
        g = {k: list(v) if isinstance(v, list) else v for k, v in self._gw.items()}
        g["closes"] = [{"code": c["code"], "by": c["by"]} for c in g["closes"]]
        g["connected"] = len(self._conns)
        g["identified"] = sum(1 for c in self._conns if c.session is not None)
        g["last_seq_acked"] = next((h for h in reversed(g["heartbeats"]) if h is not None), None)
        return g


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake Discord REST + Gateway for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--token", default=DEFAULT_TOKEN)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeDiscord(args.host, args.port, args.token, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_DISCORD_PORT=%d FAKE_DISCORD_GATEWAY_PORT=%d" % (
        f.port, f.gateway_port))


if __name__ == "__main__":
    sys.exit(main())
