#!/usr/bin/env python3
"""Fake DingTalk (OpenAPI + Stream mode + session webhooks) for Switchboard end-to-end tests.

Built from /work/shared/protocols/platforms.md 4.4 and the official Stream SDK
(open-dingtalk/dingtalk-stream-sdk-python: stream.py, frames.py, handlers.py, chatbot.py) and the
robot API reference (help.dingtalk.io: "robot sends group messages", "batch send one-on-one
messages"). The stream runs on python3-websockets 10.4 (see fake_ws_common.py); the OpenAPI,
the session webhooks, the media downloads and the control API share one HTTP port.

OpenAPI, base http://127.0.0.1:PORT, JSON bodies; errors {"code","message","requestid"}
    POST /v1.0/oauth2/accessToken {appKey, appSecret} -> {accessToken, expireIn:7200}; other
         credentials -> 400 {"code":"invalidClientIdOrSecret"} (the code is unverified).
    POST /v1.0/gateway/connections/open {clientId, clientSecret, subscriptions:[{type, topic}],
         ua, localIp} -> {endpoint: ws://127.0.0.1:WSPORT/connect, ticket}; other credentials
         -> 400 invalidClientIdOrSecret (unverified); subscriptions not a list of {type, topic}
         -> 400 invalidParameter. Each ticket opens one connection.
    Robot calls need header x-acs-dingtalk-access-token = a token issued and not expired (see
    /_control/expire_tokens), else 401 {"code":"InvalidAuthentication","message":
    "不合法的access_token"}; robotCode must be the robot's, else 400
    invalidParameter.robotCode.invalid; msgKey sampleText {content} | sampleMarkdown {title,
    text} | sampleImageMsg {photoURL}, msgParam a JSON *string* of those, else 400
    invalidParameter.param.invalid.
    POST /v1.0/robot/oToMessages/batchSend {robotCode, userIds[1..20], msgKey, msgParam} ->
         {processQueryKey, invalidStaffIdList:[], flowControlledStaffIdList:[]}
    POST /v1.0/robot/groupMessages/send {robotCode, openConversationId, msgKey, msgParam,
         coolAppCode?} -> {processQueryKey}
    POST /v1.0/robot/messageFiles/download {downloadCode, robotCode} -> {downloadUrl:
         http://127.0.0.1:PORT/files/<code>}; unknown code -> 400 invalidParameter.downloadCode
    GET  /files/<code> -> the bytes registered with /_control/file
HTTP mode (the robot posts to the bot's URL): see /_control/callback.
Session webhook (sessionWebhook of each pushed message; no auth, the URL is the credential)
    POST /robot/sendBySession?session=<id> {msgtype:"text", text{content}, at?} or
         {msgtype:"markdown", markdown{title, text}, at?} -> {"errcode":0,"errmsg":"ok"};
         an unknown or expired session -> 200 {"errcode":300001,"errmsg":"session expired"}
         (the code is unverified); a malformed body -> 200 {"errcode":40035,...}.
Stream (ws://127.0.0.1:WSPORT/connect?ticket=<ticket>)
    An unknown or used ticket is refused at the upgrade with 401. Frames to the client are
    {"specVersion":"1.0","type":"SYSTEM"|"CALLBACK","headers":{"appId","connectionId",
    "contentType":"application/json","messageId","time","topic"},"data":"<JSON string>"}.
    The client must answer each with {"code":200,"headers":{"messageId",...},"message","data":
    "<string>"}; the fake records acks, and one that is not such an object is counted in
    bad_frames. A ping's ack must echo its data ({"opaque":...}). SYSTEM disconnect: the socket
    is closed by the fake `disconnect_grace` seconds later unless the client closed it first.

Control API (no auth; JSON; errors {"error"} with 400/404/409)
    POST /_control/message {conversationType:"1"|"2", senderStaffId?, senderNick?, text?,
                           msgtype?, content?, conversationId?, isInAtList?, times?: 1,
                           messageId?, msgId?, session_ttl?} -> {messageId, msgId, delivered,
                           sessionWebhook, session}: pushes a robot message (CALLBACK) to the
                           newest connection `times` times with the same messageId; session_ttl
                           (seconds, default config session_ttl) sets sessionWebhookExpiredTime.
                           409 when no connection is open.
    POST /_control/raw     {data?: str, text?: str} -> {messageId, delivered}: to the newest
                           connection, a CALLBACK frame of the bot topic whose `data` string is
                           `data` as given (malformed robot messages), or `text` sent as the
                           whole WebSocket message (malformed or oversized frames)
    POST /_control/callback {url, the fields of /_control/message, bad_sign?, raw_body?,
                           timestamp_offset_ms?} -> {status, body, msgId, session, timestamp,
                           sign}: the robot's HTTP mode: POSTs the message (or raw_body) to
                           `url` with headers timestamp (ms) and sign = base64(HMAC-SHA256(key
                           = client secret, timestamp + "\n" + client secret)) (platforms.md
                           4.4 item 5); bad_sign signs with another secret
    POST /_control/ping    -> {messageId}: a SYSTEM ping to every connection
    POST /_control/disconnect -> {connections}: a SYSTEM disconnect to every connection
    POST /_control/drop    -> {connections}: TCP closed without a close frame
    POST /_control/expire_sessions  -> every session webhook, later ones too, refuses from now on
                           (while the messages still name a future sessionWebhookExpiredTime)
    POST /_control/expire_tokens    -> every issued access token is refused from now on
    POST /_control/file    {downloadCode, content_base64, content_type?}
    POST /_control/fail    {path (prefix, e.g. /v1.0/robot/), status?: 429, code?, message?,
                           times?: 1, retry_after?} -> the next `times` OpenAPI calls under
                           `path` answer {code, message, requestid} with that status (and
                           Retry-After when given)
    POST /_control/config  {session_ttl?, disconnect_grace?}
    GET  /_control/sent    -> {sent:[{kind:"webhook"|"batchSend"|"groupSend", session?, body,
                           msgKey?, msgParam? (parsed), userIds?, openConversationId?}]}
    GET  /_control/stream  -> {opens:[{clientId, subscriptions, ok}], token_fetches,
                           connections, connected, refused_upgrades, acks:[{messageId, code,
                           message, data}], unacked:[messageId of CALLBACK frames on open
                           connections not acknowledged yet], pings:[{messageId, echoed}],
                           bad_frames, closes[]}

Command line: python3 fake_dingtalk.py [--port 0] [--client-id ID] [--client-secret S]
[--robot-code C] prints "FAKE_DINGTALK_PORT=<http> FAKE_DINGTALK_STREAM_PORT=<ws>" once listening.
"""

import argparse
import asyncio
import base64
import hashlib
import hmac
import http
import http.client
import json
import secrets
import sys
import threading
import time
import urllib.parse

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, dumps, json_reply,
                            parse_json_body, serve_cli, websockets)

CLIENT_ID = "dingfakeclientid0001"
CLIENT_SECRET = "fake-dingtalk-client-secret-0123456789"
ROBOT_CODE = "dingfakerobotcode001"
BOT_TOPIC = "/v1.0/im/bot/messages/get"
MSG_KEYS = {"sampleText": ("content",), "sampleMarkdown": ("title", "text"),
            "sampleImageMsg": ("photoURL",)}


def _now_ms():
    return int(time.time() * 1000)


def _error(status, code, message):
    return json_reply(status, {"code": code, "message": message,
                               "requestid": secrets.token_hex(8)})


class _Conn(object):
    def __init__(self, ws, cid):
        self.ws, self.id, self.sent_ids = ws, cid, set()
        self.unacked = set()  # CALLBACK messageIds sent on this connection and not acked yet


class FakeDingTalk(object):
    def __init__(self, host="127.0.0.1", port=0, client_id=CLIENT_ID,
                 client_secret=CLIENT_SECRET, robot_code=ROBOT_CODE, verbose=False):
        self.host, self.client_id, self.client_secret = host, client_id, client_secret
        self.robot_code = robot_code
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.Lock()  # guards everything below that the HTTP threads touch
        self.session_ttl, self.disconnect_grace = 5400.0, 1.0
        self._tokens = {}  # token -> expiry (monotonic)
        self._tickets = {}  # ticket -> used?
        self._sessions = {}  # id -> expiry (epoch seconds)
        self._files = {}  # downloadCode -> (bytes, content type)
        self._refuse_sessions = False
        self._failures = []  # /_control/fail rules
        self._sent = []
        self._stream = {"opens": [], "token_fetches": 0, "connections": 0, "refused_upgrades": 0,
                        "acks": [], "pings": [], "bad_frames": 0, "closes": []}
        self._pending_pings = {}  # messageId -> data string
        self._conns = []  # loop thread only

    def start(self):
        self._lt.start()

        async def serve():
            self._ws_server = await websockets.serve(
                self._stream_handler, self.host, 0, max_size=1 << 20, ping_interval=None,
                process_request=self._check_upgrade)
            return self._ws_server.sockets[0].getsockname()[1]
        self.stream_port = self._lt.run(serve())
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

    # -- HTTP -----------------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if path.startswith("/_control/"):
            return self._control(method, path[len("/_control/"):], body)
        if method == "GET" and path.startswith("/files/"):
            with self._lock:
                f = self._files.get(urllib.parse.unquote(path[len("/files/"):]))
            if f is None:
                return Reply(404, b"not found", "text/plain")
            return Reply(200, f[0], f[1])
        if method != "POST":
            return _error(404, "NotFound", "no such API")
        try:
            req = json.loads(body.decode("utf-8") or "null")
        except (UnicodeDecodeError, ValueError):
            req = None
        if path == "/robot/sendBySession":
            return self._session_reply(query.get("session", ""), req, body)
        if not isinstance(req, dict):
            return _error(400, "invalidParameter", "the body must be a JSON object")
        if path == "/v1.0/oauth2/accessToken":
            return self._access_token(req)
        if path == "/v1.0/gateway/connections/open":
            return self._open(req)
        failure = self._take_failure(path)
        if failure is not None:
            return failure
        if path.startswith("/v1.0/robot/"):
            with self._lock:
                expiry = self._tokens.get(headers.get("x-acs-dingtalk-access-token", ""))
            if expiry is None or expiry < time.monotonic():
                return _error(401, "InvalidAuthentication", "不合法的access_token")
            return self._robot(path, req)
        return _error(404, "NotFound", "no such API")

    def _take_failure(self, path):
        with self._lock:
            for rule in self._failures:
                if rule["times"] > 0 and path.startswith(rule["path"]):
                    rule["times"] -= 1
                    headers = [("Retry-After", str(rule["retry_after"]))] \
                        if rule["retry_after"] is not None else None
                    return json_reply(rule["status"], {
                        "code": rule["code"], "message": rule["message"],
                        "requestid": secrets.token_hex(8)}, headers)
        return None

    def _access_token(self, req):
        with self._lock:
            self._stream["token_fetches"] += 1
        if req.get("appKey") != self.client_id or req.get("appSecret") != self.client_secret:
            return _error(400, "invalidClientIdOrSecret", "无效的clientId或者clientSecret")
        token = secrets.token_hex(16)
        with self._lock:
            self._tokens[token] = time.monotonic() + 7200
        return json_reply(200, {"accessToken": token, "expireIn": 7200})

    def _open(self, req):
        ok = req.get("clientId") == self.client_id and req.get("clientSecret") == self.client_secret
        subs = req.get("subscriptions")
        record = {"clientId": req.get("clientId"), "subscriptions": subs, "ok": ok,
                  "ua": req.get("ua")}
        with self._lock:
            self._stream["opens"].append(record)
        if not ok:
            return _error(400, "invalidClientIdOrSecret", "无效的clientId或者clientSecret")
        if not isinstance(subs, list) or not subs or not all(
                isinstance(s, dict) and s.get("type") in ("EVENT", "CALLBACK", "SYSTEM") and
                isinstance(s.get("topic"), str) for s in subs):
            record["ok"] = False
            return _error(400, "invalidParameter", "subscriptions is invalid")
        ticket = secrets.token_urlsafe(24) + "+/="  # characters the client must URL-encode
        with self._lock:
            self._tickets[ticket] = False
        return json_reply(200, {"endpoint": "ws://127.0.0.1:%d/connect" % self.stream_port,
                                "ticket": ticket})

    def _robot(self, path, req):
        if path == "/v1.0/robot/messageFiles/download":
            with self._lock:
                known = req.get("downloadCode") in self._files
            if req.get("robotCode") != self.robot_code:
                return _error(400, "invalidParameter.robotCode.invalid", "无效的robotCode")
            if not known:
                return _error(400, "invalidParameter.downloadCode", "downloadCode is invalid")
            return json_reply(200, {"downloadUrl": "http://127.0.0.1:%d/files/%s" % (
                self.port, urllib.parse.quote(req["downloadCode"], safe=""))})
        kind = {"/v1.0/robot/oToMessages/batchSend": "batchSend",
                "/v1.0/robot/groupMessages/send": "groupSend"}.get(path)
        if kind is None:
            return _error(404, "NotFound", "no such API")
        if req.get("robotCode") != self.robot_code:
            return _error(400, "invalidParameter.robotCode.invalid", "无效的robotCode")
        key, raw = req.get("msgKey"), req.get("msgParam")
        try:
            param = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            param = None
        if key not in MSG_KEYS or not isinstance(param, dict) or not all(
                isinstance(param.get(f), str) and param.get(f) for f in MSG_KEYS[key]):
            return _error(400, "invalidParameter.param.invalid", "参数不合法")
        if len(raw.encode("utf-8")) > 15000:
            return _error(400, "invalidParameter.param.invalid", "msgParam is over 15000 bytes")
        rec = {"kind": kind, "msgKey": key, "msgParam": param, "body": req}
        if kind == "batchSend":
            users = req.get("userIds")
            if not isinstance(users, list) or not 1 <= len(users) <= 20 or not all(
                    isinstance(u, str) and u for u in users):
                return _error(400, "invalidParameter.userIds.invalid", "userIds is invalid")
            rec["userIds"] = users
        else:
            if not isinstance(req.get("openConversationId"), str) or \
                    not req["openConversationId"]:
                return _error(400, "invalid.openConversationId", "无效的openConversationId")
            rec["openConversationId"] = req["openConversationId"]
        key = secrets.token_urlsafe(12)
        rec["processQueryKey"] = key
        with self._lock:
            self._sent.append(rec)
        if kind == "batchSend":
            return json_reply(200, {"processQueryKey": key, "invalidStaffIdList": [],
                                    "flowControlledStaffIdList": []})
        return json_reply(200, {"processQueryKey": key})

    def _session_reply(self, session, req, raw):
        with self._lock:
            expiry = self._sessions.get(session)
            refused = self._refuse_sessions
        if refused or expiry is None or expiry < time.time():
            return json_reply(200, {"errcode": 300001, "errmsg": "session expired"})
        ok = isinstance(req, dict) and (
            (req.get("msgtype") == "text" and isinstance(req.get("text"), dict) and
             isinstance(req["text"].get("content"), str)) or
            (req.get("msgtype") == "markdown" and isinstance(req.get("markdown"), dict) and
             isinstance(req["markdown"].get("title"), str) and
             isinstance(req["markdown"].get("text"), str)))
        if not ok:
            return json_reply(200, {"errcode": 40035, "errmsg": "缺少参数 json"})
        with self._lock:
            self._sent.append({"kind": "webhook", "session": session, "body": req})
        return json_reply(200, {"errcode": 0, "errmsg": "ok"})

    # -- stream ---------------------------------------------------------------------------------

    def _check_upgrade(self, path, request_headers):
        parts = urllib.parse.urlsplit(path)
        ticket = dict(urllib.parse.parse_qsl(parts.query)).get("ticket", "")
        with self._lock:
            fresh = parts.path == "/connect" and self._tickets.get(ticket) is False
            if fresh:
                self._tickets[ticket] = True
            else:
                self._stream["refused_upgrades"] += 1
        if not fresh:
            return (http.HTTPStatus.UNAUTHORIZED, [("Content-Type", "application/json")],
                    b'{"code":"InvalidTicket","message":"ticket is invalid"}')
        return None

    async def _stream_handler(self, ws, path=None):
        conn = _Conn(ws, secrets.token_hex(8))
        self._conns.append(conn)
        with self._lock:
            self._stream["connections"] += 1
        try:
            async for frame in ws:
                self._on_client_frame(conn, frame)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._conns.remove(conn)
            with self._lock:
                self._stream["closes"].append({"code": ws.close_code})

    def _on_client_frame(self, conn, frame):
        try:
            ack = json.loads(frame)
        except (ValueError, TypeError):
            ack = None
        ok = (isinstance(ack, dict) and type(ack.get("code")) is int and
              isinstance(ack.get("headers"), dict) and
              ack["headers"].get("messageId") in conn.sent_ids and
              isinstance(ack.get("data"), str) and isinstance(ack.get("message", ""), str))
        with self._lock:
            if not ok:
                self._stream["bad_frames"] += 1
                return
            mid = ack["headers"]["messageId"]
            conn.unacked.discard(mid)
            self._stream["acks"].append({"messageId": mid, "code": ack["code"],
                                         "message": ack.get("message"), "data": ack["data"]})
            if mid in self._pending_pings:
                self._stream["pings"].append({"messageId": mid, "echoed": json.loads(
                    ack["data"]) == json.loads(self._pending_pings.pop(mid))})

    def _frame(self, conn, type_, topic, data, message_id=None):
        mid = message_id or secrets.token_hex(12)
        conn.sent_ids.add(mid)
        return mid, json.dumps({
            "specVersion": "1.0", "type": type_,
            "headers": {"appId": "fake-app", "connectionId": conn.id,
                        "contentType": "application/json", "messageId": mid,
                        "time": str(_now_ms()), "topic": topic},
            "data": dumps(data)})

    async def _push_message(self, data, times, message_id):
        if not self._conns:
            raise BadRequest("no stream connection is open", 409)
        conn = self._conns[-1]
        mid = message_id or secrets.token_hex(12)
        delivered = 0
        for _ in range(times):
            _, frame = self._frame(conn, "CALLBACK", BOT_TOPIC, data, mid)
            conn.unacked.add(mid)
            try:
                await conn.ws.send(frame)
                delivered += 1
            except websockets.exceptions.ConnectionClosed:
                break
        return mid, delivered

    async def _raw(self, req):
        if not self._conns:
            raise BadRequest("no stream connection is open", 409)
        conn = self._conns[-1]
        if isinstance(req.get("text"), str):
            mid, frame = None, req["text"]
        elif isinstance(req.get("data"), str):
            mid, frame = self._frame(conn, "CALLBACK", BOT_TOPIC, None)
            obj = json.loads(frame)
            obj["data"] = req["data"]
            frame = json.dumps(obj)
        else:
            raise BadRequest("data or text (a string) is required")
        try:
            await conn.ws.send(frame)
            return {"messageId": mid, "delivered": 1}
        except websockets.exceptions.ConnectionClosed:
            return {"messageId": mid, "delivered": 0}

    async def _system(self, name):
        reached, mid = 0, None
        for conn in list(self._conns):
            if name == "drop":
                conn.ws.transport.abort()
                reached += 1
                continue
            data = {"opaque": secrets.token_hex(6)} if name == "ping" else {"reason": "rebalance"}
            mid, frame = self._frame(conn, "SYSTEM", name, data)
            if name == "ping":
                with self._lock:
                    self._pending_pings[mid] = dumps(data)
            try:
                await conn.ws.send(frame)
                reached += 1
            except websockets.exceptions.ConnectionClosed:
                continue
            if name == "disconnect":
                asyncio.ensure_future(self._close_later(conn))
        return {"connections": reached, "messageId": mid}

    async def _close_later(self, conn):
        await asyncio.sleep(self.disconnect_grace)
        if conn.ws.open:
            await conn.ws.close(1000, "disconnect")

    # -- control --------------------------------------------------------------------------------

    def _control(self, method, name, body):
        if method == "GET" and name == "sent":
            with self._lock:
                return json_reply(200, {"sent": list(self._sent)})
        if method == "GET" and name == "stream":
            connected, unacked = self._lt.run(self._count())
            with self._lock:
                state = json.loads(dumps(self._stream))
            state["connected"], state["unacked"] = connected, unacked
            return json_reply(200, state)
        if method != "POST":
            return json_reply(404, {"error": "no such control"})
        req = parse_json_body(body)
        if name == "message":
            return json_reply(200, self._message(req))
        if name == "callback":
            return json_reply(200, self._callback(req))
        if name == "raw":
            return json_reply(200, self._lt.run(self._raw(req)))
        if name in ("ping", "disconnect", "drop"):
            return json_reply(200, self._lt.run(self._system(name)))
        if name == "expire_sessions":
            with self._lock:
                self._refuse_sessions = True
            return json_reply(200, {"ok": True})
        if name == "expire_tokens":
            with self._lock:
                for t in self._tokens:
                    self._tokens[t] = 0
            return json_reply(200, {"ok": True})
        if name == "file":
            try:
                data = base64.b64decode(req["content_base64"])
            except (KeyError, ValueError, TypeError):
                raise BadRequest("downloadCode and content_base64 are required")
            with self._lock:
                self._files[str(req.get("downloadCode"))] = (
                    data, req.get("content_type", "image/png"))
            return json_reply(200, {"ok": True})
        if name == "fail":
            if not isinstance(req.get("path"), str) or not req["path"].startswith("/v1.0/"):
                raise BadRequest("path (an OpenAPI path prefix) is required")
            with self._lock:
                self._failures.append({
                    "path": req["path"], "status": int(req.get("status", 429)),
                    "code": str(req.get("code", "Throttling")),
                    "message": str(req.get("message", "the request was throttled")),
                    "times": int(req.get("times", 1)),
                    "retry_after": req.get("retry_after")})
            return json_reply(200, {"ok": True})
        if name == "config":
            if "session_ttl" in req:
                self.session_ttl = float(req["session_ttl"])
            if "disconnect_grace" in req:
                self.disconnect_grace = float(req["disconnect_grace"])
            return json_reply(200, {"ok": True})
        return json_reply(404, {"error": "no such control"})

    async def _count(self):
        return len(self._conns), sorted(m for c in self._conns for m in c.unacked)

    def _message(self, req):
        msg, session = self._build(req)
        times = int(req.get("times", 1))
        if not 1 <= times <= 10:
            raise BadRequest("times must be 1..10")
        mid, delivered = self._lt.run(self._push_message(msg, times, req.get("messageId")))
        return {"messageId": mid, "msgId": msg["msgId"], "delivered": delivered,
                "sessionWebhook": msg["sessionWebhook"], "session": session,
                "conversationId": msg["conversationId"]}

    def _callback(self, req):
        url = req.get("url")
        if not isinstance(url, str) or not url.startswith("http://"):
            raise BadRequest("url (http://...) is required")
        msg, session = self._build(req)
        body = req["raw_body"].encode("utf-8") if isinstance(req.get("raw_body"), str) else \
            dumps(msg).encode("utf-8")
        timestamp = str(_now_ms() + int(req.get("timestamp_offset_ms", 0)))
        secret = self.client_secret if not req.get("bad_sign") else self.client_secret + "x"
        sign = base64.b64encode(hmac.new(secret.encode("utf-8"),
                                         (timestamp + "\n" + secret).encode("utf-8"),
                                         hashlib.sha256).digest()).decode()
        parts = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        try:
            conn.request("POST", parts.path or "/", body=body, headers={
                "Content-Type": "application/json", "timestamp": timestamp, "sign": sign})
            r = conn.getresponse()
            status, answer = r.status, r.read().decode("utf-8", "replace")
        except OSError as e:
            status, answer = 0, str(e)
        finally:
            conn.close()
        return {"status": status, "body": answer, "msgId": msg["msgId"], "session": session,
                "timestamp": timestamp, "sign": sign}

    def _build(self, req):
        ctype = str(req.get("conversationType", "1"))
        if ctype not in ("1", "2"):
            raise BadRequest("conversationType must be \"1\" or \"2\"")
        staff = str(req.get("senderStaffId", "manager1234"))
        session = secrets.token_urlsafe(12)
        ttl = float(req.get("session_ttl", self.session_ttl))
        expires = time.time() + ttl
        with self._lock:
            self._sessions[session] = expires
        now = _now_ms()
        msg = {
            "conversationId": str(req.get("conversationId") or
                                  ("cid" + base64.b64encode(staff.encode()).decode())),
            "atUsers": [], "chatbotCorpId": "dingcorpfake", "chatbotUserId": "$:LWCP_v1:$bot",
            "msgId": req.get("msgId") or "msg" + secrets.token_urlsafe(12),
            "senderNick": req.get("senderNick", "Ann"), "isAdmin": False,
            "senderStaffId": staff, "sessionWebhookExpiredTime": int(expires * 1000),
            "createAt": now, "senderCorpId": "dingcorpfake", "conversationType": ctype,
            "senderId": "$:LWCP_v1:$" + staff, "robotCode": self.robot_code,
            "sessionWebhook": "http://127.0.0.1:%d/robot/sendBySession?session=%s" % (
                self.port, session),
            "msgtype": req.get("msgtype", "text")}
        if ctype == "2":
            msg["conversationTitle"] = req.get("conversationTitle", "group")
            msg["isInAtList"] = bool(req.get("isInAtList", True))
            if msg["isInAtList"]:
                msg["atUsers"] = [{"dingtalkId": "$:LWCP_v1:$bot"}]
        if msg["msgtype"] == "text":
            msg["text"] = {"content": req.get("text", "")}
        else:
            msg["content"] = req.get("content", {})
        return msg, session


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake DingTalk OpenAPI + Stream for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--client-id", default=CLIENT_ID)
    ap.add_argument("--client-secret", default=CLIENT_SECRET)
    ap.add_argument("--robot-code", default=ROBOT_CODE)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeDingTalk(args.host, args.port, args.client_id, args.client_secret,
                        args.robot_code, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_DINGTALK_PORT=%d FAKE_DINGTALK_STREAM_PORT=%d" % (
        f.port, f.stream_port))


if __name__ == "__main__":
    sys.exit(main())
