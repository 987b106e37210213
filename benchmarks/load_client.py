"""The load run's visitors: each a browser with its own address and cookie
jar, sending raw HTTP/1.1 on its own connection, open-loop (its pages are
sent at fixed times whether or not earlier ones were answered), and what
they measured (benchmarks/load.py)."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

from benchmarks.bench import BROWSER


@dataclass
class Visitor:
    """One person: their own address (sent as X-Forwarded-For, the
    example's one proxy) and, per site, the cookies their browser keeps."""

    address: str
    session: str = ""  # a logged-in user's session key
    cookies: dict[int, dict[str, str]] = field(default_factory=dict)

    def request(self, port: int, path: str) -> bytes:
        jar = self.cookies.setdefault(
            port, {"sessionid": self.session} if self.session else {}
        )
        cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
        lines += [f"User-Agent: {BROWSER}", "Accept: text/html"]
        lines += ["Accept-Language: en-US,en;q=0.9", f"X-Forwarded-For: {self.address}"]
        lines += [f"Cookie: {cookie}"] if cookie else []
        lines += ["Connection: close", "", ""]
        return "\r\n".join(lines).encode()

    def keep(self, port: int, set_cookies: list[str]) -> None:
        """What a browser does with the response's Set-Cookie headers."""
        jar = self.cookies[port]
        for header in set_cookies:
            morsel_jar: SimpleCookie = SimpleCookie()
            morsel_jar.load(header)
            for name, morsel in morsel_jar.items():
                if morsel.value and morsel["max-age"] != "0":
                    jar[name] = morsel.value
                else:
                    jar.pop(name, None)


async def fetch(port: int, visitor: Visitor, path: str) -> int:
    """One page over a connection of its own, as gunicorn's sync workers
    close each after its response: the status; the visitor keeps the
    cookies. Only the status line and headers are parsed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(visitor.request(port, path))
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        await reader.read()  # the body, to the end the server closes
    finally:
        writer.close()
    visitor.keep(
        port, [h.split(":", 1)[1] for h in head if h[:11].lower() == "set-cookie:"]
    )
    return int(head[0].split()[1])


@dataclass
class Sample:
    """One case's round: the pages due in the measured window."""

    due: int = 0
    latencies: list[float] = field(default_factory=list)  # ms, answered 2xx
    errors: Counter[str] = field(default_factory=Counter)
    late: list[float] = field(default_factory=list)  # ms each was sent late
    answered_in_window: int = 0


async def open_loop(
    port: int,
    visitors: list[Visitor],
    page: Callable[[int, int], str],
    seconds: int,
    warmup: int,
    seed: int,
) -> tuple[Sample, float]:
    """Each visitor opens ``page(visitor, k)`` at second ``k`` plus a phase
    of their own, for ``warmup + seconds`` seconds; the last ``seconds``
    are measured. Returns the sample and the window's length in seconds."""
    loop = asyncio.get_running_loop()
    phases = random.Random(seed).sample(range(1000), len(visitors))
    start = loop.time() + 0.1
    window = (start + warmup, start + warmup + seconds)
    sample = Sample()

    async def visit(i: int, k: int, due: float) -> None:
        measured = k >= warmup
        sample.due += measured
        if measured:
            sample.late.append((loop.time() - due) * 1e3)
        try:
            status = await asyncio.wait_for(fetch(port, visitors[i], page(i, k)), 60)
        except (OSError, asyncio.TimeoutError, ValueError, IndexError) as error:
            sample.errors[type(error).__name__] += measured
            return
        done = loop.time()
        if not 200 <= status < 300:
            sample.errors[f"HTTP {status}"] += measured
        else:
            sample.answered_in_window += window[0] <= done < window[1]
            if measured:
                sample.latencies.append((done - due) * 1e3)

    due = sorted(
        (start + k + phases[i] / 1000, i, k)
        for k in range(warmup + seconds)
        for i in range(len(visitors))
    )
    tasks = []
    for at, i, k in due:
        if (delay := at - loop.time()) > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(visit(i, k, at)))
    await asyncio.gather(*tasks)
    return sample, float(seconds)


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered)) - 1))]
