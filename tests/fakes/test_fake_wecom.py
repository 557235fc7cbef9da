"""Self-test of fake_wecom.py (standard library only), run against the fake as a subprocess.

A small HTTP server in this file plays the bot: it receives the fake's callbacks and checks them
the way WeCom's docs say a callback URL must (msg_signature over token, timestamp, nonce and
Encrypt; AES with the EncodingAESKey; receive id = corpid), using wechat_aes.py, whose own tests
(test_wechat_aes.py) pin it to Tencent's published sample.

Run: cd tests/fakes && python3 -m unittest -v test_fake_wecom
"""

import base64
import http.client
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse
import xml.etree.ElementTree as ET

import wechat_aes

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 10.0
CORPID = "wwselftest000000001"
SECRET = "selftest-app-secret"
KF_SECRET = "selftest-kf-secret"
TOKEN = "selftesttoken"
AES_KEY = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
AGENT = 1000007
KFID = "wkselftest0000000001"
PORT = None
PROC = None


def setUpModule():
    global PROC, PORT
    PROC = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_wecom.py"), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = [None]
    t = threading.Thread(target=lambda: line.__setitem__(0, PROC.stdout.readline().decode()),
                         daemon=True)
    t.start()
    t.join(TIMEOUT)
    if not line[0] or not line[0].startswith("FAKE_WECOM_PORT="):
        PROC.kill()
        PROC.wait(5)
        raise RuntimeError("fake did not announce its port: %r" % (line[0],))
    PORT = int(line[0].strip().split("=", 1)[1])


def tearDownModule():
    if PROC.poll() is None:
        PROC.send_signal(signal.SIGTERM)
        try:
            PROC.wait(10)
        except subprocess.TimeoutExpired:
            PROC.kill()
            PROC.wait(5)
    err = PROC.stderr.read().decode("utf-8", "replace")
    PROC.stdout.close()
    PROC.stderr.close()
    if "Traceback" in err:
        raise AssertionError("fake printed a traceback:\n" + err)


def request(method, path, body=None, headers=None):
    """(status, parsed JSON or bytes, lower-case headers)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=TIMEOUT)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = dict(headers or {}, **{"Content-Type": "application/json"})
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
    finally:
        c.close()
    if hdrs.get("content-type", "").startswith("application/json"):
        return r.status, json.loads(data.decode()), hdrs
    return r.status, data, hdrs


def control(path, body=None):
    status, data, _ = request("POST" if body is not None else "GET", "/_control/" + path, body)
    assert status == 200, (path, status, data)
    return data


def token(secret=SECRET):
    status, data, _ = request("GET", "/cgi-bin/gettoken?" + urllib.parse.urlencode(
        {"corpid": CORPID, "corpsecret": secret}))
    assert status == 200 and data["errcode"] == 0, data
    return data["access_token"]


def api(path, body, tok):
    sep = "&" if "?" in path else "?"
    return request("POST", "/cgi-bin" + path + sep + "access_token=" + tok, body)[1]


def upload(tok, data, mtype="image", filename="a.png"):
    boundary = "selftestboundary"
    raw = (("--%s\r\nContent-Disposition: form-data; name=\"media\"; filename=\"%s\"; "
            "filelength=%d\r\nContent-Type: application/octet-stream\r\n\r\n")
           % (boundary, filename, len(data))).encode() + data + ("\r\n--%s--\r\n"
                                                                 % boundary).encode()
    return request("POST", "/cgi-bin/media/upload?access_token=%s&type=%s" % (tok, mtype), raw,
                   {"Content-Type": "multipart/form-data; boundary=" + boundary})[1]


class Bot(object):
    """The bot side of the callback URL, checking what the docs require."""

    def __init__(self, answer_echo=True):
        self.crypt = wechat_aes.WeChatCrypt(TOKEN, AES_KEY, CORPID)
        self.received, self.answer_echo = [], answer_echo
        bot = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
                ok = bot.crypt.signature(q["timestamp"], q["nonce"], q["echostr"]) == \
                    q["msg_signature"]
                try:
                    plain = bot.crypt.decrypt(q["echostr"]) if ok else None
                except wechat_aes.WeChatCryptError:
                    plain = None
                body = (plain if bot.answer_echo else "wrong").encode() if plain else b"no"
                self.send_response(200 if plain else 401)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                rec = {"query": q, "raw": raw.decode(), "ctype": self.headers["Content-Type"]}
                outer = ET.fromstring(raw)
                enc = outer.find("Encrypt").text
                rec["outer"] = {c.tag: c.text for c in outer}
                rec["signature_ok"] = bot.crypt.signature(q["timestamp"], q["nonce"], enc) == \
                    q["msg_signature"]
                rec["fresh"] = abs(int(q["timestamp"]) - time.time()) < 300
                try:
                    message, rid = bot.crypt.decrypt_raw(enc)
                    rec["receive_id"] = rid.decode()
                    rec["fields"] = {c.tag: c.text for c in ET.fromstring(message)}
                except wechat_aes.WeChatCryptError as e:
                    rec["decrypt_error"] = str(e)
                bot.received.append(rec)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d/bots/x" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class FakeWeComTest(unittest.TestCase):
    def setUp(self):
        control("reset", {})
        control("config", {"corpid": CORPID, "secret": SECRET, "kf_secret": KF_SECRET,
                           "token": TOKEN, "encoding_aes_key": AES_KEY, "agent_id": AGENT,
                           "token_ttl": 7200, "page_size": 1000, "kf_accounts": [KFID]})
        self.bot = Bot()
        self.addCleanup(self.bot.close)

    # access tokens (4.5.6)
    def test_gettoken_and_token_errors(self):
        for q, code in (({"corpid": "nope", "corpsecret": SECRET}, 40013),
                        ({"corpid": CORPID, "corpsecret": "nope"}, 40001)):
            data = request("GET", "/cgi-bin/gettoken?" + urllib.parse.urlencode(q))[1]
            self.assertEqual(data["errcode"], code, data)
        status, data, _ = request("GET", "/cgi-bin/gettoken?" + urllib.parse.urlencode(
            {"corpid": CORPID, "corpsecret": SECRET}))
        self.assertEqual((status, data["errcode"], data["errmsg"], data["expires_in"]),
                         (200, 0, "ok", 7200))
        body = {"touser": "zhangsan", "msgtype": "text", "agentid": AGENT,
                "text": {"content": "hi"}}
        self.assertEqual(request("POST", "/cgi-bin/message/send", body)[1]["errcode"], 41001)
        self.assertEqual(api("/message/send", body, "bogus")["errcode"], 40014)
        tok = data["access_token"]
        self.assertEqual(api("/message/send", body, tok)["errcode"], 0)
        control("expire_tokens", {})
        self.assertEqual(api("/message/send", body, tok)["errcode"], 42001)
        self.assertEqual(api("/message/send", body, token())["errcode"], 0)
        calls = control("calls")["calls"]
        self.assertNotIn(SECRET, json.dumps(calls))

    # message/send (4.5.7)
    def test_message_send_checks_agent_length_and_token_kind(self):
        tok = token()
        ok = api("/message/send", {"touser": "zhangsan", "msgtype": "text", "agentid": AGENT,
                                   "text": {"content": "好" * 682}, "safe": 0}, tok)
        self.assertEqual((ok["errcode"], ok["errmsg"], ok["invaliduser"]), (0, "ok", ""))
        self.assertTrue(ok["msgid"])
        # 2049 bytes: WeCom truncates ("超过将截断") rather than refusing.
        long = api("/message/send", {"touser": "zhangsan", "msgtype": "text", "agentid": AGENT,
                                     "text": {"content": "好" * 683}}, tok)
        self.assertEqual(long["errcode"], 0)
        wrong = api("/message/send", {"touser": "zhangsan", "msgtype": "text", "agentid": 1,
                                      "text": {"content": "x"}}, tok)
        self.assertEqual(wrong["errcode"], 40056)
        kf = api("/message/send", {"touser": "zhangsan", "msgtype": "text", "agentid": AGENT,
                                   "text": {"content": "x"}}, token(KF_SECRET))
        self.assertEqual(kf["errcode"], 48002)
        sent = control("sent")["sent"]
        self.assertEqual(len(sent), 2)
        self.assertEqual(sent[0]["api"], "message/send")
        self.assertFalse(sent[0]["truncated"])
        self.assertTrue(sent[1]["truncated"])
        self.assertEqual(sent[1]["body"]["text"]["content"], "好" * 682)

    # media (4.5.8)
    def test_upload_then_send_image_and_download(self):
        tok = token()
        png = b"\x89PNG\r\n\x1a\n" + os.urandom(64)
        up = upload(tok, png)
        self.assertEqual((up["errcode"], up["type"]), (0, "image"))
        self.assertTrue(up["media_id"] and up["created_at"])
        self.assertEqual(control("uploads")["uploads"][0]["filelength"], str(len(png)))
        status, data, hdrs = request("GET", "/cgi-bin/media/get?access_token=%s&media_id=%s"
                                     % (tok, up["media_id"]))
        self.assertEqual((status, data), (200, png))
        self.assertIn("filename", hdrs["content-disposition"])
        missing = request("GET", "/cgi-bin/media/get?access_token=%s&media_id=nope" % tok)[1]
        self.assertEqual(missing["errcode"], 40007)
        sent = api("/message/send", {"touser": "a", "msgtype": "image", "agentid": AGENT,
                                     "image": {"media_id": up["media_id"]}}, tok)
        self.assertEqual(sent["errcode"], 0)
        bad = api("/message/send", {"touser": "a", "msgtype": "image", "agentid": AGENT,
                                    "image": {"media_id": "nope"}}, tok)
        self.assertEqual(bad["errcode"], 40007)
        self.assertEqual(upload(tok, png, mtype="movie")["errcode"], 40004)

    # callbacks (4.5.1-4.5.5)
    def test_app_message_callback_is_signed_encrypted_and_well_formed(self):
        got = control("app_message", {"url": self.bot.url, "from": "zhangsan",
                                      "content": "你好 <xml> ]]>", "times": 2})
        self.assertEqual([d["status"] for d in got["deliveries"]], [200, 200])
        self.assertEqual(len(self.bot.received), 2)
        first, second = self.bot.received
        self.assertEqual(first["raw"], second["raw"])  # a retry repeats the request
        self.assertTrue(first["signature_ok"] and first["fresh"])
        self.assertEqual(first["receive_id"], CORPID)
        self.assertEqual(first["outer"]["ToUserName"], CORPID)
        self.assertEqual(first["outer"]["AgentID"], str(AGENT))
        f = first["fields"]
        self.assertEqual((f["ToUserName"], f["FromUserName"], f["MsgType"], f["Content"]),
                         (CORPID, "zhangsan", "text", "你好 <xml> ]]>"))
        self.assertEqual(f["MsgId"], got["msg_id"])
        self.assertEqual(f["AgentID"], str(AGENT))
        self.assertTrue(re.match(r"^\d+$", f["CreateTime"]))

    def test_image_callback_names_media_and_pic_url(self):
        png = b"\x89PNG" + os.urandom(16)
        got = control("app_message", {"url": self.bot.url, "from": "lisi",
                                      "image_base64": base64.b64encode(png).decode(),
                                      "content_type": "image/png"})
        f = self.bot.received[0]["fields"]
        self.assertEqual((f["MsgType"], f["MediaId"]), ("image", got["media_id"]))
        u = urllib.parse.urlsplit(f["PicUrl"])
        self.assertEqual(request("GET", u.path)[1], png)

    def test_forged_callbacks(self):
        for forge in ("signature", "receive_id", "key", "stale"):
            control("app_message", {"url": self.bot.url, "from": "a", "content": "x",
                                    "forge": forge})
        sig, rid, key, stale = self.bot.received
        self.assertFalse(sig["signature_ok"])
        self.assertTrue(rid["signature_ok"])
        self.assertEqual(rid["receive_id"], "wwsomeoneelse000000")
        self.assertIn("decrypt_error", key)
        self.assertTrue(stale["signature_ok"])
        self.assertFalse(stale["fresh"])

    def test_url_verification(self):
        got = control("verify", {"url": self.bot.url})
        self.assertTrue(got["ok"], got)
        self.assertEqual(got["body"], got["expected"])
        self.assertFalse(control("verify", {"url": self.bot.url, "forge": "signature"})["ok"])
        self.bot.answer_echo = False
        self.assertFalse(control("verify", {"url": self.bot.url})["ok"])

    # customer service (4.5.13-4.5.15)
    def test_kf_callback_pull_and_send(self):
        tok = token(KF_SECRET)
        # A customer's message nudges the bot; the callback carries Token and OpenKfId only.
        got = control("kf_message", {"url": self.bot.url, "external_userid": "wmcustomer1",
                                     "open_kfid": KFID, "content": "help"})
        f = self.bot.received[0]["fields"]
        self.assertEqual((f["MsgType"], f["Event"], f["OpenKfId"]),
                         ("event", "kf_msg_or_event", KFID))
        self.assertNotIn("Content", f)
        page = api("/kf/sync_msg", {"token": f["Token"], "limit": 1000, "voice_format": 0,
                                    "open_kfid": KFID}, tok)
        self.assertEqual((page["errcode"], page["has_more"]), (0, 0))
        m = page["msg_list"][0]
        self.assertEqual((m["msgid"], m["origin"], m["msgtype"], m["text"]["content"],
                          m["external_userid"], m["open_kfid"]),
                         (got["msgid"], 3, "text", "help", "wmcustomer1", KFID))
        again = api("/kf/sync_msg", {"cursor": page["next_cursor"], "token": f["Token"]}, tok)
        self.assertEqual((again["errcode"], again["msg_list"], again["has_more"]), (0, [], 0))
        self.assertEqual(api("/kf/sync_msg", {"token": "bogus"}, tok)["errcode"], 95007)
        self.assertEqual(api("/kf/sync_msg", {"cursor": "!!"}, tok)["errcode"], 95012)
        self.assertEqual(api("/kf/sync_msg", {"limit": 1001}, tok)["errcode"], 44004)
        sent = api("/kf/send_msg", {"touser": "wmcustomer1", "open_kfid": KFID,
                                    "msgtype": "text", "text": {"content": "hello"}}, tok)
        self.assertEqual(sent["errcode"], 0)
        self.assertTrue(sent["msgid"])
        long = api("/kf/send_msg", {"touser": "wmcustomer1", "open_kfid": KFID,
                                    "msgtype": "text", "text": {"content": "x" * 2049}}, tok)
        self.assertEqual(long["errcode"], 45002)
        stranger = api("/kf/send_msg", {"touser": "wmstranger", "open_kfid": KFID,
                                        "msgtype": "text", "text": {"content": "hi"}}, tok)
        self.assertEqual(stranger["errcode"], 95018)
        app = api("/kf/send_msg", {"touser": "wmcustomer1", "open_kfid": KFID,
                                   "msgtype": "text", "text": {"content": "x"}}, token())
        self.assertEqual(app["errcode"], 48002)

    def test_kf_pages_origins_and_events(self):
        control("config", {"page_size": 2})
        control("kf_message", {"external_userid": "wmc", "open_kfid": KFID, "content": "one"})
        control("kf_message", {"external_userid": "wmc", "open_kfid": KFID, "content": "two",
                               "origin": 5})
        control("kf_message", {"external_userid": "wmc", "open_kfid": KFID,
                               "event": {"event_type": "enter_session"}, "origin": 4})
        control("kf_message", {"external_userid": "wmc", "open_kfid": KFID,
                               "image_base64": base64.b64encode(b"img").decode()})
        tok = token(KF_SECRET)
        first = api("/kf/sync_msg", {}, tok)
        self.assertEqual((first["has_more"], len(first["msg_list"])), (1, 2))
        self.assertEqual(first["msg_list"][1]["servicer_userid"], "servicer1")
        second = api("/kf/sync_msg", {"cursor": first["next_cursor"]}, tok)
        self.assertEqual((second["has_more"], len(second["msg_list"])), (0, 2))
        self.assertEqual(second["msg_list"][0]["event"]["event_type"], "enter_session")
        media_id = second["msg_list"][1]["image"]["media_id"]
        self.assertEqual(request("GET", "/cgi-bin/media/get?access_token=%s&media_id=%s"
                                 % (tok, media_id))[1], b"img")

    def test_fail_injection(self):
        control("fail", {"path": "/message/send", "errcode": 45009, "errmsg": "freq limit"})
        body = {"touser": "a", "msgtype": "text", "agentid": AGENT, "text": {"content": "x"}}
        tok = token()
        self.assertEqual(api("/message/send", body, tok)["errcode"], 45009)
        self.assertEqual(api("/message/send", body, tok)["errcode"], 0)


if __name__ == "__main__":
    unittest.main()
