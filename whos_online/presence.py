"""The presence data in Redis, and every operation on it.

This module knows nothing of requests or templates. Who is online lives in
sorted sets, one per kind of visitor, whose members are user primary keys,
guest addresses or bot names and whose scores are the time each was last
seen, taken from the Redis server's clock so that web servers with skewed
clocks agree. A room ("thread:42") has sets of its own. Every key of a site
shares one Redis Cluster hash tag, ``{KEY_PREFIX}``, so each Lua script below
may touch several keys in one round trip.

Round trips: recording is one, a snapshot for the widget is one, statuses of
any number of users are one, pruning is one per set and one more per batch
of ``PRUNE_BATCH`` stale members when more than a batch are still online.
(The first use of a script in a process costs two more while redis-py loads
it.) docs/data-model.md lists them all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from redis import Redis
from redis.commands.core import Script
from redis.exceptions import NoScriptError

from whos_online import privacy
from whos_online.conf import conf
from whos_online.connection import get_client

Kind = Literal["users", "hidden", "guests", "bots"]
KINDS: tuple[Kind, ...] = ("users", "hidden", "guests", "bots")
# Who counts towards "most ever online": people, not crawlers.
PEOPLE: tuple[Kind, ...] = ("users", "hidden", "guests")

# One prune script removes at most this many members, or keeps at most this
# many by copying them out of a mostly stale set: about a millisecond inside
# Redis (copying costs more per member than removing).
PRUNE_BATCH = 2_500
HISTORY_MINUTES = 24 * 60
ROOM_NAME = re.compile(r"[A-Za-z0-9_.:\-]{1,100}")

# Sets ``now`` to the server's time as "seconds.micros" (a string, so no
# precision is lost to Lua's number formatting) and ``since`` to the start
# of the window given as ARGV[1].
_CLOCK = """
local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[1])) .. '.' .. micros
"""

# Moves ARGV[2] from set KEYS[other] to set KEYS[target] at ``now``, renews
# the expiry and, if the set may have grown (``grows``: ARGV[2] was not in
# it), trims the oldest members beyond the cap ARGV[3].
_ADD = """
local function add(target, other, grows)
  if other ~= target then
    redis.call('ZREM', other, ARGV[2])
  end
  redis.call('ZADD', target, now, ARGV[2])
  redis.call('EXPIRE', target, ARGV[1])
  if grows then
    local size = redis.call('ZCARD', target)
    if size > tonumber(ARGV[3]) then
      redis.call('ZREMRANGEBYRANK', target, 0, size - tonumber(ARGV[3]) - 1)
    end
  end
end
"""

# KEYS: target set, the set the member leaves (or the target again), then
# for people the record hash, the history hash and the other sets of people.
# ARGV: window, member, cap, least seconds since the member's last record
# (0: always record). Returns the time, or nil when rate limited.
#
# Counting everyone online is the dear part, so it is done only when it can
# change something: the number online rises only when a member enters the
# window, so the record can only be beaten then; and the history wants one
# sample a minute, so the first record of each minute counts too.
_RECORD = (
    _CLOCK
    + _ADD
    + """
local last = redis.call('ZSCORE', KEYS[1], ARGV[2])
local least = tonumber(ARGV[4])
if least > 0 and last and tonumber(now) - tonumber(last) < least then
  return false
end
add(KEYS[1], KEYS[2], not last)
if #KEYS > 2 then
  local minute = math.floor(tonumber(t[1]) / 60)
  local slot = minute % HISTORY_MINUTES
  local sample = redis.call('HGET', KEYS[4], slot)
  local at, most = -1, 0
  if sample then
    at, most = string.match(sample, '^(%d+):(%d+)$')
    at, most = tonumber(at), tonumber(most)
  end
  local entered = not last or tonumber(last) < tonumber(since)
  if entered or at ~= minute then
    local online = redis.call('ZCOUNT', KEYS[1], since, '+inf')
    for i = 2, #KEYS do
      if i == 2 and KEYS[2] ~= KEYS[1] or i > 4 then
        online = online + redis.call('ZCOUNT', KEYS[i], since, '+inf')
      end
    end
    local best = tonumber(redis.call('HGET', KEYS[3], 'count') or '0')
    if online > best then
      redis.call('HSET', KEYS[3], 'count', online, 'at', now)
    end
    if at ~= minute or online > most then
      redis.call('HSET', KEYS[4], slot, minute .. ':' .. online)
    end
  end
end
return now
""".replace("HISTORY_MINUTES", str(HISTORY_MINUTES))
)

# KEYS: the rooms index, the room's target set, the set the member leaves.
# ARGV: window, member, cap, room name, most rooms. A new room is refused
# (nil) while the index holds the most rooms seen within the window.
_RECORD_IN_ROOM = (
    _CLOCK
    + _ADD
    + """
if not redis.call('ZSCORE', KEYS[1], ARGV[4]) then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. since)
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then
    return false
  end
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[1])
add(KEYS[2], KEYS[3], true)
return now
"""
)

# KEYS: the users, hidden, guests and bots sets, then the record hash.
# ARGV: window, then how many to list of each set, newest first.
_SNAPSHOT = (
    _CLOCK
    + """
local listed, counts = {}, {}
for i = 1, 4 do
  listed[i] = {}
  if tonumber(ARGV[i + 1]) > 0 then
    listed[i] = redis.call('ZREVRANGEBYSCORE', KEYS[i], '+inf', since,
                           'WITHSCORES', 'LIMIT', 0, ARGV[i + 1])
  end
  counts[i] = redis.call('ZCOUNT', KEYS[i], since, '+inf')
end
local record = redis.call('HMGET', KEYS[5], 'count', 'at')
return {now, listed, counts, record}
"""
)

# KEYS: users, hidden. ARGV: window (for the clock only), then user keys.
_LAST_SEEN = (
    _CLOCK
    + """
local members = {unpack(ARGV, 2)}
return {now, redis.call('ZMSCORE', KEYS[1], unpack(members)),
        redis.call('ZMSCORE', KEYS[2], unpack(members))}
"""
)
# Lua's unpack() is limited by its C stack; ask for this many users at a time.
LAST_SEEN_BATCH = 1000

# KEYS: the salt key. ARGV: a new salt, its lifetime in seconds.
_SALT = """
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
return redis.call('GET', KEYS[1])
"""

# KEYS: the history hash. ARGV: window (unused but for the clock).
_HISTORY = (
    _CLOCK
    + """
return {now, redis.call('HVALS', KEYS[1])}
"""
)

# KEYS: one set, a scratch key. ARGV: window, batch size, '1' to only
# count. Counting and removing in one script means a member seen again
# meanwhile is never removed. Two ways to remove the stale members, whichever
# blocks Redis for less:
# - mostly stale, at most a batch still online: copy those online to the
#   scratch key, UNLINK the set (Redis frees it in its background thread)
#   and put the copy in its place, with the set's expiry;
# - otherwise remove at most one batch of the stale members, who hold the
#   lowest ranks.
# Returns how many members were removed.
_PRUNE = (
    _CLOCK
    + """
local stale = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. since)
if ARGV[3] == '1' or stale == 0 then
  return stale
end
local batch = tonumber(ARGV[2])
local online = redis.call('ZCARD', KEYS[1]) - stale
if stale > online and online <= batch then
  local ttl = redis.call('PTTL', KEYS[1])
  if online > 0 then
    redis.call('ZRANGESTORE', KEYS[2], KEYS[1], since, '+inf', 'BYSCORE')
  end
  redis.call('UNLINK', KEYS[1])
  if online > 0 then
    redis.call('RENAME', KEYS[2], KEYS[1])
    if ttl > 0 then
      redis.call('PEXPIRE', KEYS[1], ttl)
    end
  end
  return stale
end
local n = math.min(stale, batch)
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - 1)
return n
"""
)


@dataclass(frozen=True)
class Counts:
    users: int = 0
    hidden: int = 0
    guests: int = 0
    bots: int = 0

    @property
    def total(self) -> int:
        return self.users + self.hidden + self.guests + self.bots


@dataclass(frozen=True)
class Snapshot:
    """Who was online at ``now`` (seconds since the epoch, server clock).

    Each list holds ``(member, last seen)`` pairs, newest first, up to the
    number asked for; the counts cover everyone in the window.
    """

    now: float
    window: int
    users: list[tuple[str, float]]
    hidden: list[tuple[str, float]]
    guests: list[tuple[str, float]]
    bots: list[tuple[str, float]]
    counts: Counts
    record: tuple[int, float] | None


@dataclass(frozen=True)
class LastSeen:
    """When users were last seen (``None``: not within Redis' memory)."""

    now: float
    seen: dict[str, float]
    hidden: frozenset[str]


def is_room_name(name: object) -> bool:
    """Room names are 1 to 100 of ``A-Z a-z 0-9 _ . : -``."""
    return isinstance(name, str) and ROOM_NAME.fullmatch(name) is not None


def key(name: str, room: str | None = None) -> str:
    """The Redis key for ``name``; all of a site's keys share one hash tag."""
    if room is None:
        return f"{{{conf.KEY_PREFIX}}}:{name}"
    if not is_room_name(room):
        raise ValueError(f"Not a room name: {room!r}")
    return f"{{{conf.KEY_PREFIX}}}:room:{room}:{name}"


def record_user(pk: object, *, hidden: bool = False) -> float:
    """Mark the user with primary key ``pk`` as seen now; returns the time."""
    return record("hidden" if hidden else "users", str(pk))


def record_guest(address: str) -> float:
    """Mark the guest at ``address`` (already normalised) as seen now."""
    return record("guests", address)


def record(kind: Kind, member: str) -> float:
    """Mark ``member`` of ``kind`` as seen now; returns the time."""
    now = _record(kind, member, least_interval=0)
    assert now is not None  # only a least interval refuses a record
    return now


def record_heartbeat(
    pk: object, *, hidden: bool, least_interval: float
) -> float | None:
    """Record the user unless they were recorded less than
    ``least_interval`` seconds ago (then ``None``): a server-side rate limit
    that costs no key of its own."""
    return _record("hidden" if hidden else "users", str(pk), least_interval)


def _record(kind: Kind, member: str, least_interval: float) -> float | None:
    keys, window, cap = _record_plan(kind)
    args = [window, _stored(kind, member), cap, least_interval or b"0"]
    now = _run(_RECORD, keys, args)
    return None if now is None else float(now)


@functools.cache
def _record_plan(kind: Kind) -> tuple[list[bytes], bytes, bytes]:
    """The record script's keys for ``kind``, the window and the cap, encoded
    once per setting: every unguarded request sends them, and redis-py
    passes bytes through as they are. (Callers must not change the list.)"""
    other = _other_set(kind)
    names = [key(kind), key(other)]
    if kind in PEOPLE:
        rest = (key(k) for k in PEOPLE if k not in (kind, other))
        names += [key("record"), key("history"), *rest]
    keys = [name.encode() for name in names]
    return keys, str(conf.WINDOW).encode(), str(conf.MAX_MEMBERS).encode()


def forget() -> None:
    """Drop what was derived from settings (on ``setting_changed``)."""
    _script.cache_clear()
    _record_plan.cache_clear()


def record_in_room(room: str, kind: Kind, member: str) -> float | None:
    """Mark ``member`` as in ``room`` now; ``None`` if the room was refused
    because ``WHOS_ONLINE_MAX_ROOMS`` other rooms are in use."""
    keys = [key("rooms"), key(kind, room), key(_other_set(kind), room)]
    args: list[str | int | float] = [
        conf.WINDOW,
        _stored(kind, member),
        conf.MAX_MEMBERS,
        room,
        conf.MAX_ROOMS,
    ]
    now = _run(_RECORD_IN_ROOM, keys, args)
    return None if now is None else float(now)


def _stored(kind: Kind, member: str) -> str:
    """Guests are stored as ``WHOS_ONLINE_GUEST_ADDRESSES`` says."""
    if kind != "guests":
        return member
    return privacy.stored_address(member, _guest_salt)


def _guest_salt(candidate: str, seconds: int) -> bytes:
    salt: bytes = _run(_SALT, [key("salt")], [candidate, seconds])
    return salt


def _other_set(kind: Kind) -> Kind:
    """The set a member leaves when recorded as ``kind``: a user who becomes
    hidden (or visible again) is never in both."""
    return {"users": "hidden", "hidden": "users"}.get(kind, kind)  # type: ignore[return-value]


def snapshot(
    limit: int,
    *,
    room: str | None = None,
    hidden_limit: int = 0,
    guest_limit: int = 0,
    bot_limit: int | None = None,
) -> Snapshot:
    """The users, and as many hidden users, guests and bots as asked for,
    newest first, with every count and the record: one round trip."""
    limits = [
        limit,
        hidden_limit,
        guest_limit,
        limit if bot_limit is None else bot_limit,
    ]
    keys = [*(key(kind, room) for kind in KINDS), key("record")]
    now, listed, counts, (best, best_at) = _run(
        _SNAPSHOT, keys, [conf.WINDOW, *(max(n, 0) for n in limits)]
    )
    users, hidden, guests, bots = (_pairs(flat) for flat in listed)
    return Snapshot(
        now=float(now),
        window=conf.WINDOW,
        users=users,
        hidden=hidden,
        guests=guests,
        bots=bots,
        counts=Counts(*(int(n) for n in counts)),
        record=None if best is None else (int(best), float(best_at)),
    )


def last_seen_many(pks: Iterable[object]) -> LastSeen:
    """When each user was last seen, hidden or not, with ZMSCORE: one round
    trip per ``LAST_SEEN_BATCH`` users, however many there are."""
    members = list(dict.fromkeys(str(pk) for pk in pks))
    if not members:
        return LastSeen(now=_server_time(), seen={}, hidden=frozenset())
    now = 0.0
    seen: dict[str, float] = {}
    hidden: set[str] = set()
    for start in range(0, len(members), LAST_SEEN_BATCH):
        batch = members[start : start + LAST_SEEN_BATCH]
        now, visible, concealed = _run(
            _LAST_SEEN, [key("users"), key("hidden")], [conf.WINDOW, *batch]
        )
        for member, shown, secret in zip(batch, visible, concealed, strict=True):
            if secret is not None and (shown is None or float(secret) > float(shown)):
                seen[member] = float(secret)
                hidden.add(member)
            elif shown is not None:
                seen[member] = float(shown)
    return LastSeen(now=float(now), seen=seen, hidden=frozenset(hidden))


def last_seen(pk: object) -> float | None:
    """When the user was last seen, hidden or not, if Redis still remembers."""
    return last_seen_many([pk]).seen.get(str(pk))


def forget_user(pk: object) -> None:
    """Take the user off the online lists at once (on logging out)."""
    client = _client()
    client.zrem(key("users"), str(pk))
    client.zrem(key("hidden"), str(pk))


def most_ever_online() -> tuple[int, float] | None:
    """The most people (not bots) ever online at once, and when."""
    count, at = _client().hmget(key("record"), ["count", "at"])
    if count is None or at is None:
        return None
    return int(count), float(at)


def reset_most_ever_online() -> bool:
    """Forget the record; whether there was one."""
    return bool(_client().delete(key("record")))


def history() -> list[tuple[int, int]]:
    """``(minute start, most online)`` for each minute with a record in the
    past 24 hours, oldest first. The history hash holds at most 1440 fields."""
    now, samples = _run(_HISTORY, [key("history")], [conf.WINDOW])
    first = int(float(now)) // 60 - HISTORY_MINUTES + 1
    points = []
    for sample in samples:
        minute, _, online = sample.decode().partition(":")
        if int(minute) >= first:
            points.append((int(minute) * 60, int(online)))
    return sorted(points)


def rooms() -> list[str]:
    """The rooms with anyone in them within the window."""
    return _decoded(_client().zrangebyscore(key("rooms"), _window_start(), "+inf"))


def prune(*, dry_run: bool = False) -> dict[str, int]:
    """Remove members last seen before the window from every set, rooms
    included; how many, per set (``"room:thread:42:users"``)."""
    removed: dict[str, int] = {
        kind: _prune_set(key(kind), dry_run=dry_run) for kind in KINDS
    }
    for room in _all_rooms():
        for kind in KINDS:
            removed[f"room:{room}:{kind}"] = _prune_set(
                key(kind, room), dry_run=dry_run
            )
    removed["rooms"] = _prune_set(key("rooms"), dry_run=dry_run)
    return removed


def _all_rooms() -> list[str]:
    return _decoded(_client().zrange(key("rooms"), 0, -1))


def _decoded(names: Any) -> list[str]:
    return [bytes(name).decode() for name in names]


def _prune_set(name: str, *, dry_run: bool) -> int:
    keys = [name, key("prune-scratch")]
    if dry_run:
        return int(_run(_PRUNE, keys, [conf.WINDOW, 0, "1"]))
    removed = 0
    while True:
        batch = int(_run(_PRUNE, keys, [conf.WINDOW, PRUNE_BATCH, "0"]))
        removed += batch
        if batch != PRUNE_BATCH:
            return removed


def _server_time() -> float:
    seconds, micros = _client().time()
    return seconds + micros / 1_000_000


def _window_start() -> float:
    return _server_time() - conf.WINDOW


def _pairs(flat: Sequence[bytes]) -> list[tuple[str, float]]:
    return [(flat[i].decode(), float(flat[i + 1])) for i in range(0, len(flat) - 1, 2)]


def _client() -> Redis:
    return get_client()


def _run(
    source: str,
    keys: Sequence[str | bytes],
    args: Sequence[str | bytes | int | float],
) -> Any:
    """Run a script by its SHA, loading it first if Redis does not know it."""
    client = _client()
    script = _script(client, source)
    try:
        return client.evalsha(script.sha, len(keys), *keys, *args)
    except NoScriptError:
        return script(keys=keys, args=args)


@functools.cache
def _script(client: Redis, source: str) -> Script:
    return client.register_script(source)
