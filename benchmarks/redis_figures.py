"""What Redis itself costs, inside the run's private redis-server: each
operation's time by ``INFO commandstats``, how many a second one core
serves, and prune at a million stale members (benchmarks/run.py)."""

from __future__ import annotations

import functools
import itertools
import random
import shutil
import subprocess
import time
from collections.abc import Callable, Collection
from contextlib import nullcontext
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test.utils import override_settings

from benchmarks import layout
from benchmarks.bench import (
    Inside,
    cookies_set,
    environ,
    log,
)
from benchmarks.figures import CSRF, World, ipv4, recorded, rounds

FLOOR_B = "ZADD renewal (floor B)"


def redis_costs(
    world: World,
    n_rounds: int,
    n: int,
    only: Collection[str] = (),
    inside: Any = None,
) -> dict[str, list[dict[str, float]]]:
    """Per operation: µs inside Redis, commands sent, µs of Redis' core;
    ``only`` these operations (and floor B) when some are named. ``inside``:
    what measures a call instead (rooms_cost.py's instructions)."""
    ours, client = world.sites["ours"], world.client
    inside = Inside(client) if inside is None else inside
    guest = world.issue("203.0.113.9", {})
    in_room = world.issue("203.0.113.9", {}, "/thread/7/")
    # A reader of their own: a device is in the rooms of its latest page, so
    # the guarded room page (another visit of 203.0.113.9) would move it.
    reading_guest = world.issue("192.0.2.77", {}, "/thread/7/")
    renewing = itertools.cycle(range(world.size))
    threads = itertools.count(2 * 10**6)
    last = {"guests": 0, "users": 0}  # the thread each reader read last
    user_in_room = world.issue("198.51.100.7", world.user(0), "/thread/7/")
    users = itertools.cycle(range(len(world.sessions)))
    pks = [str(pk) for pk in get_user_model().objects.values_list("pk", flat=True)]
    # Visitors coming back after their guard ran out, as a browsing visitor
    # does every guard period: guards of 1 s, issued, then left to run out.
    # A heartbeat then renews the user, as it does when their status could
    # turn "away" before the next one.
    short_guards = override_settings(
        WHOS_ONLINE_GUARD_SECONDS=1,
        WHOS_ONLINE_HEARTBEAT_SECONDS=2,
        WHOS_ONLINE_AWAY_AFTER=3,
    )
    with short_guards:
        lapsed_guests = [world.issue(ipv4(i), {}) for i in range(len(pks))]
        lapsed_users = [
            world.issue("198.51.100.7", world.user(i)) for i in range(len(pks))
        ]
    time.sleep(1.2)
    back = itertools.cycle(range(len(pks)))

    def reader(kind: str, address: str, cookies: dict[str, str]) -> Callable[[], None]:
        """A browser reading thread after thread, its cookies kept: each
        page a room new to the reader."""
        jar = dict(cookies)

        def read() -> None:
            last[kind] = next(threads)
            page = f"/thread/{last[kind]}/"
            jar.update(cookies_set(ours(environ(page, address, jar))))

        return read

    def zadd() -> None:
        client.zadd(layout.key("guests"), {ipv4(next(renewing)): time.time()})

    def get(
        path: str, address: str, cookies: dict[str, str], **extra: Any
    ) -> Callable[[], None]:
        return lambda: ours(environ(path, address, cookies, **extra)) and None

    def heartbeat() -> None:  # a minute after the last, as the page sends it
        i = next(users)
        cookies = lapsed_users[i] | {"csrftoken": CSRF}
        ours(
            environ(
                "/whos-online/heartbeat/", "198.51.100.7", cookies, post=True, csrf=CSRF
            )
        )

    def guest_back() -> None:
        i = next(back)
        get("/", ipv4(i), lapsed_guests[i])()

    def user_back() -> None:
        get("/", "198.51.100.7", lapsed_users[next(back)])()

    ops: dict[str, tuple[Callable[[], None], Callable[[], None] | None]] = {
        FLOOR_B: (zadd, None),
        "record guest renewal": (guest_back, None),
        "record guest entering": (lambda: get("/", next(world.fresh), {})(), None),
        # A guest's guard cookie is kept for the window: a guest who browses
        # on comes back with it, run out, and is renewed.
        "record guest returning": (guest_back, None),
        "record user renewal": (user_back, None),
        "record user entering": (
            lambda: get("/", "198.51.100.7", world.user(next(users)))(),
            lambda: layout.forget(client, "users", pks),
        ),
        "heartbeat": (heartbeat, None),
        "widget below the cap": (get("/widget/", "203.0.113.9", guest), None),
        "guarded request": (get("/", "203.0.113.9", guest), None),
        "guarded room page": (get("/thread/7/", "203.0.113.9", in_room), None),
        "guest reading thread after thread": (
            reader("guests", "192.0.2.77", reading_guest),
            None,
        ),
        "user reading thread after thread": (
            reader("users", "198.51.100.7", user_in_room),
            None,
        ),
    }
    ops["widget at the cap"] = ops["widget below the cap"]
    if only:
        ops = {name: op for name, op in ops.items() if name in {*only, FLOOR_B}}
    # A widget's cost in Redis is that of a snapshot: measured with none
    # shared across pages, which the capacity line then accounts for.
    at_cap: dict[str, Any] = {
        "widget below the cap": override_settings(WHOS_ONLINE_SNAPSHOT_MAX_AGE=0),
        "widget at the cap": override_settings(
            WHOS_ONLINE_MAX_MEMBERS=world.size, WHOS_ONLINE_SNAPSHOT_MAX_AGE=0
        ),
    }
    for name in ("record guest renewal", "record user renewal", "heartbeat"):
        at_cap[name] = short_guards
    for name, (fn, _) in ops.items():  # every user recorded once, scripts loaded
        with at_cap.get(name, nullcontext()):
            for _ in range(len(pks)):
                fn()
    with at_cap["widget at the cap"]:
        from whos_online import api

        if "widget at the cap" in ops and not api.counts().is_estimate:
            raise RuntimeError("the sets were not at their cap: mend layout.fill")
    out: dict[str, list[dict[str, float]]] = {name: [] for name in ops}
    order = list(ops)
    for r in range(n_rounds):
        random.Random(r).shuffle(order)
        for name in order:
            fn, before = ops[name]
            with at_cap.get(name, nullcontext()):
                fn()  # the settings' first call
                out[name].append(
                    inside.measure(fn, min(n, len(pks)) if before else n, before)
                )
    for kind, thread in last.items():
        if thread:
            recorded(world, thread, kind)
    return out


def throughput(
    world: World, requests: int, n_rounds: int
) -> dict[str, list[float]] | None:
    """Operations per second one Redis core serves to 50 clients, each
    sending one command at a time: redis-benchmark replays what a record
    sends (captured from redis-py), and a renewal ZADD."""
    if shutil.which("redis-benchmark") is None:
        return None
    from redis.connection import AbstractConnection

    sent: list[tuple[Any, ...]] = []
    send = AbstractConnection.send_command

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(args)
        return send(self, *args, **kwargs)

    address = ipv4(5)
    AbstractConnection.send_command = spy  # type: ignore[method-assign]
    try:
        world.sites["ours"](environ("/", address, {}))
        guest = sent[-1]
        world.sites["ours"](environ("/", "198.51.100.7", world.user(1)))
        user = sent[-1]
    finally:
        AbstractConnection.send_command = send  # type: ignore[method-assign]
    entering = ["e__rand_int__" if str(a) == address else a for a in guest]
    commands = {
        "ZADD renewal (floor B)": [
            "ZADD",
            layout.key("guests"),
            "__rand_int__",
            address,
        ],
        # The record script each time (no guard to vouch for a renewal), for
        # members online: what a browser brings back, guests above all.
        "record guest returning": list(guest),
        "record guest entering": entering,
        "record user returning": list(user),
    }
    port = str(world.client.connection_pool.connection_kwargs["port"])
    run = ["redis-benchmark", "-p", port, "-c", "50", "-n", str(requests)]

    def rate(command: list[Any]) -> float:
        args = [a.decode() if isinstance(a, bytes) else str(a) for a in command]
        world.client.execute_command(*(a.replace("__rand_int__", "7") for a in args))
        done = subprocess.run(
            [*run, "-r", "100000000", "--csv", *args], capture_output=True, text=True
        )
        return float(done.stdout.splitlines()[-1].split(",")[1].strip('"'))

    return rounds(
        {name: functools.partial(rate, c) for name, c in commands.items()}, n_rounds
    )


def prune(world: World, size: int, n_rounds: int) -> dict[str, list[dict[str, float]]]:
    """``prune_online`` of ``size`` stale users (then guests), with 1% as
    many online, against one ZREMRANGEBYSCORE of an identical copy; wall
    seconds and µs inside Redis."""
    client, inside = world.client, Inside(world.client)
    out: dict[str, list[dict[str, float]]] = {}
    members = {"users": lambda i: str(2 * 10**7 + i), "guests": ipv4}
    for r in range(n_rounds):
        for kind, member in members.items():
            log(f"  round {r + 1}: {size:,} stale {kind}")
            now = world.now()
            stale = now - 7200
            client.delete(layout.key(kind))
            online = ((member(i), now) for i in range(size, size + size // 100))
            layout.fill(client, kind, online, seen=False)
            old = ((member(i), stale - i * 1e-4) for i in range(size))
            layout.fill(client, kind, old, seen=False)
            client.copy(layout.key(kind), "bench:copy", replace=True)
            steps = {
                f"prune_online, {kind}": lambda: call_command(
                    "prune_online", verbosity=0
                ),
                f"ZREMRANGEBYSCORE, {kind}": functools.partial(
                    client.zremrangebyscore, "bench:copy", "-inf", stale + 1
                ),
            }
            for name in list(steps)[r % 2 :] + list(steps)[: r % 2]:
                out.setdefault(name, []).append(inside.once(steps[name]))
            if client.zcard(layout.key(kind)) != client.zcard("bench:copy"):
                raise RuntimeError(
                    f"prune left {kind} another size than ZREMRANGEBYSCORE did"
                )
    return out
