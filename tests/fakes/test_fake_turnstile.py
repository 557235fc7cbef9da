"""Self-test of fake_turnstile.py (standard library only), run against the fake as a
subprocess. The expectations are Cloudflare's documented siteverify request and answer
(server-side validation and testing pages), not our adapter's behaviour.

Run: cd tests/fakes && python3 -m unittest -v test_fake_turnstile
"""

import http.client
import json
import os
import subprocess
import sys
import threading
import unittest
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 10.0
SECRET = "0x4AAAAAAAselfTestSecretKey"
PORT = None
PROC = None


def setUpModule():
    global PROC, PORT
    PROC = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_turnstile.py"), "--port",
                             "0", "--secret", SECRET], stdout=subprocess.PIPE)
    line = [None]
    t = threading.Thread(target=lambda: line.__setitem__(0, PROC.stdout.readline().decode()),
                         daemon=True)
    t.start()
    t.join(TIMEOUT)
    if not line[0] or not line[0].startswith("FAKE_TURNSTILE_PORT="):
        PROC.kill()
        raise RuntimeError("fake did not start: %r" % line[0])
    PORT = int(line[0].strip().split("=", 1)[1])


def tearDownModule():
    PROC.terminate()
    try:
        PROC.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        PROC.kill()
    PROC.stdout.close()


def request(method, path, body=b"", content_type="application/x-www-form-urlencoded"):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=TIMEOUT)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": content_type})
        r = conn.getresponse()
        raw = r.read()
        return r.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def verify(fields, as_json=False):
    if as_json:
        return request("POST", "/turnstile/v0/siteverify", json.dumps(fields).encode(),
                       "application/json")
    return request("POST", "/turnstile/v0/siteverify", urllib.parse.urlencode(fields).encode())


def control(path, body=None):
    if body is None:
        return request("GET", "/_control/" + path)[1]
    return request("POST", "/_control/" + path, json.dumps(body).encode(), "application/json")[1]


def token(**opts):
    return control("token", opts)["token"]


class SiteverifyTest(unittest.TestCase):
    def setUp(self):
        control("reset", {})

    def test_a_fresh_token_passes_once_with_the_documented_answer(self):
        t = token(hostname="shop.example", action="chat", cdata="c1")
        status, body = verify({"secret": SECRET, "response": t, "remoteip": "203.0.113.7"})
        self.assertEqual(status, 200)
        self.assertIs(body["success"], True)
        self.assertEqual(body["error-codes"], [])
        self.assertEqual(body["hostname"], "shop.example")
        self.assertEqual(body["action"], "chat")
        self.assertEqual(body["cdata"], "c1")
        self.assertRegex(body["challenge_ts"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        # Tokens are single use.
        status, body = verify({"secret": SECRET, "response": t})
        self.assertEqual((status, body["success"], body["error-codes"]),
                         (200, False, ["timeout-or-duplicate"]))
        call = control("calls")["calls"][0]
        self.assertEqual((call["secret"], call["response"], call["remoteip"]),
                         (SECRET, t, "203.0.113.7"))

    def test_json_bodies_are_accepted_too(self):
        status, body = verify({"secret": SECRET, "response": token()}, as_json=True)
        self.assertEqual((status, body["success"]), (200, True))

    def test_missing_and_wrong_inputs_answer_200_with_error_codes(self):
        cases = [
            ({"response": "x"}, ["missing-input-secret"]),
            ({"secret": SECRET}, ["missing-input-response"]),
            ({}, ["missing-input-secret", "missing-input-response"]),
            ({"secret": "0x4AAAAAAAnotTheSecret", "response": token()}, ["invalid-input-secret"]),
            ({"secret": SECRET, "response": "never-issued"}, ["invalid-input-response"]),
            ({"secret": SECRET, "response": "x" * 2049}, ["invalid-input-response"]),
            ({"secret": SECRET, "response": "XXXX.DUMMY.TOKEN.XXXX"}, ["invalid-input-response"]),
        ]
        for fields, codes in cases:
            with self.subTest(fields=list(fields)):
                status, body = verify(fields)
                self.assertEqual(status, 200)
                self.assertIs(body["success"], False)
                self.assertEqual(body["error-codes"], codes)

    def test_an_expired_token_is_timeout_or_duplicate(self):
        t = token(age=301)
        status, body = verify({"secret": SECRET, "response": t})
        self.assertEqual(body["error-codes"], ["timeout-or-duplicate"])

    def test_the_same_idempotency_key_may_check_a_token_again(self):
        t, key = token(), str(uuid.uuid4())
        for _ in range(2):
            status, body = verify({"secret": SECRET, "response": t, "idempotency_key": key})
            self.assertIs(body["success"], True)
        status, body = verify({"secret": SECRET, "response": t})
        self.assertEqual(body["error-codes"], ["timeout-or-duplicate"])

    def test_cloudflares_test_secret_keys(self):
        self.assertIs(verify({"secret": "1x0000000000000000000000000000000AA",
                              "response": "XXXX.DUMMY.TOKEN.XXXX"})[1]["success"], True)
        self.assertEqual(verify({"secret": "2x0000000000000000000000000000000AA",
                                 "response": "XXXX.DUMMY.TOKEN.XXXX"})[1]["error-codes"],
                         ["invalid-input-response"])
        self.assertEqual(verify({"secret": "3x0000000000000000000000000000000AA",
                                 "response": "XXXX.DUMMY.TOKEN.XXXX"})[1]["error-codes"],
                         ["timeout-or-duplicate"])

    def test_unreadable_bodies_and_other_methods(self):
        status, body = request("POST", "/turnstile/v0/siteverify", b"{not json",
                               "application/json")
        self.assertEqual((status, body["error-codes"]), (200, ["bad-request"]))
        status, body = request("GET", "/turnstile/v0/siteverify")
        self.assertEqual(status, 405)

    def test_injected_failures(self):
        control("fail", {"status": 500, "times": 1})
        status, body = verify({"secret": SECRET, "response": token()})
        self.assertEqual((status, body["error-codes"]), (500, ["internal-error"]))
        status, body = verify({"secret": SECRET, "response": token()})
        self.assertEqual((status, body["success"]), (200, True))


if __name__ == "__main__":
    unittest.main()
