#!/usr/bin/env python3
"""Fake WeCom AI bot (企业微信智能机器人) for Switchboard end-to-end tests: the long connection
server and a driver of the webhook (callback) mode.

Built from /work/shared/protocols/platforms.md 4.5 items 9-12, the official docs
(developer.work.weixin.qq.com/document/path/101033 callback format, /101031 passive replies,
/101463 long connection) and the official SDK WecomTeam/aibot-node-sdk (src/ws.ts, types/), with
LangBot's libs/wecom_ai_bot_api/ for what a client does. Crypto: wecombot_aes.py (stdlib).

Long connection, ws://127.0.0.1:WSPORT/ (any path), JSON text frames
    {"cmd", "headers": {"req_id"}, "body"} both ways; an acknowledgement is
    {"headers": {"req_id"}, "errcode", "errmsg"} with the req_id of the frame it answers.
    aibot_subscribe {bot_id, secret}: right pair -> ack errcode 0; wrong -> ack with
        config auth_errcode (default 40058, "invalid bot_id or secret") and the socket is closed
        (1000). A second subscription of the same bot on another socket sends the older one an
        aibot_event_callback with event.eventtype "disconnected_event" and closes it.
        Any other frame before a successful subscription -> ack errcode 846609 ("not subscribed").
    ping -> ack errcode 0 (unless config mute_pings; counted in `pings`).
    aibot_respond_msg (req_id of a callback this socket delivered; else errcode 846605 "invalid
        req_id"): body msgtype stream {id, finish, content <= 20480 bytes} or markdown {content}
        or text {content}; stream.feedback {id: 1..256 bytes} optional (else 40058 naming
        it); a stream whose finish was already sent, or a frame later than config
        stream_ttl (360 s) after the callback -> 846608 "stream message update expired"; content
        over 20480 bytes or a wrong shape -> 40058 with errmsg naming the field. Recorded in
        `sent` with kind "respond".
    aibot_send_msg {chatid, msgtype markdown|text, markdown|text {content}} -> ack 0, recorded
        with kind "send"; no chatid or content -> 40058.
    Unknown cmd -> ack errcode 40058 "unknown cmd".
Media: GET /media/<id> -> the encrypted bytes of an image given to /_control/message (AES-256-CBC,
    key = base64 of the callback's image.aeskey, IV = key[:16], PKCS#7 to 32 bytes); webhook
    images are encrypted with the EncodingAESKey instead and carry no aeskey.

Webhook driver (the bot's callback URL, crypto WXBizMsgCrypt with receive id ""):
    POST {url}?msg_signature&timestamp&nonce {"encrypt"}; the answer, when its body is a JSON
    {"encrypt", "msgsignature", "timestamp", "nonce"}, is checked (signature) and decrypted.

Control API (no auth; JSON; errors {"error"} with 400/404/409)
    POST /_control/config {bot_id?, secret?, token?, encoding_aes_key?, auth_errcode?,
                           mute_pings?, stream_ttl?}
    POST /_control/message {chattype: single|group, userid, chatid? (group), text?, msgtype?
                           (text|mixed|image|voice|file), images?[base64 bytes], msgid?,
                           req_id?} -> {delivered, req_id, msgid, body}: an aibot_msg_callback on
                           the newest subscribed socket (409 when none)
    POST /_control/event {eventtype, userid?, chattype?, chatid?, feedback?} -> {delivered,
                           req_id, body}: aibot_event_callback. For eventtype "feedback_event",
                           feedback = {id (a reply's stream.feedback.id), type (1 accurate,
                           2 inaccurate, 3 withdrawn), content?, inaccurate_reason_list?
                           ([int] reason codes)} becomes event.feedback_event; content and the
                           reasons are sent with type 2 only.
    POST /_control/drop  -> {connections}: every socket closed without a close frame
    GET  /_control/ws    -> {connections, connected, subscribed, subscribes[{bot_id, ok}],
                           pings, closes[{code, by}], other[frames not understood]}
    GET  /_control/sent  -> {sent: [{kind, req_id, body, at}]}
    POST /_control/reset -> forgets sent, callbacks, counters (config kept)
    POST /_control/webhook/verify {url, forge?} -> {status, body, echo}: GET verification with a
                           random echostr (`echo` is its plaintext)
    POST /_control/webhook/message {url, chattype, userid, chatid?, text?, msgtype?, images?,
                           msgid?, forge?} -> {status, body (raw), reply (decrypted JSON or
                           null), msgid, signature_ok}
    POST /_control/webhook/refresh {url, stream_id, forge?} -> same shape, for one refresh
    POST /_control/webhook/poll {url, stream_id, interval?: 0.2, timeout?: 15} -> {answers:
                           [reply...], finished}: refreshes until one says finish
    POST /_control/webhook/event {url, eventtype, userid?, chattype?, chatid?, feedback?,
                           forge?} -> as message (the bot answers events with an encrypted {})
    POST /_control/webhook/raw {url, plaintext (a JSON value to encrypt), forge?} -> as message

Command line: python3 fake_wecombot.py [--port 0] [--host 127.0.0.1] [--verbose]
prints exactly "FAKE_WECOMBOT_PORT=<http> FAKE_WECOMBOT_WS_PORT=<ws>" once listening.
"""

import argparse
import asyncio
import base64
import http.client
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, json_reply,
                            parse_json_body, serve_cli, websockets)
import wecombot_aes as aes

DEFAULT_BOT_ID = "aibfake0000000000001"
DEFAULT_SECRET = "fake-wecombot-secret-0123456789"
DEFAULT_TOKEN = "fakewecombottoken"
DEFAULT_AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
MAX_CONTENT = 20480
ERR_NOT_SUBSCRIBED = 846609
ERR_INVALID_REQ_ID = 846605
ERR_STREAM_EXPIRED = 846608
ERR_BAD_REQUEST = 40058
MAX_FEEDBACK_ID = 256  # ReplyFeedback.id: "有效长度为 256 字节以内"


def _ms():
    return int(time.time() * 1000)


def _req_id(prefix):
    return "%s_%d_%s" % (prefix, _ms(), secrets.token_hex(4))


class _Conn(object):
    def __init__(self, ws):
        self.ws = ws
        self.subscribed = False
        self.closed_by_server = False
        self.callbacks = {}  # req_id -> {at, finished stream ids}


class FakeWeComBot(object):
    def __init__(self, host="127.0.0.1", port=0, verbose=False):
        self.host = host
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.Lock()
        self.config = {"bot_id": DEFAULT_BOT_ID, "secret": DEFAULT_SECRET, "token": DEFAULT_TOKEN,
                       "encoding_aes_key": DEFAULT_AES_KEY, "auth_errcode": 40058,
                       "mute_pings": False, "stream_ttl": 360.0}
        self._media = {}  # id -> encrypted bytes
        self._reset_state()

    def _reset_state(self):
        self._conns = []  # loop thread only
        self._sent = []
        self._ws = {"connections": 0, "subscribes": [], "pings": 0, "closes": [], "other": []}

    def start(self):
        self._lt.start()

        async def serve():
            self._server = await websockets.serve(self._socket, self.host, 0, max_size=1 << 20,
                                                  ping_interval=None)
            return self._server.sockets[0].getsockname()[1]
        self.ws_port = self._lt.run(serve())
        return self._http.start()

    @property
    def port(self):
        return self._http.server_address[1]

    def stop(self):
        self._http.stop()

        async def close():
            self._server.close()
            await self._server.wait_closed()
        self._lt.stop(close)

    # -- long connection ---------------------------------------------------------------------

    async def _socket(self, ws, path=None):
        conn = _Conn(ws)
        self._conns.append(conn)
        self._ws["connections"] += 1
        try:
            while True:
                raw = await ws.recv()
                if not await self._on_frame(conn, raw):
                    break
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._conns.remove(conn)
            if not conn.closed_by_server:
                self._ws["closes"].append({"code": ws.close_code, "by": "client"})

    async def _ack(self, conn, req_id, errcode=0, errmsg="ok"):
        await conn.ws.send(json.dumps({"headers": {"req_id": req_id}, "errcode": errcode,
                                       "errmsg": errmsg}))

    async def _on_frame(self, conn, raw):
        try:
            frame = json.loads(raw)
            cmd = frame.get("cmd", "")
            req_id = (frame.get("headers") or {}).get("req_id", "")
            body = frame.get("body")
        except (ValueError, AttributeError):
            self._ws["other"].append(str(raw)[:200])
            return True
        if not isinstance(req_id, str) or not req_id:
            self._ws["other"].append(frame)
            return True
        if cmd == "aibot_subscribe":
            body = body if isinstance(body, dict) else {}
            ok = (body.get("bot_id") == self.config["bot_id"] and
                  body.get("secret") == self.config["secret"])
            self._ws["subscribes"].append({"bot_id": body.get("bot_id"), "ok": ok})
            if not ok:
                await self._ack(conn, req_id, self.config["auth_errcode"],
                                "invalid bot_id or secret")
                conn.closed_by_server = True
                self._ws["closes"].append({"code": 1000, "by": "server"})
                await conn.ws.close(1000, "subscribe failed")
                return False
            for other in list(self._conns):
                if other is not conn and other.subscribed:
                    await other.ws.send(json.dumps({
                        "cmd": "aibot_event_callback", "headers": {"req_id": _req_id("event")},
                        "body": {"msgid": secrets.token_hex(8), "aibotid": self.config["bot_id"],
                                 "create_time": int(time.time()), "msgtype": "event",
                                 "event": {"eventtype": "disconnected_event"}}}))
                    other.closed_by_server = True
                    self._ws["closes"].append({"code": 1000, "by": "server"})
                    await other.ws.close(1000, "new connection")
            conn.subscribed = True
            await self._ack(conn, req_id)
            return True
        if not conn.subscribed:
            await self._ack(conn, req_id, ERR_NOT_SUBSCRIBED, "not subscribed")
            return True
        if cmd == "ping":
            self._ws["pings"] += 1
            if not self.config["mute_pings"]:
                await self._ack(conn, req_id)
            return True
        if cmd == "aibot_respond_msg":
            code, msg = self._check_respond(conn, req_id, body)
            if code == 0:
                with self._lock:
                    self._sent.append({"kind": "respond", "req_id": req_id, "body": body,
                                       "at": time.time()})
            await self._ack(conn, req_id, code, msg)
            return True
        if cmd == "aibot_send_msg":
            code, msg = self._check_send(body)
            if code == 0:
                with self._lock:
                    self._sent.append({"kind": "send", "req_id": req_id, "body": body,
                                       "at": time.time()})
            await self._ack(conn, req_id, code, msg)
            return True
        self._ws["other"].append(frame)
        await self._ack(conn, req_id, ERR_BAD_REQUEST, "unknown cmd")
        return True

    def _check_respond(self, conn, req_id, body):
        cb = conn.callbacks.get(req_id)
        if cb is None:
            return ERR_INVALID_REQ_ID, "invalid req_id"
        if not isinstance(body, dict):
            return ERR_BAD_REQUEST, "body must be an object"
        msgtype = body.get("msgtype")
        if msgtype == "stream":
            stream = body.get("stream")
            if not isinstance(stream, dict) or not isinstance(stream.get("id"), str) \
                    or not stream["id"] or not isinstance(stream.get("finish"), bool) \
                    or not isinstance(stream.get("content", ""), str):
                return ERR_BAD_REQUEST, "stream needs id, finish and content"
            if stream["id"] in cb["finished"] or time.time() - cb["at"] > self.config["stream_ttl"]:
                return ERR_STREAM_EXPIRED, "stream message update expired"
            if len(stream.get("content", "").encode("utf-8")) > MAX_CONTENT:
                return ERR_BAD_REQUEST, "stream.content exceeds 20480 bytes"
            if "feedback" in stream:
                fb = stream["feedback"]
                if not isinstance(fb, dict) or not isinstance(fb.get("id"), str) or not fb["id"] \
                        or len(fb["id"].encode("utf-8")) > MAX_FEEDBACK_ID:
                    return ERR_BAD_REQUEST, "stream.feedback.id must be 1 to 256 bytes"
            if stream["finish"]:
                cb["finished"].add(stream["id"])
            return 0, "ok"
        if msgtype in ("markdown", "text"):
            inner = body.get(msgtype)
            if not isinstance(inner, dict) or not isinstance(inner.get("content"), str):
                return ERR_BAD_REQUEST, "%s.content is required" % msgtype
            if len(inner["content"].encode("utf-8")) > MAX_CONTENT:
                return ERR_BAD_REQUEST, "%s.content exceeds 20480 bytes" % msgtype
            return 0, "ok"
        return ERR_BAD_REQUEST, "unsupported msgtype"

    def _check_send(self, body):
        if not isinstance(body, dict) or not isinstance(body.get("chatid"), str) \
                or not body["chatid"]:
            return ERR_BAD_REQUEST, "chatid is required"
        msgtype = body.get("msgtype")
        inner = body.get(msgtype) if msgtype in ("markdown", "text") else None
        if not isinstance(inner, dict) or not isinstance(inner.get("content"), str) \
                or not inner["content"]:
            return ERR_BAD_REQUEST, "markdown.content or text.content is required"
        if len(inner["content"].encode("utf-8")) > MAX_CONTENT:
            return ERR_BAD_REQUEST, "content exceeds 20480 bytes"
        return 0, "ok"

    # -- callbacks ---------------------------------------------------------------------------

    def _store_media(self, data, key_b64):
        media_id = secrets.token_hex(8)
        self._media[media_id] = aes.media_encrypt(key_b64, data)
        return "http://%s:%d/media/%s" % (self.host, self.port, media_id)

    def _message_body(self, spec, webhook):
        chattype = spec.get("chattype", "single")
        if chattype not in ("single", "group"):
            raise BadRequest("chattype must be single or group")
        userid = spec.get("userid") or "zhangsan"
        body = {"msgid": spec.get("msgid") or secrets.token_hex(16),
                "aibotid": self.config["bot_id"], "chattype": chattype,
                "from": {"userid": userid}, "create_time": int(time.time())}
        if chattype == "group":
            body["chatid"] = spec.get("chatid") or "wrkSFfCgAAtest"
        if webhook:
            body["response_url"] = "http://%s:%d/response/%s" % (self.host, self.port,
                                                                 body["msgid"])
        images = []
        for b64 in spec.get("images") or []:
            data = base64.b64decode(b64)
            if webhook:
                images.append({"url": self._store_media(data, self.config["encoding_aes_key"])})
            else:
                # The SDK docs: each download has its own aeskey in long-connection mode.
                key = base64.b64encode(os.urandom(32)).decode().rstrip("=")
                images.append({"url": self._store_media(data, key), "aeskey": key})
        msgtype = spec.get("msgtype") or ("mixed" if images and spec.get("text") else
                                          "image" if images else "text")
        body["msgtype"] = msgtype
        text = spec.get("text", "")
        if msgtype == "text":
            body["text"] = {"content": text}
        elif msgtype == "voice":
            body["voice"] = {"content": text}
        elif msgtype == "image":
            if not images:
                raise BadRequest("an image message needs images")
            body["image"] = images[0]
        elif msgtype == "mixed":
            items = []
            if text:
                items.append({"msgtype": "text", "text": {"content": text}})
            items += [{"msgtype": "image", "image": i} for i in images]
            body["mixed"] = {"msg_item": items}
        elif msgtype == "file":
            body["file"] = {"url": "http://%s:%d/media/none" % (self.host, self.port)}
        else:
            raise BadRequest("unsupported msgtype")
        return body

    def _event_body(self, spec):
        """An event callback body (the SDK's EventMessage). For eventtype feedback_event,
        spec["feedback"] = {id, type (1 accurate, 2 inaccurate, 3 withdrawn), content?,
        inaccurate_reason_list?} becomes event.feedback_event; chattype group needs a chatid."""
        chattype = spec.get("chattype", "single")
        if chattype not in ("single", "group"):
            raise BadRequest("chattype must be single or group")
        body = {"msgid": secrets.token_hex(8), "aibotid": self.config["bot_id"],
                "create_time": int(time.time()), "chattype": chattype,
                "from": {"userid": spec.get("userid") or "zhangsan"}, "msgtype": "event",
                "event": {"eventtype": spec.get("eventtype", "enter_chat")}}
        if chattype == "group":
            body["chatid"] = spec.get("chatid") or "wrkSFfCgAAtest"
        if body["event"]["eventtype"] == "feedback_event":
            fb = spec.get("feedback")
            if not isinstance(fb, dict) or not isinstance(fb.get("id"), str) or not fb["id"]:
                raise BadRequest("feedback.id (the reply's stream.feedback.id) is required")
            if fb.get("type") not in (1, 2, 3):
                raise BadRequest("feedback.type must be 1, 2 or 3")
            event = {"id": fb["id"], "type": fb["type"]}
            # content and reasons come with an "inaccurate" rating only (type 2).
            if fb["type"] == 2 and fb.get("content"):
                event["content"] = fb["content"]
            if fb["type"] == 2 and fb.get("inaccurate_reason_list"):
                event["inaccurate_reason_list"] = list(fb["inaccurate_reason_list"])
            body["event"]["feedback_event"] = event
        return body

    async def _deliver(self, cmd, body, req_id):
        live = [c for c in self._conns if c.subscribed]
        if not live:
            return False
        conn = live[-1]
        conn.callbacks[req_id] = {"at": time.time(), "finished": set()}
        await conn.ws.send(json.dumps({"cmd": cmd, "headers": {"req_id": req_id}, "body": body},
                                      ensure_ascii=False))
        return True

    async def _drop(self):
        n = 0
        for conn in list(self._conns):
            conn.closed_by_server = True
            self._ws["closes"].append({"code": 1006, "by": "server"})
            conn.ws.transport.abort()
            n += 1
        return n

    # -- webhook driver ----------------------------------------------------------------------

    def _post_encrypted(self, url, plaintext, forge=False):
        key = aes.aes_key(self.config["encoding_aes_key"])
        encrypt = aes.wx_encrypt(key, plaintext.encode("utf-8"), b"")
        timestamp, nonce = str(int(time.time())), secrets.token_hex(5)
        token = self.config["token"] if not forge else "forged-" + self.config["token"]
        signature = aes.wx_signature(token, timestamp, nonce, encrypt)
        query = urllib.parse.urlencode({"msg_signature": signature, "timestamp": timestamp,
                                        "nonce": nonce})
        status, raw = self._http_call("POST", url + "?" + query,
                                      json.dumps({"encrypt": encrypt}).encode())
        result = {"status": status, "body": raw.decode("utf-8", "replace"), "reply": None,
                  "signature_ok": None}
        if status == 200 and raw:
            try:
                env = json.loads(raw)
                result["signature_ok"] = env.get("msgsignature") == aes.wx_signature(
                    self.config["token"], str(env.get("timestamp")), str(env.get("nonce")),
                    env["encrypt"])
                message, receive_id = aes.wx_decrypt(key, env["encrypt"])
                if receive_id != b"":
                    raise ValueError("receive id %r, expected empty" % receive_id)
                result["reply"] = json.loads(message)
            except (ValueError, KeyError, TypeError) as e:
                result["error"] = "answer not a valid encrypted reply: %s" % e
        return result

    def _http_call(self, method, url, body=None, timeout=15):
        parts = urllib.parse.urlsplit(url)
        c = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        try:
            path = parts.path + ("?" + parts.query if parts.query else "")
            headers = {"Content-Type": "application/json"} if body is not None else {}
            c.request(method, path, body=body, headers=headers)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def _webhook(self, action, req):
        url = req.get("url")
        if not isinstance(url, str) or not url.startswith("http://"):
            raise BadRequest("url (http://...) is required")
        forge = bool(req.get("forge"))
        if action == "verify":
            key = aes.aes_key(self.config["encoding_aes_key"])
            echo = secrets.token_hex(8)
            echostr = aes.wx_encrypt(key, echo.encode(), b"")
            timestamp, nonce = str(int(time.time())), secrets.token_hex(5)
            token = self.config["token"] if not forge else "forged"
            query = urllib.parse.urlencode({
                "msg_signature": aes.wx_signature(token, timestamp, nonce, echostr),
                "timestamp": timestamp, "nonce": nonce, "echostr": echostr})
            status, raw = self._http_call("GET", url + "?" + query)
            return json_reply(200, {"status": status, "body": raw.decode("utf-8", "replace"),
                                    "echo": echo})
        if action == "message":
            body = self._message_body(req, webhook=True)
            result = self._post_encrypted(url, json.dumps(body, ensure_ascii=False), forge)
            result["msgid"] = body["msgid"]
            return json_reply(200, result)
        if action == "event":
            return json_reply(200, self._post_encrypted(
                url, json.dumps(self._event_body(req), ensure_ascii=False), forge))
        if action == "raw":
            return json_reply(200, self._post_encrypted(url, json.dumps(req.get("plaintext")),
                                                        forge))
        if action in ("refresh", "poll"):
            stream_id = req.get("stream_id")
            if not isinstance(stream_id, str) or not stream_id:
                raise BadRequest("stream_id is required")
            refresh = json.dumps({"msgid": secrets.token_hex(16), "aibotid":
                                  self.config["bot_id"], "chattype": "single",
                                  "from": {"userid": "zhangsan"}, "msgtype": "stream",
                                  "stream": {"id": stream_id}})
            if action == "refresh":
                return json_reply(200, self._post_encrypted(url, refresh, forge))
            interval = float(req.get("interval", 0.2))
            deadline = time.time() + float(req.get("timeout", 15))
            answers, finished = [], False
            while time.time() < deadline:
                r = self._post_encrypted(url, refresh)
                answers.append(r)
                stream = ((r.get("reply") or {}).get("stream") or {})
                if r["status"] != 200 or stream.get("finish"):
                    finished = bool(stream.get("finish"))
                    break
                time.sleep(interval)
            return json_reply(200, {"answers": answers, "finished": finished})
        raise BadRequest("unknown webhook action", 404)

    # -- HTTP --------------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if method == "GET" and path.startswith("/media/"):
            data = self._media.get(path[len("/media/"):])
            if data is None:
                return json_reply(404, {"errcode": 404, "errmsg": "no such media"})
            return Reply(200, data, "application/octet-stream")
        if not path.startswith("/_control/"):
            return json_reply(404, {"error": "not found"})
        name = path[len("/_control/"):]
        if name.startswith("webhook/"):
            return self._webhook(name[len("webhook/"):], parse_json_body(body))
        if method == "GET" and name == "ws":
            return json_reply(200, self._lt.run(self._ws_state()))
        if method == "GET" and name == "sent":
            with self._lock:
                return json_reply(200, {"sent": list(self._sent)})
        req = parse_json_body(body)
        if name == "config":
            for k in ("bot_id", "secret", "token", "encoding_aes_key", "auth_errcode",
                      "mute_pings", "stream_ttl"):
                if k in req:
                    self.config[k] = req[k]
            return json_reply(200, dict(self.config))
        if name == "reset":
            def reset():
                with self._lock:
                    self._sent = []
                self._ws = {"connections": 0, "subscribes": [], "pings": 0, "closes": [],
                            "other": []}
            self._lt.loop.call_soon_threadsafe(reset)
            self._lt.run(asyncio.sleep(0))
            return json_reply(200, {})
        if name == "message":
            msg = self._message_body(req, webhook=False)
            req_id = req.get("req_id") or _req_id("aibot_msg_callback")
            ok = self._lt.run(self._deliver("aibot_msg_callback", msg, req_id))
            if not ok:
                raise BadRequest("no subscribed long connection", 409)
            return json_reply(200, {"delivered": True, "req_id": req_id, "msgid": msg["msgid"],
                                    "body": msg})
        if name == "event":
            req_id = _req_id("aibot_event_callback")
            body_ = self._event_body(req)
            ok = self._lt.run(self._deliver("aibot_event_callback", body_, req_id))
            if not ok:
                raise BadRequest("no subscribed long connection", 409)
            return json_reply(200, {"delivered": True, "req_id": req_id, "body": body_})
        if name == "drop":
            return json_reply(200, {"connections": self._lt.run(self._drop())})
        raise BadRequest("unknown control route", 404)

    async def _ws_state(self):
        state = {k: list(v) if isinstance(v, list) else v for k, v in self._ws.items()}
        state["connected"] = len(self._conns)
        state["subscribed"] = sum(1 for c in self._conns if c.subscribed)
        return state


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake WeCom AI bot for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeWeComBot(args.host, args.port, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_WECOMBOT_PORT=%d FAKE_WECOMBOT_WS_PORT=%d" % (
        f.port, f.ws_port))


if __name__ == "__main__":
    sys.exit(main())
