"""Presence as people see it: users as model instances, statuses, and who
may see whom.

A thin layer over :mod:`whos_online.store` for the tags, the endpoints,
the staff page and :mod:`whos_online.api`. Hidden users are listed, and
their status shown, only to active staff; guest addresses and bot names we
did not choose never leave through the public roster.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from whos_online.bots import is_known
from whos_online.conf import conf
from whos_online.failsafe import quietly
from whos_online.locations import Location, parse
from whos_online.store import Counts, LastSeen, Snapshot, Today, get_store
from whos_online.visitors import Visit, visit_of

Status = Literal["online", "away", "offline"]


@dataclass(frozen=True)
class OnlineUser:
    user: Any
    last_seen: datetime
    hidden: bool = False
    admin_url: str | None = None
    """Set on the staff page, for viewers who may open the user's admin page."""
    location: Location | None = None
    """Where they were at their last record, if the page had a label."""

    @property
    def name(self) -> str:
        return str(self.user)

    @property
    def url(self) -> str | None:
        get_url = getattr(self.user, "get_absolute_url", None)
        return get_url() if callable(get_url) else None


@dataclass(frozen=True)
class Seen:
    """A member known by name (a bot; on the staff page, a guest's stored
    address) and when it was last seen."""

    name: str
    last_seen: datetime


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
    bots: list[Seen] = field(default_factory=list)
    """Well-known crawlers only, by the names we keep."""
    other_bots: int = 0
    """Crawlers online that are not well known: counted, never named."""
    counts: Counts = field(default_factory=Counts)
    record: tuple[int, datetime] | None = None
    shows_hidden: bool = False
    today: Today = field(default_factory=Today)
    """The site's figures for today (zero for a room)."""
    shows_names: bool = True
    """False when the site shows this viewer counts only
    (``WHOS_ONLINE_NAMES_VISIBLE_TO``, ``WHOS_ONLINE_MIN_NAMES_LISTED``)."""

    @property
    def more(self) -> int:
        """How many users online the viewer may see but are not in ``users``."""
        if not self.shows_names:
            return 0
        listable = self.counts.users + (self.counts.hidden if self.shows_hidden else 0)
        return max(listable - len(self.users), 0)


@dataclass(frozen=True)
class UserPresence:
    user: Any
    status: Status
    last_seen: datetime | None


def is_active_staff(user: Any) -> bool:
    """Who may see hidden users and the staff page."""
    return bool(getattr(user, "is_staff", False) and user.is_active)


def may_see_names(viewer: Any) -> bool:
    """Whether ``WHOS_ONLINE_NAMES_VISIBLE_TO`` lets ``viewer`` see names."""
    audience = conf.NAMES_VISIBLE_TO
    if audience == "everyone":
        return True
    if audience == "users":
        return bool(getattr(viewer, "is_authenticated", False))
    return audience == "staff" and is_active_staff(viewer)


def online_roster(
    limit: int | None = None,
    *,
    room: str | None = None,
    viewer: Any = None,
    request: HttpRequest | None = None,
) -> Roster:
    """Who is online now: one Redis round trip and at most one query.

    Given the ``request``, every roster of the page shares one snapshot: the
    widget and any number of ``{% online_count %}`` cost one round trip.
    """
    limit = conf.MAX_NAMES if limit is None else max(limit, 0)
    shows_hidden = is_active_staff(viewer)
    snapshot = quietly(lambda: snapshot_for(limit, room, shows_hidden, request), None)
    if snapshot is None:
        return Roster(window=conf.WINDOW, room=room)
    visible = snapshot.counts.users + (snapshot.counts.hidden if shows_hidden else 0)
    if not may_see_names(viewer) or visible < conf.MIN_NAMES_LISTED:
        return Roster(
            window=snapshot.window,
            available=True,
            room=room,
            counts=snapshot.counts,
            record=as_record(snapshot.record),
            today=snapshot.today,
            shows_hidden=shows_hidden,
            shows_names=False,
        )
    known = [
        Seen(name, as_datetime(seen)) for name, seen in snapshot.bots if is_known(name)
    ]
    return Roster(
        window=snapshot.window,
        available=True,
        room=room,
        users=users_in_order(snapshot.users, snapshot.hidden, snapshot.where)[:limit],
        bots=known,
        other_bots=max(snapshot.counts.bots - len(known), 0),
        counts=snapshot.counts,
        record=as_record(snapshot.record),
        today=snapshot.today,
        shows_hidden=shows_hidden,
    )


def snapshot_for(
    limit: int, room: str | None, shows_hidden: bool, request: HttpRequest | None
) -> Snapshot:
    """A snapshot listing at least ``limit`` of each kind the viewer may see:
    the page's own if it took one, else this process's if younger than
    ``WHOS_ONLINE_SNAPSHOT_MAX_AGE`` (unless the visitor just arrived, who
    must see themselves), else a new one."""
    key = (room, shows_hidden)
    visit = None if request is None else visit_of(request)
    taken = None if visit is None else visit.snapshots.get(key)
    if taken is None or taken[0] < limit:
        taken = _shared_or_new(key, max(limit, conf.MAX_NAMES), visit)
        if visit is not None:
            visit.snapshots[key] = taken
    return taken[1]


def _shared_or_new(
    key: tuple[str | None, bool], limit: int, visit: Visit | None
) -> tuple[int, Snapshot]:
    store = get_store()
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
    snapshot = store.snapshot(
        limit, room=room, hidden_limit=limit if shows_hidden else 0
    )
    if store.config.snapshot_max_age > 0:
        store.state.snapshots.put(key, (time.monotonic(), limit, snapshot))
    return limit, snapshot


def users_in_order(
    visible: Sequence[tuple[str, float]],
    hidden: Sequence[tuple[str, float]] = (),
    where: Mapping[str, bytes] | None = None,
) -> list[OnlineUser]:
    """Users for ``(key, last seen)`` pairs, newest first, in one query.

    Keys that are not valid primary keys, or whose user is gone, are skipped.
    """
    members = sorted(
        [(seen, member, False) for member, seen in visible]
        + [(seen, member, True) for member, seen in hidden],
        reverse=True,
    )
    if not members:
        return []
    model = get_user_model()
    wanted: dict[object, tuple[float, bool, str]] = {}
    for seen, member, is_hidden in members:
        try:
            pk = model._meta.pk.to_python(member)
        except ValidationError:
            continue
        wanted.setdefault(pk, (seen, is_hidden, member))
    users = model._default_manager.in_bulk(list(wanted))
    places = where or {}
    return [
        OnlineUser(
            user, as_datetime(seen), is_hidden, location=parse(places.get(member))
        )
        for pk, (seen, is_hidden, member) in wanted.items()
        if (user := users.get(pk)) is not None
    ]


def presence_of(users: Iterable[Any], *, viewer: Any = None) -> list[UserPresence]:
    """Status and last-seen time of each user, in one Redis round trip (per
    thousand users); ``offline`` for everyone if Redis cannot be read."""
    users = list(users)
    found = quietly(lambda: get_store().last_seen_many(u.pk for u in users), None)
    if found is None:
        return [UserPresence(user, "offline", None) for user in users]
    shows_hidden = is_active_staff(viewer)
    return [_presence(user, found, shows_hidden) for user in users]


def _presence(user: Any, found: LastSeen, shows_hidden: bool) -> UserPresence:
    member = str(user.pk)
    seen = found.seen.get(member)
    if member in found.hidden and not shows_hidden:
        seen = None
    return UserPresence(
        user, status_for(seen, found.now), None if seen is None else as_datetime(seen)
    )


def status_for(last_seen: float | None, now: float) -> Status:
    """``online`` within ``AWAY_AFTER`` seconds, ``away`` within the window."""
    if last_seen is None:
        return "offline"
    ago = now - last_seen
    if ago < conf.AWAY_AFTER:
        return "online"
    if ago < conf.WINDOW:
        return "away"
    return "offline"


def as_datetime(timestamp: float) -> datetime:
    """A score (seconds since the epoch) as an aware UTC datetime."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc)


def as_record(record: tuple[int, float] | None) -> tuple[int, datetime] | None:
    return None if record is None else (record[0], as_datetime(record[1]))
