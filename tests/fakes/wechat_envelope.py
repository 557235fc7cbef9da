"""Tencent's WXBizMsgCrypt callback envelope, written from the WeCom / WeChat docs for the fakes:
msg_signature = sha1 of the sorted [token, timestamp, nonce, encrypt]; the plain Official Account
signature the same over [token, timestamp, nonce]; AES-256-CBC with key = base64(EncodingAESKey +
"="), IV = the key's first 16 bytes, PKCS#7 padding to 32 bytes, plaintext = 16 random bytes ||
uint32 big-endian length || message || receive id. Needs python3-cryptography (Debian's)."""

import base64
import hashlib
import os
import re
import struct
import xml.etree.ElementTree as ET

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

BLOCK = 32


def aes_key(encoding_aes_key):
    key = base64.b64decode(encoding_aes_key + "=")
    if len(key) != 32:
        raise ValueError("EncodingAESKey must decode to 32 bytes")
    return key


def signature(*parts):
    return hashlib.sha1("".join(sorted(parts)).encode()).hexdigest()


def encrypt(key, message, receive_id, random16=None):
    random16 = os.urandom(16) if random16 is None else random16
    body = message.encode()
    plain = random16 + struct.pack(">I", len(body)) + body + receive_id.encode()
    pad = BLOCK - len(plain) % BLOCK
    plain += bytes([pad]) * pad
    enc = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(enc.update(plain) + enc.finalize()).decode()


def decrypt(key, encrypted, receive_id):
    """The message, or ValueError when anything (padding, length, receive id) is wrong."""
    raw = base64.b64decode(encrypted, validate=True)
    if not raw or len(raw) % 16:
        raise ValueError("ciphertext is not whole AES blocks")
    dec = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = dec.update(raw) + dec.finalize()
    pad = plain[-1]
    if not 1 <= pad <= BLOCK or plain[-pad:] != bytes([pad]) * pad:
        raise ValueError("bad padding")
    plain = plain[:-pad]
    (length,) = struct.unpack(">I", plain[16:20])
    message, rid = plain[20:20 + length], plain[20 + length:]
    if len(message) != length or rid.decode() != receive_id:
        raise ValueError("wrong length or receive id")
    return message.decode()


def xml(fields):
    """<xml><K><![CDATA[v]]></K>...</xml> from (name, value) pairs; ints are written bare."""
    out = ["<xml>"]
    for name, value in fields:
        if isinstance(value, int):
            out.append("<%s>%d</%s>" % (name, value, name))
        else:
            out.append("<%s><![CDATA[%s]]></%s>" % (name, value.replace("]]>", "]]]]><![CDATA[>"),
                                                     name))
    out.append("</xml>")
    return "".join(out)


def parse_xml(text):
    """Child element name -> text of a flat <xml> document."""
    if re.search(r"<!DOCTYPE", text, re.I):
        raise ValueError("DOCTYPE")
    root = ET.fromstring(text)
    if root.tag != "xml":
        raise ValueError("root is not <xml>")
    return {child.tag: (child.text or "") for child in root}


def seal(token, key, receive_id, inner_xml, timestamp, nonce):
    """The encrypted envelope <xml><Encrypt/><MsgSignature/><TimeStamp/><Nonce/></xml>."""
    enc = encrypt(key, inner_xml, receive_id)
    return xml([("Encrypt", enc), ("MsgSignature", signature(token, str(timestamp), nonce, enc)),
                ("TimeStamp", str(timestamp)), ("Nonce", nonce)])
