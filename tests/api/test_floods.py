"""Floods and lockouts (issue 13 §3, and §4's token generation): a login flood is refused with 429
at once while other routes stay fast; failures from one address do not lock the admin out of
another; reset-password is throttled; one address cannot hold more than its connections; a
password change or reset ends the tokens issued before.

The server keys throttles on the TCP peer address (it trusts no X-Forwarded-For), so clients
here bind their own loopback source addresses (127.0.0.0/8 is all local on Linux)."""

import http.client
import json
import socket
import statistics
import threading
import time

from harness import ADMIN_PASSWORD, ADMIN_USER, ServerTestCase


def req_from(srv, source, method, path, body=None, token=None, timeout=15):
    """One request from the loopback address `source`: (status, parsed body, headers)."""
    conn = http.client.HTTPConnection(srv.connect_host, srv.port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                     headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, json.loads(raw) if raw else None, {
            k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


class LoginFloodTest(ServerTestCase):
    """64 connections send wrong passwords for made-up users as fast as they are answered, each
    moving to a fresh source address every 3 requests, so no per-address or per-account throttle
    fires (an attacker with many addresses). Before hashing had its own capacity this pushed an
    authenticated GET to seconds; the strict figure (160 connections, p99 < 50 ms) is
    bench/login_flood_bench.py's, these bounds are generous."""

    CONNECTIONS = 64
    SECONDS = 4.0

    def flood(self, index, stop, results):
        n = index
        while not stop.is_set():
            n += self.CONNECTIONS
            source = "127.%d.%d.%d" % (20 + n // 64516, 1 + n // 254 % 254, 1 + n % 254)
            conn = http.client.HTTPConnection(self.srv.connect_host, self.srv.port, timeout=15,
                                              source_address=(source, 0))
            try:
                for k in range(3):
                    body = json.dumps({"user": "user-%d-%d@example.com" % (n, k),
                                       "password": "wrong-password"}).encode()
                    started = time.monotonic()
                    conn.request("POST", "/api/v1/user/auth", body=body,
                                 headers={"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    resp.read()
                    results.append((resp.status, time.monotonic() - started,
                                    resp.getheader("Retry-After")))
            except OSError:
                pass
            finally:
                conn.close()

    def test_flood_gets_429_quickly_and_other_routes_stay_fast(self):
        stop = threading.Event()
        results = []
        threads = [threading.Thread(target=self.flood, args=(i, stop, results), daemon=True)
                   for i in range(self.CONNECTIONS)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        latencies = []
        conn = self.srv.connection()
        deadline = time.monotonic() + self.SECONDS
        try:
            while time.monotonic() < deadline:
                started = time.monotonic()
                status, resp, _ = self.srv.req("GET", "/api/v1/pipelines", token=self.token,
                                               conn=conn)
                latencies.append(time.monotonic() - started)
                self.assertEqual(status, 200, resp)
                time.sleep(0.02)
        finally:
            conn.close()
            stop.set()
            for t in threads:
                t.join(20)
        latencies.sort()
        self.assertLess(statistics.median(latencies), 0.25, latencies[-10:])
        self.assertLess(latencies[int(len(latencies) * 0.95)], 1.0, latencies[-10:])
        refused = [r for r in results if r[0] == 429]
        self.assertTrue(refused, "no 429 in %d flood answers" % len(results))
        self.assertGreater(len(refused), len(results) // 2, "most of the flood is refused")
        self.assertTrue(all(r[2] and int(r[2]) >= 1 for r in refused), "429 without Retry-After")
        self.assertLess(statistics.median(r[1] for r in refused), 0.25)
        self.assertEqual(set(r[0] for r in results) - {401, 429}, set())
        # The flood over, the admin logs in.
        self.assertTrue(self.srv.login())


class LockoutTest(ServerTestCase):
    """Wrong passwords from one address lock that address out, not the admin."""

    server_env = {"AUTH__LOGIN_MAX_FAILURES": "3"}

    def test_failures_elsewhere_do_not_lock_the_admin_out(self):
        attacker = "127.0.4.1"
        for i in range(3):
            status, resp, _ = req_from(self.srv, attacker, "POST", "/api/v1/user/auth",
                                       {"user": ADMIN_USER, "password": "bad-password-%d" % i})
            self.assertError(status, resp, 401)
        status, resp, headers = req_from(self.srv, attacker, "POST", "/api/v1/user/auth",
                                         {"user": ADMIN_USER, "password": ADMIN_PASSWORD})
        self.assertError(status, resp, 429)
        self.assertGreaterEqual(int(headers.get("retry-after", "0")), 1)
        # The admin, from a clean address, is not kept out (before: 429 for five minutes).
        status, resp, _ = req_from(self.srv, "127.0.4.2", "POST", "/api/v1/user/auth",
                                   {"user": ADMIN_USER, "password": ADMIN_PASSWORD})
        self.assertOk(status, resp)
        # With the account under attack, another address that fails once is refused next.
        status, resp, _ = req_from(self.srv, "127.0.4.3", "POST", "/api/v1/user/auth",
                                   {"user": ADMIN_USER, "password": "bad-password-x"})
        self.assertError(status, resp, 401)
        status, resp, _ = req_from(self.srv, "127.0.4.3", "POST", "/api/v1/user/auth",
                                   {"user": ADMIN_USER, "password": ADMIN_PASSWORD})
        self.assertError(status, resp, 429)

    def test_reset_password_is_throttled_per_address(self):
        attacker = "127.0.5.1"
        for i in range(3):
            status, resp, _ = req_from(self.srv, attacker, "POST", "/api/v1/user/reset-password",
                                       {"user": ADMIN_USER, "recovery_key": "guess-%d" % i,
                                        "new_password": "reset-password-1"})
            self.assertError(status, resp, 403)
        status, resp, headers = req_from(
            self.srv, attacker, "POST", "/api/v1/user/reset-password",
            {"user": ADMIN_USER, "recovery_key": self.srv.recovery_key,
             "new_password": "reset-password-1"})
        self.assertError(status, resp, 429)
        self.assertGreaterEqual(int(headers.get("retry-after", "0")), 1)
        status, resp, _ = req_from(self.srv, "127.0.5.2", "POST", "/api/v1/user/reset-password",
                                   {"user": ADMIN_USER, "recovery_key": self.srv.recovery_key,
                                    "new_password": ADMIN_PASSWORD})
        self.assertOk(status, resp)


class ConnectionLimitTest(ServerTestCase):
    server_env = {"API__MAX_CONNECTIONS_PER_ADDRESS": "8"}

    def open_from(self, source):
        s = socket.create_connection((self.srv.connect_host, self.srv.port), timeout=10,
                                     source_address=(source, 0))
        s.settimeout(10)
        return s

    @staticmethod
    def exchange(s):
        """A health check on `s`: the response bytes, b"" when the server closed it."""
        try:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    return data
                data += chunk
            return data
        except (ConnectionResetError, BrokenPipeError):
            return b""

    def test_connections_beyond_the_limit_from_one_address_are_closed(self):
        held = [self.open_from("127.0.6.1") for _ in range(8)]
        try:
            for s in held:
                self.assertTrue(self.exchange(s).startswith(b"HTTP/1.1 200"))
            extra = self.open_from("127.0.6.1")
            self.assertEqual(self.exchange(extra), b"")
            extra.close()
            # Another address is not affected.
            other = self.open_from("127.0.6.2")
            self.assertTrue(self.exchange(other).startswith(b"HTTP/1.1 200"))
            other.close()
            # The held ones still work, and closing one frees a place.
            self.assertTrue(self.exchange(held[0]).startswith(b"HTTP/1.1 200"))
            held.pop().close()
            deadline = time.monotonic() + 5
            while True:
                again = self.open_from("127.0.6.1")
                answer = self.exchange(again)
                again.close()
                if answer.startswith(b"HTTP/1.1 200") or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            self.assertTrue(answer.startswith(b"HTTP/1.1 200"), answer)
        finally:
            for s in held:
                s.close()


class TokenGenerationTest(ServerTestCase):
    """A password change or reset ends the tokens issued before; check-token cannot revive one."""

    def test_change_and_reset_end_older_tokens(self):
        old = self.srv.login()
        self.assertOk(*self.req("GET", "/api/v1/user/info", token=old)[:2])
        self.ok("POST", "/api/v1/user/change-password",
                {"current_password": ADMIN_PASSWORD, "new_password": "changed-password-1"})
        for token in (old, self.token):
            status, resp, _ = self.req("GET", "/api/v1/user/info", token=token)
            self.assertError(status, resp, 401)
            status, resp, _ = self.req("GET", "/api/v1/user/check-token", token=token)
            self.assertError(status, resp, 401)
        current = self.srv.login(password="changed-password-1")
        renewed = self.assertOk(*self.req("GET", "/api/v1/user/check-token",
                                          token=current)[:2])["token"]
        self.assertOk(*self.req("GET", "/api/v1/pipelines", token=renewed)[:2])

        status, resp, _ = self.req("POST", "/api/v1/user/reset-password",
                                   {"user": ADMIN_USER, "recovery_key": self.srv.recovery_key,
                                    "new_password": ADMIN_PASSWORD})
        self.assertOk(status, resp)
        for token in (current, renewed):
            status, resp, _ = self.req("GET", "/api/v1/pipelines", token=token)
            self.assertError(status, resp, 401)
            status, resp, _ = self.req("GET", "/api/v1/user/check-token", token=token)
            self.assertError(status, resp, 401)
        # API keys are not user tokens: they keep working.
        self.assertOk(*self.as_key("GET", "/api/v1/pipelines")[:2])
        # Across a restart too (the generation is stored, not only cached).
        self.srv.restart()
        status, resp, _ = self.req("GET", "/api/v1/pipelines", token=renewed)
        self.assertError(status, resp, 401)
        self.assertOk(*self.req("GET", "/api/v1/pipelines", token=self.srv.login())[:2])
        type(self).token = self.srv.login()
