"""The presence data in Redis, and every operation on it.

This module knows nothing of requests or templates. Who is online lives in
sorted sets whose members are user primary keys or guest addresses and whose
scores are the time each was last seen, taken from the Redis server's clock
so that web servers with skewed clocks agree. Every key of a site shares one
Redis Cluster hash tag, ``{KEY_PREFIX}``, so the Lua scripts below may touch
several keys in one round trip.

Round trips: recording is one (``EVALSHA``), a snapshot for the widget is
one, ``last_seen`` is one, pruning is one per batch of ``PRUNE_BATCH``
members. (The first use of a script in a process costs one more round trip
while redis-py loads it.)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from redis import Redis
from redis.commands.core import Script

from whos_online.conf import conf
from whos_online.connection import get_client

Kind = Literal["users", "guests"]
KINDS: tuple[Kind, ...] = ("users", "guests")

PRUNE_BATCH = 10_000

# Sets ``now`` to the server's time as "seconds.micros" (a string, so no
# precision is lost to Lua's number formatting) and ``since`` to the start
# of the window given as ARGV[1].
_CLOCK = """
local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[1])) .. '.' .. micros
"""

# KEYS: the set to record in, the record hash, then the sets whose members
# count towards the record. ARGV: window, member, cap per set.
_RECORD = (
    _CLOCK
    + """
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[1])
local cap = tonumber(ARGV[3])
local size = redis.call('ZCARD', KEYS[1])
if size > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, size - cap - 1)
end
if #KEYS > 2 then
  local online = 0
  for i = 3, #KEYS do
    online = online + redis.call('ZCOUNT', KEYS[i], since, '+inf')
  end
  local best = tonumber(redis.call('HGET', KEYS[2], 'count') or '0')
  if online > best then
    redis.call('HSET', KEYS[2], 'count', online, 'at', now)
  end
end
return now
"""
)

# KEYS: the set to list, then the sets to count. ARGV: window, how many to list.
_SNAPSHOT = (
    _CLOCK
    + """
local listed = {}
if tonumber(ARGV[2]) > 0 then
  listed = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', since,
                      'WITHSCORES', 'LIMIT', 0, ARGV[2])
end
local counts = {}
for i = 2, #KEYS do
  counts[i - 1] = redis.call('ZCOUNT', KEYS[i], since, '+inf')
end
return {now, listed, counts}
"""
)

# KEYS: one set. ARGV: window, batch size, '1' to only count. Removes at most
# one batch of the members last seen before the window: they hold the lowest
# ranks, and counting and removing in one script means a member seen again
# meanwhile is never removed.
_PRUNE = (
    _CLOCK
    + """
local stale = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. since)
if ARGV[3] == '1' then
  return stale
end
local n = math.min(stale, tonumber(ARGV[2]))
if n > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - 1)
end
return n
"""
)


@dataclass(frozen=True)
class Snapshot:
    """Who was online at ``now`` (seconds since the epoch, server clock)."""

    now: float
    window: int
    users: list[tuple[str, float]]
    """Up to the requested number of user keys with last-seen times, newest first."""
    user_count: int
    guest_count: int


def key(name: str) -> str:
    """The Redis key for ``name``; all of a site's keys share one hash tag."""
    return f"{{{conf.KEY_PREFIX}}}:{name}"


def record_user(pk: object) -> float:
    """Mark the user with primary key ``pk`` as seen now; returns the time."""
    return record("users", str(pk))


def record_guest(address: str) -> float:
    """Mark the guest at ``address`` (already normalised) as seen now."""
    return record("guests", address)


def record(kind: Kind, member: str) -> float:
    keys = [key(kind), key("record"), *(key(k) for k in KINDS)]
    return float(_run(_RECORD, keys, [conf.WINDOW, member, conf.MAX_MEMBERS]))


def snapshot(limit: int) -> Snapshot:
    """The ``limit`` most recent users and the counts, in one round trip."""
    keys = [key("users"), *(key(k) for k in KINDS)]
    now, listed, (user_count, guest_count) = _run(
        _SNAPSHOT, keys, [conf.WINDOW, max(limit, 0)]
    )
    return Snapshot(
        now=float(now),
        window=conf.WINDOW,
        users=_pairs(listed),
        user_count=int(user_count),
        guest_count=int(guest_count),
    )


def last_seen(pk: object) -> float | None:
    """When the user was last seen, if Redis still remembers."""
    score = _client().zscore(key("users"), str(pk))
    return None if score is None else float(score)


def most_ever_online() -> tuple[int, float] | None:
    """The most users and guests ever online at once, and when."""
    count, at = _client().hmget(key("record"), ["count", "at"])
    if count is None or at is None:
        return None
    return int(count), float(at)


def prune(kinds: Iterable[Kind] = KINDS, *, dry_run: bool = False) -> dict[str, int]:
    """Remove members last seen before the window; how many, per set."""
    return {kind: _prune_set(key(kind), dry_run=dry_run) for kind in kinds}


def _prune_set(name: str, *, dry_run: bool) -> int:
    if dry_run:
        return int(_run(_PRUNE, [name], [conf.WINDOW, 0, "1"]))
    removed = 0
    while True:
        batch = int(_run(_PRUNE, [name], [conf.WINDOW, PRUNE_BATCH, "0"]))
        removed += batch
        if batch < PRUNE_BATCH:
            return removed


def _pairs(flat: Sequence[bytes]) -> list[tuple[str, float]]:
    return [(flat[i].decode(), float(flat[i + 1])) for i in range(0, len(flat) - 1, 2)]


def _client() -> Redis:
    return get_client()


def _run(source: str, keys: list[str], args: list[str | int | float]) -> Any:
    return _script(_client(), source)(keys=keys, args=args)


@functools.cache
def _script(client: Redis, source: str) -> Script:
    return client.register_script(source)
