"""How each cost grows with the number online: the tag, a record, a bare
``ZADD``, pruning, and memory per member.

Sets are filled directly with pipelined ``ZADD``s, scored with the Redis
server's clock as the app scores them, on the run's own redis-server; every
key written is under the app's prefix and deleted again.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIRequest
from django.template import Context, Template
from redis import Redis

from benchmarks import app
from benchmarks.common import (
    fill,
    log_every_command,
    per_call,
    percentile,
    server_now,
    slowlog,
)
from benchmarks.per_request import counting, environ

NAMES = 50  # WHOS_ONLINE_MAX_NAMES' default: the users the tag looks up


@cache
def admin() -> Redis:
    """A client with no timeout, for sets of millions of members."""
    return Redis.from_url(os.environ["BENCH_REDIS_URL"])


def delete_keys() -> None:
    for name in admin().scan_iter(match=app.key("*"), count=1000):
        admin().delete(name)


def ensure_users(count: int) -> None:
    """Users with primary keys up to ``count``, so the tag finds names."""
    manager = get_user_model()._default_manager
    start = manager.count() + 1
    manager.bulk_create(
        [manager.model(username=f"u{i}") for i in range(start, count + 1)]
    )


def measure_size(
    size: int, rounds: int, block: int, guarded: Callable[[], object]
) -> dict[str, Any]:
    """Users 1..size online, user 1 seen last (so the 50 newest exist),
    each call timed in interleaved rounds."""
    delete_keys()
    users, now = app.key("users"), server_now(admin())
    fill(admin(), ((users, str(pk), now - pk * 1e-4) for pk in range(1, size + 1)))
    tag, member = Template(app.TAG), str(size // 2 + 1)  # member: mid-set
    client = Redis.from_url(os.environ["BENCH_REDIS_URL"])
    jobs: dict[str, tuple[Callable[[], object], int]] = {
        "tag": (lambda: tag.render(Context()), block),
        "snapshot": (lambda: app.snapshot(NAMES), block),
        "record": (lambda: app.record("users", member), block * 2),
        "zadd": (lambda: client.zadd(users, {member: time.time()}), block * 2),
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
    usage = (admin().memory_usage(users, samples=0) or 0) / max(admin().zcard(users), 1)
    delete_keys()
    tag_counts = {"tag_redis": counts["redis"], "tag_sql": counts["sql"]}
    return {"size": size, "timings": timings, **tag_counts, "memory_per_member": usage}


def measure_prune(size: int, repeats: int) -> dict[str, Any]:
    """``prune()`` against one ZREMRANGEBYSCORE on an identical copy, and a
    third copy pruned with the same batches as plain ZREMRANGEBYRANKs from
    Python: what batching itself costs Redis. ``size`` stale guests and 1%
    as many online, so none may simply drop the key. SLOWLOG (every command
    logged) gives each command's time inside Redis."""
    client, online = admin(), max(size // 100, 1)
    guests, copy, ranks, source = map(app.key, ("guests", "copy", "ranks", "source"))
    key = guests.encode()
    wall: dict[str, list[float]] = {"prune": [], "zrem": [], "rank": []}
    inside: dict[str, list[int]] = {"prune": [], "zrem": [], "rank": []}
    longest, batches, first = [], [], 0
    log_every_command(client)
    for repeat in range(repeats):
        delete_keys()
        now = server_now(client)
        stale = now - app.window() - 3600
        fill(client, ((source, f"g{i}", stale - i * 1e-3) for i in range(size)))
        fill(client, ((source, f"o{i}", now - i * 1e-3) for i in range(online)))
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
                client.zremrangebyrank(ranks, 0, min(app.PRUNE_BATCH, size - i) - 1)
                for i in range(0, size, app.PRUNE_BATCH)
            ],  # fmt: skip
        }
        client.slowlog_reset()
        for name in list(steps)[repeat % 3 :] + list(steps)[: repeat % 3]:
            start = time.perf_counter()
            steps[name]()
            wall[name].append(time.perf_counter() - start)
        if {client.zcard(k) for k in (guests, copy, ranks)} != {online}:
            raise RuntimeError(f"prune benchmark: not {online} left in each set")
        entries = slowlog(client)
        scripts = [us for line, us in entries if line.upper().startswith(b"EVALSHA")]
        ours = [
            us for line, us in entries if line.startswith(b"EVALSHA") and key in line
        ]
        first, batches = first or len(ours), batches + ours
        longest.append(max(scripts))
        inside["prune"].append(sum(scripts))
        # Redis 7 also logs the commands a script calls: pick by key.
        for name, key in (("zrem", copy), ("rank", ranks)):
            inside[name].append(sum(us for line, us in entries if key.encode() in line))
    log_every_command(client, on=False)
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


def guest_member(address: str) -> str:
    """A guest's member as the app stores it (whatever address privacy)."""
    return app.guest(WSGIRequest(environ("/", {}, address))).member


def measure_memory(size: int) -> list[dict[str, Any]]:
    """MEMORY USAGE (every element sampled) per member of each kind."""
    kinds: dict[str, tuple[str, Callable[[int], str]]] = {
        "users": ("users", lambda i: str(i + 1)),
        "IPv4 guests": ("guests", lambda i: guest_member(ipv4(i))),
        "IPv6 guests": ("guests", lambda i: guest_member(ipv6(i))),
    }
    results, now = [], server_now(admin())
    for label, (kind, member_of) in kinds.items():
        name = app.key(kind)
        fill(admin(), ((name, member_of(i), now - i * 1e-4) for i in range(size)))
        count, usage = admin().zcard(name), admin().memory_usage(name, samples=0) or 0
        example = member_of(12345)
        results.append({"kind": label, "size": count, "example": example})
        results[-1]["bytes_per_member"] = usage / count
        admin().delete(name)
    return results
