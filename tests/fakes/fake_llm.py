#!/usr/bin/env python3
"""Fake model-provider server for Switchboard tests (Python 3 standard library only).

One loopback HTTP/1.1 server speaks three wire protocols (see /work/shared/protocols/llm.md
sections 0-3 and 6):

    OpenAI family   base http://127.0.0.1:PORT/v1   POST /v1/chat/completions, POST /v1/embeddings,
                                                    GET /v1/models, GET /v1/models/{id}
    Anthropic       base http://127.0.0.1:PORT      POST /v1/messages, GET /v1/models (chosen when the
                                                    request carries anthropic-version or x-api-key)
    Ollama native   base http://127.0.0.1:PORT      POST /api/chat, POST /api/embed, POST /api/embeddings,
                                                    POST /api/show, GET /api/tags, GET /api/version

Valid keys start with "sk-good". Known models: gpt-test, claude-test, llama-test, embed-test
(Ollama also knows llama-notools, a chat model without tool support). Chat replies are
"echo: <last user text>" (plus " [tool result: <content>]" when the last message is a tool result).
A tool call (arguments {"q":"x"}) is produced when tools are present and the last message is a
user message containing "call tool" ("call two tools" -> two parallel calls), or when the
request forces a tool (tool_choice required/named, Anthropic any/tool).

Command line:
    python3 fake_llm.py [--port 0] [--host 127.0.0.1] [--verbose]
prints exactly one line "FAKE_LLM_PORT=<port>" once listening and serves until SIGTERM/SIGINT
(exit code 0).

In process:
    fake = FakeLlm(); port = fake.start()
    fake.script("/v1/chat/completions", preset="openai_rate_limit")
    fake.script({"path": "/api/chat", "status": 500, "body": {"error": "boom"}})
    fake.requests          # recorded requests
    fake.reset(); fake.stop()

Control endpoints (no auth, never recorded):
    POST /_control/script    one script object or a list of them (see _compile_script)
    GET  /_control/requests  recorded [{method, path, query, headers, body}]
    GET  /_control/scripts   scripts still queued
    POST /_control/reset     clear scripts, records and config
    POST /_control/config    {"context_tokens": N}  -> token budget for context-length errors
"""

import argparse
import base64
import collections
import hashlib
import http.server
import json
import math
import re
import signal
import socket
import struct
import sys
import threading
import time
import traceback
import urllib.parse

DEFAULT_MODELS = ("gpt-test", "claude-test", "llama-test", "embed-test")
OLLAMA_ONLY_MODELS = ("llama-notools",)
OLLAMA_NO_TOOLS = frozenset(["llama-notools"])
GOOD_KEY_PREFIX = "sk-good"
EMBED_DIM = 8
MAX_DIMENSIONS = 3072
STALL_SECONDS = 300.0
OLLAMA_VERSION = "0.12.3"
CREATED = 1700000000
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

OA_PARSE_MSG = ("We could not parse the JSON body of your request. (HINT: This likely means you "
                "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
                "but what was sent was not valid JSON. If you have trouble figuring out how to fix "
                "this, please contact us through our help center at help.openai.com.)")
OA_NO_KEY_MSG = ("You didn't provide an API key. You need to provide your API key in an "
                 "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or "
                 "as the password field (with blank username) if you're accessing the API from "
                 "your browser and are prompted for a username and password. You can obtain an "
                 "API key from https://platform.openai.com/account/api-keys.")
OA_BAD_KEY_MSG = ("Incorrect API key provided. You can find your API key at "
                  "https://platform.openai.com/account/api-keys.")

_counter_lock = threading.Lock()
_counter = [0]


def _next_id(prefix):
    with _counter_lock:
        _counter[0] += 1
        n = _counter[0]
    return "%s%012x%06x" % (prefix, int(time.time() * 1000) & 0xFFFFFFFFFFFF, n)


def _dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _jbytes(obj):
    return _dumps(obj).encode("utf-8")


def _tokens(text):
    """Deterministic token estimate: one token per 4 UTF-8 bytes, at least 1."""
    if not text:
        return 0
    return max(1, (len(text.encode("utf-8")) + 3) // 4)


def _split3(text):
    """Split text into about three non-empty pieces (stream deltas)."""
    if not text:
        return []
    n = len(text)
    if n < 3:
        return [text]
    a, b = n // 3, (2 * n) // 3
    return [p for p in (text[:a], text[a:b], text[b:]) if p]


def _rfc3339_now():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + (".%03dZ" % int((t % 1) * 1000))


def _f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def embed_vector(text, dim=EMBED_DIM):
    """Deterministic, L2-normalised vector for `text`, each value exactly a float32."""
    vals = []
    i = 0
    while len(vals) < dim:
        h = hashlib.sha256(("%s|%d" % (text, i)).encode("utf-8")).digest()
        for j in range(0, 32, 4):
            vals.append(int.from_bytes(h[j:j + 4], "little") / 4294967296.0 * 2.0 - 1.0)
        i += 1
    vals = vals[:dim]
    norm = math.sqrt(sum(v * v for v in vals)) or 1.0
    return [_f32(v / norm) for v in vals]


def embed_base64(vec):
    return base64.b64encode(struct.pack("<%df" % len(vec), *vec)).decode("ascii")


# ---------------------------------------------------------------------------------------------
# Replies


class Reply(object):
    """What to send. `body` (bytes, Content-Length) or `events` (list of bytes, chunked)."""

    def __init__(self, status=200, body=b"", content_type="application/json", headers=None,
                 events=None):
        self.status = status
        self.headers = []
        if content_type:
            self.headers.append(("Content-Type", content_type))
        for k, v in (headers or []):
            self.set_header(k, v)
        self.body = body
        self.events = events
        self.huge = None            # int: stream this many filler bytes instead
        self.huge_fill = b"a"
        self.huge_content_length = False
        self.first_delay = 0.0      # seconds before the status line
        self.delay = 0.0            # seconds before the body (plain) / between chunks (chunked)
        self.stall = False
        self.close_after_bytes = None
        self.abort_after_chunks = None
        self.sse_kind = None        # "openai" | "anthropic" | "ollama" for default streams

    def set_header(self, name, value):
        low = name.lower()
        self.headers = [(k, v) for (k, v) in self.headers if k.lower() != low]
        self.headers.append((name, str(value)))

    def get_header(self, name):
        low = name.lower()
        for k, v in self.headers:
            if k.lower() == low:
                return v
        return None


def json_reply(status, obj, headers=None):
    return Reply(status, _jbytes(obj), "application/json", headers)


def oa_error(status, message, type_="invalid_request_error", param=None, code=None, headers=None):
    r = json_reply(status, {"error": {"message": message, "type": type_, "param": param,
                                      "code": code}}, headers)
    r.set_header("x-request-id", _next_id("req_"))
    return r


def an_error(status, type_, message, headers=None):
    rid = _next_id("req_")
    r = json_reply(status, {"type": "error", "error": {"type": type_, "message": message},
                            "request_id": rid}, headers)
    r.set_header("request-id", rid)
    return r


def ol_error(status, message, headers=None):
    return json_reply(status, {"error": message}, headers)


def sse_data(obj):
    return ("data: " + _dumps(obj) + "\n\n").encode("utf-8")


def sse_event(name, obj):
    return ("event: " + name + "\ndata: " + _dumps(obj) + "\n\n").encode("utf-8")


def ndjson(obj):
    return (_dumps(obj) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Presets (section 6 error cases). Values are script fragments; "_in_stream" ones need the request.

def _preset(name):
    rid = _next_id("req_")
    presets = {
        "openai_rate_limit": {
            "_default_path": "/v1/chat/completions", "status": 429,
            "headers": {"retry-after": "1", "x-ratelimit-reset-requests": "1s",
                        "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0"},
            "body": {"error": {"message": "Rate limit reached for gpt-test in organization "
                                          "org-fake on requests per min (RPM): Limit 60, Used 60, "
                                          "Requested 1. Please try again in 1s.",
                               "type": "requests", "param": None, "code": "rate_limit_exceeded"}}},
        "openai_quota": {
            "_default_path": "/v1/chat/completions", "status": 429,
            "body": {"error": {"message": "You exceeded your current quota, please check your "
                                          "plan and billing details.",
                               "type": "insufficient_quota", "param": None,
                               "code": "insufficient_quota"}}},
        "openai_500": {
            "_default_path": "/v1/chat/completions", "status": 500,
            "body": {"error": {"message": "The server had an error while processing your "
                                          "request. Sorry about that!",
                               "type": "server_error", "param": None, "code": None}}},
        "openai_503": {
            "_default_path": "/v1/chat/completions", "status": 503,
            "body": {"error": {"message": "The engine is currently overloaded, please try "
                                          "again later.",
                               "type": "service_unavailable_error", "param": None,
                               "code": "slow_down"}}},
        "openai_context_length": {
            "_default_path": "/v1/chat/completions", "status": 400,
            "body": {"error": {"message": "This model's maximum context length is 128 tokens. "
                                          "However, you requested 4096 tokens (4096 in the "
                                          "messages, 0 in the completion). Please reduce the "
                                          "length of the messages or completion.",
                               "type": "invalid_request_error", "param": "messages",
                               "code": "context_length_exceeded"}}},
        "openai_error_in_stream": {"_default_path": "/v1/chat/completions",
                                   "_in_stream": "openai"},
        "anthropic_overloaded": {
            "_default_path": "/v1/messages", "status": 529, "headers": {"request-id": rid},
            "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
                     "request_id": rid}},
        "anthropic_rate_limit": {
            "_default_path": "/v1/messages", "status": 429,
            "headers": {"request-id": rid, "retry-after": "1"},
            "body": {"type": "error",
                     "error": {"type": "rate_limit_error",
                               "message": "This request would exceed the rate limit for your "
                                          "organization of 50 requests per minute."},
                     "request_id": rid}},
        "anthropic_500": {
            "_default_path": "/v1/messages", "status": 500, "headers": {"request-id": rid},
            "body": {"type": "error", "error": {"type": "api_error",
                                                "message": "Internal server error"},
                     "request_id": rid}},
        "anthropic_overloaded_in_stream": {"_default_path": "/v1/messages",
                                           "_in_stream": "anthropic"},
        "ollama_busy": {
            "_default_path": "/api/chat", "status": 503,
            "body": {"error": "server busy, please try again.  maximum pending requests exceeded"}},
        "ollama_500": {
            "_default_path": "/api/chat", "status": 500,
            "body": {"error": "the model failed to generate a response"}},
        "ollama_error_in_stream": {"_default_path": "/api/chat", "_in_stream": "ollama"},
    }
    return presets.get(name)


PRESET_NAMES = ("openai_rate_limit", "openai_quota", "openai_500", "openai_503",
                "openai_context_length", "openai_error_in_stream", "anthropic_overloaded",
                "anthropic_rate_limit", "anthropic_500", "anthropic_overloaded_in_stream",
                "ollama_busy", "ollama_500", "ollama_error_in_stream")


class ScriptError(ValueError):
    pass


def _compile_script(spec):
    """Validate a script object; returns a normalised dict. Raises ScriptError.

    Fields: path (required unless a preset gives one; "*" matches any non-control path),
    times (default 1; -1 = until reset), preset, status, headers, body | raw | chunks | huge_bytes
    (+ huge_fill, huge_content_length), delay_ms, first_byte_delay_ms, stall, close_after_bytes,
    abort_after_chunks.
    """
    if not isinstance(spec, dict):
        raise ScriptError("script must be a JSON object")
    s = dict(spec)
    preset = s.pop("preset", None)
    if preset is not None:
        p = _preset(preset) if isinstance(preset, str) else None
        if p is None:
            raise ScriptError("unknown preset %r; known: %s" % (preset, ", ".join(PRESET_NAMES)))
        default_path = p.pop("_default_path")
        merged = dict(p)
        if "headers" in s and isinstance(s["headers"], dict):
            h = dict(p.get("headers", {}))
            h.update(s.pop("headers"))
            merged["headers"] = h
        merged.update(s)
        s = merged
        s.setdefault("path", default_path)
        s["preset"] = preset
    path = s.get("path")
    if not isinstance(path, str) or not path or (path != "*" and not path.startswith("/")):
        raise ScriptError("path must be a string starting with '/' (or '*')")
    times = s.get("times", 1)
    if not isinstance(times, int) or isinstance(times, bool) or times == 0 or times < -1:
        raise ScriptError("times must be a positive integer or -1 (until reset)")
    s["times"] = times
    if "status" in s and (not isinstance(s["status"], int) or not 100 <= s["status"] <= 999):
        raise ScriptError("status must be an integer 100..999")
    hdrs = s.get("headers", {})
    if not isinstance(hdrs, dict):
        raise ScriptError("headers must be an object")
    s["headers"] = {str(k): str(v) for k, v in hdrs.items()}
    sources = [k for k in ("body", "raw", "chunks", "huge_bytes") if k in s]
    if len(sources) > 1:
        raise ScriptError("give at most one of body, raw, chunks, huge_bytes")
    if "raw" in s and not isinstance(s["raw"], str):
        raise ScriptError("raw must be a string")
    if "chunks" in s:
        if not isinstance(s["chunks"], list) or not all(isinstance(c, str) for c in s["chunks"]):
            raise ScriptError("chunks must be a list of strings")
    if "huge_bytes" in s and (not isinstance(s["huge_bytes"], int) or s["huge_bytes"] < 0):
        raise ScriptError("huge_bytes must be a non-negative integer")
    if "huge_fill" in s and (not isinstance(s["huge_fill"], str) or not s["huge_fill"]):
        raise ScriptError("huge_fill must be a non-empty string")
    for k in ("delay_ms", "first_byte_delay_ms"):
        v = s.get(k, 0)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            raise ScriptError("%s must be a non-negative number" % k)
    for k in ("close_after_bytes", "abort_after_chunks"):
        v = s.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise ScriptError("%s must be a non-negative integer or null" % k)
    return s


# ---------------------------------------------------------------------------------------------
# Request view


class Request(object):
    def __init__(self, method, path, query, headers, raw):
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.raw = raw
        self._parsed = None
        self._parse_error = None
        self._parsed_done = False

    def json(self):
        """(value, error) - error is None on success, a short reason otherwise."""
        if not self._parsed_done:
            self._parsed_done = True
            if not self.raw:
                self._parse_error = "empty"
            else:
                try:
                    self._parsed = json.loads(self.raw.decode("utf-8"))
                except UnicodeDecodeError:
                    self._parse_error = "invalid UTF-8"
                except ValueError as e:
                    self._parse_error = str(e)
        return self._parsed, self._parse_error

    def record(self):
        body = None
        if self.raw:
            v, err = self.json()
            body = v if err is None else self.raw.decode("utf-8", "replace")
        return {"method": self.method, "path": self.path, "query": dict(self.query),
                "headers": dict(self.headers), "body": body}


def _go_json_error(raw):
    """An Ollama (Go encoding/json) style message for a bad body."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid character looking for beginning of value"
    try:
        json.loads(text)
    except ValueError as e:
        pos = getattr(e, "pos", None)
        if pos is None or pos >= len(text.rstrip()):
            return "unexpected EOF"
        return "invalid character %r looking for beginning of value" % text[pos]
    return "json: cannot unmarshal into Go value of type api.ChatRequest"


# ---------------------------------------------------------------------------------------------
# Conversation helpers


def _oa_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p["text"] for p in content
                        if isinstance(p, dict) and p.get("type") == "text"
                        and isinstance(p.get("text"), str))
    return ""


def _an_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b["text"] for b in content
                        if isinstance(b, dict) and b.get("type") == "text"
                        and isinstance(b.get("text"), str))
    return ""


def _an_tool_results(content):
    out = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out.append(_an_text(b.get("content", "")))
    return out


def _reply_text(last_user, tool_result):
    text = "echo: " + last_user
    if tool_result is not None:
        text += " [tool result: %s]" % tool_result
    return text


def _wants_tools(text):
    low = text.lower()
    if "call two tools" in low:
        return 2
    if "call tool" in low:
        return 1
    return 0


def _tool_args(k):
    return {"q": "x"} if k == 0 else {"q": "y"}


# ---------------------------------------------------------------------------------------------
# The provider logic


class Provider(object):
    def __init__(self, fake):
        self.fake = fake

    # -- routing ------------------------------------------------------------------------------
    def route(self, req):
        m, p = req.method, req.path
        if p == "/v1/messages":
            return self.anthropic_messages(req) if m == "POST" else self._oa_invalid_url(req)
        if p == "/v1/models" and m == "GET" and self._looks_anthropic(req):
            return self.anthropic_models(req)
        if p == "/v1/chat/completions" and m == "POST":
            return self.openai_chat(req)
        if p == "/v1/embeddings" and m == "POST":
            return self.openai_embeddings(req)
        if p == "/v1/models" and m == "GET":
            return self.openai_models(req)
        if p.startswith("/v1/models/") and m == "GET":
            return self.openai_model(req, p[len("/v1/models/"):])
        if p.startswith("/v1/") or p == "/v1":
            return self._oa_invalid_url(req)
        ollama = {"/api/chat": ("POST", self.ollama_chat), "/api/embed": ("POST", self.ollama_embed),
                  "/api/embeddings": ("POST", self.ollama_embeddings),
                  "/api/show": ("POST", self.ollama_show),
                  "/api/tags": ("GET", self.ollama_tags),
                  "/api/version": ("GET", self.ollama_version)}
        if p in ollama:
            want, fn = ollama[p]
            if m != want:
                return Reply(405, b"405 method not allowed", "text/plain")
            return fn(req)
        if p == "/" and m in ("GET", "HEAD"):
            return Reply(200, b"Ollama is running", "text/plain; charset=utf-8")
        return Reply(404, b"404 page not found", "text/plain")

    def _looks_anthropic(self, req):
        h = req.headers
        return "anthropic-version" in h or ("x-api-key" in h and "authorization" not in h)

    def models(self):
        return list(self.fake._models)

    def _model_known(self, name):
        return isinstance(name, str) and name in self.fake._models

    # -- OpenAI -------------------------------------------------------------------------------
    def _oa_invalid_url(self, req):
        return oa_error(404, "Invalid URL (%s %s)" % (req.method, req.path))

    def _oa_auth(self, req):
        auth = req.headers.get("authorization", "")
        if not auth.strip():
            return oa_error(401, OA_NO_KEY_MSG)
        parts = auth.split(None, 1)
        if len(parts) != 2 or parts[0].lower() != "bearer":
            return oa_error(401, OA_NO_KEY_MSG)
        if not parts[1].strip().startswith(GOOD_KEY_PREFIX):
            return oa_error(401, OA_BAD_KEY_MSG, code="invalid_api_key")
        return None

    def _oa_ok_headers(self, r):
        r.set_header("x-request-id", _next_id("req_"))
        r.set_header("openai-processing-ms", "1")
        r.set_header("x-ratelimit-limit-requests", "10000")
        r.set_header("x-ratelimit-remaining-requests", "9999")
        r.set_header("x-ratelimit-reset-requests", "6ms")
        return r

    def _oa_body(self, req):
        body, err = req.json()
        if err is not None:
            return None, oa_error(400, OA_PARSE_MSG)
        if not isinstance(body, dict):
            return None, oa_error(400, "Invalid type for request body: expected an object.",
                                  code="invalid_type")
        return body, None

    def openai_models(self, req):
        err = self._oa_auth(req)
        if err:
            return err
        data = [{"id": m, "object": "model", "created": CREATED, "owned_by": "fake"}
                for m in self.models()]
        return self._oa_ok_headers(json_reply(200, {"object": "list", "data": data}))

    def openai_model(self, req, name):
        err = self._oa_auth(req)
        if err:
            return err
        if not self._model_known(name):
            return oa_error(404, "The model `%s` does not exist or you do not have access to it."
                            % name, param="model", code="model_not_found")
        return self._oa_ok_headers(json_reply(200, {"id": name, "object": "model",
                                                    "created": CREATED, "owned_by": "fake"}))

    def _oa_validate_messages(self, messages):
        roles = ("system", "assistant", "user", "function", "tool", "developer")
        pending = None  # tool_call ids awaiting answers
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict):
                return oa_error(400, "Invalid type for 'messages[%d]': expected an object, but got "
                                "%s instead." % (i, type(msg).__name__),
                                param="messages[%d]" % i, code="invalid_type")
            role = msg.get("role")
            if role not in roles:
                return oa_error(400, "Invalid value: '%s'. Supported values are: 'system', "
                                "'assistant', 'user', 'function', 'tool', and 'developer'." % role,
                                param="messages[%d].role" % i, code="invalid_value")
            if role == "tool":
                if pending is None:
                    return oa_error(400, "Invalid parameter: messages with role 'tool' must be a "
                                    "response to a preceeding message with 'tool_calls'.",
                                    param="messages.[%d].role" % i)
                pending.discard(msg.get("tool_call_id"))
                continue
            if pending:
                return oa_error(400, "An assistant message with 'tool_calls' must be followed by "
                                "tool messages responding to each 'tool_call_id'. The following "
                                "tool_call_ids did not have response messages: %s"
                                % ", ".join(sorted(str(x) for x in pending)),
                                param="messages.[%d].role" % i)
            pending = None
            if role == "assistant" and isinstance(msg.get("tool_calls"), list) and msg["tool_calls"]:
                pending = set()
                for tc in msg["tool_calls"]:
                    if isinstance(tc, dict):
                        pending.add(tc.get("id"))
        if pending:
            return oa_error(400, "An assistant message with 'tool_calls' must be followed by tool "
                            "messages responding to each 'tool_call_id'. The following "
                            "tool_call_ids did not have response messages: %s"
                            % ", ".join(sorted(str(x) for x in pending)),
                            param="messages.[%d].role" % len(messages))
        return None

    def openai_chat(self, req):
        err = self._oa_auth(req)
        if err:
            return err
        body, err = self._oa_body(req)
        if err:
            return err
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return oa_error(400, "you must provide a model parameter")
        if "messages" not in body:
            return oa_error(400, "Missing required parameter: 'messages'.", param="messages",
                            code="missing_required_parameter")
        messages = body["messages"]
        if not isinstance(messages, list):
            return oa_error(400, "Invalid type for 'messages': expected an array, but got %s "
                            "instead." % type(messages).__name__, param="messages",
                            code="invalid_type")
        if not messages:
            return oa_error(400, "[] is too short - 'messages'", param="messages", code=None)
        err = self._oa_validate_messages(messages)
        if err:
            return err
        stream = body.get("stream") is True
        if body.get("stream_options") is not None and not stream:
            return oa_error(400, "The 'stream_options' parameter is only allowed when 'stream' "
                            "is enabled.", param="stream_options", code="invalid_value")
        tools = body.get("tools") or []
        if not isinstance(tools, list):
            return oa_error(400, "Invalid type for 'tools': expected an array.", param="tools",
                            code="invalid_type")
        names = []
        for i, t in enumerate(tools):
            fn = t.get("function") if isinstance(t, dict) else None
            name = fn.get("name") if isinstance(fn, dict) else None
            if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
                return oa_error(400, "Invalid 'tools[%d].function.name': string does not match "
                                "pattern. Expected a string that matches the pattern "
                                "'^[a-zA-Z0-9_-]+$'." % i,
                                param="tools[%d].function.name" % i, code="invalid_value")
            names.append(name)
        if not self._model_known(model):
            return oa_error(404, "The model `%s` does not exist or you do not have access to it."
                            % model, code="model_not_found")

        last_user = ""
        for msg in reversed(messages):
            if msg.get("role") == "user":
                last_user = _oa_text(msg.get("content"))
                break
        tool_result = None
        if messages[-1].get("role") == "tool":
            tool_result = _oa_text(messages[-1].get("content"))
        prompt_text = " ".join(_oa_text(m.get("content")) for m in messages)
        prompt_tokens = _tokens(prompt_text) or 1
        completion_budget = body.get("max_completion_tokens") or body.get("max_tokens") or 0
        budget = self.fake._config.get("context_tokens")
        if budget and isinstance(completion_budget, int) and \
                prompt_tokens + completion_budget > budget:
            return oa_error(400, "This model's maximum context length is %d tokens. However, you "
                            "requested %d tokens (%d in the messages, %d in the completion). "
                            "Please reduce the length of the messages or completion."
                            % (budget, prompt_tokens + completion_budget, prompt_tokens,
                               completion_budget),
                            param="messages", code="context_length_exceeded")

        # tool calls
        calls = []
        choice = body.get("tool_choice")
        if names and choice != "none":
            n = 0
            forced = None
            if isinstance(choice, dict):
                fn = choice.get("function")
                forced = fn.get("name") if isinstance(fn, dict) else None
            if messages[-1].get("role") == "user":
                n = _wants_tools(last_user)
            if n == 0 and (choice == "required" or forced):
                n = 1
            for k in range(n):
                name = forced or (names[k] if k < len(names) else names[0])
                calls.append({"id": _next_id("call_"), "type": "function",
                              "function": {"name": name,
                                           "arguments": _dumps(_tool_args(k))}})
        text = _reply_text(last_user, tool_result)
        if calls:
            completion_tokens = sum(_tokens(c["function"]["name"] + c["function"]["arguments"])
                                    for c in calls)
            finish = "tool_calls"
        else:
            completion_tokens = _tokens(text) or 1
            finish = "stop"
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        cid = _next_id("chatcmpl-")
        created = int(time.time())
        if not stream:
            message = {"role": "assistant", "content": None if calls else text, "refusal": None}
            if calls:
                message["tool_calls"] = calls
            full_usage = dict(usage)
            full_usage["prompt_tokens_details"] = {"cached_tokens": 0}
            full_usage["completion_tokens_details"] = {"reasoning_tokens": 0}
            out = {"id": cid, "object": "chat.completion", "created": created, "model": model,
                   "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                                "message": message}],
                   "usage": full_usage, "system_fingerprint": "fp_fake"}
            return self._oa_ok_headers(json_reply(200, out))

        so = body.get("stream_options")
        include_usage = isinstance(so, dict) and so.get("include_usage") is True

        def chunk(delta, finish_reason=None):
            c = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                 "system_fingerprint": "fp_fake",
                 "choices": [{"index": 0, "delta": delta, "logprobs": None,
                              "finish_reason": finish_reason}]}
            if include_usage:
                c["usage"] = None
            return sse_data(c)

        events = []
        if calls:
            # Interleave fragments of parallel calls by index; id/type/name only on the first.
            frags = []
            for k, c in enumerate(calls):
                args = c["function"]["arguments"]
                cut = max(1, len(args) // 2)
                frags.append([{"index": k, "id": c["id"], "type": "function",
                               "function": {"name": c["function"]["name"], "arguments": ""}},
                              {"index": k, "function": {"arguments": args[:cut]}},
                              {"index": k, "function": {"arguments": args[cut:]}}])
            first = True
            order = []
            # start0, frag0a, start1, frag1a, ..., frag0b, frag1b
            for k in range(len(frags)):
                order.append(frags[k][0])
                order.append(frags[k][1])
            for k in range(len(frags)):
                order.append(frags[k][2])
            for tc in order:
                delta = {"tool_calls": [tc]}
                if first:
                    delta = {"role": "assistant", "content": None, "tool_calls": [tc]}
                    first = False
                events.append(chunk(delta))
        else:
            events.append(chunk({"role": "assistant", "content": ""}))
            for piece in _split3(text):
                events.append(chunk({"content": piece}))
        events.append(chunk({}, finish))
        if include_usage:
            events.append(sse_data({"id": cid, "object": "chat.completion.chunk",
                                    "created": created, "model": model,
                                    "system_fingerprint": "fp_fake", "choices": [],
                                    "usage": usage}))
        events.append(b"data: [DONE]\n\n")
        r = Reply(200, None, "text/event-stream; charset=utf-8", events=events)
        r.set_header("Cache-Control", "no-cache")
        r.sse_kind = "openai"
        return self._oa_ok_headers(r)

    def openai_embeddings(self, req):
        err = self._oa_auth(req)
        if err:
            return err
        body, err = self._oa_body(req)
        if err:
            return err
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return oa_error(400, "you must provide a model parameter")
        if "input" not in body:
            return oa_error(400, "Missing required parameter: 'input'.", param="input",
                            code="missing_required_parameter")
        inp = body["input"]
        bad = oa_error(400, "'$.input' is invalid. Please check the API reference: "
                       "https://platform.openai.com/docs/api-reference.", param="input")

        def is_int(v):
            return isinstance(v, int) and not isinstance(v, bool)

        if isinstance(inp, str):
            texts = [inp]
        elif isinstance(inp, list) and inp and all(isinstance(x, str) for x in inp):
            texts = list(inp)
        elif isinstance(inp, list) and inp and all(is_int(x) for x in inp):
            texts = [_dumps(inp)]
        elif isinstance(inp, list) and inp and all(
                isinstance(x, list) and x and all(is_int(y) for y in x) for x in inp):
            texts = [_dumps(x) for x in inp]
        else:
            return bad
        if any(t == "" for t in texts) or len(texts) > 2048:
            return bad
        dims = body.get("dimensions")
        if dims is None:
            dims = EMBED_DIM
        elif not is_int(dims) or dims < 1:
            return oa_error(400, "Invalid 'dimensions': integer below minimum value. Expected a "
                            "value >= 1.", param="dimensions", code="integer_below_min_value")
        elif dims > MAX_DIMENSIONS:
            return oa_error(400, "This model does not support specifying dimensions larger than "
                            "%d." % MAX_DIMENSIONS, param="dimensions")
        fmt = body.get("encoding_format")
        if fmt is None:
            fmt = "float"
        if fmt not in ("float", "base64"):
            return oa_error(400, "%s is not one of ['float', 'base64'] - 'encoding_format'"
                            % _dumps(fmt), param="encoding_format")
        if not self._model_known(model):
            return oa_error(404, "The model `%s` does not exist or you do not have access to it."
                            % model, code="model_not_found")
        data = []
        for i, t in enumerate(texts):
            vec = embed_vector(t, dims)
            data.append({"object": "embedding", "index": i,
                         "embedding": embed_base64(vec) if fmt == "base64" else vec})
        pt = sum(_tokens(t) for t in texts)
        return self._oa_ok_headers(json_reply(200, {
            "object": "list", "model": model, "data": data,
            "usage": {"prompt_tokens": pt, "total_tokens": pt}}))

    # -- Anthropic ----------------------------------------------------------------------------
    def _an_auth(self, req):
        key = req.headers.get("x-api-key")
        if key is None:
            auth = req.headers.get("authorization", "")
            parts = auth.split(None, 1)
            if len(parts) == 2 and parts[0].lower() == "bearer":
                key = parts[1]
        if key is None or not key.strip():
            return an_error(401, "authentication_error", "x-api-key header is required")
        if not key.strip().startswith(GOOD_KEY_PREFIX):
            return an_error(401, "authentication_error", "invalid x-api-key")
        if not req.headers.get("anthropic-version", "").strip():
            return an_error(400, "invalid_request_error", "anthropic-version: header is required")
        return None

    def _an_ok(self, r):
        r.set_header("request-id", _next_id("req_"))
        r.set_header("anthropic-ratelimit-requests-limit", "1000")
        r.set_header("anthropic-ratelimit-requests-remaining", "999")
        r.set_header("anthropic-ratelimit-requests-reset",
                     time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60)))
        return r

    def anthropic_models(self, req):
        err = self._an_auth(req)
        if err:
            return err
        data = [{"type": "model", "id": m, "display_name": m.replace("-", " ").title(),
                 "created_at": "2025-01-01T00:00:00Z"} for m in self.models()]
        return self._an_ok(json_reply(200, {"data": data, "has_more": False,
                                            "first_id": data[0]["id"] if data else None,
                                            "last_id": data[-1]["id"] if data else None}))

    def anthropic_messages(self, req):
        err = self._an_auth(req)
        if err:
            return err
        body, perr = req.json()
        if perr is not None:
            if perr == "empty":
                return an_error(400, "invalid_request_error", "Request body is empty")
            return an_error(400, "invalid_request_error",
                            "There was an error parsing the body of your request: %s" % perr)
        if not isinstance(body, dict):
            return an_error(400, "invalid_request_error", "Input should be a valid dictionary")
        for field in ("model", "max_tokens", "messages"):
            if field not in body:
                return an_error(400, "invalid_request_error", "%s: Field required" % field)
        model = body["model"]
        if not isinstance(model, str):
            return an_error(400, "invalid_request_error", "model: Input should be a valid string")
        mt = body["max_tokens"]
        if not isinstance(mt, int) or isinstance(mt, bool):
            return an_error(400, "invalid_request_error",
                            "max_tokens: Input should be a valid integer")
        if mt < 1:
            return an_error(400, "invalid_request_error",
                            "max_tokens: Input should be greater than or equal to 1")
        messages = body["messages"]
        if not isinstance(messages, list):
            return an_error(400, "invalid_request_error", "messages: Input should be a valid list")
        if not messages:
            return an_error(400, "invalid_request_error",
                            "messages: at least one message is required")
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict):
                return an_error(400, "invalid_request_error",
                                "messages.%d: Input should be a valid dictionary" % i)
            role = msg.get("role")
            if role == "system":
                return an_error(400, "invalid_request_error",
                                "messages: Unexpected role \"system\". The Messages API accepts "
                                "a top-level `system` parameter, not \"system\" as an input "
                                "message role.")
            if role not in ("user", "assistant"):
                return an_error(400, "invalid_request_error",
                                "messages.%d.role: Input should be 'user' or 'assistant'" % i)
            if "content" not in msg:
                return an_error(400, "invalid_request_error",
                                "messages.%d.content: Field required" % i)
        # every tool_use must be answered by a tool_result in the very next user turn
        for i, msg in enumerate(messages):
            if msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
                continue
            ids = [b.get("id") for b in msg["content"]
                   if isinstance(b, dict) and b.get("type") == "tool_use"]
            if not ids:
                continue
            answered = set()
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if nxt is not None and nxt.get("role") == "user" and isinstance(nxt.get("content"), list):
                answered = set(b.get("tool_use_id") for b in nxt["content"]
                               if isinstance(b, dict) and b.get("type") == "tool_result")
            missing = [str(x) for x in ids if x not in answered]
            if missing:
                return an_error(400, "invalid_request_error",
                                "messages.%d: `tool_use` ids were found without `tool_result` "
                                "blocks immediately after: %s. Each `tool_use` block must have a "
                                "corresponding `tool_result` block in the next message."
                                % (i + 1, ", ".join(missing)))
        tools = body.get("tools") or []
        if not isinstance(tools, list):
            return an_error(400, "invalid_request_error", "tools: Input should be a valid list")
        names = []
        for i, t in enumerate(tools):
            name = t.get("name") if isinstance(t, dict) else None
            if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
                return an_error(400, "invalid_request_error",
                                "tools.%d.name: String should match pattern "
                                "'^[a-zA-Z0-9_-]{1,64}$'" % i)
            names.append(name)
        if not self._model_known(model):
            return an_error(404, "not_found_error", "model: %s" % model)

        last_user = ""
        for msg in reversed(messages):
            if msg.get("role") == "user":
                t = _an_text(msg.get("content"))
                if t or not _an_tool_results(msg.get("content")):
                    last_user = t
                    break
        last = messages[-1]
        results = _an_tool_results(last.get("content")) if last.get("role") == "user" else []
        tool_result = " ".join(results) if results else None
        system = body.get("system")
        sys_text = _an_text(system) if system is not None else ""
        prompt_tokens = _tokens(sys_text + " " + " ".join(_an_text(m.get("content"))
                                                          for m in messages)) or 1
        budget = self.fake._config.get("context_tokens")
        if budget and prompt_tokens > budget:
            return an_error(400, "invalid_request_error", "prompt is too long: %d tokens > %d "
                            "maximum" % (prompt_tokens, budget))

        calls = []
        choice = body.get("tool_choice")
        ctype = choice.get("type") if isinstance(choice, dict) else None
        if names and ctype != "none":
            n = 0
            forced = choice.get("name") if ctype == "tool" else None
            if last.get("role") == "user" and tool_result is None:
                n = _wants_tools(last_user)
            if n == 0 and ctype in ("any", "tool"):
                n = 1
            if isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True:
                n = min(n, 1)
            for k in range(n):
                name = forced or (names[k] if k < len(names) else names[0])
                calls.append({"type": "tool_use", "id": _next_id("toolu_"), "name": name,
                              "input": _tool_args(k)})
        text = _reply_text(last_user, tool_result)
        output_tokens = (_tokens(text) or 1) + sum(_tokens(c["name"] + _dumps(c["input"]))
                                                   for c in calls)
        stop_reason = "tool_use" if calls else "end_turn"
        mid = _next_id("msg_")
        if body.get("stream") is not True:
            out = {"id": mid, "type": "message", "role": "assistant", "model": model,
                   "content": [{"type": "text", "text": text}] + calls,
                   "stop_reason": stop_reason, "stop_sequence": None,
                   "usage": {"input_tokens": prompt_tokens, "output_tokens": output_tokens,
                             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
            return self._an_ok(json_reply(200, out))
        ev = []
        ev.append(sse_event("message_start", {
            "type": "message_start",
            "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                        "content": [], "stop_reason": None, "stop_sequence": None,
                        "usage": {"input_tokens": prompt_tokens, "output_tokens": 1,
                                  "cache_creation_input_tokens": 0,
                                  "cache_read_input_tokens": 0}}}))
        ev.append(sse_event("content_block_start", {"type": "content_block_start", "index": 0,
                                                    "content_block": {"type": "text", "text": ""}}))
        ev.append(sse_event("ping", {"type": "ping"}))
        for piece in _split3(text):
            ev.append(sse_event("content_block_delta", {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": piece}}))
        ev.append(sse_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
        for k, c in enumerate(calls):
            idx = k + 1
            ev.append(sse_event("content_block_start", {
                "type": "content_block_start", "index": idx,
                "content_block": {"type": "tool_use", "id": c["id"], "name": c["name"],
                                  "input": {}}}))
            js = _dumps(c["input"])
            cut = max(1, len(js) // 2)
            for part in ("", js[:cut], js[cut:]):
                ev.append(sse_event("content_block_delta", {
                    "type": "content_block_delta", "index": idx,
                    "delta": {"type": "input_json_delta", "partial_json": part}}))
            ev.append(sse_event("content_block_stop", {"type": "content_block_stop",
                                                       "index": idx}))
        ev.append(sse_event("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens}}))
        ev.append(sse_event("message_stop", {"type": "message_stop"}))
        r = Reply(200, None, "text/event-stream; charset=utf-8", events=ev)
        r.set_header("Cache-Control", "no-cache")
        r.sse_kind = "anthropic"
        return self._an_ok(r)

    # -- Ollama -------------------------------------------------------------------------------
    def _ol_model(self, name):
        if not isinstance(name, str):
            return None
        base = name[:-len(":latest")] if name.endswith(":latest") else name
        if base in self.fake._models or base in OLLAMA_ONLY_MODELS:
            return base
        return None

    def _ol_body(self, req):
        if not req.raw:
            return None, ol_error(400, "missing request body")
        body, err = req.json()
        if err is not None:
            return None, ol_error(400, _go_json_error(req.raw))
        if not isinstance(body, dict):
            return None, ol_error(400, "json: cannot unmarshal %s into Go value of type "
                                  "api.ChatRequest" % ("array" if isinstance(body, list)
                                                       else "value"))
        return body, None

    def _ol_metrics(self, prompt_tokens, eval_tokens):
        m = {"total_duration": 123456789, "load_duration": 1234567,
             "prompt_eval_count": prompt_tokens, "prompt_eval_duration": 2345678,
             "eval_count": eval_tokens, "eval_duration": 3456789}
        if not prompt_tokens:
            del m["prompt_eval_count"]
        if not eval_tokens:
            del m["eval_count"]
        return m

    def ollama_chat(self, req):
        body, err = self._ol_body(req)
        if err:
            return err
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return ol_error(400, "model is required")
        if self._ol_model(model) is None:
            return ol_error(404, "model '%s' not found" % model)
        base = self._ol_model(model)
        messages = body.get("messages") or []
        if not isinstance(messages, list):
            return ol_error(400, "json: cannot unmarshal into Go struct field "
                            "ChatRequest.messages of type []api.Message")
        tools = body.get("tools") or []
        if tools and base in OLLAMA_NO_TOOLS:
            return ol_error(400, "registry.ollama.ai/library/%s:latest does not support tools"
                            % base)
        for msg in messages:
            if not isinstance(msg, dict):
                return ol_error(400, "json: cannot unmarshal into Go value of type api.Message")
            imgs = msg.get("images") or []
            for img in imgs if isinstance(imgs, list) else [imgs]:
                if not isinstance(img, str):
                    return ol_error(400, "illegal base64 data at input byte 0")
                try:
                    base64.b64decode(img, validate=True)
                except Exception:  # binascii.Error
                    pos = 0
                    for pos, ch in enumerate(img):
                        if not (ch.isalnum() or ch in "+/="):
                            break
                    return ol_error(400, "illegal base64 data at input byte %d" % pos)
        stream = body.get("stream")
        stream = True if stream is None else stream is True
        created = _rfc3339_now()
        if not messages:
            out = {"model": model, "created_at": created,
                   "message": {"role": "assistant", "content": ""},
                   "done_reason": "load", "done": True}
            if stream:
                return Reply(200, None, "application/x-ndjson", events=[ndjson(out)])
            return json_reply(200, out)
        last_user = ""
        for msg in reversed(messages):
            if msg.get("role") == "user":
                last_user = msg.get("content") if isinstance(msg.get("content"), str) else ""
                break
        tool_result = None
        if messages[-1].get("role") == "tool":
            c = messages[-1].get("content")
            tool_result = c if isinstance(c, str) else _dumps(c)
        prompt_tokens = _tokens(" ".join(m.get("content") for m in messages
                                         if isinstance(m.get("content"), str))) or 1
        names = []
        for t in tools if isinstance(tools, list) else []:
            fn = t.get("function") if isinstance(t, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                names.append(fn["name"])
        calls = []
        if names and messages[-1].get("role") == "user":
            for k in range(_wants_tools(last_user)):
                calls.append({"id": _next_id("call_"),
                              "function": {"index": k,
                                           "name": names[k] if k < len(names) else names[0],
                                           "arguments": _tool_args(k)}})
        text = "" if calls else _reply_text(last_user, tool_result)
        eval_tokens = (_tokens(text) or 0) + sum(
            _tokens(c["function"]["name"] + _dumps(c["function"]["arguments"])) for c in calls)
        eval_tokens = eval_tokens or 1
        final = {"model": model, "created_at": created,
                 "message": {"role": "assistant", "content": ""},
                 "done": True, "done_reason": "stop"}
        final.update(self._ol_metrics(prompt_tokens, eval_tokens))
        if not stream:
            final["message"] = {"role": "assistant", "content": text}
            if calls:
                final["message"]["tool_calls"] = calls
            return json_reply(200, final)
        lines = []
        for piece in _split3(text):
            lines.append(ndjson({"model": model, "created_at": _rfc3339_now(),
                                 "message": {"role": "assistant", "content": piece},
                                 "done": False}))
        if calls:
            lines.append(ndjson({"model": model, "created_at": _rfc3339_now(),
                                 "message": {"role": "assistant", "content": "",
                                             "tool_calls": calls},
                                 "done": False}))
        lines.append(ndjson(final))
        r = Reply(200, None, "application/x-ndjson", events=lines)
        r.sse_kind = "ollama"
        return r

    def _ol_embed_model(self, body):
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return None, ol_error(400, "model is required")
        if self._ol_model(model) is None:
            return None, ol_error(404, "model '%s' not found" % model)
        return model, None

    def ollama_embed(self, req):
        body, err = self._ol_body(req)
        if err:
            return err
        model, err = self._ol_embed_model(body)
        if err:
            return err
        inp = body.get("input")
        if inp is None or inp == "":
            texts = []
        elif isinstance(inp, str):
            texts = [inp]
        elif isinstance(inp, list) and all(isinstance(x, str) for x in inp):
            texts = list(inp)
        else:
            return ol_error(400, "invalid input type")
        dims = body.get("dimensions")
        if dims is None or dims == 0:
            dims = EMBED_DIM
        if not isinstance(dims, int) or isinstance(dims, bool) or dims < 0 or dims > MAX_DIMENSIONS:
            return ol_error(400, "invalid dimensions")
        out = {"model": model, "embeddings": [embed_vector(t, dims) for t in texts],
               "total_duration": 14143917, "load_duration": 1019500}
        pt = sum(_tokens(t) for t in texts)
        if pt:
            out["prompt_eval_count"] = pt
        return json_reply(200, out)

    def ollama_embeddings(self, req):
        body, err = self._ol_body(req)
        if err:
            return err
        model, err = self._ol_embed_model(body)
        if err:
            return err
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            prompt = ""
        return json_reply(200, {"embedding": embed_vector(prompt) if prompt else []})

    def ollama_show(self, req):
        body, err = self._ol_body(req)
        if err:
            return err
        name = body.get("model") or body.get("name")
        base = self._ol_model(name)
        if base is None:
            return ol_error(404, "model '%s' not found" % name)
        caps = ["embedding"] if base == "embed-test" else (
            ["completion"] if base in OLLAMA_NO_TOOLS else ["completion", "tools"])
        return json_reply(200, {"modelfile": "", "parameters": "", "template": "",
                                "details": self._ol_details(),
                                "model_info": {"general.architecture": "llama",
                                               "llama.context_length": 8192},
                                "capabilities": caps})

    def _ol_details(self):
        return {"parent_model": "", "format": "gguf", "family": "llama", "families": ["llama"],
                "parameter_size": "1B", "quantization_level": "Q4_K_M"}

    def ollama_tags(self, req):
        models = []
        for m in self.models() + list(OLLAMA_ONLY_MODELS):
            name = m + ":latest"
            models.append({"name": name, "model": name, "modified_at": "2025-01-01T00:00:00Z",
                           "size": 1234567,
                           "digest": hashlib.sha256(name.encode()).hexdigest(),
                           "details": self._ol_details()})
        return json_reply(200, {"models": models})

    def ollama_version(self, req):
        return json_reply(200, {"version": OLLAMA_VERSION})

    # -- scripted replies ---------------------------------------------------------------------
    def scripted(self, req, s):
        if "_in_stream" in s:
            r = self._in_stream_error(req, s["_in_stream"])
        elif "body" in s:
            r = json_reply(s.get("status", 200), s["body"])
        elif "raw" in s:
            r = Reply(s.get("status", 200), s["raw"].encode("utf-8"), "application/json")
        elif "chunks" in s:
            ct = "application/x-ndjson" if req.path.startswith("/api/") else "text/event-stream"
            r = Reply(s.get("status", 200), None, ct,
                      events=[c.encode("utf-8") for c in s["chunks"] if c])
        elif "huge_bytes" in s:
            r = Reply(s.get("status", 200), None, "application/json")
            r.huge = s["huge_bytes"]
            r.huge_fill = s.get("huge_fill", "a").encode("utf-8")
            r.huge_content_length = bool(s.get("huge_content_length"))
        elif "status" in s:
            r = Reply(s["status"], b"", "application/json")
        else:
            r = self.route(req)  # default answer, modified below
        for k, v in s.get("headers", {}).items():
            r.set_header(k, v)
        delay = float(s.get("delay_ms", 0)) / 1000.0
        if r.events is not None or r.huge is not None:
            r.delay = delay
        else:
            r.first_delay += delay
        r.first_delay += float(s.get("first_byte_delay_ms", 0)) / 1000.0
        r.stall = bool(s.get("stall"))
        r.close_after_bytes = s.get("close_after_bytes")
        r.abort_after_chunks = s.get("abort_after_chunks")
        return r

    def _in_stream_error(self, req, kind):
        r = self.route(req)
        if r.status != 200 or r.events is None:
            if r.status != 200:
                return r  # auth/validation failed first, like the real service
            if kind == "openai":
                return oa_error(500, "The server had an error while processing your request. "
                                "Sorry about that!", type_="server_error")
            if kind == "anthropic":
                return an_error(529, "overloaded_error", "Overloaded")
            return ol_error(500, "the model failed to generate a response")
        if kind == "openai":
            keep = r.events[:2]
            keep.append(sse_data({"error": {"message": "The server had an error while processing "
                                                       "your request. Sorry about that!",
                                            "type": "server_error", "param": None,
                                            "code": None}}))
        elif kind == "anthropic":
            keep = r.events[:4]
            keep.append(sse_event("error", {"type": "error",
                                            "error": {"type": "overloaded_error",
                                                      "message": "Overloaded"}}))
        else:
            keep = r.events[:1]
            keep.append(ndjson({"error": "the model failed to generate a response"}))
        r.events = keep
        return r


# ---------------------------------------------------------------------------------------------
# HTTP plumbing


class _BadRequest(Exception):
    pass


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"
    sys_version = ""
    timeout = STALL_SECONDS + 30  # idle keep-alive connections eventually go away

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
            sys.stderr.write("fake_llm: %s - %s\n" % (self.address_string(), fmt % args))

    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    # -- body ---------------------------------------------------------------------------------
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
                    while True:  # trailers
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

    # -- dispatch -----------------------------------------------------------------------------
    def _dispatch(self):
        fake = self.server.fake
        self._started = False
        try:
            try:
                raw = self._read_body()
            except _BadRequest as e:
                self.close_connection = True
                self._send(Reply(400, _jbytes({"error": "bad request: %s" % e})))
                return
            parts = urllib.parse.urlsplit(self.path)
            path = parts.path or "/"
            query = {}
            for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
                query[k] = v
            headers = {}
            for k, v in self.headers.items():
                lk = k.lower()
                headers[lk] = headers[lk] + ", " + v if lk in headers else v
            req = Request(self.command, path, query, headers, raw)
            if path.startswith("/_control/"):
                self._send(fake._control(req))
                return
            fake._record(req)
            script = fake._pop_script(path)
            if script is not None:
                reply = fake._provider.scripted(req, script)
            else:
                reply = fake._provider.route(req)
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout):
            self.close_connection = True
        except Exception:  # never let a bug kill the connection silently
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            if not self._started:
                try:
                    self._send(Reply(500, _jbytes({"error": "fake_llm internal error"})))
                except OSError:
                    pass

    # -- sending ------------------------------------------------------------------------------
    def _abort(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _write(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    def _chunk(self, data):
        self._write(b"%x\r\n" % len(data) + data + b"\r\n")

    def _send(self, r):
        stop = self.server.fake._stop
        if r.first_delay > 0 and stop.wait(r.first_delay):
            return self._abort()
        if r.stall:
            stop.wait(STALL_SECONDS)
            return self._abort()
        self._started = True
        chunked = r.events is not None or (r.huge is not None and not r.huge_content_length)
        if r.events is None and r.huge is None and r.delay > 0 and stop.wait(r.delay):
            return self._abort()
        self.send_response(r.status)
        for k, v in r.headers:
            if k.lower() in ("content-length", "transfer-encoding"):
                continue
            self.send_header(k, v)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif r.huge is not None:
            self.send_header("Content-Length", str(r.huge))
        else:
            self.send_header("Content-Length", str(len(r.body or b"")))
        self.end_headers()
        if self.command == "HEAD":
            return None
        cab = r.close_after_bytes
        if r.huge is not None:
            return self._send_huge(r, chunked)
        if not chunked:
            body = r.body or b""
            if cab is not None:
                if cab:
                    self._write(body[:cab])
                return self._abort()
            if body:
                self._write(body)
            return None
        sent = 0
        for i, ev in enumerate(r.events):
            if i > 0 and r.delay > 0 and stop.wait(r.delay):
                return self._abort()
            if cab is not None and sent + len(ev) >= cab:
                part = ev[:cab - sent]
                if part:
                    self._chunk(part)
                return self._abort()
            self._chunk(ev)
            sent += len(ev)
            if r.abort_after_chunks is not None and i + 1 >= r.abort_after_chunks:
                return self._abort()
        if cab is not None or (r.abort_after_chunks is not None and not r.events):
            return self._abort()
        self._write(b"0\r\n\r\n")
        return None

    def _send_huge(self, r, chunked):
        stop = self.server.fake._stop
        block_size = 65536
        pat = r.huge_fill or b"a"
        block = (pat * (block_size // len(pat) + 1))[:block_size]
        remaining = r.huge
        sent = 0
        n = 0
        cab = r.close_after_bytes
        while remaining > 0:
            piece = block[:min(block_size, remaining)]
            if cab is not None and sent + len(piece) >= cab:
                piece = piece[:cab - sent]
                if piece:
                    self._chunk(piece) if chunked else self._write(piece)
                return self._abort()
            if n > 0 and r.delay > 0 and stop.wait(r.delay):
                return self._abort()
            self._chunk(piece) if chunked else self._write(piece)
            remaining -= len(piece)
            sent += len(piece)
            n += 1
            if r.abort_after_chunks is not None and n >= r.abort_after_chunks:
                return self._abort()
        if cab is not None:
            return self._abort()
        if chunked:
            self._write(b"0\r\n\r\n")
        return None


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


# ---------------------------------------------------------------------------------------------
# Public API


class FakeLlm(object):
    """The fake provider. start() binds 127.0.0.1 (port 0 = ephemeral) and serves in a thread."""

    def __init__(self, host="127.0.0.1", port=0, models=None, verbose=False):
        self.host = host
        self.port = port
        self.verbose = verbose
        self._default_models = tuple(models) if models else DEFAULT_MODELS
        self._models = list(self._default_models)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._scripts = collections.OrderedDict()
        self._records = []
        self._config = {}
        self._conns = set()
        self._stop = threading.Event()
        self._server = None
        self._thread = None
        self._provider = Provider(self)

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
                                        name="fake_llm", daemon=True)
        self._thread.start()
        return port

    def serve_forever(self):
        self._server.serve_forever(poll_interval=0.1)

    def stop(self):
        if self._server is None:
            return
        self._stop.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(10)
            self._thread = None
        self._close()

    def _close(self):
        self._stop.set()
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

    # -- URLs ---------------------------------------------------------------------------------
    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.port

    @property
    def openai_base_url(self):
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self):
        return self.base_url

    @property
    def ollama_base_url(self):
        return self.base_url

    # -- scripting & records ------------------------------------------------------------------
    def script(self, path=None, **fields):
        """script("/v1/chat/completions", status=429, body={...}) or script({...}) or a list."""
        if isinstance(path, (dict, list)):
            specs = path if isinstance(path, list) else [path]
        else:
            spec = dict(fields)
            if path is not None:
                spec["path"] = path
            specs = [spec]
        compiled = [_compile_script(s) for s in specs]
        with self._lock:
            for s in compiled:
                self._scripts.setdefault(s["path"], collections.deque()).append(s)
        return len(compiled)

    def _pop_script(self, path):
        with self._lock:
            for key in (path, "*"):
                q = self._scripts.get(key)
                if not q:
                    continue
                s = q[0]
                if s["times"] > 0:
                    s["times"] -= 1
                    if s["times"] == 0:
                        q.popleft()
                return s
        return None

    def pending_scripts(self):
        with self._lock:
            return [dict(s) for q in self._scripts.values() for s in q]

    def _record(self, req):
        rec = req.record()
        with self._cond:
            self._records.append(rec)
            self._cond.notify_all()

    @property
    def requests(self):
        with self._lock:
            return list(self._records)

    def requests_for(self, path):
        return [r for r in self.requests if r["path"] == path]

    def wait_for_requests(self, n, path=None, timeout=5.0):
        """Block until at least n (matching) requests were recorded; returns them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                got = [r for r in self._records if path is None or r["path"] == path]
                if len(got) >= n:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    return got
                self._cond.wait(left)

    def configure(self, context_tokens=None, models=None):
        with self._lock:
            if context_tokens is not None:
                self._config["context_tokens"] = int(context_tokens) or None
            if models is not None:
                self._models = list(models)

    def reset(self):
        with self._lock:
            self._scripts.clear()
            self._records = []
            self._config = {}
            self._models = list(self._default_models)

    # -- control endpoints --------------------------------------------------------------------
    def _control(self, req):
        p, m = req.path, req.method
        if p == "/_control/requests" and m == "GET":
            recs = self.requests
            path = req.query.get("path")
            if path:
                recs = [r for r in recs if r["path"] == path]
            return json_reply(200, recs)
        if p == "/_control/scripts" and m == "GET":
            return json_reply(200, self.pending_scripts())
        if p == "/_control/reset" and m == "POST":
            self.reset()
            return json_reply(200, {"ok": True})
        if p == "/_control/script" and m == "POST":
            body, err = req.json()
            if err is not None:
                return json_reply(400, {"error": "script body is not JSON: %s" % err})
            try:
                n = self.script(body)
            except ScriptError as e:
                return json_reply(400, {"error": str(e)})
            return json_reply(200, {"ok": True, "queued": n})
        if p == "/_control/config" and m == "POST":
            body, err = req.json()
            if err is not None or not isinstance(body, dict):
                return json_reply(400, {"error": "config body must be a JSON object"})
            ct = body.get("context_tokens")
            models = body.get("models")
            if ct is not None and (not isinstance(ct, int) or ct < 0):
                return json_reply(400, {"error": "context_tokens must be a non-negative integer"})
            if models is not None and (not isinstance(models, list)
                                       or not all(isinstance(x, str) for x in models)):
                return json_reply(400, {"error": "models must be a list of strings"})
            self.configure(context_tokens=ct, models=models)
            return json_reply(200, {"ok": True})
        return json_reply(404, {"error": "unknown control endpoint %s %s" % (m, p)})


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake OpenAI/Anthropic/Ollama server for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeLlm(host=args.host, port=args.port, verbose=args.verbose)
    port = fake.bind()

    def on_signal(signum, frame):
        fake._stop.set()
        threading.Thread(target=fake._server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write("FAKE_LLM_PORT=%d\n" % port)
    sys.stdout.flush()
    try:
        fake.serve_forever()
    finally:
        fake._close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
