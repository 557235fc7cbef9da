#!/usr/bin/env python3
"""Fake WeChat Official Account platform for Switchboard end-to-end tests.

Built from /work/shared/protocols/platforms.md (Part 1 rows and 4.7 "WeChat Official Account")
and WeChat's docs (message push, passive replies, access token, customer-service messages);
the callback crypto is wechat_envelope.py (WXBizMsgCrypt, checked against Tencent's sample).

API, base http://127.0.0.1:PORT
    GET  /cgi-bin/token?grant_type=client_credential&appid=&secret=
         -> {"access_token","expires_in":7200}; a wrong appid 40013 "invalid appid", a wrong
         secret 40125 "invalid appsecret", another grant_type 40002 (all HTTP 200, as WeChat).
    POST /cgi-bin/message/custom/send?access_token=
         {touser, msgtype:"text", text:{content}} -> {"errcode":0,"errmsg":"ok"}; an unknown
         token 40001, an expired one 42001, an account without the customer-service API
         48001 "api unauthorized", content over 2048 bytes 45002, touser unknown 40003.

Callback delivery (WeChat -> the bot's URL)
    A message is POSTed as XML: plaintext mode with ?signature&timestamp&nonce&openid (signature
    = sha1(sorted token, timestamp, nonce)); safe mode adds encrypt_type=aes&msg_signature= and
    the body is <xml><ToUserName/><Encrypt/></xml> sealed for the AppID. Each attempt waits 5 s
    (attempt_timeout) for an answer; a timeout or a non-200 answer is retried, 3 attempts in all,
    as WeChat does. "success" or an empty 200 body ends the delivery without a reply; XML is the
    passive reply (in safe mode its MsgSignature is checked and it is decrypted).
    URL verification: GET ?signature&timestamp&nonce&echostr -> the echostr as it is.

Control API (no auth; JSON)
    POST /_control/config  {token?, aes_key?, app_id?, app_secret?, customer_service?,
                            attempt_timeout?}
    POST /_control/message {url, openid, text? | pic_url?, msg_type?, msg_id?, mode:"plain"|"safe",
                            attempts?:3, bad_signature?, stale?} -> {"id"}; runs in the background
    GET  /_control/deliveries -> {deliveries:[{id, msg_id, attempts:[{status, body, elapsed,
                            error}], reply, done}]}
    POST /_control/verify  {url, bad_signature?} -> {status, body, echostr}
    POST /_control/expire  -> every issued access token now answers 42001
    GET  /_control/sent    -> {sent:[{touser, content}]}; GET /_control/tokens -> {issued: n}
    POST /_control/reset

Command line: python3 fake_officialaccount.py [--port 0] prints "FAKE_OA_PORT=<port>".
"""

import argparse
import itertools
import json
import secrets
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import http.server

import wechat_envelope as env

ACCOUNT_ID = "gh_fake0account"
DEFAULTS = {"token": "oa-callback-token", "aes_key": "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
            "app_id": "wxfake0000000001", "app_secret": "fake-app-secret-0001",
            "customer_service": True, "attempt_timeout": 5.0}


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.config = dict(DEFAULTS)
        self.reset()

    def reset(self):
        with self.lock:
            self.tokens = {}  # token -> "valid" | "expired"
            self.issued = 0
            self.sent = []
            self.deliveries = []
            self.msg_ids = itertools.count(24000000000000001)


STATE = State()


def call(method, url, body=None, timeout=5.0):
    req = urllib.request.Request(url, data=body, method=method,
                                 headers={"Content-Type": "text/xml"} if body else {})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return {"status": r.status, "body": r.read().decode(), "error": None,
                    "elapsed": time.monotonic() - start}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": e.read().decode(errors="replace"), "error": None,
                "elapsed": time.monotonic() - start}
    except Exception as e:  # timeout, refused: WeChat counts the attempt as failed
        return {"status": None, "body": "", "error": type(e).__name__,
                "elapsed": time.monotonic() - start}


def read_reply(cfg, body, mode):
    """The passive reply's fields, or None for "success" / an empty body."""
    if body in ("", "success"):
        return None
    fields = env.parse_xml(body)
    if mode == "safe":
        expected = env.signature(cfg["token"], fields["TimeStamp"], fields["Nonce"],
                                 fields["Encrypt"])
        if fields.get("MsgSignature") != expected:
            raise ValueError("the reply's MsgSignature is wrong")
        fields = env.parse_xml(env.decrypt(env.aes_key(cfg["aes_key"]), fields["Encrypt"],
                                           cfg["app_id"]))
    return fields


def deliver(record, spec):
    cfg = dict(STATE.config)
    msg_type = spec.get("msg_type") or ("image" if spec.get("pic_url") else "text")
    inner = [("ToUserName", ACCOUNT_ID), ("FromUserName", spec["openid"]),
             ("CreateTime", int(time.time())), ("MsgType", msg_type)]
    if msg_type == "text":
        inner.append(("Content", spec.get("text", "")))
    elif msg_type == "image":
        inner += [("PicUrl", spec["pic_url"]), ("MediaId", "media-1")]
    elif msg_type == "event":
        inner.append(("Event", spec.get("event", "subscribe")))
    if msg_type != "event":
        inner.append(("MsgId", int(record["msg_id"])))
    plain_xml = env.xml(inner)
    for _ in range(int(spec.get("attempts", 3))):
        timestamp = str(int(time.time()) - (3600 if spec.get("stale") else 0))
        nonce = str(secrets.randbelow(10**9))
        query = {"signature": env.signature(cfg["token"], timestamp, nonce),
                 "timestamp": timestamp, "nonce": nonce, "openid": spec["openid"]}
        body = plain_xml
        if spec.get("mode") == "safe":
            enc = env.encrypt(env.aes_key(cfg["aes_key"]), plain_xml, cfg["app_id"])
            query.update(encrypt_type="aes",
                         msg_signature=env.signature(cfg["token"], timestamp, nonce, enc))
            body = env.xml([("ToUserName", ACCOUNT_ID), ("Encrypt", enc)])
        if spec.get("bad_signature"):
            query["signature"] = "0" * 40
            if "msg_signature" in query:
                query["msg_signature"] = "0" * 40
        url = spec["url"] + "?" + urllib.parse.urlencode(query)
        attempt = call("POST", url, body.encode(), cfg["attempt_timeout"])
        with STATE.lock:
            record["attempts"].append(attempt)
        if attempt["status"] == 200:
            try:
                reply = read_reply(cfg, attempt["body"], spec.get("mode"))
            except Exception as e:  # a reply WeChat cannot read shows the user an error notice
                reply = {"error": str(e)}
            with STATE.lock:
                record["reply"] = reply
            break
    with STATE.lock:
        record["done"] = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, obj, status=200):
        raw = json.dumps(obj, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/cgi-bin/token":
            return self.send_json(self.issue_token(q))
        if url.path == "/_control/deliveries":
            with STATE.lock:
                return self.send_json({"deliveries": json.loads(json.dumps(STATE.deliveries))})
        if url.path == "/_control/sent":
            with STATE.lock:
                return self.send_json({"sent": list(STATE.sent)})
        if url.path == "/_control/tokens":
            with STATE.lock:
                return self.send_json({"issued": STATE.issued})
        self.send_json({"errcode": 404, "errmsg": "not found"}, 404)

    def issue_token(self, q):
        cfg = STATE.config
        if q.get("grant_type") != "client_credential":
            return {"errcode": 40002, "errmsg": "invalid grant_type"}
        if q.get("appid") != cfg["app_id"]:
            return {"errcode": 40013, "errmsg": "invalid appid"}
        if q.get("secret") != cfg["app_secret"]:
            return {"errcode": 40125, "errmsg": "invalid appsecret"}
        token = "ACCESS_TOKEN_" + secrets.token_hex(16)
        with STATE.lock:
            STATE.tokens[token] = "valid"
            STATE.issued += 1
        return {"access_token": token, "expires_in": 7200}

    def custom_send(self, q, raw):
        with STATE.lock:
            state = STATE.tokens.get(q.get("access_token", ""))
        if state is None:
            return {"errcode": 40001, "errmsg": "invalid credential, access_token is invalid or "
                                                "not latest"}
        if state == "expired":
            return {"errcode": 42001, "errmsg": "access_token expired"}
        if not STATE.config["customer_service"]:
            return {"errcode": 48001, "errmsg": "api unauthorized"}
        try:
            msg = json.loads(raw)
            content = msg["text"]["content"]
            assert msg["msgtype"] == "text" and isinstance(msg["touser"], str) and msg["touser"]
        except Exception:
            return {"errcode": 44002, "errmsg": "empty post data"}
        if len(content.encode()) > 2048:
            return {"errcode": 45002, "errmsg": "content size out of limit"}
        if not msg["touser"].startswith("o"):
            return {"errcode": 40003, "errmsg": "invalid openid"}
        with STATE.lock:
            STATE.sent.append({"touser": msg["touser"], "content": content})
        return {"errcode": 0, "errmsg": "ok"}

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        raw = self.body()
        if url.path == "/cgi-bin/message/custom/send":
            return self.send_json(self.custom_send(q, raw))
        try:
            spec = json.loads(raw) if raw else {}
        except ValueError:
            return self.send_json({"error": "not json"}, 400)
        if url.path == "/_control/config":
            STATE.config.update({k: v for k, v in spec.items() if k in DEFAULTS})
            return self.send_json(STATE.config)
        if url.path == "/_control/reset":
            STATE.reset()
            STATE.config = dict(DEFAULTS)
            return self.send_json({})
        if url.path == "/_control/expire":
            with STATE.lock:
                for token in STATE.tokens:
                    STATE.tokens[token] = "expired"
            return self.send_json({})
        if url.path == "/_control/message":
            with STATE.lock:
                record = {"id": len(STATE.deliveries) + 1, "attempts": [], "reply": None,
                          "done": False,
                          "msg_id": str(spec.get("msg_id") or next(STATE.msg_ids))}
                STATE.deliveries.append(record)
            threading.Thread(target=deliver, args=(record, spec), daemon=True).start()
            return self.send_json({"id": record["id"], "msg_id": record["msg_id"]})
        if url.path == "/_control/verify":
            cfg = STATE.config
            timestamp, nonce, echostr = str(int(time.time())), "7788", secrets.token_hex(8)
            sig = "0" * 40 if spec.get("bad_signature") else env.signature(cfg["token"], timestamp,
                                                                            nonce)
            query = urllib.parse.urlencode({"signature": sig, "timestamp": timestamp,
                                            "nonce": nonce, "echostr": echostr})
            got = call("GET", spec["url"] + "?" + query)
            return self.send_json(dict(got, echostr=echostr))
        self.send_json({"error": "unknown control path"}, 404)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("FAKE_OA_PORT=%d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
