"""Small helpers every benchmark shares: timing, percentiles, Markdown
tables, filling sorted sets and reading Redis' own view of its time."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from redis import Redis

ROOT = Path(__file__).resolve().parent.parent


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}] {message}", flush=True)


def per_call(fn: Callable[[], object], n: int) -> float:
    """Median µs of ``n`` calls, each timed alone (a call that another
    process preempts is not the call's cost)."""
    clock = time.perf_counter_ns
    times = []
    for _ in range(n):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times) / 1000


def percentile(values: Iterable[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q / 100))] if ordered else 0


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def server_now(client: Redis) -> float:
    seconds, micros = client.time()
    return float(seconds) + micros / 1e6


def fill(client: Redis, members: Iterable[tuple[str, str, float]]) -> int:
    """ZADD every ``(key, member, score)``, 10,000 at a time; how many."""
    total = 0
    chunks: dict[str, dict[str, float]] = {}
    with client.pipeline(transaction=False) as pipe:
        for key, member, score in members:
            chunks.setdefault(key, {})[member] = score
            total += 1
            if total % 10_000 == 0:
                for name, chunk in chunks.items():
                    pipe.zadd(name, chunk)
                pipe.execute()
                chunks = {}
        for name, chunk in chunks.items():
            pipe.zadd(name, chunk)
        pipe.execute()
    return total


def slowlog(client: Redis) -> list[tuple[bytes, int]]:
    """Every logged command as ``(the command line, µs inside Redis)``."""
    entries: list[dict[str, Any]] = client.slowlog_get(-1)
    return [(_bytes(e["command"]), int(e["duration"])) for e in entries]


def log_every_command(client: Redis, on: bool = True) -> None:
    client.config_set("slowlog-log-slower-than", 0 if on else 10_000)
    client.config_set("slowlog-max-len", 1_000_000 if on else 128)
    client.slowlog_reset()


def _bytes(command: Any) -> bytes:
    return command if isinstance(command, bytes) else str(command).encode()
