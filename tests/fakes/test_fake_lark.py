"""Self-test of fake_lark.py against Lark's documented protocol: the Encrypt Key format with the
docs' worked example, X-Lark-Signature, pbbp2.Frame bytes as the Go SDK's generated code writes
them, the Open API (token, bot info, send, reply, uuid, images, resources, token errors), the
long connection (ticket, ping/pong, events in parts, acks) and signed webhook delivery. The fake
runs as a subprocess; python3-websockets is the long-connection client.

Run: cd tests/fakes && python3 -m unittest -v test_fake_lark
"""

import base64
import hashlib
import http.server
import json
import queue
import threading
import time
import unittest

from fake_lark import BOT_OPEN_ID, DEFAULT_APP_ID, DEFAULT_APP_SECRET, dumps
from lark_wire import decode_frame, encode_frame, header, lark_encrypt, lark_signature
from fake_ws_common import LoopThread, http_json, start_fake, stop_fake, websockets

TIMEOUT = 10.0
PROC = PORT = LT = None
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
                       "hQGAhKmMIQAAAABJRU5ErkJggg==")


def setUpModule():
    global PROC, PORT, LT
    PROC, ports = start_fake("fake_lark.py", "FAKE_LARK_PORT=")
    PORT = ports["FAKE_LARK_PORT"]
    LT = LoopThread()
    LT.start()


def tearDownModule():
    try:
        stop_fake(PROC)
    finally:
        if LT is not None:
            LT.stop()


def ctl(path, body=None):
    return http_json(PORT, "POST" if body is not None else "GET", "/_control/" + path, body)


def token():
    status, body, _ = http_json(PORT, "POST", "/open-apis/auth/v3/tenant_access_token/internal",
                                {"app_id": DEFAULT_APP_ID, "app_secret": DEFAULT_APP_SECRET})
    assert status == 200 and body["code"] == 0, body
    return body["tenant_access_token"]


def dial(url):
    async def go():
        return await websockets.connect(url, ping_interval=None, close_timeout=2)
    return LT.run(go())


def api(method, path, body=None, tok=None, headers=None):
    h = dict(headers or {})
    h["Authorization"] = "Bearer " + (tok or token())
    return http_json(PORT, method, path, body, h)


class Recorder(object):
    """A bot's webhook endpoint that records each call and answers a challenge."""

    def __init__(self):
        self.calls = queue.Queue()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.calls.put({"headers": {k.lower(): v for k, v in self.headers.items()},
                                 "body": raw})
                out = b'{"code":0}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/bots/x" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class CryptoAndFrames(unittest.TestCase):
    def test_encrypt_matches_the_docs_example(self):
        # Lark's "Encrypt Key" page: key "test key", plaintext "hello world".
        example = "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="
        iv = base64.b64decode(example)[:16]
        self.assertEqual(lark_encrypt("test key", "hello world", iv), example)

    def test_signature_is_plain_sha256_of_the_concatenation(self):
        body = b'{"encrypt":"x"}'
        self.assertEqual(lark_signature("1700000000", "n", "k", body),
                         hashlib.sha256(b"1700000000nk" + body).hexdigest())

    def test_frame_bytes_follow_the_go_sdk(self):
        ping = encode_frame({"service": 7, "method": 0, "headers": [("type", "ping")]})
        self.assertEqual(ping.hex(), "08001000180720002a0c0a0474797065120470696e6732003a004a00")
        f = decode_frame(encode_frame({"SeqID": 2 ** 64 - 1, "LogID": 5, "service": -1,
                                       "method": 1, "headers": [("sum", "1")],
                                       "payload": b"{}"}))
        self.assertEqual((f["SeqID"], f["service"], f["payload"]), (2 ** 64 - 1, -1, b"{}"))
        for bad in (b"\x08", b"\x08\x00\x10\x00\x18\x00", ping + b"\x42\x05ab", ping + b"\x7b"):
            with self.assertRaises(ValueError):
                decode_frame(bad)


class OpenApi(unittest.TestCase):
    def setUp(self):
        ctl("reset", {})

    def test_token_bot_info_and_token_errors(self):
        status, body, _ = http_json(PORT, "POST",
                                    "/open-apis/auth/v3/tenant_access_token/internal",
                                    {"app_id": DEFAULT_APP_ID, "app_secret": "wrong"})
        self.assertEqual((status, body["code"]), (400, 10014))
        t1 = token()
        self.assertTrue(t1.startswith("t-"))
        self.assertEqual(token(), t1)  # not yet in its last 30 minutes
        status, body, _ = http_json(PORT, "GET", "/open-apis/bot/v3/info")
        self.assertEqual((status, body["code"]), (400, 99991661))
        status, body, _ = api("GET", "/open-apis/bot/v3/info", tok=t1)
        self.assertEqual(body["bot"]["open_id"], BOT_OPEN_ID)
        ctl("expire_tokens", {})
        status, body, _ = api("GET", "/open-apis/bot/v3/info", tok=t1)
        self.assertEqual((status, body["code"]), (400, 99991663))
        self.assertNotEqual(token(), t1)

    def test_send_reply_uuid_images_and_resources(self):
        tok = token()
        path = "/open-apis/im/v1/messages?receive_id_type=open_id"
        text = {"receive_id": "ou_abc", "msg_type": "text", "content": dumps({"text": "hi"}),
                "uuid": "u-1"}
        status, body, _ = api("POST", path, text, tok)
        self.assertEqual(body["code"], 0, body)
        mid = body["data"]["message_id"]
        self.assertTrue(mid.startswith("om_"))
        status, again, _ = api("POST", path, text, tok)
        self.assertEqual(again["data"]["message_id"], mid)  # uuid: the same message
        bad = dict(text, content="{}", uuid="u-2")
        self.assertEqual(api("POST", path, bad, tok)[1]["code"], 230001)
        self.assertEqual(api("POST", "/open-apis/im/v1/messages?receive_id_type=chat_id",
                             dict(text, uuid=None), tok)[1]["code"], 230001)  # ou_ as chat_id
        self.assertEqual(api("POST", "/open-apis/im/v1/messages/om_unknown/reply",
                             {"msg_type": "text", "content": dumps({"text": "x"})}, tok)[1][
            "code"], 230011)
        post = {"zh_cn": {"title": "", "content": [[{"tag": "at", "user_id": "ou_x"},
                                                    {"tag": "text", "text": " hi"}]]}}
        status, body, _ = api("POST", "/open-apis/im/v1/messages/%s/reply" % mid,
                              {"msg_type": "post", "content": dumps(post)}, tok)
        self.assertEqual(body["code"], 0, body)
        boundary = "b0undary"
        form = ("--%s\r\nContent-Disposition: form-data; name=\"image_type\"\r\n\r\nmessage\r\n"
                "--%s\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n"
                "Content-Type: image/png\r\n\r\n" % (boundary, boundary)).encode() + PNG + \
            ("\r\n--%s--\r\n" % boundary).encode()
        status, body, _ = api("POST", "/open-apis/im/v1/images", form, tok, {
            "Content-Type": "multipart/form-data; boundary=" + boundary})
        self.assertEqual(body["code"], 0, body)
        key = body["data"]["image_key"]
        status, body, _ = api("POST", path, {"receive_id": "ou_abc", "msg_type": "image",
                                             "content": dumps({"image_key": key})}, tok)
        self.assertEqual(body["code"], 0, body)
        sent = ctl("sent")[1]["sent"]
        self.assertEqual([s["kind"] for s in sent], ["create", "reply", "create"])
        self.assertEqual(sent[1]["content"], post)
        ctl("resource", {"message_id": "om_in", "key": "img_1",
                         "content_base64": base64.b64encode(PNG).decode()})
        status, data, headers = api("GET", "/open-apis/im/v1/messages/om_in/resources/img_1"
                                    "?type=image", tok=tok)
        self.assertEqual((status, data, headers["content-type"]), (200, PNG, "image/png"))
        self.assertEqual(api("GET", "/open-apis/im/v1/messages/om_in/resources/nope?type=image",
                             tok=tok)[1]["code"], 234003)
        # What a reply quotes: a message the fake sent (or delivered), read back.
        status, got, _ = api("GET", "/open-apis/im/v1/messages/" + mid, tok=tok)
        self.assertEqual((status, got["code"]), (200, 0), got)
        item = got["data"]["items"][0]
        self.assertEqual((item["message_id"], item["msg_type"]), (mid, "text"))
        self.assertEqual(json.loads(item["body"]["content"]), {"text": "hi"})
        self.assertEqual(item["sender"]["sender_type"], "app")
        status, missing, _ = api("GET", "/open-apis/im/v1/messages/om_unknown", tok=tok)
        self.assertEqual((status, missing["code"]), (400, 230011))


    def test_shared_cards_are_updated_at_most_five_times_a_second_and_recalled(self):
        tok = token()
        path = "/open-apis/im/v1/messages?receive_id_type=open_id"

        def card(text, shared=True):
            return dumps({"config": {"update_multi": shared},
                          "elements": [{"tag": "markdown", "content": text}]})

        status, body, _ = api("POST", path, {"receive_id": "ou_abc", "msg_type": "interactive",
                                             "content": card("a")}, tok)
        self.assertEqual(body["code"], 0, body)
        mid = body["data"]["message_id"]
        status, body, _ = api("POST", path, {"receive_id": "ou_abc", "msg_type": "interactive",
                                             "content": card("x", shared=False)}, tok)
        unshared = body["data"]["message_id"]
        status, body, _ = api("POST", path, {"receive_id": "ou_abc", "msg_type": "text",
                                             "content": dumps({"text": "t"})}, tok)
        text_id = body["data"]["message_id"]
        one = "/open-apis/im/v1/messages/"
        self.assertEqual(api("PATCH", one + mid, {"content": card("ab")}, tok)[1]["code"], 0)
        self.assertEqual(api("PATCH", one + unshared, {"content": card("y")}, tok)[1]["code"],
                         230099)
        self.assertEqual(api("PATCH", one + text_id, {"content": card("y")}, tok)[1]["code"],
                         230001)
        self.assertEqual(api("PATCH", one + "om_unknown", {"content": card("y")}, tok)[1][
            "code"], 230011)
        codes = [api("PATCH", one + mid, {"content": card("abc")}, tok)[1]["code"]
                 for _ in range(6)]
        self.assertIn(230020, codes)  # more than 5 in a second
        self.assertEqual(api("DELETE", one + mid, tok=tok)[1]["code"], 0)
        self.assertEqual(api("PATCH", one + mid, {"content": card("z")}, tok)[1]["code"], 230011)
        sent = {s["message_id"]: s for s in ctl("sent")[1]["sent"]}
        self.assertTrue(sent[mid]["deleted"])
        self.assertEqual(sent[mid]["updates"][0]["content"]["elements"][0]["content"], "ab")
        self.assertEqual(sent[unshared]["updates"], [])


class LongConnection(unittest.TestCase):
    def setUp(self):
        ctl("reset", {})
        ctl("config", {"ping_interval": 3})

    def endpoint(self):
        status, body, _ = http_json(PORT, "POST", "/callback/ws/endpoint",
                                    {"AppID": DEFAULT_APP_ID, "AppSecret": DEFAULT_APP_SECRET},
                                    {"locale": "zh"})
        self.assertEqual(body["code"], 0, body)
        self.assertEqual(body["data"]["ClientConfig"]["PingInterval"], 3)
        return body["data"]["URL"]

    def test_wrong_app_and_reused_tickets_are_refused(self):
        status, body, _ = http_json(PORT, "POST", "/callback/ws/endpoint",
                                    {"AppID": DEFAULT_APP_ID, "AppSecret": "x"})
        self.assertNotEqual(body["code"], 0)
        url = self.endpoint()
        ws = dial(url)
        LT.run(ws.close())
        with self.assertRaises(websockets.exceptions.InvalidStatusCode) as cm:
            dial(url)
        self.assertEqual(cm.exception.status_code, 403)

    def test_ping_pong_events_in_parts_and_acks(self):
        url = self.endpoint()
        service = int(dict(p.split("=") for p in url.split("?")[1].split("&"))["service_id"])
        ws = dial(url)
        try:
            LT.run(ws.send(encode_frame({"service": service, "method": 0,
                                         "headers": [("type", "ping")]})))
            pong = decode_frame(LT.run(ws.recv(), TIMEOUT))
            self.assertEqual((pong["method"], header(pong, "type")), (0, "pong"))
            self.assertEqual(json.loads(pong["payload"])["PingInterval"], 3)
            got = ctl("message", {"chat_type": "p2p", "text": "hello", "parts": 3})[1]
            self.assertTrue(got["delivery"]["delivered"])
            frames = [decode_frame(LT.run(ws.recv(), TIMEOUT)) for _ in range(3)]
            frames.sort(key=lambda f: int(header(f, "seq")))
            self.assertEqual({header(f, "sum") for f in frames}, {"3"})
            self.assertEqual({f["service"] for f in frames}, {service})
            event = json.loads(b"".join(f["payload"] for f in frames))
            self.assertEqual(event["header"]["event_type"], "im.message.receive_v1")
            self.assertEqual(json.loads(event["event"]["message"]["content"])["text"], "hello")
            ack = dict(frames[-1], payload=b'{"code":200}',
                       headers=frames[-1]["headers"] + [("biz_rt", "1")])
            LT.run(ws.send(encode_frame(ack)))
            state = None
            for _ in range(100):
                state = ctl("state")[1]
                if state["acks"]:
                    break
                time.sleep(0.05)
            self.assertEqual(state["acks"][0]["code"], 200)
            self.assertEqual(state["acks"][0]["message_id"], got["delivery"]["frame_message_id"])
            self.assertEqual(state["pings"][0]["service"], service)
        finally:
            LT.run(ws.close())


class WebhookDelivery(unittest.TestCase):
    def setUp(self):
        ctl("reset", {})
        self.rec = Recorder()

    def tearDown(self):
        self.rec.stop()
        ctl("config", {"encrypt_key": ""})

    def test_plain_and_encrypted_signed_deliveries(self):
        got = ctl("message", {"via": "webhook", "url": self.rec.url, "chat_type": "group",
                              "chat_id": "oc_g", "text": "hi", "mention_bot": True})[1]
        self.assertEqual(got["delivery"]["status"], 200)
        call = self.rec.calls.get(timeout=TIMEOUT)
        event = json.loads(call["body"])
        self.assertEqual(event["header"]["token"], "fake-verification-token")
        message = event["event"]["message"]
        self.assertEqual(json.loads(message["content"])["text"], "@_user_1 hi")
        self.assertEqual(message["mentions"][0]["id"]["open_id"], BOT_OPEN_ID)
        self.assertNotIn("x-lark-signature", call["headers"])
        # A delivered message can be read back (what a later reply quotes).
        status, read, _ = api("GET", "/open-apis/im/v1/messages/" + message["message_id"])
        item = read["data"]["items"][0]
        self.assertEqual((item["msg_type"], item["body"]["content"], item["sender"]["id"]),
                         ("text", message["content"], event["event"]["sender"]["sender_id"][
                             "open_id"]))

        ctl("config", {"encrypt_key": "ek-1"})
        got = ctl("message", {"via": "webhook", "url": self.rec.url, "text": "secret"})[1]
        call = self.rec.calls.get(timeout=TIMEOUT)
        h = call["headers"]
        self.assertEqual(h["x-lark-signature"], lark_signature(
            h["x-lark-request-timestamp"], h["x-lark-request-nonce"], "ek-1", call["body"]))
        enc = json.loads(call["body"])["encrypt"]
        iv = base64.b64decode(enc)[:16]
        self.assertEqual(lark_encrypt("ek-1", dumps(got["event"]), iv), enc)

        challenge = ctl("challenge", {"url": self.rec.url})[1]
        self.assertEqual(challenge["status"], 200)
        self.assertFalse(challenge["echoed"])  # the recorder does not answer challenges


if __name__ == "__main__":
    unittest.main()
