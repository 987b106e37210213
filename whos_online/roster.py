"""Presence as people see it: users as model instances, statuses, and who
may see whom.

A thin layer over :mod:`whos_online.store` for the tags, the endpoints,
the staff page and :mod:`whos_online.api`: every name, status, last-seen
time and count it gives goes through the viewer's
:class:`~whos_online.gate.Gate`; guest addresses and bot names we did not
choose never leave through the public roster.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.http import HttpRequest

from whos_online import page
from whos_online.bots import is_known
from whos_online.conf import get_config
from whos_online.gate import Gate
from whos_online.marks import room_name
from whos_online.page import visit_made
from whos_online.readers import loaded_viewer, reader_in, with_reader
from whos_online.store import Counts, Snapshot, Today, get_store
from whos_online.users import Named, OnlineUser, as_datetime, as_record, users_in_order
from whos_online.visibility import Choices

# The most users a page's badges are read from in one snapshot; past it, a
# badge of a user not among the most recent costs a round trip of its own.
BADGE_NAMES = 1000
# The newest users of each room of a listing checked against the gate (their
# choices, the site's rule): the counts of busier rooms follow Redis past it.
ROOM_USERS_CHECKED = 20


@dataclass(frozen=True)
class Windowed:
    window: int

    @property
    def window_minutes(self) -> int:
        return max(round(self.window / 60), 1)


@dataclass(frozen=True)
class Roster(Windowed):
    """What the widget shows. ``available`` is False when Redis could not be read."""

    available: bool = False
    room: str | None = None
    users: list[OnlineUser] = field(default_factory=list)
    bots: list[Named] = field(default_factory=list)
    """Well-known crawlers only, by the names we keep."""
    other_bots: int = 0
    """Crawlers online that are not well known: counted, never named."""
    counts: Counts = field(default_factory=Counts)
    record: tuple[int, datetime] | None = None
    shows_hidden: bool = False
    shows_hidden_count: bool = False
    """Whether the number of hidden users is told to this viewer; when it is
    not, ``counts.hidden`` is 0 and means nothing."""
    today: Today = field(default_factory=Today)
    """The site's figures for today (zero for a room)."""
    shows_names: bool = True
    """False when the site shows this viewer counts only
    (``WHOS_ONLINE_NAMES_VISIBLE_TO``, ``WHOS_ONLINE_MIN_NAMES_LISTED``)."""
    nameable: int = 0
    """How many users online the viewer may see named."""
    now: datetime | None = None
    """When the snapshot was taken, by Redis' clock (``None`` when Redis
    could not be read): what "N minutes ago" is counted to."""
    today_users: list[Any] = field(default_factory=list)
    """Users seen today that the viewer may see, by name, when asked for."""
    made_from: tuple[Snapshot, Hashable] | None = None
    """The snapshot this process shares between pages and what else the
    roster was made from (the kind of viewer, the users' choices, the limit),
    when every viewer given the same is shown the same: ``None`` when it was
    made for its viewer alone."""

    @property
    def more(self) -> int:
        """How many users online the viewer may see but are not in ``users``."""
        if not self.shows_names:
            return 0
        return max(self.nameable - len(self.users), 0)

    @functools.cached_property
    def shown(self) -> bytes:
        """All the roster tells, as a key: rosters alike in it show alike,
        whenever their snapshots were read and whatever they were made from.
        A digest of its text, so that a key of many users is cheap to look
        up with."""
        told = (
            *(getattr(self, name) for name in TOLD),
            [
                (o.name, o.url, o.hidden, o.time_shown, o.grade)
                + (o.last_seen, o.location)
                for o in self.users
            ],
            self.bots,
            [(user.pk, str(user)) for user in self.today_users],
        )
        return hashlib.blake2b(repr(told).encode(), digest_size=16).digest()


# What a roster tells besides its lists of people.
TOLD = (
    "window",
    "available",
    "room",
    "other_bots",
    "counts",
    "record",
    "shows_hidden",
    "shows_hidden_count",
    "today",
    "shows_names",
    "nameable",
)


def gate_of(viewer: Any, request: HttpRequest | None) -> Gate:
    """The gate an output asks: the page's, noted as used, when there is a
    request; else one for ``viewer``."""
    return Gate(viewer) if request is None else page.of(request).gate_used()


def online_roster(
    limit: int | None = None,
    *,
    room: str | None = None,
    viewer: Any = None,
    request: HttpRequest | None = None,
    today_named: int = 0,
    window: int | None = None,
) -> Roster:
    """Who is online now, as the gate lets the viewer see it: one Redis
    round trip and at most two queries (the users' choices, the users).

    Given the ``request``, every roster of the page shares one snapshot: the
    widget and any number of ``{% online_count %}`` cost one round trip.
    With ``today_named``, the roster also names as many users seen today
    (``today_users``), in the same round trip and one query more. With
    ``window`` (seconds), it is who was seen within it, read afresh.
    """
    limit = get_config().max_names if limit is None else max(limit, 0)
    gate = gate_of(viewer, request)
    shows_hidden = gate.shows_hidden
    judges = gate.judges_each_user
    # The site's rule sees every user it may hide, up to BADGE_NAMES: the
    # hidden users too, wherever they reach this viewer, listed or counted.
    listing = max(limit, BADGE_NAMES) if judges else limit
    with_hidden = shows_hidden or (judges and gate.tells_of_hidden)
    if today_named or window is not None:
        snapshot = get_store().snapshot(
            listing,
            room=room,
            hidden_limit=listing if with_hidden else 0,
            today_named=today_named,
            window=window,
        )
    else:
        snapshot = snapshot_for(listing, room, with_hidden, request)
    if snapshot is None:
        return Roster(window=get_config().window, room=room)
    shared = snapshot if snapshot is _shared(room, with_hidden) else None
    reader = None if room is None else reader_in(room, request)
    if room is not None and reader is not None:
        snapshot = with_reader(snapshot, room, reader, shows_hidden)
    choices = gate.chosen([*(m for m, _ in snapshot.users), *snapshot.today_named])
    kind = gate.kind
    made: Hashable = None
    if snapshot is shared and kind is not None:
        # Any viewer of this kind given the same choices is shown the same
        # roster of the snapshot the process shares: made once.
        made = (id(shared), limit, kind, choices.invisible, choices.hide_last_seen)
        remembered = get_store().state.rosters.get(made)
        if remembered is not None and remembered[0] is shared:
            return remembered[1]  # type: ignore[no-any-return]
    # Only users the snapshot lists as visible move to the hidden: a choice
    # of anyone else (the viewer, a user seen today) moves no count.
    chosen = {member for member, _ in snapshot.users if member in choices.invisible}
    visible_pairs = [pair for pair in snapshot.users if pair[0] not in chosen]
    hidden_pairs = [*snapshot.hidden, *(p for p in snapshot.users if p[0] in chosen)]
    listed: list[OnlineUser] | None = None
    refused = refused_hidden = 0
    loaded = loaded_viewer(reader, gate.viewer)
    if judges:
        judged = users_in_order(
            visible_pairs, hidden_pairs if with_hidden else (), snapshot.where, loaded
        )
        kept = gate.refused([online.user for online in judged])
        for online in judged:
            if str(online.user.pk) in kept:
                refused_hidden += online.hidden
                refused += not online.hidden
        listed = [
            online
            for online in judged
            if str(online.user.pk) not in kept and (shows_hidden or not online.hidden)
        ]
    visible = snapshot.counts.users - len(chosen) - refused
    hidden = snapshot.counts.hidden + len(chosen) - refused_hidden
    nameable = visible + (hidden if shows_hidden else 0)
    counts = gate.counts(snapshot.counts, len(chosen), refused, refused_hidden)
    record, today = snapshot.record, snapshot.today
    if room is None:
        record, today = gate.figures(record, today, counts, snapshot.now)
    figures: dict[str, Any] = {
        "window": snapshot.window,
        "available": True,
        "room": room,
        "counts": counts,
        "record": as_record(record),
        "today": today,
        "shows_hidden": shows_hidden,
        "shows_hidden_count": gate.shows_hidden_count,
        "now": as_datetime(snapshot.now),
    }
    if made is not None:
        figures["made_from"] = (shared, made)
    if not gate.shows_names(nameable):
        return _kept(made, shared, Roster(**figures, shows_names=False))
    known = [
        Named(name, as_datetime(seen)) for name, seen in snapshot.bots if is_known(name)
    ]
    if listed is None and limit:
        listed = users_in_order(
            visible_pairs, hidden_pairs if shows_hidden else (), snapshot.where, loaded
        )
    listed = [_timed(o, gate, choices, snapshot.now) for o in (listed or [])[:limit]]
    roster = Roster(
        **figures,
        users=listed,
        bots=known,
        other_bots=max(snapshot.counts.bots - len(known), 0),
        nameable=nameable,
        today_users=_seen_today(snapshot.today_named, gate, choices),
    )
    return _kept(made, shared, roster)


def _kept(made: Hashable, shared: Snapshot | None, roster: Roster) -> Roster:
    """``roster``, kept by the process for whoever it was ``made`` for, while
    the ``shared`` snapshot it was made from is the one shared."""
    if made is not None:
        get_store().state.rosters.put(made, (shared, roster))
    return roster


def _seen_today(pks: list[str], gate: Gate, choices: Choices) -> list[Any]:
    """The users ``pks`` seen today that the gate lets the viewer be told
    of, by name."""
    if not pks or not gate.shows_exact_last_seen(hides=False):
        return []  # nobody seen today may be named: none is read
    users = [online.user for online in users_in_order([(pk, 0.0) for pk in pks])]
    return gate.seen_today(users, choices)


def _timed(online: OnlineUser, gate: Gate, choices: Choices, now: float) -> OnlineUser:
    """``online`` with when they were last seen as the viewer may learn it."""
    seen = online.last_seen.timestamp()
    hides = str(online.user.pk) in choices.hide_last_seen
    exact, grade = gate.last_seen(seen, now, hides)
    if exact is not None:
        return online
    return replace(online, time_shown=False, grade=grade)


def room_counts(
    items: Iterable[Any], *, viewer: Any = None, request: HttpRequest | None = None
) -> list[tuple[Any, Counts]]:
    """How many are in the room of each of ``items`` (room names or model
    instances: the rows of a listing), as the gate lets the viewer learn
    it: one Redis round trip for every row, and one query for the choices
    of the newest users of each room (and the site's rule, if it has one).
    A row whose room name is not valid, or when Redis fails, counts none."""
    items = list(items)
    names = [room_name(item) for item in items]
    gate = gate_of(viewer, request)
    # The site's rule judges each room's newest hidden users too, wherever
    # hidden users reach this viewer.
    judged_hidden = (
        ROOM_USERS_CHECKED if gate.judges_each_user and gate.tells_of_hidden else 0
    )
    found = get_store().room_counts(
        [n for n in names if n], ROOM_USERS_CHECKED, judged_hidden
    )
    if found is None:
        return [(item, Counts()) for item in items]
    pks = {member for room in found.values() for member, _ in room.users}
    choices = gate.chosen(pks)
    refused: set[str] = set()
    if gate.judges_each_user:
        hidden = {member for room in found.values() for member, _ in room.hidden}
        online = users_in_order([(pk, 0.0) for pk in pks | hidden])
        refused = gate.refused([o.user for o in online])
    shown = []
    for item, name in zip(items, names, strict=True):
        room = None if name is None else found.get(name)
        if room is None:
            shown.append((item, Counts()))
            continue
        listed = {member for member, _ in room.users}
        moved = listed & choices.invisible
        concealed = {member for member, _ in room.hidden} | moved
        counts = gate.counts(
            room.counts,
            len(moved),
            refused=len((listed - moved) & refused),
            refused_hidden=len(concealed & refused),
        )
        shown.append((item, counts))
    return shown


def snapshot_for(
    limit: int, room: str | None, shows_hidden: bool, request: HttpRequest | None
) -> Snapshot | None:
    """A snapshot listing at least ``limit`` of each kind the viewer may see:
    the page's own if it took one, else this process's if younger than
    ``WHOS_ONLINE_SNAPSHOT_MAX_AGE`` (unless the visitor just arrived, who
    must see themselves), else a new one; ``None`` if Redis failed."""
    key = (room, shows_hidden)
    taken = None if request is None else page.of(request).snapshots.get(key)
    if taken is None or taken[0] < limit:
        taken = _shared_or_new(key, max(limit, get_config().max_names), request)
        if taken is None:
            return None
        if request is not None:
            page.of(request).snapshots[key] = taken
    return taken[1]


def _shared(room: str | None, shows_hidden: bool) -> Snapshot | None:
    """The snapshot of ``room`` this process shares between its pages, if
    it keeps one."""
    kept = get_store().state.snapshots.get((room, shows_hidden))
    return None if kept is None else kept[2]


def _shared_or_new(
    key: tuple[str | None, bool], limit: int, request: HttpRequest | None
) -> tuple[int, Snapshot] | None:
    store = get_store()
    visit = None if request is None else visit_made(request)
    arrived = visit is not None and visit.stamp is not None and visit.stamp.entered
    shared = store.state.snapshots.get(key)
    if (
        shared is not None
        and not arrived
        and shared[1] >= limit
        and time.monotonic() - shared[0] < store.config.snapshot_max_age
    ):
        return shared[1], shared[2]
    room, shows_hidden = key
    started = time.monotonic()
    # A room lists its guests too, so that its reader can be found in it.
    snapshot = store.snapshot(
        limit,
        room=room,
        hidden_limit=limit if shows_hidden else 0,
        guest_limit=0 if room is None else limit,
    )
    if snapshot is None:
        return None
    if store.config.snapshot_max_age > 0:  # unless a change came meanwhile
        store.state.snapshots.keep(key, started, limit, snapshot)
    return limit, snapshot
