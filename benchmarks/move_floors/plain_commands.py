"""A prototype of the one lever left for a reader moving thread to thread:
the move as plain commands in one pipeline, no script. A device's place is
a key of its own and the process knows the room it leaves, so the move is
ZADD GT into the room entered, EXPIRE of it, ZREM from the room left, SET
of the place with EX, and SPUBLISH of both rooms. Beside a renewal ZADD
into a set of 20,000 (floor B): instructions inside redis-server (callgrind,
counted in ``call()``, each command's dispatch and execution, for both), and
µs inside Redis (``INFO commandstats``) in a server of its own.

What it leaves out is why places.lua does not do this: whether another
place of the member (a tab, another device) still holds the room left,
which only a read inside Redis tells (room sets would have to hold places,
and each read count members once); the member's bound on places; and a
room left that another process wrote.

    .venv/bin/python -m benchmarks.move_floors.plain_commands
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.bench import redis_server, scratch
from benchmarks.lua_instructions import counted_server

KEPT = 301  # seconds a room's set and a place are kept after their last write
ROUNDS, CALLS = 11, 300


def renewal(client: Any) -> Callable[[], None]:
    now = time.time()
    client.zadd("{t}:guests", {f"g{i}": now for i in range(20_000)})
    renewing = itertools.cycle(range(20_000))
    return lambda: client.zadd("{t}:guests", {f"g{next(renewing)}": time.time()})


def mover(client: Any) -> Callable[[], None]:
    threads = itertools.count(10**6)
    left = ["thread:0"]

    def move() -> None:
        room, till = f"thread:{next(threads)}", int(time.time()) + KEPT
        entered = f"{{t}}:room:{room}:guests"
        pipe = client.pipeline(transaction=False)
        pipe.zadd(entered, {"203.0.113.9": till}, gt=True)
        pipe.expire(entered, KEPT)
        pipe.zrem(f"{{t}}:room:{left[0]}:guests", "203.0.113.9")
        pipe.set("{t}:place:g:203.0.113.9:d:", f"{till} {room}", ex=KEPT)
        pipe.spublish("{t}:changes", f"{room} {left[0]}")
        pipe.execute()
        left[0] = room

    return move


def instructions(make: Callable[[Any], Callable[[], None]]) -> float:
    with (
        scratch("whos-online-plain-") as workdir,
        counted_server(workdir, "call") as (client, since),
    ):
        call = make(client)
        for _ in range(CALLS):
            call()
        since()
        for _ in range(CALLS):
            call()
        return since() / CALLS


def inside(client: Any, call: Callable[[], None]) -> float:
    client.config_resetstat()
    for _ in range(CALLS):
        call()
    stats = client.info("commandstats")
    ran = [v["usec"] for k, v in stats.items() if k.split("_", 1)[1] in RAN]
    return sum(ran) / CALLS


RAN = {"zadd", "expire", "zrem", "set", "spublish"}


def main() -> None:
    b, m = instructions(renewal), instructions(mover)
    print(f"instructions: B {b:,.0f}, the move {m:,.0f}: {m / b:.2f}x B")
    from redis import Redis

    with scratch("whos-online-plain-") as workdir, redis_server(workdir) as url:
        client = Redis.from_url(url)
        floor, move = renewal(client), mover(client)
        for _ in range(CALLS):
            floor()
            move()
        floors, moves = [], []
        for _ in range(ROUNDS):
            floors.append(inside(client, floor))
            moves.append(inside(client, move))
    ratios = sorted(mv / fl for mv, fl in zip(moves, floors, strict=True))
    print(
        f"µs inside Redis: B {statistics.median(floors):.2f}, the move "
        f"{statistics.median(moves):.2f}: {ratios[0]:.2f} / "
        f"{statistics.median(ratios):.2f} / {ratios[-1]:.2f}x B (min / median / max)"
    )


if __name__ == "__main__":
    main()
