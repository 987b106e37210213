"""What the staff page shows: everyone online, guest addresses included, and
how many were online each minute of the past day.

A thin layer over :mod:`whos_online.store` for :mod:`whos_online.admin`;
nothing here renders HTML. The chart's geometry is computed here as plain
numbers and one SVG path string, and the template draws it.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING

from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.urls import reverse

from whos_online import roster
from whos_online.conf import get_config
from whos_online.gate import Gate
from whos_online.store import (
    HISTORY_MINUTES,
    Counts,
    History,
    Snapshot,
    Today,
    get_store,
)
from whos_online.users import Named, OnlineUser, as_datetime, as_record, users_in_order

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite

# The chart's viewBox: the past 24 hours run from LEFT to RIGHT, half a unit
# a minute, and the counts from 0 at BOTTOM to the most at TOP.
WIDTH, HEIGHT = 800, 180
LEFT, RIGHT = 48, 48 + HISTORY_MINUTES // 2
TOP, BOTTOM = 10, 150
# The y axis runs to at least this, so a quiet site's chart is not all
# at the top.
MIN_SCALE = 4
# Faint vertical lines 18, 12 and 6 hours ago.
HOUR_LINES = tuple(LEFT + hours * 30 for hours in (6, 12, 18))


@dataclass(frozen=True, kw_only=True)
class Frame:
    """The axes both charts share, in their viewBox: counts from 0 at
    ``bottom`` to ``max_count`` at ``top``, time from ``left`` to ``right``."""

    max_count: int
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = RIGHT
    top: int = TOP
    bottom: int = BOTTOM


@dataclass(frozen=True, kw_only=True)
class Chart(Frame):
    """The most people online in each minute of the past 24 hours, as SVG.

    ``path`` is the ``d`` of one ``<path>``: each run of minutes with a
    sample is a line, minutes without one are gaps, and a lone sample is a
    zero-length line that a round line cap draws as a dot.
    """

    path: str
    samples: int
    hour_lines: tuple[int, ...] = HOUR_LINES


@dataclass(frozen=True)
class StaffOverview(roster.Windowed):
    """Everyone online at ``now``. ``available`` is False when Redis could
    not be read; everything else is then empty."""

    available: bool = False
    now: datetime | None = None
    users: list[OnlineUser] = field(default_factory=list)
    guests: list[Named] = field(default_factory=list)
    bots: list[Named] = field(default_factory=list)
    rooms: list[str] = field(default_factory=list)
    room_count: int = 0
    counts: Counts = field(default_factory=Counts)
    record: tuple[int, datetime] | None = None
    chart: Chart | None = None
    days: DailyChart | None = None
    today: Today = field(default_factory=Today)

    @property
    def unlisted_users(self) -> int:
        return max(self.counts.users + self.counts.hidden - len(self.users), 0)

    @property
    def unlisted_guests(self) -> int:
        return max(self.counts.guests - len(self.guests), 0)

    @property
    def unlisted_bots(self) -> int:
        return max(self.counts.bots - len(self.bots), 0)


def staff_overview(
    limit: int = 500, *, admin_site: AdminSite | None = None
) -> StaffOverview:
    """Up to ``limit`` of each kind of visitor, newest first, the counts, the
    record and the chart: four Redis round trips and one query.

    Users link to their change page on ``admin_site`` when their model is
    registered there.
    """
    found = _read(limit)
    if found is None:
        return StaffOverview(window=get_config().window)
    history, snapshot, rooms = found
    gate = Gate(None, staff_page=True)
    chosen = gate.chosen(member for member, _ in snapshot.users).invisible
    return StaffOverview(
        window=snapshot.window,
        available=True,
        now=as_datetime(snapshot.now),
        users=_staff_users(snapshot, chosen, admin_site),
        guests=[Named(address, as_datetime(seen)) for address, seen in snapshot.guests],
        bots=[Named(name, as_datetime(seen)) for name, seen in snapshot.bots],
        rooms=rooms[::-1][: max(limit, 0)],
        room_count=len(rooms),
        counts=gate.counts(snapshot.counts, len(chosen)),
        record=as_record(snapshot.record),
        chart=history_chart(history.minutes, snapshot.now),
        days=daily_chart(history.days, snapshot.now),
        today=snapshot.today,
    )


def _read(limit: int) -> tuple[History, Snapshot, list[str]] | None:
    """What the page shows, or ``None`` as soon as Redis fails."""
    # The history first: the snapshot's clock is then never behind it.
    store = get_store()
    history = store.history()
    snapshot = None
    if history is not None:
        snapshot = store.snapshot(
            limit, hidden_limit=limit, guest_limit=limit, bot_limit=limit
        )
    rooms = None if snapshot is None else store.rooms()
    if history is None or snapshot is None or rooms is None:
        return None
    return history, snapshot, rooms


def _staff_users(
    snapshot: Snapshot, chosen: AbstractSet[str], admin_site: AdminSite | None
) -> list[OnlineUser]:
    """Every user listed, those who chose to appear offline marked hidden
    whatever Redis holds."""
    visible = [pair for pair in snapshot.users if pair[0] not in chosen]
    hidden = [*snapshot.hidden, *(p for p in snapshot.users if p[0] in chosen)]
    online = users_in_order(visible, hidden, snapshot.where)
    model = get_user_model()
    if admin_site is None or not admin_site.is_registered(model):
        return online
    name = f"{admin_site.name}:{model._meta.app_label}_{model._meta.model_name}_change"
    return [
        replace(u, admin_url=reverse(name, args=[quote(u.user.pk)])) for u in online
    ]


def history_chart(points: Sequence[tuple[int, int]], now: float) -> Chart:
    """The chart of ``points``, ``(minute start, most online)`` as
    :meth:`Store.history` gives them, over the 24 hours ending at ``now``
    (seconds since the epoch); points outside those hours are left out."""
    last = int(now) // 60
    first = last - HISTORY_MINUTES + 1
    counts = {
        start // 60 - first: count
        for start, count in points
        if first <= start // 60 <= last
    }
    top = max([MIN_SCALE, *counts.values()])
    parts = []
    for index in sorted(counts):
        x = LEFT + (index + 1) / 2
        y = BOTTOM - (BOTTOM - TOP) * counts[index] / top
        parts.append(f"{'L' if index - 1 in counts else 'M'}{_number(x)},{_number(y)}")
        if index - 1 not in counts and index + 1 not in counts:
            parts.append("h0")
    return Chart(path="".join(parts), samples=len(counts), max_count=top)


@dataclass(frozen=True)
class DailyBar:
    """One day of the past 30 as a column of the chart: its date, the most
    online at once, and where the column stands in the chart's viewBox."""

    day: date
    most_online: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True, kw_only=True)
class DailyChart(Frame):
    """The most people online at once on each of the past 30 days, as SVG
    columns on the same axes as the 24-hour chart."""

    bars: list[DailyBar]


def daily_chart(days: Sequence[tuple[int, int]], now: float) -> DailyChart:
    """The past 30 days, oldest first, from ``(day start, most online)``
    pairs, as columns on the same axes as the 24-hour chart; a day without a
    peak is a column of 0."""
    today = int(now) // 86400
    peaks = {start // 86400: most for start, most in days}
    shown = [(today - back, peaks.get(today - back, 0)) for back in range(29, -1, -1)]
    top = max([MIN_SCALE, *(most for _, most in shown)])
    step = (RIGHT - LEFT) / len(shown)
    bars = []
    for index, (day, most) in enumerate(shown):
        height = (BOTTOM - TOP) * most / top
        bars.append(
            DailyBar(
                day=datetime.fromtimestamp(day * 86400, tz=timezone.utc).date(),
                most_online=most,
                x=round(LEFT + index * step + 1, 1),
                y=round(BOTTOM - height, 1),
                width=round(step - 2, 1),
                height=round(height, 1),
            )
        )
    return DailyChart(bars=bars, max_count=top)


def _number(value: float) -> str:
    """SVG coordinates to a tenth, without a trailing ``.0``."""
    return f"{round(value, 1):g}"
