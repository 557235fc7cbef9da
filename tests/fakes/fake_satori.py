#!/usr/bin/env python3
"""Fake Satori SDK (protocol v1: events WebSocket + HTTP API) for Switchboard end-to-end tests.

Built from the Satori protocol pages (satori.chat en-US/protocol/events.html, api.html,
message.html, resources/{channel,message,user,login}.html) and the reference SDK server
satorijs/satori packages/server/src/index.ts for what the pages leave open (the close code for a
wrong token, the HTTP status for a wrong token or an unknown login). The WebSocket runs on
python3-websockets 10.4 (see fake_ws_common.py); the HTTP API and the control API share one port.

Logins (READY.logins): [{sn:1, platform:"discord", user{id:"900000", name:"otherbot"}, ...},
                        {sn:2, platform:PLATFORM, user{id:SELF_ID, name:"satoribot"}, ...}]
    The configured platform's login is deliberately not the first, as a multi-platform SDK may
    list them in any order.

Events WebSocket, ws://127.0.0.1:WSPORT/v1/events (any other path: HTTP 404), signals {op, body}
    The client sends IDENTIFY (op 3) {token?, sn?} within 10 s, else the fake closes with 4000
    "identify timeout" (the spec sets the 10 s, not what happens after; the reference SDK does not
    enforce it). A wrong token (when the fake has one) -> close 4004 "invalid token" (the
    reference SDK). Otherwise READY (op 4) {logins, proxy_urls: []}; with `sn` the events after
    it still buffered are replayed. PING (op 1) -> PONG (op 2) {}. A frame that is not JSON ->
    close 4000 "invalid message" (reference). Events (op 0) go only to identified sockets; each
    has a new `sn`; the buffer keeps them for resuming.
    Event body: {sn, type:"message-created", timestamp (ms), login{sn, platform, user},
    channel{id, type (0 TEXT, 1 DIRECT), name?}, guild?{id, name}, member?{nick}, user{id, name,
    nick?}, message{id, content, created_at}} (resources promoted to the top level, as the spec's
    resource promotion rule says).

HTTP API, http://127.0.0.1:PORT/v1/{resource}.{method}, JSON bodies
    GET on a known method -> 405; unknown method -> 404 "method not found"; with a token
    configured, no `Authorization: Bearer <token>` -> 401, a wrong one -> 403 "invalid token";
    Satori-Platform + Satori-User-ID naming no login -> 403 "login not found"; a body that is not
    a JSON object -> 400.
    message.create {channel_id, content} -> [Message{id, channel{id,type}, user (the bot),
        content, created_at}]; a channel the fake does not know -> 400 "unknown channel"
        (known: channels of injected messages, /_control/channel and user.channel.create).
    user.channel.create {user_id, guild_id?} -> Channel {id: "private:<user_id>", type: 1}
    login.get {} -> the login named by the headers.

Control API (no auth; JSON; errors {"error"} with 400)
    POST /_control/message {channel_id, channel_type?: 0, guild_id?, user{id, name?, nick?},
                            content, message_id?, platform?} -> {sn, delivered (sockets), event}
    POST /_control/channel {id, type?: 0}
    POST /_control/raw     {text}: sends the text as is to every identified socket
    POST /_control/drop    drops every socket's TCP connection without a close frame
    POST /_control/close   {code?: 4000, reason?}
    POST /_control/config  {answer_pings?: true}
    GET  /_control/sent    -> {sent: [{method, body, auth, platform, user_id, message_id?}]}:
                              the message.create and user.channel.create calls that succeeded
    GET  /_control/events  -> {connections, connected, identified, identifies[{token_ok, sn}],
                              pings, pongs, closes[{code, by}], replayed}

Command line: python3 fake_satori.py [--port 0] [--host 127.0.0.1] [--token T] [--platform P]
[--self-id ID] [--verbose] prints exactly "FAKE_SATORI_PORT=<http> FAKE_SATORI_WS_PORT=<ws>".
"""

import argparse
import asyncio
import http
import json
import sys
import threading
import time

from fake_ws_common import (BadRequest, ControlServer, LoopThread, Reply, json_reply,
                            parse_json_body, serve_cli, websockets)

DEFAULT_TOKEN = "fake-satori-token"
IDENTIFY_TIMEOUT = 10.0
BUFFER_KEEP = 1000
METHODS = {"message.create", "user.channel.create", "login.get", "channel.get", "message.get",
           "message.delete", "message.update", "user.get", "guild.get", "upload.create"}


def _now_ms():
    return int(time.time() * 1000)


class _Conn(object):
    def __init__(self, ws):
        self.ws = ws
        self.identified = False


class FakeSatori(object):
    def __init__(self, host="127.0.0.1", port=0, token=DEFAULT_TOKEN, platform="llonebot",
                 self_id="10001", verbose=False):
        self.host, self.token = host, token
        self.logins = [
            {"sn": 1, "platform": "discord", "user": {"id": "900000", "name": "otherbot"},
             "status": 1, "adapter": "discord", "features": []},
            {"sn": 2, "platform": platform, "user": {"id": self_id, "name": "satoribot"},
             "status": 1, "adapter": "onebot", "features": ["message.delete"]},
        ]
        self.login = self.logins[1]
        self._lt = LoopThread()
        self._http = ControlServer(host, port, self._route, verbose)
        self._lock = threading.Lock()  # guards the HTTP-side state below
        self._sent = []
        self._channels = {}  # id -> channel
        self._next_id = 1
        self.answer_pings = True
        # Event-side state, touched only on the loop thread.
        self._conns, self._buffer, self._sn = [], [], 0
        self._ev = {"connections": 0, "identifies": [], "pings": 0, "pongs": 0, "closes": [],
                    "replayed": 0}

    def start(self):
        self._lt.start()

        async def serve():
            self._ws_server = await websockets.serve(
                self._events, self.host, 0, max_size=1 << 20, ping_interval=None,
                process_request=self._check_path)
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

    def _new_id(self, prefix):
        with self._lock:
            self._next_id += 1
            return "%s%d" % (prefix, self._next_id)

    # -- events WebSocket ------------------------------------------------------------------------

    async def _check_path(self, path, headers):
        if path.split("?", 1)[0] != "/v1/events":
            return http.HTTPStatus.NOT_FOUND, [], b"not found\n"
        return None

    async def _events(self, ws, path=None):
        conn = _Conn(ws)
        self._conns.append(conn)
        self._ev["connections"] += 1
        try:
            try:
                first = await asyncio.wait_for(ws.recv(), IDENTIFY_TIMEOUT)
            except asyncio.TimeoutError:
                return await self._close(conn, 4000, "identify timeout")
            frame = first
            while True:
                if not await self._on_frame(conn, frame):
                    break
                frame = await ws.recv()
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._conns.remove(conn)
            if not any(c.get("conn") is conn for c in self._ev["closes"]):
                self._ev["closes"].append({"conn": conn, "code": ws.close_code, "by": "client"})

    async def _close(self, conn, code, reason):
        self._ev["closes"].append({"conn": conn, "code": code, "by": "server"})
        await conn.ws.close(code, reason)
        return False

    async def _on_frame(self, conn, frame):
        try:
            payload = json.loads(frame)
            if not isinstance(payload, dict):
                raise ValueError("not an object")
        except ValueError:
            return await self._close(conn, 4000, "invalid message")
        op, body = payload.get("op"), payload.get("body") or {}
        if op == 3:
            token_ok = not self.token or body.get("token") == self.token
            self._ev["identifies"].append({"token_ok": token_ok, "sn": body.get("sn")})
            if not token_ok:
                return await self._close(conn, 4004, "invalid token")
            conn.identified = True
            await conn.ws.send(json.dumps({"op": 4, "body": {"logins": self.logins,
                                                             "proxy_urls": []}}))
            sn = body.get("sn")
            if isinstance(sn, int) and sn > 0:
                for event in self._buffer:
                    if event["sn"] > sn:
                        self._ev["replayed"] += 1
                        await conn.ws.send(json.dumps({"op": 0, "body": event}))
        elif op == 1:
            self._ev["pings"] += 1
            if self.answer_pings:
                self._ev["pongs"] += 1
                await conn.ws.send(json.dumps({"op": 2, "body": {}}))
        return True

    async def _dispatch(self, event):
        self._sn += 1
        event = dict(event, sn=self._sn)
        self._buffer.append(event)
        del self._buffer[:-BUFFER_KEEP]
        delivered = 0
        for c in list(self._conns):
            if c.identified:
                try:
                    await c.ws.send(json.dumps({"op": 0, "body": event}))
                    delivered += 1
                except websockets.exceptions.ConnectionClosed:
                    pass
        return {"sn": self._sn, "delivered": delivered, "event": event}

    # -- HTTP ------------------------------------------------------------------------------------

    def _route(self, method, path, query, headers, body):
        if path.startswith("/_control/"):
            return self._control(method, path[len("/_control/"):], body)
        if not path.startswith("/v1/"):
            return Reply(404, b"not found", "text/plain")
        name = path[len("/v1/"):]
        if name not in METHODS:
            return Reply(404, b"method not found", "text/plain")
        if method != "POST":
            return Reply(405, b"Please use POST method to send requests.", "text/plain")
        auth = headers.get("authorization")
        if self.token:
            if auth is None:
                return Reply(401, b"missing authentication", "text/plain")
            if auth != "Bearer " + self.token:
                return Reply(403, b"invalid token", "text/plain")
        platform, user_id = headers.get("satori-platform"), headers.get("satori-user-id")
        login = next((l for l in self.logins
                      if l["platform"] == platform and l["user"]["id"] == user_id), None)
        if login is None:
            return Reply(403, b"login not found", "text/plain")
        try:
            args = json.loads(body.decode("utf-8")) if body else {}
        except (UnicodeDecodeError, ValueError):
            return Reply(400, b"invalid request format", "text/plain")
        if not isinstance(args, dict):
            return Reply(400, b"invalid request format", "text/plain")
        record = {"method": name, "body": args, "auth": auth is not None,
                  "platform": platform, "user_id": user_id}
        if name == "message.create":
            channel_id, content = args.get("channel_id"), args.get("content")
            if not isinstance(channel_id, str) or not isinstance(content, str):
                return Reply(400, b"channel_id and content must be strings", "text/plain")
            with self._lock:
                channel = self._channels.get(channel_id)
            if channel is None:
                return Reply(400, b"unknown channel", "text/plain")
            message = {"id": self._new_id("msg-"), "channel": channel, "user": login["user"],
                       "content": content, "created_at": _now_ms()}
            record["message_id"] = message["id"]
            with self._lock:
                self._sent.append(record)
            return json_reply(200, [message])
        if name == "user.channel.create":
            user = args.get("user_id")
            if not isinstance(user, str) or not user:
                return Reply(400, b"user_id must be a string", "text/plain")
            channel = {"id": "private:" + user, "type": 1}
            with self._lock:
                self._channels[channel["id"]] = channel
                self._sent.append(record)
            return json_reply(200, channel)
        if name == "login.get":
            return json_reply(200, login)
        return Reply(501, b"not implemented by the fake", "text/plain")

    def _control(self, method, name, body):
        args = parse_json_body(body)
        if method == "GET" and name == "sent":
            with self._lock:
                return json_reply(200, {"sent": list(self._sent)})
        if method == "GET" and name == "events":
            return json_reply(200, self._lt.run(self._event_state()))
        if method != "POST":
            raise BadRequest("unknown control call %s %s" % (method, name), 404)
        if name == "message":
            return json_reply(200, self._lt.run(self._inject_message(args)))
        if name == "channel":
            cid = args.get("id")
            if not isinstance(cid, str) or not cid:
                raise BadRequest("id must be a string")
            with self._lock:
                self._channels[cid] = {"id": cid, "type": int(args.get("type", 0))}
            return json_reply(200, self._channels[cid])
        if name == "raw":
            text = args.get("text")
            if not isinstance(text, str):
                raise BadRequest("text must be a string")
            return json_reply(200, {"sent": self._lt.run(self._raw(text))})
        if name in ("drop", "close"):
            return json_reply(200, {"connections": self._lt.run(self._end(name, args))})
        if name == "config":
            if "answer_pings" in args:
                self.answer_pings = bool(args["answer_pings"])
            return json_reply(200, {"answer_pings": self.answer_pings})
        raise BadRequest("unknown control call " + name, 404)

    async def _inject_message(self, args):
        channel_id, user, content = args.get("channel_id"), args.get("user"), args.get("content")
        if not isinstance(channel_id, str) or not isinstance(user, dict) or \
                not isinstance(user.get("id"), str) or not isinstance(content, str):
            raise BadRequest("channel_id, user.id and content are required strings")
        ctype = int(args.get("channel_type", 0))
        channel = {"id": channel_id, "type": ctype}
        with self._lock:
            self._channels[channel_id] = channel
        login = self.login
        if args.get("platform"):
            login = next((l for l in self.logins if l["platform"] == args["platform"]), login)
        event = {"type": "message-created", "timestamp": _now_ms(),
                 "login": {"sn": login["sn"], "platform": login["platform"],
                           "user": login["user"]},
                 "channel": channel, "user": user,
                 "message": {"id": args.get("message_id") or self._new_id("in-"),
                             "content": content, "created_at": _now_ms()}}
        if args.get("guild_id"):
            event["guild"] = {"id": args["guild_id"], "name": "Guild"}
            event["member"] = {"nick": user.get("nick") or user.get("name") or ""}
        return await self._dispatch(event)

    async def _raw(self, text):
        n = 0
        for c in list(self._conns):
            if c.identified:
                await c.ws.send(text)
                n += 1
        return n

    async def _end(self, name, args):
        conns = list(self._conns)
        for c in conns:
            if name == "drop":
                self._ev["closes"].append({"conn": c, "code": 1006, "by": "server"})
                c.ws.transport.abort()
            else:
                await self._close(c, int(args.get("code", 4000)), str(args.get("reason", "")))
        return len(conns)

    async def _event_state(self):
        e = {k: list(v) if isinstance(v, list) else v for k, v in self._ev.items()}
        e["closes"] = [{"code": c["code"], "by": c["by"]} for c in e["closes"]]
        e["connected"] = len(self._conns)
        e["identified"] = sum(1 for c in self._conns if c.identified)
        e["last_sn"] = self._sn
        return e


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake Satori SDK (events WebSocket + HTTP API)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--token", default=DEFAULT_TOKEN)
    ap.add_argument("--platform", default="llonebot")
    ap.add_argument("--self-id", default="10001")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    fake = FakeSatori(args.host, args.port, args.token, args.platform, args.self_id, args.verbose)
    return serve_cli(fake, lambda f: "FAKE_SATORI_PORT=%d FAKE_SATORI_WS_PORT=%d" % (
        f.port, f.ws_port))


if __name__ == "__main__":
    sys.exit(main())
