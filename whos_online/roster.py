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
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.translation import pgettext_lazy

from whos_online import page, visibility
from whos_online.bots import is_known
from whos_online.conf import conf
from whos_online.failsafe import quietly
from whos_online.locations import Location, parse
from whos_online.rooms import rooms_of_page
from whos_online.store import Counts, LastSeen, Snapshot, Today, get_store
from whos_online.visitors import Visit, Visitor, visit_of

Status = Literal["online", "away", "offline"]

# The most users a page's badges are read from in one snapshot; past it, a
# badge of a user not among the most recent costs a round trip of its own.
BADGE_NAMES = 1000
BADGES_ATTRIBUTE = "whos_online_badges"


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
    nameable: int = 0
    """How many users online the viewer may see named."""
    now: datetime | None = None
    """When the snapshot was taken, by Redis' clock (``None`` when Redis
    could not be read): what "N minutes ago" is counted to."""

    @property
    def more(self) -> int:
        """How many users online the viewer may see but are not in ``users``."""
        if not self.shows_names:
            return 0
        return max(self.nameable - len(self.users), 0)


STATUS_LABELS = {
    "online": pgettext_lazy("a user's presence status", "online"),
    "away": pgettext_lazy("a user's presence status", "away"),
    "offline": pgettext_lazy("a user's presence status", "offline"),
}


@dataclass(frozen=True)
class UserPresence:
    user: Any
    status: Status
    """``online``, ``away`` or ``offline``: a code for CSS classes and tests."""
    last_seen: datetime | None

    @property
    def label(self) -> str:
        """The status in the active language, for people to read."""
        return str(STATUS_LABELS[self.status])


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
    if room is not None and request is not None and room in rooms_of_page(request):
        snapshot = with_reader(snapshot, reader_of(request), shows_hidden)
    visible = snapshot.counts.users + (snapshot.counts.hidden if shows_hidden else 0)
    counts = snapshot.counts if shows_hidden else public_counts(snapshot.counts)
    if not may_see_names(viewer) or visible < conf.MIN_NAMES_LISTED:
        return Roster(
            window=snapshot.window,
            available=True,
            room=room,
            counts=counts,
            record=as_record(snapshot.record),
            today=snapshot.today,
            shows_hidden=shows_hidden,
            shows_names=False,
            now=as_datetime(snapshot.now),
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
        counts=counts,
        record=as_record(snapshot.record),
        today=snapshot.today,
        shows_hidden=shows_hidden,
        nameable=visible,
        now=as_datetime(snapshot.now),
    )


def reader_of(request: HttpRequest) -> Visitor | None:
    """The page's reader as the room will hold them: a user who chose to
    appear offline is hidden there (one query, for a user's room page)."""
    reader = visit_of(request).visitor
    if (
        reader is not None
        and reader.kind == "users"
        and conf.ALLOW_INVISIBLE
        and visibility.is_invisible(getattr(request, "user", None))
    ):
        return replace(reader, kind="hidden")
    return reader


def with_reader(
    snapshot: Snapshot, reader: Visitor | None, shows_hidden: bool
) -> Snapshot:
    """A room's snapshot with its reader in it as of now: the page records
    them there after the view, so its widget lists them already (once, if
    they were there before). A hidden reader who is not staff is left as
    they are: the hidden users were not listed to them, so whether they are
    in the room already cannot be told."""
    if reader is None or (reader.kind == "hidden" and not shows_hidden):
        return snapshot
    listed: list[tuple[str, float]] = getattr(snapshot, reader.kind)
    others = [pair for pair in listed if pair[0] != reader.member]
    counts = snapshot.counts
    if len(others) == len(listed):  # not in the room yet, as far as we can tell
        counts = replace(counts, **{reader.kind: getattr(counts, reader.kind) + 1})
    lists: dict[str, Any] = {reader.kind: [(reader.member, snapshot.now), *others]}
    return replace(snapshot, counts=counts, **lists)


def public_counts(counts: Counts) -> Counts:
    """The counts as everyone but staff sees them
    (``WHOS_ONLINE_PUBLIC_HIDDEN_COUNT``): by default hidden users are not
    counted at all, so being hidden looks exactly like being offline."""
    shown = conf.PUBLIC_HIDDEN_COUNT
    if shown == "separate":
        return counts
    if shown == "in-total":
        return replace(counts, users=counts.users + counts.hidden, hidden=0)
    return replace(counts, hidden=0)


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
    # A room lists its guests too, so that its reader can be found in it.
    snapshot = store.snapshot(
        limit,
        room=room,
        hidden_limit=limit if shows_hidden else 0,
        guest_limit=0 if room is None else limit,
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


def badge_of(user: Any) -> UserPresence:
    """A user's status and last-seen time as a badge beside their name shows
    them: hidden users are ``offline``, whoever looks.

    On a page made through the middleware, every badge is read from the
    page's one snapshot of the users online (shared with the widget), so a
    thread of twenty posts costs one round trip for all its badges; a user
    not online within the window is ``offline`` with no ``last_seen``.
    Elsewhere (an email, a command), one round trip per user.
    """
    request = page.current()
    if request is None:
        return presence_of([user])[0]
    badges: dict[str, UserPresence] = request.__dict__.setdefault(BADGES_ATTRIBUTE, {})
    member = str(user.pk)
    badge = badges.get(member)
    if badge is None:
        badge = badges[member] = _badge_from_page(user, request)
    return badge


def _badge_from_page(user: Any, request: HttpRequest) -> UserPresence:
    snapshot = quietly(lambda: _page_snapshot(request), None)
    if snapshot is None:
        return UserPresence(user, "offline", None)
    seen = dict(snapshot.users).get(str(user.pk))
    if seen is None and not _lists_everyone(snapshot):
        return presence_of([user])[0]
    return UserPresence(
        user,
        status_for(seen, snapshot.now),
        None if seen is None else as_datetime(seen),
    )


def _page_snapshot(request: HttpRequest) -> Snapshot:
    """The page's site-wide snapshot if it lists every user online, else one
    listing up to ``BADGE_NAMES``."""
    taken = visit_of(request).snapshots.get((None, False))
    if taken is not None and _lists_everyone(taken[1]):
        return taken[1]
    return snapshot_for(BADGE_NAMES, None, False, request)


def _lists_everyone(snapshot: Snapshot) -> bool:
    counts = snapshot.counts
    return "users" not in counts.estimated and len(snapshot.users) >= counts.users


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
