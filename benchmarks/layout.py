"""The one place that knows how whos_online lays out its data in Redis
(docs/data-model.md), to fill sets of a large site in seconds with plain
pipelines instead of a million records. Everything else measures through
the app's public surfaces; when the layout changes, mend this file."""

from __future__ import annotations

from collections.abc import Iterable

from redis import Redis

PREFIX = "{whos_online}"  # WHOS_ONLINE_KEY_PREFIX, one shard
BATCH = 10_000


def key(kind: str) -> str:
    """The sorted set of ``users`` or ``guests`` (members: primary keys,
    guest addresses as stored; scores: last seen, Redis' clock)."""
    return f"{PREFIX}:{kind}"


def fill(
    client: Redis, kind: str, members: Iterable[tuple[str, float]], seen: bool = True
) -> None:
    """Put ``(member, last seen)`` into the ``kind`` set and, with ``seen``,
    each into the HyperLogLog of its minute, which counts a set at its cap."""
    chunk: list[tuple[str, float]] = []
    for pair in members:
        chunk.append(pair)
        if len(chunk) == BATCH:
            _send(client, kind, chunk, seen)
            chunk = []
    if chunk:
        _send(client, kind, chunk, seen)


def _send(client: Redis, kind: str, chunk: list[tuple[str, float]], seen: bool) -> None:
    pipe = client.pipeline(transaction=False)
    pipe.zadd(key(kind), dict(chunk))
    minutes: dict[int, list[str]] = {}
    for member, when in chunk if seen else []:
        minutes.setdefault(int(when // 60), []).append(member)
    for minute, names in minutes.items():
        pipe.pfadd(f"{PREFIX}:seen:{kind}:{minute}", *names)
    pipe.execute()


def room_size(client: Redis, room: str, kind: str) -> int:
    """How many members the room's set of ``kind`` (users, guests) holds."""
    return int(client.zcard(f"{PREFIX}:room:{room}:{kind}"))


def forget(client: Redis, kind: str, members: list[str]) -> None:
    """Take ``members`` out of the ``kind`` set, so they enter it again."""
    client.zrem(key(kind), *members)


def clear(client: Redis) -> None:
    """Delete every key of the app (the floors' keys stay)."""
    for name in client.scan_iter(match=f"{PREFIX}*", count=10_000):
        client.unlink(name)


def empty(client: Redis, kind: str) -> None:
    """Take every member out of the ``kind`` set (users, guests), so that
    only those recorded after are online; nothing else is touched."""
    client.delete(key(kind))
