"""How each cost grows with the number online: the tag, a record, a bare
``ZADD``, pruning, and memory per member.

Sets are filled directly with ``ZADD``s of 10,000 members, scored with the
Redis server's clock as the app scores them, on the run's own redis-server;
every key written is under the app's prefix and deleted again.
"""

from __future__ import annotations

import itertools
import os
import statistics
import time
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIRequest
from django.template import Context, Template
from redis import Redis

from benchmarks import app
from benchmarks.common import per_call, percentile
from benchmarks.per_request import counting
from benchmarks.stacks import environ

NAMES = 50  # WHOS_ONLINE_MAX_NAMES' default: the users the tag looks up


@cache
def admin() -> Redis:
    """A client with no timeout, for sets of a million members."""
    return Redis.from_url(os.environ["BENCH_REDIS_URL"])


def now() -> float:
    seconds, micros = admin().time()
    return float(seconds) + micros / 1e6


def fill(key: str, members: Iterable[tuple[str, float]]) -> None:
    """ZADD every ``(member, score)`` to ``key``, 10,000 at a time."""
    members = iter(members)
    while chunk := dict(itertools.islice(members, 10_000)):
        admin().zadd(key, chunk)


def delete_keys() -> None:
    for name in admin().scan_iter(match=app.key("*"), count=1000):
        admin().delete(name)


def ensure_users(count: int) -> None:
    """Users with primary keys up to ``count``, so the tag finds names."""
    manager = get_user_model()._default_manager
    users = range(manager.count() + 1, count + 1)
    manager.bulk_create([manager.model(username=f"u{i}") for i in users])


def measure_size(
    size: int, rounds: int, block: int, guarded: Callable[[], object]
) -> dict[str, Any]:
    """Users 1..size online, user 1 seen last (so the 50 newest exist),
    each call timed in interleaved rounds."""
    delete_keys()
    users, start = app.key("users"), now()
    fill(users, ((str(pk), start - pk * 1e-4) for pk in range(1, size + 1)))
    tag, member = Template(app.TAG), str(size // 2 + 1)  # member: mid-set
    jobs: dict[str, tuple[Callable[[], object], int]] = {
        "tag": (lambda: tag.render(Context()), block),
        "snapshot": (lambda: app.snapshot(NAMES), block),
        "record": (lambda: app.record("users", member), block * 2),
        "zadd": (lambda: admin().zadd(users, {member: time.time()}), block * 2),
        "guarded": (guarded, block * 50),
    }
    for fn, _ in jobs.values():  # scripts loaded, template compiled
        fn()
    with counting() as counts:
        tag.render(Context())
    timings: dict[str, list[float]] = {name: [] for name in jobs}
    for round_ in range(rounds):
        for name in list(jobs)[round_ % 5 :] + list(jobs)[: round_ % 5]:
            timings[name].append(per_call(*jobs[name]))
    usage = (admin().memory_usage(users, samples=0) or 0) / admin().zcard(users)
    delete_keys()
    tag_counts = {"tag_redis": counts["redis"], "tag_sql": counts["sql"]}
    return {"size": size, "timings": timings, **tag_counts, "memory_per_member": usage}


def slowlog() -> list[tuple[bytes, int]]:
    """Every command Redis logged, as ``(command line, µs inside Redis)``."""
    entries: list[dict[str, Any]] = admin().slowlog_get(-1)
    admin().slowlog_reset()
    return [(bytes(e["command"]), int(e["duration"])) for e in entries]


def measure_prune(size: int, repeats: int) -> dict[str, Any]:
    """``prune()`` against one ZREMRANGEBYSCORE on an identical copy, and a
    third copy pruned with the same batches as plain ZREMRANGEBYRANKs from
    Python: what batching itself costs Redis. ``size`` stale guests and 1%
    as many online, so none may simply drop the key. SLOWLOG, logging every
    command, gives each one's time inside Redis."""
    client, online, batch = admin(), max(size // 100, 1), app.PRUNE_BATCH
    guests, copy, ranks, source = map(app.key, ("guests", "copy", "ranks", "source"))
    wall: dict[str, list[float]] = {"prune": [], "zrem": [], "rank": []}
    inside: dict[str, list[int]] = {"prune": [], "zrem": [], "rank": []}
    longest: list[int] = []
    batches: list[int] = []
    first = 0
    client.config_set("slowlog-log-slower-than", 0)
    client.config_set("slowlog-max-len", 1_000_000)
    for repeat in range(repeats):
        delete_keys()
        start = now()
        stale = start - app.window() - 3600
        fill(source, ((f"g{i}", stale - i * 1e-3) for i in range(size)))
        fill(source, ((f"o{i}", start - i * 1e-3) for i in range(online)))
        # All three are COPYs: a set COPY built is laid out more compactly
        # than one ZADDs built (deleting from it took 0.8× the time).
        for name in (guests, copy, ranks):
            client.copy(source, name)
        client.delete(source)
        app.prune(dry_run=True)  # scripts loaded; nothing removed
        steps: dict[str, Callable[[], object]] = {
            "prune": app.prune,
            "zrem": lambda: client.zremrangebyscore(copy, "-inf", stale + 1),  # noqa: B023
            "rank": lambda: [
                client.zremrangebyrank(ranks, 0, min(batch, size - i) - 1)
                for i in range(0, size, batch)
            ],
        }
        slowlog()
        for name in list(steps)[repeat % 3 :] + list(steps)[: repeat % 3]:
            began = time.perf_counter()
            steps[name]()
            wall[name].append(time.perf_counter() - began)
        if {client.zcard(name) for name in (guests, copy, ranks)} != {online}:
            raise RuntimeError(f"prune benchmark: not {online} left in each set")
        # Redis 7 also logs the commands a script calls: pick by name and key.
        logged = slowlog()
        scripts = [us for line, us in logged if line.upper().startswith(b"EVALSHA")]
        ours = [us for line, us in logged if b"EVALSHA" in line and b":guests" in line]
        first, batches = first or len(ours), batches + ours
        longest.append(max(scripts))
        inside["prune"].append(sum(scripts))
        for name, key in (("zrem", copy), ("rank", ranks)):
            inside[name].append(sum(us for line, us in logged if key.encode() in line))
    client.config_set("slowlog-log-slower-than", 10_000)
    client.config_set("slowlog-max-len", 128)
    delete_keys()
    return {
        "size": size,
        "online": online,
        **{f"{k}_seconds": v for k, v in wall.items()},
        **{f"{k}_server_us": int(statistics.median(v)) for k, v in inside.items()},
        "batches": first,
        "longest_batch_us": max(longest),
        "median_batch_us": int(statistics.median(batches)),
        "p99_batch_us": int(percentile(batches, 99)),
    }


def ipv4(i: int) -> str:
    return f"{(i >> 24) % 223 + 1}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def ipv6(i: int) -> str:
    """Full-length addresses, as privacy extensions and SLAAC hand them out."""
    parts = [i * 2654435761, i >> 16, i * 40503 | 0x1000, i * 69069 | 0x1000]
    parts += [i * 1103 | 0x1000, i | 0x1000]
    return "2001:db8:" + ":".join(f"{p & 0xFFFF:x}" for p in parts)


def measure_memory(size: int) -> list[dict[str, Any]]:
    """MEMORY USAGE (every element sampled) per member, as the app stores
    each kind: guests through identify(), whatever the address privacy."""

    def guest(address: str) -> str:
        return app.guest(WSGIRequest(environ("/", {}, address))).member

    kinds: dict[str, tuple[str, Callable[[int], str]]] = {
        "users": ("users", lambda i: str(i + 1)),
        "IPv4 guests": ("guests", lambda i: guest(ipv4(i))),
        "IPv6 guests": ("guests", lambda i: guest(ipv6(i))),
    }
    results, start = [], now()
    for label, (kind, member_of) in kinds.items():
        name = app.key(kind)
        fill(name, ((member_of(i), start - i * 1e-4) for i in range(size)))
        count, usage = admin().zcard(name), admin().memory_usage(name, samples=0) or 0
        example = member_of(12345)
        results.append({"kind": label, "size": count, "example": example})
        results[-1]["bytes_per_member"] = usage / count
        admin().delete(name)
    return results
