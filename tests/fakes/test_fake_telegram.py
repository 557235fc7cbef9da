"""Self-test of fake_telegram.py (standard library only), run against the fake as a subprocess.

Run: cd tests/fakes && python3 -m unittest -v test_fake_telegram
"""

import base64
import http.client
import http.server
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 10.0
PORT = None
PROC = None
_tokens = itertools.count(1)

RESERVED_MSG = ("Bad Request: can't parse entities: Character '%s' is reserved and must be "
                "escaped with the preceding '\\'")


def setUpModule():
    global PROC, PORT
    PROC = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_telegram.py"),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = [None]

    def read():
        line[0] = PROC.stdout.readline().decode()
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(TIMEOUT)
    if not line[0] or not line[0].startswith("FAKE_TELEGRAM_PORT="):
        PROC.kill()
        PROC.wait(5)
        raise RuntimeError("fake did not announce its port: %r" % (line[0],))
    PORT = int(line[0].strip().split("=", 1)[1])


def tearDownModule():
    if PROC is None:
        return
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


def new_token():
    return "%d:AAtest_Token-%d" % (100000 + next(_tokens), os.getpid())


def request(method, path, body=None, headers=None, timeout=TIMEOUT):
    """Returns (status, parsed JSON or bytes, lower-case headers)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        status = r.status
    finally:
        c.close()
    try:
        return status, json.loads(data.decode("utf-8")), hdrs
    except ValueError:
        return status, data, hdrs


def multipart(fields, files):
    boundary = "----fakeTgBoundary7MA4YWxk"
    out = []
    for k, v in fields.items():
        out.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                    % (boundary, k, v)).encode())
    for name, (filename, ctype, data) in files.items():
        out.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                    "Content-Type: %s\r\n\r\n" % (boundary, name, filename, ctype)).encode()
                   + data + b"\r\n")
    out.append(("--%s--\r\n" % boundary).encode())
    return b"".join(out), "multipart/form-data; boundary=%s" % boundary


class Base(unittest.TestCase):
    def setUp(self):
        self.token = new_token()

    def api(self, method, params=None, token=None, encoding="json", timeout=TIMEOUT):
        path = "/bot%s/%s" % (token or self.token, method)
        if params is None:
            return request("GET", path, timeout=timeout)[:2]
        if encoding == "json":
            return request("POST", path, json.dumps(params).encode(),
                           {"Content-Type": "application/json"}, timeout)[:2]
        if encoding == "form":
            enc = {k: (json.dumps(v) if isinstance(v, (dict, list)) else v)
                   for k, v in params.items()}
            return request("POST", path, urllib.parse.urlencode(enc).encode(),
                           {"Content-Type": "application/x-www-form-urlencoded"}, timeout)[:2]
        return request("GET", path + "?" + urllib.parse.urlencode(params), timeout=timeout)[:2]

    def control(self, name, body=None, token=None):
        if body is None:
            st, data, _ = request("GET", "/_control/%s?token=%s"
                                  % (name, urllib.parse.quote(token or self.token)))
        else:
            st, data, _ = request("POST", "/_control/" + name, json.dumps(body).encode(),
                                  {"Content-Type": "application/json"})
        self.assertEqual(st, 200, data)
        return data

    def queue(self, update, token=None):
        return self.control("updates", {"token": token or self.token, "update": update})

    def sent(self):
        return self.control("sent")["sent"]

    def stats(self):
        return self.control("stats")

    def assert_error(self, res, code, description=None):
        st, body = res
        self.assertEqual(st, code, body)
        self.assertIs(body["ok"], False)
        self.assertEqual(body["error_code"], code)
        if description is not None:
            self.assertEqual(body["description"], description)

    def wait_for(self, pred, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = pred()
            if v:
                return v
            time.sleep(0.05)
        self.fail("condition not met within %.1fs" % timeout)


class BasicsTest(Base):
    def test_get_me_and_conventions(self):
        st, body = self.api("getMe")
        self.assertEqual(st, 200)
        self.assertEqual(body["ok"], True)
        me = body["result"]
        bot_id = int(self.token.split(":")[0])
        self.assertEqual(me, {"id": bot_id, "is_bot": True, "first_name": "Test Bot",
                              "username": "test_bot_%d" % bot_id, "can_join_groups": True,
                              "can_read_all_group_messages": False,
                              "supports_inline_queries": False})
        self.assertEqual(self.api("GETME", {})[1]["result"]["id"], bot_id)  # case-insensitive
        self.assert_error(self.api("getMe", token="nodigits:abc"), 401, "Unauthorized")
        self.assert_error(self.api("getMe", token="123:bad%20token!"), 401, "Unauthorized")
        self.assert_error(self.api("noSuchMethod"), 404, "Not Found")
        self.assert_error(request("GET", "/nothing")[:2], 404, "Not Found")
        st, body, hdrs = request("POST", "/bot%s/sendMessage" % self.token, b"{not json",
                                 {"Content-Type": "application/json"})
        self.assertEqual((st, body["ok"]), (400, False))
        self.assertTrue(body["description"].startswith("Bad Request"))
        self.assertEqual(hdrs["content-type"], "application/json")
        self.assertEqual(self.stats()["calls"]["getme"], 2)


class PollingTest(Base):
    def test_long_poll_returns_early(self):
        result = {}

        def poll():
            t0 = time.monotonic()
            result["res"] = self.api("getUpdates", {"timeout": 8})
            result["elapsed"] = time.monotonic() - t0
        t = threading.Thread(target=poll)
        t.start()
        self.wait_for(lambda: self.stats()["active_polls"] == 1)
        self.assertIsNotNone(self.stats()["last_poll_started"])
        uid = self.queue({"message": {"message_id": 5, "date": 1, "text": "hi",
                                      "chat": {"id": 42, "type": "private"}}})["update_id"]
        t.join(TIMEOUT)
        self.assertFalse(t.is_alive())
        st, body = result["res"]
        self.assertEqual(st, 200)
        self.assertEqual([u["update_id"] for u in body["result"]], [uid])
        self.assertEqual(body["result"][0]["message"]["text"], "hi")
        self.assertLess(result["elapsed"], 4.0)
        self.assertEqual(self.stats()["active_polls"], 0)

    def test_timeout_empty(self):
        t0 = time.monotonic()
        st, body = self.api("getUpdates", {"timeout": 1, "offset": 1}, encoding="query")
        elapsed = time.monotonic() - t0
        self.assertEqual((st, body), (200, {"ok": True, "result": []}))
        self.assertGreater(elapsed, 0.9)
        self.assertLess(elapsed, 3.0)
        t0 = time.monotonic()
        self.assertEqual(self.api("getUpdates", {})[1]["result"], [])  # short poll
        self.assertLess(time.monotonic() - t0, 0.5)

    def test_offset_confirmation(self):
        updates = [{"message": {"message_id": i, "date": 1, "text": "m%d" % i,
                                "chat": {"id": 7, "type": "private"}}} for i in range(1, 6)]
        ids = self.control("updates", {"token": self.token, "updates": updates})["update_ids"]
        self.assertEqual(ids, [1, 2, 3, 4, 5])
        res = self.api("getUpdates", {"limit": 2})[1]["result"]
        self.assertEqual([u["update_id"] for u in res], [1, 2])
        # without offset nothing is confirmed
        res = self.api("getUpdates", {})[1]["result"]
        self.assertEqual([u["update_id"] for u in res], [1, 2, 3, 4, 5])
        res = self.api("getUpdates", {"offset": "3"}, encoding="form")[1]["result"]
        self.assertEqual([u["update_id"] for u in res], [3, 4, 5])
        self.assertEqual(self.stats()["pending"], 3)
        res = self.api("getUpdates", {})[1]["result"]
        self.assertEqual([u["update_id"] for u in res], [3, 4, 5])
        # negative offset keeps only the last n
        res = self.api("getUpdates", {"offset": -1})[1]["result"]
        self.assertEqual([u["update_id"] for u in res], [5])
        self.assertEqual([u["update_id"] for u in self.api("getUpdates", {})[1]["result"]], [5])
        self.assertEqual(self.api("getUpdates", {"offset": 6})[1]["result"], [])
        self.assertEqual(self.stats()["pending"], 0)
        self.assertEqual(self.queue({"message": {"message_id": 9, "date": 1, "text": "x",
                                                 "chat": {"id": 7, "type": "private"}}}),
                         {"update_id": 6})
        # explicit update_id keeps ids increasing
        self.assertEqual(self.queue({"update_id": 100, "message": {}})["update_id"], 100)
        self.assertEqual(self.queue({"message": {}})["update_id"], 101)

    def test_allowed_updates_default_filter(self):
        r = self.queue({"chat_member": {"x": 1}})
        self.assertTrue(r.get("filtered"))
        self.api("getUpdates", {"allowed_updates": ["chat_member"]})
        self.assertFalse(self.queue({"chat_member": {"x": 1}}).get("filtered"))
        self.assertTrue(self.queue({"message": {}}).get("filtered"))

    def test_concurrent_pollers_conflict(self):
        result = {}

        def poll():
            result["old"] = self.api("getUpdates", {"timeout": 8})
        t = threading.Thread(target=poll)
        t.start()
        self.wait_for(lambda: self.stats()["active_polls"] == 1)
        t0 = time.monotonic()
        new = self.api("getUpdates", {"timeout": 1})
        t.join(TIMEOUT)
        self.assertFalse(t.is_alive())
        self.assert_error(result["old"], 409,
                          "Conflict: terminated by other getUpdates request; make sure that only "
                          "one bot instance is running")
        self.assertEqual(new, (200, {"ok": True, "result": []}))
        self.assertLess(time.monotonic() - t0, 4.0)

    def test_client_disconnect_mid_poll(self):
        s = socket.create_connection(("127.0.0.1", PORT), timeout=TIMEOUT)
        s.sendall(("GET /bot%s/getUpdates?timeout=30 HTTP/1.1\r\nHost: x\r\n\r\n"
                   % self.token).encode())
        self.wait_for(lambda: self.stats()["active_polls"] == 1)
        s.close()
        self.wait_for(lambda: self.stats()["active_polls"] == 0)
        uid = self.queue({"message": {"text": "kept"}})["update_id"]
        res = self.api("getUpdates", {"timeout": 1})[1]["result"]
        self.assertEqual([u["update_id"] for u in res], [uid])
        self.assertEqual(self.api("getMe")[0], 200)


class _Receiver(object):
    """A tiny webhook receiver answering statuses from a list (then 200)."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.got = []
        self.lock = threading.Lock()
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with outer.lock:
                    outer.got.append((self.path, dict(self.headers.items()), json.loads(body)))
                    status = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class WebhookTest(Base):
    def test_webhook_delivery_and_conflict(self):
        rx = _Receiver(statuses=[500])
        self.addCleanup(rx.close)
        url = "http://127.0.0.1:%d/hook" % rx.port
        self.queue({"message": {"text": "old"}})
        st, body = self.api("setWebhook", {"url": url, "secret_token": "s3cr-et_X",
                                           "drop_pending_updates": True}, encoding="form")
        self.assertEqual((st, body["result"]), (200, True))
        self.assert_error(self.api("getUpdates", {}), 409,
                          "Conflict: can't use getUpdates method while webhook is active; use "
                          "deleteWebhook to delete the webhook first")
        info = self.api("getWebhookInfo")[1]["result"]
        self.assertEqual((info["url"], info["pending_update_count"]), (url, 0))
        self.assertEqual(self.stats()["webhook"], {"url": url, "secret_token": "s3cr-et_X"})
        uid = self.queue({"message": {"text": "new"}})["update_id"]
        self.wait_for(lambda: len(rx.got) >= 2)
        path, headers, update = rx.got[-1]
        self.assertEqual(path, "/hook")
        hl = {k.lower(): v for k, v in headers.items()}
        self.assertEqual(hl["x-telegram-bot-api-secret-token"], "s3cr-et_X")
        self.assertEqual(hl["content-type"], "application/json")
        self.assertEqual(update["update_id"], uid)
        self.assertEqual(update["message"]["text"], "new")  # "old" was dropped
        st = self.wait_for(lambda: (lambda s: s if s["pending"] == 0 and
                                    len(s["deliveries"]) == 2 else None)(self.stats()))
        self.assertEqual(st["deliveries"], [{"update_id": uid, "status": 500},
                                            {"update_id": uid, "status": 200}])
        info = self.api("getWebhookInfo")[1]["result"]
        self.assertIn("last_error_message", info)
        self.assertEqual(self.api("deleteWebhook", {})[1]["result"], True)
        self.assertEqual(self.api("getWebhookInfo")[1]["result"]["url"], "")
        self.assertEqual(self.api("getUpdates", {})[1]["result"], [])
        self.assertIsNone(self.stats()["webhook"])

    def test_webhook_without_secret_and_bad_secret(self):
        rx = _Receiver()
        self.addCleanup(rx.close)
        self.assert_error(self.api("setWebhook", {"url": "http://127.0.0.1:1/x",
                                                  "secret_token": "bad secret!"}), 400)
        self.api("setWebhook", {"url": "http://127.0.0.1:%d/" % rx.port})
        self.queue({"message": {"text": "a"}})
        self.wait_for(lambda: rx.got)
        self.assertNotIn("x-telegram-bot-api-secret-token",
                         {k.lower() for k in rx.got[0][1]})


class SendTest(Base):
    def test_send_message_validation(self):
        self.assert_error(self.api("sendMessage", {"text": "x"}), 400,
                          "Bad Request: chat_id is empty")
        self.assert_error(self.api("sendMessage", {"chat_id": 5, "text": ""}), 400,
                          "Bad Request: message text is empty")
        self.assert_error(self.api("sendMessage", {"chat_id": 5}), 400,
                          "Bad Request: message text is empty")
        self.assert_error(self.api("sendMessage", {"chat_id": 5, "text": "a" * 4097}), 400,
                          "Bad Request: message is too long")
        self.assertEqual(self.api("sendMessage", {"chat_id": 5, "text": "a" * 4096})[0], 200)
        self.assert_error(self.api("sendMessage", {"chat_id": 5, "text": "Hello. World",
                                                   "parse_mode": "MarkdownV2"}), 400,
                          RESERVED_MSG % ".")
        self.assert_error(self.api("sendMessage", {"chat_id": 5, "text": "a-b",
                                                   "parse_mode": "MarkdownV2"}), 400,
                          RESERVED_MSG % "-")
        st, body = self.api("sendMessage", {"chat_id": 5, "text": "*open bold",
                                            "parse_mode": "MarkdownV2"})
        self.assertEqual(st, 400)
        self.assertTrue(body["description"].startswith("Bad Request: can't parse entities: "))
        self.assert_error(self.api("sendMessage", {"chat_id": 5, "text": "<b>x</i>",
                                                   "parse_mode": "HTML"}), 400)
        self.assert_error(self.api("sendMessage", {"chat_id": 5, "text": "x",
                                                   "parse_mode": "Nope"}), 400)
        # only the successful 4096-character send was recorded
        self.assertEqual(len(self.sent()), 1)

    def test_valid_markdown_v2(self):
        text = ("*bold* _italic_ __under__ ~strike~ ||spoiler|| `co\\`de` "
                "[link](https://example.com/a_(b\\)) Hello\\. 1\\+1\\=2\\! "
                "```python\nprint(\"x\")\n```")
        st, body = self.api("sendMessage", {"chat_id": 5, "text": text,
                                            "parse_mode": "MarkdownV2"})
        self.assertEqual(st, 200, body)
        msg = body["result"]
        self.assertEqual(msg["text"], "bold italic under strike spoiler co`de link Hello. "
                                      "1+1=2! print(\"x\")\n")
        types = [e["type"] for e in msg["entities"]]
        self.assertEqual(types, ["bold", "italic", "underline", "strikethrough", "spoiler",
                                 "code", "text_link", "pre"])
        link = msg["entities"][6]
        self.assertEqual(link["url"], "https://example.com/a_(b)")
        self.assertEqual(msg["entities"][7]["language"], "python")
        # escapes count once: 4096 visible characters pass although the raw text is longer
        st, _ = self.api("sendMessage", {"chat_id": 5, "text": "\\." * 4096,
                                         "parse_mode": "MarkdownV2"})
        self.assertEqual(st, 200)

    def test_message_objects_and_record(self):
        self.queue({"message": {"message_id": 10, "date": 1, "text": "q",
                                "from": {"id": 9, "is_bot": False, "first_name": "A"},
                                "chat": {"id": -1001234, "type": "supergroup", "title": "T"}}})
        st, body = self.api("sendMessage", {"chat_id": "-1001234", "text": "answer",
                                            "reply_to_message_id": "10",
                                            "message_thread_id": "3"}, encoding="form")
        self.assertEqual(st, 200, body)
        m1 = body["result"]
        self.assertEqual(m1["message_id"], 11)
        self.assertEqual(m1["chat"], {"id": -1001234, "type": "supergroup", "title": "T"})
        self.assertEqual(m1["from"]["id"], int(self.token.split(":")[0]))
        self.assertTrue(m1["from"]["is_bot"])
        self.assertEqual(m1["reply_to_message"]["message_id"], 10)
        self.assertEqual(m1["message_thread_id"], 3)
        self.assertIsInstance(m1["date"], int)
        m2 = self.api("sendMessage", {"chat_id": -1001234, "text": "two",
                                      "reply_parameters": {"message_id": 11}})[1]["result"]
        self.assertEqual(m2["message_id"], 12)
        self.assertEqual(self.api("sendMessage", {"chat_id": 77, "text": "x"})[1]["result"]
                         ["message_id"], 1)
        sent = self.sent()
        self.assertEqual([s["method"] for s in sent], ["sendMessage"] * 3)
        self.assertEqual(sent[0]["chat_id"], -1001234)
        self.assertEqual(sent[0]["reply_parameters"], {"message_id": 10})
        self.assertEqual(sent[0]["message_thread_id"], 3)
        self.assertEqual(sent[0]["params"]["text"], "answer")
        self.assertEqual(sent[1]["reply_parameters"], {"message_id": 11})
        self.assertEqual([s["message_id"] for s in sent], [11, 12, 1])
        # edits
        ed = self.api("editMessageText", {"chat_id": -1001234, "message_id": 12,
                                          "text": "two!"})
        self.assertEqual(ed[0], 200)
        self.assertEqual(ed[1]["result"]["text"], "two!")
        self.assert_error(self.api("editMessageText", {"chat_id": -1001234, "message_id": 12,
                                                       "text": "two!"}), 400)
        self.assertIn("message is not modified",
                      self.api("editMessageText", {"chat_id": -1001234, "message_id": 12,
                                                   "text": "two!"})[1]["description"])
        self.assert_error(self.api("editMessageText", {"chat_id": -1001234, "message_id": 99,
                                                       "text": "z"}), 400,
                          "Bad Request: message to edit not found")
        self.assertEqual(self.api("sendChatAction", {"chat_id": 77, "action": "typing"})[1]
                         ["result"], True)
        self.assert_error(self.api("sendChatAction", {"chat_id": 77, "action": "dance"}), 400)
        self.assertEqual(self.api("sendMessageDraft", {"chat_id": 77, "draft_id": 1,
                                                       "text": ""})[1]["result"], True)
        self.assertEqual([s["method"] for s in self.sent()][3:],
                         ["editMessageText", "sendChatAction", "sendMessageDraft"])
        # deleting: the bot's message goes, a second delete finds nothing
        self.assertEqual(self.api("deleteMessage", {"chat_id": -1001234, "message_id": 12})[1]
                         ["result"], True)
        self.assert_error(self.api("deleteMessage", {"chat_id": -1001234, "message_id": 12}),
                          400, "Bad Request: message to delete not found")
        self.assert_error(self.api("editMessageText", {"chat_id": -1001234, "message_id": 12,
                                                       "text": "gone"}), 400,
                          "Bad Request: message to edit not found")
        self.assertEqual(self.sent()[-1]["method"], "deleteMessage")

    def test_multipart_send_photo(self):
        data = bytes(range(256)) * 10
        body, ctype = multipart({"chat_id": "555", "caption": "a *pic*",
                                 "parse_mode": "MarkdownV2",
                                 "reply_parameters": json.dumps({"message_id": 1})},
                                {"photo": ("cat.png", "image/png", data)})
        st, res, _ = request("POST", "/bot%s/SENDPHOTO" % self.token, body,
                             {"Content-Type": ctype})
        self.assertEqual(st, 200, res)
        msg = res["result"]
        self.assertEqual(msg["caption"], "a pic")
        self.assertEqual(msg["caption_entities"], [{"type": "bold", "offset": 2, "length": 3}])
        self.assertEqual(msg["photo"][-1]["file_size"], len(data))
        rec = self.sent()[-1]
        self.assertEqual(rec["method"], "sendPhoto")
        self.assertEqual(rec["chat_id"], 555)
        self.assertEqual(rec["caption"], "a *pic*")
        self.assertIsNone(rec["photo"])
        self.assertEqual(rec["upload"], {"field": "photo", "filename": "cat.png",
                                         "content_type": "image/png", "size": len(data)})
        self.assertEqual(rec["reply_parameters"], {"message_id": 1})
        # the uploaded bytes can be fetched back
        f = self.api("getFile", {"file_id": msg["photo"][-1]["file_id"]})[1]["result"]
        st, got, _ = request("GET", "/file/bot%s/%s" % (self.token, f["file_path"]))
        self.assertEqual((st, got), (200, data))
        # URL string and attach://
        st, res = self.api("sendDocument", {"chat_id": 555,
                                            "document": "https://example.com/a.pdf"})
        self.assertEqual(st, 200)
        self.assertEqual(self.sent()[-1]["document"], "https://example.com/a.pdf")
        self.assertNotIn("upload", self.sent()[-1])
        body, ctype = multipart({"chat_id": "555", "voice": "attach://v1"},
                                {"v1": ("a.ogg", "audio/ogg", b"OggS....")})
        st, res, _ = request("POST", "/bot%s/sendVoice" % self.token, body,
                             {"Content-Type": ctype})
        self.assertEqual(st, 200, res)
        self.assertEqual(self.sent()[-1]["upload"]["size"], 8)
        self.assert_error(self.api("sendPhoto", {"chat_id": 555}), 400,
                          "Bad Request: there is no photo in the request")

    def test_get_file_and_download(self):
        content = b"\x00\x01voice-bytes\xff"
        r = self.control("files", {"token": self.token, "file_id": "VOICE1",
                                   "content_base64": base64.b64encode(content).decode(),
                                   "file_path": "voice/file_1.oga"})
        self.assertEqual(r["file_path"], "voice/file_1.oga")
        st, body = self.api("getFile", {"file_id": "VOICE1"}, encoding="query")
        self.assertEqual(st, 200)
        f = body["result"]
        self.assertEqual((f["file_id"], f["file_size"], f["file_path"]),
                         ("VOICE1", len(content), "voice/file_1.oga"))
        self.assertTrue(f["file_unique_id"])
        st, got, _ = request("GET", "/file/bot%s/voice/file_1.oga" % self.token)
        self.assertEqual((st, got), (200, content))
        self.assert_error(request("GET", "/file/bot%s/voice/nope" % self.token)[:2], 404)
        self.assert_error(self.api("getFile", {"file_id": "nope"}), 400)
        # files are per token
        self.assert_error(request("GET", "/file/bot%s/voice/file_1.oga" % new_token())[:2], 404)


class PresetTest(Base):
    def test_fail(self):
        self.control("fail", {"token": self.token, "method": "sendMessage", "error_code": 429,
                              "retry_after": 3, "times": 2})
        for _ in range(2):
            st, body = self.api("sendMessage", {"chat_id": 1, "text": "x"})
            self.assertEqual(body, {"ok": False, "error_code": 429,
                                    "description": "Too Many Requests: retry after 3",
                                    "parameters": {"retry_after": 3}})
            self.assertEqual(st, 429)
        self.assertEqual(self.api("sendMessage", {"chat_id": 1, "text": "x"})[0], 200)
        self.control("fail", {"token": self.token, "method": "getupdates", "error_code": 502,
                              "description": "Bad Gateway"})
        self.assert_error(self.api("getUpdates", {}), 502, "Bad Gateway")
        self.assertEqual(self.stats()["calls"], {"sendmessage": 3, "getupdates": 1})
        self.assertEqual(len(self.sent()), 1)

    def test_revoke(self):
        self.assertEqual(self.api("getMe")[0], 200)
        self.control("files", {"token": self.token, "file_id": "F", "content_base64": "eA==",
                               "file_path": "f.bin"})
        self.control("revoke", {"token": self.token})
        self.assert_error(self.api("getMe"), 401, "Unauthorized")
        self.assert_error(self.api("sendMessage", {"chat_id": 1, "text": "x"}), 401)
        self.assert_error(request("GET", "/file/bot%s/f.bin" % self.token)[:2], 401)
        other = new_token()
        self.assertEqual(self.api("getMe", token=other)[0], 200)

    def test_raw(self):
        self.control("raw", {"token": self.token, "method": "getMe", "status": 200,
                             "body": "{\"ok\":tru"})
        st, body, _ = request("GET", "/bot%s/getMe" % self.token)
        self.assertEqual((st, body), (200, b"{\"ok\":tru"))
        self.assertEqual(self.api("getMe")[1]["ok"], True)
        self.control("raw", {"token": self.token, "method": "sendMessage", "status": 502,
                             "body": "<html>bad gateway</html>", "content_type": "text/html"})
        st, body, hdrs = request("POST", "/bot%s/sendMessage" % self.token, b"{}",
                                 {"Content-Type": "application/json"})
        self.assertEqual((st, body, hdrs["content-type"]),
                         (502, b"<html>bad gateway</html>", "text/html"))

    def test_control_errors_and_reset(self):
        st, _, _ = request("POST", "/_control/updates", b"{nope",
                           {"Content-Type": "application/json"})
        self.assertEqual(st, 400)
        st, _, _ = request("POST", "/_control/updates", json.dumps({"update": {}}).encode())
        self.assertEqual(st, 400)
        st, _, _ = request("GET", "/_control/sent")
        self.assertEqual(st, 400)
        st, _, _ = request("GET", "/_control/unknown")
        self.assertEqual(st, 404)
        r = self.control("message", {"token": self.token, "text": "hello", "chat_id": 31})
        self.assertEqual(r["message_id"], 1)
        upd = self.api("getUpdates", {})[1]["result"]
        self.assertEqual(upd[0]["message"]["text"], "hello")
        self.assertEqual(upd[0]["message"]["chat"]["id"], 31)
        self.control("revoke", {"token": self.token})
        self.control("reset", {})
        self.assertEqual(self.api("getMe")[0], 200)
        self.assertEqual(self.stats()["pending"], 0)
        self.assertEqual(self.stats()["calls"], {"getme": 1})


class CommandLineTest(unittest.TestCase):
    def test_port_line_and_sigterm(self):
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_telegram.py"),
                                 "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            line = proc.stdout.readline().decode()
            self.assertRegex(line, r"^FAKE_TELEGRAM_PORT=\d+\n$")
            port = int(line.strip().split("=")[1])
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            c.request("GET", "/bot1:a/getMe")
            self.assertEqual(c.getresponse().status, 200)
            c.close()
            # a pending long poll must not block shutdown
            s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            s.sendall(b"GET /bot1:a/getUpdates?timeout=30 HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.2)
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(10), 0)
            s.close()
            self.assertEqual(proc.stdout.read(), b"")  # exactly one line on stdout
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
            proc.stdout.close()
            proc.stderr.close()


if __name__ == "__main__":
    unittest.main()
