"""A minimal WebSocket client (RFC 6455, standard library only) for the API suite: text frames,
masking, ping/pong and close; every read has a timeout."""

import base64
import hashlib
import json
import os
import socket
import struct

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class HandshakeError(Exception):
    def __init__(self, status, body):
        super().__init__("handshake refused: %s %s" % (status, body))
        self.status = status
        self.body = body


class WebSocket:
    def __init__(self, host, port, path, headers=None, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET %s HTTP/1.1" % path, "Host: %s:%d" % (host, port), "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"]
        for name, value in (headers or {}).items():
            lines.append("%s: %s" % (name, value))
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise HandshakeError(0, "connection closed")
            head += chunk
        head, _, rest = head.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split()[1])
        hdrs = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            hdrs[name.strip().lower()] = value.strip()
        if status != 101:
            length = int(hdrs.get("content-length", "0"))
            while len(rest) < length:
                chunk = self.sock.recv(4096)
                if not chunk:
                    break
                rest += chunk
            self.sock.close()
            try:
                body = json.loads(rest.decode())
            except ValueError:
                body = rest.decode("utf-8", "replace")
            raise HandshakeError(status, body)
        expected = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        assert hdrs.get("sec-websocket-accept") == expected, hdrs
        self.buffer = rest
        self.closed = False
        self.close_code = None

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _send_frame(self, opcode, payload):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send_text(self, text):
        self._send_frame(0x1, text.encode())

    def send_json(self, obj):
        self.send_text(json.dumps(obj))

    def recv(self, timeout=10.0):
        """The next text message as a string; None once the server closed."""
        self.sock.settimeout(timeout)
        message = b""
        while True:
            b0, b1 = self._read(2)
            opcode = b0 & 0x0F
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            if opcode == 0x8:
                self.closed = True
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                return None
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def recv_json(self, timeout=10.0):
        text = self.recv(timeout)
        return None if text is None else json.loads(text)

    def close(self):
        try:
            if not self.closed:
                self._send_frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        self.sock.close()
