"""Tencent's "WXBizMsgCrypt" callback crypto in pure Python (standard library only), for the fakes
of WeChat Official Accounts and WeCom (internal app, customer service, AI bot).

Written from the published description (WeCom "加解密方案说明", the WXBizMsgCrypt samples):
- AESKey = base64_decode(EncodingAESKey + "="), 32 bytes; AES-256-CBC with IV = AESKey[:16];
- plaintext = random(16) | msg_len (uint32, big endian) | msg | receive_id, PKCS#7-padded to a
  32-byte block (pad value 1..32), the ciphertext base64 in <Encrypt> / "encrypt" / echostr;
- msg_signature = hex SHA-1 of [token, timestamp, nonce, encrypt] sorted and concatenated.

Usage:
    crypt = WeChatCrypt(token, encoding_aes_key, receive_id)
    encrypt = crypt.encrypt("<xml>...</xml>")
    sig = crypt.signature(timestamp, nonce, encrypt)
    xml = crypt.decrypt(encrypt)              # raises WeChatCryptError on any mismatch

Python has no AES in its standard library, so AES-256 (FIPS-197) is implemented below; it is
slow (tens of microseconds per block), which is plenty for test traffic.
"""

import base64
import hashlib
import os
import struct

__all__ = ["WeChatCrypt", "WeChatCryptError", "aes_key", "signature", "aes256_cbc_encrypt",
           "aes256_cbc_decrypt"]


class WeChatCryptError(ValueError):
    """A malformed key, ciphertext, padding, length or a receive id that does not match."""


# --- AES-256 (FIPS-197) ---------------------------------------------------------------------

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
        inv = 0
        if x:
            # x^254 is the inverse in GF(2^8).
            inv, p, e = 1, x, 254
            while e:
                if e & 1:
                    inv = _mul(inv, p)
                p = _mul(p, p)
                e >>= 1
        s = inv
        for shift in range(1, 5):
            s ^= ((inv << shift) | (inv >> (8 - shift))) & 0xFF
        sbox[x] = s ^ 0x63
    inv_sbox = [0] * 256
    for i, v in enumerate(sbox):
        inv_sbox[v] = i
    return sbox, inv_sbox


_SBOX, _INV_SBOX = _make_sbox()
_MUL2 = [_mul(x, 2) for x in range(256)]
_MUL3 = [_mul(x, 3) for x in range(256)]
_MUL9 = [_mul(x, 9) for x in range(256)]
_MUL11 = [_mul(x, 11) for x in range(256)]
_MUL13 = [_mul(x, 13) for x in range(256)]
_MUL14 = [_mul(x, 14) for x in range(256)]


def _expand_key(key):
    if len(key) != 32:
        raise WeChatCryptError("the AES key must be 32 bytes")
    words = [list(key[i:i + 4]) for i in range(0, 32, 4)]
    rcon = 1
    for i in range(8, 60):
        t = list(words[i - 1])
        if i % 8 == 0:
            t = t[1:] + t[:1]
            t = [_SBOX[b] for b in t]
            t[0] ^= rcon
            rcon = _xtime(rcon)
        elif i % 8 == 4:
            t = [_SBOX[b] for b in t]
        words.append([a ^ b for a, b in zip(words[i - 8], t)])
    # 15 round keys of 16 bytes, column-major like the state.
    return [sum(words[r * 4:r * 4 + 4], []) for r in range(15)]


def _encrypt_block(rk, block):
    s = [b ^ k for b, k in zip(block, rk[0])]
    for rnd in range(1, 15):
        s = [_SBOX[b] for b in s]
        # ShiftRows: state byte (row r, column c) is s[4c + r].
        s = [s[(i + 4 * (i % 4)) % 16] for i in range(16)]
        if rnd != 14:
            m = []
            for c in range(4):
                a0, a1, a2, a3 = s[4 * c:4 * c + 4]
                m += [_MUL2[a0] ^ _MUL3[a1] ^ a2 ^ a3,
                      a0 ^ _MUL2[a1] ^ _MUL3[a2] ^ a3,
                      a0 ^ a1 ^ _MUL2[a2] ^ _MUL3[a3],
                      _MUL3[a0] ^ a1 ^ a2 ^ _MUL2[a3]]
            s = m
        s = [b ^ k for b, k in zip(s, rk[rnd])]
    return bytes(s)


def _decrypt_block(rk, block):
    s = [b ^ k for b, k in zip(block, rk[14])]
    for rnd in range(13, -1, -1):
        s = [s[(i - 4 * (i % 4)) % 16] for i in range(16)]
        s = [_INV_SBOX[b] for b in s]
        s = [b ^ k for b, k in zip(s, rk[rnd])]
        if rnd != 0:
            m = []
            for c in range(4):
                a0, a1, a2, a3 = s[4 * c:4 * c + 4]
                m += [_MUL14[a0] ^ _MUL11[a1] ^ _MUL13[a2] ^ _MUL9[a3],
                      _MUL9[a0] ^ _MUL14[a1] ^ _MUL11[a2] ^ _MUL13[a3],
                      _MUL13[a0] ^ _MUL9[a1] ^ _MUL14[a2] ^ _MUL11[a3],
                      _MUL11[a0] ^ _MUL13[a1] ^ _MUL9[a2] ^ _MUL14[a3]]
            s = m
    return bytes(s)


def aes256_cbc_encrypt(key, iv, data):
    """Raw AES-256-CBC of `data` (a multiple of 16 bytes, padded by the caller)."""
    if len(iv) != 16 or len(data) % 16:
        raise WeChatCryptError("CBC needs a 16-byte IV and whole 16-byte blocks")
    rk = _expand_key(key)
    out, prev = bytearray(), iv
    for i in range(0, len(data), 16):
        prev = _encrypt_block(rk, bytes(a ^ b for a, b in zip(data[i:i + 16], prev)))
        out += prev
    return bytes(out)


def aes256_cbc_decrypt(key, iv, data):
    if len(iv) != 16 or len(data) % 16:
        raise WeChatCryptError("CBC needs a 16-byte IV and whole 16-byte blocks")
    rk = _expand_key(key)
    out, prev = bytearray(), iv
    for i in range(0, len(data), 16):
        block = data[i:i + 16]
        out += bytes(a ^ b for a, b in zip(_decrypt_block(rk, block), prev))
        prev = block
    return bytes(out)


# --- WXBizMsgCrypt -----------------------------------------------------------------------------

_BLOCK = 32  # WXBizMsgCrypt pads to 32 bytes, not AES's 16


def aes_key(encoding_aes_key):
    """The 32-byte key of a 43-character EncodingAESKey."""
    if len(encoding_aes_key) != 43:
        raise WeChatCryptError("EncodingAESKey must be 43 characters")
    try:
        key = base64.b64decode(encoding_aes_key + "=", validate=True)
    except ValueError as e:
        raise WeChatCryptError("EncodingAESKey is not base64") from e
    if len(key) != 32:
        raise WeChatCryptError("EncodingAESKey does not decode to 32 bytes")
    return key


def signature(token, timestamp, nonce, encrypt):
    """msg_signature: hex SHA-1 of the four values sorted and joined (no separators)."""
    parts = sorted(str(p) for p in (token, timestamp, nonce, encrypt))
    return hashlib.sha1("".join(parts).encode("utf-8")).hexdigest()


def plain_signature(token, timestamp, nonce):
    """Official Accounts' plain-mode `signature`: the same over token, timestamp, nonce."""
    parts = sorted(str(p) for p in (token, timestamp, nonce))
    return hashlib.sha1("".join(parts).encode("utf-8")).hexdigest()


class WeChatCrypt:
    def __init__(self, token, encoding_aes_key, receive_id):
        self.token = token
        self.key = aes_key(encoding_aes_key)
        self.receive_id = receive_id

    @classmethod
    def from_key(cls, key, receive_id, token=""):
        """The same from the 32 raw key bytes instead of the EncodingAESKey text."""
        crypt = cls.__new__(cls)
        crypt.token, crypt.key, crypt.receive_id = token, key, receive_id
        return crypt

    def signature(self, timestamp, nonce, encrypt):
        return signature(self.token, timestamp, nonce, encrypt)

    def encrypt(self, message, receive_id=None, random16=None):
        """base64 ciphertext of `message` (str or bytes); `receive_id` overrides the configured
        one (to forge a wrong one), `random16` fixes the random prefix (known-answer tests)."""
        if isinstance(message, str):
            message = message.encode("utf-8")
        rid = self.receive_id if receive_id is None else receive_id
        if isinstance(rid, str):
            rid = rid.encode("utf-8")
        prefix = os.urandom(16) if random16 is None else random16
        if len(prefix) != 16:
            raise WeChatCryptError("the random prefix must be 16 bytes")
        plain = prefix + struct.pack(">I", len(message)) + message + rid
        pad = _BLOCK - len(plain) % _BLOCK
        plain += bytes([pad]) * pad
        return base64.b64encode(aes256_cbc_encrypt(self.key, self.key[:16], plain)).decode("ascii")

    def decrypt_raw(self, encrypt):
        """(message bytes, receive id bytes) of a base64 ciphertext, the receive id unchecked."""
        try:
            cipher = base64.b64decode(encrypt, validate=True)
        except ValueError as e:
            raise WeChatCryptError("the ciphertext is not base64") from e
        if not cipher or len(cipher) % 16:
            raise WeChatCryptError("the ciphertext is not whole AES blocks")
        plain = aes256_cbc_decrypt(self.key, self.key[:16], cipher)
        pad = plain[-1]
        if pad < 1 or pad > _BLOCK or pad > len(plain) or plain[-pad:] != bytes([pad]) * pad:
            raise WeChatCryptError("bad padding (a wrong key?)")
        plain = plain[:-pad]
        if len(plain) < 20:
            raise WeChatCryptError("the plaintext is too short")
        (length,) = struct.unpack(">I", plain[16:20])
        if 20 + length > len(plain):
            raise WeChatCryptError("the message length is larger than the plaintext")
        return plain[20:20 + length], plain[20 + length:]

    def decrypt(self, encrypt, receive_id=None):
        """The message (str) of a base64 ciphertext whose receive id must match."""
        message, rid = self.decrypt_raw(encrypt)
        expected = self.receive_id if receive_id is None else receive_id
        if rid != expected.encode("utf-8"):
            raise WeChatCryptError("the receive id does not match")
        return message.decode("utf-8")


if __name__ == "__main__":
    # Quick check against Tencent's published WeCom sample (the full tests: test_wechat_aes.py).
    c = WeChatCrypt("hJqcu3uJ9Tn2gXPmxx2w9kkCkCE2EPYo", "6qkdMrq68nTKduznJYO1A37W2oEgpkMUvkttRToqhUt",
                    "ww1436e0e65a779aee")
    echo = ("fsi1xnbH4yQh0+PJxcOdhhK6TDXkjMyhEPA7xB2TGz6b+g7xyAbEkRxN/3cNXW9qdqjnoVzEtpbhnFyq6SVHyA"
            "==")
    assert c.decrypt(echo) == "1288432023552776189"
    print("ok")
