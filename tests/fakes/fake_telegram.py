#!/usr/bin/env python3
"""Fake Telegram Bot API server for Switchboard end-to-end tests (Python 3 standard library only).

Built from /work/shared/protocols/platforms.md "Part 2 - Telegram Bot API in full"; section
numbers below (2.x) refer to that file.

Bot API subset (2.1, 2.12)
    Base URL http://127.0.0.1:PORT, requests at /bot<token>/<method>. Method names are
    case-insensitive; GET and POST both work; parameters may come from the query string,
    application/json, application/x-www-form-urlencoded or multipart/form-data (object/array
    parameters such as reply_parameters, entities, allowed_updates are JSON strings in the form
    encodings). Every answer is JSON: {"ok":true,"result":...} or
    {"ok":false,"error_code":N,"description":"...","parameters"?:{...}} with HTTP status N.

    Any token "<digits>:<letters/digits/_->" is valid and has its own state (updates, webhook,
    messages, files) until revoked; a malformed or revoked token answers 401 "Unauthorized", an
    unknown method 404 "Not Found", a body that cannot be decoded 400 "Bad Request: ...".

    getMe            (2.2)  {id, is_bot:true, first_name:"Test Bot", username:"test_bot_<id>",
                             can_join_groups:true, can_read_all_group_messages:false,
                             supports_inline_queries:false}
    getUpdates       (2.3)  offset / limit (1-100, default 100) / timeout (long poll; returns
                             early when an update is queued) / allowed_updates (persists, filters
                             only updates queued later; default = all but chat_member,
                             message_reaction, message_reaction_count). offset > update_id
                             confirms (deletes); offset -n keeps only the last n updates. A newer
                             getUpdates on the same token makes the older one answer 409
                             "Conflict: terminated by other getUpdates request; ...". With a
                             webhook set: 409 "Conflict: can't use getUpdates method while webhook
                             is active; ...". A client that hangs up mid poll is noticed and
                             dropped; nothing is consumed by it.
    setWebhook / deleteWebhook / getWebhookInfo (2.4)
                             url (http or https; "" removes), secret_token (1-256 of
                             A-Z a-z 0-9 _ -), allowed_updates, drop_pending_updates,
                             max_connections. A background thread per token POSTs each queued
                             Update as JSON to the url (header X-Telegram-Bot-Api-Secret-Token
                             when a secret is set), in order, one at a time. A non-2xx answer or
                             a connection error is retried WEBHOOK_ATTEMPTS times in all,
                             WEBHOOK_RETRY_DELAY seconds apart, then the update is dropped and
                             last_error_date/last_error_message are set. Every attempt is
                             recorded (stats.deliveries). A 2xx answer whose JSON body carries
                             {"method": ...} is executed as a Bot API call (2.4).
    sendMessage      (2.7)  chat_id (int, numeric string or @username), text, parse_mode
                             (MarkdownV2 | HTML | Markdown), entities, reply_parameters or the
                             old reply_to_message_id, message_thread_id. Errors: "Bad Request:
                             chat_id is empty", "... message text is empty", "... message is too
                             long" (> 4096 characters after entity parsing), "... can't parse
                             entities: ...", "... unsupported parse_mode".
    sendPhoto / sendVoice / sendDocument (2.8)
                             photo|voice|document as URL, file_id, "attach://<part>" or a
                             multipart upload (bytes are kept: getFile works on the returned
                             file_id); caption <= 1024 characters, parse_mode. Missing file:
                             "Bad Request: there is no <field> in the request".
    sendChatAction, sendMessageDraft, editMessageText (2.10)
                             edit of an unknown message: "Bad Request: message to edit not found";
                             identical content: "Bad Request: message is not modified: ...".
    deleteMessage    (chat_id, message_id) -> true; an unknown message: "Bad Request: message
                             to delete not found".
    getFile          (2.9)  {file_id, file_unique_id, file_size, file_path}; bytes at
                             GET /file/bot<token>/<file_path> (404 "Not Found" otherwise).

    Sent messages get message_id increasing per chat (above any id seen in injected updates),
    chat (taken from injected updates when known), date, from = the bot, text + entities parsed
    from parse_mode (or caption + caption_entities), reply_to_message when the target is known.
    Replies to unknown messages are accepted (no "message to be replied not found").

Control API (no auth; plain JSON, errors {"error": "..."} with 400/404/405)
    POST /_control/updates  {"token", "update": {...}} or {"token", "updates": [...]}
                            -> {"update_id": N} (+ "update_ids": [...] for a list). update_id is
                            assigned when missing (increasing per token, starting at 1); an
                            update filtered by allowed_updates answers "filtered": true.
    POST /_control/message  {"token", "text", "chat_id"?: 1001, "chat_type"?, "from"?,
                            "entities"?, "message_thread_id"?, "reply_to_message_id"?}
                            -> {"update_id", "message_id"}: convenience wrapper building a
                            message Update (private chat with user 1001 by default).
    POST /_control/files    {"token", "file_id", "content_base64", "file_path"?}
                            -> {"file_id", "file_unique_id", "file_size", "file_path"}
    GET  /_control/sent?token=T
                            -> {"sent": [{"method", "chat_id", "text", "parse_mode",
                            "reply_parameters", "message_thread_id", "caption", "photo", "voice",
                            "document", "upload"?: {"field", "filename", "content_type", "size"},
                            "params": {decoded params, uploads excluded}, "message_id",
                            "time"}]} - successful send*/edit* calls only, in order
                            (message_id null for sendChatAction/sendMessageDraft).
    GET  /_control/stats?token=T
                            -> {"calls": {method_lower: n}, "active_polls": n,
                            "last_poll_started": unix float | null,
                            "webhook": {"url", "secret_token"} | null,
                            "deliveries": [{"update_id", "status" (null on connection error),
                            "error"?}], "pending": n}
    POST /_control/fail     {"token", "method", "error_code", "description"?, "times"?: 1,
                            "retry_after"?, "parameters"?} -> the next `times` calls of that
                            method (or "*" for any) fail so; 429 gets parameters.retry_after and
                            the default description "Too Many Requests: retry after N".
    POST /_control/revoke   {"token"} -> every call with that token answers 401 "Unauthorized".
    POST /_control/raw      {"token", "method", "status", "body" (string, or JSON value which is
                            serialised), "content_type"?, "times"?: 1} -> the next call of that
                            method gets exactly this status and body.
    POST /_control/reset    -> forget all state (tokens, presets, webhooks, files).

Command line:
    python3 fake_telegram.py [--port 0] [--host 127.0.0.1] [--verbose]
prints exactly one line "FAKE_TELEGRAM_PORT=<port>" once listening and serves until
SIGTERM/SIGINT (exit code 0).

How tests use it: start the fake, point the adapter's Telegram base URL at
http://127.0.0.1:PORT (both API and file downloads use it, 2.9), inject user messages with
/_control/message or /_control/updates, then wait on /_control/sent and /_control/stats; failure
paths come from /_control/fail (e.g. 429 + retry_after), /_control/raw (malformed answers) and
/_control/revoke (401). In process: fake = FakeTelegram(); port = fake.start(); ... fake.stop().
"""

import argparse
import base64
import http.server
import json
import re
import select
import signal
import socket
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import zlib

TOKEN_RE = re.compile(r"^(\d+):([A-Za-z0-9_-]+)$")
SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_DOWNLOAD = 20 * 1024 * 1024
WEBHOOK_ATTEMPTS = 4
WEBHOOK_RETRY_DELAY = 0.2
WEBHOOK_TIMEOUT = 5.0
POLL_SLICE = 0.1
DEFAULT_EXCLUDED_UPDATES = frozenset(["chat_member", "message_reaction", "message_reaction_count"])
CHAT_ACTIONS = frozenset(["typing", "upload_photo", "record_video", "upload_video", "record_voice",
                          "upload_voice", "upload_document", "choose_sticker", "find_location",
                          "record_video_note", "upload_video_note"])

CONFLICT_POLL = ("Conflict: terminated by other getUpdates request; make sure that only one bot "
                 "instance is running")
CONFLICT_WEBHOOK = ("Conflict: can't use getUpdates method while webhook is active; use "
                    "deleteWebhook to delete the webhook first")
NOT_MODIFIED = ("Bad Request: message is not modified: specified new message content and reply "
                "markup are exactly the same as a current content and reply markup of the message")
DEFAULT_DESCRIPTIONS = {400: "Bad Request", 401: "Unauthorized",
                        403: "Forbidden: bot was blocked by the user", 404: "Not Found",
                        409: "Conflict", 500: "Internal Server Error", 502: "Bad Gateway"}
OBJECT_PARAMS = frozenset(["reply_parameters", "entities", "caption_entities", "allowed_updates",
                           "reply_markup", "link_preview_options", "suggested_post_parameters"])


def _dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _jbytes(obj):
    return _dumps(obj).encode("utf-8")


def _u16len(s):
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in s)


class ApiError(Exception):
    """A Telegram error envelope."""

    def __init__(self, code, description=None, parameters=None):
        Exception.__init__(self, description)
        self.code = code
        self.description = description or DEFAULT_DESCRIPTIONS.get(code, "Error")
        self.parameters = parameters

    def envelope(self):
        env = {"ok": False, "error_code": self.code, "description": self.description}
        if self.parameters:
            env["parameters"] = self.parameters
        return env


class _ParseError(Exception):
    pass


def _parse_error(msg):
    return ApiError(400, "Bad Request: can't parse entities: " + msg)


# ---------------------------------------------------------------------------------------------
# Formatting parsers (2.7): each returns (plain text, entities with UTF-16 offsets) or raises
# _ParseError with a Telegram-style message.

MDV2_RESERVED = "_*[]()~`>#+-=|{}.!"
MDV2_NAMES = {"bold": "Bold", "italic": "Italic", "underline": "Underline",
              "strikethrough": "Strikethrough", "spoiler": "Spoiler", "code": "Code",
              "pre": "Pre", "text_link": "TextUrl", "custom_emoji": "CustomEmoji"}


def _boff(text, i):
    return len(text[:i].encode("utf-8"))


def parse_markdown_v2(text):
    out = []
    u16 = 0
    stack = []
    entities = []
    i, n = 0, len(text)
    expandable = False

    def reserved(i):
        return _ParseError("Character '%s' is reserved and must be escaped with the preceding "
                           "'\\'" % text[i])

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "\\" and nxt and 0 < ord(nxt) <= 126:
            out.append(nxt)
            u16 += 1
            i += 2
            continue
        top = stack[-1]["type"] if stack else None
        in_code = top in ("code", "pre")
        if c not in ("`" if in_code else MDV2_RESERVED):
            out.append(c)
            u16 += 2 if ord(c) > 0xFFFF else 1
            i += 1
            continue
        line_start = i == 0 or text[i - 1] == "\n"
        if not in_code and line_start and c == ">":
            i += 1  # blockquote marker
            continue
        if not in_code and line_start and text.startswith("**>", i):
            expandable = True
            i += 3
            continue
        if (expandable and top != "spoiler" and text.startswith("||", i)
                and (i + 2 == n or text[i + 2] == "\n")):
            expandable = False
            i += 2
            continue
        end = {"bold": c == "*", "italic": c == "_" and nxt != "_",
               "underline": c == "_" and nxt == "_", "strikethrough": c == "~",
               "spoiler": c == "|" and nxt == "|", "code": c == "`",
               "pre": text.startswith("```", i), "text_link": c == "]",
               "custom_emoji": c == "]"}.get(top, False)
        if end:
            ent = stack.pop()
            i += {"underline": 2, "spoiler": 2, "pre": 3}.get(top, 1)
            e = {"type": top, "offset": ent["offset"], "length": u16 - ent["offset"]}
            if top in ("text_link", "custom_emoji"):
                url = None
                if i < n and text[i] == "(":
                    j = i + 1
                    buf = []
                    while j < n and text[j] != ")":
                        if text[j] == "\\" and j + 1 < n:
                            j += 1
                        buf.append(text[j])
                        j += 1
                    if j >= n:
                        raise _ParseError("Can't find end of a URL at byte offset %d"
                                          % _boff(text, i + 1))
                    url = "".join(buf)
                    i = j + 1
                if top == "custom_emoji":
                    m = re.match(r"^tg://emoji\?id=(\d+)$", url or "")
                    if not m:
                        raise _ParseError("Custom emoji entity must contain a tg://emoji URL")
                    e["custom_emoji_id"] = m.group(1)
                elif not url:
                    continue  # [text] without a URL: plain text
                else:
                    e["url"] = url
            if top == "pre" and ent.get("language"):
                e["language"] = ent["language"]
            if e["length"] > 0:
                entities.append(e)
            continue
        # beginning of an entity
        start = i
        ent = {"offset": u16, "byte": _boff(text, start)}
        if c == "_":
            ent["type"] = "underline" if nxt == "_" else "italic"
            i += 2 if nxt == "_" else 1
        elif c == "*":
            ent["type"] = "bold"
            i += 1
        elif c == "~":
            ent["type"] = "strikethrough"
            i += 1
        elif c == "|":
            if nxt != "|":
                raise reserved(i)
            ent["type"] = "spoiler"
            i += 2
        elif c == "[":
            ent["type"] = "text_link"
            i += 1
        elif c == "!":
            if nxt != "[":
                raise reserved(i)
            ent["type"] = "custom_emoji"
            i += 2
        elif c == "`":
            if in_code:
                raise reserved(i)  # a lone ` inside pre must be escaped
            if text.startswith("```", i):
                i += 3
                ent["type"] = "pre"
                j = i
                while j < n and not text[j].isspace() and text[j] != "`":
                    j += 1
                if j > i and j < n and text[j] != "`":
                    ent["language"] = text[i:j]
                    i = j
                if i < n and text[i] in "\r\n":
                    i += 2 if (i + 1 < n and text[i + 1] in "\r\n" and text[i + 1] != text[i]) \
                        else 1
            else:
                ent["type"] = "code"
                i += 1
        else:
            raise reserved(i)
        stack.append(ent)
    if stack:
        ent = stack[-1]
        raise _ParseError("Can't find end of %s entity at byte offset %d"
                          % (MDV2_NAMES[ent["type"]], ent["byte"]))
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def parse_markdown_legacy(text):
    out = []
    u16 = 0
    entities = []
    i, n = 0, len(text)
    kinds = {"*": "bold", "_": "italic", "`": "code", "[": "text_link"}
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "_*`[":
            out.append(text[i + 1])
            u16 += 1
            i += 2
            continue
        if c not in kinds:
            out.append(c)
            u16 += _u16len(c)
            i += 1
            continue
        start_byte = _boff(text, i)
        if text.startswith("```", i):
            end = text.find("```", i + 3)
            if end < 0:
                raise _ParseError("Can't find end of the entity starting at byte offset %d"
                                  % start_byte)
            body = text[i + 3:end]
            lang = None
            if "\n" in body and body.split("\n", 1)[0].strip() and \
                    " " not in body.split("\n", 1)[0]:
                lang, body = body.split("\n", 1)
            ent = {"type": "pre", "offset": u16, "length": _u16len(body)}
            if lang:
                ent["language"] = lang
            i = end + 3
        else:
            close = "]" if c == "[" else c
            end = text.find(close, i + 1)
            if end < 0:
                raise _ParseError("Can't find end of the entity starting at byte offset %d"
                                  % start_byte)
            body = text[i + 1:end]
            ent = {"type": kinds[c], "offset": u16, "length": _u16len(body)}
            i = end + 1
            if c == "[":
                if i < n and text[i] == "(":
                    close_paren = text.find(")", i)
                    if close_paren < 0:
                        raise _ParseError("Can't find end of a URL at byte offset %d"
                                          % _boff(text, i + 1))
                    ent["url"] = text[i + 1:close_paren]
                    i = close_paren + 1
                else:
                    ent = None
        out.append(body)
        u16 += _u16len(body)
        if ent and ent["length"] > 0:
            entities.append(ent)
    return "".join(out), entities


HTML_TAGS = {"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline",
             "ins": "underline", "s": "strikethrough", "strike": "strikethrough",
             "del": "strikethrough", "tg-spoiler": "spoiler", "span": "spoiler", "a": "text_link",
             "code": "code", "pre": "pre", "blockquote": "blockquote", "tg-emoji": "custom_emoji"}
HTML_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


def _html_attrs(s):
    attrs = {}
    for m in re.finditer(r'([A-Za-z_-]+)(?:\s*=\s*(?:"([^"]*)"|\'([^\']*)\'|([^\s"\'>]+)))?', s):
        val = m.group(2) if m.group(2) is not None else (
            m.group(3) if m.group(3) is not None else (m.group(4) or ""))
        attrs[m.group(1).lower()] = _html_unescape(val)
    return attrs


def _html_unescape(s):
    def rep(m):
        name = m.group(1)
        if name.startswith("#x") or name.startswith("#X"):
            try:
                return chr(int(name[2:], 16))
            except (ValueError, OverflowError):
                return m.group(0)
        if name.startswith("#"):
            try:
                return chr(int(name[1:]))
            except (ValueError, OverflowError):
                return m.group(0)
        return HTML_NAMED.get(name, m.group(0))
    return re.sub(r"&(#[xX][0-9a-fA-F]+|#\d+|[A-Za-z]+);", rep, s)


def parse_html(text):
    out = []
    u16 = 0
    stack = []
    entities = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "&":
            m = re.match(r"&(#[xX][0-9a-fA-F]+|#\d+|[A-Za-z]+);", text[i:])
            if m:
                s = _html_unescape(m.group(0))
                out.append(s)
                u16 += _u16len(s)
                i += len(m.group(0))
                continue
        if c != "<":
            out.append(c)
            u16 += _u16len(c)
            i += 1
            continue
        close = text.find(">", i)
        if close < 0:
            raise _ParseError("Unclosed start tag at byte offset %d" % _boff(text, i))
        inner = text[i + 1:close]
        if inner.startswith("/"):
            name = inner[1:].strip().lower()
            if not stack:
                raise _ParseError("Unexpected end tag at byte offset %d" % _boff(text, i))
            ent = stack.pop()
            if name != ent["tag"]:
                raise _ParseError('Unmatched end tag at byte offset %d, expected "</%s>", found '
                                  '"</%s>"' % (_boff(text, i), ent["tag"], name))
            e = {"type": ent["type"], "offset": ent["offset"], "length": u16 - ent["offset"]}
            e.update(ent["extra"])
            if e["length"] > 0 and e["type"] is not None:
                entities.append(e)
        else:
            m = re.match(r"^([A-Za-z][A-Za-z0-9-]*)(.*)$", inner, re.S)
            if not m:
                raise _ParseError("Unsupported start tag \"%s\" at byte offset %d"
                                  % (inner, _boff(text, i)))
            name = m.group(1).lower()
            attrs = _html_attrs(m.group(2))
            if name not in HTML_TAGS:
                raise _ParseError("Unsupported start tag \"%s\" at byte offset %d"
                                  % (name, _boff(text, i)))
            typ, extra = HTML_TAGS[name], {}
            if name == "span" and attrs.get("class") != "tg-spoiler":
                raise _ParseError("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d"
                                  % _boff(text, i))
            if name == "a":
                if attrs.get("href"):
                    extra["url"] = attrs["href"]
                else:
                    typ = None
            if name == "code" and stack and stack[-1]["tag"] == "pre" and \
                    attrs.get("class", "").startswith("language-"):
                stack[-1]["extra"]["language"] = attrs["class"][len("language-"):]
                typ = None
            if name == "blockquote" and "expandable" in attrs:
                typ = "expandable_blockquote"
            if name == "tg-emoji":
                extra["custom_emoji_id"] = attrs.get("emoji-id", "")
            stack.append({"tag": name, "type": typ, "offset": u16, "extra": extra})
        i = close + 1
    if stack:
        raise _ParseError("Can't find end tag corresponding to start tag \"%s\"" % stack[-1]["tag"])
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def parse_formatted(text, parse_mode):
    """(plain, entities or None) for a parse_mode; raises ApiError on bad markup/mode."""
    if parse_mode is None or parse_mode == "":
        return text, None
    mode = str(parse_mode).lower()
    parser = {"markdownv2": parse_markdown_v2, "html": parse_html,
              "markdown": parse_markdown_legacy}.get(mode)
    if parser is None:
        raise ApiError(400, "Bad Request: unsupported parse_mode")
    try:
        plain, ents = parser(text)
    except _ParseError as e:
        raise _parse_error(str(e))
    return plain, ents


# ---------------------------------------------------------------------------------------------
# Request decoding


class Reply(object):
    def __init__(self, status, body, content_type="application/json", headers=None):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or []


def api_reply(result, description=None):
    env = {"ok": True, "result": result}
    if description:
        env["description"] = description
    return Reply(200, _jbytes(env))


def error_reply(err):
    return Reply(err.code if 100 <= err.code <= 599 else 500, _jbytes(err.envelope()))


def control_reply(status, obj):
    return Reply(status, _jbytes(obj))


class Upload(object):
    def __init__(self, field, filename, content_type, data):
        self.field = field
        self.filename = filename
        self.content_type = content_type
        self.data = data

    def describe(self):
        return {"field": self.field, "filename": self.filename,
                "content_type": self.content_type, "size": len(self.data)}


def _header_params(value):
    """'form-data; name="a"; filename="b"' -> ('form-data', {'name': 'a', 'filename': 'b'})."""
    parts = []
    cur, quoted, esc = [], False, False
    for ch in value:
        if esc:
            cur.append(ch)
            esc = False
        elif quoted and ch == "\\":
            esc = True
        elif ch == '"':
            quoted = not quoted
            cur.append(ch)
        elif ch == ";" and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    main = parts[0].strip().lower()
    params = {}
    for p in parts[1:]:
        if "=" not in p:
            continue
        k, v = p.split("=", 1)
        k, v = k.strip().lower(), v.strip()
        if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
            v = v[1:-1]
        if k.endswith("*"):
            # RFC 5987: charset'lang'percent-encoded
            try:
                charset, _, enc = v.split("'", 2)
                v = urllib.parse.unquote(enc, encoding=charset or "utf-8")
            except (ValueError, LookupError):
                pass
            k = k[:-1]
        params[k] = v
    return main, params


def parse_multipart(body, content_type):
    """Returns (fields {name: str}, uploads {name: Upload}); raises ValueError."""
    _, ctp = _header_params(content_type)
    boundary = ctp.get("boundary")
    if not boundary:
        raise ValueError("no boundary")
    delim = b"--" + boundary.encode("latin-1")
    fields, uploads = {}, {}
    pos = body.find(delim)
    if pos < 0:
        raise ValueError("boundary not found")
    pos += len(delim)
    while True:
        if body[pos:pos + 2] == b"--":
            break  # closing delimiter
        if body[pos:pos + 2] == b"\r\n":
            pos += 2
        elif body[pos:pos + 1] == b"\n":
            pos += 1
        else:
            raise ValueError("malformed delimiter line")
        nxt = body.find(b"\r\n" + delim, pos)
        if nxt < 0:
            raise ValueError("unterminated part")
        part = body[pos:nxt]
        pos = nxt + 2 + len(delim)
        head, sep, data = part.partition(b"\r\n\r\n")
        if not sep:
            if part.startswith(b"\r\n"):
                head, data = b"", part[2:]
            else:
                raise ValueError("part without header end")
        headers = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        disp, dp = _header_params(headers.get("content-disposition", ""))
        name = dp.get("name")
        if disp != "form-data" or name is None:
            continue
        if "filename" in dp:
            uploads[name] = Upload(name, dp["filename"],
                                   headers.get("content-type", "application/octet-stream"), data)
        else:
            fields[name] = data.decode("utf-8")
    return fields, uploads


def decode_params(query, headers, raw):
    """Merge query string and body parameters. Returns (params, uploads); raises ApiError."""
    params = dict(query)
    uploads = {}
    ctype = headers.get("content-type", "")
    main = ctype.split(";", 1)[0].strip().lower()
    if raw and main == "application/json":
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ApiError(400, "Bad Request: can't parse JSON object")
        if not isinstance(body, dict):
            raise ApiError(400, "Bad Request: JSON object expected")
        params.update(body)
    elif raw and main == "application/x-www-form-urlencoded":
        try:
            text = raw.decode("ascii")
            pairs = urllib.parse.parse_qsl(text, keep_blank_values=True, encoding="utf-8",
                                           errors="strict")
        except (UnicodeDecodeError, ValueError):
            raise ApiError(400, "Bad Request: can't parse form data")
        params.update(dict(pairs))
    elif main == "multipart/form-data":
        try:
            fields, uploads = parse_multipart(raw or b"", ctype)
        except (ValueError, UnicodeDecodeError, LookupError):
            raise ApiError(400, "Bad Request: can't parse multipart/form-data request")
        params.update(fields)
    for k in OBJECT_PARAMS:
        v = params.get(k)
        if isinstance(v, str):
            if v == "":
                params[k] = None
                continue
            try:
                params[k] = json.loads(v)
            except ValueError:
                raise ApiError(400, "Bad Request: can't parse %s JSON object" % k)
    return params, uploads


def _int_param(params, name, default=None):
    v = params.get(name)
    if v is None or v == "":
        return default
    if isinstance(v, bool):
        raise ApiError(400, "Bad Request: invalid %s specified" % name)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and re.match(r"^\s*-?\d+\s*$", v):
        return int(v)
    raise ApiError(400, "Bad Request: invalid %s specified" % name)


def _bool_param(params, name):
    v = params.get(name)
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v)


def _str_param(params, name):
    v = params.get(name)
    if v is None:
        return None
    if isinstance(v, (dict, list)):
        return _dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


# ---------------------------------------------------------------------------------------------
# Per-token state


class Bot(object):
    def __init__(self, token):
        self.token = token
        m = TOKEN_RE.match(token)
        self.bot_id = int(m.group(1)) if m else 0
        self.user = {"id": self.bot_id, "is_bot": True, "first_name": "Test Bot",
                     "username": "test_bot_%d" % self.bot_id}
        self.updates = []
        self.next_update_id = 1
        self.allowed_updates = None
        self.poll_seq = 0
        self.active_polls = 0
        self.last_poll_started = None
        self.webhook = None          # dict url, secret_token, allowed_updates, max_connections
        self.webhook_gen = 0
        self.last_error_date = None
        self.last_error_message = None
        self.deliveries = []
        self.sent = []
        self.calls = {}
        self.fails = []              # [{method, error, times}]
        self.raws = []               # [{method, status, body, content_type, times}]
        self.revoked = False
        self.closed = False
        self.chats = {}              # id -> Chat
        self.last_mid = {}           # chat id -> highest message_id
        self.messages = {}           # (chat id, message_id) -> Message
        self.files = {}              # file_id -> {data, file_unique_id, file_path}
        self.file_paths = {}         # file_path -> file_id

    def pending(self):
        return len(self.updates)


class _Ctx(object):
    """Per-request context: lets a long poll notice that its client hung up."""

    def __init__(self, sock=None):
        self.sock = sock

    def disconnected(self):
        if self.sock is None:
            return False
        try:
            r, _, _ = select.select([self.sock], [], [], 0)
            if not r:
                return False
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True


class _Disconnected(Exception):
    pass


METHOD_NAMES = ("getMe", "getUpdates", "setWebhook", "deleteWebhook", "getWebhookInfo",
                "sendMessage", "sendPhoto", "sendVoice", "sendDocument", "sendChatAction",
                "sendMessageDraft", "editMessageText", "deleteMessage", "getFile")
CANONICAL = {m.lower(): m for m in METHOD_NAMES}


class FakeTelegram(object):
    """The fake Bot API. start() binds (port 0 = ephemeral) and serves in a thread."""

    def __init__(self, host="127.0.0.1", port=0, verbose=False):
        self.host = host
        self.port = port
        self.verbose = verbose
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._bots = {}
        self._file_counter = 0
        self._stop = threading.Event()
        self._server = None
        self._thread = None
        self._conns = set()
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # -- lifecycle ----------------------------------------------------------------------------
    def bind(self):
        self._stop.clear()
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        return self.port

    def start(self):
        port = self.bind()
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.1},
                                        name="fake_telegram", daemon=True)
        self._thread.start()
        return port

    def serve_forever(self):
        self._server.serve_forever(poll_interval=0.1)

    def stop(self):
        if self._server is None:
            return
        self._halt()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(10)
            self._thread = None
        self._close()

    def _halt(self):
        self._stop.set()
        with self._cond:
            for b in self._bots.values():
                b.closed = True
            self._cond.notify_all()

    def _close(self):
        self._halt()
        srv, self._server = self._server, None
        if srv is not None:
            srv.server_close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def _track(self, conn, add):
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.port

    # -- state helpers (call with the lock held) ----------------------------------------------
    def _bot(self, token):
        b = self._bots.get(token)
        if b is None:
            b = Bot(token)
            self._bots[token] = b
        return b

    def reset(self):
        with self._cond:
            for b in self._bots.values():
                b.closed = True
            self._bots = {}
            self._cond.notify_all()

    def _new_file(self, bot, data, file_path=None, file_id=None, prefix="documents", ext=""):
        self._file_counter += 1
        n = self._file_counter
        file_id = file_id or "FAKEFILE%06d%s" % (n, base64.urlsafe_b64encode(
            zlib.crc32(bot.token.encode()).to_bytes(4, "big")).decode().rstrip("="))
        old = bot.files.get(file_id)
        if old is not None:
            bot.file_paths.pop(old["file_path"], None)
        file_path = file_path or "%s/file_%d%s" % (prefix, n, ext)
        f = {"file_id": file_id, "file_unique_id": "FAKEUNIQ%06d" % n, "file_path": file_path,
             "data": data}
        bot.files[file_id] = f
        bot.file_paths[file_path] = file_id
        return f

    def _remember_message(self, bot, msg):
        if not isinstance(msg, dict):
            return
        chat = msg.get("chat")
        if isinstance(chat, dict) and isinstance(chat.get("id"), int):
            cid = chat["id"]
            bot.chats[cid] = chat
            mid = msg.get("message_id")
            if isinstance(mid, int):
                bot.last_mid[cid] = max(bot.last_mid.get(cid, 0), mid)
                bot.messages[(cid, mid)] = msg

    def queue_update(self, token, update):
        """Queue one Update; returns (update_id, filtered)."""
        if not isinstance(update, dict):
            raise ValueError("update must be a JSON object")
        with self._cond:
            bot = self._bot(token)
            update = dict(update)
            uid = update.get("update_id")
            if uid is None:
                uid = bot.next_update_id
                update["update_id"] = uid
            elif not isinstance(uid, int) or isinstance(uid, bool):
                raise ValueError("update_id must be an integer")
            bot.next_update_id = max(bot.next_update_id, uid + 1)
            kinds = [k for k in update if k != "update_id"]
            kind = kinds[0] if kinds else None
            for k in ("message", "edited_message", "channel_post", "edited_channel_post",
                      "business_message"):
                self._remember_message(bot, update.get(k))
            allowed = bot.webhook.get("allowed_updates") if bot.webhook else None
            if allowed is None:
                allowed = bot.allowed_updates
            if kind is not None:
                if allowed:
                    if kind not in allowed:
                        return uid, True
                elif kind in DEFAULT_EXCLUDED_UPDATES:
                    return uid, True
            bot.updates.append(update)
            bot.updates.sort(key=lambda u: u["update_id"])
            self._cond.notify_all()
            return uid, False

    # -- Bot API ------------------------------------------------------------------------------
    def call(self, token, method, params, uploads=None, ctx=None):
        """Run one Bot API call; returns a Reply (None if the client went away mid poll)."""
        uploads = uploads or {}
        low = method.lower()
        with self._cond:
            bot = self._bot(token)
            bot.calls[low] = bot.calls.get(low, 0) + 1
            if bot.revoked:
                return error_reply(ApiError(401, "Unauthorized"))
            for preset in bot.raws:
                if preset["method"] in (low, "*"):
                    preset["times"] -= 1
                    if preset["times"] <= 0:
                        bot.raws.remove(preset)
                    return Reply(preset["status"], preset["body"], preset["content_type"])
            for preset in bot.fails:
                if preset["method"] in (low, "*"):
                    preset["times"] -= 1
                    if preset["times"] <= 0:
                        bot.fails.remove(preset)
                    return error_reply(ApiError(preset["code"], preset["description"],
                                                preset["parameters"]))
            fn = getattr(self, "_m_" + low, None) if low in CANONICAL else None
            if fn is None:
                return error_reply(ApiError(404, "Not Found"))
            try:
                out = fn(bot, params, uploads, ctx)
            except ApiError as e:
                return error_reply(e)
            except _Disconnected:
                return None
            if isinstance(out, tuple):
                return api_reply(out[0], out[1])
            return api_reply(out)

    def _record_sent(self, bot, method, params, chat_id, msg=None, upload=None, file_field=None):
        rec = {"method": method, "chat_id": chat_id,
               "text": _str_param(params, "text"), "parse_mode": _str_param(params, "parse_mode"),
               "reply_parameters": self._reply_parameters(params),
               "message_thread_id": _int_param(params, "message_thread_id"),
               "caption": _str_param(params, "caption"),
               "photo": None, "voice": None, "document": None,
               "params": {k: v for k, v in params.items()},
               "message_id": msg["message_id"] if isinstance(msg, dict) else None,
               "time": time.time()}
        if file_field:
            v = params.get(file_field)
            rec[file_field] = v if isinstance(v, str) else None
        if upload is not None:
            rec["upload"] = upload.describe()
        bot.sent.append(rec)
        self._cond.notify_all()

    def _reply_parameters(self, params):
        rp = params.get("reply_parameters")
        if isinstance(rp, dict):
            return rp
        if rp is not None:
            raise ApiError(400, "Bad Request: can't parse reply parameters JSON object")
        mid = _int_param(params, "reply_to_message_id")
        if mid is not None:
            out = {"message_id": mid}
            if "allow_sending_without_reply" in params:
                out["allow_sending_without_reply"] = _bool_param(params,
                                                                 "allow_sending_without_reply")
            return out
        return None

    def _chat(self, bot, raw):
        if raw is None or raw == "":
            raise ApiError(400, "Bad Request: chat_id is empty")
        cid = None
        if isinstance(raw, bool):
            raise ApiError(400, "Bad Request: chat not found")
        if isinstance(raw, int):
            cid = raw
        elif isinstance(raw, float) and raw.is_integer():
            cid = int(raw)
        elif isinstance(raw, str):
            s = raw.strip()
            if s == "":
                raise ApiError(400, "Bad Request: chat_id is empty")
            if re.match(r"^-?\d+$", s):
                cid = int(s)
            elif re.match(r"^@[A-Za-z0-9_]{1,64}$", s):
                for chat in bot.chats.values():
                    if str(chat.get("username", "")).lower() == s[1:].lower():
                        return chat
                cid = -(1000000000000 + zlib.crc32(s.lower().encode()) % 1000000000)
                chat = {"id": cid, "title": s[1:], "username": s[1:], "type": "channel"}
                bot.chats[cid] = chat
                return chat
        if cid is None or cid == 0:
            raise ApiError(400, "Bad Request: chat not found")
        chat = bot.chats.get(cid)
        if chat is None:
            if cid > 0:
                chat = {"id": cid, "first_name": "User %d" % cid, "type": "private"}
            elif str(cid).startswith("-100"):
                chat = {"id": cid, "title": "Group %d" % cid, "type": "supergroup"}
            else:
                chat = {"id": cid, "title": "Group %d" % cid, "type": "group"}
            bot.chats[cid] = chat
        return chat

    def _new_message(self, bot, chat, params):
        cid = chat["id"]
        thread = _int_param(params, "message_thread_id")  # validate before taking an id
        rp = self._reply_parameters(params)
        mid = bot.last_mid.get(cid, 0) + 1
        bot.last_mid[cid] = mid
        msg = {"message_id": mid, "from": dict(bot.user), "chat": dict(chat),
               "date": int(time.time())}
        if thread:
            msg["message_thread_id"] = thread
            msg["is_topic_message"] = True
        if rp is not None:
            target = rp.get("message_id")
            rcid = rp.get("chat_id", cid)
            orig = bot.messages.get((rcid, target)) if isinstance(target, int) else None
            if orig is not None:
                msg["reply_to_message"] = {k: v for k, v in orig.items()
                                           if k != "reply_to_message"}
        return msg

    def _text(self, params, field, limit, allow_empty=False):
        """(raw, plain, entities) for text/caption with parse_mode or explicit entities."""
        raw = _str_param(params, field)
        if raw is None:
            raw = ""
        plain, ents = parse_formatted(raw, params.get("parse_mode"))
        ent_field = "entities" if field == "text" else "caption_entities"
        if ents is None and isinstance(params.get(ent_field), list):
            ents = params[ent_field]
        if not allow_empty and plain.strip() == "":
            raise ApiError(400, "Bad Request: message text is empty")
        if len(plain) > limit:
            raise ApiError(400, "Bad Request: message is too long" if field == "text"
                           else "Bad Request: message caption is too long")
        return raw, plain, ents or []

    # individual methods: (bot, params, uploads, ctx) -> result or (result, description)
    def _m_getme(self, bot, p, up, ctx):
        u = dict(bot.user)
        u.update({"can_join_groups": True, "can_read_all_group_messages": False,
                  "supports_inline_queries": False})
        return u

    def _m_getupdates(self, bot, p, up, ctx):
        if bot.webhook:
            raise ApiError(409, CONFLICT_WEBHOOK)
        offset = _int_param(p, "offset", 0)
        limit = min(100, max(1, _int_param(p, "limit", 100)))
        try:
            timeout = float(p.get("timeout") or 0)
        except (TypeError, ValueError):
            raise ApiError(400, "Bad Request: invalid timeout specified")
        timeout = max(0.0, timeout)
        allowed = p.get("allowed_updates")
        if isinstance(allowed, list):
            bot.allowed_updates = [str(x) for x in allowed]
        if offset > 0:
            bot.updates = [u for u in bot.updates if u["update_id"] >= offset]
        elif offset < 0:
            bot.updates = bot.updates[offset:] if -offset < len(bot.updates) else bot.updates
        bot.poll_seq += 1
        mine = bot.poll_seq
        bot.active_polls += 1
        bot.last_poll_started = time.time()
        self._cond.notify_all()
        deadline = time.monotonic() + timeout
        try:
            while True:
                if bot.closed or self._stop.is_set():
                    return []
                if bot.revoked:
                    raise ApiError(401, "Unauthorized")
                if bot.poll_seq != mine:
                    raise ApiError(409, CONFLICT_POLL)
                if bot.webhook:
                    raise ApiError(409, CONFLICT_WEBHOOK)
                res = [u for u in bot.updates if offset <= 0 or u["update_id"] >= offset][:limit]
                remaining = deadline - time.monotonic()
                if res or remaining <= 0:
                    return json.loads(_dumps(res))
                self._cond.wait(min(POLL_SLICE, remaining))
                if ctx is not None and ctx.disconnected():
                    raise _Disconnected()
        finally:
            bot.active_polls -= 1

    def _m_setwebhook(self, bot, p, up, ctx):
        url = _str_param(p, "url") or ""
        if url == "":
            return self._m_deletewebhook(bot, p, up, ctx)
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for "
                                "webhook")
        secret = _str_param(p, "secret_token")
        if secret is not None and secret != "" and not SECRET_RE.match(secret):
            raise ApiError(400, "Bad Request: secret token contains unallowed characters")
        maxc = _int_param(p, "max_connections", 40)
        if not 1 <= maxc <= 100:
            raise ApiError(400, "Bad Request: invalid max_connections specified")
        allowed = p.get("allowed_updates")
        if _bool_param(p, "drop_pending_updates"):
            bot.updates = []
        old = bot.webhook
        bot.webhook = {"url": url, "secret_token": secret or None, "max_connections": maxc,
                       "allowed_updates": [str(x) for x in allowed]
                       if isinstance(allowed, list) else
                       (old.get("allowed_updates") if old else None)}
        if old is None or old["url"] != url:
            bot.last_error_date = bot.last_error_message = None
        bot.webhook_gen += 1
        gen = bot.webhook_gen
        threading.Thread(target=self._webhook_loop, args=(bot, gen), daemon=True,
                         name="fake_telegram_webhook").start()
        self._cond.notify_all()
        return True, "Webhook was set"

    def _m_deletewebhook(self, bot, p, up, ctx):
        if _bool_param(p, "drop_pending_updates"):
            bot.updates = []
        was = bot.webhook is not None
        bot.webhook = None
        bot.webhook_gen += 1
        self._cond.notify_all()
        return True, ("Webhook was deleted" if was else "Webhook is already deleted")

    def _m_getwebhookinfo(self, bot, p, up, ctx):
        wh = bot.webhook
        info = {"url": wh["url"] if wh else "", "has_custom_certificate": False,
                "pending_update_count": bot.pending()}
        if wh:
            info["max_connections"] = wh["max_connections"]
            if wh.get("allowed_updates") is not None:
                info["allowed_updates"] = wh["allowed_updates"]
            info["ip_address"] = "127.0.0.1"
        if bot.last_error_date is not None:
            info["last_error_date"] = bot.last_error_date
            info["last_error_message"] = bot.last_error_message
        return info

    def _m_sendmessage(self, bot, p, up, ctx):
        chat = self._chat(bot, p.get("chat_id"))
        raw, plain, ents = self._text(p, "text", MAX_TEXT)
        msg = self._new_message(bot, chat, p)
        msg["text"] = plain
        if ents:
            msg["entities"] = ents
        self._remember_message(bot, msg)
        self._record_sent(bot, "sendMessage", p, chat["id"], msg)
        return msg

    def _send_file(self, bot, p, up, method, field):
        chat = self._chat(bot, p.get("chat_id"))
        upload = None
        value = p.get(field)
        if field in up:
            upload = up[field]
        elif isinstance(value, str) and value.startswith("attach://"):
            upload = up.get(value[len("attach://"):])
            if upload is None:
                raise ApiError(400, "Bad Request: there is no %s in the request" % field)
        elif not isinstance(value, str) or value.strip() == "":
            raise ApiError(400, "Bad Request: there is no %s in the request" % field)
        if upload is not None and not upload.data:
            raise ApiError(400, "Bad Request: file must be non-empty")
        raw, plain, ents = self._text(p, "caption", MAX_CAPTION, allow_empty=True)
        duration = _int_param(p, "duration", 1)
        msg = self._new_message(bot, chat, p)
        if upload is not None:
            ext = ""
            if "." in (upload.filename or ""):
                ext = "." + upload.filename.rsplit(".", 1)[1][:8]
            f = self._new_file(bot, upload.data, prefix={"photo": "photos", "voice": "voice"}
                               .get(field, "documents"), ext=ext)
            fid, uniq, size = f["file_id"], f["file_unique_id"], len(upload.data)
            fname, mime = upload.filename, upload.content_type
        else:
            known = bot.files.get(value)
            if known is not None:
                fid, uniq, size = known["file_id"], known["file_unique_id"], len(known["data"])
            else:
                fid = value if not re.match(r"^https?://", value) else \
                    "FAKEURL%08x" % zlib.crc32(value.encode())
                uniq, size = "FAKEUNIQ%08x" % zlib.crc32(fid.encode()), None
            fname = value.rsplit("/", 1)[-1] or "file"
            mime = None
        obj = {"file_id": fid, "file_unique_id": uniq}
        if size is not None:
            obj["file_size"] = size
        if field == "photo":
            small = dict(obj, width=90, height=90)
            small["file_id"] = fid + "_s"
            msg["photo"] = [small, dict(obj, width=800, height=600)]
        elif field == "voice":
            obj.update({"duration": duration,
                        "mime_type": mime or "audio/ogg"})
            msg["voice"] = obj
        else:
            obj.update({"file_name": fname, "mime_type": mime or "application/octet-stream"})
            msg["document"] = obj
        if plain:
            msg["caption"] = plain
            if ents:
                msg["caption_entities"] = ents
        self._remember_message(bot, msg)
        self._record_sent(bot, method, p, chat["id"], msg, upload, field)
        return msg

    def _m_sendphoto(self, bot, p, up, ctx):
        return self._send_file(bot, p, up, "sendPhoto", "photo")

    def _m_sendvoice(self, bot, p, up, ctx):
        return self._send_file(bot, p, up, "sendVoice", "voice")

    def _m_senddocument(self, bot, p, up, ctx):
        return self._send_file(bot, p, up, "sendDocument", "document")

    def _m_sendchataction(self, bot, p, up, ctx):
        chat = self._chat(bot, p.get("chat_id"))
        action = _str_param(p, "action")
        if not action:
            raise ApiError(400, "Bad Request: action is empty")
        if action not in CHAT_ACTIONS:
            raise ApiError(400, "Bad Request: wrong parameter action in request")
        self._record_sent(bot, "sendChatAction", p, chat["id"])
        return True

    def _m_sendmessagedraft(self, bot, p, up, ctx):
        chat = self._chat(bot, p.get("chat_id"))
        if chat.get("type") != "private":
            raise ApiError(400, "Bad Request: drafts can be sent only to private chats")
        draft = _int_param(p, "draft_id", 0)
        if not draft:
            raise ApiError(400, "Bad Request: draft_id must be non-zero")
        self._text(p, "text", MAX_TEXT, allow_empty=True)
        self._record_sent(bot, "sendMessageDraft", p, chat["id"])
        return True

    def _m_editmessagetext(self, bot, p, up, ctx):
        inline = _str_param(p, "inline_message_id")
        if inline:
            self._text(p, "text", MAX_TEXT)
            self._record_sent(bot, "editMessageText", p, None)
            return True
        chat = self._chat(bot, p.get("chat_id"))
        mid = _int_param(p, "message_id")
        if mid is None:
            raise ApiError(400, "Bad Request: message identifier is not specified")
        raw, plain, ents = self._text(p, "text", MAX_TEXT)
        msg = bot.messages.get((chat["id"], mid))
        if msg is None or msg.get("from", {}).get("id") != bot.bot_id or "text" not in msg:
            raise ApiError(400, "Bad Request: message to edit not found")
        markup = p.get("reply_markup")
        if msg.get("text") == plain and msg.get("entities", []) == ents and \
                msg.get("reply_markup") == markup:
            raise ApiError(400, NOT_MODIFIED)
        msg = dict(msg)
        msg["text"] = plain
        msg.pop("entities", None)
        if ents:
            msg["entities"] = ents
        if markup is not None:
            msg["reply_markup"] = markup
        msg["edit_date"] = int(time.time())
        bot.messages[(chat["id"], mid)] = msg
        self._record_sent(bot, "editMessageText", p, chat["id"], msg)
        return msg

    def _m_deletemessage(self, bot, p, up, ctx):
        chat = self._chat(bot, p.get("chat_id"))
        mid = _int_param(p, "message_id")
        if mid is None:
            raise ApiError(400, "Bad Request: message identifier is not specified")
        if bot.messages.pop((chat["id"], mid), None) is None:
            raise ApiError(400, "Bad Request: message to delete not found")
        self._record_sent(bot, "deleteMessage", p, chat["id"])
        return True

    def _m_getfile(self, bot, p, up, ctx):
        fid = _str_param(p, "file_id")
        if not fid:
            raise ApiError(400, "Bad Request: file_id is empty")
        f = bot.files.get(fid)
        if f is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        if len(f["data"]) > MAX_DOWNLOAD:
            raise ApiError(400, "Bad Request: file is too big")
        return {"file_id": f["file_id"], "file_unique_id": f["file_unique_id"],
                "file_size": len(f["data"]), "file_path": f["file_path"]}

    def download(self, token, path):
        with self._lock:
            if not TOKEN_RE.match(token):
                return error_reply(ApiError(401, "Unauthorized"))
            bot = self._bot(token)
            if bot.revoked:
                return error_reply(ApiError(401, "Unauthorized"))
            fid = bot.file_paths.get(path)
            if fid is None:
                return error_reply(ApiError(404, "Not Found"))
            return Reply(200, bot.files[fid]["data"], "application/octet-stream")

    # -- webhook delivery (2.4) ---------------------------------------------------------------
    def _webhook_loop(self, bot, gen):
        attempts = {}
        while True:
            with self._cond:
                while (not self._stop.is_set() and not bot.closed and bot.webhook_gen == gen
                       and not bot.updates):
                    self._cond.wait(0.5)
                if self._stop.is_set() or bot.closed or bot.webhook_gen != gen:
                    return
                upd = bot.updates[0]
                uid = upd["update_id"]
                url = bot.webhook["url"]
                secret = bot.webhook.get("secret_token")
                body = _jbytes(upd)
            status, resp_body, err = self._post(url, body, secret)
            ok = status is not None and 200 <= status < 300
            follow = None
            with self._cond:
                if bot.closed or bot.webhook_gen != gen:
                    return
                rec = {"update_id": uid, "status": status}
                if err:
                    rec["error"] = err
                bot.deliveries.append(rec)
                if ok:
                    bot.updates = [u for u in bot.updates if u["update_id"] != uid]
                    attempts.pop(uid, None)
                    follow = resp_body
                else:
                    bot.last_error_date = int(time.time())
                    bot.last_error_message = err or ("Wrong response from the webhook: %d"
                                                     % status)
                    attempts[uid] = attempts.get(uid, 0) + 1
                    if attempts[uid] >= WEBHOOK_ATTEMPTS:
                        bot.updates = [u for u in bot.updates if u["update_id"] != uid]
                        attempts.pop(uid, None)
                self._cond.notify_all()
            if ok and follow:
                self._webhook_reply_call(bot, follow)
            if not ok and self._stop.wait(WEBHOOK_RETRY_DELAY):
                return

    def _post(self, url, body, secret):
        headers = {"Content-Type": "application/json"}
        if secret:
            headers["X-Telegram-Bot-Api-Secret-Token"] = secret
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with self._opener.open(req, timeout=WEBHOOK_TIMEOUT) as r:
                return r.status, r.read(1 << 20), None
        except urllib.error.HTTPError as e:
            try:
                e.read()
            except Exception:
                pass
            return e.code, b"", None
        except Exception as e:  # connection refused, timeout, bad URL ...
            return None, b"", "Connection failed: %s" % (getattr(e, "reason", None) or e)

    def _webhook_reply_call(self, bot, body):
        try:
            obj = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return
        if isinstance(obj, dict) and isinstance(obj.get("method"), str):
            params = {k: v for k, v in obj.items() if k != "method"}
            try:
                self.call(bot.token, obj["method"], params)
            except Exception:
                traceback.print_exc(file=sys.stderr)

    # -- control API --------------------------------------------------------------------------
    def sent(self, token):
        with self._lock:
            b = self._bots.get(token)
            return json.loads(_dumps(b.sent)) if b else []

    def stats(self, token):
        with self._lock:
            b = self._bots.get(token)
            if b is None:
                return {"calls": {}, "active_polls": 0, "last_poll_started": None,
                        "webhook": None, "deliveries": [], "pending": 0}
            return {"calls": dict(b.calls), "active_polls": b.active_polls,
                    "last_poll_started": b.last_poll_started,
                    "webhook": {"url": b.webhook["url"], "secret_token": b.webhook["secret_token"]}
                    if b.webhook else None,
                    "deliveries": [dict(d) for d in b.deliveries], "pending": b.pending()}

    def control(self, method, path, query, raw):
        name = path[len("/_control/"):]
        gets = ("sent", "stats")
        posts = ("updates", "message", "files", "fail", "revoke", "raw", "reset")
        if name not in gets + posts:
            return control_reply(404, {"error": "unknown control endpoint %s" % path})
        if (name in gets) != (method in ("GET", "HEAD")):
            return control_reply(405, {"error": "use %s for %s" % (
                "GET" if name in gets else "POST", path)})
        if name in gets:
            token = query.get("token")
            if not token:
                return control_reply(400, {"error": "token query parameter required"})
            if name == "sent":
                return control_reply(200, {"sent": self.sent(token)})
            return control_reply(200, self.stats(token))
        if name == "reset":
            self.reset()
            return control_reply(200, {"ok": True})
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
        except (UnicodeDecodeError, ValueError) as e:
            return control_reply(400, {"error": "body is not JSON: %s" % e})
        if not isinstance(body, dict):
            return control_reply(400, {"error": "body must be a JSON object"})
        token = body.get("token")
        if not isinstance(token, str) or not token:
            return control_reply(400, {"error": "token required"})
        try:
            return getattr(self, "_c_" + name)(token, body)
        except (ValueError, TypeError, KeyError) as e:
            return control_reply(400, {"error": str(e)})

    def _c_updates(self, token, body):
        if "updates" in body:
            ups = body["updates"]
            if not isinstance(ups, list):
                raise ValueError("updates must be a list")
        elif "update" in body:
            ups = [body["update"]]
        else:
            raise ValueError("give update or updates")
        ids, filtered = [], []
        for u in ups:
            uid, f = self.queue_update(token, u)
            ids.append(uid)
            filtered.append(f)
        out = {"update_id": ids[-1] if ids else None}
        if "updates" in body:
            out["update_ids"] = ids
        if any(filtered):
            out["filtered"] = True if "update" in body else filtered
        return control_reply(200, out)

    def _c_message(self, token, body):
        text = body.get("text")
        if not isinstance(text, str):
            raise ValueError("text must be a string")
        with self._lock:
            bot = self._bot(token)
            cid = body.get("chat_id", 1001)
            if not isinstance(cid, int):
                raise ValueError("chat_id must be an integer")
            chat = bot.chats.get(cid)
            if chat is None:
                ctype = body.get("chat_type") or ("private" if cid > 0 else "supergroup")
                chat = {"id": cid, "type": ctype}
                if ctype == "private":
                    chat["first_name"] = "User %d" % cid
                else:
                    chat["title"] = "Group %d" % cid
            frm = body.get("from") or {"id": cid if cid > 0 else 1001, "is_bot": False,
                                       "first_name": "Tester", "username": "tester"}
            mid = bot.last_mid.get(cid, 0) + 1
            msg = {"message_id": mid, "from": frm, "chat": chat, "date": int(time.time()),
                   "text": text}
            if body.get("entities"):
                msg["entities"] = body["entities"]
            if body.get("message_thread_id"):
                msg["message_thread_id"] = body["message_thread_id"]
                msg["is_topic_message"] = True
            rt = body.get("reply_to_message_id")
            if rt is not None and (cid, rt) in bot.messages:
                msg["reply_to_message"] = {k: v for k, v in bot.messages[(cid, rt)].items()
                                           if k != "reply_to_message"}
        uid, filtered = self.queue_update(token, {"message": msg})
        return control_reply(200, {"update_id": uid, "message_id": mid, "filtered": filtered})

    def _c_files(self, token, body):
        fid = body.get("file_id")
        if not isinstance(fid, str) or not fid:
            raise ValueError("file_id required")
        if "content_base64" in body:
            data = base64.b64decode(body["content_base64"], validate=True)
        elif isinstance(body.get("content"), str):
            data = body["content"].encode("utf-8")
        else:
            raise ValueError("content_base64 required")
        path = body.get("file_path")
        if path is not None and (not isinstance(path, str) or not path or path.startswith("/")):
            raise ValueError("file_path must be a relative path")
        with self._lock:
            f = self._new_file(self._bot(token), data, path, fid)
            return control_reply(200, {"file_id": f["file_id"],
                                       "file_unique_id": f["file_unique_id"],
                                       "file_size": len(data), "file_path": f["file_path"]})

    def _c_fail(self, token, body):
        method = body.get("method")
        code = body.get("error_code")
        times = body.get("times", 1)
        if not isinstance(method, str) or not method:
            raise ValueError("method required")
        if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 599:
            raise ValueError("error_code must be an HTTP status code")
        if not isinstance(times, int) or times < 1:
            raise ValueError("times must be a positive integer")
        params = dict(body.get("parameters") or {})
        ra = body.get("retry_after")
        if ra is not None:
            params["retry_after"] = ra
        if code == 429 and "retry_after" not in params:
            params["retry_after"] = 1
        desc = body.get("description")
        if not desc:
            desc = ("Too Many Requests: retry after %s" % params["retry_after"]) if code == 429 \
                else DEFAULT_DESCRIPTIONS.get(code, "Error")
        with self._lock:
            self._bot(token).fails.append({"method": method.lower(), "code": code,
                                           "description": desc, "parameters": params or None,
                                           "times": times})
        return control_reply(200, {"ok": True})

    def _c_revoke(self, token, body):
        with self._cond:
            self._bot(token).revoked = True
            self._cond.notify_all()
        return control_reply(200, {"ok": True})

    def _c_raw(self, token, body):
        method = body.get("method")
        status = body.get("status", 200)
        times = body.get("times", 1)
        if not isinstance(method, str) or not method:
            raise ValueError("method required")
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
            raise ValueError("status must be an HTTP status code")
        if not isinstance(times, int) or times < 1:
            raise ValueError("times must be a positive integer")
        b = body.get("body", "")
        data = b.encode("utf-8") if isinstance(b, str) else _jbytes(b)
        with self._lock:
            self._bot(token).raws.append({"method": method.lower(), "status": status,
                                          "body": data,
                                          "content_type": body.get("content_type",
                                                                   "application/json"),
                                          "times": times})
        return control_reply(200, {"ok": True})


# ---------------------------------------------------------------------------------------------
# HTTP plumbing


class _BadRequest(Exception):
    pass


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeTelegram/1.0"
    sys_version = ""
    timeout = 600

    def version_string(self):
        return self.server_version

    def setup(self):
        http.server.BaseHTTPRequestHandler.setup(self)
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        self.server.fake._track(self.connection, True)

    def finish(self):
        try:
            http.server.BaseHTTPRequestHandler.finish(self)
        except OSError:
            pass
        self.server.fake._track(self.connection, False)

    def log_message(self, fmt, *args):
        if self.server.fake.verbose:
            sys.stderr.write("fake_telegram: %s - %s\n" % (self.address_string(), fmt % args))

    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    def _read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = []
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise _BadRequest("truncated chunked body")
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise _BadRequest("bad chunk size")
                if size == 0:
                    while True:
                        t = self.rfile.readline(65537)
                        if not t or t in (b"\r\n", b"\n"):
                            break
                    return b"".join(out)
                data = self.rfile.read(size)
                if len(data) != size:
                    raise _BadRequest("truncated chunk")
                out.append(data)
                self.rfile.readline(3)
        cl = self.headers.get("Content-Length")
        if cl is None:
            return b""
        try:
            n = int(cl)
        except ValueError:
            raise _BadRequest("bad Content-Length")
        if n < 0:
            raise _BadRequest("bad Content-Length")
        data = self.rfile.read(n)
        if len(data) != n:
            raise _BadRequest("truncated body")
        return data

    def _dispatch(self):
        fake = self.server.fake
        self._started = False
        try:
            try:
                raw = self._read_body()
            except _BadRequest as e:
                self.close_connection = True
                self._send(error_reply(ApiError(400, "Bad Request: %s" % e)))
                return
            parts = urllib.parse.urlsplit(self.path)
            path = parts.path or "/"
            query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
            headers = {k.lower(): v for k, v in self.headers.items()}
            if path.startswith("/_control/"):
                self._send(fake.control(self.command, path, query, raw))
                return
            if path.startswith("/file/bot"):
                token, _, fpath = path[len("/file/bot"):].partition("/")
                self._send(fake.download(urllib.parse.unquote(token),
                                         urllib.parse.unquote(fpath)))
                return
            if not path.startswith("/bot"):
                self._send(error_reply(ApiError(404, "Not Found")))
                return
            token, slash, method = path[len("/bot"):].partition("/")
            token = urllib.parse.unquote(token)
            if not slash or not method or "/" in method:
                self._send(error_reply(ApiError(404, "Not Found")))
                return
            if not TOKEN_RE.match(token):
                self._send(error_reply(ApiError(401, "Unauthorized")))
                return
            try:
                params, uploads = decode_params(query, headers, raw)
            except ApiError as e:
                with fake._lock:
                    b = fake._bot(token)
                    b.calls[method.lower()] = b.calls.get(method.lower(), 0) + 1
                    if b.revoked:
                        e = ApiError(401, "Unauthorized")
                self._send(error_reply(e))
                return
            reply = fake.call(token, method, params, uploads, _Ctx(self.connection))
            if reply is None:  # client hung up during a long poll
                self.close_connection = True
                return
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout):
            self.close_connection = True
        except Exception:
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            if not self._started:
                try:
                    self._send(error_reply(ApiError(500, "Internal Server Error")))
                except OSError:
                    pass

    def _send(self, r):
        self._started = True
        self.send_response(r.status)
        if r.content_type:
            self.send_header("Content-Type", r.content_type)
        for k, v in r.headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(r.body)))
        self.end_headers()
        if self.command != "HEAD" and r.body:
            self.wfile.write(r.body)
        self.wfile.flush()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, fake):
        self.fake = fake
        http.server.ThreadingHTTPServer.__init__(self, addr, _Handler)

    def handle_error(self, request, client_address):
        if self.fake.verbose:
            http.server.ThreadingHTTPServer.handle_error(self, request, client_address)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake Telegram Bot API server for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeTelegram(host=args.host, port=args.port, verbose=args.verbose)
    port = fake.bind()

    def on_signal(signum, frame):
        fake._stop.set()
        threading.Thread(target=fake._server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write("FAKE_TELEGRAM_PORT=%d\n" % port)
    sys.stdout.flush()
    try:
        fake.serve_forever()
    finally:
        fake._close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
