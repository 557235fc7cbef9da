"""The WeChat callback envelope for the Official Account fake: a flat <xml> document in and out
and the sealed passive-reply form, on wechat_aes.py (WXBizMsgCrypt in the standard library).
plain signature = sha1 of the sorted [token, timestamp, nonce]; msg_signature adds Encrypt."""

import re
import xml.etree.ElementTree as ET

import wechat_aes
from wechat_aes import aes_key  # noqa: F401  (re-exported for the fake and its tests)


def signature(*parts):
    """The plain signature of (token, timestamp, nonce), or msg_signature with Encrypt added."""
    return (wechat_aes.plain_signature(*parts) if len(parts) == 3
            else wechat_aes.signature(*parts))


def encrypt(key, message, receive_id, random16=None):
    return wechat_aes.WeChatCrypt.from_key(key, receive_id).encrypt(message, random16=random16)


def decrypt(key, encrypted, receive_id):
    """The message, or ValueError when anything (padding, length, receive id) is wrong."""
    return wechat_aes.WeChatCrypt.from_key(key, receive_id).decrypt(encrypted)


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
