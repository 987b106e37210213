"""Memory and operations per second with 10 thousand to 10 million online.

    .venv/bin/python -m benchmarks.scaling                      # 10k and 1M
    .venv/bin/python -m benchmarks.scaling --sizes 10000 1000000 10000000

For each size it fills one site's sets on a redis-server of its own (a
quarter users, three quarters guests, half of them IPv4 and half IPv6; one
in ten last seen before the window, for pruning to remove), then measures:

- memory: ``used_memory`` before and after, and ``MEMORY USAGE`` of each key;
- records per second through ``presence.record`` (one EVALSHA each) from
  threads of this process, and the server's own time per record
  (``INFO commandstats``), which bounds what one Redis core can take;
- a snapshot (the widget's one script), and pruning the stale tenth, with
  the longest single prune script taken from ``SLOWLOG``.

It prints a Markdown report. Nothing but its own redis-server is touched.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import django  # noqa: E402
from django.conf import settings  # noqa: E402
from redis import Redis, RedisError  # noqa: E402

from benchmarks.servers import redis_server  # noqa: E402

PREFIX = "scaling"
WINDOW = 15 * 60
FILL_CHUNK = 5_000
SNAPSHOTS = 300
# WHOS_ONLINE_MAX_MEMBERS (100,000 by default) high enough never to trim here.
NO_CAP = 1_000_000_000
MIB = 2**20


@dataclass
class Result:
    size: int
    fill_seconds: float
    used_memory: int
    key_memory: dict[str, int]
    records_per_second: dict[int, float]  # by threads
    record_server_us: float
    snapshot_ms: float
    snapshot_server_us: float
    prune_seconds: float
    pruned: int
    prune_longest_us: int
    record_longest_us: int

    @property
    def bytes_per_member(self) -> float:
        return self.used_memory / self.size


def set_up(url: str, max_members: int) -> None:
    settings.configure(
        SECRET_KEY="scaling",
        INSTALLED_APPS=[
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "whos_online",
        ],
        CACHES={
            "default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": url}
        },
        WHOS_ONLINE_KEY_PREFIX=PREFIX,
        WHOS_ONLINE_WINDOW=WINDOW,
        WHOS_ONLINE_MAX_MEMBERS=max_members,
    )
    django.setup()


def members(size: int) -> Iterator[tuple[str, str]]:
    """``(kind, member)``: a quarter users, the rest guests, half of them IPv6."""
    for n in range(size):
        if n % 4 == 0:
            yield "users", str(1_000_000 + n)
        elif n % 2:
            yield (
                "guests",
                f"{10 + n // 16_777_216}.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}",
            )
        else:
            yield "guests", f"2001:db8:{n // 65536:x}:{n % 65536:x}::1"


def fill(client: Redis, size: int) -> float:
    from whos_online import presence

    seconds, micros = client.time()
    now = seconds + micros / 1e6
    start = time.perf_counter()
    batch: dict[str, dict[str, float]] = {"users": {}, "guests": {}}
    for n, (kind, member) in enumerate(members(size)):
        # One in ten was last seen before the window; the rest within it.
        age = WINDOW + 60 + n % 600 if n % 10 == 9 else (n * 7919) % WINDOW
        batch[kind][member] = now - age
        if n % FILL_CHUNK == FILL_CHUNK - 1 or n == size - 1:
            with client.pipeline(transaction=False) as pipe:
                for name, scores in batch.items():
                    if scores:
                        pipe.zadd(presence.key(name), scores)
                pipe.execute()
            batch = {"users": {}, "guests": {}}
    return time.perf_counter() - start


def record_rate(threads: int, seconds: float, offset: int) -> float:
    """Records per second of new guests from ``threads`` threads."""
    from whos_online import presence

    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def work(index: int) -> None:
        n = offset + index * 10_000_000
        while time.perf_counter() < stop:
            try:
                presence.record(
                    "guests", f"2001:db8:ffff:{n // 65536:x}:{n % 65536:x}::2"
                )
            except RedisError:  # the app's 0.25 s timeout, on a busy machine
                failures[0] += 1
            else:
                counts[index] += 1
            n += 1

    failures = [0]

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    began = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failures[0]:
        print(f"{failures[0]} records failed with {threads} threads", file=sys.stderr)
    return sum(counts) / (time.perf_counter() - began)


def evalsha_us(client: Redis) -> float:
    stats: dict[str, Any] = client.info("commandstats")
    return float(stats["cmdstat_evalsha"]["usec_per_call"])


def measure(client: Redis, size: int, seconds: float, threads: list[int]) -> Result:
    from whos_online import presence

    client.memory_purge()
    before = int(client.info("memory")["used_memory"])
    fill_seconds = fill(client, size)
    used = int(client.info("memory")["used_memory"]) - before
    keys = [presence.key(kind) for kind in ("users", "guests")]
    key_memory = {name: int(client.memory_usage(name, samples=0) or 0) for name in keys}

    presence.record("guests", "192.0.2.1")  # loads the script
    client.config_set("slowlog-log-slower-than", 0)
    client.config_set("slowlog-max-len", 1_000_000)
    client.slowlog_reset()
    client.config_resetstat()
    rates = {}
    for n, count in enumerate(threads):
        rates[count] = record_rate(count, seconds, offset=n * 100_000_000)
    record_us = evalsha_us(client)
    record_longest = longest_script(client)

    client.config_resetstat()
    timings = []
    for _ in range(SNAPSHOTS):
        start = time.perf_counter()
        presence.snapshot(50, guest_limit=50)
        timings.append(time.perf_counter() - start)
    snapshot_us = evalsha_us(client)

    client.slowlog_reset()
    start = time.perf_counter()
    pruned = sum(presence.prune().values())
    prune_seconds = time.perf_counter() - start
    prune_longest = longest_script(client)
    client.config_set("slowlog-log-slower-than", 10_000)

    for name in client.scan_iter(match=f"{{{PREFIX}}}:*"):
        client.delete(name)
    return Result(
        size=size,
        fill_seconds=fill_seconds,
        used_memory=used,
        key_memory=key_memory,
        records_per_second=rates,
        record_server_us=record_us,
        snapshot_ms=statistics.median(timings) * 1000,
        snapshot_server_us=snapshot_us,
        prune_seconds=prune_seconds,
        pruned=pruned,
        prune_longest_us=prune_longest,
        record_longest_us=record_longest,
    )


def longest_script(client: Redis) -> int:
    """Microseconds of the longest EVALSHA in the slow log (which logs all)."""
    entries: list[dict[str, Any]] = client.slowlog_get(1_000_000)
    return max((entry["duration"] for entry in entries if _is_script(entry)), default=0)


def _is_script(entry: dict[str, Any]) -> bool:
    command = entry["command"]
    if isinstance(command, str):
        command = command.encode()
    return bytes(command).upper().startswith(b"EVALSHA")


def report(results: list[Result], threads: list[int]) -> str:
    memory = [
        "| Online | Fill | used_memory | Bytes per member | MEMORY USAGE of the sets |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    operations = [
        "| Online"
        + "".join(f" | Records/s, {n} thread(s)" for n in threads)
        + " | Server µs per record (longest) | Snapshot ms (server µs)"
        + " | Pruning the stale members (longest script) |",
        "| ---:" * (4 + len(threads)) + " |",
    ]
    for r in results:
        sets = sum(r.key_memory.values()) / MIB
        memory.append(
            f"| {r.size:,} | {r.fill_seconds:.1f} s | {r.used_memory / MIB:,.1f} MiB"
            f" | {r.bytes_per_member:.0f} | {sets:,.1f} MiB |"
        )
        batches = math.ceil(r.pruned / 10_000)
        operations.append(
            f"| {r.size:,}"
            + "".join(f" | {r.records_per_second[n]:,.0f}" for n in threads)
            + f" | {r.record_server_us:.1f} ({r.record_longest_us / 1000:.1f} ms)"
            f" | {r.snapshot_ms:.2f} ({r.snapshot_server_us:.0f})"
            f" | {r.pruned:,} in {r.prune_seconds:.2f} s, {batches} batches"
            f" ({r.prune_longest_us / 1000:.1f} ms) |"
        )
    return "\n".join([*memory, "", *operations])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir, redis_server(Path(workdir)) as url:
        set_up(url, max_members=NO_CAP)
        client = Redis.from_url(url, socket_timeout=60)
        version = client.info("server")["redis_version"]
        results = []
        for size in args.sizes:
            results.append(measure(client, size, args.seconds, args.threads))
            print(f"measured {size:,}", file=sys.stderr)
    python = sys.version.split()[0]
    print(
        f"redis-server {version}, Python {python}, {os.cpu_count()} cores;"
        f" {args.seconds:g} s of records per thread count\n"
    )
    print(report(results, args.threads))


if __name__ == "__main__":
    main()
