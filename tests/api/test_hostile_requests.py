"""A hostile-request barrage (issue 13, "Tests and figures"): several thousand requests of the
kinds an attacker sends at a public server, generated from a fixed seed and sent over raw sockets,
one connection each (the write side is shut after sending, so every exchange ends).

Categories: malformed request lines, malformed headers, message framing (Content-Length,
Transfer-Encoding, chunks, truncated and overlong bodies, pipelined garbage), path tricks,
hostile JSON posted to real routes, authentication attacks against every authenticated route of
tests/route_auth_table.txt, webhook attacks, and slow or partial senders.

Every answer must be a well-formed HTTP/1.x response with a status below 500, a Content-Length
that matches its body and an X-Request-Id; every error is the documented JSON envelope in valid
UTF-8; a request without valid credentials never gets 200 from a route that needs them; no error
body and no log line carries a secret. Unparseable requests may instead be closed without an
answer. Afterwards the server is alive, answers, reads back what the barrage stored, and stops
cleanly. The figures are printed ("hostile requests: ...") for docs/security.md.
"""

import base64
import collections
import hashlib
import hmac
import json
import os
import random
import re
import socket
import threading
import time
import unittest
import urllib.parse
import uuid

from harness import ADMIN_PASSWORD, ADMIN_USER, ServerTestCase
from fake_clients import sign, wait_until
from test_route_auth import ROUTES

SEED = 13
HEADER_TIMEOUT = 2
BODY_LIMIT = 256 * 1024
EXCHANGE_TIMEOUT = 5.0  # the server must answer or close within this after the client's EOF
SLOW_TIMEOUT = 2.0  # the slow senders' own socket timeout
WEBHOOK_SECRET = "whsec_hostile_0123456789"
REQUIRED, OPTIONAL, UNREAD = "required", "optional", "unread"  # how a route uses its body
BOTH, USER = "token or key", "user token"  # who may call a route

STATUS_LINE = re.compile(rb"^HTTP/1\.[01] ([1-5][0-9][0-9]) [\x20-\x7e]*$")
HEADER_LINE = re.compile(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([\x21-\x7e](?:[\x20-\x7e\t]*"
                         rb"[\x21-\x7e])?)?[ \t]*$")
REQUEST_LINE = re.compile(rb"(?:^|\n)([A-Za-z]+) (/[^ \r\n]*) HTTP/1\.[01]\r?\n")
PASSWD_LINE = re.compile(rb"root:[^:\n]*:0:0:")

Response = collections.namedtuple("Response", "status headers body")


def is_console_answer(resp):
    """True for an answer of the web console (which every console answer marks with its CSP)."""
    return "content-security-policy" in resp.headers


class Case:
    """One hostile exchange: `payload` is sent as is on a fresh connection.

    authed:    the payload carries valid credentials for the route it targets
    expect:    statuses the first response may have (None: any below 500)
    may_close: the server may close without answering (an unparseable request)
    count:     exact number of responses required (None: at least one unless may_close)
    head:      the request is HEAD, so responses have no body
    """

    def __init__(self, label, payload, authed=False, expect=None, may_close=False, count=None,
                 head=False):
        self.label, self.payload, self.authed = label, payload, authed
        self.expect = None if expect is None else frozenset(
            expect if isinstance(expect, (set, frozenset, list, tuple)) else [expect])
        self.may_close, self.count, self.head = may_close, count, head


def http_request(method, target, headers=(), body=None):
    """Bytes of one HTTP/1.1 request that asks for the connection to be closed after it;
    `headers` is a list of (name, value) pairs (bytes or str)."""
    def b(x):
        return x if isinstance(x, bytes) else x.encode("utf-8", "surrogatepass")
    out = [b(method) + b" " + b(target) + b" HTTP/1.1\r\n", b"Host: t\r\n"]
    for name, value in headers:
        out.append(b(name) + b": " + b(value) + b"\r\n")
    if body is not None:
        out.append(b"Content-Length: %d\r\n" % len(body))
    out.append(b"Connection: close\r\n")
    out.append(b"\r\n")
    if body is not None:
        out.append(body)
    return b"".join(out)


def parse_responses(data, head=False):
    """Splits everything a server sent on one connection into responses. Returns (responses,
    problem); problem is None when `data` is a sequence of complete, well-formed responses."""
    out, rest = [], data
    while rest:
        end = rest.find(b"\r\n\r\n")
        if end < 0:
            return out, "incomplete or garbage response head %r" % rest[:120]
        lines, rest = rest[:end].split(b"\r\n"), rest[end + 4:]
        m = STATUS_LINE.match(lines[0])
        if not m:
            return out, "malformed status line %r" % lines[0][:120]
        status, headers = int(m.group(1)), {}
        for line in lines[1:]:
            hm = HEADER_LINE.match(line)
            if not hm:
                return out, "malformed header line %r" % line[:120]
            name = hm.group(1).decode().lower()
            if name in headers and name in ("content-length", "content-type", "x-request-id"):
                return out, "duplicate %s header" % name
            headers[name] = (hm.group(2) or b"").decode("latin-1")
        if 100 <= status < 200:
            continue  # interim response (100 Continue)
        if head or status in (204, 304):
            body = b""
        elif "content-length" in headers:
            if not headers["content-length"].isdigit():
                return out, "bad Content-Length %r" % headers["content-length"]
            n = int(headers["content-length"])
            if len(rest) < n:
                return out, "body shorter than its Content-Length (%d < %d)" % (len(rest), n)
            body, rest = rest[:n], rest[n:]
        else:
            return out, "status %d without Content-Length" % status
        out.append(Response(status, headers, body))
    return out, None


def exchange(srv, payload, timeout=EXCHANGE_TIMEOUT):
    """Sends `payload` on a new connection, shuts the write side and reads until the server
    closes. Returns (bytes received, None) or (bytes received, why the read ended early)."""
    sock = srv.raw_socket(timeout)
    received = []
    try:
        try:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server refused early (reset, broken pipe); read what it said
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            except socket.timeout:
                return b"".join(received), "neither answered nor closed within %.0f s" % timeout
            if not chunk:
                break
            received.append(chunk)
    finally:
        sock.close()
    return b"".join(received), None


def seeded_uuid(rng):
    """A version-4 UUID from `rng`, so that the barrage is the same on every run."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_json(obj):
    return b64url(json.dumps(obj, separators=(",", ":")).encode())


def hs256_token(payload, key, header=None):
    head = b64url_json(header or {"alg": "HS256", "typ": "JWT"})
    body = b64url_json(payload)
    mac = hmac.new(key, (head + "." + body).encode(), hashlib.sha256).digest()
    return head + "." + body + "." + b64url(mac)


def route_regex(template):
    pattern = re.sub(r"\\\{[a-z_]+\\\.\\\.\\\.\\\}", ".+", re.escape(template))
    pattern = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", pattern)
    return re.compile("^" + pattern + "$")


PUBLIC_ROUTES = [(m, route_regex(p)) for m, p, cls in ROUTES if cls == "none"]
PROTECTED_ROUTES = [(m, p, cls) for m, p, cls in ROUTES if cls != "none"]


def public_request_lines(payload):
    """How many request lines in `payload` name a route that needs no credentials."""
    n = 0
    for method, target in REQUEST_LINE.findall(payload):
        path = urllib.parse.unquote_to_bytes(target.split(b"?", 1)[0]).decode("utf-8", "replace")
        # HEAD is answered by the GET route (RFC 9110 §9.3.2), so it is as public as GET.
        verb = method.upper().decode()
        verb = "GET" if verb == "HEAD" else verb
        if any(verb == m and rx.match(path) for m, rx in PUBLIC_ROUTES):
            n += 1
    return n


class HostileRequestsTest(ServerTestCase):
    server_env = {"API__HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
                  "API__BODY_LIMIT_BYTES": str(BODY_LIMIT)}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        srv, tok = cls.srv, cls.token

        create = cls.create

        cls.provider_key = "sk-hostile-provider-%016x" % random.Random(SEED).getrandbits(64)
        provider = create("/api/v1/provider/providers",
                          {"name": "victim", "requester": "openai-chat-completions",
                           "base_url": "https://api.openai.com/v1",
                           "api_keys": [cls.provider_key]})["uuid"]
        pipeline = create("/api/v1/pipelines", {"name": "victim"})["uuid"]
        spare_key = create("/api/v1/apikeys", {"name": "spare"})["key"]
        callback = "http://127.0.0.1:1/callback"
        cls.ids = {
            "provider_uuid": provider,
            "llm": create("/api/v1/provider/models/llm",
                          {"name": "m", "provider_uuid": provider})["uuid"],
            "embedding": create("/api/v1/provider/models/embedding",
                                {"name": "e", "provider_uuid": provider})["uuid"],
            "pipeline_uuid": pipeline,
            "bot_uuid": create("/api/v1/platform/bots",
                               {"name": "victim", "adapter": "webhook", "enable": False,
                                "config": {"secret": WEBHOOK_SECRET, "callback_url": callback},
                                "use_pipeline_uuid": pipeline})["uuid"],
            "webhook_bot": create("/api/v1/platform/bots",
                                  {"name": "hook", "adapter": "webhook", "enable": True,
                                   "config": {"secret": WEBHOOK_SECRET,
                                              "callback_url": callback}})["uuid"],
            "key_id": str(spare_key["id"]),
            "task_id": "1",
            "path": "callback/deeper",
            "session_type": "person",
            "author": "nobody",
            "name": "nothing",
            "file_id": "00000000-0000-4000-8000-000000000000",
            "key": "nothing_0123456789abcdef.png",
            "filepath": "logo.svg",
            "file_key": "plugin_config_0123456789abcdef.txt",
            "server_name": create("/api/v1/mcp/servers", {
                "name": "victim-mcp", "mode": "http", "enable": False,
                "extra_args": {"url": "http://127.0.0.1:9/mcp"}}) and "victim-mcp",
            "message_id": "00000000-0000-4000-8000-000000000000",
            "session_id": "person_nobody",
        }
        cls.ids["webhook_id"] = str(create("/api/v1/webhooks", {
            "name": "hook", "url": "http://127.0.0.1:9/hook", "enabled": False})["webhook"]["id"])
        cls.ids["uuid"] = create("/api/v1/knowledge/bases", {
            "name": "victim", "knowledge_engine_plugin_id": "switchboard/builtin",
            "creation_settings": {"embedding_model_uuid": cls.ids["embedding"]}})["uuid"]
        with open(os.path.join(srv.data_dir, "jwt_secret"), "rb") as f:
            cls.jwt_secret = f.read().strip()
        cls.secrets = {
            "JWT secret": cls.jwt_secret.decode(),
            "recovery key": srv.first_recovery_key,
            "API key": cls.api_key,
            "spare API key": spare_key["key"],
            "provider key": cls.provider_key,
            "webhook secret": WEBHOOK_SECRET,
            "admin password": ADMIN_PASSWORD,
            "user token": cls.token,
        }
        assert all(cls.secrets.values()), cls.secrets
        cls.figures = collections.OrderedDict()

        def running():
            status, resp, _ = srv.req("GET", "/api/v1/platform/bots/" + cls.ids["webhook_bot"],
                                      token=tok)
            return status == 200 and resp["data"]["bot"]["runtime"]["status"] == "running"
        assert wait_until(running, timeout=10), "the webhook bot did not start"

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "figures", None):
            total = sum(cls.figures.values())
            print("\nhostile requests: %d in all (seed %d): %s" % (
                total, SEED, ", ".join("%s %d" % kv for kv in cls.figures.items())), flush=True)
        super().tearDownClass()

    # ---- checking one exchange ------------------------------------------------------------------

    def response_problems(self, case, resp, first=True):
        """Problems with one response; `case.expect` applies to the first response only."""
        problems = []
        if resp.status >= 500:
            problems.append("status %d" % resp.status)
        if first and case.expect is not None and resp.status not in case.expect:
            problems.append("status %d, expected %s" % (resp.status, sorted(case.expect)))
        if not resp.headers.get("x-request-id"):
            problems.append("no X-Request-Id")
        ctype = resp.headers.get("content-type", "")
        # The web console's answers (public files, the page for client routes, plain-text 404s
        # and 503s) are not the API's; test_console.py checks them.
        if resp.status >= 400 and not ctype.startswith("application/json") and not (
                is_console_answer(resp)):
            problems.append("error %d is not JSON (%r)" % (resp.status, ctype))
        if ctype.startswith("application/json") and not case.head:
            problems.extend(self.envelope_problems(resp))
        if resp.status >= 400:
            for name, value in self.secrets.items():
                if value.encode() in resp.body:
                    problems.append("the %s is in an error body" % name)
        if PASSWD_LINE.search(resp.body):
            problems.append("/etc/passwd content in the body")
        return problems

    @staticmethod
    def envelope_problems(resp):
        try:
            text = resp.body.decode("utf-8")  # strict: invalid UTF-8 is not JSON (RFC 8259 §8.1)
        except UnicodeDecodeError as e:
            return ["JSON body is not valid UTF-8 (%s): %r" % (e.reason, resp.body[:120])]

        def reject(constant):
            raise ValueError("non-JSON constant " + constant)
        try:
            doc = json.loads(text, parse_constant=reject)
        except ValueError as e:
            return ["body is not JSON (%s): %r" % (e, text[:120])]
        if not isinstance(doc, dict):
            return ["JSON body is not an object: %r" % text[:120]]
        if resp.status == 200:
            if doc.get("code") != 0 or doc.get("msg") != "ok":
                return ["200 without the success envelope: %r" % text[:120]]
        elif resp.status >= 400:
            if (doc.get("code") != -1 or not isinstance(doc.get("msg"), str) or not doc["msg"]
                    or "data" in doc):
                return ["error without the documented envelope: %r" % text[:120]]
        return []

    def check(self, case, data, early):
        """Problems with what the server sent for `case` (an empty list when all is well)."""
        if early:
            return [early]
        responses, problem = parse_responses(data, head=case.head)
        problems = [problem] if problem else []
        if not responses and not case.may_close and not problem:
            problems.append("closed without an answer")
        if case.count is not None and len(responses) != case.count:
            problems.append("%d responses, expected %d: %s" % (
                len(responses), case.count, [r.status for r in responses]))
        for i, resp in enumerate(responses):
            problems.extend(self.response_problems(case, resp, first=i == 0))
        for r in responses:  # keys created by the barrage are secrets from now on
            if 200 <= r.status < 300:
                for key in re.findall(rb'"key":"(lbk_[A-Za-z0-9_-]{43})"', r.body):
                    if key.decode() not in self.secrets.values():
                        self.secrets["API key %d" % len(self.secrets)] = key.decode()
        if responses and is_console_answer(responses[0]):
            target = case.payload.split(b"\r\n", 1)[0].split(b" ")
            path = target[1] if len(target) > 1 else b""
            if path.startswith(b"/api") or path.startswith(b"/bots/"):
                problems.append("the web console answered an API or webhook path")
        if not case.authed:
            ok = sum(1 for r in responses if 200 <= r.status < 300 and not is_console_answer(r))
            if ok > public_request_lines(case.payload):
                problems.append("%d success answers without credentials: %s" % (
                    ok, [r.status for r in responses]))
        return problems

    def run_category(self, name, cases):
        """Sends every case, then fails once for the category, naming the first failures."""
        failures, failed = [], 0
        for case in cases:
            data, early = exchange(self.srv, case.payload)
            problems = self.check(case, data, early)
            failed += bool(problems)
            failures.extend("%s: %s" % (case.label, p) for p in problems)
        self.figures[name] = self.figures.get(name, 0) + len(cases)
        print("  %-28s %5d requests, %d failed" % (name, len(cases), failed), flush=True)
        self.assertEqual(self.srv.proc.poll(), None, "the server died during %s" % name)
        with self.subTest(category=name):
            if failures:
                self.fail("%d of %d requests failed in %s, first:\n  %s" % (
                    failed, len(cases), name, "\n  ".join(failures[:15])))

    # ---- credentials ----------------------------------------------------------------------------

    def bearer(self, value):
        return [("Authorization", "Bearer " + value)]

    def token_payload(self):
        part = self.token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))

    # ---- the categories -------------------------------------------------------------------------

    def request_line_cases(self, rng):
        methods = [b"GET", b"get", b"Get", b"BREW", b"G ET", b"GET\t", b"", b"*", b"GET" * 200,
                   b"PO\x00ST", b"GE\xffT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT",
                   b"PRI", b"M-SEARCH", b"GET/", b"\xef\xbb\xbfGET"]
        targets = [b"/api/v1/system/info", b"/api/v1/pipelines", b"/healthz", b"*", b"",
                   b"api/v1/system/info", b"http://evil.example/api/v1/system/info",
                   b"//evil.example/x", b"evil.example:443", b"/a b"]
        versions = [b"HTTP/1.1", b"HTTP/1.0", b"", b"HTTP/2.0", b"HTTP/1.2", b"HTTP/0.9",
                    b"HTTP/1.1 extra", b"http/1.1", b"HTTP/1.10", b"HTTP/11", b"HTTP/1.1\x00",
                    b"HTTP/", b"HTTP/1.", b"HTTP/-1.1", b"HTTP/1.1\xff", b"HTTPS/1.1"]
        endings = [b"\r\n", b"\n", b"\r", b"\n\r", b"\r\r\n"]
        seps = [b" ", b"  ", b"\t", b" \t "]
        cases = []
        for i in range(420):
            m, t, v = rng.choice(methods), rng.choice(targets), rng.choice(versions)
            sep, end = rng.choice(seps), rng.choice(endings)
            line = sep.join(x for x in (m, t, v) if x) + end
            payload = line + b"Host: t" + end + b"Connection: close" + end + end
            cases.append(Case("request line %d %r" % (i, line[:60]), payload, may_close=True))
        specials = [b"", b"\r\n", b"\r\n" * 1000, b"\r\n" * 3 + b"GET /healthz HTTP/1.1\r\n\r\n",
                    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                    bytes.fromhex("160301007a0100007603035a") + b"\x00" * 100,  # a TLS hello
                    b"\x00" * 4096, b"\xff" * 4096, b"GET", b"GET /", b"GET / HTTP/1.1",
                    b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
                    b"GET /api/v1/system/info HTTP/1.1\r\n" * 200 + b"\r\n",
                    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
                    b"SSH-2.0-OpenSSH_9.6\r\n", b"EHLO evil.example\r\n",
                    b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"]
        for i, payload in enumerate(specials):
            cases.append(Case("special %d %r" % (i, payload[:40]), payload, may_close=True))
        for i in range(60):  # random bytes, some with a plausible start
            blob = bytes(rng.getrandbits(8) for _ in range(rng.choice((1, 7, 64, 512, 4096))))
            if i % 2:
                blob = b"GET /api/v1/system/info HTTP/1.1\r\n" + blob
            cases.append(Case("random bytes %d" % i, blob + b"\r\n\r\n", may_close=True))
        return cases

    def header_cases(self, rng):
        cases = []
        targets = [("GET", "/api/v1/system/info", []),
                   ("POST", "/api/v1/pipelines", self.bearer(self.token))]
        for size in (4096, 8192, 16384, 32768, 65536, 262144, 1048576):
            for method, path, cred in targets:
                cases.append(Case("long value %d %s" % (size, path), http_request(
                    method, path, cred + [("X-Long", "a" * size)], body=b"{}"),
                    authed=bool(cred), may_close=True))
                cases.append(Case("long name %d %s" % (size, path), http_request(
                    method, path, cred + [("X-" + "n" * size, "v")], body=b"{}"),
                    authed=bool(cred), may_close=True))
        for count in (50, 100, 200, 500, 1000, 2000, 10000):
            for method, path, cred in targets:
                many = [("X-H%d" % i, "v%d" % i) for i in range(count)]
                cases.append(Case("%d headers %s" % (count, path), http_request(
                    method, path, cred + many, body=b"{}"), authed=bool(cred), may_close=True))
                same = [("X-Same", "v")] * count
                cases.append(Case("%d same headers %s" % (count, path), http_request(
                    method, path, cred + same, body=b"{}"), authed=bool(cred), may_close=True))
        bad_lines = [b"NoColon", b": empty-name", b"Bad Name: x", b"X-A : x", b"X-A:\x00",
                     b"X-A: a\x00b", b"X-A: a\rb", b"X-A: a\nb", b" X-Folded: x",
                     b"X-A: x\r\n continued", b"X-A: \xff\xfe", b"\xff\xfe: x", b"Host:",
                     b"Host: a b", b"Host: t\r\nHost: u", b"Host: \x00", b"X-A:: x",
                     b"X-Request-Id: \xff", b"X-Request-Id: " + b"r" * 5000,
                     b"X-Request-Id: a\tb", b"Content-Type: application/json; charset=\xff",
                     b"Content-Type: " + b";" * 1000, b"Expect: 100-continue",
                     b"Expect: garbage", b"Connection: Upgrade\r\nUpgrade: websocket",
                     b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: x",
                     b"Connection: keep-alive, close, \xff", b"Accept-Encoding: " + b"gzip," * 2000,
                     b"Range: bytes=0-1,1-2,2-3", b"Cookie: " + b"a=b; " * 1000,
                     b"Origin: null", b"X-Forwarded-For: 127.0.0.1, ::1, \xff",
                     b"Forwarded: for=\"[::1]\";proto=https", b"X-HTTP-Method-Override: DELETE",
                     b"\tX-Tab: x", b"X-A\t: x", b"X-\x7f: x", b"X-A: \x7f"]
        for i, line in enumerate(bad_lines):
            for method, path, cred in targets:
                for ending in (b"\r\n", b"\n"):
                    head = (method.encode() + b" " + path.encode() + b" HTTP/1.1" + ending +
                            b"Host: t" + ending)
                    for name, value in cred:
                        head += name.encode() + b": " + value.encode() + ending
                    payload = (head + line + ending + b"Content-Length: 2" + ending +
                               b"Connection: close" + ending + ending + b"{}")
                    cases.append(Case("bad header %d %r %s %r" % (i, line[:30], path, ending),
                                      payload, authed=bool(cred), may_close=True))
        alphabet = bytes(range(256))
        for i in range(160):  # random header names and values
            name = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
            value = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
            method, path, cred = rng.choice(targets)
            payload = http_request(method, path, cred + [(name, value)], body=b"{}")
            cases.append(Case("random header %d" % i, payload, authed=bool(cred),
                              may_close=True))
        return cases

    def framing_cases(self, rng):
        cases = []
        auth = ("Authorization: Bearer " + self.token).encode()
        body = b'{"name":"framed"}'

        def post(headers, rest, label, **kw):
            head = (b"POST /api/v1/pipelines HTTP/1.1\r\nHost: t\r\n" + auth + b"\r\n"
                    b"Content-Type: application/json\r\n")
            for h in headers:
                head += h + b"\r\n"
            kw.setdefault("authed", True)
            cases.append(Case(label, head + b"\r\n" + rest, may_close=True, **kw))

        for cl in (b"-1", b"+17", b" 17", b"17 ", b"0x11", b"1e3", b"17.0", b"",
                   b"99999999999999999999", b"18446744073709551616", b"18446744073709551615",
                   b"abc", b"17, 17", b"17,17", b"17, 18", b"\xff", b"017", b"1" * 1000):
            post([b"Content-Length: " + cl], body, "Content-Length %r" % cl[:30])
        post([b"Content-Length: 17", b"Content-Length: 17"], body, "duplicate equal CL")
        post([b"Content-Length: 17", b"Content-Length: 18"], body, "duplicate different CL")
        post([b"Content-Length: 5", b"Content-Length: 17"], body, "duplicate CL short first")
        chunked = b"11\r\n" + body + b"\r\n0\r\n\r\n"
        post([b"Content-Length: 17", b"Transfer-Encoding: chunked"], chunked, "CL then TE")
        post([b"Transfer-Encoding: chunked", b"Content-Length: 17"], chunked, "TE then CL")
        post([b"Transfer-Encoding: chunked", b"Content-Length: 0"], chunked, "TE and CL 0")
        post([b"Transfer-Encoding: chunked"], chunked, "valid chunked (control)", expect=200)
        post([b"Transfer-Encoding: Chunked"], chunked, "TE Chunked")
        post([b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked"], chunked,
             "duplicate TE chunked")
        bad_chunks = [b"zz\r\n" + body + b"\r\n0\r\n\r\n", b"-11\r\n" + body + b"\r\n0\r\n\r\n",
                      b"ffffffffffffffffffff\r\n" + body + b"\r\n0\r\n\r\n",
                      b"0x11\r\n" + body + b"\r\n0\r\n\r\n", b"11 \r\n" + body + b"\r\n0\r\n\r\n",
                      b" 11\r\n" + body + b"\r\n0\r\n\r\n",
                      b"11;ext=\xff\r\n" + body + b"\r\n0\r\n\r\n",
                      b"11;" + b"e" * 10000 + b"\r\n" + body + b"\r\n0\r\n\r\n",
                      b"11\r\n" + body + b"0\r\n\r\n", b"11\r\n" + body + b"\r\n",
                      b"11\r\n" + body + b"\r\n0\r\n", b"5\r\n" + body + b"\r\n0\r\n\r\n",
                      b"20\r\n" + body + b"\r\n0\r\n\r\n", b"11\n" + body + b"\n0\n\n",
                      b"11\r\n" + body + b"\r\n0\r\nX-Trailer: \xff\r\n\r\n",
                      b"11\r\n" + body + b"\r\n0\r\nContent-Length: 5\r\n\r\n",
                      b"11\r\n" + body + b"\r\n0\r\n" + b"X-T: v\r\n" * 5000 + b"\r\n",
                      b"".join(b"1\r\n" + bytes([c]) + b"\r\n" for c in body) + b"0\r\n\r\n",
                      b"1\r\n \r\n" * 20000 + b"0\r\n\r\n", b"\r\n\r\n", b"0\r\n\r\n",
                      b"7fffffffffffffff\r\nabc", b"8000000000000000\r\nabc", b"00000011\r\n"
                      + body + b"\r\n0\r\n\r\n"]
        for i, chunks in enumerate(bad_chunks):
            post([b"Transfer-Encoding: chunked"], chunks, "chunks %d %r" % (i, chunks[:30]))
        for declared in (18, 100, 1000, 100000, BODY_LIMIT):  # truncated: the client stops
            post([b"Content-Length: %d" % declared], body, "truncated body CL %d" % declared)
        for extra in (b"x", b"\r\n", b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n",
                      b"GARBAGE\r\n\r\n", b"\x00" * 1000, b"DELETE /api/v1/pipelines HTTP/1.1\r\n"):
            post([b"Content-Length: 17"], body + extra, "overlong body %r" % extra[:20])
            post([b"Content-Length: 0"], body + extra, "CL 0 with body %r" % extra[:20])
        health = b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
        info = b"GET /api/v1/system/info HTTP/1.1\r\nHost: t\r\n\r\n"
        cases.append(Case("100 pipelined", health * 99 + health.replace(
            b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"), count=100, expect=200))
        for i in range(80):  # valid requests with garbage between them
            parts = []
            for _ in range(rng.randint(2, 6)):
                parts.append(rng.choice([health, info,
                                         bytes(rng.getrandbits(8) for _ in range(30)),
                                         b"GET /api/v1/pipelines HTTP/1.1\r\nHost: t\r\n\r\n",
                                         b"\r\n", b"GET\r\n\r\n", b"X: y\r\n\r\n"]))
            cases.append(Case("pipelined garbage %d" % i, b"".join(parts), may_close=True))
        for i in range(60):  # random Content-Length and body sizes around each other
            declared, sent = rng.randint(0, 64), rng.randint(0, 64)
            raw = bytes(rng.getrandbits(8) for _ in range(sent))
            post([b"Content-Length: %d" % declared], raw, "random CL %d sent %d" % (declared,
                                                                                  sent))
        return cases

    def path_cases(self, rng):
        values = ["../../../../etc/passwd", "..%2f..%2f..%2f..%2fetc%2fpasswd",
                  "%2e%2e/%2e%2e/%2e%2e/etc/passwd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                  "%252e%252e%252f%252e%252e%252fetc%252fpasswd", "..\\..\\..\\etc\\passwd",
                  "..%5c..%5cetc%5cpasswd", "....//....//etc/passwd", "..", ".", "%2e", "%2e%2e",
                  ".%2e", "./././", "//", "%2f%2f", "x%00y", "%00", "x%0d%0aSet-Cookie:%20a=b",
                  "%e2%80%ae", "%ef%bb%bf", "'; DROP TABLE bots; --", "%27%20OR%201%3D1--",
                  "{{7*7}}", "${jndi:ldap://127.0.0.1:1/a}", "<script>alert(1)</script>",
                  "%3cscript%3e", "a" * 256, "b" * 4096, "c" * 8000, "%", "%zz", "%2", "%%",
                  "%u002e%u002e", "\u00e9", "%c3%a9", "~root", "x;y=z", "x?y=../../etc",
                  "x#frag", "%20", "+", "-1", "0", "99999999999999999999999",
                  "00000000-0000-0000-0000-000000000000", seeded_uuid(rng).upper(),
                  "{" + seeded_uuid(rng) + "}"]
        templates = ["/{v}", "/api/v1/{v}", "/api/v1/pipelines/{v}", "/api/v1/pipelines/{v}/copy",
                     "/api/v1/provider/providers/{v}", "/api/v1/provider/models/llm/{v}",
                     "/api/v1/platform/bots/{v}", "/bots/{v}", "/bots/{v}/sub/path",
                     "/api/v1/plugins/{v}/x/readme", "/api/v1/plugins/x/{v}/icon",
                     "/api/v1/provider/requesters/{v}", "/api/v1/platform/adapters/{v}",
                     "/api/v1/system/tasks/{v}", "/api/v1/apikeys/{v}",
                     "/api/v1/pipelines?sort_by={v}", "/api/v1/provider/models/llm?x={v}"]
        cases = []
        for template in templates:
            for value in values:
                cred = rng.choice([[], self.bearer(self.token), [("X-API-Key", self.api_key)]])
                method = "POST" if template.startswith("/bots/") or "/copy" in template else "GET"
                target = template.replace("{v}", value).encode()
                payload = http_request(method, target, cred, body=b"{}" if method == "POST"
                                       else None)
                cases.append(Case("%s %s" % (method, target[:80]), payload, authed=bool(cred)))
        for prefix in ("/", "/api/v1/pipelines/", "/bots/"):
            for size in (1024, 8192, 16384, 65536, 1048576):
                cases.append(Case("path of %d bytes under %s" % (size, prefix), http_request(
                    "GET", prefix + "p" * size, self.bearer(self.token)), authed=True,
                    may_close=True))
            for raw in (b"\xff\xfe", b"\xc0\xae", b"\x00", b"\x7f", b"\x1b[31m", b"a b",
                        b"\xed\xa0\x80", b"\r", b"\t"):  # raw, not percent-encoded
                cases.append(Case("raw %r under %s" % (raw, prefix), http_request(
                    "GET", prefix.encode() + raw, self.bearer(self.token)), authed=True,
                    may_close=True))
        query = "&".join("k%d=%s" % (i, "v" * 10) for i in range(2000))
        cases.append(Case("2000 query parameters", http_request(
            "GET", "/api/v1/pipelines?" + query, self.bearer(self.token)), authed=True,
            may_close=True))
        cases.append(Case("repeated sort_by", http_request(
            "GET", "/api/v1/pipelines?" + "sort_by=name&" * 500, self.bearer(self.token)),
            authed=True, may_close=True))
        return cases

    def json_routes(self):
        ids = self.ids
        provider = {"name": "fuzz", "requester": "openai-chat-completions",
                    "base_url": "https://api.openai.com/v1", "api_keys": [self.provider_key]}
        bot = {"name": "fuzz", "adapter": "webhook", "enable": False, "description": "d",
               "config": {"secret": "s", "callback_url": "http://127.0.0.1:1/cb"}}
        pipeline = {"name": "fuzz", "description": "d",
                    "config": {"ai": {"local-agent": {"max-round": 3, "prompt": [
                        {"role": "system", "content": "Be brief."}]}}}}
        # (method, path, valid body, how the route uses its body, credentials that may call it)
        return [
            ("POST", "/api/v1/pipelines", pipeline, REQUIRED, BOTH),
            ("PUT", "/api/v1/pipelines/" + ids["pipeline_uuid"], pipeline, REQUIRED, BOTH),
            ("POST", "/api/v1/pipelines/%s/copy" % ids["pipeline_uuid"], {}, UNREAD, BOTH),
            ("POST", "/api/v1/provider/providers", provider, REQUIRED, BOTH),
            ("PUT", "/api/v1/provider/providers/" + ids["provider_uuid"], provider, REQUIRED, BOTH),
            ("POST", "/api/v1/provider/models/llm",
             {"name": "m", "provider_uuid": ids["provider_uuid"], "abilities": ["chat"],
              "extra_args": {"temperature": 0.5}}, REQUIRED, BOTH),
            ("PUT", "/api/v1/provider/models/llm/" + ids["llm"],
             {"name": "m", "provider_uuid": ids["provider_uuid"], "abilities": ["chat"]},
             REQUIRED, BOTH),
            ("POST", "/api/v1/provider/models/embedding",
             {"name": "e", "provider_uuid": ids["provider_uuid"], "dimensions": 8}, REQUIRED,
             BOTH),
            ("POST", "/api/v1/platform/bots", bot, REQUIRED, BOTH),
            ("PUT", "/api/v1/platform/bots/" + ids["bot_uuid"], dict(bot, name="victim"), REQUIRED,
             BOTH),
            ("POST", "/api/v1/platform/bots/%s/logs" % ids["bot_uuid"],
             {"from_index": -1, "max_count": 10}, OPTIONAL, BOTH),
            ("POST", "/api/v1/apikeys", {"name": "fuzz", "description": "d"}, REQUIRED, USER),
            ("PUT", "/api/v1/apikeys/" + ids["key_id"], {"name": "spare", "description": "d"},
             REQUIRED, USER),
            ("PUT", "/api/v1/system/wizard/progress", {"step": 1, "data": {"a": [1, 2]}}, OPTIONAL,
             BOTH),
            ("POST", "/api/v1/system/wizard/completed", {"status": "skipped"}, OPTIONAL, BOTH),
        ]

    HOSTILE_VALUES = [None, True, False, 0, -1, 2 ** 63, 2 ** 64, -2 ** 63 - 1, 10 ** 40, 1.5,
                      -0.0, 1e308, 5e-324, "", " ", "x" * 20000, "\u0000", "\ud800", "\u00e9" * 50,
                      "\U0001f600", "../../etc/passwd", "'; DROP TABLE pipelines; --", [],
                      [1, "2", None], {}, {"a": {"b": {"c": {}}}}, [[[[[[]]]]]], {"$ne": 1},
                      "<script>alert(1)</script>", "%s%s%n", "${jndi:ldap://127.0.0.1:1/a}",
                      "http://127.0.0.1:1/", "file:///etc/passwd", "gopher://127.0.0.1:1/",
                      "javascript:alert(1)", "lbk_" + "A" * 43,
                      "00000000-0000-0000-0000-000000000000"]
    HOSTILE_KEYS = ["__proto__", "constructor", "uuid", "is_default", "created_at", "id",
                    "k" * 5000, "", "\u0000", "\ud800", "name\u0000x"]

    def mutate(self, rng, body):
        """A seeded hostile variant of `body`; returns (kind of mutation, raw bytes)."""
        kind = rng.choice(["set", "set", "set", "drop", "add", "wrap", "flip", "truncate",
                           "insert", "bad-utf8"])
        doc = json.loads(json.dumps(body))
        if kind in ("set", "drop"):
            paths, stack = [], [((), doc)]
            while stack:
                path, node = stack.pop()
                if isinstance(node, dict):
                    for k, v in node.items():
                        paths.append(path + (k,))
                        stack.append((path + (k,), v))
                elif isinstance(node, list):
                    for i, v in enumerate(node):
                        paths.append(path + (i,))
                        stack.append((path + (i,), v))
            if not paths:
                kind = "add"
            else:
                path = rng.choice(sorted(paths, key=repr))
                parent = doc
                for step in path[:-1]:
                    parent = parent[step]
                if kind == "set":
                    parent[path[-1]] = rng.choice(self.HOSTILE_VALUES)
                else:
                    del parent[path[-1]]
        if kind == "add":
            doc[rng.choice(self.HOSTILE_KEYS)] = rng.choice(self.HOSTILE_VALUES)
        if kind == "wrap":
            doc = rng.choice([[doc], {"data": doc}, [doc, doc]])
        raw = json.dumps(doc).encode()
        if kind == "flip":
            i = rng.randrange(len(raw))
            raw = raw[:i] + bytes([rng.getrandbits(8)]) + raw[i + 1:]
        elif kind == "truncate":
            raw = raw[:rng.randrange(len(raw))]
        elif kind == "insert":
            i = rng.randrange(len(raw) + 1)
            raw = raw[:i] + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8))) + raw[i:]
        elif kind == "bad-utf8":
            i = raw.find(b'"', 1)
            raw = raw[:i + 1] + rng.choice([b"\xff", b"\xc0\xae", b"\xed\xa0\x80", b"\xe2\x82",
                                            b"\xf8\x88\x80\x80\x80", b"\x80"]) + raw[i + 1:]
        return kind, raw

    # (label, body, kind): "syntax" is not JSON at all (or not UTF-8, or nested past any sane
    # depth), so every route that reads a body answers 400; "shape" is JSON but not an object
    # with the fields a create or update needs, so routes that require a body answer 400.
    FIXED_JSON = [
        ("deep arrays", b"[" * 50000 + b"]" * 50000, "syntax"),
        ("deep objects", b'{"a":' * 20000 + b"1" + b"}" * 20000, "syntax"),
        ("deep config", b'{"name":"x","config":' + b'{"a":' * 5000 + b"1" + b"}" * 5001, "syntax"),
        ("deep in a string field", b'{"name":' + b"[" * 10000 + b"]" * 10000 + b"}", "syntax"),
        ("number 1e400", b'{"name":1e400}', "shape"),
        ("number -1e400", b'{"name":"x","config":{"a":-1e400}}', None),
        ("huge integer", b'{"name":"x","step":' + b"9" * 5000 + b"}", None),
        ("huge exponent", b'{"name":"x","dimensions":1e999999999}', None),
        ("NaN", b'{"name":"x","a":NaN}', "syntax"),
        ("Infinity", b'{"name":"x","a":Infinity}', "syntax"),
        ("-Infinity", b'{"name":"x","a":-Infinity}', "syntax"),
        ("hex number", b'{"name":"x","a":0x10}', "syntax"),
        ("leading zeros", b'{"name":"x","a":0123}', "syntax"),
        ("plus sign", b'{"name":"x","a":+1}', "syntax"),
        ("empty body", b"", "shape"),
        ("null", b"null", "shape"),
        ("array", b"[]", "shape"),
        ("string", b'"str"', "shape"),
        ("number", b"1", "shape"),
        ("true", b"true", "shape"),
        ("invalid UTF-8", b'{"name":"\xff\xfe"}', "syntax"),
        ("overlong UTF-8", b'{"name":"\xc0\xae\xc0\xae"}', "syntax"),
        ("UTF-8 surrogate", b'{"name":"\xed\xa0\x80"}', "syntax"),
        ("truncated UTF-8", b'{"name":"\xe2\x82"}', "syntax"),
        ("invalid UTF-8 in a key", b'{"\xff":"x"}', "syntax"),
        ("lone surrogate escape", b'{"name":"\\ud800"}', None),
        ("reversed surrogates", b'{"name":"\\udc00\\ud800"}', None),
        ("bad escape", b'{"name":"\\x41"}', "syntax"),
        ("NUL escape", b'{"name":"a\\u0000b"}', None),
        ("raw control character", b'{"name":"a\x01b"}', "syntax"),
        ("raw NUL", b'{"name":"a\x00b"}', "syntax"),
        ("BOM", b'\xef\xbb\xbf{"name":"x"}', None),
        ("UTF-16", '{"name":"x"}'.encode("utf-16"), "syntax"),
        ("duplicate keys", b'{"name":"a","name":"b","name":{"x":1}}', None),
        ("10000 duplicate keys", b"{" + b'"name":"a",' * 10000 + b'"name":"b"}', None),
        ("long string", b'{"name":"' + b"x" * 200000 + b'"}', None),
        ("long key", b'{"' + b"k" * 200000 + b'":1}', None),
        ("100000-element array", b'{"name":"x","a":[' + b"1," * 99999 + b"1]}", None),
        ("truncated", b'{"name":"x","config":{"a":', "syntax"),
        ("trailing comma", b'{"name":"x",}', "syntax"),
        ("comment", b'{"name":"x" /* c */}', "syntax"),
        ("single quotes", b"{'name':'x'}", "syntax"),
        ("unquoted key", b'{name:"x"}', "syntax"),
        ("trailing garbage", b'{"name":"x"} {"name":"y"}', "syntax"),
        ("whitespace only", b" \t\r\n ", "shape"),
    ]

    def json_cases(self, rng):
        cases = []
        user = self.bearer(self.token)
        key = [("X-API-Key", self.api_key)]
        for method, path, body, use, who in self.json_routes():
            creds = (user, key) if who == BOTH else (user, user)
            for i, cred in enumerate(creds):
                for label, raw, kind in self.FIXED_JSON[i::2]:
                    expect = None
                    if kind == "syntax" and use != UNREAD or kind == "shape" and use == REQUIRED:
                        expect = 400
                    payload = http_request(method, path, cred + [
                        ("Content-Type", "application/json")], body=raw)
                    cases.append(Case("%s %s: %s" % (method, path, label), payload, authed=True,
                                      expect=expect))
            for j in range(40):
                kind, raw = self.mutate(rng, body)
                ctype = rng.choice(["application/json", "application/json", "text/plain",
                                    "application/json; charset=utf-16", "\xff"])
                payload = http_request(method, path, creds[j % 2] + [("Content-Type", ctype)],
                                       body=raw)
                cases.append(Case("%s %s: mutation %d %s %r" % (method, path, j, kind, raw[:60]),
                                  payload, authed=True))
        login = {"user": ADMIN_USER, "password": "not-the-password"}
        for j in range(12):  # a few only: every attempt costs a password hash
            kind, raw = self.mutate(rng, login)
            cases.append(Case("login mutation %d %s" % (j, kind), http_request(
                "POST", "/api/v1/user/auth", [("Content-Type", "application/json")], body=raw),
                expect={400, 401, 429}))
        return cases

    def credential_variants(self):
        """(label, headers, query) for requests that must not authenticate, built from the
        server's real token, its real signing key and the real API key."""
        secret = self.jwt_secret
        real = self.token_payload()
        h, p, s = self.token.split(".")
        # The variants signed with the real key are only meaningful if we sign as the server does.
        self.assertEqual(hs256_token(real, secret), self.token,
                         "cannot reproduce the server's HS256 signature from data/jwt_secret")
        now = int(time.time())
        without = {k: v for k, v in real.items() if k != "exp"}
        other = hs256_token(dict(real, user="ghost@example.com"), b"another-secret")
        other_sig = other.split(".")[2]
        key = self.api_key
        flipped = key[:-1] + ("A" if key[-1] != "A" else "B")
        rng = random.Random(SEED + 1)
        random_key = "lbk_" + "".join(rng.choice(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(43))
        basic = base64.b64encode(("%s:%s" % (ADMIN_USER, ADMIN_PASSWORD)).encode()).decode()
        forged = [
            ("wrong key", hs256_token(real, b"guessed-secret")),
            ("empty key", hs256_token(real, b"")),
            ("alg none", b64url_json({"alg": "none", "typ": "JWT"}) + "." + p + "."),
            ("alg None", b64url_json({"alg": "None", "typ": "JWT"}) + "." + p + "."),
            ("alg NONE with signature", b64url_json({"alg": "NONE"}) + "." + p + "." + s),
            ("alg RS256", b64url_json({"alg": "RS256", "typ": "JWT"}) + "." + p + "." + s),
            ("alg HS512", b64url_json({"alg": "HS512", "typ": "JWT"}) + "." + p + "." + s),
            ("expired (real key)", hs256_token(dict(real, exp=now - 5), secret)),
            ("expired long ago (real key)", hs256_token(dict(real, exp=1), secret)),
            ("exp 0 (real key)", hs256_token(dict(real, exp=0), secret)),
            ("exp negative (real key)", hs256_token(dict(real, exp=-1), secret)),
            ("exp as string (real key)", hs256_token(dict(real, exp=str(real["exp"])), secret)),
            ("no exp (real key)", hs256_token(without, secret)),
            ("unknown user (real key)", hs256_token(dict(real, user="ghost@example.com"), secret)),
            ("user not a string (real key)", hs256_token(dict(real, user=1), secret)),
            ("payload swapped", h + "." + b64url_json(dict(real, user="ghost@example.com")) +
             "." + s),
            ("exp raised, old signature", h + "." + b64url_json(dict(real, exp=now + 10 ** 8)) +
             "." + s),
            ("signature stripped", h + "." + p + "."),
            ("signature of another token", h + "." + p + "." + other_sig),
            ("signature truncated", h + "." + p + "." + s[:-2]),
            ("signature with a flipped character", h + "." + p + "." +
             (s[:-1] + ("A" if s[-1] != "A" else "B"))),
            ("four parts", self.token + ".x"),
            ("two parts", h + "." + p),
            ("header not JSON", b64url(b"not json") + "." + p + "." + s),
            ("4 KB token", h + "." + "A" * 4096 + "." + s),
            ("garbage", "garbage-token"),
            ("random API key", random_key),
            ("API key with a changed last character", flipped),
            ("API key truncated", key[:-1]),
            ("API key lengthened", key + "A"),
            ("API key upper case", key.upper() if key.upper() != key else key.lower()),
        ]
        variants = [("no credential", [], "")]
        for label, value in forged:
            variants.append(("Bearer " + label, [("Authorization", "Bearer " + value)], ""))
        for label, value in forged[-6:]:
            variants.append(("X-API-Key " + label, [("X-API-Key", value)], ""))
        variants += [
            ("empty Bearer", [("Authorization", "Bearer ")], ""),
            ("Bearer only", [("Authorization", "Bearer")], ""),
            ("empty X-API-Key", [("X-API-Key", "")], ""),
            ("Basic with the admin password", [("Authorization", "Basic " + basic)], ""),
            ("token without a scheme", [("Authorization", self.token)], ""),
            ("token with scheme Token", [("Authorization", "Token " + self.token)], ""),
            ("token in X-Token", [("X-Token", self.token)], ""),
            ("token in X-Auth-Token", [("X-Auth-Token", self.token)], ""),
            ("token in a cookie", [("Cookie", "token=" + self.token)], ""),
            ("token in the query", [], "token=" + self.token),
            ("API key in the query", [], "api_key=" + random_key),
            ("token in X-API-Key", [("X-API-Key", self.token)], ""),
            ("wrong X-API-Key beside a valid token",
             [("X-API-Key", random_key), ("Authorization", "Bearer " + self.token)], ""),
            ("two Authorization headers, first wrong",
             [("Authorization", "Bearer garbage"), ("Authorization", "Bearer " + self.token)],
             ""),
        ]
        return variants

    def fill(self, path):
        def param(m):
            name = m.group(1)
            if name == "model_uuid":
                return self.ids["embedding" if "/embedding/" in path else "llm"]
            return self.ids[name]
        return re.sub(r"\{([a-z_]+)(?:\.\.\.)?\}", param, path)

    def auth_cases(self):
        cases = []
        variants = self.credential_variants()
        for method, path, cls in PROTECTED_ROUTES:
            target = self.fill(path)
            body = b"{}" if method in ("POST", "PUT") else None
            cred_sets = list(variants)
            if cls == "user-only":
                cred_sets += [("valid API key on a user-only route",
                               [("X-API-Key", self.api_key)], ""),
                              ("valid API key as Bearer on a user-only route",
                               self.bearer(self.api_key), "")]
            if cls == "api-key-only":
                cred_sets += [("valid user token on an API-key-only route",
                               self.bearer(self.token), "")]
            for label, headers, query in cred_sets:
                if query.startswith("token=") and path.endswith("/ws/connect"):
                    continue  # the debug-chat WebSocket takes its token from the query
                t = target + ("?" + query if query else "")
                payload = http_request(method, t, headers + [
                    ("Content-Type", "application/json")], body=body)
                cases.append(Case("%s %s: %s" % (method, path, label), payload, expect=401))
        for label, recovery in (("empty", ""), ("wrong", "x" * 32),
                                ("the JWT secret", self.jwt_secret.decode()),
                                ("a prefix", self.srv.first_recovery_key[:8]),
                                ("one character off", self.srv.first_recovery_key[:-1] + "#"),
                                ("not a string", 12345), ("an array", [])):
            body = json.dumps({"user": ADMIN_USER, "recovery_key": recovery,
                               "new_password": "hijacked-password-1"}).encode()
            cases.append(Case("reset-password with %s recovery key" % label, http_request(
                "POST", "/api/v1/user/reset-password", [("Content-Type", "application/json")],
                body=body), expect={400, 401, 403, 429}))
        for label, user, password in (("wrong password", ADMIN_USER, "wrong-password-1"),
                                      ("SQL injection", "' OR '1'='1", "' OR '1'='1"),
                                      ("SQL comment", ADMIN_USER + "'--", "x"),
                                      ("empty password", ADMIN_USER, ""),
                                      ("upper-case password", ADMIN_USER,
                                       ADMIN_PASSWORD.upper())):
            body = json.dumps({"user": user, "password": password}).encode()
            cases.append(Case("login: " + label, http_request(
                "POST", "/api/v1/user/auth", [("Content-Type", "application/json")], body=body),
                expect={400, 401, 429}))
        return cases

    def webhook_message(self, mid):
        return json.dumps({"message_id": mid, "sender": {"id": "u1", "name": "Ann"},
                           "chat": {"type": "person", "id": "u1"},
                           "message_chain": [{"type": "Plain", "text": "hi"}]}).encode()

    def webhook_cases(self, rng):
        cases = []
        bot = self.ids["webhook_bot"]
        disabled = self.ids["bot_uuid"]
        body = self.webhook_message("m-hostile")
        now = int(time.time())

        def hook(label, headers, raw=body, target=None, expect=401, **kw):
            payload = http_request("POST", target or "/bots/" + bot, [
                ("Content-Type", "application/json")] + headers, body=raw)
            cases.append(Case(label, payload, expect=expect, **kw))

        good = sign(WEBHOOK_SECRET, now, body)
        ts = ("X-Switchboard-Timestamp", str(now))
        # The control: signed right, it is accepted, so the refusals below are the checks'.
        hook("correctly signed (control)", [ts, ("X-Switchboard-Signature", good)], expect=200)
        hook("no signature headers", [])
        hook("timestamp only", [ts])
        hook("signature only", [("X-Switchboard-Signature", good)])
        hook("signed with a wrong secret", [ts, ("X-Switchboard-Signature",
                                                 sign("wrong", now, body))])
        hook("signed with an empty secret", [ts, ("X-Switchboard-Signature", sign("", now, body))])
        hook("signature of another body", [ts, ("X-Switchboard-Signature", sign(
            WEBHOOK_SECRET, now, self.webhook_message("m-other")))])
        hook("signature in upper case", [ts, ("X-Switchboard-Signature", good.upper())])
        hook("signature without prefix", [ts, ("X-Switchboard-Signature", good[7:])])
        hook("sha1 prefix", [ts, ("X-Switchboard-Signature", "sha1=" + good[7:])])
        hook("signature truncated", [ts, ("X-Switchboard-Signature", good[:-1])])
        hook("signature doubled", [ts, ("X-Switchboard-Signature", good + good[7:])])
        hook("empty signature", [ts, ("X-Switchboard-Signature", "")])
        hook("two signatures, first wrong", [ts, ("X-Switchboard-Signature", "sha256=" + "0" * 64),
                                             ("X-Switchboard-Signature", good)],
             expect={400, 401})
        # Read the clock again: the barrage runs for seconds (more under the sanitizers) before it
        # gets here, and a "future" timestamp taken from `now` would drift into the window.
        fresh = int(time.time())
        for label, t in (("stale", fresh - 330), ("future", fresh + 330), ("long ago", 1),
                         ("zero", 0)):
            hook("correctly signed, %s timestamp" % label, [
                ("X-Switchboard-Timestamp", str(t)),
                ("X-Switchboard-Signature", sign(WEBHOOK_SECRET, t, body))])
        for t in ("abc", "-5", "+%d" % now, "%d.0" % now, " %d" % now, "1e9", "",
                  "9" * 40, "%d%d" % (now, now), "0x10", "\u0661\u0662"):
            hook("timestamp %r" % t, [("X-Switchboard-Timestamp", t),
                                      ("X-Switchboard-Signature", sign(WEBHOOK_SECRET, t, body))])
        hook("body changed after signing", [ts, ("X-Switchboard-Signature", good)],
             raw=body.replace(b"hi", b"ho"))
        hook("body with trailing space", [ts, ("X-Switchboard-Signature", good)], raw=body + b" ")
        hook("oversized body", [ts, ("X-Switchboard-Signature", good)],
             raw=b'{"a":"' + b"x" * (BODY_LIMIT + 1000) + b'"}', expect=413, may_close=True)
        big = b'{"a":"' + b"x" * (BODY_LIMIT * 4) + b'"}'
        hook("oversized body, correctly signed", [ts, ("X-Switchboard-Signature",
                                                       sign(WEBHOOK_SECRET, now, big))],
             raw=big, expect=413, may_close=True)
        payload = (b"POST /bots/" + bot.encode() + b" HTTP/1.1\r\nHost: t\r\n"
                   b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                   b"%x\r\n%s\r\n" % (65536, b"x" * 65536) * 8 + b"0\r\n\r\n")
        cases.append(Case("oversized chunked body", payload, expect=413, may_close=True))
        for sub in ("/x", "/x/y/z", "/../" + bot, "/%2e%2e/" + disabled):
            hook("sub-path %s without signature" % sub, [], target="/bots/" + bot + sub,
                 expect={400, 401, 404})
        hook("unknown bot, correctly signed", [ts, ("X-Switchboard-Signature", good)],
             target="/bots/" + seeded_uuid(rng), expect=404)
        hook("unknown bot, unsigned", [], target="/bots/" + seeded_uuid(rng), expect=404)
        hook("disabled bot, correctly signed", [ts, ("X-Switchboard-Signature", good)],
             target="/bots/" + disabled, expect=409)
        for bad in ("not-a-uuid", "x" * 300, seeded_uuid(rng).upper(), "%00", "..", "..%2f"):
            hook("bot id %r" % bad[:20], [], target="/bots/" + bad, expect={400, 404, 405})
        cases.append(Case("GET on a webhook", http_request("GET", "/bots/" + bot),
                          expect={401, 405}))
        for i in range(120):  # random bodies with wrong or missing signatures
            raw = rng.choice([body, b"", b"{}", b"[]", b"null"]) + bytes(
                rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
            sig = rng.choice(["", "sha256=" + "%064x" % rng.getrandbits(256),
                              sign("wrong-%d" % i, now, raw), "sha256=", "x" * 100])
            hook("random body %d" % i, [ts, ("X-Switchboard-Signature", sig)], raw=raw)
        return cases

    def slow_cases(self):
        """Slow and partial senders, several at once, each with a short socket timeout, while
        the main thread checks that other clients are still served promptly."""
        auth = ("Authorization: Bearer " + self.token).encode()
        head = b"POST /api/v1/pipelines HTTP/1.1\r\nHost: t\r\n" + auth + b"\r\n"
        behaviours = [
            ("partial request line", b"GET /api/v1/sys", None, True),
            ("partial header", b"GET /api/v1/system/info HTTP/1.1\r\nHost: t\r\nX-Slow: ", None,
             True),
            ("headers without the blank line", head + b"Content-Length: 10\r\n", None, True),
            ("header dripped a byte at a time", None,
             b"GET /api/v1/system/info HTTP/1.1\r\nHost: t\r\nX-A: " + b"a" * 200, True),
            ("body stalled after 5 of 1000 bytes", head + b"Content-Length: 1000\r\n\r\n{\"na",
             None, True),
            ("chunked body stalled", head + b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"nam",
             None, True),
            # No total-body deadline is promised (docs/api.md), so a dripping body is only
            # required not to stall anyone else.
            ("body dripped a byte at a time", head + b"Content-Length: 400\r\n\r\n", b" " * 400,
             False),
            ("nothing at all", b"", None, False),
        ]
        results = []
        lock = threading.Lock()

        def run(label, first, drip, must_close):
            sock = self.srv.raw_socket(SLOW_TIMEOUT)
            start = time.monotonic()
            limit = HEADER_TIMEOUT + 3
            got, closed = b"", None
            try:
                if first:
                    sock.sendall(first)
                sock.settimeout(0.1)
                dripped = 0
                while closed is None and time.monotonic() - start < limit:
                    if drip is not None and dripped < len(drip):
                        try:
                            sock.sendall(drip[dripped:dripped + 1])
                            dripped += 1
                        except (BrokenPipeError, ConnectionResetError):
                            closed = time.monotonic() - start
                            break
                    try:
                        chunk = sock.recv(65536)
                        if not chunk:
                            closed = time.monotonic() - start
                        got += chunk
                    except socket.timeout:
                        pass
                    except ConnectionResetError:
                        closed = time.monotonic() - start
            finally:
                sock.close()
            with lock:
                results.append((label, got, closed, must_close))

        threads = [threading.Thread(target=run, args=b, daemon=True) for b in behaviours]
        for t in threads:
            t.start()
        failures, latencies = [], []
        deadline = time.monotonic() + HEADER_TIMEOUT + 3
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            status, _, _ = self.srv.req("GET", "/api/v1/system/info", timeout=SLOW_TIMEOUT)
            latencies.append(time.monotonic() - t0)
            if status != 200:
                failures.append("GET /api/v1/system/info during slow senders: %d" % status)
            time.sleep(0.05)
        for t in threads:
            t.join(HEADER_TIMEOUT + 6)
        if any(t.is_alive() for t in threads):
            failures.append("a slow sender thread hung")
        for label, got, closed, must_close in results:
            if must_close and closed is None:
                failures.append("%s: not cut off within %d s" % (label, HEADER_TIMEOUT + 3))
            responses, problem = parse_responses(got)
            if problem:
                failures.append("%s: %s" % (label, problem))
            for r in responses:
                problems = self.response_problems(Case(label, b""), r)
                failures.extend("%s: %s" % (label, p) for p in problems)
        if max(latencies) > 0.75 * HEADER_TIMEOUT:  # a stalled server would wait them out
            failures.append("other clients waited %.2f s" % max(latencies))
        self.figures["slow senders"] = len(threads)
        print("  %-28s %5d connections, %d problems; others served in at most %.0f ms" % (
            "slow senders", len(threads), len(failures), max(latencies) * 1000), flush=True)
        with self.subTest(category="slow senders"):
            if failures:
                self.fail("slow senders:\n  " + "\n  ".join(failures[:15]))

    # ---- issue 13 §4: being fixed in parallel; these assert the fixed behaviour ----------------

    def issue13_transfer_encoding_cases(self):
        # Issue 13 §4: a Transfer-Encoding other than exactly `chunked` is answered 400 and the
        # connection closed (RFC 9112 §6.3), so a body cannot run as a second, smuggled request.
        cases = []
        auth = ("Authorization: Bearer " + self.token).encode()
        # Read by Content-Length (Transfer-Encoding ignored), this is a valid create followed by
        # a second request; read without a length, the JSON runs as a request of its own.
        body = b'{"name":"smuggled"}'
        smuggled = b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
        for te in (b"gzip", b"identity", b"deflate", b"compress", b"x-custom",
                   b"chunked, identity", b"gzip, chunked", b"identity, chunked"):
            for with_cl in (False, True):
                head = (b"POST /api/v1/pipelines HTTP/1.1\r\nHost: t\r\n" + auth + b"\r\n"
                        b"Content-Type: application/json\r\nTransfer-Encoding: " + te + b"\r\n")
                if with_cl:
                    head += b"Content-Length: %d\r\n" % len(body)
                cases.append(Case("issue 13 §4: TE %r%s" % (te, " with CL" if with_cl else ""),
                                  head + b"\r\n" + body + smuggled, authed=True, expect=400,
                                  count=1))
        return cases

    def issue13_invalid_utf8_cases(self):
        # Issue 13 §4: invalid UTF-8 in a path (and in a query value) is not echoed raw into a
        # JSON error; the generic checks require every JSON body to be valid UTF-8.
        cases = []
        sequences = ["%ff", "%fe%ff", "%c0%ae", "%ed%a0%80", "%e2%82", "%f8%88%80%80%80", "%80",
                     "%c3%28"]
        templates = ["/api/v1/{v}", "/api/v1/pipelines/{v}", "/api/v1/provider/requesters/{v}",
                     "/api/v1/platform/adapters/{v}", "/bots/{v}", "/api/v1/plugins/a/{v}/readme",
                     "/api/v1/provider/models/llm/{v}", "/api/v1/platform/bots/{v}",
                     "/api/v1/provider/models/llm?provider_uuid={v}"]
        for template in templates:
            for seq in sequences:
                target = template.replace("{v}", "x" + seq)
                cases.append(Case("issue 13 §4: invalid UTF-8 " + target, http_request(
                    "GET", target, self.bearer(self.token)), authed=True))
        return cases

    def issue13_head_cases(self, rng):
        # Issue 13 §4: HEAD is answered like GET (same status, no body) where GET exists.
        cases = []
        for path, cred in (("/api/v1/system/info", []), ("/healthz", []), ("/readyz", []),
                           ("/api/v1/user/init", []),
                           ("/api/v1/pipelines", self.bearer(self.token)),
                           ("/api/v1/provider/providers", [("X-API-Key", self.api_key)]),
                           ("/api/v1/pipelines/" + seeded_uuid(rng), self.bearer(self.token)),
                           ("/api/v1/pipelines", [])):
            status = self.srv.req("GET", path, headers=dict(cred))[0]
            cases.append(Case("issue 13 §4: HEAD %s (GET: %d)" % (path, status), http_request(
                "HEAD", path, cred), authed=bool(cred), expect=status, count=1, head=True))
        return cases

    def issue13_ws_messages_cases(self, rng):
        # Issue 13 §4: ws/messages of an unknown pipeline is 404, not 200 with an empty list.
        return [Case("issue 13 §4: ws/messages/%s of an unknown pipeline" % kind, http_request(
            "GET", "/api/v1/pipelines/%s/ws/messages/%s" % (seeded_uuid(rng), kind),
            self.bearer(self.token)), authed=True, expect=404) for kind in ("person", "group")]

    # ---- the test -------------------------------------------------------------------------------

    def test_barrage(self):
        rng = random.Random(SEED)
        started = time.monotonic()
        print("\nhostile-request barrage, seed %d:" % SEED, flush=True)
        self.run_category("request line", self.request_line_cases(rng))
        self.run_category("headers", self.header_cases(rng))
        self.run_category("framing", self.framing_cases(rng))
        self.run_category("paths", self.path_cases(rng))
        self.run_category("webhooks", self.webhook_cases(rng))
        self.run_category("authentication", self.auth_cases())
        self.run_category("JSON bodies", self.json_cases(rng))
        self.slow_cases()
        self.run_category("§4 transfer-encoding", self.issue13_transfer_encoding_cases())
        self.run_category("§4 invalid UTF-8 echo", self.issue13_invalid_utf8_cases())
        self.run_category("§4 HEAD", self.issue13_head_cases(rng))
        self.run_category("§4 ws/messages 404", self.issue13_ws_messages_cases(rng))
        print("  %d requests in %.1f s" % (sum(self.figures.values()),
                                           time.monotonic() - started), flush=True)
        self.check_survival()

    def check_survival(self):
        srv = self.srv
        self.assertIsNone(srv.proc.poll(), "the server is gone")
        status, resp, _ = srv.req("GET", "/api/v1/system/info")
        self.assertOk(status, resp)
        for cred in ({"token": self.token}, {"api_key": self.api_key}):
            status, resp, _ = srv.req("GET", "/api/v1/pipelines", **cred)
            self.assertOk(status, resp)
        # What the barrage managed to store reads back as valid JSON.
        for path in ("/api/v1/pipelines", "/api/v1/provider/providers",
                     "/api/v1/provider/models/llm", "/api/v1/provider/models/embedding",
                     "/api/v1/platform/bots", "/api/v1/apikeys", "/api/v1/system/info",
                     "/api/v1/pipelines/" + self.ids["pipeline_uuid"],
                     "/api/v1/platform/bots/" + self.ids["bot_uuid"]):
            data, early = exchange(srv, http_request("GET", path, self.bearer(self.token)))
            responses, problem = parse_responses(data)
            self.assertIsNone(early or problem, path)
            self.assertEqual([r.status for r in responses], [200], path)
            self.assertEqual(self.envelope_problems(responses[0]), [], path)
        srv.stop()  # a clean exit (code 0) after the barrage
        with open(srv.log_path, "rb") as f:
            stderr = f.read()
        banner = [l for l in srv.stdout_lines if l.startswith("Recovery key (shown once")]
        self.assertEqual(len(banner), 1, srv.stdout_lines[:5])
        stdout = "\n".join(l for l in srv.stdout_lines if l not in banner)
        self.assertGreater(len(srv.stdout_lines), 1000, "the access log is missing")
        for name, value in self.secrets.items():
            self.assertFalse(value in stdout, "the %s is in the server's log" % name)
            self.assertFalse(value.encode() in stderr, "the %s is in the server's stderr" % name)


if __name__ == "__main__":
    unittest.main()
