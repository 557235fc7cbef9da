#!/usr/bin/env python3
"""Fake OpenAI embeddings service for the knowledge-base tests (Python 3 standard library only).

Built from /work/shared/protocols/llm.md 1.6 (embeddings), 1.7 (errors) and 6, and the OpenAI API
reference (CreateEmbeddingRequest). Base URL http://127.0.0.1:PORT/v1

    POST /v1/embeddings  Authorization: Bearer <key> (missing -> 401 code null, another key ->
                         401 invalid_api_key; the key is never echoed).
        {"model", "input": string | string[] | int[] | int[][], "dimensions"?: 1..3072,
         "encoding_format"?: "float" (default) | "base64", "user"?}
        -> {"object":"list","model","data":[{"object":"embedding","index","embedding"}],
            "usage":{"prompt_tokens","total_tokens"}}, data ordered by index; base64 is the
        little-endian float32 array. 400 "'$.input' is invalid ..." for an empty string, an empty
        array, more than 2048 inputs or a mixed array; 400 when one input is over 8192 tokens or
        all of them over 300000 (a token is 4 UTF-8 bytes here, or one id of a token array);
        404 model_not_found for an unknown model.
    GET  /v1/models, GET /v1/models/{id}  the configured models (same auth).

Vectors are deterministic (the same text always gives the same vector, in any process):
    semantic (default): feature hashing of the text's words. Words are the lowercase runs of
        letters and digits; each CJK ideograph, kana or Hangul syllable is a word on its own;
        a few English stop words are dropped; a token array's ids are words "#<id>". Each word
        adds 1 and each pair of neighbouring words 0.5 to 4 buckets taken from sha256(feature)
        (bytes 4i..4i+3 little-endian mod dims, sign from bit i of byte 28); the vector is
        L2-normalised and rounded to float32. So
        texts sharing words have a clearly positive cosine and unrelated texts about 0. A text
        without words gets the whole-text vector below.
    random: sha256 of the whole text, stretched to dims and normalised: two different texts are
        unrelated (cosine ~0) whatever they share, so vector search "misses" and only keyword
        search finds things. Chosen by a model whose name ends in "-random" or by config
        {"mode": "random"}.

Default models: "embed-test" and "embed-test-random"; default dimensions 256; key "sk-embed-test".

Control API (no auth, never recorded; JSON; errors {"error"} with 400/404)
    GET  /_control/calls   -> {count, ok, failed, batch_sizes:[...], inputs_total, max_in_flight,
                           calls:[{path, model, batch_size, inputs, dimensions, encoding_format,
                           status, at}]}  (every embeddings call, failed ones included; inputs
                           are the strings, or the id lists of a token array input)
    POST /_control/fail    {status?: 500, times?: 1, marker?, retry_after?, quota?, message?,
                           type?, code?, close?}. Without marker: the next `times` embeddings calls
                           fail. With marker: every call with an input containing the marker
                           fails (status 400 unless given), `times` limits it when given.
                           429 is a rate limit (rate_limit_exceeded, retry-after: retry_after
                           seconds, 1 by default) unless quota is true (insufficient_quota, no
                           retry-after). close: drop the connection without an answer instead.
                           Answers {"ok": true, "pending": [...]}.
    POST /_control/config  {api_key?, models?, mode?: "semantic"|"random", latency_ms?,
                           default_dimensions?, max_inputs?, max_input_tokens?,
                           max_request_tokens?}
    POST /_control/vector  {input: string, model?, dimensions?} -> {"embedding": [...]} (what a
                           call would answer, for test expectations)
    POST /_control/reset   forget calls and failures, restore the start-up config.

Command line: python3 fake_embeddings.py [--port 0] [--host 127.0.0.1] [--api-key K] [--verbose]
prints one line "FAKE_EMBEDDINGS_PORT=<port>" once listening and serves until SIGTERM/SIGINT.
In process: fake = FakeEmbeddings(); port = fake.start(); ...; fake.stop().
"""

import argparse
import base64
import hashlib
import http.server
import json
import math
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

DEFAULT_KEY = "sk-embed-test"
DEFAULT_MODELS = ("embed-test", "embed-test-random")
DEFAULT_DIMENSIONS = 256
MAX_DIMENSIONS = 3072
MAX_INPUTS = 2048
MAX_INPUT_TOKENS = 8192
MAX_REQUEST_TOKENS = 300000
MAX_BODY = 64 * 1024 * 1024
CREATED = 1700000000
BIGRAM_WEIGHT = 0.5
FEATURE_BUCKETS = 4
# Words so common that sharing them says nothing about two texts being related.
STOP_WORDS = frozenset(
    "a an and are as at be but by do does for from has have how i if in is it its of on or "
    "that the their there this to was were what when where which who why will with you your"
    .split())

NO_KEY_MSG = ("You didn't provide an API key. You need to provide your API key in an "
              "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or "
              "as the password field (with blank username) if you're accessing the API from "
              "your browser and are prompted for a username and password. You can obtain an "
              "API key from https://platform.openai.com/account/api-keys.")
BAD_KEY_MSG = ("Incorrect API key provided. You can find your API key at "
               "https://platform.openai.com/account/api-keys.")
PARSE_MSG = ("We could not parse the JSON body of your request. (HINT: This likely means you "
             "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
             "but what was sent was not valid JSON.)")
BAD_INPUT_MSG = ("'$.input' is invalid. Please check the API reference: "
                 "https://platform.openai.com/docs/api-reference.")
DEFAULT_FAIL = {
    400: ("invalid_request_error", None, "The request was rejected by the fake (failure marker)."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again "
          "in 1s."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry "
          "about that!"),
    503: ("service_unavailable_error", "slow_down", "The engine is currently overloaded, please "
          "try again later."),
}
FAIL_FIELDS = frozenset(["status", "times", "marker", "retry_after", "quota", "message",
                         "type", "code", "close"])
QUOTA_MSG = ("You exceeded your current quota, please check your plan and billing details.")


# ---------------------------------------------------------------------------------------------
# Vectors


def _is_cjk(ch):
    c = ord(ch)
    return (0x3040 <= c <= 0x30FF or 0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF
            or 0xAC00 <= c <= 0xD7AF or 0xF900 <= c <= 0xFAFF or 0x20000 <= c <= 0x2FA1F)


def words(text):
    """The words feature hashing sees: lowercase alphanumeric runs, each CJK character alone."""
    out, cur = [], []
    for ch in text.lower():
        if _is_cjk(ch):
            if cur:
                out.append("".join(cur))
                cur = []
            out.append(ch)
        elif ch.isalnum():
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return [w for w in out if w not in STOP_WORDS]


def _f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _normalised(vals):
    norm = math.sqrt(sum(v * v for v in vals))
    if norm == 0.0:
        return None
    return [_f32(v / norm) for v in vals]


def random_vector(text, dims):
    """Whole-text hash: unrelated to every other text's vector."""
    vals, i = [], 0
    seed = text.encode("utf-8")
    while len(vals) < dims:
        h = hashlib.sha256(seed + b"|%d" % i).digest()
        for j in range(0, 32, 4):
            vals.append(int.from_bytes(h[j:j + 4], "little") / 4294967296.0 * 2.0 - 1.0)
        i += 1
    return _normalised(vals[:dims]) or [_f32(1.0)] + [0.0] * (dims - 1)


def semantic_vector(word_list, dims, fallback_text):
    vals = [0.0] * dims

    def add(feature, weight):
        # Several buckets per feature: one hash collision then moves an unrelated pair's cosine
        # by a quarter as much, so "unrelated" stays close to 0 even for short texts.
        h = hashlib.sha256(feature.encode("utf-8")).digest()
        for i in range(FEATURE_BUCKETS):
            bucket = int.from_bytes(h[4 * i:4 * i + 4], "little") % dims
            vals[bucket] += weight if (h[28] >> i) & 1 else -weight

    for w in word_list:
        add(w, 1.0)
    for a, b in zip(word_list, word_list[1:]):
        add(a + " " + b, BIGRAM_WEIGHT)
    return _normalised(vals) or random_vector(fallback_text, dims)


def embed(item, dims, mode):
    """The vector for one input (a string, or a list of token ids)."""
    text = item if isinstance(item, str) else json.dumps(item)
    if mode == "random":
        return random_vector(text, dims)
    ws = words(item) if isinstance(item, str) else ["#%d" % t for t in item]
    return semantic_vector(ws, dims, text)


def to_base64(vec):
    return base64.b64encode(struct.pack("<%df" % len(vec), *vec)).decode("ascii")


def tokens(item):
    """Token estimate: 4 UTF-8 bytes per token (at least 1), or the length of a token array."""
    if isinstance(item, str):
        return max(1, (len(item.encode("utf-8")) + 3) // 4)
    return len(item)


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------
# Replies


class Reply(object):
    def __init__(self, status, obj=None, headers=None, close=False):
        self.status = status
        self.body = b"" if obj is None else json.dumps(
            obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.headers = list(headers or [])
        self.close = close  # drop the connection without answering


def oa_error(status, message, type_="invalid_request_error", param=None, code=None, headers=None):
    return Reply(status, {"error": {"message": message, "type": type_, "param": param,
                                    "code": code}}, headers)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def parse_input(inp):
    """-> list of inputs (str or list of ids), or None when the input is not valid."""
    if isinstance(inp, str):
        items = [inp]
    elif isinstance(inp, list) and inp and all(isinstance(x, str) for x in inp):
        items = list(inp)
    elif isinstance(inp, list) and inp and all(_is_int(x) and x >= 0 for x in inp):
        items = [list(inp)]
    elif isinstance(inp, list) and inp and all(
            isinstance(x, list) and x and all(_is_int(y) and y >= 0 for y in x) for x in inp):
        items = [list(x) for x in inp]
    else:
        return None
    if any(x == "" for x in items):
        return None
    return items


def _contains(item, marker):
    return marker in item if isinstance(item, str) else marker in json.dumps(item)


class _Failure(object):
    def __init__(self, spec):
        if not isinstance(spec, dict):
            raise ValueError("a failure is a JSON object")
        unknown = set(spec) - FAIL_FIELDS
        if unknown:
            raise ValueError("unknown failure field(s): %s" % ", ".join(sorted(unknown)))
        self.marker = spec.get("marker")
        if self.marker is not None and (not isinstance(self.marker, str) or not self.marker):
            raise ValueError("marker must be a non-empty string")
        self.status = spec.get("status", 400 if self.marker is not None else 500)
        if not _is_int(self.status) or not 400 <= self.status <= 599:
            raise ValueError("status must be an HTTP error status (400..599)")
        times = spec.get("times", None if self.marker is not None else 1)
        if times is not None and (not _is_int(times) or times < 1):
            raise ValueError("times must be a positive integer")
        self.times = times
        self.retry_after = spec.get("retry_after")
        if self.retry_after is not None and (
                not isinstance(self.retry_after, (int, float)) or self.retry_after < 0):
            raise ValueError("retry_after must be a non-negative number of seconds")
        self.quota = bool(spec.get("quota", False))
        self.close = bool(spec.get("close", False))
        self.message = spec.get("message")
        self.type = spec.get("type")
        self.code = spec.get("code")

    def describe(self):
        return {"marker": self.marker, "status": self.status, "times": self.times,
                "retry_after": self.retry_after, "quota": self.quota, "close": self.close}

    def reply(self):
        if self.close:
            return Reply(0, close=True)
        type_, code, message = DEFAULT_FAIL.get(
            self.status, ("invalid_request_error" if self.status < 500 else "server_error",
                          None, "Injected failure (HTTP %d)." % self.status))
        headers = []
        if self.status == 429 and self.quota:
            type_, code, message = "insufficient_quota", "insufficient_quota", QUOTA_MSG
        elif self.status == 429:
            after = 1 if self.retry_after is None else self.retry_after
            text = "%d" % after if float(after).is_integer() else "%g" % after
            headers = [("retry-after", text), ("x-ratelimit-reset-requests", text + "s")]
        elif self.retry_after is not None:
            headers = [("retry-after", "%g" % self.retry_after)]
        return oa_error(self.status, self.message or message, self.type or type_,
                        code=self.code if self.code is not None else code, headers=headers)


# ---------------------------------------------------------------------------------------------
# HTTP


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeEmbeddings/1.0"
    sys_version = ""
    timeout = 120

    def version_string(self):
        return self.server_version

    def log_message(self, fmt, *args):
        if self.server.fake.verbose:
            sys.stderr.write("fake_embeddings: %s\n" % (fmt % args))

    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out, total = [], 0
            while True:
                size = int(self.rfile.readline(1024).split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(out)
                total += size
                if total > MAX_BODY:
                    raise ValueError("body too large")
                out.append(self.rfile.read(size))
                self.rfile.readline(3)
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0 or n > MAX_BODY:
            raise ValueError("body too large")
        return self.rfile.read(n)

    def _dispatch(self):
        fake = self.server.fake
        try:
            raw = self._read_body()
        except ValueError as e:
            self.close_connection = True
            return self._send(Reply(413 if "large" in str(e) else 400, {"error": str(e)}))
        parts = urllib.parse.urlsplit(self.path)
        if parts.path.startswith("/_control/"):
            return self._send(fake._control(self.command, parts.path, raw))
        self._send(fake._serve(self.command, parts.path, self.headers, raw))

    def _send(self, r):
        if r.close:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        try:
            self.send_response(r.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(r.body)))
            for k, v in r.headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(r.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


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
# The fake


class FakeEmbeddings(object):
    """start() binds 127.0.0.1 (port 0 = ephemeral) and serves in a thread; stop() ends it."""

    def __init__(self, host="127.0.0.1", port=0, api_key=DEFAULT_KEY, verbose=False):
        self.host, self.port, self.verbose = host, port, verbose
        self._initial = {"api_key": api_key, "models": list(DEFAULT_MODELS), "mode": "semantic",
                         "latency_ms": 0, "default_dimensions": DEFAULT_DIMENSIONS,
                         "max_inputs": MAX_INPUTS, "max_input_tokens": MAX_INPUT_TOKENS,
                         "max_request_tokens": MAX_REQUEST_TOKENS}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = None
        self._thread = None
        self.reset()

    # -- lifecycle ----------------------------------------------------------------------------
    def bind(self):
        self._stop.clear()
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        return self.port

    def start(self):
        port = self.bind()
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,),
                                        name="fake_embeddings", daemon=True)
        self._thread.start()
        return port

    def stop(self):
        self._stop.set()
        if self._server is None:
            return
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(10)
            self._thread = None
        self._server.server_close()
        self._server = None

    @property
    def base_url(self):
        """What a client configures as its OpenAI base URL."""
        return "http://127.0.0.1:%d/v1" % self.port

    # -- state --------------------------------------------------------------------------------
    def reset(self):
        with self._lock:
            self._config = json.loads(json.dumps(self._initial))
            self._calls = []
            self._failures = []
            self._in_flight = 0
            self._max_in_flight = 0

    def configure(self, **fields):
        """Same fields as POST /_control/config; raises ValueError on a bad value."""
        checks = {
            "api_key": lambda v: isinstance(v, str) and v,
            "models": lambda v: isinstance(v, list) and all(isinstance(m, str) and m for m in v),
            "mode": lambda v: v in ("semantic", "random"),
            "latency_ms": lambda v: isinstance(v, (int, float)) and 0 <= v <= 600000,
            "default_dimensions": lambda v: _is_int(v) and 1 <= v <= MAX_DIMENSIONS,
            "max_inputs": lambda v: _is_int(v) and v >= 1,
            "max_input_tokens": lambda v: _is_int(v) and v >= 1,
            "max_request_tokens": lambda v: _is_int(v) and v >= 1,
        }
        for k, v in fields.items():
            if k not in checks:
                raise ValueError("unknown config field %r" % k)
            if not checks[k](v):
                raise ValueError("bad value for %s" % k)
        with self._lock:
            self._config.update(fields)

    def fail(self, **spec):
        """Same fields as POST /_control/fail; raises ValueError on a bad spec."""
        f = _Failure(spec)
        with self._lock:
            self._failures.append(f)
            return [x.describe() for x in self._failures]

    def calls(self):
        with self._lock:
            calls = [dict(c) for c in self._calls]
            max_in_flight = self._max_in_flight
        ok = sum(1 for c in calls if c["status"] == 200)
        return {"count": len(calls), "ok": ok, "failed": len(calls) - ok,
                "batch_sizes": [c["batch_size"] for c in calls],
                "inputs_total": sum(c["batch_size"] for c in calls),
                "max_in_flight": max_in_flight, "calls": calls}

    def vector(self, text, model=None, dimensions=None):
        with self._lock:
            cfg = dict(self._config)
        return embed(text, dimensions or cfg["default_dimensions"],
                     self._mode(model or cfg["models"][0], cfg))

    @staticmethod
    def _mode(model, cfg):
        return "random" if cfg["mode"] == "random" or model.endswith("-random") else "semantic"

    def _take_failure(self, items):
        with self._lock:
            for f in self._failures:
                if f.marker is not None and not any(_contains(x, f.marker) for x in items):
                    continue
                if f.times is not None:
                    f.times -= 1
                    if f.times == 0:
                        self._failures.remove(f)
                return f
        return None

    # -- the service --------------------------------------------------------------------------
    def _auth(self, headers, cfg):
        parts = (headers.get("Authorization") or "").split(None, 1)
        if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
            return oa_error(401, NO_KEY_MSG)
        if parts[1].strip() != cfg["api_key"]:
            return oa_error(401, BAD_KEY_MSG, code="invalid_api_key")
        return None

    def _serve(self, method, path, headers, raw):
        with self._lock:
            cfg = dict(self._config)
        if path == "/v1/embeddings" and method == "POST":
            return self._embeddings(headers, raw, cfg)
        if path == "/v1/models" and method == "GET":
            return self._auth(headers, cfg) or Reply(200, {"object": "list", "data": [
                self._model_obj(m) for m in cfg["models"]]})
        if path.startswith("/v1/models/") and method == "GET":
            err = self._auth(headers, cfg)
            name = urllib.parse.unquote(path[len("/v1/models/"):])
            if err or name in cfg["models"]:
                return err or Reply(200, self._model_obj(name))
            return oa_error(404, "The model '%s' does not exist" % name, param="model",
                            code="model_not_found")
        return oa_error(404, "Invalid URL (%s %s)" % (method, path))

    @staticmethod
    def _model_obj(name):
        return {"id": name, "object": "model", "created": CREATED, "owned_by": "fake"}

    def _embeddings(self, headers, raw, cfg):
        call = {"path": "/v1/embeddings", "model": None, "batch_size": 0, "inputs": [],
                "dimensions": None, "encoding_format": None, "status": None, "at": time.time()}
        with self._lock:
            self._calls.append(call)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            reply = self._embeddings_reply(headers, raw, cfg, call)
            if cfg["latency_ms"] > 0:
                self._stop.wait(cfg["latency_ms"] / 1000.0)
        finally:
            with self._lock:
                self._in_flight -= 1
        with self._lock:
            call["status"] = reply.status if not reply.close else 0
        return reply

    def _embeddings_reply(self, headers, raw, cfg, call):
        err = self._auth(headers, cfg)
        if err:
            return err
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return oa_error(400, PARSE_MSG)
        if not isinstance(body, dict):
            return oa_error(400, "Invalid type for request body: expected an object.",
                            code="invalid_type")
        model = body.get("model")
        call["model"] = model
        call["dimensions"] = body.get("dimensions")
        call["encoding_format"] = body.get("encoding_format")
        if not isinstance(model, str) or not model:
            return oa_error(400, "you must provide a model parameter")
        if "input" not in body:
            return oa_error(400, "Missing required parameter: 'input'.", param="input",
                            code="missing_required_parameter")
        items = parse_input(body["input"])
        if items is None:
            return oa_error(400, BAD_INPUT_MSG, param="input")
        call["inputs"] = items
        call["batch_size"] = len(items)
        if len(items) > cfg["max_inputs"]:
            return oa_error(400, BAD_INPUT_MSG, param="input")
        dims = body.get("dimensions")
        if dims is None:
            dims = cfg["default_dimensions"]
        elif not _is_int(dims) or dims < 1:
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
                            % json.dumps(fmt), param="encoding_format")
        if model not in cfg["models"]:
            return oa_error(404, "The model `%s` does not exist or you do not have access to it."
                            % model, code="model_not_found")
        counts = [tokens(x) for x in items]
        for n in counts:
            if n > cfg["max_input_tokens"]:
                return oa_error(400, "This model's maximum context length is %d tokens, however "
                                "you requested %d tokens (%d in your prompt; 0 for the "
                                "completion). Please reduce your prompt; or completion length."
                                % (cfg["max_input_tokens"], n, n))
        if sum(counts) > cfg["max_request_tokens"]:
            return oa_error(400, "Requested %d tokens, max %d tokens per request"
                            % (sum(counts), cfg["max_request_tokens"]),
                            code="max_tokens_per_request")
        failure = self._take_failure(items)
        if failure is not None:
            return failure.reply()
        mode = self._mode(model, cfg)
        data = []
        for i, item in enumerate(items):
            vec = embed(item, dims, mode)
            data.append({"object": "embedding", "index": i,
                         "embedding": to_base64(vec) if fmt == "base64" else vec})
        total = sum(counts)
        return Reply(200, {"object": "list", "model": model, "data": data,
                           "usage": {"prompt_tokens": total, "total_tokens": total}},
                     [("x-request-id", "req_%d" % int(time.time() * 1e6))])

    # -- control ------------------------------------------------------------------------------
    def _control(self, method, path, raw):
        body = None
        if method == "POST":
            try:
                body = json.loads(raw.decode("utf-8")) if raw.strip() else {}
            except (UnicodeDecodeError, ValueError):
                return Reply(400, {"error": "control body is not JSON"})
            if not isinstance(body, dict):
                return Reply(400, {"error": "control body must be a JSON object"})
        try:
            if path == "/_control/calls" and method == "GET":
                return Reply(200, self.calls())
            if path == "/_control/reset" and method == "POST":
                self.reset()
                return Reply(200, {"ok": True})
            if path == "/_control/fail" and method == "POST":
                return Reply(200, {"ok": True, "pending": self.fail(**body)})
            if path == "/_control/config" and method == "POST":
                self.configure(**body)
                return Reply(200, {"ok": True})
            if path == "/_control/vector" and method == "POST":
                text = body.get("input")
                if not isinstance(text, str) or not text:
                    raise ValueError("input must be a non-empty string")
                dims = body.get("dimensions")
                if dims is not None and not (_is_int(dims) and 1 <= dims <= MAX_DIMENSIONS):
                    raise ValueError("bad dimensions")
                return Reply(200, {"embedding": self.vector(text, body.get("model"), dims)})
        except (TypeError, ValueError) as e:
            return Reply(400, {"error": str(e)})
        return Reply(404, {"error": "unknown control endpoint %s %s" % (method, path)})


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake OpenAI embeddings server for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--api-key", default=DEFAULT_KEY)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeEmbeddings(args.host, args.port, args.api_key, args.verbose)
    port = fake.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    sys.stdout.write("FAKE_EMBEDDINGS_PORT=%d\n" % port)
    sys.stdout.flush()
    while not done.wait(0.5):
        pass
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
