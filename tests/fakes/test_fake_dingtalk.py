"""Self-tests of fake_dingtalk.py against the documented protocol (platforms.md 4.4, the Stream
SDK's frames.py / handlers.py / stream.py, the robot API reference), not against our adapter:
the access token, the gateway ticket (single use, URL-encoded the SDK's way), frames with `data`
as a JSON string, acknowledgements, pings, disconnect, robot sends with the token and msgParam as
a string, session webhooks and their expiry, and media downloads."""

import asyncio
import base64
import json
import unittest
import urllib.parse

from fake_ws_common import http_json, start_fake, stop_fake, wait_until, websockets

CLIENT_ID = "dingfakeclientid0001"
SECRET = "fake-dingtalk-client-secret-0123456789"
ROBOT = "dingfakerobotcode001"


class FakeDingTalkTest(unittest.TestCase):
    def setUp(self):
        self.proc, ports = start_fake("fake_dingtalk.py", "FAKE_DINGTALK_PORT=")
        self.port = ports["FAKE_DINGTALK_PORT"]
        self.addCleanup(stop_fake, self.proc)
        self.loop = asyncio.new_event_loop()
        self.addCleanup(self.loop.close)

    def run_async(self, coro, timeout=10):
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def post(self, path, body, headers=None):
        return http_json(self.port, "POST", path, body, headers)

    def control(self, name, body=None):
        status, data, _ = self.post("/_control/" + name, body or {})
        self.assertEqual(status, 200, data)
        return data

    def stream(self):
        return http_json(self.port, "GET", "/_control/stream")[1]

    def token(self):
        status, data, _ = self.post("/v1.0/oauth2/accessToken",
                                    {"appKey": CLIENT_ID, "appSecret": SECRET})
        self.assertEqual(status, 200, data)
        self.assertEqual(data["expireIn"], 7200)
        return data["accessToken"]

    def open(self):
        status, data, _ = self.post("/v1.0/gateway/connections/open", {
            "clientId": CLIENT_ID, "clientSecret": SECRET, "ua": "test", "localIp": "",
            "subscriptions": [{"type": "EVENT", "topic": "*"},
                              {"type": "CALLBACK", "topic": "/v1.0/im/bot/messages/get"}]})
        self.assertEqual(status, 200, data)
        return data

    def url(self, opened):
        return "%s?ticket=%s" % (opened["endpoint"], urllib.parse.quote_plus(opened["ticket"]))

    async def recv_json(self, ws):
        return json.loads(await asyncio.wait_for(ws.recv(), 5))

    def test_credentials_are_checked_for_tokens_and_tickets(self):
        self.token()
        status, data, _ = self.post("/v1.0/oauth2/accessToken",
                                    {"appKey": CLIENT_ID, "appSecret": "wrong"})
        self.assertEqual((status, data["code"]), (400, "invalidClientIdOrSecret"))
        status, data, _ = self.post("/v1.0/gateway/connections/open",
                                    {"clientId": CLIENT_ID, "clientSecret": "wrong",
                                     "subscriptions": []})
        self.assertEqual(status, 400)
        self.assertNotIn("wrong", json.dumps(data))
        opened = self.open()
        self.assertTrue(opened["endpoint"].startswith("ws://127.0.0.1:"))
        self.assertEqual(self.stream()["opens"][-1]["subscriptions"][1]["type"], "CALLBACK")

    def test_a_ticket_opens_one_connection_and_frames_are_acknowledged(self):
        opened = self.open()

        async def scenario():
            async with websockets.connect(self.url(opened)) as ws:
                # A ticket works once.
                with self.assertRaises(websockets.exceptions.InvalidStatusCode) as refused:
                    await websockets.connect(self.url(opened))
                self.assertEqual(refused.exception.status_code, 401)
                loop = asyncio.get_running_loop()
                pushed = await loop.run_in_executor(None, lambda: self.control("message", {
                    "conversationType": "1", "senderStaffId": "u1", "text": "hello", "times": 2}))
                first, second = await self.recv_json(ws), await self.recv_json(ws)
                self.assertEqual((first["headers"]["messageId"], first["data"]),
                                 (second["headers"]["messageId"], second["data"]))
                self.assertEqual(first["specVersion"], "1.0")
                self.assertEqual(first["type"], "CALLBACK")
                self.assertEqual(first["headers"]["topic"], "/v1.0/im/bot/messages/get")
                self.assertEqual(first["headers"]["messageId"], pushed["messageId"])
                self.assertEqual(first["headers"]["contentType"], "application/json")
                self.assertIsInstance(first["data"], str)  # JSON inside a string
                msg = json.loads(first["data"])
                self.assertEqual((msg["conversationType"], msg["senderStaffId"], msg["msgtype"]),
                                 ("1", "u1", "text"))
                self.assertEqual(msg["text"]["content"], "hello")
                self.assertEqual(msg["sessionWebhook"], pushed["sessionWebhook"])
                self.assertGreater(msg["sessionWebhookExpiredTime"], msg["createAt"])
                await ws.send(json.dumps({"code": 200, "headers": {
                    "messageId": first["headers"]["messageId"], "contentType": "application/json"},
                    "message": "OK", "data": json.dumps({"response": "OK"})}))
                await loop.run_in_executor(None, lambda: wait_until(
                    lambda: self.stream()["acks"], 5))
                self.assertEqual(self.stream()["unacked"], [])
                await loop.run_in_executor(None, lambda: self.control("message", {"text": "x"}))
                unacked = json.loads(await ws.recv())["headers"]["messageId"]
                self.assertEqual(self.stream()["unacked"], [unacked])
                await ws.send("not json")
                # A ping's acknowledgement must echo its data.
                ping = await loop.run_in_executor(None, lambda: self.control("ping"))
                frame = await self.recv_json(ws)
                self.assertEqual((frame["type"], frame["headers"]["topic"]), ("SYSTEM", "ping"))
                self.assertEqual(frame["headers"]["messageId"], ping["messageId"])
                await ws.send(json.dumps({"code": 200, "headers": frame["headers"],
                                          "message": "OK", "data": frame["data"]}))
                await loop.run_in_executor(None, lambda: self.control("ping"))
                frame = await self.recv_json(ws)
                await ws.send(json.dumps({"code": 200, "headers": frame["headers"],
                                          "message": "OK", "data": "{}"}))
                await loop.run_in_executor(None, lambda: wait_until(
                    lambda: len(self.stream()["pings"]) == 2, 5))
        self.run_async(scenario())
        state = self.stream()
        self.assertEqual(state["refused_upgrades"], 1)
        self.assertEqual(state["bad_frames"], 1)
        self.assertEqual(state["acks"][0]["code"], 200)
        self.assertEqual([p["echoed"] for p in state["pings"]], [True, False])

    def test_raw_frames_carry_what_the_test_gives(self):
        async def scenario():
            async with websockets.connect(self.url(self.open()), max_size=None) as ws:
                loop = asyncio.get_running_loop()
                raw = await loop.run_in_executor(None, lambda: self.control(
                    "raw", {"data": "{not json"}))
                frame = await self.recv_json(ws)
                self.assertEqual(frame["headers"]["messageId"], raw["messageId"])
                self.assertEqual(frame["data"], "{not json")
                await loop.run_in_executor(None, lambda: self.control("raw", {"text": "x" * 10}))
                self.assertEqual(await asyncio.wait_for(ws.recv(), 5), "x" * 10)
        self.run_async(scenario())

    def test_disconnect_is_followed_by_a_close_and_drop_cuts_the_socket(self):
        self.control("config", {"disconnect_grace": 0.3})

        async def scenario():
            async with websockets.connect(self.url(self.open())) as ws:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, lambda: self.control("disconnect"))
                frame = await self.recv_json(ws)
                self.assertEqual((frame["type"], frame["headers"]["topic"]),
                                 ("SYSTEM", "disconnect"))
                with self.assertRaises(websockets.exceptions.ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 3)
            async with websockets.connect(self.url(self.open())) as ws:
                await loop.run_in_executor(None, lambda: self.control("drop"))
                with self.assertRaises(websockets.exceptions.ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 3)
        self.run_async(scenario())
        self.assertEqual(self.stream()["connections"], 2)
        # No connection: a message cannot be pushed.
        wait_until(lambda: self.stream()["connected"] == 0, 5)
        status, _, _ = self.post("/_control/message", {"text": "x"})
        self.assertEqual(status, 409)

    def test_robot_sends_need_a_valid_token_and_msg_param_as_a_string(self):
        token = self.token()
        hdr = {"x-acs-dingtalk-access-token": token}
        status, data, _ = self.post("/v1.0/robot/oToMessages/batchSend", {
            "robotCode": ROBOT, "userIds": ["manager1234"], "msgKey": "sampleText",
            "msgParam": json.dumps({"content": "hi"})}, hdr)
        self.assertEqual(status, 200, data)
        self.assertEqual(data["invalidStaffIdList"], [])
        status, data, _ = self.post("/v1.0/robot/groupMessages/send", {
            "robotCode": ROBOT, "openConversationId": "cid1", "msgKey": "sampleMarkdown",
            "msgParam": json.dumps({"title": "t", "text": "**x**"})}, hdr)
        self.assertEqual(status, 200, data)
        self.assertIn("processQueryKey", data)
        status, data, _ = self.post("/v1.0/robot/groupMessages/send", {
            "robotCode": ROBOT, "openConversationId": "cid1", "msgKey": "sampleText",
            "msgParam": {"content": "an object, not a string"}}, hdr)
        self.assertEqual((status, data["code"]), (400, "invalidParameter.param.invalid"))
        status, data, _ = self.post("/v1.0/robot/groupMessages/send", {
            "robotCode": "other", "openConversationId": "cid1", "msgKey": "sampleText",
            "msgParam": "{\"content\":\"x\"}"}, hdr)
        self.assertEqual(status, 400)
        status, data, _ = self.post("/v1.0/robot/oToMessages/batchSend", {}, {})
        self.assertEqual((status, data["code"]), (401, "InvalidAuthentication"))
        self.control("fail", {"path": "/v1.0/robot/", "status": 429, "retry_after": 1})
        status, data, headers = self.post("/v1.0/robot/groupMessages/send", {}, hdr)
        self.assertEqual((status, data["code"], headers["retry-after"]), (429, "Throttling", "1"))
        self.control("expire_tokens")
        status, data, _ = self.post("/v1.0/robot/oToMessages/batchSend", {
            "robotCode": ROBOT, "userIds": ["u"], "msgKey": "sampleText",
            "msgParam": "{\"content\":\"x\"}"}, hdr)
        self.assertEqual(status, 401)
        sent = http_json(self.port, "GET", "/_control/sent")[1]["sent"]
        self.assertEqual([s["kind"] for s in sent], ["batchSend", "groupSend"])
        self.assertEqual(sent[1]["msgParam"], {"title": "t", "text": "**x**"})

    def test_session_webhooks_take_replies_until_they_expire(self):
        async def connect_and_push(body):
            async with websockets.connect(self.url(self.open())) as ws:
                loop = asyncio.get_running_loop()
                pushed = await loop.run_in_executor(None, lambda: self.control("message", body))
                await self.recv_json(ws)
                return pushed
        pushed = self.run_async(connect_and_push({"conversationType": "2", "text": " @bot hi",
                                                  "conversationId": "cidG"}))
        path = pushed["sessionWebhook"].split(str(self.port), 1)[1]
        status, data, _ = self.post(path, {"msgtype": "markdown",
                                           "markdown": {"title": "t", "text": "hello"},
                                           "at": {"atUserIds": ["u1"], "isAtAll": False}})
        self.assertEqual((status, data), (200, {"errcode": 0, "errmsg": "ok"}))
        status, data, _ = self.post(path, {"msgtype": "text"})
        self.assertNotEqual(data["errcode"], 0)
        self.control("expire_sessions")
        status, data, _ = self.post(path, {"msgtype": "text", "text": {"content": "late"}})
        self.assertEqual(status, 200)
        self.assertNotEqual(data["errcode"], 0)
        # A session that is born expired says so in sessionWebhookExpiredTime too.
        late = self.run_async(connect_and_push({"text": "x", "session_ttl": -1}))
        status, data, _ = self.post(late["sessionWebhook"].split(str(self.port), 1)[1],
                                    {"msgtype": "text", "text": {"content": "x"}})
        self.assertNotEqual(data["errcode"], 0)
        sent = http_json(self.port, "GET", "/_control/sent")[1]["sent"]
        self.assertEqual(len(sent), 1)
        self.assertEqual(sent[0]["body"]["markdown"]["text"], "hello")

    def test_http_mode_callbacks_are_signed_with_the_client_secret(self):
        import hashlib
        import hmac
        import http.server
        import threading
        got = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers["Content-Length"])
                got.append((dict(self.headers), self.rfile.read(n)))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass
        srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        url = "http://127.0.0.1:%d/bots/x" % srv.server_address[1]
        answer = self.control("callback", {"url": url, "text": "hi", "conversationType": "1"})
        self.assertEqual(answer["status"], 200)
        headers, body = got[0]
        ts = headers["timestamp"]
        expected = base64.b64encode(hmac.new(SECRET.encode(), (ts + "\n" + SECRET).encode(),
                                             hashlib.sha256).digest()).decode()
        self.assertEqual(headers["sign"], expected)
        msg = json.loads(body)
        self.assertEqual((msg["msgtype"], msg["text"]["content"]), ("text", "hi"))
        self.assertEqual(msg["msgId"], answer["msgId"])
        self.control("callback", {"url": url, "text": "x", "bad_sign": True})
        self.assertNotEqual(got[1][0]["sign"], base64.b64encode(hmac.new(
            SECRET.encode(), (got[1][0]["timestamp"] + "\n" + SECRET).encode(),
            hashlib.sha256).digest()).decode())

    def test_download_codes_lead_to_the_bytes(self):
        png = b"\x89PNG\r\n\x1a\nfake"
        self.control("file", {"downloadCode": "dc/1+", "content_base64":
                              base64.b64encode(png).decode(), "content_type": "image/png"})
        hdr = {"x-acs-dingtalk-access-token": self.token()}
        status, data, _ = self.post("/v1.0/robot/messageFiles/download",
                                    {"downloadCode": "dc/1+", "robotCode": ROBOT}, hdr)
        self.assertEqual(status, 200, data)
        path = data["downloadUrl"].split(str(self.port), 1)[1]
        status, body, headers = http_json(self.port, "GET", path)
        self.assertEqual((status, body, headers["content-type"]), (200, png, "image/png"))
        status, data, _ = self.post("/v1.0/robot/messageFiles/download",
                                    {"downloadCode": "nope", "robotCode": ROBOT}, hdr)
        self.assertEqual(status, 400)


if __name__ == "__main__":
    unittest.main()
