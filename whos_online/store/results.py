"""What the store is given and what it answers, as plain values."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from whos_online.store.keys import Kind


@dataclass(frozen=True)
class Sighting:
    """A visitor seen now: what a record is given. Make one with the
    constructor named for the case, so every caller says the same things."""

    kind: Kind
    member: str
    """The user's primary key, the guest's stored address or the bot's name."""
    device: str = ""
    """A keyed hash of the user's session (see ``Store.device_of``), so
    logging out elsewhere keeps them online."""
    left_guest: str = ""
    """The guest (stored form) who just logged in as this user."""
    last_recorded: float | None = None
    """When this member was last recorded, by Redis' clock, as the caller
    knows it (a guard names it): a renewal it holds for costs plain
    commands instead of the record script."""
    logged_out: bool = False
    """Whether this guest just logged out: today's figures count them as the
    user they were, not once more as a guest."""
    takes_back: Raised | None = None
    """What the guest who just logged in (as a hidden user) raised when
    they arrived, before the view of the same request: taken back, since a
    hidden user's arrival moves no figure anyone sees."""

    @classmethod
    def page_view(
        cls,
        kind: Kind,
        member: str,
        *,
        device: str = "",
        last_recorded: float | None = None,
    ) -> Sighting:
        return cls(kind, member, device=device, last_recorded=last_recorded)

    @classmethod
    def after_logout(cls, member: str) -> Sighting:
        return cls("guests", member, logged_out=True)

    @classmethod
    def login(
        cls,
        kind: Kind,
        member: str,
        *,
        device: str,
        left_guest: str,
        takes_back: Raised | None = None,
    ) -> Sighting:
        return cls(kind, member, device, left_guest=left_guest, takes_back=takes_back)

    @classmethod
    def heartbeat(
        cls,
        kind: Kind,
        member: str,
        *,
        device: str,
        last_recorded: float | None,
    ) -> Sighting:
        return cls(kind, member, device=device, last_recorded=last_recorded)


@dataclass(frozen=True)
class Stamp:
    """What a record tells: Redis' time, the label of the data generation a
    guard may vouch for, and whether the member entered the window (was not
    online before)."""

    now: float
    data_label: str
    """The label of the shard's data generation, as this process knows it
    (``ServerClock.observe``): what a guard names, so it lapses with the data."""
    entered: bool
    raised: Raised | None = None
    """What a newcomer found, raising the site's figures at once."""


@dataclass(frozen=True)
class Raised:
    """What a newcomer's record found (record.lua's words, with one shard):
    the people online with them, which the site's figures were raised to
    where they were below it, and the figures before. A login in the same
    request takes back what it raised when the newcomer turns out to be a
    hidden user."""

    online: int
    peak_before: str
    """Today's peak before, or ``none``."""
    record_before: str
    """The record before, as ``count,at``, or ``none``."""


@dataclass(frozen=True)
class Counts:
    users: int = 0
    hidden: int = 0
    guests: int = 0
    bots: int = 0
    estimated: frozenset[Kind] = frozenset()
    """The kinds whose sets are at ``WHOS_ONLINE_MAX_MEMBERS``: their numbers
    are estimates (within 2%), not exact counts."""

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
    to ``WHOS_ONLINE_MAX_MEMBERS``; unique guests who did not log in,
    estimated by HyperLogLogs (about 1% standard error); and the most online
    at once."""

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
    today_named: list[str] = field(default_factory=list)
    """Users seen today, as many as were asked for (any of them)."""

    def moved(self, kind: Kind, member: str, *, joined: bool) -> Snapshot | None:
        """This snapshot of a room once ``member`` (of ``kind``) joined it
        (listed first, as seen now) or left it; ``None`` where it cannot
        tell whether they were there: a kind it does not list whole, a user
        it may hold as the other of visible and hidden, a hidden user."""
        if kind not in ("users", "guests") or self.counts.estimated:
            return None
        told = ("users", "hidden") if kind == "users" else ("guests",)
        if any(len(getattr(self, each)) != getattr(self.counts, each) for each in told):
            return None
        if kind == "users" and any(held == member for held, _ in self.hidden):
            return None
        others = [pair for pair in getattr(self, kind) if pair[0] != member]
        listed = [(member, self.now), *others] if joined else others
        if kind == "users":
            return replace(
                self, users=listed, counts=replace(self.counts, users=len(listed))
            )
        return replace(
            self, guests=listed, counts=replace(self.counts, guests=len(listed))
        )


@dataclass(frozen=True)
class RoomCount:
    """How many are in a room, and its newest users (``(member, seen)``)."""

    counts: Counts
    users: list[tuple[str, float]]
    hidden: list[tuple[str, float]] = field(default_factory=list)
    """Its newest hidden users, when asked for."""


@dataclass(frozen=True)
class LastSeen:
    """When users were last seen (absent: not within Redis' memory)."""

    now: float
    seen: dict[str, float]
    """Within the window."""
    hidden: frozenset[str]
    ever: dict[str, float] = field(default_factory=dict)
    """When each user was last seen, within ``WHOS_ONLINE_LAST_SEEN_DAYS``
    (beyond the window too)."""


@dataclass(frozen=True)
class LoggedOut:
    removed: bool
    """Whether the user was taken off (no other device kept them online)."""
    hidden: bool
    """Whether they were in the hidden set."""


@dataclass(frozen=True)
class History:
    """``minutes``: ``(minute start, most online)`` for each sampled minute
    of the past 24 hours; ``days``: ``(day start, most online)`` for each of
    the past 90 days with a peak; both oldest first, times in seconds.

    With shards, a minute's figure is the sum of the shards' samples of that
    minute, so it may run a little above the most online at any one moment.
    """

    now: float
    minutes: list[tuple[int, int]]
    days: list[tuple[int, int]]


@dataclass(frozen=True)
class Pruned:
    """What a prune removed: how many per set (``"room:thread:42:users"``),
    and which users (by primary key) left the site's lists."""

    removed: dict[str, int]
    users_left: list[str]
    hidden_left: list[str]
