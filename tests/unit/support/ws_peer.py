#!/usr/bin/env python3
"""An independent WebSocket peer for websocket_test, built on the `websockets` library (Debian:
python3-websockets) rather than on our code: an echo server on ws, the same on wss when --cert and
--key are given, and a tiny HTTP CONNECT proxy that records each request and tunnels it to
127.0.0.1 (test host names need not resolve). Prints WS_PORT=, WSS_PORT= and PROXY_PORT= lines,
then serves until killed.

Text commands: "fragments" (a reply sent as three fragments), "headers" (the upgrade request's
headers as JSON, names lower-cased), "path" (the request target), "close <code> <reason>",
"proxy-log" (the proxy's requests as JSON); anything else is echoed as it came.
"""
import argparse
import asyncio
import json
import ssl
import sys

import websockets

tunnels = []


async def serve_socket(ws, path=None):
    try:
        await answer(ws)
    except websockets.ConnectionClosed:
        pass  # tests drop connections without a close frame on purpose


async def answer(ws):
    async for message in ws:
        if message == "fragments":
            await ws.send(["frag", "mented ", "reply"])
        elif message == "headers":
            headers = {name.lower(): value for name, value in ws.request_headers.raw_items()}
            await ws.send(json.dumps(headers))
        elif message == "path":
            await ws.send(ws.path)
        elif isinstance(message, str) and message.startswith("close "):
            _, code, reason = message.split(" ", 2)
            await ws.close(int(code), reason)
        elif message == "proxy-log":
            await ws.send(json.dumps(tunnels))
        else:
            await ws.send(message)


async def pump(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def serve_proxy(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    auth = ""
    for line in lines[1:]:
        if line.lower().startswith("proxy-authorization:"):
            auth = line.split(":", 1)[1].strip()
    tunnels.append(f"{method} {target} auth={auth}")
    if method != "CONNECT":
        writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    port = int(target.rsplit(":", 1)[1])
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()
    await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    plain = await websockets.serve(serve_socket, "127.0.0.1", 0)
    print(f"WS_PORT={plain.sockets[0].getsockname()[1]}", flush=True)
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        secure = await websockets.serve(serve_socket, "127.0.0.1", 0, ssl=context)
        print(f"WSS_PORT={secure.sockets[0].getsockname()[1]}", flush=True)
    proxy = await asyncio.start_server(serve_proxy, "127.0.0.1", 0)
    print(f"PROXY_PORT={proxy.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
