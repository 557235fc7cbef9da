#!/usr/bin/env python3
"""A closed-loop HTTP/1.1 load generator in the standard library (asyncio protocols), for the
benchmarks on machines without wrk: `connections` keep-alive connections, each sending its next
request as soon as the previous answer is complete, for `duration` seconds.

    result = loadgen.run("127.0.0.1", port, requests, connections=64, duration=10)
    result.count, result.non2xx, result.rate, result.percentile(99)  # ms

`requests` is a list of complete request byte strings, used in turn (round-robin over all
connections). Answers must carry Content-Length (Switchboard's and nginx's do); a chunked or
malformed answer ends that connection and counts as an error. One Python process is one core at
most, so the figures are bounded by the generator (about 15-25k requests/s on this machine's
cores): a comparison between backends under the same generator is what they are for.
"""

import asyncio
import time


def request(method, path, body=b"", headers=None, host="127.0.0.1"):
    """The bytes of one HTTP/1.1 request."""
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: " + host]
    for k, v in (headers or {}).items():
        lines.append("%s: %s" % (k, v))
    if body or method in ("POST", "PUT"):
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Result:
    def __init__(self):
        self.count = 0
        self.non2xx = 0
        self.errors = 0
        self.latencies = []  # seconds
        self.elapsed = 0.0

    @property
    def rate(self):
        return self.count / self.elapsed if self.elapsed else 0.0

    def percentile(self, p):
        """Milliseconds."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] * 1000


class _Client(asyncio.Protocol):
    def __init__(self, source, result, deadline, done):
        self.source, self.result, self.deadline, self.done = source, result, deadline, done
        self.buf = b""
        self.transport = None
        self.sent_at = 0.0

    def connection_made(self, transport):
        self.transport = transport
        self.next()

    def next(self):
        now = time.perf_counter()
        if now >= self.deadline:
            self.transport.close()
            return
        self.sent_at = now
        self.transport.write(self.source())

    def data_received(self, data):
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].lower()
            at = head.find(b"content-length:")
            if at < 0:
                self.result.errors += 1
                self.transport.close()
                return
            length = int(head[at + 15:head.find(b"\r\n", at) if head.find(b"\r\n", at) > 0
                              else len(head)].strip())
            if len(self.buf) < end + 4 + length:
                return
            status = self.buf[9:12]
            self.buf = self.buf[end + 4 + length:]
            r = self.result
            r.count += 1
            if not status.startswith(b"2"):
                r.non2xx += 1
            r.latencies.append(time.perf_counter() - self.sent_at)
            self.next()

    def connection_lost(self, exc):
        if exc is not None:
            self.result.errors += 1
        if not self.done.done():
            self.done.set_result(None)


async def _run(targets, duration):
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    deadline = started + duration
    dones, results = [], []
    for host, port, requests, connections in targets:
        result = Result()
        results.append(result)
        index = [0]

        def source(requests=requests, index=index):
            i = index[0]
            index[0] = i + 1
            return requests[i % len(requests)]

        for _ in range(connections):
            done = loop.create_future()
            await loop.create_connection(
                lambda d=done, s=source, r=result: _Client(s, r, deadline, d), host, port)
            dones.append(done)
    await asyncio.wait_for(asyncio.gather(*dones), duration + 30)
    for result in results:
        result.elapsed = time.perf_counter() - started
    return results


def run(host, port, requests, connections=64, duration=10.0):
    return asyncio.run(_run([(host, port, requests, connections)], duration))[0]


def run_many(targets, duration=10.0):
    """Several servers at once: `targets` is [(host, port, requests, connections)]; a Result
    each."""
    return asyncio.run(_run(targets, duration))
