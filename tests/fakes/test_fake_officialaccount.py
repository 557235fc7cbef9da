"""Self-tests of fake_officialaccount.py and wechat_envelope.py against WeChat's documented
behaviour (Tencent's published crypto samples, the token and customer-service answers, callback
signing and retries), not against Switchboard's adapter."""

import http.server
import json
import os
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse
import urllib.request

import wechat_envelope as env

HERE = os.path.dirname(os.path.abspath(__file__))


class EnvelopeTest(unittest.TestCase):
    def test_tencent_official_account_sample(self):
        # WXBizMsgCryptTest (Tencent's Java sample): a fixed random prefix gives this ciphertext.
        key = env.aes_key("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG")
        enc = env.encrypt(key, "我是中文abcd123", "wxb11529c136998cb6", b"aaaabbbbccccdddd")
        self.assertEqual(enc, "jn1L23DB+6ELqJ+6bruv21Y6MD7KeIfP82D6gU39rmkgczbWwt5+3bnyg5K55bgVtVz"
                              "d832WzZGMhkP72vVOfg==")
        self.assertEqual(env.decrypt(key, enc, "wxb11529c136998cb6"), "我是中文abcd123")
        with self.assertRaises(ValueError):
            env.decrypt(key, enc, "wx-another-app")

    def test_tencent_wecom_sample_echo(self):
        token = "hJqcu3uJ9Tn2gXPmxx2w9kkCkCE2EPYo"
        echostr = ("fsi1xnbH4yQh0+PJxcOdhhK6TDXkjMyhEPA7xB2TGz6b+g7xyAbEkRxN/3cNXW9qdqjnoVzEtpbhn"
                   "Fyq6SVHyA==")
        self.assertEqual(env.signature(token, "1476416373", "47744683", echostr),
                         "012bc692d0a58dd4b10f8dfe5c4ac00ae211ebeb")
        key = env.aes_key("6qkdMrq68nTKduznJYO1A37W2oEgpkMUvkttRToqhUt")
        self.assertEqual(env.decrypt(key, echostr, "ww1436e0e65a779aee"), "1288432023552776189")

    def test_xml_round_trip(self):
        doc = env.xml([("A", "x ]]> y"), ("N", 5)])
        self.assertEqual(env.parse_xml(doc), {"A": "x ]]> y", "N": "5"})
        with self.assertRaises(ValueError):
            env.parse_xml('<!DOCTYPE x><xml/>')


class Receiver:
    """A stand-in bot: records each callback; answers as `behaviour(attempt, query, body)` says."""

    def __init__(self, behaviour):
        self.calls = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
                outer.calls.append((query, body))
                status, text, delay = behaviour(len(outer.calls), query, body)
                time.sleep(delay)
                raw = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    pass

            do_GET = do_POST

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d/bots/x" % self.server.server_address[1]

    def stop(self):
        self.server.shutdown()


class FakeOfficialAccountTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_officialaccount.py"),
                                     "--port", "0"], stdout=subprocess.PIPE, text=True)
        line = cls.proc.stdout.readline()
        cls.base = "http://127.0.0.1:%d" % int(line.strip().split("=")[1])

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(10)
        cls.proc.stdout.close()

    def setUp(self):
        self.control("POST", "/_control/reset", {})
        self.control("POST", "/_control/config", {"attempt_timeout": 1.0})

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=10) as r:
            return json.loads(r.read())

    def delivery(self, ident):
        for _ in range(200):
            d = [x for x in self.get("/_control/deliveries")["deliveries"] if x["id"] == ident][0]
            if d["done"]:
                return d
            time.sleep(0.05)
        self.fail("delivery did not finish")

    def test_token_and_customer_service_answers(self):
        bad = self.get("/cgi-bin/token?grant_type=client_credential&appid=wxfake0000000001"
                       "&secret=nope")
        self.assertEqual(bad["errcode"], 40125)
        ok = self.get("/cgi-bin/token?grant_type=client_credential&appid=wxfake0000000001"
                      "&secret=fake-app-secret-0001")
        self.assertEqual(ok["expires_in"], 7200)
        send = lambda token, body: json.loads(urllib.request.urlopen(urllib.request.Request(
            self.base + "/cgi-bin/message/custom/send?access_token=" + token,
            data=json.dumps(body).encode(), method="POST"), timeout=10).read())
        msg = {"touser": "oUser1", "msgtype": "text", "text": {"content": "hi"}}
        self.assertEqual(send("unknown", msg)["errcode"], 40001)
        self.assertEqual(send(ok["access_token"], msg), {"errcode": 0, "errmsg": "ok"})
        self.assertEqual(self.get("/_control/sent")["sent"], [{"touser": "oUser1",
                                                               "content": "hi"}])
        too_long = dict(msg, text={"content": "x" * 2049})
        self.assertEqual(send(ok["access_token"], too_long)["errcode"], 45002)
        self.control("POST", "/_control/expire", {})
        self.assertEqual(send(ok["access_token"], msg)["errcode"], 42001)
        self.control("POST", "/_control/config", {"customer_service": False})
        fresh = self.get("/cgi-bin/token?grant_type=client_credential&appid=wxfake0000000001"
                         "&secret=fake-app-secret-0001")
        self.assertEqual(send(fresh["access_token"], msg)["errcode"], 48001)

    def test_plain_delivery_is_signed_and_retried_until_answered(self):
        cfg = self.control("POST", "/_control/config", {})

        def behaviour(n, query, body):
            if n == 1:
                return 200, "", 1.5  # too slow: WeChat gives up on this attempt
            fields = env.parse_xml(body)
            reply = env.xml([("ToUserName", fields["FromUserName"]),
                             ("FromUserName", fields["ToUserName"]), ("CreateTime", 1),
                             ("MsgType", "text"), ("Content", "re: " + fields["Content"])])
            return 200, reply, 0

        bot = Receiver(behaviour)
        self.addCleanup(bot.stop)
        ident = self.control("POST", "/_control/message",
                             {"url": bot.url, "openid": "oUser1", "text": "hello"})["id"]
        d = self.delivery(ident)
        self.assertEqual(len(d["attempts"]), 2)
        self.assertEqual(d["reply"]["Content"], "re: hello")
        query, body = bot.calls[0]
        self.assertEqual(query["signature"],
                         env.signature(cfg["token"], query["timestamp"], query["nonce"]))
        self.assertEqual(env.parse_xml(body)["MsgId"], d["msg_id"])
        self.assertEqual(bot.calls[1][1], body)  # a retry carries the same message

    def test_safe_delivery_and_sealed_reply(self):
        cfg = self.control("POST", "/_control/config", {})
        key = env.aes_key(cfg["aes_key"])

        def behaviour(n, query, body):
            outer = env.parse_xml(body)
            assert query["msg_signature"] == env.signature(cfg["token"], query["timestamp"],
                                                           query["nonce"], outer["Encrypt"])
            inner = env.parse_xml(env.decrypt(key, outer["Encrypt"], cfg["app_id"]))
            reply = env.xml([("ToUserName", inner["FromUserName"]),
                             ("FromUserName", inner["ToUserName"]), ("CreateTime", 1),
                             ("MsgType", "text"), ("Content", "sealed " + inner["Content"])])
            return 200, env.seal(cfg["token"], key, cfg["app_id"], reply, 1, "n1"), 0

        bot = Receiver(behaviour)
        self.addCleanup(bot.stop)
        ident = self.control("POST", "/_control/message", {"url": bot.url, "openid": "oUser1",
                                                           "text": "hi", "mode": "safe"})["id"]
        d = self.delivery(ident)
        self.assertEqual([a["status"] for a in d["attempts"]], [200])
        self.assertEqual(d["reply"]["Content"], "sealed hi")

    def test_success_ends_and_three_failures_give_up(self):
        bot = Receiver(lambda n, q, b: (200, "success", 0))
        self.addCleanup(bot.stop)
        d = self.delivery(self.control("POST", "/_control/message",
                                       {"url": bot.url, "openid": "oUser1", "text": "x"})["id"])
        self.assertEqual((len(d["attempts"]), d["reply"]), (1, None))
        failing = Receiver(lambda n, q, b: (503, "", 0))
        self.addCleanup(failing.stop)
        d = self.delivery(self.control("POST", "/_control/message",
                                       {"url": failing.url, "openid": "oUser1", "text": "x"})["id"])
        self.assertEqual(len(d["attempts"]), 3)

    def test_url_verification(self):
        cfg = self.control("POST", "/_control/config", {})
        bot = Receiver(lambda n, q, b: (200, q["echostr"] if q["signature"] == env.signature(
            cfg["token"], q["timestamp"], q["nonce"]) else "no", 0))
        self.addCleanup(bot.stop)
        got = self.control("POST", "/_control/verify", {"url": bot.url})
        self.assertEqual(got["body"], got["echostr"])
        got = self.control("POST", "/_control/verify", {"url": bot.url, "bad_signature": True})
        self.assertEqual(got["body"], "no")


if __name__ == "__main__":
    unittest.main()
