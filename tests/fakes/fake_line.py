#!/usr/bin/env python3
"""Fake LINE Messaging API for Switchboard end-to-end tests (Python 3 standard library only).

Built from /work/shared/protocols/platforms.md "4.6 LINE Messaging API" (items 4.6.n below) and
the Messaging API reference (developers.line.biz) as modelled by line-bot-sdk.

API (4.6.4-4.6.10), base http://127.0.0.1:PORT
    Every call needs `Authorization: Bearer <channel access token>`: missing -> 401
    {"message":"Authorization header required. ..."}, another token -> 401 {"message":
    "Authentication failed. ..."}. Errors are {"message", "details"?:[{"message", "property"}]};
    validation failures are 400 "The request body has N error(s)" with one detail per problem.
    Each response carries x-line-request-id.
    POST /v2/bot/message/reply {replyToken, messages[1..5], notificationDisabled?}
        A reply token is issued with each replyable webhook event; it works once and only for
        reply_token_ttl seconds (60 by default, 4.6.4); used, expired or unknown -> 400
        {"message":"Invalid reply token"}. A failed call does not use the token up.
    POST /v2/bot/message/push {to, messages[1..5], notificationDisabled?}
        `to` must be a U/C/R id (U + 32 hex ...), else 400 "The property, 'to', in the request
        body is invalid (line: -, column: -)". X-Line-Retry-Key (a UUID) makes the call
        idempotent: a repeated key -> 409 {"message":"The retry key is already accepted",
        "sentMessages"} with header x-line-accepted-request-id = the first call's
        x-line-request-id (4.6.5).
        Both answer 200 {"sentMessages":[{"id","quoteToken"}]}.
    Message objects (4.6.6): text {text (1..5000 UTF-16 units), quoteToken?}; textV2 {text,
        substitution?: {key: {type:"mention", mentionee:{type:"user", userId} | {type:"all"}} |
        {type:"emoji", productId, emojiId}}} - every {key} used must be defined; image
        {originalContentUrl, previewImageUrl} (https, at most 2000 characters each).
    GET  /v2/bot/info -> {userId, basicId, displayName, pictureUrl, chatMode, markAsReadMode}
    POST /v2/bot/chat/loading/start {chatId, loadingSeconds 5..60 step 5} -> 202 {}
    GET  /v2/bot/message/{id}/content -> bytes registered with /_control/content (4.6.7)

Webhook delivery (4.6.1-4.6.3)
    POST <url> with {"destination": bot userId, "events": [...]}, Content-Type application/json,
    X-Line-Signature = base64(HMAC-SHA256(channel secret, body bytes)). Events get the missing
    fields filled: timestamp (ms), mode "active", webhookEventId (26-character ULID-like),
    deliveryContext {isRedelivery}, and a fresh replyToken for replyable types (message, follow,
    join, postback, memberJoined, beacon). The answer's status, body and elapsed time are recorded.

Control API (no auth; JSON; errors {"error"} with 400/404)
    POST /_control/config  {channel_secret?, access_token?, reply_token_ttl?, timeout?}
    POST /_control/event   {url, events:[...], redelivery?, bad_signature?} -> {status, body,
                           elapsed, error, events}
    POST /_control/message {url, source:{type:user|group|room, userId, groupId?, roomId?}, text,
                           mention_self?, quote_token?} -> as /_control/event; mention_self
                           prefixes "@<bot name> " with a mentionee {index:0, length, userId:bot,
                           type:"user", isSelf:true}.
    POST /_control/verify  {url} -> the console's Verify body {destination, events:[]}.
    POST /_control/expire  {replyToken?} -> expire one reply token (all when omitted).
    POST /_control/content {messageId, content_base64, content_type?}
    POST /_control/fail    {path, status, message?, times?: 1} (429 -> "The API rate limit has
                           been exceeded. Try again later." by default).
    GET  /_control/sent    -> {sent:[{kind:"reply"|"push", replyToken, to, messages,
                           notificationDisabled, retry_key, time}]} (successful calls only)
    GET  /_control/deliveries -> {deliveries:[{status, body, elapsed, error, event_ids}]}
    POST /_control/reset   -> forget sent messages, deliveries, tokens, failures and content.

Command line: python3 fake_line.py [--port 0] [--channel-secret S] [--access-token T]
prints one line "FAKE_LINE_PORT=<port>" once listening and serves until SIGTERM/SIGINT.
In process: fake = FakeLine(channel_secret=..., access_token=...); port = fake.start(); ...
fake.stop().
"""

import argparse
import base64
import hashlib
import hmac
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

BOT_USER_ID = "U" + hashlib.md5(b"switchboard-fake-line-bot").hexdigest()
BOT_NAME = "Switchboard"
DEFAULT_SECRET = "0123456789abcdef0123456789abcdef"
DEFAULT_TOKEN = "fake-line-channel-access-token"
MAX_BODY = 2 * 1024 * 1024
REPLYABLE = frozenset(["message", "follow", "join", "postback", "memberJoined", "beacon",
                       "things", "accountLink"])
MESSAGE_TYPES = ("text", "textV2", "image", "video", "audio", "location", "sticker", "imagemap",
                 "template", "flex")
ID_RE = re.compile(r"^[UCR][0-9a-f]{32}$")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                     r"[0-9a-fA-F]{12}$")
AUTH_MISSING = ("Authorization header required. Must follow the scheme, "
                "'Authorization: Bearer <ACCESS TOKEN>'")
AUTH_FAILED = ("Authentication failed. Confirm that the access token in the authorization "
               "header is valid.")
DEFAULT_FAIL = {429: "The API rate limit has been exceeded. Try again later.",
                500: "Internal server error", 403: "Access to this API is not available for "
                "your account"}
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _jbytes(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def signature(secret, body):
    return base64.b64encode(hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()
                            ).decode()


def _u16len(s):
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in s)


class Reply(object):
    def __init__(self, status, obj, raw=None, ctype="application/json", headers=None):
        self.status, self.ctype, self.headers = status, ctype, headers or []
        self.request_id = hashlib.md5(os.urandom(8)).hexdigest()
        self.body = raw if raw is not None else _jbytes(obj)


def _check_messages(msgs):
    """-> list of {message, property} problems (4.6.6)."""
    if not isinstance(msgs, list) or not msgs:
        return [{"message": "must be specified" if msgs is None else "Size must be between 1 "
                 "and 5", "property": "messages"}]
    if len(msgs) > 5:
        return [{"message": "Size must be between 1 and 5", "property": "messages"}]
    out = []
    for i, m in enumerate(msgs):
        p = "messages[%d]" % i
        if not isinstance(m, dict) or m.get("type") not in MESSAGE_TYPES:
            out.append({"message": "Must be one of the following values: [%s]"
                        % ", ".join(MESSAGE_TYPES), "property": p + ".type"})
            continue
        if m["type"] in ("text", "textV2"):
            t = m.get("text")
            if not isinstance(t, str) or not t:
                out.append({"message": "May not be empty", "property": p + ".text"})
            elif _u16len(t) > 5000:
                out.append({"message": "Length must be between 0 and 5000",
                            "property": p + ".text"})
            elif m["type"] == "textV2":
                out.extend(_check_substitution(t, m.get("substitution") or {}, p))
        elif m["type"] == "image":
            for k in ("originalContentUrl", "previewImageUrl"):
                u = m.get(k)
                if not isinstance(u, str) or not u:
                    out.append({"message": "May not be empty", "property": p + "." + k})
                elif len(u) > 2000:
                    out.append({"message": "Length must be between 0 and 2000",
                                "property": p + "." + k})
                elif not u.startswith("https://"):
                    out.append({"message": "Must be a valid HTTPS URL", "property": p + "." + k})
    return out


def _check_substitution(text, subs, p):
    out = []
    if not isinstance(subs, dict):
        return [{"message": "Must be an object", "property": p + ".substitution"}]
    for key in re.findall(r"\{([A-Za-z0-9_]{1,20})\}", text):
        if key not in subs:
            out.append({"message": "The key '%s' is not defined in substitution" % key,
                        "property": p + ".text"})
    for key, s in subs.items():
        q = "%s.substitution.%s" % (p, key)
        typ = s.get("type") if isinstance(s, dict) else None
        if typ == "mention":
            me = s.get("mentionee") or {}
            if not ((me.get("type") == "user" and isinstance(me.get("userId"), str)
                     and me["userId"]) or me.get("type") == "all"):
                out.append({"message": "Invalid mentionee", "property": q + ".mentionee"})
        elif typ == "emoji":
            if not s.get("productId") or not s.get("emojiId"):
                out.append({"message": "May not be empty", "property": q + ".emojiId"})
        else:
            out.append({"message": "Must be one of the following values: [mention, emoji]",
                        "property": q + ".type"})
    return out


def _render(m):
    """textV2 with the substitutions applied, for tests reading /_control/sent."""
    def sub(mt):
        s = (m.get("substitution") or {}).get(mt.group(1))
        if not s:
            return mt.group(0)
        if s["type"] == "emoji":
            return "(emoji)"
        me = s["mentionee"]
        return "@All" if me["type"] == "all" else "@" + me["userId"]
    return re.sub(r"\{([A-Za-z0-9_]{1,20})\}", sub, m["text"])


class FakeLine(object):
    def __init__(self, host="127.0.0.1", port=0, channel_secret=DEFAULT_SECRET,
                 access_token=DEFAULT_TOKEN, verbose=False):
        self.host, self.port, self.verbose = host, port, verbose
        self.channel_secret, self.access_token = channel_secret, access_token
        self.reply_token_ttl = 60.0
        self.timeout = 10.0
        self._lock = threading.Lock()
        self._ids = itertools.count(int(time.time()) * 1000)
        self._server = self._thread = None
        self._reset_state()

    def _reset_state(self):
        self.sent, self.deliveries, self.fails = [], [], []
        self.tokens, self.retry_keys, self.content = {}, {}, {}

    # -- lifecycle --------------------------------------------------------------------------
    def bind(self):
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        return self.port

    def start(self):
        port = self.bind()
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,),
                                        daemon=True, name="fake_line")
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

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- ids --------------------------------------------------------------------------------
    def _next(self):
        return next(self._ids)

    def _event_id(self):
        n = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
        return "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in range(25, -1, -1))

    # -- API --------------------------------------------------------------------------------
    def api(self, verb, path, auth, raw, headers):
        if not auth or not auth.startswith("Bearer "):
            return Reply(401, {"message": AUTH_MISSING})
        if not hmac.compare_digest(auth[7:].strip().encode(), self.access_token.encode()):
            return Reply(401, {"message": AUTH_FAILED})
        with self._lock:
            for f in self.fails:
                if f["path"] in (path, "*") and f["times"] > 0:
                    f["times"] -= 1
                    return Reply(f["status"], {"message": f["message"]})
        if verb == "GET" and path == "/v2/bot/info":
            return Reply(200, {"userId": BOT_USER_ID, "basicId": "@123fakeln",
                               "displayName": BOT_NAME, "chatMode": "bot",
                               "pictureUrl": "https://profile.line-scdn.net/fake",
                               "markAsReadMode": "manual"})
        m = re.match(r"^/v2/bot/message/(\d+)/content$", path)
        if verb == "GET" and m:
            with self._lock:
                c = self.content.get(m.group(1))
            if c is None:
                return Reply(404, {"message": "Not found"})
            return Reply(200, None, raw=c[0], ctype=c[1])
        routes = {"/v2/bot/message/reply": self._reply, "/v2/bot/message/push": self._push,
                  "/v2/bot/chat/loading/start": self._loading}
        if verb != "POST" or path not in routes:
            return Reply(404, {"message": "Not found"})
        try:
            body = json.loads(raw.decode("utf-8"))
            if not isinstance(body, dict):
                raise ValueError
        except (ValueError, UnicodeDecodeError):
            return Reply(400, {"message": "The request body could not be parsed as JSON "
                                          "(line: 1, column: 1)"})
        return routes[path](body, headers)

    @staticmethod
    def _invalid(details):
        return Reply(400, {"message": "The request body has %d error(s)" % len(details),
                           "details": details})

    def _sent_messages(self, msgs):
        out = []
        for m in msgs:
            out.append({"id": str(self._next()), "quoteToken": "q" + self._event_id()})
        return out

    def _record(self, kind, body, to, token, key, msgs):
        for m in msgs:
            if m.get("type") == "textV2":
                m["rendered"] = _render(m)
        self.sent.append({"kind": kind, "replyToken": token, "to": to, "messages": msgs,
                          "notificationDisabled": bool(body.get("notificationDisabled")),
                          "retry_key": key, "time": time.time()})

    def _reply(self, body, headers):
        token = body.get("replyToken")
        details = []
        if not isinstance(token, str) or not token:
            details.append({"message": "must be specified", "property": "replyToken"})
        details += _check_messages(body.get("messages"))
        if details:
            return self._invalid(details)
        with self._lock:
            t = self.tokens.get(token)
            if t is None or t["used"] or time.monotonic() > t["expires"]:
                return Reply(400, {"message": "Invalid reply token"})
            t["used"] = True
            msgs = json.loads(json.dumps(body["messages"]))
            self._record("reply", body, t["to"], token, None, msgs)
            return Reply(200, {"sentMessages": self._sent_messages(msgs)})

    def _push(self, body, headers):
        key = headers.get("x-line-retry-key")
        if key is not None and not UUID_RE.match(key):
            return Reply(400, {"message": "The value of the X-Line-Retry-Key header is invalid"})
        to = body.get("to")
        if not isinstance(to, str) or not ID_RE.match(to):
            return Reply(400, {"message": "The property, 'to', in the request body is invalid "
                                          "(line: -, column: -)"})
        details = _check_messages(body.get("messages"))
        if details:
            return self._invalid(details)
        with self._lock:
            if key is not None and key in self.retry_keys:
                req_id, sent = self.retry_keys[key]
                return Reply(409, {"message": "The retry key is already accepted",
                                   "sentMessages": sent},
                             headers=[("x-line-accepted-request-id", req_id)])
            msgs = json.loads(json.dumps(body["messages"]))
            self._record("push", body, to, None, key, msgs)
            r = Reply(200, {"sentMessages": self._sent_messages(msgs)})
            if key is not None:
                self.retry_keys[key] = (r.request_id, json.loads(r.body)["sentMessages"])
            return r

    def _loading(self, body, headers):
        secs = body.get("loadingSeconds", 20)
        if not isinstance(body.get("chatId"), str) or not ID_RE.match(body["chatId"]):
            return self._invalid([{"message": "May not be empty", "property": "chatId"}])
        if not isinstance(secs, int) or not 5 <= secs <= 60 or secs % 5:
            return self._invalid([{"message": "Must be a multiple of 5 between 5 and 60",
                                   "property": "loadingSeconds"}])
        return Reply(202, {})

    # -- webhook delivery -------------------------------------------------------------------
    def _complete(self, ev, redelivery):
        ev = dict(ev)
        ev.setdefault("timestamp", int(time.time() * 1000))
        ev.setdefault("mode", "active")
        ev.setdefault("webhookEventId", self._event_id())
        ev["deliveryContext"] = {"isRedelivery": bool(redelivery)}
        ev.setdefault("source", {"type": "user", "userId": "U" + "0" * 31 + "1"})
        if ev.get("type") in REPLYABLE and "replyToken" not in ev:
            ev["replyToken"] = hashlib.md5(os.urandom(16)).hexdigest()
        if ev.get("replyToken"):
            src = ev["source"]
            to = src.get("groupId") or src.get("roomId") or src.get("userId")
            with self._lock:
                self.tokens.setdefault(ev["replyToken"], {
                    "used": False, "to": to,
                    "expires": time.monotonic() + self.reply_token_ttl})
        return ev

    def deliver(self, url, events, opts):
        body = _jbytes({"destination": BOT_USER_ID, "events": events})
        secret = self.channel_secret + ("x" if opts.get("bad_signature") else "")
        headers = {"Content-Type": "application/json; charset=utf-8",
                   "User-Agent": "LineBotWebhook/2.0", "X-Line-Signature": signature(secret, body)}
        u = urllib.parse.urlsplit(url)
        t0 = time.monotonic()
        status = text = err = None
        c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=self.timeout)
        try:
            c.request("POST", (u.path or "/") + ("?" + u.query if u.query else ""), body, headers)
            r = c.getresponse()
            status, text = r.status, r.read(1 << 20).decode("utf-8", "replace")
        except socket.timeout:
            err = "timeout"
        except OSError as e:
            err = "connection_failed: %s" % e
        finally:
            c.close()
        rec = {"status": status, "body": text, "elapsed": round(time.monotonic() - t0, 4),
               "error": err, "event_ids": [e.get("webhookEventId") for e in events]}
        with self._lock:
            self.deliveries.append(dict(rec, time=time.time()))
        return dict(rec, events=events)

    # -- control ----------------------------------------------------------------------------
    def control(self, verb, path, raw):
        name = path[len("/_control/"):]
        if verb == "GET" and name in ("sent", "deliveries"):
            with self._lock:
                return Reply(200, {name: list(getattr(self, name))})
        fn = getattr(self, "_c_" + name, None)
        if verb != "POST" or fn is None:
            return Reply(404, {"error": "unknown control endpoint"})
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
            return Reply(200, fn(body))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            return Reply(400, {"error": str(e)})

    @staticmethod
    def _url(body):
        url = body.get("url")
        if not isinstance(url, str) or not url.startswith("http://"):
            raise ValueError("url must be an http:// URL")
        return url

    def _c_config(self, body):
        with self._lock:
            for k in ("channel_secret", "access_token"):
                if k in body:
                    setattr(self, k, str(body[k]))
            for k in ("reply_token_ttl", "timeout"):
                if k in body:
                    setattr(self, k, float(body[k]))
        return {"ok": True}

    def _c_event(self, body):
        url, events = self._url(body), body.get("events")
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise ValueError("events must be a list of objects")
        return self.deliver(url, [self._complete(e, body.get("redelivery")) for e in events],
                            body)

    def _c_message(self, body):
        url, src, text = self._url(body), body.get("source") or {}, body.get("text")
        if not isinstance(text, str) or src.get("type") not in ("user", "group", "room"):
            raise ValueError("give text and source.type user|group|room")
        src = dict(src)
        src.setdefault("userId", "U" + "0" * 31 + "1")
        if src["type"] == "group":
            src.setdefault("groupId", "C" + "0" * 31 + "1")
        if src["type"] == "room":
            src.setdefault("roomId", "R" + "0" * 31 + "1")
        msg = {"type": "text", "id": str(self._next()), "quoteToken": "q" + self._event_id(),
               "text": text}
        if body.get("mention_self"):
            tag = "@" + BOT_NAME
            msg["text"] = tag + " " + text
            msg["mention"] = {"mentionees": [{"index": 0, "length": _u16len(tag),
                                              "userId": BOT_USER_ID, "type": "user",
                                              "isSelf": True}]}
        ev = self._complete({"type": "message", "message": msg, "source": src}, False)
        return self.deliver(url, [ev], body)

    def _c_verify(self, body):
        return self.deliver(self._url(body), [], body)

    def _c_expire(self, body):
        with self._lock:
            tok = body.get("replyToken")
            if tok is not None and tok not in self.tokens:
                raise KeyError("unknown reply token")
            for k, t in self.tokens.items():
                if tok is None or k == tok:
                    t["expires"] = 0.0
        return {"ok": True}

    def _c_content(self, body):
        data = base64.b64decode(body["content_base64"], validate=True)
        with self._lock:
            self.content[str(body["messageId"])] = (data, body.get("content_type",
                                                                   "image/jpeg"))
        return {"ok": True, "size": len(data)}

    def _c_fail(self, body):
        status = body.get("status")
        if not isinstance(body.get("path"), str) or not isinstance(status, int):
            raise ValueError("give path and status")
        with self._lock:
            self.fails.append({"path": body["path"], "status": status,
                               "message": body.get("message") or DEFAULT_FAIL.get(status,
                                                                                  "Error"),
                               "times": int(body.get("times", 1))})
        return {"ok": True}

    def _c_reset(self, body):
        with self._lock:
            self._reset_state()
        return {"ok": True}


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLine/1.0"
    timeout = 60

    def log_message(self, fmt, *args):
        if self.server.fake.verbose:
            sys.stderr.write("fake_line: %s\n" % (fmt % args))

    def do_GET(self):
        fake = self.server.fake
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            return self._send(Reply(413, {"message": "Request Entity Too Large"}))
        raw = self.rfile.read(n) if n else b""
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/_control/"):
            return self._send(fake.control(self.command, path, raw))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._send(fake.api(self.command, path, headers.get("authorization"), raw, headers))

    do_POST = do_GET

    def _send(self, r):
        try:
            self.send_response(r.status)
            self.send_header("Content-Type", r.ctype)
            self.send_header("x-line-request-id", r.request_id)
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
    ap = argparse.ArgumentParser(description="Fake LINE Messaging API server for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--channel-secret", default=DEFAULT_SECRET)
    ap.add_argument("--access-token", default=DEFAULT_TOKEN)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeLine(args.host, args.port, args.channel_secret, args.access_token, args.verbose)
    port = fake.bind()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    threading.Thread(target=fake._server.serve_forever, args=(0.1,), daemon=True).start()
    sys.stdout.write("FAKE_LINE_PORT=%d\n" % port)
    sys.stdout.flush()
    while not done.wait(0.5):
        pass
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
