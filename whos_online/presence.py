"""The presence data in Redis, and every operation on it.

This module knows nothing of requests, users or privacy: it is given the
members to store (user primary keys, guest addresses in their stored form,
bot names) and hands back what Redis holds. Who is online lives in sorted
sets, one per kind of visitor, scored by the time each member was last seen
by the Redis server's clock, so web servers with skewed clocks agree. A room
("thread:42") has sets of its own. Every key of a site shares one Redis
Cluster hash tag, ``{KEY_PREFIX}``, so each script may touch several keys.

The scripts are the ``.lua`` files beside this module; each opens with its
KEYS, ARGV and reply. Round trips: recording is one, a snapshot is one,
statuses are one per ``LAST_SEEN_BATCH`` users, logging out is one (two if
the user was in rooms), pruning is one per set and batch. docs/data-model.md
lists them all.
"""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any, Literal

from redis import Redis
from redis.exceptions import NoScriptError

from whos_online.conf import Config, conf, get_config
from whos_online.privacy import SALT_SECONDS

Kind = Literal["users", "hidden", "guests", "bots"]
KINDS: tuple[Kind, ...] = ("users", "hidden", "guests", "bots")
# Who counts towards "most ever online" and "online now": people, not crawlers.
PEOPLE: tuple[Kind, ...] = ("users", "hidden", "guests")

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
    """The Redis key ``name`` (of ``room``); all of a site's share a hash tag."""
    config = get_config()
    if room is None:
        return config.key(name)
    if not is_room_name(room):
        raise ValueError(f"Not a room name: {room!r}")
    return config.key(f"room:{room}:{name}")


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
    step: the guest who just logged in as this user. ``device`` marks the
    session a user was seen on, so logging out elsewhere keeps them online.
    ``location`` ("label<TAB>path") is where a user is.
    With ``least_interval``, a member recorded less than that many seconds
    ago is not recorded again, and ``None`` is returned.
    """
    config = get_config()
    day = today(config)
    reply = _run(
        config,
        "record",
        _record_keys(config, kind, member if device else "", day),
        [
            config.window,
            member,
            config.max_members,
            least_interval,
            previous_guest,
            device,
            "1" if config.allow_invisible and kind == "users" else "0",
            day,
            location,
        ],
    )
    if not reply:
        return None
    now, generation, entered, hidden, unloaded = reply
    stamp = Stamp(
        float(now), generation.decode(), bool(entered), bool(hidden), bool(unloaded)
    )
    config.state.clock.observe(stamp.now, stamp.generation)
    return stamp


def today(config: Config) -> int:
    """Today by Redis' clock, in days since the epoch (UTC)."""
    return int(config.state.clock.now() // 86400)


def _record_keys(config: Config, kind: Kind, user: str, day: int) -> list[bytes]:
    keys = _fixed_record_keys(config.prefix, kind)
    if kind == "bots":
        return list(keys)
    devices = config.key(f"devices:{user}").encode() if user else keys[0]
    return [*keys, devices, *_daily_keys(config.prefix, day)]


# Every unguarded request sends these keys: built and encoded once (redis-py
# passes bytes through as they are), for a few prefixes and days at most.
@functools.lru_cache(maxsize=32)
def _fixed_record_keys(prefix: str, kind: Kind) -> tuple[bytes, ...]:
    site = f"{{{prefix}}}:"
    first = (site + kind, site + _other_set(kind), site + "generation")
    if kind == "bots":
        return tuple(name.encode() for name in first)
    people = (site + k for k in PEOPLE)
    rest = (site + "record", site + "history")
    return tuple(name.encode() for name in (*first, *people, *rest))


@functools.lru_cache(maxsize=8)
def _daily_keys(prefix: str, day: int) -> tuple[bytes, ...]:
    site = f"{{{prefix}}}:"
    names = ("invisible", f"day:{day}:users", f"day:{day}:guests", "daily-peaks")
    return tuple((site + name).encode() for name in (*names, "where"))


def _other_set(kind: Kind) -> Kind:
    """The set a member leaves when recorded as ``kind``: a user who becomes
    hidden (or visible again) is never in both."""
    return {"users": "hidden", "hidden": "users"}.get(kind, kind)  # type: ignore[return-value]


def record_in_room(room: str, kind: Kind, member: str) -> float | None:
    """Mark ``member`` as in ``room`` now; ``None`` if the room was refused
    because ``WHOS_ONLINE_MAX_ROOMS`` other rooms are in use."""
    config = get_config()
    target = key(kind, room)
    user_rooms = key(f"rooms-of:{member}") if kind in ("users", "hidden") else target
    keys = [key("rooms"), target, key(_other_set(kind), room), user_rooms]
    if config.allow_invisible and kind == "users":
        keys.append(key("invisible"))
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
    keys = [
        key("users"),
        key("hidden"),
        key(f"devices:{pk}"),
        key(f"rooms-of:{pk}"),
        key("where"),
    ]
    reply = _run(config, "log_out", keys, [pk, device, config.guard_seconds])
    if reply is None:
        return LoggedOut(removed=False, hidden=False)
    was_hidden, rooms = reply
    if rooms:
        pipe = config.client.pipeline(transaction=False)
        for room in _decoded(rooms):
            pipe.zrem(key("users", room), pk)
            pipe.zrem(key("hidden", room), pk)
        pipe.execute()
    return LoggedOut(removed=True, hidden=bool(was_hidden))


def set_invisible(pk: str, invisible: bool) -> bool:
    """Mirror a user's choice to appear offline and move them at once, in
    the site's sets and their rooms' (one round trip, two if in rooms).
    ``False`` if the mirror is missing: load it (:func:`load_invisible`),
    then call again."""
    config = get_config()
    keys = [key("invisible"), key("users"), key("hidden"), key(f"rooms-of:{pk}")]
    args = [pk, "1" if invisible else "0", config.window]
    rooms = _run(config, "visibility", keys, args)
    if rooms is None:
        return False
    if rooms:
        leave: Kind = "users" if invisible else "hidden"
        join: Kind = "hidden" if invisible else "users"
        _move_in_rooms(config, pk, _decoded(rooms), leave, join)
    return True


def _move_in_rooms(
    config: Config, pk: str, rooms: list[str], leave: Kind, join: Kind
) -> None:
    """Move ``pk`` from ``leave`` to ``join`` in each room, keeping when they
    were seen: two pipelined round trips."""
    reads = config.client.pipeline(transaction=False)
    for room in rooms:
        reads.zscore(key(leave, room), pk)
    writes = config.client.pipeline(transaction=False)
    for room, seen in zip(rooms, reads.execute(), strict=True):
        if seen is not None:
            writes.zrem(key(leave, room), pk)
            writes.zadd(key(join, room), {pk: seen})
            writes.expire(key(join, room), config.window)
    writes.execute()


def load_invisible(pks: Iterable[object]) -> int:
    """Fill the mirror of users who chose to appear offline (after Redis lost
    it); how many there are."""
    members = [str(pk) for pk in pks]
    return int(_run(get_config(), "load_invisible", [key("invisible")], members))


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
    newest first, with every count and the record: one round trip.

    A site-wide snapshot also samples the minute for the history and may
    raise the record, so both stay true while everyone is guarded.
    """
    config = get_config()
    bots_listed = limit if bot_limit is None else bot_limit
    limits = [limit, hidden_limit, guest_limit, bots_listed]
    day = today(config)
    keys = [
        *(key(kind, room) for kind in KINDS),
        key("record"),
        key("history"),
        key("generation"),
        key(f"day:{day}:users"),
        key(f"day:{day}:guests"),
        key("daily-peaks"),
        key("where"),
    ]
    args = [
        config.window,
        *(max(n, 0) for n in limits),
        "1" if room is None else "0",
        day,
    ]
    now, listed, counts, (best, best_at), generation, daily, where = _run(
        config, "snapshot", keys, args
    )
    config.state.clock.observe(float(now), generation.decode())
    users, hidden, guests, bots = (_pairs(flat) for flat in listed)
    return Snapshot(
        now=float(now),
        window=config.window,
        users=users,
        hidden=hidden,
        guests=guests,
        bots=bots,
        counts=Counts(*(int(n) for n in counts)),
        record=None if best is None else (int(best), float(best_at)),
        today=Today(*(int(n) for n in daily)) if room is None else Today(),
        where={
            member: found
            for (member, _), found in zip(
                [*users, *hidden], [*where[0], *where[1]], strict=True
            )
            if found
        },
    )


def sync_clock() -> None:
    """Learn Redis' time and data generation now (see ``ServerClock``)."""
    config = get_config()
    now, generation = _run(config, "clock", [key("generation")], [])
    config.state.clock.observe(float(now), generation.decode())


def last_seen_many(pks: Iterable[object]) -> LastSeen:
    """When each user was last seen, hidden or not, with ZMSCORE: one round
    trip per ``LAST_SEEN_BATCH`` users, however many there are."""
    config = get_config()
    members = list(dict.fromkeys(str(pk) for pk in pks))
    now = _server_time() if not members else 0.0
    seen: dict[str, float] = {}
    hidden: set[str] = set()
    for start in range(0, len(members), LAST_SEEN_BATCH):
        batch = members[start : start + LAST_SEEN_BATCH]
        now, visible, concealed = _run(
            config, "last_seen", [key("users"), key("hidden")], batch
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


def most_ever_online() -> tuple[int, float] | None:
    """The most people (not bots) ever online at once, and when."""
    count, at = get_config().client.hmget(key("record"), ["count", "at"])
    if count is None or at is None:
        return None
    return int(count), float(at)


def reset_most_ever_online() -> bool:
    """Forget the record; whether there was one."""
    return bool(get_config().client.delete(key("record")))


@dataclass(frozen=True)
class History:
    """``minutes``: ``(minute start, most online)`` for each sampled minute
    of the past 24 hours; ``days``: ``(day start, most online)`` for each of
    the past 90 days with a peak; both oldest first, times in seconds."""

    now: float
    minutes: list[tuple[int, int]]
    days: list[tuple[int, int]]


def history() -> History:
    """The staff page's charts: one round trip, at most 1440 + 90 fields."""
    now, samples, peaks = _run(
        get_config(), "history", [key("history"), key("daily-peaks")], []
    )
    first = int(float(now)) // 60 - HISTORY_MINUTES + 1
    minutes = []
    for sample in samples:
        minute, _, online = sample.decode().partition(":")
        if int(minute) >= first:
            minutes.append((int(minute) * 60, int(online)))
    days = [(int(peaks[i]) * 86400, int(peaks[i + 1])) for i in range(0, len(peaks), 2)]
    return History(float(now), sorted(minutes), sorted(days))


def rooms() -> list[str]:
    """The rooms with anyone in them within the window."""
    since = _server_time() - get_config().window
    return _decoded(get_config().client.zrangebyscore(key("rooms"), since, "+inf"))


def _server_time() -> float:
    seconds, micros = get_config().client.time()
    return float(seconds + micros / 1_000_000)


def guest_salt() -> bytes:
    """The salt of hashed guest addresses, set now if there is none."""
    salt: bytes = _run(
        get_config(), "salt", [key("salt")], [secrets.token_hex(16), SALT_SECONDS]
    )
    return salt


@dataclass(frozen=True)
class Pruned:
    """What a prune removed: how many per set (``"room:thread:42:users"``),
    and which users (by primary key) left the site's lists."""

    removed: dict[str, int]
    users_left: list[str]
    hidden_left: list[str]


def prune(*, dry_run: bool = False) -> Pruned:
    """Remove members last seen before the window from every set, rooms
    included."""
    removed: dict[str, int]
    if dry_run:
        users_left: list[str] = []
        hidden_left: list[str] = []
        removed = {kind: _prune_set(key(kind), dry_run=True) for kind in KINDS}
    else:
        users_left = _prune_named(key("users"))
        hidden_left = _prune_named(key("hidden"))
        _forget_where(users_left + hidden_left)
        removed = {"users": len(users_left), "hidden": len(hidden_left)}
        removed |= {
            kind: _prune_set(key(kind), dry_run=False) for kind in ("guests", "bots")
        }
    for room in _decoded(get_config().client.zrange(key("rooms"), 0, -1)):
        for kind in KINDS:
            removed[f"room:{room}:{kind}"] = _prune_set(
                key(kind, room), dry_run=dry_run
            )
    removed["rooms"] = _prune_set(key("rooms"), dry_run=dry_run)
    return Pruned(removed, users_left, hidden_left)


def _forget_where(pks: list[str]) -> None:
    client = get_config().client
    for start in range(0, len(pks), PRUNE_BATCH):
        client.hdel(key("where"), *pks[start : start + PRUNE_BATCH])


def _prune_named(name: str) -> list[str]:
    """Remove the stale members of ``name`` a batch at a time; which."""
    config = get_config()
    keys = [name, key("prune-scratch")]
    left: list[str] = []
    while True:
        batch = _decoded(
            _run(config, "prune", keys, [config.window, PRUNE_BATCH, "0", "1"])
        )
        left += batch
        if len(batch) < PRUNE_BATCH:
            return left


def _prune_set(name: str, *, dry_run: bool) -> int:
    config = get_config()
    keys = [name, key("prune-scratch")]
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
    """Load every script into Redis now (one round trip), rather than on
    each script's first use."""
    pipe = get_config().client.pipeline(transaction=False)
    for path in files("whos_online").joinpath("lua").iterdir():
        pipe.script_load(_script(path.name.removesuffix(".lua"))[0])
    pipe.execute()


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
    """Run a script by its SHA, loading it first if Redis does not know it.

    Sending EVALSHA straight away, rather than through redis-py's
    ``Script`` object, spares the unguarded request a few microseconds.
    """
    client: Redis = config.client
    source, sha = _script(name)
    try:
        return client.evalsha(sha, len(keys), *keys, *args)
    except NoScriptError:
        client.script_load(source)
        return client.evalsha(sha, len(keys), *keys, *args)
