"""Floods (issue 13 §3): one address cannot hold more than its connections.

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
