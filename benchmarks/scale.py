"""How each cost grows with the number online: the tag, a record, a bare
``ZADD``, pruning, and memory per member.

The sets are filled directly with pipelined ``ZADD``s, scored with the Redis
server's clock as the app itself scores them. Only keys under the app's
prefix on the benchmark's own redis-server are written, and each is deleted
again.
"""

from __future__ import annotations

import functools
import io
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIRequest
from django.template import Context, Template
from redis import Redis

from benchmarks.per_request import BROWSER, counting
from whos_online import presence
from whos_online.connection import get_client
from whos_online.visitors import identify

FILL_CHUNK = 10_000
NAMES = 50  # WHOS_ONLINE_MAX_NAMES' default: the users the tag looks up
TAG = Template("{% load whos_online %}{% whos_online %}")


@dataclass
class SizeResult:
    size: int
    timings: dict[str, list[float]] = field(
        default_factory=dict
    )  # µs per call, per round
    tag_redis: list[str] = field(default_factory=list)
    tag_sql: int = 0
    memory_per_member: float = 0.0

    def median(self, name: str) -> float:
        return statistics.median(self.timings[name])


@dataclass
class PruneResult:
    size: int
    online: int  # members still online, left in place
    prune_seconds: list[float]
    zrem_seconds: list[float]
    batches: int
    longest_batch_us: int  # server time of the longest prune script (SLOWLOG)
    median_batch_us: int
    p99_batch_us: int
    prune_server_us: int  # server time of all prune scripts
    zrem_server_us: int  # server time of the one ZREMRANGEBYSCORE
    # The same batches as plain ZREMRANGEBYRANKs from Python, without a script.
    rank_seconds: list[float]
    rank_server_us: int


@dataclass
class MemoryResult:
    kind: str
    size: int
    bytes_per_member: float
    example: str


@functools.cache
def admin() -> Redis:
    """A client with no timeout, for filling, copying, measuring and deleting
    sets of a million members (the app's client gives up after 0.25 s)."""
    return Redis.from_url(os.environ["BENCH_REDIS_URL"])


def server_now(client: Redis) -> float:
    seconds, micros = client.time()
    return float(seconds) + micros / 1_000_000


def fill(client: Redis, name: str, members: Iterator[tuple[str, float]]) -> int:
    """ZADD every (member, score) in pipelined chunks; how many were added."""
    total = 0
    pipe = client.pipeline(transaction=False)
    chunk: dict[str, float] = {}
    for member, score in members:
        chunk[member] = score
        if len(chunk) >= FILL_CHUNK:
            pipe.zadd(name, chunk)
            total += len(chunk)
            chunk = {}
            if len(pipe) >= 10:
                pipe.execute()
    if chunk:
        pipe.zadd(name, chunk)
        total += len(chunk)
    pipe.execute()
    return total


def delete_keys(client: Redis) -> None:
    """Every key under the app's prefix (on the benchmark's own server)."""
    for name in client.scan_iter(match=presence.key("*"), count=1000):
        client.delete(name)


def ensure_users(count: int) -> None:
    """Users with primary keys 1..count, so the tag finds the newest names."""
    model = get_user_model()
    have = model._default_manager.count()
    model._default_manager.bulk_create(
        [model(username=f"bench-user-{i}") for i in range(have + 1, count + 1)]
    )


def online_users(size: int, now: float) -> Iterator[tuple[str, float]]:
    """Users 1..size, all within the window; user 1 seen last, so the 50
    newest are users that exist."""
    for pk in range(1, size + 1):
        yield str(pk), now - pk * 1e-4


def per_call(fn: Callable[[], object], n: int) -> float:
    """Median µs per call of ``n`` calls."""
    clock = time.perf_counter_ns
    times = []
    for _ in range(n):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times) / 1000


def measure_size(
    size: int, rounds: int, guarded_call: Callable[[], object], quick: bool
) -> SizeResult:
    client = get_client()
    delete_keys(admin())
    users = presence.key("users")
    fill(admin(), users, online_users(size, server_now(admin())))
    result = SizeResult(size=size)
    block = 5 if quick else 20
    member = str(size // 2 + 1)  # a member in the middle of the set
    jobs: dict[str, tuple[Callable[[], object], int]] = {
        "tag": (lambda: TAG.render(Context()), block),
        "snapshot": (lambda: presence.snapshot(NAMES), block),
        "record": (lambda: presence.record("users", member), block * 2),
        "zadd": (lambda: client.zadd(users, {member: time.time()}), block * 2),
        "guarded": (guarded_call, block * 50),
    }
    for fn, _ in jobs.values():
        fn()  # warm: scripts loaded, template compiled
    with counting() as counts:
        TAG.render(Context())
    result.tag_redis = counts.redis
    result.tag_sql = counts.sql
    result.timings = {name: [] for name in jobs}
    for round_ in range(rounds):
        names = list(jobs)
        names = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in names:
            fn, n = jobs[name]
            result.timings[name].append(per_call(fn, n))
    usage = admin().memory_usage(users, samples=0) or 0
    result.memory_per_member = usage / max(admin().zcard(users), 1)
    delete_keys(admin())
    return result


def _slowlog(client: Redis) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = client.slowlog_get(-1)
    return entries


def measure_prune(size: int, repeats: int, window: int) -> PruneResult:
    """presence.prune() against one ZREMRANGEBYSCORE on an identical copy.

    The set holds ``size`` stale guests and 1% as many still online, so
    each removes exactly the stale ones and none may simply drop the key. A
    third copy is pruned with the same batches as plain ZREMRANGEBYRANKs,
    without a script: what batching itself costs Redis.
    SLOWLOG (every command logged, on our own server) gives each command's
    time inside Redis: the longest prune script is the longest time Redis
    was blocked.
    """
    client = admin()
    guests = presence.key("guests")
    copy = presence.key("bench-prune-copy")
    ranks = presence.key("bench-prune-ranks")
    source = presence.key("bench-prune-source")
    fresh = max(size // 100, 1)
    prune_seconds: list[float] = []
    zrem_seconds: list[float] = []
    rank_seconds: list[float] = []
    prune_server: list[int] = []
    zrem_server: list[int] = []
    rank_server: list[int] = []
    longest: list[int] = []
    durations: list[int] = []
    batches = 0
    client.config_set("slowlog-log-slower-than", 0)
    client.config_set("slowlog-max-len", 100_000)
    try:
        for repeat in range(repeats):
            delete_keys(client)
            now = server_now(client)
            stale_before = now - window - 3600
            stale = ((f"g{i}", stale_before - i * 1e-3) for i in range(size))
            online = ((f"o{i}", now - i * 1e-3) for i in range(fresh))
            # All three are COPYs of one set: a set that COPY built is laid out
            # in memory more compactly than one built by ZADDs, and deleting
            # from it took 0.8× the time, so none may be the original.
            fill(client, source, itertools.chain(stale, online))
            for name in (guests, copy, ranks):
                client.copy(source, name)
            client.delete(source)
            presence.prune(dry_run=True)  # scripts loaded; nothing removed
            order = ["prune", "zrem", "ranks"]
            order = order[repeat % 3 :] + order[: repeat % 3]
            client.slowlog_reset()
            for what in order:
                start = time.perf_counter()
                if what == "prune":
                    presence.prune()
                    prune_seconds.append(time.perf_counter() - start)
                elif what == "zrem":
                    client.zremrangebyscore(copy, "-inf", stale_before + 1)
                    zrem_seconds.append(time.perf_counter() - start)
                else:
                    remaining = size
                    while remaining > 0:
                        n = min(remaining, presence.PRUNE_BATCH)
                        client.zremrangebyrank(ranks, 0, n - 1)
                        remaining -= n
                    rank_seconds.append(time.perf_counter() - start)
            left = (client.zcard(guests), client.zcard(copy), client.zcard(ranks))
            if left != (fresh, fresh, fresh):
                raise RuntimeError(f"prune benchmark: {left} left, not {fresh} each")
            entries = _slowlog(client)
            scripts = [e for e in entries if _command(e).startswith("EVALSHA")]
            # Redis 7 also logs the commands a script calls: pick by key.
            zrems = [e for e in entries if copy.encode() in _args(e)]
            plain = [e for e in entries if ranks.encode() in _args(e)]
            if repeat == 0:
                batches = sum(1 for e in scripts if guests.encode() in _args(e))
            longest.append(max((int(e["duration"]) for e in scripts), default=0))
            durations += [
                int(e["duration"]) for e in scripts if guests.encode() in _args(e)
            ]
            prune_server.append(sum(int(e["duration"]) for e in scripts))
            zrem_server.append(sum(int(e["duration"]) for e in zrems))
            rank_server.append(sum(int(e["duration"]) for e in plain))
    finally:
        client.config_set("slowlog-log-slower-than", 10_000)
        client.config_set("slowlog-max-len", 128)
        client.slowlog_reset()
        delete_keys(client)
    return PruneResult(
        size=size,
        online=fresh,
        prune_seconds=prune_seconds,
        zrem_seconds=zrem_seconds,
        batches=batches,
        longest_batch_us=max(longest),
        median_batch_us=int(statistics.median(durations or [0])),
        p99_batch_us=int(percentile(durations or [0], 99)),
        prune_server_us=int(statistics.median(prune_server)),
        zrem_server_us=int(statistics.median(zrem_server)),
        rank_seconds=rank_seconds,
        rank_server_us=int(statistics.median(rank_server)),
    )


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q / 100))]


def _command(entry: dict[str, Any]) -> str:
    command = entry.get("command", b"")
    return command.decode() if isinstance(command, bytes) else str(command)


def _args(entry: dict[str, Any]) -> bytes:
    command = entry.get("command", b"")
    return command if isinstance(command, bytes) else str(command).encode()


def guest_request(address: str) -> WSGIRequest:
    return WSGIRequest(
        {
            "REMOTE_ADDR": address,
            "REQUEST_METHOD": "GET",
            "PATH_INFO": "/",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "HTTP_USER_AGENT": BROWSER,
            "wsgi.input": io.BytesIO(b""),
            "wsgi.errors": sys.stderr,
            "wsgi.url_scheme": "http",
        }
    )


def ipv4(i: int) -> str:
    return f"{(i >> 24) % 223 + 1}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def ipv6(i: int) -> str:
    # Full-length addresses, as privacy extensions and SLAAC hand them out.
    return (
        f"2001:db8:{(i * 2654435761) & 0xFFFF:x}:{(i >> 16) & 0xFFFF:x}:"
        f"{(i * 40503) & 0xFFFF | 0x1000:x}:{(i * 69069) & 0xFFFF | 0x1000:x}:"
        f"{(i * 1103) & 0xFFFF | 0x1000:x}:{i & 0xFFFF | 0x1000:x}"
    )


def measure_memory(size: int) -> list[MemoryResult]:
    """MEMORY USAGE (every element sampled) per member, for each kind of
    member as the app stores it: guest members come from ``identify()``, so
    whatever address privacy is configured is what is measured."""
    client = admin()
    results = []
    delete_keys(client)
    now = server_now(client)
    kinds: list[tuple[str, str, Callable[[int], str]]] = [
        ("users", "users", lambda i: str(i + 1)),
        ("IPv4 guests", "guests", lambda i: _member(ipv4(i))),
        ("IPv6 guests", "guests", lambda i: _member(ipv6(i))),
    ]
    for label, kind, member_of in kinds:
        name = presence.key(kind)
        added = fill(
            client, name, ((member_of(i), now - i * 1e-4) for i in range(size))
        )
        usage = client.memory_usage(name, samples=0) or 0
        count = client.zcard(name)
        results.append(
            MemoryResult(
                kind=label,
                size=count,
                bytes_per_member=usage / max(count, 1),
                example=member_of(12345),
            )
        )
        if count != added:
            print(f"  note: {label}: {added} written, {count} distinct members")
        client.delete(name)
    return results


def _member(address: str) -> str:
    visitor = identify(guest_request(address))
    if visitor is None:
        raise RuntimeError(f"identify() found no guest at {address}")
    return visitor.member
