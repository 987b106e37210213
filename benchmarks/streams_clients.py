"""The live run's clients (benchmarks/streams.py): N streams opened on the
event loop, then read from one epoll in plain Python, as cheaply as this
process can, since real readers are browsers elsewhere; and N tabs polling
the widget fragment."""

from __future__ import annotations

import asyncio
import os
import select
import time
from dataclasses import dataclass, field
from typing import Any

STREAM = "/whos-online/stream/"
FRAGMENT = "/whos-online/widget/"
POLL_SECONDS = 30  # how often a tab that cannot stream asks
# Streams being opened at once: a burst of page loads, not a SYN flood.
OPENING = 100
# The one visitor whose tabs the streams are (the load generator stands for
# the site's one proxy, which sends it in X-Forwarded-For).
VISITOR = "192.0.2.1"


def request(port: int, path: str, address: str, close: bool = False) -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += ["User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0"]
    lines += ["Accept: text/event-stream" if path == STREAM else "Accept: */*"]
    lines += ["Accept-Language: en-US,en;q=0.9", f"X-Forwarded-For: {address}"]
    lines += ["Connection: close"] if close else []
    return "\r\n".join([*lines, "", ""]).encode()


async def get(port: int, path: str, address: str = VISITOR) -> int:
    """One request on a connection of its own: the status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request(port, path, address, close=True))
        head = await reader.readuntil(b"\r\n\r\n")
        await reader.read()
    finally:
        writer.close()
    return int(head.split()[1])


@dataclass
class Clients:
    """The open streams: each opened on the event loop, then read by
    :meth:`hear` from one epoll, in plain Python, so that what this process
    spends reading 10,000 sockets (real readers are browsers elsewhere)
    is a few µs an event, not an asyncio task's wake-up each."""

    n: int
    opened: int = 0
    failed: int = 0
    ended: int = 0  # streams the server closed (dropped, or Redis lost)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    heard: dict[int, int] = field(default_factory=dict)  # fd -> last join had

    async def client(self, port: int, address: str, gate: asyncio.Semaphore) -> None:
        try:
            async with gate:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(request(port, STREAM, address))
                head = await reader.readuntil(b"\r\n\r\n")
                if int(head.split()[1]) != 200:
                    raise ValueError(head.split(b"\r\n")[0].decode())
                while b"id: " not in await reader.readuntil(b"\n\n"):
                    pass
        except (OSError, ValueError, asyncio.IncompleteReadError):
            self.failed += 1
        else:
            # From now on the epoll reads it, not the loop.
            writer.transport.pause_reading()  # type: ignore[attr-defined]
            self.writers.append(writer)
            self.heard[writer.get_extra_info("socket").fileno()] = 0
        self.count()

    def count(self) -> None:
        self.opened += 1
        if self.opened == self.n:
            self.opened -= self.failed
            self.ready.set()

    def hear(self, join: int, at: float, deadline: float) -> list[float]:
        """Read every open stream until each had an event after join number
        ``join``, recorded at ``at`` (``perf_counter``), or ``deadline``
        seconds passed: each stream's delay."""
        poller = select.epoll()
        for fd in self.heard:
            poller.register(fd, select.EPOLLIN)
        delays: list[float] = []
        waiting = sum(1 for had in self.heard.values() if had < join)
        try:
            while waiting and time.perf_counter() - at < deadline:
                for fd, _ in poller.poll(0.1):
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:
                        continue
                    now = time.perf_counter()
                    if not chunk:
                        poller.unregister(fd)
                        waiting -= self.heard.pop(fd) < join
                        self.ended += 1
                    elif b"id: " in chunk and self.heard[fd] < join:
                        self.heard[fd] = join
                        delays.append(now - at)
                        waiting -= 1
        finally:
            poller.close()
        return delays

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


async def open_streams(port: int, n: int, new_guests: bool) -> Clients:
    """N streams, as tabs of one visitor already counted (a stream opening
    announces nothing), or, ``new_guests``, each of a visitor of its own
    address whom it counts as they open: N joins at once."""
    clients = Clients(n)
    gate = asyncio.Semaphore(OPENING)
    opening = []
    for i in range(n):
        address = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
        address = address if new_guests else VISITOR
        opening.append(asyncio.create_task(clients.client(port, address, gate)))
    await clients.ready.wait()
    await asyncio.gather(*opening)
    return clients


async def poll(port: int, n: int, seconds: float) -> dict[str, Any]:
    """N tabs polling the fragment every 30 s, open-loop for ``seconds``:
    N / 30 requests a second sent at fixed times."""
    loop = asyncio.get_running_loop()
    rate = n / POLL_SECONDS
    count = max(1, round(rate * seconds))
    start, latencies, errors = loop.time() + 0.05, [], 0

    async def one(i: int, due: float) -> None:
        nonlocal errors
        try:
            address = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
            code = await asyncio.wait_for(get(port, FRAGMENT, address), 60)
        except (OSError, ValueError, asyncio.TimeoutError):
            errors += 1
            return
        if code != 200:
            errors += 1
        else:
            latencies.append((loop.time() - due) * 1e3)

    tasks = []
    for i in range(count):
        due = start + i / rate
        if (delay := due - loop.time()) > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i % n, due)))
    await asyncio.gather(*tasks)
    return {"requests": count, "rate": rate, "errors": errors, "latencies": latencies}
