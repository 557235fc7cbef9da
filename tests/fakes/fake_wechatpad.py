#!/usr/bin/env python3
"""Fake WeChatPadPro (HTTP API + message WebSocket) for Switchboard end-to-end tests.

WeChatPadPro publishes no API documentation. This fake follows what LangBot's `wechatpad` adapter
(src/langbot/pkg/platform/sources/wechatpad.py) and its client (src/langbot/libs/wechatpad_api/:
util/http_util.py, api/login.py, api/user.py, api/message.py, api/chatroom.py) send and read,
which is the only description of the service there is. Where LangBot does not show what the
service answers (an unknown key, the body of a send's answer), the fake's choice is marked
"(assumed)".

HTTP, http://127.0.0.1:PORT, every call with ?key=<token>; answers are HTTP 200 with
{"Code", "Data", "Text"}, Code 200 meaning success (http_util reads any 2xx JSON object)
    GET  /login/GetLoginStatus -> {"Code":200,"Data":{"loginState":1,"loginErrMsg":"账号在线状态
         良好！"},"Text":""}; after /_control/logout {"Code":300,"Data":null,"Text":"你已退出微信"}
         (the answer LangBot tests for)
    GET  /user/GetProfile -> {"Code":200,"Data":{"userInfo":{"userName":{"str":WXID},
         "nickName":{"str":"PadBot"}}}} (the fields LangBot reads)
    POST /message/SendTextMessage {"MsgItem":[{AtWxIDList, ImageContent, MsgType, TextContent,
         ToUserName}]} -> {"Code":200,"Data":[{"isSendSuccess":true,"toUserName",
         "newMsgId"}],"Text":""} (assumed); an item without ToUserName or TextContent ->
         {"Code":-1,"Text":"参数错误"} (assumed)
    POST /message/SendImageMessage, the same items with ImageContent = base64 of the image ->
         as above; ImageContent that is not base64 -> Code -1 (assumed)
    POST /group/GetChatroomMemberDetail {"ChatRoomName"} -> {"Code":200,"Data":{"member_data":
         {"chatroom_member_list":[{"user_name","nick_name"}]}}} (the fields LangBot reads)
    A key that is not the fake's token -> {"Code":300,"Data":null,"Text":"该key无效"} (assumed).
    Unknown path -> HTTP 404. GET /files/<name> serves a 1x1 PNG (an image URL to send).
Message WebSocket, ws://127.0.0.1:WSPORT/ws/GetSyncMsg?key=<token> (LangBot's URI)
    A wrong key or path -> the upgrade is refused with HTTP 401 / 404 (assumed). Each message is
    one text frame, a JSON object {msg_id, from_user_name{str}, to_user_name{str}, msg_type,
    content{str}, status, img_status, img_buf{len}, create_time, msg_source, push_content,
    new_msg_id} (the fields LangBot reads; chatroom texts start "sender_wxid:\\n").

Control API (no key; JSON; errors {"error"} with 400)
    POST /_control/message {from, content, msg_type?: 1, msg_source?, push_content?,
                            new_msg_id?} -> {delivered (sockets), frame}
    POST /_control/members {chatroom, members: [{user_name, nick_name}]}
    POST /_control/raw     {text}: sent as is to every socket
    POST /_control/drop    drops every socket's TCP connection without a close frame
    POST /_control/logout  the account is logged out from now on
    GET  /_control/sent    -> {sent: [{path, body}]}: the sends and lookups that succeeded
    GET  /_control/state   -> {connections, connected, refused, status_checks, profile_reads}

Command line: python3 fake_wechatpad.py [--port 0] [--host 127.0.0.1] [--token T] [--wxid W]
[--verbose] prints exactly "FAKE_WECHATPAD_PORT=<http> FAKE_WECHATPAD_WS_PORT=<ws>".
"""

import argparse
import asyncio
import base64
import binascii
import http
import json
import sys
import threading
import time
import urllib.parse

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, json_reply,
                            parse_json_body, serve_cli, websockets)

DEFAULT_TOKEN = "fake-wechatpad-key"
DEFAULT_WXID = "wxid_padbot01"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhg"
                       "GAWjR9awAAAABJRU5ErkJggg==")


def answer(code=200, data=None, text=""):
    return json_reply(200, {"Code": code, "Data": data, "Text": text})


class FakeWeChatPad(object):
    def __init__(self, host="127.0.0.1", port=0, token=DEFAULT_TOKEN, wxid=DEFAULT_WXID,
                 verbose=False):
        self.host, self.token, self.wxid = host, token, wxid
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.Lock()  # guards the HTTP-side state below
        self._sent = []
        self._members = {}  # chatroom -> [{user_name, nick_name}]
        self._logged_in = True
        self._next_id = 7000000000000000000
        self._stats = {"status_checks": 0, "profile_reads": 0, "refused": 0}
        # Socket state, touched only on the loop thread.
        self._conns = []
        self._connections = 0

    def start(self):
        self._lt.start()

        async def serve():
            self._ws_server = await websockets.serve(
                self._socket, self.host, 0, max_size=1 << 20, ping_interval=None,
                process_request=self._check_upgrade)
            return self._ws_server.sockets[0].getsockname()[1]
        self.ws_port = self._lt.run(serve())
        return self._http.start()

    @property
    def port(self):
        return self._http.server_address[1]

    def stop(self):
        self._http.stop()

        async def close():
            self._ws_server.close()
            await self._ws_server.wait_closed()
        self._lt.stop(close)

    def _new_msg_id(self):
        with self._lock:
            self._next_id += 1
            return str(self._next_id)

    # -- message socket --------------------------------------------------------------------------

    async def _check_upgrade(self, path, headers):
        parts = urllib.parse.urlsplit(path)
        if parts.path != "/ws/GetSyncMsg":
            return http.HTTPStatus.NOT_FOUND, [], b"not found\n"
        key = dict(urllib.parse.parse_qsl(parts.query)).get("key")
        if key != self.token:
            with self._lock:
                self._stats["refused"] += 1
            return http.HTTPStatus.UNAUTHORIZED, [], b"invalid key\n"
        return None

    async def _socket(self, ws, path=None):
        self._conns.append(ws)
        self._connections += 1
        try:
            async for _ in ws:
                pass  # the service does not read client frames
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._conns.remove(ws)

    async def _broadcast(self, text):
        n = 0
        for ws in list(self._conns):
            try:
                await ws.send(text)
                n += 1
            except websockets.exceptions.ConnectionClosed:
                pass
        return n

    async def _drop(self):
        conns = list(self._conns)
        for ws in conns:
            ws.transport.abort()
        return len(conns)

    async def _socket_state(self):
        return {"connections": self._connections, "connected": len(self._conns)}

    # -- HTTP ------------------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if path.startswith("/_control/"):
            return self._control(method, path[len("/_control/"):], body)
        if method == "GET" and path.startswith("/files/"):
            return Reply(200, PNG, "image/png")
        routes = {("GET", "/login/GetLoginStatus"), ("GET", "/user/GetProfile"),
                  ("POST", "/message/SendTextMessage"), ("POST", "/message/SendImageMessage"),
                  ("POST", "/group/GetChatroomMemberDetail")}
        if (method, path) not in routes:
            return Reply(404, b"404 page not found", "text/plain")
        if query.get("key") != self.token:
            return answer(300, None, "该key无效")
        if path == "/login/GetLoginStatus":
            with self._lock:
                self._stats["status_checks"] += 1
                logged_in = self._logged_in
            if not logged_in:
                return answer(300, None, "你已退出微信")
            return answer(200, {"loginState": 1, "loginErrMsg": "账号在线状态良好！",
                                "onlineTime": int(time.time())})
        if path == "/user/GetProfile":
            with self._lock:
                self._stats["profile_reads"] += 1
            return answer(200, {"userInfo": {"userName": {"str": self.wxid},
                                             "nickName": {"str": "PadBot"}}})
        try:
            args = json.loads(body.decode("utf-8")) if body else None
        except (UnicodeDecodeError, ValueError):
            args = None
        if not isinstance(args, dict):
            return answer(-1, None, "参数错误")
        if path == "/group/GetChatroomMemberDetail":
            room = args.get("ChatRoomName")
            if not isinstance(room, str):
                return answer(-1, None, "参数错误")
            with self._lock:
                members = list(self._members.get(room, []))
                self._sent.append({"path": path, "body": args})
            return answer(200, {"member_data": {"chatroom_member_list": members}})
        items = args.get("MsgItem")
        if not isinstance(items, list) or not items:
            return answer(-1, None, "参数错误")
        results = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("ToUserName"), str) or \
                    not item["ToUserName"] or not isinstance(item.get("AtWxIDList", []), list):
                return answer(-1, None, "参数错误")
            if path == "/message/SendTextMessage":
                if not isinstance(item.get("TextContent"), str) or not item["TextContent"]:
                    return answer(-1, None, "参数错误")
            else:
                try:
                    data = base64.b64decode(item.get("ImageContent") or "", validate=True)
                except (binascii.Error, ValueError, TypeError):
                    data = b""
                if not data:
                    return answer(-1, None, "图片数据错误")
            results.append({"isSendSuccess": True, "toUserName": item["ToUserName"],
                            "newMsgId": self._new_msg_id()})
        with self._lock:
            self._sent.append({"path": path, "body": args})
        return answer(200, results)

    def _control(self, method, name, body):
        args = parse_json_body(body)
        if method == "GET" and name == "sent":
            with self._lock:
                return json_reply(200, {"sent": list(self._sent)})
        if method == "GET" and name == "state":
            state = self._lt.run(self._socket_state())
            with self._lock:
                state.update(self._stats)
            return json_reply(200, state)
        if method != "POST":
            raise BadRequest("unknown control call %s %s" % (method, name), 404)
        if name == "message":
            sender, content = args.get("from"), args.get("content")
            if not isinstance(sender, str) or not sender or not isinstance(content, str):
                raise BadRequest("from and content are required strings")
            new_id = str(args.get("new_msg_id") or self._new_msg_id())
            frame = {"msg_id": int(new_id) % 1000000000, "from_user_name": {"str": sender},
                     "to_user_name": {"str": self.wxid}, "msg_type": int(args.get("msg_type", 1)),
                     "content": {"str": content}, "status": 3, "img_status": 1,
                     "img_buf": {"len": 0}, "create_time": int(time.time()),
                     "msg_source": args.get("msg_source", "<msgsource></msgsource>"),
                     "push_content": args.get("push_content", ""), "new_msg_id": int(new_id)}
            delivered = self._lt.run(self._broadcast(json.dumps(frame, ensure_ascii=False)))
            return json_reply(200, {"delivered": delivered, "frame": frame})
        if name == "members":
            room, members = args.get("chatroom"), args.get("members")
            if not isinstance(room, str) or not isinstance(members, list):
                raise BadRequest("chatroom and members are required")
            with self._lock:
                self._members[room] = members
            return json_reply(200, {})
        if name == "raw":
            text = args.get("text")
            if not isinstance(text, str):
                raise BadRequest("text must be a string")
            return json_reply(200, {"delivered": self._lt.run(self._broadcast(text))})
        if name == "drop":
            return json_reply(200, {"connections": self._lt.run(self._drop())})
        if name == "logout":
            with self._lock:
                self._logged_in = False
            return json_reply(200, {})
        raise BadRequest("unknown control call " + name, 404)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake WeChatPadPro (HTTP API + message WebSocket)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--token", default=DEFAULT_TOKEN)
    ap.add_argument("--wxid", default=DEFAULT_WXID)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeWeChatPad(args.host, args.port, args.token, args.wxid, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_WECHATPAD_PORT=%d FAKE_WECHATPAD_WS_PORT=%d" % (
        f.port, f.ws_port))


if __name__ == "__main__":
    sys.exit(main())
