#!/usr/bin/env python3
"""Fake WeCom (企业微信) server API and callback sender for Switchboard end-to-end tests: the
internal application (`wecom`) and customer service (微信客服, `wecomcs`). Python 3 standard
library only; the WXBizMsgCrypt crypto is wechat_aes.py beside this file.

Built from /work/shared/protocols/platforms.md "4.5 WeCom" (items 4.5.n) and the WeCom server
API docs (developer.work.weixin.qq.com: 获取access_token /91039, 接收消息与事件 /90238 and
加解密方案 /90968, 发送应用消息 /90236, 上传临时素材 /90253, 获取临时素材 /90254, 微信客服
接收消息和事件 /94670 (sync_msg), 发送消息 /94677). Where the docs give no error code the fake's
choice is marked "(fake)".

API, base http://127.0.0.1:PORT/cgi-bin (api_base_url of the bots). Answers are JSON
{errcode, errmsg, ...}, HTTP 200 even for errors, as WeCom does.
    GET  /gettoken?corpid&corpsecret -> {errcode:0, errmsg:"ok", access_token, expires_in:7200}
         wrong corpid 40013 "invalid corpid", wrong secret 40001 "invalid credential". The app
         secret gives a token for the app APIs, the customer-service secret one for /kf/*.
    Every other call needs ?access_token: missing 41001, unknown 40014 "invalid access_token",
         expired (token_ttl, or /_control/expire_tokens) 42001 "access_token expired".
    POST /message/send {touser, msgtype text|image|file|voice|markdown, agentid, text{content},
         image|file|voice{media_id}, safe...} -> {errcode:0, errmsg:"ok", invaliduser:"", msgid}.
         agentid must be the app's (40056 "invalid agentid"); text content over 2048 bytes is
         truncated, as the docs say ("超过将截断"; the record in /_control/sent then has
         "truncated": true); unknown media_id 40007.
    POST /media/upload?type=image|voice|video|file multipart part "media" (filename, and
         filelength in its Content-Disposition) -> {errcode:0, errmsg:"", type, media_id,
         created_at}; no part 41007 (fake) "media data missing"; image over 10 MB 40009
         "invalid image size"; bad type 40004 "invalid media type".
    GET  /media/get?media_id -> the bytes (their Content-Type, Content-disposition filename);
         unknown id -> JSON 40007 "invalid media_id".
    POST /kf/sync_msg {cursor?, token?, limit? (<=1000), voice_format?, open_kfid?} ->
         {errcode:0, errmsg:"ok", next_cursor, has_more:0|1, msg_list:[{msgid, open_kfid,
         external_userid, send_time, origin:3|4|5, servicer_userid?, msgtype, text{content}|
         image{media_id}|event{...}}]}. Without a cursor it starts at the oldest message kept.
         A token must be one a callback carried in the last 10 minutes: 95007 "invalid msg
         token"; an unknown cursor 95012 (fake) "invalid cursor"; limit over 1000 44004 (fake).
         Pages hold at most page_size messages (config, default 1000), so has_more can be tested.
    POST /kf/send_msg {touser, open_kfid, msgid?, msgtype text|image|file, text{content <= 2048
         bytes, else 45002 (fake) "content size out of limit"}|image{media_id}} -> {errcode:0,
         errmsg:"ok", msgid}. An unknown open_kfid 95000
         (fake) "invalid open_kfid"; a customer who never wrote to that account 95018
         "send msg not allowed" (the 48 h / 5 message window is not modelled).

Callbacks (4.5.1-4.5.5, 4.5.13): POST <url>?msg_signature&timestamp&nonce with body
    <xml><ToUserName>corpid</ToUserName><AgentID>..</AgentID><Encrypt>..</Encrypt></xml>, the
    inner XML encrypted with the EncodingAESKey and receive id = corpid, msg_signature =
    sha1(sort(token, timestamp, nonce, Encrypt)). The answer's status, body and time are kept.
    URL verification: GET <url>?msg_signature&timestamp&nonce&echostr; the bot must answer the
    decrypted echostr exactly.

Control API (no auth; JSON; errors {"error"} with 400)
    POST /_control/config {corpid?, secret?, kf_secret?, token?, encoding_aes_key?, agent_id?,
                           token_ttl?, page_size?, timeout?}
    POST /_control/verify {url, forge?} -> {status, body, expected, ok}
    POST /_control/app_message {url, from, content? | image_base64? (+content_type), msgtype?,
                           msg_id?, agent_id?, times?: 1, forge?} -> {msg_id, media_id?,
                           deliveries:[{status, body, elapsed, error}]}. forge: one of
                           "signature", "receive_id", "key", "stale" (timestamp an hour old).
                           times > 1 delivers the same request again (WeCom's retries).
    POST /_control/callback {url, fields:{...}|xml:"...", forge?} -> a delivery of any inner XML
    POST /_control/kf_message {external_userid, open_kfid, content? | image_base64?, origin?: 3,
                           send_time?, msgid?, url?} -> {msgid, delivery?}: the message is
                           kept for sync_msg; with url, a kf_msg_or_event callback is sent.
    POST /_control/kf_notify {url, open_kfid} -> a kf_msg_or_event callback only
    POST /_control/expire_tokens -> every access token issued so far answers 42001
    POST /_control/fail {path, errcode, errmsg?, times?: 1} (path like "/kf/send_msg")
    GET  /_control/sent       -> {sent:[{api, body, time}]} (successful sends only)
    GET  /_control/calls      -> {calls:[{path, query, body, errcode}]} (every API call)
    GET  /_control/uploads    -> {uploads:[{media_id, type, filename, filelength, size}]}
    GET  /_control/deliveries -> {deliveries:[...]}
    POST /_control/reset      -> forget sends, calls, deliveries, uploads, kf messages, failures

Command line: python3 fake_wecom.py [--port 0] prints "FAKE_WECOM_PORT=<port>" once listening
and serves until SIGTERM/SIGINT.
"""

import argparse
import base64
import hashlib
import http.client
import http.server
import itertools
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wechat_aes  # noqa: E402

DEFAULT_CORPID = "wwfake0123456789ab"
DEFAULT_SECRET = "fake-wecom-app-secret"
DEFAULT_KF_SECRET = "fake-wecom-kf-secret"
DEFAULT_TOKEN = "fakewecomtoken"
DEFAULT_AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
DEFAULT_AGENT_ID = 1000002
MAX_BODY = 25 * 1024 * 1024
MAX_TEXT_BYTES = 2048
MSG_TOKEN_TTL = 600.0


def _jbytes(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def build_xml(fields):
    """<xml><K><![CDATA[v]]></K>...</xml>; numbers (ints) unquoted as WeCom writes them."""
    out = ["<xml>"]
    for k, v in fields:
        if isinstance(v, int):
            out.append("<%s>%d</%s>" % (k, v, k))
        else:
            out.append("<%s><![CDATA[%s]]></%s>" % (k, str(v).replace("]]>", "]]]]><![CDATA[>"),
                                                    k))
    out.append("</xml>")
    return "".join(out)


class Reply(object):
    def __init__(self, status, obj, raw=None, ctype="application/json; charset=UTF-8",
                 headers=None):
        self.status, self.ctype, self.headers = status, ctype, headers or []
        self.body = raw if raw is not None else _jbytes(obj)


def _err(errcode, errmsg):
    return Reply(200, {"errcode": errcode, "errmsg": errmsg})


def parse_multipart(ctype, raw):
    """[(headers dict (lower-case), content bytes)] of a multipart/form-data body."""
    m = re.search(r'boundary="?([^";]+)"?', ctype or "")
    if not m:
        return []
    delim = b"--" + m.group(1).encode()
    parts = []
    for chunk in raw.split(delim)[1:]:
        if chunk.startswith(b"--"):
            break
        chunk = chunk[2:] if chunk.startswith(b"\r\n") else chunk
        head, sep, content = chunk.partition(b"\r\n\r\n")
        if not sep:
            continue
        if content.endswith(b"\r\n"):
            content = content[:-2]
        hdrs = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        parts.append((hdrs, content))
    return parts


def _disposition(value):
    out = {}
    for item in value.split(";")[1:]:
        k, _, v = item.strip().partition("=")
        out[k.strip().lower()] = v.strip().strip('"')
    return out


class FakeWeCom(object):
    def __init__(self, host="127.0.0.1", port=0, verbose=False):
        self.host, self.port, self.verbose = host, port, verbose
        self.corpid, self.secret, self.kf_secret = DEFAULT_CORPID, DEFAULT_SECRET, DEFAULT_KF_SECRET
        self.token, self.encoding_aes_key = DEFAULT_TOKEN, DEFAULT_AES_KEY
        self.agent_id = DEFAULT_AGENT_ID
        self.token_ttl, self.page_size, self.timeout = 7200.0, 1000, 10.0
        self.kf_accounts = {"wkfakeaccount0000000001"}
        self._lock = threading.Lock()
        self._ids = itertools.count(int(time.time()) * 1000)
        self._server = self._thread = None
        self._reset_state()

    def _reset_state(self):
        self.sent, self.calls, self.deliveries, self.uploads_log, self.fails = [], [], [], [], []
        self.tokens = {}        # access token -> {kind, expires}
        self.media = {}         # media_id -> (bytes, content type, filename)
        self.kf_msgs = []       # every customer-service message, oldest first
        self.msg_tokens = {}    # callback Token -> expiry
        self.customers = set()  # (open_kfid, external_userid) that wrote

    def crypt(self):
        return wechat_aes.WeChatCrypt(self.token, self.encoding_aes_key, self.corpid)

    # -- lifecycle --------------------------------------------------------------------------
    def bind(self):
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        return self.port

    def start(self):
        port = self.bind()
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,),
                                        daemon=True, name="fake_wecom")
        self._thread.start()
        return port

    def stop(self):
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def _next(self):
        return next(self._ids)

    # -- API --------------------------------------------------------------------------------
    def api(self, verb, path, query, raw, headers):
        rec = {"path": path, "query": {k: v for k, v in query.items() if k not in
                                       ("access_token", "corpsecret")},
               "body": None, "errcode": None}
        if raw and "json" in (headers.get("content-type") or ""):
            try:
                rec["body"] = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                rec["body"] = "<not json>"
        r = self._api(verb, path, query, raw, headers)
        if r.ctype.startswith("application/json"):
            try:
                rec["errcode"] = json.loads(r.body).get("errcode")
            except ValueError:
                pass
        with self._lock:
            self.calls.append(rec)
        return r

    def _api(self, verb, path, query, raw, headers):
        if not path.startswith("/cgi-bin/"):
            return Reply(404, None, raw=b"not found", ctype="text/plain")
        api = path[len("/cgi-bin"):]
        if api == "/gettoken" and verb == "GET":
            return self._gettoken(query)
        kind = self._check_token(query.get("access_token"))
        if isinstance(kind, Reply):
            return kind
        with self._lock:
            for f in self.fails:
                if f["path"] == api and f["times"] > 0:
                    f["times"] -= 1
                    return _err(f["errcode"], f["errmsg"])
        if api == "/media/upload" and verb == "POST":
            return self._upload(query, raw, headers)
        if api == "/media/get" and verb == "GET":
            return self._media_get(query)
        routes = {"/message/send": ("app", self._message_send),
                  "/kf/sync_msg": ("kf", self._sync_msg), "/kf/send_msg": ("kf", self._kf_send)}
        if verb != "POST" or api not in routes:
            return _err(60011, "no privilege to access/modify contact/party/agent (fake: unknown "
                               "API %s)" % api)
        need, fn = routes[api]
        if kind != need:
            return _err(48002, "api forbidden (fake: this token's secret does not grant %s)"
                        % api)
        try:
            body = json.loads(raw.decode("utf-8"))
            if not isinstance(body, dict):
                raise ValueError
        except (ValueError, UnicodeDecodeError):
            return _err(47001, "data format error")
        return fn(body)

    def _gettoken(self, query):
        if query.get("corpid") != self.corpid:
            return _err(40013, "invalid corpid")
        secret = query.get("corpsecret")
        kind = {self.secret: "app", self.kf_secret: "kf"}.get(secret)
        if kind is None:
            return _err(40001, "invalid credential")
        token = hashlib.sha256(os.urandom(16)).hexdigest() + "_" + kind
        with self._lock:
            self.tokens[token] = {"kind": kind, "expires": time.monotonic() + self.token_ttl}
        return Reply(200, {"errcode": 0, "errmsg": "ok", "access_token": token,
                           "expires_in": 7200})

    def _check_token(self, token):
        if not token:
            return _err(41001, "access_token missing")
        with self._lock:
            t = self.tokens.get(token)
        if t is None:
            return _err(40014, "invalid access_token")
        if time.monotonic() > t["expires"]:
            return _err(42001, "access_token expired")
        return t["kind"]

    def _text_ok(self, body, truncate=False):
        content = (body.get("text") or {}).get("content")
        if not isinstance(content, str) or not content:
            return _err(41009, "missing content (fake)")
        if not truncate and len(content.encode("utf-8")) > MAX_TEXT_BYTES:
            return _err(45002, "content size out of limit")
        return None

    def _media_ok(self, body, msgtype):
        media_id = (body.get(msgtype) or {}).get("media_id")
        with self._lock:
            known = media_id in self.media
        return None if known else _err(40007, "invalid media_id")

    def _message_send(self, body):
        msgtype = body.get("msgtype")
        if msgtype not in ("text", "image", "file", "voice", "markdown"):
            return _err(40008, "invalid message type")
        if not isinstance(body.get("touser"), str) or not body["touser"]:
            return _err(40031, "invalid user list")
        if body.get("agentid") != self.agent_id:
            return _err(40056, "invalid agentid")
        truncated = False
        if msgtype == "text":
            bad = self._text_ok(body, truncate=True)
            content = body["text"]["content"] if not bad else ""
            if len(content.encode("utf-8")) > MAX_TEXT_BYTES:
                cut = content.encode("utf-8")[:MAX_TEXT_BYTES].decode("utf-8", "ignore")
                body = dict(body, text=dict(body["text"], content=cut))
                truncated = True
        elif msgtype == "markdown":
            bad = None if (body.get("markdown") or {}).get("content") else _err(
                41009, "missing content (fake)")
        else:
            bad = self._media_ok(body, msgtype)
        if bad:
            return bad
        msgid = "msg%d" % self._next()
        with self._lock:
            self.sent.append({"api": "message/send", "body": body, "msgid": msgid,
                              "truncated": truncated, "time": time.time()})
        return Reply(200, {"errcode": 0, "errmsg": "ok", "invaliduser": "", "msgid": msgid})

    def _upload(self, query, raw, headers):
        mtype = query.get("type")
        if mtype not in ("image", "voice", "video", "file"):
            return _err(40004, "invalid media type")
        parts = [p for p in parse_multipart(headers.get("content-type"), raw)
                 if _disposition(p[0].get("content-disposition", "")).get("name") == "media"]
        if not parts:
            return _err(41007, "media data missing (fake)")
        hdrs, content = parts[0]
        disp = _disposition(hdrs.get("content-disposition", ""))
        if not content or (mtype == "image" and len(content) > 10 * 1024 * 1024):
            return _err(40009, "invalid image size")
        media_id = "3" + hashlib.sha1(os.urandom(16)).hexdigest()
        with self._lock:
            self.media[media_id] = (content, hdrs.get("content-type") or
                                    "application/octet-stream", disp.get("filename", ""))
            self.uploads_log.append({"media_id": media_id, "type": mtype,
                                     "filename": disp.get("filename"),
                                     "filelength": disp.get("filelength"), "size": len(content),
                                     "sha1": hashlib.sha1(content).hexdigest()})
        return Reply(200, {"errcode": 0, "errmsg": "", "type": mtype, "media_id": media_id,
                           "created_at": str(int(time.time()))})

    def _media_get(self, query):
        with self._lock:
            m = self.media.get(query.get("media_id"))
        if m is None:
            return _err(40007, "invalid media_id")
        return Reply(200, None, raw=m[0], ctype=m[1], headers=[
            ("Content-disposition", 'attachment; filename="%s"' % (m[2] or "media"))])

    def _sync_msg(self, body):
        token, cursor, kfid = body.get("token"), body.get("cursor"), body.get("open_kfid")
        limit = body.get("limit", 1000)
        if not isinstance(limit, int) or limit < 1 or limit > 1000:
            return _err(44004, "invalid limit (fake)")
        now = time.monotonic()
        with self._lock:
            if token is not None and self.msg_tokens.get(token, 0) < now:
                return _err(95007, "invalid msg token")
            start = 0
            if cursor:
                try:
                    start = int(base64.urlsafe_b64decode(cursor.encode()).decode()[1:])
                except (ValueError, UnicodeDecodeError):
                    return _err(95012, "invalid cursor (fake)")
                if start > len(self.kf_msgs):
                    return _err(95012, "invalid cursor (fake)")
            size = min(limit, self.page_size)
            out, pos = [], start
            while pos < len(self.kf_msgs) and len(out) < size:
                m = self.kf_msgs[pos]
                pos += 1
                if kfid and m["open_kfid"] != kfid:
                    continue
                out.append(m)
            has_more = any(not kfid or m["open_kfid"] == kfid for m in self.kf_msgs[pos:])
            next_cursor = base64.urlsafe_b64encode(("c%d" % pos).encode()).decode()
        return Reply(200, {"errcode": 0, "errmsg": "ok", "next_cursor": next_cursor,
                           "has_more": 1 if has_more else 0, "msg_list": out})

    def _kf_send(self, body):
        msgtype, kfid, user = body.get("msgtype"), body.get("open_kfid"), body.get("touser")
        if kfid not in self.kf_accounts:
            return _err(95000, "invalid open_kfid (fake)")
        if msgtype not in ("text", "image", "file", "voice", "video", "link", "msgmenu"):
            return _err(40008, "invalid message type")
        with self._lock:
            allowed = (kfid, user) in self.customers
        if not allowed:
            return _err(95018, "send msg not allowed")
        bad = self._text_ok(body) if msgtype == "text" else (
            self._media_ok(body, msgtype) if msgtype in ("image", "file") else None)
        if bad:
            return bad
        msgid = body.get("msgid") or "kfsend%d" % self._next()
        with self._lock:
            self.sent.append({"api": "kf/send_msg", "body": body, "msgid": msgid,
                              "time": time.time()})
        return Reply(200, {"errcode": 0, "errmsg": "ok", "msgid": msgid})

    # -- callbacks ----------------------------------------------------------------------------
    def _request(self, url, method, query, body):
        u = urllib.parse.urlsplit(url)
        q = (u.query + "&" if u.query else "") + urllib.parse.urlencode(query)
        t0 = time.monotonic()
        status = text = err = None
        c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=self.timeout)
        try:
            headers = {"User-Agent": "Mozilla/4.0 (fake WeCom callback)"}
            if body is not None:
                headers["Content-Type"] = "text/xml"
            c.request(method, (u.path or "/") + "?" + q, body, headers)
            r = c.getresponse()
            status, text = r.status, r.read(1 << 20).decode("utf-8", "replace")
        except socket.timeout:
            err = "timeout"
        except OSError as e:
            err = "connection_failed: %s" % e
        finally:
            c.close()
        rec = {"status": status, "body": text, "elapsed": round(time.monotonic() - t0, 4),
               "error": err}
        with self._lock:
            self.deliveries.append(dict(rec, time=time.time()))
        return rec

    def _seal(self, inner_xml, forge):
        """(query dict, outer body) of a callback carrying `inner_xml`, forged as asked."""
        crypt = self.crypt()
        if forge == "key":
            crypt = wechat_aes.WeChatCrypt(self.token, "z" * 43, self.corpid)
        encrypt = crypt.encrypt(inner_xml,
                                receive_id="wwsomeoneelse000000" if forge == "receive_id" else None)
        ts = str(int(time.time()) - (3600 if forge == "stale" else 0))
        nonce = str(self._next() % 10 ** 10)
        sig = crypt.signature(ts, nonce, encrypt)
        if forge == "signature":
            sig = hashlib.sha1(os.urandom(8)).hexdigest()
        outer = build_xml([("ToUserName", self.corpid), ("AgentID", str(self.agent_id)),
                           ("Encrypt", encrypt)])
        return {"msg_signature": sig, "timestamp": ts, "nonce": nonce}, outer.encode("utf-8")

    def deliver(self, url, inner_xml, forge=None, times=1):
        query, body = self._seal(inner_xml, forge)
        return [self._request(url, "POST", query, body) for _ in range(max(1, times))]

    # -- control ----------------------------------------------------------------------------
    def control(self, verb, path, raw):
        name = path[len("/_control/"):]
        if verb == "GET" and name in ("sent", "calls", "deliveries", "uploads"):
            attr = "uploads_log" if name == "uploads" else name
            with self._lock:
                return Reply(200, {name: list(getattr(self, attr))})
        fn = getattr(self, "_c_" + name, None)
        if verb != "POST" or fn is None:
            return Reply(404, {"error": "unknown control endpoint"})
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
            return Reply(200, fn(body))
        except (ValueError, TypeError, KeyError, AttributeError, wechat_aes.WeChatCryptError) as e:
            return Reply(400, {"error": str(e)})

    @staticmethod
    def _url(body):
        url = body.get("url")
        if not isinstance(url, str) or not url.startswith("http://"):
            raise ValueError("url must be an http:// URL")
        return url

    def _c_config(self, body):
        if "encoding_aes_key" in body:
            wechat_aes.aes_key(str(body["encoding_aes_key"]))  # refuse a bad key before using it
        with self._lock:
            for k in ("corpid", "secret", "kf_secret", "token", "encoding_aes_key"):
                if k in body:
                    setattr(self, k, str(body[k]))
            if "agent_id" in body:
                self.agent_id = int(body["agent_id"])
            for k in ("token_ttl", "timeout"):
                if k in body:
                    setattr(self, k, float(body[k]))
            if "page_size" in body:
                self.page_size = int(body["page_size"])
            if "kf_accounts" in body:
                self.kf_accounts = set(body["kf_accounts"])
        return {"ok": True}

    def _c_verify(self, body):
        url, forge = self._url(body), body.get("forge")
        expected = str(self._next())
        crypt = self.crypt()
        echostr = crypt.encrypt(expected)
        ts, nonce = str(int(time.time())), str(self._next() % 10 ** 10)
        sig = crypt.signature(ts, nonce, echostr)
        if forge == "signature":
            sig = hashlib.sha1(os.urandom(8)).hexdigest()
        rec = self._request(url, "GET", {"msg_signature": sig, "timestamp": ts, "nonce": nonce,
                                         "echostr": echostr}, None)
        return dict(rec, expected=expected, ok=rec["status"] == 200 and rec["body"] == expected)

    def _register_media(self, b64, ctype):
        data = base64.b64decode(b64, validate=True)
        media_id = "2" + hashlib.sha1(os.urandom(16)).hexdigest()
        with self._lock:
            self.media[media_id] = (data, ctype or "image/jpeg", "image")
        return media_id

    def _c_app_message(self, body):
        url, user = self._url(body), body.get("from")
        if not isinstance(user, str) or not user:
            raise ValueError("give from (the sender's userid)")
        msg_id = str(body.get("msg_id") or self._next())
        fields = [("ToUserName", self.corpid), ("FromUserName", user),
                  ("CreateTime", int(time.time()))]
        out = {"msg_id": msg_id}
        if "image_base64" in body:
            media_id = self._register_media(body["image_base64"], body.get("content_type"))
            out["media_id"] = media_id
            fields += [("MsgType", "image"),
                       ("PicUrl", "http://127.0.0.1:%d/_media/%s" % (self.port, media_id)),
                       ("MediaId", media_id)]
        else:
            fields += [("MsgType", body.get("msgtype", "text")),
                       ("Content", body.get("content", ""))]
        fields += [("MsgId", int(msg_id) if msg_id.isdigit() else msg_id),
                   ("AgentID", int(body.get("agent_id", self.agent_id)))]
        out["deliveries"] = self.deliver(url, build_xml(fields), body.get("forge"),
                                         int(body.get("times", 1)))
        return out

    def _c_callback(self, body):
        url = self._url(body)
        xml = body.get("xml")
        if xml is None:
            xml = build_xml(list((body.get("fields") or {}).items()))
        return {"deliveries": self.deliver(url, xml, body.get("forge"),
                                           int(body.get("times", 1)))}

    def _notify(self, url, kfid, forge=None):
        token = "ENC" + hashlib.sha1(os.urandom(16)).hexdigest()[:20]
        with self._lock:
            self.msg_tokens[token] = time.monotonic() + MSG_TOKEN_TTL
        xml = build_xml([("ToUserName", self.corpid), ("CreateTime", int(time.time())),
                         ("MsgType", "event"), ("Event", "kf_msg_or_event"), ("Token", token),
                         ("OpenKfId", kfid)])
        return self.deliver(url, xml, forge)[0]

    def _c_kf_message(self, body):
        user, kfid = body.get("external_userid"), body.get("open_kfid")
        if not isinstance(user, str) or not user or kfid not in self.kf_accounts:
            raise ValueError("give external_userid and a known open_kfid")
        origin = int(body.get("origin", 3))
        msgid = str(body.get("msgid") or "msg%d" % self._next())
        msg = {"msgid": msgid, "open_kfid": kfid, "external_userid": user,
               "send_time": int(body.get("send_time", time.time())), "origin": origin}
        if origin == 5:
            msg["servicer_userid"] = "servicer1"
        if "image_base64" in body:
            msg["msgtype"] = "image"
            msg["image"] = {"media_id": self._register_media(body["image_base64"],
                                                             body.get("content_type"))}
        elif "event" in body:
            msg["msgtype"] = "event"
            msg["event"] = body["event"]
        else:
            msg["msgtype"] = "text"
            msg["text"] = {"content": body.get("content", "")}
        with self._lock:
            self.kf_msgs.append(msg)
            if origin == 3:
                self.customers.add((kfid, user))
        out = {"msgid": msgid, "message": msg}
        if body.get("url"):
            out["delivery"] = self._notify(self._url(body), kfid, body.get("forge"))
        return out

    def _c_kf_notify(self, body):
        kfid = body.get("open_kfid", next(iter(self.kf_accounts)))
        return {"delivery": self._notify(self._url(body), kfid, body.get("forge"))}

    def _c_expire_tokens(self, body):
        with self._lock:
            for t in self.tokens.values():
                t["expires"] = 0.0
        return {"ok": True}

    def _c_fail(self, body):
        if not isinstance(body.get("path"), str) or not isinstance(body.get("errcode"), int):
            raise ValueError("give path and errcode")
        with self._lock:
            self.fails.append({"path": body["path"], "errcode": body["errcode"],
                               "errmsg": body.get("errmsg") or "system error (fake)",
                               "times": int(body.get("times", 1))})
        return {"ok": True}

    def _c_reset(self, body):
        with self._lock:
            tokens = self.tokens
            self._reset_state()
            self.tokens = tokens  # bots keep their cached tokens across tests
        return {"ok": True}

    def pic(self, path):
        """PicUrl: the image bytes without auth, as WeCom's picture host serves them."""
        with self._lock:
            m = self.media.get(path[len("/_media/"):])
        if m is None:
            return Reply(404, None, raw=b"not found", ctype="text/plain")
        return Reply(200, None, raw=m[0], ctype=m[1])


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeWeCom/1.0"
    timeout = 60

    def log_message(self, fmt, *args):
        if self.server.fake.verbose:
            sys.stderr.write("fake_wecom: %s\n" % (fmt % args))

    def do_GET(self):
        fake = self.server.fake
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            return self._send(Reply(413, None, raw=b"too large", ctype="text/plain"))
        raw = self.rfile.read(n) if n else b""
        u = urllib.parse.urlsplit(self.path)
        if u.path.startswith("/_control/"):
            return self._send(fake.control(self.command, u.path, raw))
        if u.path.startswith("/_media/"):
            return self._send(fake.pic(u.path))
        query = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._send(fake.api(self.command, u.path, query, raw, headers))

    do_POST = do_GET

    def _send(self, r):
        try:
            self.send_response(r.status)
            self.send_header("Content-Type", r.ctype)
            for k, v in r.headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(r.body)))
            self.end_headers()
            self.wfile.write(r.body)
        except OSError:
            self.close_connection = True


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, fake):
        self.fake = fake
        http.server.ThreadingHTTPServer.__init__(self, addr, _Handler)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake WeCom server API for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeWeCom(args.host, args.port, args.verbose)
    port = fake.bind()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    threading.Thread(target=fake._server.serve_forever, args=(0.1,), daemon=True).start()
    sys.stdout.write("FAKE_WECOM_PORT=%d\n" % port)
    sys.stdout.flush()
    while not done.wait(0.5):
        pass
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
