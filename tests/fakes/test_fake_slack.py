"""Self-test of fake_slack.py (standard library only), run against the fake as a subprocess.

A small HTTP server in this file plays the bot: it receives the fake's deliveries and checks
their v0 signatures independently with hmac.

Run: cd tests/fakes && python3 -m unittest -v test_fake_slack
"""

import hashlib
import hmac
import http.client
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 10.0
SECRET = "test-signing-secret-123"
TOKEN = "xoxb-1111-test"
PORT = None
PROC = None


def setUpModule():
    global PROC, PORT
    PROC = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_slack.py"), "--port", "0",
                             "--signing-secret", SECRET, "--bot-token", TOKEN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = [None]
    t = threading.Thread(target=lambda: line.__setitem__(0, PROC.stdout.readline().decode()),
                         daemon=True)
    t.start()
    t.join(TIMEOUT)
    if not line[0] or not line[0].startswith("FAKE_SLACK_PORT="):
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


def request(method, path, body=None, headers=None, port=None):
    """Returns (status, parsed JSON or text, lower-case headers)."""
    c = http.client.HTTPConnection("127.0.0.1", port or PORT, timeout=TIMEOUT)
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
    try:
        return r.status, json.loads(data.decode()), hdrs
    except ValueError:
        return r.status, data.decode("utf-8", "replace"), hdrs


def api(method, params, token=TOKEN, form=False):
    headers = {"Authorization": "Bearer " + token} if token else {}
    if form:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return request("POST", "/api/" + method, urllib.parse.urlencode(params).encode(),
                       headers)
    return request("POST", "/api/" + method, params, headers)


def control(name, body=None):
    if body is None:
        return request("GET", "/_control/" + name)[1]
    status, out, _ = request("POST", "/_control/" + name, body)
    if status != 200:
        raise AssertionError("control %s -> %d %r" % (name, status, out))
    return out


class Bot(object):
    """The bot's webhook: records every request; answers by `mode` (ok, slow, 500, challenge)."""

    def __init__(self):
        self.requests, self.mode, self.release = [], "ok", threading.Event()
        self.cond = threading.Condition()
        bot = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with bot.cond:
                    bot.requests.append((dict(self.headers.items()), raw))
                    bot.cond.notify_all()
                    mode = bot.mode
                status, out, extra = 200, b"", []
                if mode == "slow" and len(bot.requests) == 1:
                    bot.release.wait(TIMEOUT)
                elif mode == "500":
                    status = 500
                elif mode == "500-no-retry":
                    status, extra = 500, [("X-Slack-No-Retry", "1")]
                elif mode == "challenge":
                    out = json.dumps({"challenge": json.loads(raw)["challenge"]}).encode()
                try:
                    self.send_response(status)
                    for k, v in extra:
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/bots/0b7e1f0c" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def wait_for(self, n):
        deadline = time.monotonic() + TIMEOUT
        with self.cond:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("only %d of %d requests" % (len(self.requests), n))
                self.cond.wait(left)
            return list(self.requests)

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def verify(headers, raw, secret=SECRET):
    ts = headers["X-Slack-Request-Timestamp"]
    want = "v0=" + hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + raw,
                            hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, headers["X-Slack-Signature"]), int(ts)


class WebApiTest(unittest.TestCase):
    def setUp(self):
        control("reset", {})

    def test_auth(self):
        self.assertEqual(api("auth.test", {}, token=None)[1],
                         {"ok": False, "error": "not_authed"})
        status, out, _ = api("auth.test", {}, token="xoxb-wrong")
        self.assertEqual((status, out), (200, {"ok": False, "error": "invalid_auth"}))
        out = api("auth.test", {})[1]
        for k in ("url", "team", "user", "team_id", "user_id", "bot_id"):
            self.assertIn(k, out)
        self.assertTrue(out["ok"])
        # the token may also come as a form parameter
        status, out, _ = request("POST", "/api/auth.test",
                                 urllib.parse.urlencode({"token": TOKEN}).encode(),
                                 {"Content-Type": "application/x-www-form-urlencoded"})
        self.assertTrue(out["ok"])
        self.assertEqual(api("chat.nothing", {})[1]["error"], "unknown_method")
        # ... but never inside a JSON body
        self.assertEqual(api("auth.test", {"token": TOKEN}, token=None)[1]["error"],
                         "not_authed")

    def test_post_message(self):
        st, out, _ = api("chat.postMessage", {"channel": "C0GENERAL1", "text": "hi *there*",
                                              "thread_ts": "1700000000.000100"})
        self.assertEqual(st, 200)
        self.assertTrue(out["ok"])
        self.assertEqual(out["channel"], "C0GENERAL1")
        self.assertEqual(out["message"]["text"], "hi *there*")
        self.assertEqual(out["message"]["thread_ts"], "1700000000.000100")
        self.assertRegex(out["ts"], r"^\d+\.\d{6}$")
        out2 = api("chat.postMessage", {"channel": "C0GENERAL1", "text": "again"}, form=True)[1]
        self.assertGreater(float(out2["ts"]), float(out["ts"]))
        sent = control("sent")["sent"]
        self.assertEqual([(s["channel"], s["text"], s["thread_ts"]) for s in sent],
                         [("C0GENERAL1", "hi *there*", "1700000000.000100"),
                          ("C0GENERAL1", "again", None)])

    def test_post_message_errors_and_dm(self):
        self.assertEqual(api("chat.postMessage", {"channel": "C999", "text": "x"})[1]["error"],
                         "channel_not_found")
        self.assertEqual(api("chat.postMessage", {"channel": "C0GENERAL1"})[1]["error"],
                         "no_text")
        self.assertEqual(api("chat.postMessage",
                             {"channel": "C0GENERAL1", "text": "x" * 40001})[1]["error"],
                         "msg_too_long")
        self.assertEqual(api("chat.postMessage", {"channel": "U0NOBODY", "text": "x"})[1]
                         ["error"], "channel_not_found")
        out = api("chat.postMessage", {"channel": "U0USER0001", "text": "dm"})[1]
        self.assertEqual(out["channel"], "D0USER0001")
        out = api("chat.postMessage", {"channel": "@U0USER0001", "text": "legacy"})[1]
        self.assertEqual(out["channel"], "D0USER0001")
        out = api("chat.postMessage", {"channel": "#general", "text": "by name"})[1]
        self.assertEqual(out["channel"], "C0GENERAL1")
        control("channels", {"channels": [{"id": "C0NEW00001"}], "users": [{"id": "U0NEW"}]})
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "b"}}]
        out = api("chat.postMessage", {"channel": "C0NEW00001", "blocks": blocks})[1]
        self.assertEqual(out["message"]["blocks"], blocks)
        self.assertEqual(len(control("sent")["sent"]), 4)

    def test_file_upload(self):
        self.assertEqual(api("files.getUploadURLExternal", {"filename": "a.png"})[1]["error"],
                         "invalid_arguments")
        out = api("files.getUploadURLExternal", {"filename": "a.png", "length": 5}, form=True)[1]
        self.assertTrue(out["ok"])
        fid, up = out["file_id"], urllib.parse.urlsplit(out["upload_url"])
        files = json.dumps([{"id": fid, "title": "pic"}])
        self.assertEqual(api("files.completeUploadExternal",
                             {"files": files, "channel_id": "C0GENERAL1"}, form=True)[1]["error"],
                         "file_not_found")  # not uploaded yet
        st, _, _ = request("POST", up.path, b"\x89PNG\n", port=up.port)
        self.assertEqual(st, 200)
        self.assertEqual(api("files.completeUploadExternal",
                             {"files": files, "channel_id": "C404"}, form=True)[1]["error"],
                         "channel_not_found")
        out = api("files.completeUploadExternal",
                  {"files": [{"id": fid, "title": "pic"}], "channel_id": "C0GENERAL1",
                   "initial_comment": "here"})[1]
        self.assertEqual(out, {"ok": True, "files": [{"id": fid, "title": "pic"}]})
        s = control("sent")["sent"][-1]
        self.assertEqual((s["method"], s["channel"], s["initial_comment"], s["files"][0]["size"]),
                         ("files.completeUploadExternal", "C0GENERAL1", "here", 5))

    def test_injected_failures(self):
        control("fail", {"method": "chat.postMessage", "retry_after": 7})
        st, out, hdrs = api("chat.postMessage", {"channel": "C0GENERAL1", "text": "x"})
        self.assertEqual((st, out["error"], hdrs.get("retry-after")), (429, "ratelimited", "7"))
        control("fail", {"method": "*", "error": "fatal_error", "times": 2})
        self.assertEqual(api("auth.test", {})[1]["error"], "fatal_error")
        self.assertEqual(api("chat.postMessage", {"channel": "C0GENERAL1", "text": "x"})[1]
                         ["error"], "fatal_error")
        self.assertTrue(api("chat.postMessage", {"channel": "C0GENERAL1", "text": "x"})[1]["ok"])
        self.assertEqual(len(control("sent")["sent"]), 1)
        st, out, _ = request("POST", "/_control/fail", {"method": "x"})
        self.assertEqual(st, 400)


class DeliveryTest(unittest.TestCase):
    def setUp(self):
        control("reset", {})
        control("config", {"ack_timeout": 0.5, "retry_delays": [0, 0.05, 0.05]})
        self.bot = Bot()

    def tearDown(self):
        self.bot.close()
        control("config", {"ack_timeout": 3, "retry_delays": [0, 60, 300]})

    def test_event_envelope_and_signature(self):
        ev = {"type": "message", "channel": "D0NEWUSER1", "channel_type": "im",
              "user": "U0NEWUSER1", "text": "hello"}
        eid = control("event", {"url": self.bot.url, "event": ev, "wait": True})["event_id"]
        (headers, raw), = self.bot.wait_for(1)
        ok, ts = verify(headers, raw)
        self.assertTrue(ok)
        self.assertLessEqual(abs(ts - time.time()), 5)
        self.assertNotIn("X-Slack-Retry-Num", headers)
        env = json.loads(raw)
        self.assertEqual((env["type"], env["event_id"], env["event"]["text"]),
                         ("event_callback", eid, "hello"))
        for k in ("token", "team_id", "api_app_id", "event_time", "authorizations"):
            self.assertIn(k, env)
        self.assertEqual(env["event"]["ts"], env["event"]["event_ts"])
        d = control("deliveries")["deliveries"]
        self.assertEqual([(x["event_id"], x["status"], x["retry_num"]) for x in d],
                         [(eid, 200, 0)])
        # the event's DM channel is now known: the bot can answer there
        self.assertTrue(api("chat.postMessage", {"channel": "D0NEWUSER1", "text": "a"})[1]["ok"])

    def test_bad_signature_offset_and_retry_num(self):
        control("event", {"url": self.bot.url, "event": {"type": "message", "text": "x"},
                          "bad_signature": True, "timestamp_offset": -600, "retry_num": 2,
                          "event_id": "Ev0FIXED", "wait": True})
        (headers, raw), = self.bot.wait_for(1)
        ok, ts = verify(headers, raw)
        self.assertFalse(ok)
        self.assertTrue(verify(headers, raw, SECRET + "-wrong")[0])
        self.assertLess(ts, time.time() - 590)
        self.assertEqual((headers["X-Slack-Retry-Num"], headers["X-Slack-Retry-Reason"]),
                         ("2", "http_timeout"))
        self.assertEqual(json.loads(raw)["event_id"], "Ev0FIXED")

    def test_slow_bot_is_retried(self):
        self.bot.mode = "slow"
        t0 = time.monotonic()
        eid = control("event", {"url": self.bot.url, "event": {"type": "app_mention",
                                                               "text": "<@U0FAKEBOT1> hi"},
                                "wait": True})["event_id"]
        self.assertLess(time.monotonic() - t0, TIMEOUT)
        reqs = self.bot.wait_for(2)
        self.assertEqual(len(reqs), 2)
        self.assertEqual(json.loads(reqs[0][1])["event_id"], json.loads(reqs[1][1])["event_id"])
        self.assertEqual((reqs[1][0]["X-Slack-Retry-Num"], reqs[1][0]["X-Slack-Retry-Reason"]),
                         ("1", "http_timeout"))
        self.assertTrue(verify(*reqs[1])[0])
        d = control("deliveries?event_id=" + eid)["deliveries"]
        self.assertEqual([(x["status"], x["error"]) for x in d],
                         [(None, "http_timeout"), (200, None)])
        self.assertGreaterEqual(d[0]["elapsed"], 0.45)

    def test_error_answers_retry_three_times(self):
        self.bot.mode = "500"
        control("event", {"url": self.bot.url, "event": {"type": "message"}, "wait": True})
        reqs = self.bot.wait_for(4)
        self.assertEqual([h.get("X-Slack-Retry-Num") for h, _ in reqs], [None, "1", "2", "3"])
        self.assertEqual(reqs[3][0]["X-Slack-Retry-Reason"], "http_error")
        self.assertEqual([x["status"] for x in control("deliveries")["deliveries"]], [500] * 4)

    def test_no_retry_header_and_connection_failure(self):
        self.bot.mode = "500-no-retry"
        control("event", {"url": self.bot.url, "event": {"type": "message"}, "wait": True})
        self.assertEqual(len(self.bot.wait_for(1)), 1)
        control("event", {"url": "http://127.0.0.1:1/bots/x", "event": {"type": "message"},
                          "wait": True})
        d = control("deliveries")["deliveries"]
        self.assertEqual(len(d), 5)
        self.assertTrue(all(x["error"].startswith("connection_failed") for x in d[1:]))
        self.assertEqual(d[-1]["retry_reason"], "connection_failed")
        self.assertEqual(len(self.bot.requests), 1)

    def test_mention_sent_twice(self):
        out = control("mention", {"url": self.bot.url, "channel": "C0GENERAL1",
                                  "user": "U0USER0001", "text": "hello", "wait": True})
        reqs = self.bot.wait_for(2)
        envs = sorted((json.loads(raw) for _, raw in reqs), key=lambda e: e["event"]["type"])
        self.assertEqual([e["event"]["type"] for e in envs], ["app_mention", "message"])
        self.assertEqual(sorted(e["event_id"] for e in envs), sorted(out["event_ids"]))
        self.assertNotEqual(envs[0]["event_id"], envs[1]["event_id"])
        self.assertEqual({e["event"]["ts"] for e in envs}, {out["ts"]})
        self.assertEqual(envs[0]["event"]["text"], "<@U0FAKEBOT1> hello")
        self.assertTrue(all(verify(h, raw)[0] for h, raw in reqs))

    def test_url_verification(self):
        out = control("url_verification", {"url": self.bot.url})
        self.assertEqual((out["status"], out["ok"]), (200, False))  # bot answered empty
        self.bot.mode = "challenge"
        out = control("url_verification", {"url": self.bot.url})
        self.assertTrue(out["ok"])
        headers, raw = self.bot.wait_for(2)[1]
        self.assertTrue(verify(headers, raw)[0])
        self.assertEqual(json.loads(raw)["type"], "url_verification")

    def test_control_errors(self):
        st, out, _ = request("POST", "/_control/event", {"url": "ftp://x", "event": {}})
        self.assertEqual(st, 400)
        st, out, _ = request("POST", "/_control/event", {"url": self.bot.url, "event": 5})
        self.assertEqual(st, 400)
        for bad in ({"retry_num": "x"}, {"retry_num": 4}, {"timestamp_offset": "soon"},
                    {"event_id": 7}):
            st, out, _ = request("POST", "/_control/event",
                                 dict(bad, url=self.bot.url, event={"type": "message"}))
            self.assertEqual(st, 400, bad)
        self.assertEqual(self.bot.requests, [])
        self.assertEqual(request("POST", "/_control/nothing", {})[0], 404)


class InProcessTest(unittest.TestCase):
    def test_start_stop(self):
        sys.path.insert(0, HERE)
        import fake_slack
        with fake_slack.FakeSlack(signing_secret="s2", bot_token="xoxb-2") as fake:
            st, out, _ = request("POST", "/api/auth.test", b"",
                                 {"Authorization": "Bearer xoxb-2"}, port=fake.port)
            self.assertEqual((st, out["user_id"]), (200, fake_slack.BOT_USER))
            port = fake.port
        with self.assertRaises(OSError):
            request("POST", "/api/auth.test", b"", port=port)


if __name__ == "__main__":
    unittest.main()
