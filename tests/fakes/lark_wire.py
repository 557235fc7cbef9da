"""Lark's wire formats for the fake (tests/fakes/fake_lark.py) and its self-test, written from
Lark's docs and the official Go SDK, independently of Switchboard's C++:

- lark_encrypt: the Encrypt Key format, base64(iv + AES-256-CBC(SHA-256(key), PKCS#7(text)));
  AES-256 (FIPS-197) is written out because the standard library has none.
- lark_signature: X-Lark-Signature, hex SHA-256 of timestamp + nonce + encrypt key + raw body.
- encode_frame / decode_frame / header: the long connection's pbbp2.Frame protobuf
  (larksuite/oapi-sdk-go ws/pbbp2.pb.go), as dicts {SeqID, LogID, service, method, headers
  [(key, value)], payload_encoding, payload_type, payload (bytes), LogIDNew}.
"""

import base64
import hashlib
import os


# ---------------------------------------------------------------------------------------------
# AES-256-CBC encryption (FIPS-197), enough for Lark's Encrypt Key format.

def _rotl8(x, s):
    return ((x << s) | (x >> (8 - s))) & 0xFF


def _make_sbox():
    sbox = [0] * 256
    p = q = 1
    while True:
        p = p ^ ((p << 1) & 0xFF) ^ (0x1B if p & 0x80 else 0)
        q ^= q << 1
        q ^= q << 2
        q ^= q << 4
        q &= 0xFF
        if q & 0x80:
            q ^= 0x09
        sbox[p] = q ^ _rotl8(q, 1) ^ _rotl8(q, 2) ^ _rotl8(q, 3) ^ _rotl8(q, 4) ^ 0x63
        if p == 1:
            break
    sbox[0] = 0x63
    return sbox


SBOX = _make_sbox()


def _xtime(a):
    return ((a << 1) ^ 0x1B) & 0xFF if a & 0x80 else a << 1


def _expand_key(key):
    w = [list(key[4 * i:4 * i + 4]) for i in range(8)]
    rcon = 1
    for i in range(8, 60):
        t = list(w[i - 1])
        if i % 8 == 0:
            t = [SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = _xtime(rcon)
        elif i % 8 == 4:
            t = [SBOX[b] for b in t]
        w.append([w[i - 8][j] ^ t[j] for j in range(4)])
    return [sum(w[4 * r:4 * r + 4], []) for r in range(15)]


def _encrypt_block(rk, block):
    s = [b ^ k for b, k in zip(block, rk[0])]
    for rnd in range(1, 15):
        s = [SBOX[b] for b in s]
        s = [s[r + 4 * ((c + r) % 4)] for c in range(4) for r in range(4)]
        if rnd != 14:
            m = []
            for c in range(4):
                a = s[4 * c:4 * c + 4]
                x = [_xtime(v) for v in a]
                m += [x[0] ^ x[1] ^ a[1] ^ a[2] ^ a[3], a[0] ^ x[1] ^ x[2] ^ a[2] ^ a[3],
                      a[0] ^ a[1] ^ x[2] ^ x[3] ^ a[3], x[0] ^ a[0] ^ a[1] ^ a[2] ^ x[3]]
            s = m
        s = [b ^ k for b, k in zip(s, rk[rnd])]
    return bytes(s)


def lark_encrypt(encrypt_key, plaintext, iv=None):
    """base64(iv + AES-256-CBC(key=SHA-256(encrypt_key), PKCS#7(plaintext))) (4.3.5)."""
    if isinstance(plaintext, str):
        plaintext = plaintext.encode("utf-8")
    iv = iv if iv is not None else os.urandom(16)
    rk = _expand_key(hashlib.sha256(encrypt_key.encode("utf-8")).digest())
    pad = 16 - len(plaintext) % 16
    data = plaintext + bytes([pad]) * pad
    out, prev = [iv], iv
    for i in range(0, len(data), 16):
        prev = _encrypt_block(rk, bytes(a ^ b for a, b in zip(data[i:i + 16], prev)))
        out.append(prev)
    return base64.b64encode(b"".join(out)).decode()


def lark_signature(timestamp, nonce, encrypt_key, body):
    """X-Lark-Signature: hex SHA-256 of timestamp + nonce + encrypt_key + raw body (4.3.6)."""
    h = hashlib.sha256()
    h.update((timestamp + nonce + encrypt_key).encode("utf-8"))
    h.update(body)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# pbbp2.Frame (proto2), from the Go SDK's generated code.

def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _ld(field, data):
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def encode_frame(f):
    """Bytes as gogo-protobuf writes them: required varints, headers, optional strings, payload
    when present, LogIDNew."""
    out = bytearray()
    for field, name in ((1, "SeqID"), (2, "LogID"), (3, "service"), (4, "method")):
        out += _varint(field << 3) + _varint(int(f.get(name, 0)))
    for k, v in f.get("headers", []):
        out += _ld(5, _ld(1, k.encode()) + _ld(2, v.encode()))
    out += _ld(6, f.get("payload_encoding", "").encode())
    out += _ld(7, f.get("payload_type", "").encode())
    if f.get("payload"):
        out += _ld(8, f["payload"])
    out += _ld(9, f.get("LogIDNew", "").encode())
    return bytes(out)


def _read_varint(b, i):
    v, shift = 0, 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7


def _fields(b):
    i = 0
    while i < len(b):
        tag, i = _read_varint(b, i)
        field, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = _read_varint(b, i)
        elif wt == 2:
            n, i = _read_varint(b, i)
            if i + n > len(b):
                raise ValueError("length past the end")
            v, i = b[i:i + n], i + n
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            if i + n > len(b):
                raise ValueError("truncated fixed field")
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield field, wt, v


def decode_frame(b):
    f = {"headers": [], "payload": b""}
    names = {1: "SeqID", 2: "LogID", 3: "service", 4: "method"}
    for field, wt, v in _fields(bytes(b)):
        if field in names:
            if wt != 0:
                raise ValueError("field %d is not a varint" % field)
            if field in (3, 4) and v >= 1 << 63:
                v -= 1 << 64
            f[names[field]] = v
        elif field == 5:
            h = {k: bytes(x).decode() for k, _, x in _fields(bytes(v)) if k in (1, 2)}
            if 1 not in h or 2 not in h:
                raise ValueError("header without key or value")
            f["headers"].append((h[1], h[2]))
        elif field == 8:
            f["payload"] = bytes(v)
        elif field in (6, 7, 9):
            f[{6: "payload_encoding", 7: "payload_type", 9: "LogIDNew"}[field]] = bytes(v).decode()
    for name in names.values():
        if name not in f:
            raise ValueError("required field %s missing" % name)
    return f


def header(f, key):
    for k, v in f["headers"]:
        if k == key:
            return v
    return ""
