#!/usr/bin/env python3
"""Fake Lark / Feishu Open Platform for Switchboard end-to-end tests.

Built from /work/shared/protocols/platforms.md 4.3 (items 4.3.n below), Lark's Open API pages
(tenant_access_token/internal, bot/v3/info, im/v1/messages create and reply, im/v1/images,
message resources, event subscription: encryption, X-Lark-Signature, url_verification) and the
official Go SDK's long-connection client (larksuite/oapi-sdk-go ws/client.go, const.go, model.go,
pbbp2.pb.go). Python 3 standard library plus python3-websockets (fake_ws_common.py); the
encryption, signature and frame formats are in lark_wire.py.

Open API (4.3.2-4.3.11), base http://127.0.0.1:PORT; answers {"code","msg","data"?}
    POST /open-apis/auth/v3/tenant_access_token/internal {app_id, app_secret}
        -> {code:0, msg:"ok", tenant_access_token:"t-...", expire:<token_ttl, 7200>}; a wrong app
        -> HTTP 400 {code:10014, msg:"app secret invalid"} (code unverified). A token asked for
        again in its last 30 minutes is a new one (4.3.2); before that the same one.
    Every other call needs `Authorization: Bearer <tenant token>`: missing -> HTTP 400
        {code:99991661}; unknown or invalidated (/_control/expire_tokens) -> HTTP 400
        {code:99991663, msg:"Invalid access token for authorization..."}.
    GET  /open-apis/bot/v3/info -> {code:0, msg:"ok", bot:{activate_status:2, app_name,
        avatar_url, ip_white_list:[], open_id}}
    POST /open-apis/im/v1/messages?receive_id_type=open_id|union_id|user_id|email|chat_id
        {receive_id, msg_type, content:<JSON string>, uuid?}
    POST /open-apis/im/v1/messages/{message_id}/reply {msg_type, content, reply_in_thread?, uuid?}
        The message replied to must be one the fake delivered or sent, else HTTP 400
        {code:230011, msg:"The message is not found"} (code unverified). Content is checked per
        msg_type: text {"text": non-empty}; post {<lang>:{title?, content:[[{tag,...}]]}} with
        tags text|a|at|img|media|emotion|md|hr|code_block, at needing user_id; image
        {"image_key"} of an uploaded image; anything else -> HTTP 400 {code:230001, msg:"invalid
        message content"} (code unverified). A uuid seen in the last hour answers the first
        message again without sending (4.3.10). Answer: {code:0, msg:"success", data:{message_id,
        root_id, parent_id, msg_type, create_time, update_time, deleted:false, updated:false,
        chat_id, sender:{id:app_id, id_type:"app_id", sender_type:"app"}, body:{content}}}.
    PATCH /open-apis/im/v1/messages/{message_id} {content: <card JSON string>} (edit a card,
        "更新应用发送的消息卡片"): the message must be an `interactive` one this app sent (else HTTP
        400 {code:230001}), its card must carry config.update_multi = true (a shared card; else
        HTTP 400 {code:230099}), not recalled (else {code:230011}); more than 5 updates of one
        message within a second -> HTTP 400 {code:230020, msg:"This operation triggers the
        frequency limit."} (the documented 5 QPS per message; codes unverified). Answer {code:0,
        msg:"success", data:{}}. Each update is recorded on the sent message.
    GET /open-apis/im/v1/messages/{message_id} ("获取指定消息的内容": what a reply quotes) -> {code:0,
        msg:"success", data:{items:[{message_id, root_id, parent_id, msg_type, create_time,
        update_time, deleted, updated, chat_id, sender:{id, id_type, sender_type, tenant_key},
        body:{content}}]}} for a message the fake delivered or sent; unknown -> HTTP 400
        {code:230011, msg:"The message is not found"} (code unverified).
    DELETE /open-apis/im/v1/messages/{message_id} (recall a message this app sent; else HTTP 400
        {code:230011}) -> {code:0, msg:"success", data:{}}; the sent message is marked deleted.
    POST /open-apis/im/v1/images multipart/form-data image_type=message|avatar, image (bytes,
        at most 10 MB) -> {code:0, data:{image_key:"img_v3_..."}}; else HTTP 400 {code:234001}.
    GET  /open-apis/im/v1/messages/{message_id}/resources/{key}?type=image|file -> the bytes
        registered with /_control/resource (Content-Type as registered); unknown -> HTTP 400
        {code:234003, msg:"File not in msg."} (code unverified).
    POST /callback/ws/endpoint {AppID, AppSecret} (header locale) -> {code:0, msg:"ok", data:{URL:
        "ws://127.0.0.1:WSPORT/ws/v2?fpid=1&aid=1&device_id=D&access_key=K&service_id=S&ticket=T",
        ClientConfig:{ReconnectCount:-1, ReconnectInterval, ReconnectNonce, PingInterval}}}; a
        wrong app -> {code:1000040351, msg:"invalid app"} (code unverified; the SDK treats any
        code but 0/1/1000040343 as a client error).

Long connection (4.3.14), ws://127.0.0.1:WSPORT/ws/v2?...&ticket=T
    A ticket works once; an unknown one is refused with HTTP 403 and the headers
    Handshake-Status: 514, Handshake-Msg, Handshake-Autherrcode: 1000040350 as the SDK reads them.
    Frames are binary pbbp2.Frame protobuf (SeqID=1, LogID=2, service=3, method=4 required
    varints; headers=5 repeated {key=1, value=2}; payload_encoding=6, payload_type=7,
    payload=8, LogIDNew=9). A text frame or bytes that do not decode close the socket 1003.
    Client ping (method 0, header type=ping) -> pong (method 0, type=pong, same service, payload
    the ClientConfig JSON). Events go out as data frames (method 1) with headers type=event,
    message_id, sum, seq, trace_id; `parts` > 1 splits the payload over that many frames sent in
    a shuffled order. The client's answer is the data frame sent back (payload {"code":200,...},
    header biz_rt); acks are recorded with their message_id. Events go to the newest open
    connection (Lark balances across connections; it does not broadcast).

Webhook delivery (4.3.4-4.3.7)
    POST <url> with the event JSON, or {"encrypt": base64(iv + AES-256-CBC(SHA-256(encrypt_key),
    PKCS#7))} when an encrypt_key is configured; then X-Lark-Request-Timestamp,
    X-Lark-Request-Nonce and X-Lark-Signature = hex SHA-256(timestamp + nonce + encrypt_key +
    body) are sent too. The status, body and elapsed time are recorded.

Control API (no auth; JSON; errors {"error"} with 400/404/409)
    POST /_control/config {app_id?, app_secret?, encrypt_key?, verification_token?, token_ttl?,
                          ping_interval?, bot_name?}
    POST /_control/message {chat_type: p2p|group, sender?, chat_id?, text?, mention_bot?,
                           mentions?[{open_id, name}], message_type?, content?, parent_id?,
                           event_id?, via: "ws"|"webhook", url? (webhook), parts? (ws),
                           bad_signature?, bad_token?, plain? (send unencrypted)}
                           -> {event_id, message_id, event, delivery} (delivery: webhook
                           {status, body, elapsed} or ws {delivered, frame_message_id})
    POST /_control/event   {event (a whole envelope), via, url?, parts?, ...} -> as above
    POST /_control/challenge {url, token?} -> {status, body, elapsed, challenge, echoed}
    POST /_control/resource {message_id, key, content_base64, content_type?}
    POST /_control/expire_tokens -> every issued token becomes invalid
    POST /_control/fail    {path (prefix), status?: 400, code, msg?, times?: 1}
    POST /_control/drop    -> TCP of every long connection aborted; {connections}
    POST /_control/close   {code?: 1000} -> close frames; {connections}
    GET  /_control/sent    -> {sent:[{kind: create|reply, receive_id_type, receive_id, reply_to,
                           msg_type, content (parsed), uuid, message_id, chat_id,
                           updates:[{content (parsed), time}], deleted}]}
    GET  /_control/state   -> {tokens_issued, token_calls, endpoint_calls, connections,
                           connected, refused_handshakes, pings:[{service, time}], acks:[{
                           message_id, code, biz_rt}], images:[{image_key, size}], webhooks:[...]}
    POST /_control/reset   -> forget sent messages, acks, pings, failures, resources.

Command line: python3 fake_lark.py [--port 0] prints "FAKE_LARK_PORT=<http> FAKE_LARK_WS_PORT=<ws>"
and serves until SIGTERM/SIGINT.
"""

import argparse
import base64
import email.parser
import email.policy
import hashlib
import http
import http.client
import json
import random
import re
import secrets
import sys
import threading
import time
import urllib.parse

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, dumps, json_reply,
                            parse_json_body, serve_cli, websockets)
from lark_wire import decode_frame, encode_frame, header, lark_encrypt, lark_signature

DEFAULT_APP_ID = "cli_fake0000000001"
DEFAULT_APP_SECRET = "fake-lark-app-secret"
BOT_OPEN_ID = "ou_" + hashlib.md5(b"switchboard-fake-lark-bot").hexdigest()
TENANT_KEY = "2ca1d211f64f6438"
MAX_IMAGE = 10 * 1024 * 1024
MSG_PATH_RE = re.compile(r"^/open-apis/im/v1/messages/([A-Za-z0-9_-]+)/reply$")
ONE_MSG_PATH_RE = re.compile(r"^/open-apis/im/v1/messages/([A-Za-z0-9_-]+)$")
RES_PATH_RE = re.compile(r"^/open-apis/im/v1/messages/([A-Za-z0-9_-]+)/resources/([A-Za-z0-9_-]+)$")
POST_TAGS = ("text", "a", "at", "img", "media", "emotion", "md", "hr", "code_block")


def _api_error(http_status, code, msg):
    return json_reply(http_status, {"code": code, "msg": msg})


def _ok(data=None, **extra):
    body = {"code": 0, "msg": "success"}
    if data is not None:
        body["data"] = data
    body.update(extra)
    return json_reply(200, body)


class _Conn(object):
    def __init__(self, ws, service_id):
        self.ws, self.service_id = ws, service_id


class FakeLark(object):
    def __init__(self, host="127.0.0.1", port=0, verbose=False):
        self.host = host
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.RLock()
        self.app_id, self.app_secret = DEFAULT_APP_ID, DEFAULT_APP_SECRET
        self.encrypt_key, self.verification_token = "", "fake-verification-token"
        self.token_ttl, self.ping_interval, self.bot_name = 7200, 120, "Switchboard"
        self._reset_state()
        self._tokens = {}  # token -> expiry (time.time())
        self._current_token = None
        self._tickets = set()
        self._conns = []  # loop thread only

    def _reset_state(self):
        self._sent, self._messages, self._uuids = [], {}, {}
        self._images, self._resources, self._fails = {}, {}, []
        self._state = {"token_calls": 0, "tokens_issued": 0, "endpoint_calls": 0,
                       "refused_handshakes": 0, "pings": [], "acks": [], "webhooks": [],
                       "connections": 0}

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self):
        self._lt.start()

        async def serve():
            self._ws_server = await websockets.serve(
                self._ws, self.host, 0, process_request=self._handshake, max_size=16 << 20,
                ping_interval=None)
            return self._ws_server.sockets[0].getsockname()[1]
        self.ws_port = self._lt.run(serve())
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

    # -- Open API -----------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if path.startswith("/_control/"):
            return self._control(method, path[len("/_control/"):], query, body)
        with self._lock:
            for rule in self._fails:
                if rule["times"] > 0 and path.startswith(rule["path"]):
                    rule["times"] -= 1
                    return _api_error(rule["status"], rule["code"], rule["msg"])
            if method == "POST" and path == "/open-apis/auth/v3/tenant_access_token/internal":
                return self._token(body)
            if method == "POST" and path == "/callback/ws/endpoint":
                return self._endpoint(body)
            auth = headers.get("authorization", "")
            if not auth.startswith("Bearer ") or not auth[7:]:
                return _api_error(400, 99991661, "Missing access token for authorization. "
                                  "Please make a request with token attached.")
            if self._tokens.get(auth[7:], 0) < time.time():
                return _api_error(400, 99991663, "Invalid access token for authorization. "
                                  "Please make a request with token attached.")
            if method == "GET" and path == "/open-apis/bot/v3/info":
                return json_reply(200, {"code": 0, "msg": "ok", "bot": {
                    "activate_status": 2, "app_name": self.bot_name,
                    "avatar_url": "https://example.invalid/avatar.png", "ip_white_list": [],
                    "open_id": BOT_OPEN_ID}})
            if method == "POST" and path == "/open-apis/im/v1/messages":
                return self._send(query, None, body)
            m = MSG_PATH_RE.match(path)
            if method == "POST" and m:
                return self._send(query, m.group(1), body)
            if method == "POST" and path == "/open-apis/im/v1/images":
                return self._upload(headers, body)
            m = ONE_MSG_PATH_RE.match(path)
            if method == "PATCH" and m:
                return self._patch(m.group(1), body)
            if method == "DELETE" and m:
                return self._recall(m.group(1))
            if method == "GET" and m:
                item = self._messages.get(m.group(1), {}).get("item")
                if item is None:
                    return _api_error(400, 230011, "The message is not found")
                return _ok({"items": [item]})
            m = RES_PATH_RE.match(path)
            if method == "GET" and m:
                res = self._resources.get((m.group(1), m.group(2)))
                if res is None or query.get("type") not in ("image", "file"):
                    return _api_error(400, 234003, "File not in msg.")
                return Reply(200, res[0], res[1])
        return _api_error(404, 404, "404 page not found")

    def _token(self, body):
        req = parse_json_body(body)
        self._state["token_calls"] += 1
        if req.get("app_id") != self.app_id or req.get("app_secret") != self.app_secret:
            return _api_error(400, 10014, "app secret invalid")
        now = time.time()
        tok = self._current_token
        if tok is None or self._tokens.get(tok, 0) - now < 30 * 60:
            tok = "t-" + secrets.token_hex(20)
            self._tokens[tok] = now + self.token_ttl
            self._current_token = tok
            self._state["tokens_issued"] += 1
        return json_reply(200, {"code": 0, "msg": "ok", "tenant_access_token": tok,
                                "expire": max(1, int(self._tokens[tok] - now))})

    def _endpoint(self, body):
        req = parse_json_body(body)
        self._state["endpoint_calls"] += 1
        if req.get("AppID") != self.app_id or req.get("AppSecret") != self.app_secret:
            return json_reply(200, {"code": 1000040351, "msg": "invalid app", "data": {}})
        ticket = secrets.token_hex(8)
        self._tickets.add(ticket)
        service_id = random.randint(1, 1 << 30)
        url = ("ws://127.0.0.1:%d/ws/v2?fpid=1&aid=1&device_id=%d&access_key=%s&service_id=%d"
               "&ticket=%s" % (self.ws_port, random.randint(1, 1 << 40), secrets.token_hex(8),
                               service_id, ticket))
        return json_reply(200, {"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": {
            "ReconnectCount": -1, "ReconnectInterval": 120, "ReconnectNonce": 30,
            "PingInterval": self.ping_interval}}})

    @staticmethod
    def _check_content(msg_type, content, images):
        if not isinstance(content, str):
            return "content must be a JSON string"
        try:
            c = json.loads(content)
        except ValueError:
            return "content is not JSON"
        if not isinstance(c, dict):
            return "content is not an object"
        if msg_type == "text":
            return None if isinstance(c.get("text"), str) and c["text"] else "text is empty"
        if msg_type == "image":
            return None if c.get("image_key") in images else "unknown image_key"
        if msg_type == "post":
            if not c:
                return "post has no language"
            for lang in c.values():
                paras = lang.get("content") if isinstance(lang, dict) else None
                if not isinstance(paras, list):
                    return "post content must be a list of paragraphs"
                for p in paras:
                    if not isinstance(p, list):
                        return "a paragraph must be a list"
                    for e in p:
                        if not isinstance(e, dict) or e.get("tag") not in POST_TAGS:
                            return "unknown post tag"
                        if e["tag"] == "at" and not e.get("user_id"):
                            return "at without user_id"
            return None
        if msg_type in ("file", "audio", "media", "sticker", "interactive", "share_chat",
                        "share_user"):
            return None
        return "unknown msg_type"

    def _send(self, query, reply_to, body):
        try:
            req = parse_json_body(body)
        except BadRequest:
            return _api_error(400, 9499, "Bad Request")
        if reply_to is None:
            id_type = query.get("receive_id_type", "")
            if id_type not in ("open_id", "union_id", "user_id", "email", "chat_id"):
                return _api_error(400, 99992402, "field validation failed: receive_id_type")
            if not req.get("receive_id"):
                return _api_error(400, 99992402, "field validation failed: receive_id")
            prefix = {"open_id": "ou_", "chat_id": "oc_", "union_id": "on_"}.get(id_type)
            if prefix and not str(req["receive_id"]).startswith(prefix):
                return _api_error(400, 230001, "invalid receive_id")
            chat_id = req["receive_id"] if id_type == "chat_id" else "oc_p2p_" + req["receive_id"]
        else:
            parent = self._messages.get(reply_to)
            if parent is None:
                return _api_error(400, 230011, "The message is not found")
            chat_id = parent["chat_id"]
        msg_type = req.get("msg_type")
        problem = self._check_content(msg_type, req.get("content"), self._images)
        if problem:
            return _api_error(400, 230001, "invalid message content: " + problem)
        uuid = req.get("uuid")
        if uuid and uuid in self._uuids and time.time() - self._uuids[uuid][1] < 3600:
            return _ok(self._uuids[uuid][0])
        mid = "om_" + secrets.token_hex(16)
        now_ms = str(int(time.time() * 1000))
        data = {"message_id": mid, "root_id": reply_to or "", "parent_id": reply_to or "",
                "msg_type": msg_type, "create_time": now_ms, "update_time": now_ms,
                "deleted": False, "updated": False, "chat_id": chat_id,
                "sender": {"id": self.app_id, "id_type": "app_id", "sender_type": "app",
                           "tenant_key": TENANT_KEY},
                "body": {"content": req["content"]}}
        self._messages[mid] = {"chat_id": chat_id, "item": data}
        if uuid:
            self._uuids[uuid] = (data, time.time())
        self._sent.append({"kind": "reply" if reply_to else "create",
                           "receive_id_type": query.get("receive_id_type"),
                           "receive_id": req.get("receive_id"), "reply_to": reply_to,
                           "msg_type": msg_type, "content": json.loads(req["content"]),
                           "uuid": uuid, "message_id": mid, "chat_id": chat_id,
                           "reply_in_thread": req.get("reply_in_thread"), "updates": [],
                           "deleted": False})
        return _ok(data)

    def _own_message(self, mid):
        for record in self._sent:
            if record["message_id"] == mid:
                return record
        return None

    @staticmethod
    def _shared_card(content):
        if not isinstance(content, dict):
            return False
        config = content.get("config")
        return isinstance(config, dict) and config.get("update_multi") is True

    def _patch(self, mid, body):
        try:
            req = parse_json_body(body)
        except BadRequest:
            return _api_error(400, 9499, "Bad Request")
        record = self._own_message(mid)
        if record is None or record["deleted"]:
            return _api_error(400, 230011, "The message is not found")
        if record["msg_type"] != "interactive":
            return _api_error(400, 230001, "invalid message content: not a card")
        try:
            card = json.loads(req.get("content"))
        except (TypeError, ValueError):
            return _api_error(400, 230001, "invalid message content: content is not JSON")
        if not self._shared_card(record["content"]) or not self._shared_card(card):
            return _api_error(400, 230099, "the card is not a shared card (update_multi)")
        now = time.time()
        if sum(1 for u in record["updates"] if now - u["time"] < 1.0) >= 5:
            return _api_error(400, 230020, "This operation triggers the frequency limit.")
        record["updates"].append({"content": card, "time": now})
        return _ok({})

    def _recall(self, mid):
        record = self._own_message(mid)
        if record is None or record["deleted"]:
            return _api_error(400, 230011, "The message is not found")
        record["deleted"] = True
        return _ok({})

    def _upload(self, headers, body):
        ctype = headers.get("content-type", "")
        if not ctype.startswith("multipart/form-data"):
            return _api_error(400, 234001, "Invalid request param.")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + body)
        if not msg.is_multipart():
            return _api_error(400, 234001, "Invalid request param.")
        fields = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = part.get_payload(decode=True) or b""
        if fields.get("image_type") not in (b"message", b"avatar") or not fields.get("image"):
            return _api_error(400, 234001, "Invalid request param.")
        if len(fields["image"]) > MAX_IMAGE:
            return _api_error(400, 234006, "The file size exceed the max value.")
        key = "img_v3_" + secrets.token_hex(12)
        self._images[key] = len(fields["image"])
        return _ok({"image_key": key})

    # -- long connection ----------------------------------------------------------------------

    async def _handshake(self, path, request_headers):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(path).query))
        ticket = query.get("ticket")
        with self._lock:
            ok = ticket in self._tickets
            self._tickets.discard(ticket)
            if not ok:
                self._state["refused_handshakes"] += 1
        if not ok:
            return (http.HTTPStatus.FORBIDDEN, [("Handshake-Status", "514"), ("Handshake-Msg", "auth failed"),
                          ("Handshake-Autherrcode", "1000040350")], b"forbidden\n")
        return None

    async def _ws(self, ws, path=None):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(ws.path).query))
        conn = _Conn(ws, int(query.get("service_id", "0")))
        self._conns.append(conn)
        with self._lock:
            self._state["connections"] += 1
        try:
            async for raw in ws:
                if isinstance(raw, str):
                    await ws.close(1003, "binary frames only")
                    return
                try:
                    f = decode_frame(raw)
                except ValueError:
                    await ws.close(1003, "malformed frame")
                    return
                await self._on_frame(conn, f)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._conns.remove(conn)

    async def _on_frame(self, conn, f):
        if f["method"] == 0 and header(f, "type") == "ping":
            with self._lock:
                self._state["pings"].append({"service": f["service"], "time": time.time()})
                interval = self.ping_interval
            pong = {"SeqID": 0, "LogID": 0, "service": conn.service_id, "method": 0,
                    "headers": [("type", "pong")],
                    "payload": dumps({"PingInterval": interval}).encode()}
            await conn.ws.send(encode_frame(pong))
        elif f["method"] == 1:
            try:
                answer = json.loads(f["payload"].decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                answer = {}
            with self._lock:
                self._state["acks"].append({
                    "message_id": header(f, "message_id"), "code": answer.get("code"),
                    "biz_rt": header(f, "biz_rt"), "type": header(f, "type")})

    async def _push(self, payload, parts):
        if not self._conns:
            return {"delivered": False}
        conn = self._conns[-1]
        mid = secrets.token_hex(8)
        n = max(1, int(parts or 1))
        size = -(-len(payload) // n)
        frames = []
        for seq in range(n):
            frames.append({"SeqID": random.randint(1, 1 << 40), "LogID": random.randint(1, 1 << 40),
                           "service": conn.service_id, "method": 1,
                           "headers": [("type", "event"), ("message_id", mid), ("sum", str(n)),
                                       ("seq", str(seq)), ("trace_id", secrets.token_hex(8))],
                           "payload": payload[seq * size:(seq + 1) * size]})
        if n > 1:
            random.shuffle(frames)
        try:
            for f in frames:
                await conn.ws.send(encode_frame(f))
        except websockets.exceptions.ConnectionClosed:
            return {"delivered": False}
        return {"delivered": True, "frame_message_id": mid}

    async def _sockets(self, name, req):
        n = 0
        for c in list(self._conns):
            if name == "drop":
                c.ws.transport.abort()
            else:
                await c.ws.close(int(req.get("code", 1000)), str(req.get("reason", "")))
            n += 1
        return n

    # -- events and webhook delivery ----------------------------------------------------------

    def _build_message(self, req):
        chat_type = req.get("chat_type", "p2p")
        if chat_type not in ("p2p", "group"):
            raise BadRequest("chat_type must be p2p or group")
        sender = req.get("sender") or "ou_" + hashlib.md5(b"fake-user").hexdigest()
        chat_id = req.get("chat_id") or ("oc_" + hashlib.md5(sender.encode()).hexdigest()
                                         if chat_type == "p2p" else None)
        if not chat_id:
            raise BadRequest("a group message needs chat_id")
        mentions, prefix = [], ""
        people = ([{"open_id": BOT_OPEN_ID, "name": self.bot_name}] if req.get("mention_bot")
                  else []) + list(req.get("mentions") or [])
        for i, p in enumerate(people, 1):
            key = "@_user_%d" % i
            mentions.append({"key": key, "id": {"open_id": p["open_id"],
                                                "union_id": "on_" + p["open_id"][3:],
                                                "user_id": None},
                             "name": p.get("name", "user"), "tenant_key": TENANT_KEY})
            prefix += key + " "
        msg_type = req.get("message_type", "text")
        content = req.get("content")
        if content is None:
            content = {"text": prefix + req.get("text", "")}
        mid = req.get("message_id") or "om_" + secrets.token_hex(16)
        message = {"message_id": mid, "root_id": req.get("parent_id", ""),
                   "parent_id": req.get("parent_id", ""),
                   "create_time": str(int(time.time() * 1000)),
                   "update_time": str(int(time.time() * 1000)), "chat_id": chat_id,
                   "chat_type": chat_type, "message_type": msg_type,
                   "content": content if isinstance(content, str) else dumps(content),
                   "user_agent": "Mozilla/5.0"}
        if mentions:
            message["mentions"] = mentions
        item = {k: message[k] for k in ("message_id", "root_id", "parent_id", "create_time",
                                        "update_time", "chat_id")}
        item.update(msg_type=msg_type, deleted=False, updated=False,
                    sender={"id": sender, "id_type": "open_id", "sender_type": "user",
                            "tenant_key": TENANT_KEY},
                    body={"content": message["content"]})
        with self._lock:
            self._messages[mid] = {"chat_id": chat_id, "item": item}
        return {"schema": "2.0", "header": {
            "event_id": req.get("event_id") or secrets.token_hex(16),
            "token": "bad-token" if req.get("bad_token") else self.verification_token,
            "create_time": str(int(time.time() * 1000)), "event_type": "im.message.receive_v1",
            "tenant_key": TENANT_KEY, "app_id": self.app_id},
            "event": {"sender": {"sender_id": {"union_id": "on_" + sender[3:],
                                               "user_id": None, "open_id": sender},
                                 "sender_type": req.get("sender_type", "user"),
                                 "tenant_key": TENANT_KEY},
                      "message": message}}

    def _webhook(self, url, obj, req):
        raw = dumps(obj).encode("utf-8")
        headers = {"Content-Type": "application/json; charset=utf-8",
                   "User-Agent": "Go-http-client/1.1"}
        key = req.get("encrypt_key", self.encrypt_key)
        if key and not req.get("plain"):
            raw = dumps({"encrypt": lark_encrypt(key, raw)}).encode("utf-8")
            ts, nonce = str(int(time.time())), secrets.token_hex(8)
            headers.update({"X-Lark-Request-Timestamp": ts, "X-Lark-Request-Nonce": nonce,
                            "X-Lark-Signature": lark_signature(ts, nonce, key, raw)})
            if req.get("bad_signature"):
                headers["X-Lark-Signature"] = "0" * 64
        parts = urllib.parse.urlsplit(url)
        started = time.monotonic()
        record = {"status": None, "body": None, "error": None}
        try:
            c = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=10)
            c.request("POST", (parts.path or "/") + ("?" + parts.query if parts.query else ""),
                      body=raw, headers=headers)
            r = c.getresponse()
            record["status"], data = r.status, r.read()
            c.close()
            try:
                record["body"] = json.loads(data.decode("utf-8"))
            except ValueError:
                record["body"] = data.decode("utf-8", "replace")
        except OSError as e:
            record["error"] = str(e)
        record["elapsed"] = time.monotonic() - started
        with self._lock:
            self._state["webhooks"].append(record)
        return record

    def _deliver(self, envelope, req):
        out = {"event_id": envelope.get("header", {}).get("event_id"), "event": envelope}
        msg = envelope.get("event", {}).get("message") or {}
        out["message_id"] = msg.get("message_id")
        if req.get("via", "ws") == "webhook":
            if not req.get("url"):
                raise BadRequest("webhook delivery needs url")
            out["delivery"] = self._webhook(req["url"], envelope, req)
        else:
            out["delivery"] = self._lt.run(self._push(dumps(envelope).encode("utf-8"),
                                                      req.get("parts")))
        return out

    # -- control ------------------------------------------------------------------------------

    def _control(self, method, name, query, body):
        if method == "GET" and name == "sent":
            with self._lock:
                return json_reply(200, {"sent": list(self._sent)})
        if method == "GET" and name == "state":
            connected = self._lt.run(self._count())
            with self._lock:
                s = json.loads(dumps(self._state))
            s["connected"] = connected
            s["images"] = [{"image_key": k, "size": v} for k, v in self._images.items()]
            return json_reply(200, s)
        if method != "POST":
            return json_reply(404, {"error": "no such control"})
        req = parse_json_body(body)
        if name == "config":
            with self._lock:
                for k in ("app_id", "app_secret", "encrypt_key", "verification_token",
                          "bot_name"):
                    if k in req:
                        setattr(self, k, str(req[k]))
                if "token_ttl" in req:
                    self.token_ttl = int(req["token_ttl"])
                if "ping_interval" in req:
                    self.ping_interval = int(req["ping_interval"])
            return json_reply(200, {"ok": True, "bot_open_id": BOT_OPEN_ID})
        if name == "message":
            return json_reply(200, self._deliver(self._build_message(req), req))
        if name == "event":
            if not isinstance(req.get("event"), dict):
                raise BadRequest("event must be an object")
            return json_reply(200, self._deliver(req["event"], req))
        if name == "challenge":
            challenge = secrets.token_hex(12)
            record = self._webhook(req.get("url", ""), {
                "challenge": challenge, "token": req.get("token", self.verification_token),
                "type": "url_verification"}, req)
            body = record.get("body")
            record["challenge"] = challenge
            record["echoed"] = isinstance(body, dict) and body.get("challenge") == challenge
            return json_reply(200, record)
        if name == "resource":
            try:
                data = base64.b64decode(req["content_base64"])
            except (KeyError, ValueError):
                raise BadRequest("content_base64 is required")
            with self._lock:
                self._resources[(req["message_id"], req["key"])] = (
                    data, req.get("content_type", "image/png"))
            return json_reply(200, {"ok": True})
        if name == "expire_tokens":
            with self._lock:
                self._tokens = {t: 0 for t in self._tokens}
                self._current_token = None
            return json_reply(200, {"ok": True})
        if name == "fail":
            with self._lock:
                self._fails.append({"path": req.get("path", ""), "status": int(req.get(
                    "status", 400)), "code": int(req.get("code", 230002)), "msg": req.get(
                    "msg", "Bot/User can NOT be out of the chat."),
                    "times": int(req.get("times", 1))})
            return json_reply(200, {"ok": True})
        if name in ("drop", "close"):
            return json_reply(200, {"connections": self._lt.run(self._sockets(name, req))})
        if name == "reset":
            with self._lock:
                self._reset_state()
            return json_reply(200, {"ok": True})
        return json_reply(404, {"error": "no such control"})

    async def _count(self):
        return len(self._conns)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake Lark Open API + long connection for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeLark(args.host, args.port, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_LARK_PORT=%d FAKE_LARK_WS_PORT=%d" % (
        f.port, f.ws_port))


if __name__ == "__main__":
    sys.exit(main())
