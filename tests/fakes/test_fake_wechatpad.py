"""Self-test of fake_wechatpad.py against what LangBot's wechatpad adapter and its
libs/wechatpad_api client send and read (WeChatPadPro has no API documentation): ?key= on every
call, {Code, Data, Text} answers, GetLoginStatus's "你已退出微信", GetProfile's userInfo,
SendTextMessage / SendImageMessage MsgItem bodies, GetChatroomMemberDetail, and message frames on
/ws/GetSyncMsg?key=. The fake runs as a subprocess; its socket is read with python3-websockets.

Run: cd tests/fakes && python3 -m unittest -v test_fake_wechatpad
"""

import json
import queue
import unittest

from fake_wechatpad import DEFAULT_TOKEN, DEFAULT_WXID
from fake_ws_common import LoopThread, http_json, start_fake, stop_fake, websockets

TIMEOUT = 10.0
PROC = PORT = WSPORT = LT = None


def setUpModule():
    global PROC, PORT, WSPORT, LT
    PROC, ports = start_fake("fake_wechatpad.py", "FAKE_WECHATPAD_PORT=")
    PORT, WSPORT = ports["FAKE_WECHATPAD_PORT"], ports["FAKE_WECHATPAD_WS_PORT"]
    LT = LoopThread()
    LT.start()


def tearDownModule():
    try:
        stop_fake(PROC)
    finally:
        if LT is not None:
            LT.stop()


def call(verb, path, body=None, key=DEFAULT_TOKEN):
    return http_json(PORT, verb, "%s?key=%s" % (path, key), body)


def ctl(path, body=None):
    return http_json(PORT, "POST" if body is not None else "GET", "/_control/" + path, body)


def text_item(to, text, ats=()):
    return {"MsgItem": [{"AtWxIDList": list(ats), "ImageContent": "", "MsgType": 0,
                         "TextContent": text, "ToUserName": to}]}


class Socket(object):
    def __init__(self, key=DEFAULT_TOKEN, path="/ws/GetSyncMsg"):
        self.frames = queue.Queue()

        async def dial():
            return await websockets.connect("ws://127.0.0.1:%d%s?key=%s" % (WSPORT, path, key),
                                            ping_interval=None, close_timeout=2)
        self.ws = LT.run(dial())
        LT.loop.call_soon_threadsafe(lambda: LT.loop.create_task(self._read()))

    async def _read(self):
        try:
            async for f in self.ws:
                self.frames.put(json.loads(f))
        except websockets.exceptions.ConnectionClosed:
            pass
        self.frames.put(None)

    def recv(self, timeout=TIMEOUT):
        try:
            f = self.frames.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no frame within %.1fs" % timeout)
        if f is None:
            raise AssertionError("socket closed with %s" % self.ws.close_code)
        return f

    def close(self):
        LT.run(self.ws.close(1000))


class ApiTest(unittest.TestCase):
    def test_login_status_and_profile(self):
        status, body, _ = call("GET", "/login/GetLoginStatus")
        self.assertEqual(status, 200)
        self.assertEqual(body["Code"], 200)
        status, body, _ = call("GET", "/user/GetProfile")
        self.assertEqual(body["Data"]["userInfo"]["userName"]["str"], DEFAULT_WXID)
        self.assertTrue(body["Data"]["userInfo"]["nickName"]["str"])
        _, body, _ = call("GET", "/user/GetProfile", key="wrong")
        self.assertEqual(body["Code"], 300)

    def test_text_and_image_sends(self):
        _, body, _ = call("POST", "/message/SendTextMessage", text_item("wxid_ann", "hi"))
        self.assertEqual(body["Code"], 200)
        self.assertTrue(body["Data"][0]["isSendSuccess"])
        image = {"MsgItem": [{"AtWxIDList": [], "ImageContent": "iVBORw0KGgo=", "MsgType": 0,
                              "TextContent": "", "ToUserName": "wxid_ann"}]}
        _, body, _ = call("POST", "/message/SendImageMessage", image)
        self.assertEqual(body["Code"], 200)
        image["MsgItem"][0]["ImageContent"] = "not base64!"
        _, body, _ = call("POST", "/message/SendImageMessage", image)
        self.assertNotEqual(body["Code"], 200)
        _, body, _ = call("POST", "/message/SendTextMessage", {"MsgItem": [{}]})
        self.assertNotEqual(body["Code"], 200)
        _, body, _ = call("POST", "/message/SendTextMessage", text_item("wxid_ann", "x"), "bad")
        self.assertEqual(body["Code"], 300)
        paths = [s["path"] for s in ctl("sent")[1]["sent"]]
        self.assertIn("/message/SendImageMessage", paths)
        self.assertEqual(call("GET", "/message/SendTextMessage")[0], 404)

    def test_chatroom_members(self):
        ctl("members", {"chatroom": "9@chatroom",
                        "members": [{"user_name": "wxid_a", "nick_name": "A"}]})
        _, body, _ = call("POST", "/group/GetChatroomMemberDetail", {"ChatRoomName": "9@chatroom"})
        self.assertEqual(body["Data"]["member_data"]["chatroom_member_list"],
                         [{"user_name": "wxid_a", "nick_name": "A"}])


class SocketTest(unittest.TestCase):
    def test_frames_carry_the_fields_langbot_reads(self):
        s = Socket()
        got = ctl("message", {"from": "1@chatroom", "content": "wxid_bob01:\nhello",
                              "msg_source": "<msgsource><atuserlist>%s</atuserlist></msgsource>"
                              % DEFAULT_WXID, "push_content": "Bob在群聊中@了你"})[1]
        self.assertEqual(got["delivered"], 1)
        f = s.recv()
        self.assertEqual(f["from_user_name"], {"str": "1@chatroom"})
        self.assertEqual(f["to_user_name"], {"str": DEFAULT_WXID})
        self.assertEqual(f["msg_type"], 1)
        self.assertEqual(f["content"]["str"], "wxid_bob01:\nhello")
        self.assertIn(DEFAULT_WXID, f["msg_source"])
        self.assertEqual(f["push_content"], "Bob在群聊中@了你")
        self.assertIsInstance(f["new_msg_id"], int)
        self.assertIsInstance(f["create_time"], int)
        s.close()

    def test_a_wrong_key_or_path_is_refused(self):
        with self.assertRaises(Exception):
            Socket(key="wrong")
        with self.assertRaises(Exception):
            Socket(path="/ws/Other")
        self.assertGreaterEqual(ctl("state")[1]["refused"], 1)

    def test_drop_closes_without_a_close_frame(self):
        s = Socket()
        self.assertEqual(ctl("drop", {})[1]["connections"], 1)
        while True:
            try:
                s.recv(timeout=5)
            except AssertionError as e:
                self.assertIn("1006", str(e))
                break


class LogoutTest(unittest.TestCase):
    # Logging out is for good: the other classes' tests run first (unittest loads classes in
    # name order) and none of SocketTest's needs the login.
    def test_logout_is_reported_as_langbot_expects(self):
        ctl("logout", {})
        _, body, _ = call("GET", "/login/GetLoginStatus")
        self.assertEqual((body["Code"], body["Text"]), (300, "你已退出微信"))


if __name__ == "__main__":
    unittest.main()
