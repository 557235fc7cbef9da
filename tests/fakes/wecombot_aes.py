"""Tencent's WXBizMsgCrypt format as fake_wecombot.py uses it (bytes in and out, the receive id
returned rather than checked) and the AI bot's encrypted media downloads, on the one AES-256-CBC
of the fakes, wechat_aes.py (standard library only; checked there against FIPS-197, NIST SP
800-38A and Tencent's samples).

    key = aes_key("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG")   # EncodingAESKey -> 32 bytes
    enc = wx_encrypt(key, b'{"msgid":"1"}', b"")                   # base64 text
    plain, receive_id = wx_decrypt(key, enc)
    sig = wx_signature(token, timestamp, nonce, enc)
"""

import base64
import hashlib
import os
import struct

from wechat_aes import aes256_cbc_decrypt as cbc_decrypt
from wechat_aes import aes256_cbc_encrypt as cbc_encrypt


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
