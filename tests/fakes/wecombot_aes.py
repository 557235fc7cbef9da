"""AES-256-CBC and Tencent's WXBizMsgCrypt format for fake_wecombot.py, in the standard library
only (the fakes take no third-party packages besides python3-websockets). The block cipher is
FIPS-197 written out plainly; it is slow, which is fine for test messages. Checked in
test_fake_wecombot.py against the FIPS-197 C.3 AES-256 vector and a NIST SP 800-38A CBC vector.

    key = aes_key("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG")   # EncodingAESKey -> 32 bytes
    enc = wx_encrypt(key, b'{"msgid":"1"}', b"")                   # base64 text
    plain, receive_id = wx_decrypt(key, enc)
    sig = wx_signature(token, timestamp, nonce, enc)
"""

import base64
import hashlib
import os
import struct


def _xtime(a):
    a <<= 1
    return (a ^ 0x11B) & 0xFF if a & 0x100 else a


def _mul(a, b):
    r = 0
    while b:
        if b & 1:
            r ^= a
        a = _xtime(a)
        b >>= 1
    return r


def _make_sbox():
    sbox = [0] * 256
    for x in range(256):
        # Multiplicative inverse in GF(2^8), then the affine transform.
        inv = 0
        if x:
            for y in range(1, 256):
                if _mul(x, y) == 1:
                    inv = y
                    break
        s = inv
        for shift in range(1, 5):
            s ^= ((inv << shift) | (inv >> (8 - shift))) & 0xFF
        sbox[x] = s ^ 0x63
    inv_sbox = [0] * 256
    for i, v in enumerate(sbox):
        inv_sbox[v] = i
    return sbox, inv_sbox


SBOX, INV_SBOX = _make_sbox()
_MUL = {n: [_mul(x, n) for x in range(256)] for n in (2, 3, 9, 11, 13, 14)}


def _expand_key(key):
    if len(key) != 32:
        raise ValueError("AES-256 needs a 32-byte key")
    nk, nr = 8, 14
    words = [list(key[4 * i:4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (nr + 1)):
        t = list(words[i - 1])
        if i % nk == 0:
            t = t[1:] + t[:1]
            t = [SBOX[b] for b in t]
            t[0] ^= rcon
            rcon = _xtime(rcon)
        elif i % nk == 4:
            t = [SBOX[b] for b in t]
        words.append([a ^ b for a, b in zip(words[i - nk], t)])
    return [sum(words[4 * r:4 * r + 4], []) for r in range(nr + 1)]


def _add(state, rk):
    return [a ^ b for a, b in zip(state, rk)]


def _shift_rows(s, inverse=False):
    out = [0] * 16
    for c in range(4):
        for r in range(4):
            src = (c + r) % 4 if not inverse else (c - r) % 4
            out[4 * c + r] = s[4 * src + r]
    return out


def _mix_columns(s, inverse=False):
    out = []
    m2, m3 = _MUL[2], _MUL[3]
    m9, m11, m13, m14 = _MUL[9], _MUL[11], _MUL[13], _MUL[14]
    for c in range(4):
        a0, a1, a2, a3 = s[4 * c:4 * c + 4]
        if not inverse:
            out += [m2[a0] ^ m3[a1] ^ a2 ^ a3, a0 ^ m2[a1] ^ m3[a2] ^ a3,
                    a0 ^ a1 ^ m2[a2] ^ m3[a3], m3[a0] ^ a1 ^ a2 ^ m2[a3]]
        else:
            out += [m14[a0] ^ m11[a1] ^ m13[a2] ^ m9[a3], m9[a0] ^ m14[a1] ^ m11[a2] ^ m13[a3],
                    m13[a0] ^ m9[a1] ^ m14[a2] ^ m11[a3], m11[a0] ^ m13[a1] ^ m9[a2] ^ m14[a3]]
    return out


def encrypt_block(round_keys, block):
    s = _add(list(block), round_keys[0])
    for rnd in range(1, 14):
        s = _mix_columns(_shift_rows([SBOX[b] for b in s]))
        s = _add(s, round_keys[rnd])
    s = _add(_shift_rows([SBOX[b] for b in s]), round_keys[14])
    return bytes(s)


def decrypt_block(round_keys, block):
    s = _add(list(block), round_keys[14])
    for rnd in range(13, 0, -1):
        s = [INV_SBOX[b] for b in _shift_rows(s, inverse=True)]
        s = _mix_columns(_add(s, round_keys[rnd]), inverse=True)
    s = [INV_SBOX[b] for b in _shift_rows(s, inverse=True)]
    return bytes(_add(s, round_keys[0]))


def cbc_encrypt(key, iv, data):
    """AES-256-CBC over whole blocks (the caller pads)."""
    if len(data) % 16:
        raise ValueError("data is not whole blocks")
    rk, prev, out = _expand_key(key), bytes(iv), bytearray()
    for i in range(0, len(data), 16):
        prev = encrypt_block(rk, bytes(a ^ b for a, b in zip(data[i:i + 16], prev)))
        out += prev
    return bytes(out)


def cbc_decrypt(key, iv, data):
    if len(data) % 16:
        raise ValueError("data is not whole blocks")
    rk, prev, out = _expand_key(key), bytes(iv), bytearray()
    for i in range(0, len(data), 16):
        block = data[i:i + 16]
        out += bytes(a ^ b for a, b in zip(decrypt_block(rk, block), prev))
        prev = block
    return bytes(out)


def pad32(data):
    n = 32 - len(data) % 32
    return data + bytes([n]) * n


def unpad32(data):
    if not data:
        raise ValueError("empty plaintext")
    n = data[-1]
    if n < 1 or n > 32 or data[-n:] != bytes([n]) * n:
        raise ValueError("bad PKCS#7 padding")
    return data[:-n]


def aes_key(encoding_aes_key):
    key = base64.b64decode(encoding_aes_key + "=")
    if len(encoding_aes_key) != 43 or len(key) != 32:
        raise ValueError("EncodingAESKey must be 43 base64 characters")
    return key


def wx_encrypt(key, message, receive_id=b"", random16=None):
    """random(16) | len(message) big-endian | message | receive_id, padded to 32, base64."""
    random16 = random16 if random16 is not None else os.urandom(16)
    plain = random16 + struct.pack(">I", len(message)) + message + receive_id
    return base64.b64encode(cbc_encrypt(key, key[:16], pad32(plain))).decode("ascii")


def wx_decrypt(key, text):
    """(message, receive_id); ValueError for anything malformed."""
    plain = unpad32(cbc_decrypt(key, key[:16], base64.b64decode(text, validate=True)))
    if len(plain) < 20:
        raise ValueError("plaintext too short")
    (n,) = struct.unpack(">I", plain[16:20])
    if 20 + n > len(plain):
        raise ValueError("length beyond the plaintext")
    return plain[20:20 + n], plain[20 + n:]


def wx_signature(token, timestamp, nonce, encrypt):
    return hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypt])).encode()).hexdigest()


def media_encrypt(aeskey_b64, data):
    """An AI-bot media download: AES-256-CBC, key = base64 of the aeskey (padding optional),
    IV = key[:16], PKCS#7 to 32 bytes."""
    key_text = aeskey_b64 + "=" * (-len(aeskey_b64) % 4)
    key = base64.b64decode(key_text)
    return cbc_encrypt(key, key[:16], pad32(data))
