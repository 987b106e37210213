"""The presence data in Redis, and every operation on it.

This module knows nothing of requests, users or privacy: it is given the
members to store (user primary keys, guest addresses in their stored form,
bot names) and hands back what Redis holds. Who is online lives in sorted
sets, one per kind of visitor, scored by the time each member was last seen
by the Redis server's clock, so web servers with skewed clocks agree. A room
("thread:42") has sets of its own. Every key of a site shares one Redis
Cluster hash tag, ``{KEY_PREFIX}``, so each script may touch several keys.

With ``WHOS_ONLINE_SHARDS`` above 1, each member is kept in one of that many
shards by a hash of it, each shard under a hash tag of its own (so a Redis
Cluster spreads them over its masters): what a record touches lives in the
member's shard, reads ask every shard at once and add up, and the site's
record and daily peaks (under ``{KEY_PREFIX}``) are raised by snapshots.

The scripts are the ``.lua`` files beside this module; each opens with its
KEYS, ARGV and reply. Round trips: recording is one, a snapshot is one (two
with shards, and one more when a set is at its cap), statuses are one per
``LAST_SEEN_BATCH`` users (pipelined), logging out is one (two if the user
was in rooms), pruning is one per set and batch. docs/data-model.md lists
them all.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any, Literal

from redis import Redis
from redis.exceptions import NoScriptError, RedisError

from whos_online.conf import Config, Shard, conf, get_config

Kind = Literal["users", "hidden", "guests", "bots"]
KINDS: tuple[Kind, ...] = ("users", "hidden", "guests", "bots")
# Who counts towards "most ever online" and "online now": people, not crawlers.
PEOPLE: tuple[Kind, ...] = ("users", "hidden", "guests")
# The sets that can grow past WHOS_ONLINE_MAX_MEMBERS, whose numbers are then
# estimated from a HyperLogLog per minute.
ESTIMATED: tuple[Kind, ...] = ("users", "guests")

# One prune script removes at most this many members, or keeps at most this
# many by copying them out of a mostly stale set: about a millisecond inside
# Redis (copying costs more per member than removing).
PRUNE_BATCH = 2_500
HISTORY_MINUTES = 24 * 60
ROOM_NAME = re.compile(r"[A-Za-z0-9_.:\-]{1,100}")
# Lua's unpack() is limited by its C stack; ask for this many users at a time.
LAST_SEEN_BATCH = 1000


@dataclass(frozen=True)
class Stamp:
    """What a record tells: Redis' time, its data generation, whether the
    member entered the window (was not online before), whether a user was
    recorded as hidden because they chose to appear offline, and whether the
    mirror of those choices was missing (see :func:`load_invisible`)."""

    now: float
    generation: str
    entered: bool
    invisible: bool = False
    unloaded: bool = False


@dataclass(frozen=True)
class Counts:
    users: int = 0
    hidden: int = 0
    guests: int = 0
    bots: int = 0
    estimated: frozenset[Kind] = frozenset()
    """The kinds whose sets are at ``WHOS_ONLINE_MAX_MEMBERS``: their numbers
    are estimates (within 2%), not exact counts."""

    @classmethod
    def of(cls, numbers: Sequence[int]) -> Counts:
        """Exact counts of users, hidden users, guests and bots, in that order."""
        users, hidden, guests, bots = (int(n) for n in numbers)
        return cls(users, hidden, guests, bots)

    @property
    def is_estimate(self) -> bool:
        """Whether the number of people is an estimate (see ``estimated``)."""
        return bool(self.estimated)

    @property
    def people(self) -> int:
        """Everyone but crawlers: what "online now" and the record count."""
        return self.users + self.hidden + self.guests

    @property
    def total(self) -> int:
        return self.people + self.bots


@dataclass(frozen=True)
class Today:
    """Today's figures (UTC days, by Redis' clock): unique users, exact up
    to ``WHOS_ONLINE_MAX_MEMBERS``; unique guests, estimated by a
    HyperLogLog (about 0.8% standard error); and the most online at once."""

    users: int = 0
    guests: int = 0
    most_online: int = 0

    @property
    def visitors(self) -> int:
        return self.users + self.guests


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
    today: Today = Today()
    where: dict[str, bytes] = field(default_factory=dict)
    """Where each listed user is (see :mod:`whos_online.locations`)."""


@dataclass(frozen=True)
class LastSeen:
    """When users were last seen (absent: not within Redis' memory)."""

    now: float
    seen: dict[str, float]
    hidden: frozenset[str]


def is_room_name(name: object) -> bool:
    """Room names are 1 to 100 of ``A-Z a-z 0-9 _ . : -``."""
    return isinstance(name, str) and ROOM_NAME.fullmatch(name) is not None


def key(name: str, room: str | None = None) -> str:
    """The Redis key ``name`` (of ``room``) of the first shard: with one shard
    (the default) every key of the site, with several the keys of the
    members that hash to it. ``"record"`` and ``"daily-peaks"`` are the
    site's own: see :meth:`~whos_online.conf.Config.key`."""
    return shard_key(get_config().shards[0], name, room)


def shard_key(shard: Shard, name: str, room: str | None = None) -> str:
    """The Redis key ``name`` (of ``room``) in ``shard``."""
    if room is None:
        return shard.key(name)
    if not is_room_name(room):
        raise ValueError(f"Not a room name: {room!r}")
    return shard.key(f"room:{room}:{name}")


def record_user(pk: object, *, hidden: bool = False) -> float:
    """Mark the user with primary key ``pk`` as seen now; returns the time."""
    return _recorded(record("hidden" if hidden else "users", str(pk)))


def record_guest(member: str) -> float:
    """Mark the guest stored as ``member`` as seen now; returns the time."""
    return _recorded(record("guests", member))


def _recorded(stamp: Stamp | None) -> float:
    assert stamp is not None  # only a least interval refuses a record
    return stamp.now


def record(
    kind: Kind,
    member: str,
    *,
    previous_guest: str = "",
    device: str = "",
    location: str = "",
    least_interval: float = 0,
) -> Stamp | None:
    """Mark ``member`` of ``kind`` as seen now.

    ``previous_guest`` (stored form) is removed from the guests in the same
    step: the guest who just logged in as this user (a second command when
    that guest is in another shard). ``device`` marks the session a user was
    seen on, so logging out elsewhere keeps them online.
    ``location`` ("label<TAB>path") is where a user is.
    With ``least_interval``, a member recorded less than that many seconds
    ago is not recorded again, and ``None`` is returned.
    """
    config = get_config()
    call = record_call(
        config,
        kind,
        member,
        previous_guest=previous_guest,
        device=device,
        location=location,
        least_interval=least_interval,
    )
    reply = _run(config, call.script, call.keys, call.args)
    if not reply:
        return None
    now, generation, entered, hidden, unloaded = reply
    label = config.state.clock.observe(
        float(now), generation.decode(), call.shard.index
    )
    if previous_guest and config.shard_of(previous_guest) is not call.shard:
        guests = config.shard_of(previous_guest).key("guests")
        config.client.zrem(guests, previous_guest)
    return Stamp(float(now), label, bool(entered), bool(hidden), bool(unloaded))


def record_call(
    config: Config,
    kind: Kind,
    member: str,
    *,
    previous_guest: str = "",
    device: str = "",
    location: str = "",
    least_interval: float = 0,
) -> Call:
    """The script :func:`record` runs, for callers that send many at once
    (benchmarks/scaling.py fills sets through it)."""
    shard = config.shard_of(member)
    whole = len(config.shards) == 1
    guest_here = whole or config.shard_of(previous_guest) is shard
    minute = int(config.state.clock.now() // 60)
    args: list[str | int | float] = [
        config.window,
        member,
        config.max_members,
        least_interval,
        previous_guest if guest_here else "",
        device,
        "1" if config.allow_invisible and kind == "users" else "0",
        minute // 1440,
        location,
        "1" if whole else "0",
    ]
    keys = _record_keys(shard, kind, member if device else "", minute)
    return Call("record", keys, args, shard)


def today(config: Config) -> int:
    """Today by Redis' clock, in days since the epoch (UTC)."""
    return int(config.state.clock.now() // 86400)


def _record_keys(shard: Shard, kind: Kind, user: str, minute: int) -> list[bytes]:
    keys = _fixed_record_keys(shard.tag, kind)
    if kind == "bots":
        return list(keys)
    devices = shard.key(f"devices:{user}").encode() if user else keys[0]
    return [*keys, devices, *_minute_keys(shard.tag, kind, minute)]


# Every unguarded request sends these keys: built and encoded once (redis-py
# passes bytes through as they are), for a few shards, kinds and minutes.
@functools.lru_cache(maxsize=64)
def _fixed_record_keys(tag: str, kind: Kind) -> tuple[bytes, ...]:
    site = f"{{{tag}}}:"
    first = (site + kind, site + _other_set(kind), site + "generation")
    if kind == "bots":
        return tuple(name.encode() for name in first)
    people = (site + k for k in PEOPLE)
    rest = (site + "record", site + "history")
    return tuple(name.encode() for name in (*first, *people, *rest))


@functools.lru_cache(maxsize=256)
def _minute_keys(tag: str, kind: Kind, minute: int) -> tuple[bytes, ...]:
    site = f"{{{tag}}}:"
    day = minute // 1440
    names = ("invisible", f"day:{day}:users", f"day:{day}:guests", "daily-peaks")
    estimate = estimate_key(tag, kind, minute) if kind in ESTIMATED else site + kind
    return tuple(
        n.encode() for n in (*(site + n for n in names), site + "where", estimate)
    )


def estimate_key(tag: str, kind: Kind, minute: int) -> str:
    """The HyperLogLog of the members of ``kind`` recorded in ``minute``
    (minutes since the epoch) in the shard tagged ``tag``."""
    return f"{{{tag}}}:seen:{kind}:{minute}"


def _other_set(kind: Kind) -> Kind:
    """The set a member leaves when recorded as ``kind``: a user who becomes
    hidden (or visible again) is never in both."""
    return {"users": "hidden", "hidden": "users"}.get(kind, kind)  # type: ignore[return-value]


def record_in_room(room: str, kind: Kind, member: str) -> float | None:
    """Mark ``member`` as in ``room`` now; ``None`` if the room was refused
    because ``WHOS_ONLINE_MAX_ROOMS`` other rooms are in use (in the
    member's shard, when there are several)."""
    config = get_config()
    shard = config.shard_of(member)
    target = shard_key(shard, kind, room)
    people = kind in ("users", "hidden")
    user_rooms = shard.key(f"rooms-of:{member}") if people else target
    keys = [
        shard.key("rooms"),
        target,
        shard_key(shard, _other_set(kind), room),
        user_rooms,
    ]
    if config.allow_invisible and kind == "users":
        keys.append(shard.key("invisible"))
    args: list[str | int] = [
        config.window,
        member,
        config.max_members,
        room,
        conf.MAX_ROOMS,
    ]
    now = _run(config, "record_in_room", keys, args)
    return None if now is None else float(now)


@dataclass(frozen=True)
class LoggedOut:
    removed: bool
    """Whether the user was taken off (no other device kept them online)."""
    hidden: bool
    """Whether they were in the hidden set."""


def log_out(pk: str, device: str) -> LoggedOut:
    """The user ``pk`` logged out on ``device``: take them off the lists,
    rooms included, unless another device of theirs was seen within the
    guard period."""
    config = get_config()
    shard = config.shard_of(pk)
    keys = [
        shard.key(name)
        for name in ("users", "hidden", f"devices:{pk}", f"rooms-of:{pk}", "where")
    ]
    reply = _run(config, "log_out", keys, [pk, device, config.guard_seconds])
    if reply is None:
        return LoggedOut(removed=False, hidden=False)
    was_hidden, rooms = reply
    if rooms:
        pipe = config.client.pipeline(transaction=False)
        for room in _decoded(rooms):
            pipe.zrem(shard_key(shard, "users", room), pk)
            pipe.zrem(shard_key(shard, "hidden", room), pk)
        pipe.execute()
    return LoggedOut(removed=True, hidden=bool(was_hidden))


def set_invisible(pk: str, invisible: bool) -> bool:
    """Mirror a user's choice to appear offline and move them at once, in
    the site's sets and their rooms' (one round trip, two if in rooms).
    ``False`` if the mirror is missing: load it (:func:`load_invisible`),
    then call again."""
    config = get_config()
    shard = config.shard_of(pk)
    keys = [shard.key(name) for name in ("invisible", "users", "hidden")]
    keys.append(shard.key(f"rooms-of:{pk}"))
    args = [pk, "1" if invisible else "0", config.window]
    rooms = _run(config, "visibility", keys, args)
    if rooms is None:
        return False
    if rooms:
        leave: Kind = "users" if invisible else "hidden"
        join: Kind = "hidden" if invisible else "users"
        _move_in_rooms(config, shard, pk, _decoded(rooms), leave, join)
    return True


def _move_in_rooms(
    config: Config, shard: Shard, pk: str, rooms: list[str], leave: Kind, join: Kind
) -> None:
    """Move ``pk`` from ``leave`` to ``join`` in each room, keeping when they
    were seen: two pipelined round trips."""
    reads = config.client.pipeline(transaction=False)
    for room in rooms:
        reads.zscore(shard_key(shard, leave, room), pk)
    writes = config.client.pipeline(transaction=False)
    for room, seen in zip(rooms, reads.execute(), strict=True):
        if seen is not None:
            writes.zrem(shard_key(shard, leave, room), pk)
            writes.zadd(shard_key(shard, join, room), {pk: seen})
            writes.expire(shard_key(shard, join, room), config.window)
    writes.execute()


def load_invisible(pks: Iterable[object]) -> int:
    """Fill the mirror of users who chose to appear offline (after Redis lost
    it), in every shard; how many there are."""
    config = get_config()
    members: dict[Shard, list[str]] = {shard: [] for shard in config.shards}
    for pk in pks:
        members[config.shard_of(str(pk))].append(str(pk))
    calls = [
        Call("load_invisible", [shard.key("invisible")], chosen, shard)
        for shard, chosen in members.items()
    ]
    return sum(int(n) for n in _run_all(config, calls))


def device_of(session_key: str) -> str:
    """What is stored for a session: a keyed hash, never the key itself."""
    digest = hashlib.blake2b(
        session_key.encode(), key=get_config().guard_key, digest_size=9
    )
    return digest.hexdigest()


def snapshot(
    limit: int,
    *,
    room: str | None = None,
    hidden_limit: int = 0,
    guest_limit: int = 0,
    bot_limit: int | None = None,
) -> Snapshot:
    """The users, and as many hidden users, guests and bots as asked for,
    newest first, with every count and the record.

    One round trip. With shards, the shards' scripts are pipelined (on a
    cluster, sent to every master before any reply is read), and a second
    script raises and reads the site's record; a shard that is down is left
    out (its breaker opened) rather than failing the page. A set at its cap
    costs one round trip more, for the estimate of how many it would hold.

    A site-wide snapshot also samples the minute for the history and may
    raise the record, so both stay true while everyone is guarded.
    """
    config = get_config()
    bots_listed = limit if bot_limit is None else bot_limit
    limits = [max(n, 0) for n in (limit, hidden_limit, guest_limit, bots_listed)]
    day = today(config)
    whole = len(config.shards) == 1
    mode = "0" if room is not None else "1" if whole else "2"
    calls = [
        Call(
            "snapshot",
            _snapshot_keys(shard, room, day),
            [config.window, *limits, mode, day],
            shard,
        )
        for shard in config.shards
    ]
    parts = [
        (call.shard, _snapshot_part(config, call.shard, reply))
        for call, reply in _run_shards(config, calls)
    ]
    first = parts[0][1]
    counts = _counted(config, parts, None if room is not None else first.now)
    record, most_today = first.record, first.today.most_online
    if not whole:
        record, most_today = (
            (None, 0) if room is not None else _raise_site(config, counts, day)
        )
    users, hidden, guests, bots = (
        _newest([getattr(part, kind) for _, part in parts], n)
        for kind, n in zip(KINDS, limits, strict=True)
    )
    return Snapshot(
        now=max(part.now for _, part in parts),
        window=config.window,
        users=users,
        hidden=hidden,
        guests=guests,
        bots=bots,
        counts=counts,
        record=record,
        today=Today()
        if room is not None
        else Today(
            sum(part.today.users for _, part in parts),
            sum(part.today.guests for _, part in parts),
            most_today,
        ),
        where={k: v for _, part in parts for k, v in part.where.items()},
    )


def _snapshot_keys(shard: Shard, room: str | None, day: int) -> list[str]:
    return [
        *(shard_key(shard, kind, room) for kind in KINDS),
        *(shard.key(name) for name in ("record", "history", "generation")),
        *(shard.key(f"day:{day}:{kind}") for kind in ("users", "guests")),
        shard.key("daily-peaks"),
        shard.key("where"),
    ]


def _snapshot_part(config: Config, shard: Shard, reply: Any) -> Snapshot:
    """One shard's answer (with one shard, the whole answer)."""
    now, listed, counts, (best, best_at), generation, daily, where = reply
    config.state.clock.observe(float(now), generation.decode(), shard.index)
    users, hidden, guests, bots = (_pairs(flat) for flat in listed)
    return Snapshot(
        now=float(now),
        window=config.window,
        users=users,
        hidden=hidden,
        guests=guests,
        bots=bots,
        counts=Counts.of(counts),
        record=None if best is None else (int(best), float(best_at)),
        today=Today(*(int(n) for n in daily)),
        where={
            member: found
            for (member, _), found in zip(
                [*users, *hidden], [*where[0], *where[1]], strict=True
            )
            if found
        },
    )


def _newest(
    lists: list[list[tuple[str, float]]], limit: int
) -> list[tuple[str, float]]:
    """The ``limit`` newest of the shards' lists, each newest first."""
    if len(lists) == 1:
        return lists[0]
    merged = heapq.merge(*lists, key=lambda pair: -pair[1])
    return [pair for pair, _ in zip(merged, range(limit), strict=False)]


def _counted(
    config: Config, parts: list[tuple[Shard, Snapshot]], now: float | None
) -> Counts:
    """The shards' counts added up; with ``now`` (the site's sets, which
    keep estimates; a room's do not), a set at its cap counted by its
    estimate."""
    totals = dict.fromkeys(KINDS, 0)
    at_cap: list[tuple[Shard, Kind, int]] = []
    for shard, part in parts:
        for kind in KINDS:
            counted = getattr(part.counts, kind)
            if now is not None and kind in ESTIMATED and counted >= config.max_members:
                at_cap.append((shard, kind, counted))
            else:
                totals[kind] += counted
    estimated = {kind for _, kind, _ in at_cap}
    guesses = _estimates(config, at_cap, now) if now is not None else []
    for (_, kind, counted), guess in zip(at_cap, guesses, strict=True):
        totals[kind] += max(counted, guess)
    return Counts(**totals, estimated=frozenset(estimated))


def _estimates(
    config: Config, sets: list[tuple[Shard, Kind, int]], now: float
) -> list[int]:
    """How many members each set would hold were it not capped: the union of
    the HyperLogLogs of the window's minutes (one round trip), the oldest
    minute counted for the part of it inside the window."""
    if not sets:
        return []
    since = now - config.window
    first, last = int(since // 60), int(now // 60)
    inside = (60 * (first + 1) - since) / 60
    pipe = config.client.pipeline(transaction=False)
    for shard, kind, _ in sets:
        minutes = [estimate_key(shard.tag, kind, m) for m in range(first, last + 1)]
        _queue(pipe, "PFCOUNT", *minutes)
        _queue(pipe, "PFCOUNT", *minutes[1:])
    counted = pipe.execute()
    return [
        round(newer + inside * (every - newer))
        for every, newer in zip(counted[::2], counted[1::2], strict=True)
    ]


def _raise_site(
    config: Config, counts: Counts, day: int
) -> tuple[tuple[int, float] | None, int]:
    """Raise the site's record and today's peak to the shards' sum (they
    cannot, holding a part each); the record, and today's peak. While the
    server holding them fails (its breaker opened), no record, and the
    number online now for today's peak: the counts of the shards that
    answer are worth more than the record."""
    breaker = config.state.record_breaker
    if breaker.is_open:
        return None, counts.people
    try:
        best, best_at, peak = _run(
            config,
            "raise",
            [config.key("record"), config.key("daily-peaks")],
            [counts.people, day],
        )
    except RedisError as exc:
        breaker.failed(exc)
        return None, counts.people
    breaker.succeeded()
    record = None if best is None else (int(best), float(best_at))
    return record, int(peak)


def sync_clock(shard: int | None = None) -> None:
    """Learn Redis' time and the data generation of ``shard`` (of every
    shard if ``None``) now; see ``ServerClock``."""
    config = get_config()
    shards = config.shards if shard is None else (config.shards[shard],)
    calls = [Call("clock", [one.key("generation")], [], one) for one in shards]
    replies = (
        _run_shards(config, calls)
        if shard is None
        else [(calls[0], _run(config, "clock", calls[0].keys, []))]
    )
    for call, (now, generation) in replies:
        config.state.clock.observe(float(now), generation.decode(), call.shard.index)


def last_seen_many(pks: Iterable[object]) -> LastSeen:
    """When each user was last seen, hidden or not, with ZMSCORE: one
    pipelined round trip, a script per shard and ``LAST_SEEN_BATCH`` users."""
    config = get_config()
    members = list(dict.fromkeys(str(pk) for pk in pks))
    if not members:
        return LastSeen(now=_server_time(), seen={}, hidden=frozenset())
    by_shard: dict[Shard, list[str]] = {}
    for member in members:
        by_shard.setdefault(config.shard_of(member), []).append(member)
    calls = [
        Call(
            "last_seen",
            [shard.key("users"), shard.key("hidden")],
            chosen[start : start + LAST_SEEN_BATCH],
            shard,
        )
        for shard, chosen in by_shard.items()
        for start in range(0, len(chosen), LAST_SEEN_BATCH)
    ]
    now = 0.0
    seen: dict[str, float] = {}
    hidden: set[str] = set()
    for call, (answered_at, visible, concealed) in _run_shards(config, calls):
        now = max(now, float(answered_at))
        for asked, shown, secret in zip(call.args, visible, concealed, strict=True):
            pk = str(asked)
            if secret is not None and (shown is None or float(secret) > float(shown)):
                seen[pk] = float(secret)
                hidden.add(pk)
            elif shown is not None:
                seen[pk] = float(shown)
    return LastSeen(now=float(now), seen=seen, hidden=frozenset(hidden))


def last_seen(pk: object) -> float | None:
    """When the user was last seen, hidden or not, if Redis still remembers."""
    return last_seen_many([pk]).seen.get(str(pk))


def most_ever_online() -> tuple[int, float] | None:
    """The most people (not bots) ever online at once, and when."""
    config = get_config()
    count, at = config.client.hmget(config.key("record"), ["count", "at"])
    if count is None or at is None:
        return None
    return int(count), float(at)


def reset_most_ever_online() -> bool:
    """Forget the record; whether there was one."""
    config = get_config()
    return bool(config.client.delete(config.key("record")))


@dataclass(frozen=True)
class History:
    """``minutes``: ``(minute start, most online)`` for each sampled minute
    of the past 24 hours; ``days``: ``(day start, most online)`` for each of
    the past 90 days with a peak; both oldest first, times in seconds.

    With shards, a minute's figure is the sum of the shards' highest in that
    minute, so it may run a little above the most online at any one moment.
    """

    now: float
    minutes: list[tuple[int, int]]
    days: list[tuple[int, int]]


def history() -> History:
    """The staff page's charts: one round trip (two with shards), at most
    1440 fields per shard and 90."""
    config = get_config()
    peaks_key = config.key("daily-peaks")
    calls = [
        Call("history", [shard.key("history"), shard.key("daily-peaks")], [], shard)
        for shard in config.shards
    ]
    replies = [reply for _, reply in _run_shards(config, calls)]
    if len(config.shards) == 1:
        peaks = replies[0][2]
    else:
        found: dict[bytes, bytes] = config.client.hgetall(peaks_key)  # type: ignore[assignment]
        peaks = [item for pair in found.items() for item in pair]
    now = max(float(reply[0]) for reply in replies)
    first = int(now) // 60 - HISTORY_MINUTES + 1
    online: dict[int, int] = {}
    for _, samples, _ in replies:
        for sample in samples:
            minute, _, most = sample.decode().partition(":")
            if int(minute) >= first:
                online[int(minute) * 60] = online.get(int(minute) * 60, 0) + int(most)
    days = [(int(peaks[i]) * 86400, int(peaks[i + 1])) for i in range(0, len(peaks), 2)]
    return History(now, sorted(online.items()), sorted(days))


def rooms() -> list[str]:
    """The rooms with anyone in them within the window."""
    config = get_config()
    calls = [
        Call("rooms", [shard.key("rooms")], [config.window], shard)
        for shard in config.shards
    ]
    found = _run_shards(config, calls)
    return sorted({name for _, names in found for name in _decoded(names)})


def _server_time() -> float:
    seconds, micros = get_config().client.time()
    return float(seconds + micros / 1_000_000)


@dataclass(frozen=True)
class Pruned:
    """What a prune removed: how many per set (``"room:thread:42:users"``),
    and which users (by primary key) left the site's lists."""

    removed: dict[str, int]
    users_left: list[str]
    hidden_left: list[str]


def prune(*, dry_run: bool = False) -> Pruned:
    """Remove members last seen before the window from every set, rooms
    included, shard by shard."""
    removed: dict[str, int] = {}
    users_left: list[str] = []
    hidden_left: list[str] = []
    for shard in get_config().shards:
        pruned = _prune_shard(shard, dry_run=dry_run)
        for name, count in pruned.removed.items():
            removed[name] = removed.get(name, 0) + count
        users_left += pruned.users_left
        hidden_left += pruned.hidden_left
    return Pruned(removed, users_left, hidden_left)


def _prune_shard(shard: Shard, *, dry_run: bool) -> Pruned:
    removed: dict[str, int]
    if dry_run:
        users_left: list[str] = []
        hidden_left: list[str] = []
        removed = {kind: _prune_set(shard, kind, dry_run=True) for kind in KINDS}
    else:
        users_left = _prune_named(shard, "users")
        hidden_left = _prune_named(shard, "hidden")
        _forget_where(shard, users_left + hidden_left)
        removed = {"users": len(users_left), "hidden": len(hidden_left)}
        removed |= {
            kind: _prune_set(shard, kind, dry_run=False) for kind in ("guests", "bots")
        }
    client = get_config().client
    for room in _decoded(client.zrange(shard.key("rooms"), 0, -1)):
        for kind in KINDS:
            removed[f"room:{room}:{kind}"] = _prune_set(
                shard, kind, room, dry_run=dry_run
            )
    removed["rooms"] = _prune_set(shard, "rooms", dry_run=dry_run)
    return Pruned(removed, users_left, hidden_left)


def _forget_where(shard: Shard, pks: list[str]) -> None:
    client = get_config().client
    for start in range(0, len(pks), PRUNE_BATCH):
        client.hdel(shard.key("where"), *pks[start : start + PRUNE_BATCH])


def _prune_named(shard: Shard, kind: Kind) -> list[str]:
    """Remove the stale members of ``kind`` a batch at a time; which."""
    config = get_config()
    keys = [shard.key(kind), shard.key("prune-scratch")]
    left: list[str] = []
    while True:
        batch = _decoded(
            _run(config, "prune", keys, [config.window, PRUNE_BATCH, "0", "1"])
        )
        left += batch
        if len(batch) < PRUNE_BATCH:
            return left


def _prune_set(
    shard: Shard, name: str, room: str | None = None, *, dry_run: bool
) -> int:
    config = get_config()
    keys = [shard_key(shard, name, room), shard.key("prune-scratch")]
    if dry_run:
        return int(_run(config, "prune", keys, [config.window, 0, "1", "0"]))
    removed = 0
    while True:
        args: list[str | int] = [config.window, PRUNE_BATCH, "0", "0"]
        batch = int(_run(config, "prune", keys, args))
        removed += batch
        if batch != PRUNE_BATCH:
            return removed


def _decoded(names: Any) -> list[str]:
    return [bytes(name).decode() for name in names]


def _pairs(flat: Sequence[bytes]) -> list[tuple[str, float]]:
    return [(flat[i].decode(), float(flat[i + 1])) for i in range(0, len(flat) - 1, 2)]


def load_scripts() -> None:
    """Load every script into Redis now, rather than on each script's first
    use: one ``SCRIPT LOAD`` each, which a cluster client sends to every
    master (its pipeline refuses them)."""
    client = get_config().client
    for path in files("whos_online").joinpath("lua").iterdir():
        client.script_load(_script(path.name.removesuffix(".lua"))[0])


@functools.cache
def _script(name: str) -> tuple[str, str]:
    """The source of ``lua/<name>.lua`` and its SHA1, read once."""
    source = files("whos_online").joinpath("lua", f"{name}.lua").read_text("utf-8")
    return source, hashlib.sha1(source.encode()).hexdigest()


def _run(
    config: Config,
    name: str,
    keys: Sequence[str | bytes],
    args: Sequence[str | bytes | int | float],
) -> Any:
    """Run a script by its SHA, by its source if Redis does not know it.

    Sending EVALSHA straight away, rather than through redis-py's
    ``Script`` object, spares the unguarded request a few microseconds.
    EVAL, like EVALSHA, goes to the one server holding the keys, and leaves
    the script known there; SCRIPT LOAD would go to every master of a
    cluster, and fail while any one is down.
    """
    client: Redis = config.client
    source, sha = _script(name)
    try:
        return client.evalsha(sha, len(keys), *keys, *args)
    except NoScriptError:
        return client.eval(source, len(keys), *keys, *args)


@dataclass(frozen=True)
class Call:
    """A script to run in ``shard``, among several sent together."""

    script: str
    keys: Sequence[str | bytes]
    args: Sequence[str | bytes | int | float]
    shard: Shard


def _run_all(config: Config, calls: Sequence[Call]) -> list[Any]:
    """Each call's reply: one round trip (per master, on a cluster)."""
    if len(calls) == 1:
        only = calls[0]
        return [_run(config, only.script, only.keys, only.args)]
    replies = _pipelined(config, calls)
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def _run_shards(config: Config, calls: Sequence[Call]) -> list[tuple[Call, Any]]:
    """Like :func:`_run_all`, for reads that can do without a shard that is
    down: a shard whose breaker is open is not asked, one that fails opens
    its breaker and is left out. Raises only when no shard answers."""
    if len(config.shards) == 1:
        return list(zip(calls, _run_all(config, calls), strict=True))
    breakers = config.state.shard_breakers
    live = [call for call in calls if not breakers[call.shard.index].is_open]
    try:
        replies = _pipelined(config, live)
    except RedisError:  # a cluster pipeline gives up whole when a node is down
        replies = [_reply_or_error(config, call) for call in live]
    answered = []
    failure: RedisError = RedisError("Every shard's breaker is open.")
    for call, reply in zip(live, replies, strict=True):
        if isinstance(reply, RedisError):
            failure = reply
            breakers[call.shard.index].failed(reply)
        else:
            breakers[call.shard.index].succeeded()
            answered.append((call, reply))
    if not answered:
        raise failure
    return answered


def _reply_or_error(config: Config, call: Call) -> Any:
    try:
        return _run(config, call.script, call.keys, call.args)
    except RedisError as exc:
        return exc


def _pipelined(config: Config, calls: Sequence[Call]) -> list[Any]:
    """Send every call before reading any reply; errors are returned in
    place. Calls of a script a server does not know are sent again with
    its source (see :func:`_run`)."""
    replies = _send(config, calls)
    unknown = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
    if unknown:
        again = _send(config, [calls[i] for i in unknown], by_source=True)
        for i, reply in zip(unknown, again, strict=True):
            replies[i] = reply
    return replies


def _send(
    config: Config, calls: Sequence[Call], *, by_source: bool = False
) -> list[Any]:
    """Each call's EVALSHA (EVAL ``by_source``), pipelined."""
    pipe = config.client.pipeline(transaction=False)
    command = "EVAL" if by_source else "EVALSHA"
    for call in calls:
        script = _script(call.script)[0 if by_source else 1]
        _queue(pipe, command, script, len(call.keys), *call.keys, *call.args)
    return list(pipe.execute(raise_on_error=False))


def _queue(pipe: Any, *command: str | bytes | int | float) -> None:
    """Add ``command`` to ``pipe`` by name: redis-py's cluster pipeline
    refuses its ``evalsha()``, ``eval()`` and ``pfcount()`` methods, but
    routes the commands themselves by their keys, like any other."""
    pipe.execute_command(*command)
