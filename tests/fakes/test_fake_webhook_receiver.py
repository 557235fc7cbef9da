"""Self-tests of fake_webhook_receiver.py: recording, signature checks, failures, takeover, hang."""

import http.client
import json
import time
import unittest

from fake_webhook_receiver import FakeWebhookReceiver, signature


class FakeWebhookReceiverTest(unittest.TestCase):

    def setUp(self):
        self.fake = FakeWebhookReceiver()
        self.fake.start()
        self.addCleanup(self.fake.stop)

    def push(self, body, secret=None, timestamp="1700000000", headers=None, timeout=5):
        raw = json.dumps(body).encode()
        h = {"Content-Type": "application/json", "X-Switchboard-Timestamp": timestamp}
        if secret:
            h["X-Switchboard-Signature"] = signature(secret, timestamp, raw)
        h.update(headers or {})
        conn = http.client.HTTPConnection("127.0.0.1", self.fake.port, timeout=timeout)
        conn.request("POST", "/hook", raw, h)
        res = conn.getresponse()
        data = res.read()
        conn.close()
        return res.status, json.loads(data)

    def test_records_and_checks_the_signature(self):
        self.fake.configure(secret="whsec_abc")
        self.assertEqual(self.push({"a": 1}, secret="whsec_abc"),
                         (200, {"status": "ok", "skip_pipeline": False}))
        self.push({"a": 2}, secret="whsec_other")
        self.push({"a": 3}, secret="whsec_abc", headers={"X-Switchboard-Timestamp": "1"})
        pushes = self.fake.pushes()
        self.assertEqual([p["body"] for p in pushes], [{"a": 1}, {"a": 2}, {"a": 3}])
        self.assertEqual([p["signature_ok"] for p in pushes], [True, False, False])

    def test_fails_the_asked_number_of_times_then_takes_over(self):
        self.fake.configure(fail=2, status=503, skip_pipeline=True)
        self.assertEqual(self.push({})[0], 503)
        self.assertEqual(self.push({})[0], 503)
        self.assertEqual(self.push({}), (200, {"status": "ok", "skip_pipeline": True}))
        self.assertEqual([p["answered"] for p in self.fake.pushes()], [503, 503, 200])

    def test_hangs_when_asked(self):
        self.fake.configure(hang_seconds=0.5)
        start = time.time()
        self.push({})
        self.assertGreaterEqual(time.time() - start, 0.45)

    def test_control_over_http_and_reset(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.fake.port, timeout=5)
        conn.request("POST", "/_control/config", json.dumps({"skip_pipeline": True}))
        conn.getresponse().read()
        self.assertTrue(self.push({})[1]["skip_pipeline"])
        conn.request("GET", "/_control/pushes")
        self.assertEqual(len(json.loads(conn.getresponse().read())), 1)
        conn.request("POST", "/_control/reset", b"")
        conn.getresponse().read()
        conn.close()
        self.assertEqual(self.fake.pushes(), [])
        self.assertFalse(self.push({})[1]["skip_pipeline"])


if __name__ == "__main__":
    unittest.main()
