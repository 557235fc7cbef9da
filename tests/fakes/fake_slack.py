#!/usr/bin/env python3
"""Fake Slack (Web API + Events API delivery) for Switchboard end-to-end tests (stdlib only).

Built from /work/shared/protocols/platforms.md "4.1 Slack" (items 4.1.n below) and Slack's docs
(api.slack.com "Verifying requests from Slack", Events API, chat.postMessage, auth.test,
files.getUploadURLExternal / files.completeUploadExternal) as implemented by slack_sdk.

Web API (4.1.7-4.1.9, 4.1.12, 4.1.13)
    POST (or GET) http://127.0.0.1:PORT/api/<method>, parameters from the query string,
    application/json or application/x-www-form-urlencoded. The bot token comes from
    `Authorization: Bearer xoxb-...` or a form/query `token` parameter (never from a JSON body,
    as Slack). Every answer is JSON; application
    errors are HTTP 200 {"ok":false,"error":"..."}: no token -> not_authed, a token other than the
    configured one -> invalid_auth, unknown method -> unknown_method. Only rate limiting is not
    200: HTTP 429, header Retry-After: <s>, {"ok":false,"error":"ratelimited"} (injected).
    auth.test                  {ok, url, team, user, team_id, user_id, bot_id}
    chat.postMessage           channel (C/G/D id, a channel name, or a U user id = the app's
                               DM with that user, also the legacy "@U..."), text and/or
                               blocks (neither -> no_text), thread_ts, mrkdwn, unfurl_links.
                               Unknown channel -> channel_not_found; text over 40000 chars ->
                               msg_too_long.
                               -> {ok, channel, ts, message{type, subtype:"bot_message", text,
                               user, bot_id, ts, thread_ts?, blocks?}}
    files.getUploadURLExternal filename, length -> {ok, upload_url, file_id}; missing either ->
                               invalid_arguments. POST the bytes (raw or multipart) to upload_url.
    files.completeUploadExternal files (JSON array or JSON string of [{id, title?}]),
                               channel_id?, thread_ts?, initial_comment? -> {ok, files:[{id,
                               title}]}; unknown or not uploaded id -> file_not_found,
                               unknown channel_id -> channel_not_found.

Events API delivery (4.1.1-4.1.5)
    Each event is wrapped as {token, team_id, api_app_id, event, type:"event_callback", event_id,
    event_time, authorizations:[{team_id, user_id, is_bot}], is_ext_shared_channel:false,
    event_context} and POSTed to the given url with X-Slack-Request-Timestamp and
    X-Slack-Signature = "v0=" + hex HMAC-SHA256(signing_secret, "v0:" + ts + ":" + body).
    An attempt not answered with 2xx within ack_timeout (3 s, as Slack) is abandoned and retried
    up to 3 times with X-Slack-Retry-Num 1..3 and X-Slack-Retry-Reason (http_timeout,
    http_error, connection_failed) after retry_delays (Slack: 0, 60, 300 s; settable). A failure
    answer carrying X-Slack-No-Retry: 1 stops the retries.

Control API (no auth; JSON; errors {"error"} with 400/404)
    POST /_control/config   {signing_secret?, bot_token?, ack_timeout?, retry_delays?: [s,...]}
    POST /_control/channels {channels?: [{id, name?}], users?: [{id, name?}]} -> known ids.
    POST /_control/event    {url, event{...}, event_id?, retry_num?, bad_signature?,
                            timestamp_offset?, wait?} -> {event_id}. retry_num sends the first
                            attempt as that retry; timestamp_offset shifts the signed timestamp
                            (replay tests); bad_signature signs with a wrong secret. The event's
                            channel and user become known. wait: block until all attempts end.
    POST /_control/mention  {url, channel, user, text, wait?} -> {event_ids:[message, app_mention],
                            ts}: text "<@BOT> text" sent both as a message and as an app_mention
                            event with the same ts, as Slack does.
    POST /_control/url_verification {url, bad_signature?} -> {challenge, status, body, ok}
    POST /_control/fail     {method, error?, retry_after?, times?: 1}: retry_after -> HTTP 429.
    GET  /_control/sent     -> {sent: [{method, channel, text, thread_ts, blocks, ts, files?,
                            initial_comment?, time}]}
    GET  /_control/deliveries[?event_id=E] -> {deliveries: [{event_id, type, retry_num,
                            retry_reason, status, body, elapsed, error, time}]}
    POST /_control/reset    -> forget sent messages, deliveries, failures, channels, uploads.

Command line: python3 fake_slack.py [--port 0] [--signing-secret S] [--bot-token T] [--verbose]
prints one line "FAKE_SLACK_PORT=<port>" once listening, serves until SIGTERM/SIGINT.
In process: fake = FakeSlack(signing_secret=..., bot_token=...); port = fake.start(); fake.stop().
"""

import argparse
import hashlib
import hmac
import http.client
import http.server
import itertools
import json
import signal
import socket
import sys
import threading
import time
import urllib.parse

TEAM_ID, TEAM, APP_ID = "T0FAKE0001", "fake-team", "A0FAKE0001"
BOT_USER, BOT_NAME, BOT_ID = "U0FAKEBOT1", "switchboard", "B0FAKEBOT1"
DEFAULT_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
DEFAULT_TOKEN = "xoxb-0000-fake-token"
MAX_TEXT = 40000
MAX_BODY = 8 * 1024 * 1024


def _jbytes(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def sign(secret, timestamp, body):
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


class Reply(object):
    def __init__(self, status, obj, headers=None, raw=None, ctype="application/json"):
        self.status, self.headers, self.ctype = status, headers or [], ctype
        self.body = raw if raw is not None else _jbytes(obj)


def post(url, body, headers, timeout):
    """One delivery attempt -> (status or None, body text, elapsed s, error, no_retry)."""
    u = urllib.parse.urlsplit(url)
    t0 = time.monotonic()
    c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    try:
        path = (u.path or "/") + ("?" + u.query if u.query else "")
        c.request("POST", path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read(1 << 20)
        return (r.status, data.decode("utf-8", "replace"), time.monotonic() - t0, None,
                r.getheader("X-Slack-No-Retry") == "1")
    except socket.timeout:
        return None, None, time.monotonic() - t0, "http_timeout", False
    except OSError as e:
        return None, None, time.monotonic() - t0, "connection_failed: %s" % e, False
    finally:
        c.close()


class FakeSlack(object):
    def __init__(self, host="127.0.0.1", port=0, signing_secret=DEFAULT_SECRET,
                 bot_token=DEFAULT_TOKEN, verbose=False):
        self.host, self.port, self.verbose = host, port, verbose
        self.signing_secret, self.bot_token = signing_secret, bot_token
        self.ack_timeout = 3.0
        self.retry_delays = [0.0, 60.0, 300.0]
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stop = threading.Event()
        self._server = self._thread = None
        self._reset_state()

    def _reset_state(self):
        self.channels = {"C0GENERAL1": "general"}
        self.users = {"U0USER0001": "tester", BOT_USER: BOT_NAME}
        self.sent, self.deliveries, self.fails, self.files = [], [], [], {}
        self._last_ts = 0.0

    # -- lifecycle --------------------------------------------------------------------------
    def bind(self):
        self._stop.clear()
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        return self.port

    def start(self):
        port = self.bind()
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,),
                                        daemon=True, name="fake_slack")
        self._thread.start()
        return port

    def stop(self):
        self._stop.set()
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

    # -- helpers ----------------------------------------------------------------------------
    def _next_ts(self):
        with self._lock:
            self._last_ts = max(time.time(), self._last_ts + 0.000001)
            return "%.6f" % self._last_ts

    def _event_id(self):
        return "Ev%010d" % (next(self._ids) + 10 ** 9)

    def _resolve_channel(self, ch):
        if not isinstance(ch, str) or not ch:
            return None
        if ch.startswith("@"):
            ch = ch[1:]
        if not ch:
            return None
        with self._lock:
            if ch[0] in "UW" and ch in self.users:
                return "D" + ch[1:]
            if ch[0] == "D" and ("U" + ch[1:]) in self.users:
                return ch
            if ch in self.channels:
                return ch
            for cid, name in self.channels.items():
                if ch.lstrip("#") == name:
                    return cid
        return None

    def _learn(self, event):
        with self._lock:
            ch, user = event.get("channel"), event.get("user")
            if isinstance(ch, str) and ch:
                self.channels.setdefault(ch, ch.lower())
            if isinstance(user, str) and user:
                self.users.setdefault(user, user.lower())

    # -- Web API ----------------------------------------------------------------------------
    def api(self, method, params, auth):
        token = params.pop("token", None)
        if auth and auth.startswith("Bearer "):
            token = auth[len("Bearer "):].strip()
        if not token:
            return Reply(200, {"ok": False, "error": "not_authed"})
        if not hmac.compare_digest(token.encode(), self.bot_token.encode()):
            return Reply(200, {"ok": False, "error": "invalid_auth"})
        handler = {"auth.test": self._auth_test, "chat.postMessage": self._post_message,
                   "files.getUploadURLExternal": self._get_upload_url,
                   "files.completeUploadExternal": self._complete_upload}.get(method)
        if handler is None:
            return Reply(200, {"ok": False, "error": "unknown_method"})
        with self._lock:
            for f in self.fails:
                if f["method"] in (method, "*") and f["times"] > 0:
                    f["times"] -= 1
                    if f.get("retry_after") is not None:
                        return Reply(429, {"ok": False, "error": "ratelimited"},
                                     [("Retry-After", str(f["retry_after"]))])
                    return Reply(200, {"ok": False, "error": f["error"]})
        return handler(params)

    def _auth_test(self, params):
        return Reply(200, {"ok": True, "url": "https://%s.slack.com/" % TEAM, "team": TEAM,
                           "user": BOT_NAME, "team_id": TEAM_ID, "user_id": BOT_USER,
                           "bot_id": BOT_ID, "is_enterprise_install": False})

    def _post_message(self, p):
        ch = self._resolve_channel(p.get("channel"))
        if ch is None:
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        text, blocks = p.get("text"), p.get("blocks")
        if isinstance(blocks, str):
            try:
                blocks = json.loads(blocks)
            except ValueError:
                return Reply(200, {"ok": False, "error": "invalid_blocks_format"})
        if not text and not blocks:
            return Reply(200, {"ok": False, "error": "no_text"})
        if text is not None and not isinstance(text, str):
            return Reply(200, {"ok": False, "error": "invalid_arguments"})
        if text and len(text) > MAX_TEXT:
            return Reply(200, {"ok": False, "error": "msg_too_long"})
        ts = self._next_ts()
        msg = {"type": "message", "subtype": "bot_message", "text": text or "",
               "user": BOT_USER, "bot_id": BOT_ID, "ts": ts, "team": TEAM_ID}
        thread_ts = p.get("thread_ts") or None
        if thread_ts:
            msg["thread_ts"] = thread_ts
        if blocks:
            msg["blocks"] = blocks
        with self._lock:
            self.sent.append({"method": "chat.postMessage", "channel": ch,
                              "requested_channel": p.get("channel"), "text": text,
                              "thread_ts": thread_ts, "blocks": blocks, "ts": ts,
                              "time": time.time()})
        return Reply(200, {"ok": True, "channel": ch, "ts": ts, "message": msg})

    def _get_upload_url(self, p):
        name, length = p.get("filename"), p.get("length")
        try:
            length = int(length)
        except (TypeError, ValueError):
            length = None
        if not name or length is None or length < 0:
            return Reply(200, {"ok": False, "error": "invalid_arguments"})
        fid = "F%09d" % next(self._ids)
        with self._lock:
            self.files[fid] = {"filename": name, "length": length, "data": None}
        return Reply(200, {"ok": True, "file_id": fid,
                           "upload_url": "http://%s:%d/upload/%s" % (self.host, self.port, fid)})

    def upload(self, fid, data):
        with self._lock:
            f = self.files.get(fid)
            if f is None:
                return Reply(404, None, raw=b"Not Found", ctype="text/plain")
            f["data"] = data
        return Reply(200, None, raw=("OK - %d" % len(data)).encode(), ctype="text/plain")

    def _complete_upload(self, p):
        files = p.get("files")
        if isinstance(files, str):
            try:
                files = json.loads(files)
            except ValueError:
                files = None
        if not isinstance(files, list) or not files or not all(
                isinstance(f, dict) and isinstance(f.get("id"), str) for f in files):
            return Reply(200, {"ok": False, "error": "invalid_arguments"})
        ch = p.get("channel_id") or p.get("channels")
        if ch:
            ch = self._resolve_channel(ch)
            if ch is None:
                return Reply(200, {"ok": False, "error": "channel_not_found"})
        out = []
        with self._lock:
            for f in files:
                st = self.files.get(f["id"])
                if st is None or st["data"] is None:
                    return Reply(200, {"ok": False, "error": "file_not_found"})
                out.append({"id": f["id"], "title": f.get("title") or st["filename"],
                            "filename": st["filename"], "size": len(st["data"])})
            self.sent.append({"method": "files.completeUploadExternal", "channel": ch,
                              "thread_ts": p.get("thread_ts"), "text": None, "blocks": None,
                              "initial_comment": p.get("initial_comment"), "files": out,
                              "ts": None, "time": time.time()})
        return Reply(200, {"ok": True, "files": [{"id": f["id"], "title": f["title"]}
                                                 for f in out]})

    # -- Events API delivery ----------------------------------------------------------------
    def envelope(self, event, event_id):
        return {"token": "fake-verification-token", "team_id": TEAM_ID, "api_app_id": APP_ID,
                "event": event, "type": "event_callback", "event_id": event_id,
                "event_time": int(time.time()),
                "authorizations": [{"enterprise_id": None, "team_id": TEAM_ID,
                                    "user_id": BOT_USER, "is_bot": True,
                                    "is_enterprise_install": False}],
                "is_ext_shared_channel": False,
                "event_context": "4-fake-%s" % event_id}

    def _headers(self, body, opts):
        ts = int(time.time()) + int(opts.get("timestamp_offset") or 0)
        secret = self.signing_secret + ("-wrong" if opts.get("bad_signature") else "")
        return {"Content-Type": "application/json", "User-Agent": "Slackbot 1.0 (+fake)",
                "X-Slack-Request-Timestamp": str(ts),
                "X-Slack-Signature": sign(secret, ts, body)}

    def _deliver(self, url, body, event_id, etype, opts):
        retry_num = opts["retry_num"]
        reason = "http_timeout" if retry_num else None
        while True:
            headers = self._headers(body, opts)
            if retry_num:
                headers["X-Slack-Retry-Num"] = str(retry_num)
                headers["X-Slack-Retry-Reason"] = reason
            status, text, elapsed, err, no_retry = post(url, body, headers, self.ack_timeout)
            with self._lock:
                self.deliveries.append({"event_id": event_id, "type": etype,
                                        "retry_num": retry_num, "retry_reason": reason,
                                        "status": status, "body": text,
                                        "elapsed": round(elapsed, 4), "error": err,
                                        "time": time.time()})
                delays = list(self.retry_delays)
            if status is not None and 200 <= status < 300:
                return
            if no_retry or retry_num >= 3:
                return
            reason = ("http_error" if status is not None else
                      "http_timeout" if err == "http_timeout" else "connection_failed")
            if self._stop.wait(delays[min(retry_num, len(delays) - 1)]):
                return
            retry_num += 1

    def send_event(self, url, event, opts, event_id=None):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise ValueError("event must be an object with a type")
        opts = {"retry_num": int(opts.get("retry_num") or 0),
                "timestamp_offset": int(opts.get("timestamp_offset") or 0),
                "bad_signature": bool(opts.get("bad_signature"))}
        if not 0 <= opts["retry_num"] <= 3:
            raise ValueError("retry_num must be 0..3")
        event = dict(event)
        if event["type"] in ("message", "app_mention"):
            event.setdefault("ts", self._next_ts())
            event.setdefault("event_ts", event["ts"])
        self._learn(event)
        event_id = event_id or self._event_id()
        body = _jbytes(self.envelope(event, event_id))
        t = threading.Thread(target=self._deliver, args=(url, body, event_id, event["type"], opts),
                             daemon=True)
        t.start()
        return event_id, t

    def url_verification(self, url, opts):
        challenge = "chal-%d-%d" % (next(self._ids), int(time.time() * 1000))
        body = _jbytes({"token": "fake-verification-token", "challenge": challenge,
                        "type": "url_verification"})
        status, text, elapsed, err, _ = post(url, body, self._headers(body, opts),
                                             self.ack_timeout)
        ok = False
        if status == 200 and text is not None:
            try:
                ok = json.loads(text).get("challenge") == challenge
            except (ValueError, AttributeError):
                ok = text.strip() == challenge
        return {"challenge": challenge, "status": status, "body": text, "error": err,
                "elapsed": round(elapsed, 4), "ok": ok}

    # -- control ----------------------------------------------------------------------------
    def control(self, verb, path, query, raw):
        name = path[len("/_control/"):]
        if verb == "GET" and name == "sent":
            with self._lock:
                return Reply(200, {"sent": list(self.sent)})
        if verb == "GET" and name == "deliveries":
            with self._lock:
                d = [x for x in self.deliveries
                     if "event_id" not in query or x["event_id"] == query["event_id"]]
            return Reply(200, {"deliveries": d})
        if verb != "POST":
            return Reply(404, {"error": "unknown control endpoint"})
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
            fn = getattr(self, "_c_" + name, None)
            if fn is None:
                return Reply(404, {"error": "unknown control endpoint"})
            return Reply(200, fn(body))
        except (ValueError, TypeError, KeyError) as e:
            return Reply(400, {"error": str(e)})

    @staticmethod
    def _url(body):
        url = body.get("url")
        if not isinstance(url, str) or not url.startswith("http://"):
            raise ValueError("url must be an http:// URL")
        return url

    def _wait(self, threads, body):
        if body.get("wait"):
            deadline = time.monotonic() + float(body.get("wait_timeout", 30))
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()))

    def _c_config(self, body):
        with self._lock:
            if "signing_secret" in body:
                self.signing_secret = str(body["signing_secret"])
            if "bot_token" in body:
                self.bot_token = str(body["bot_token"])
            if "ack_timeout" in body:
                self.ack_timeout = float(body["ack_timeout"])
            if "retry_delays" in body:
                d = [float(x) for x in body["retry_delays"]]
                if not d:
                    raise ValueError("retry_delays must not be empty")
                self.retry_delays = d
        return {"ok": True}

    def _c_channels(self, body):
        with self._lock:
            for c in body.get("channels") or []:
                self.channels[c["id"]] = c.get("name") or c["id"].lower()
            for u in body.get("users") or []:
                self.users[u["id"]] = u.get("name") or u["id"].lower()
            return {"channels": sorted(self.channels), "users": sorted(self.users)}

    def _c_event(self, body):
        eid = body.get("event_id")
        if eid is not None and not (isinstance(eid, str) and eid):
            raise ValueError("event_id must be a non-empty string")
        eid, t = self.send_event(self._url(body), body.get("event"), body, eid)
        self._wait([t], body)
        return {"event_id": eid}

    def _c_mention(self, body):
        url = self._url(body)
        ch, user = body.get("channel", "C0GENERAL1"), body.get("user", "U0USER0001")
        text = "<@%s> %s" % (BOT_USER, body.get("text", ""))
        ts = self._next_ts()
        base = {"user": user, "text": text, "ts": ts, "channel": ch, "event_ts": ts,
                "team": TEAM_ID}
        msg = dict(base, type="message", channel_type=body.get("channel_type", "channel"))
        e1, t1 = self.send_event(url, msg, body)
        e2, t2 = self.send_event(url, dict(base, type="app_mention"), body)
        self._wait([t1, t2], body)
        return {"event_ids": [e1, e2], "ts": ts}

    def _c_url_verification(self, body):
        return self.url_verification(self._url(body), body)

    def _c_fail(self, body):
        if not isinstance(body.get("method"), str):
            raise ValueError("method required")
        if body.get("retry_after") is None and not isinstance(body.get("error"), str):
            raise ValueError("give error or retry_after")
        with self._lock:
            self.fails.append({"method": body["method"], "error": body.get("error"),
                               "retry_after": body.get("retry_after"),
                               "times": int(body.get("times", 1))})
        return {"ok": True}

    def _c_reset(self, body):
        with self._lock:
            self._reset_state()
        return {"ok": True}


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeSlack/1.0"
    timeout = 60

    def log_message(self, fmt, *args):
        if self.server.fake.verbose:
            sys.stderr.write("fake_slack: %s\n" % (fmt % args))

    def do_GET(self):
        fake = self.server.fake
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            return self._send(Reply(413, {"ok": False, "error": "request_too_large"}))
        raw = self.rfile.read(n) if n else b""
        u = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        if u.path.startswith("/_control/"):
            return self._send(fake.control(self.command, u.path, query, raw))
        if u.path.startswith("/upload/") and self.command == "POST":
            return self._send(fake.upload(u.path[len("/upload/"):], raw))
        if not u.path.startswith("/api/"):
            return self._send(Reply(404, {"ok": False, "error": "not_found"}))
        params = dict(query)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        try:
            if ctype == "application/json" and raw:
                j = json.loads(raw.decode("utf-8"))
                if not isinstance(j, dict):
                    raise ValueError("not an object")
                j.pop("token", None)  # Slack takes no token inside a JSON body
                params.update(j)
            elif raw:
                params.update(urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
        except (ValueError, UnicodeDecodeError):
            return self._send(Reply(200, {"ok": False, "error": "invalid_json"}))
        self._send(fake.api(u.path[len("/api/"):], params, self.headers.get("Authorization")))

    do_POST = do_GET

    def _send(self, r):
        try:
            self.send_response(r.status)
            self.send_header("Content-Type", r.ctype + "; charset=utf-8")
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
    ap = argparse.ArgumentParser(description="Fake Slack server for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--signing-secret", default=DEFAULT_SECRET)
    ap.add_argument("--bot-token", default=DEFAULT_TOKEN)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeSlack(args.host, args.port, args.signing_secret, args.bot_token, args.verbose)
    port = fake.bind()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    threading.Thread(target=fake._server.serve_forever, args=(0.1,), daemon=True).start()
    sys.stdout.write("FAKE_SLACK_PORT=%d\n" % port)
    sys.stdout.flush()
    while not done.wait(0.5):
        pass
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
