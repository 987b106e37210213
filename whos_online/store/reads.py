"""Everything that reads presence. No read writes: each answers while Redis
refuses writes (``maxmemory`` reached), and none depends on a write."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import Any

from whos_online.store import scripts
from whos_online.store.base import StoreBase
from whos_online.store.keys import ESTIMATED, KINDS, Kind, Shard
from whos_online.store.places import decoded, room_batches
from whos_online.store.results import (
    Counts,
    History,
    LastSeen,
    RoomCount,
    Snapshot,
    Today,
)
from whos_online.store.scripts import Arg, Call
from whos_online.store.writes import BATCH

HISTORY_MINUTES = 24 * 60


class Reads(StoreBase):
    def snapshot(
        self,
        limit: int,
        *,
        room: str | None = None,
        hidden_limit: int = 0,
        guest_limit: int = 0,
        bot_limit: int | None = None,
        today_named: int = 0,
        window: int | None = None,
    ) -> Snapshot | None:
        """The users, and as many hidden users, guests and bots as asked for,
        newest first, with every count, the record and today's figures;
        ``None`` if Redis failed.

        One round trip: with shards, one script per shard in one pipeline (on
        a cluster, sent to every master before any reply is read), the newest
        merged and the counts added; a shard that is down is left out (its
        breaker opened) rather than failing the page. A users or guests set
        at its cap is counted by its estimate, kept once a minute. With
        ``today_named``, as many of the users seen today are named (any of
        them, in the site's snapshot). ``window``: seconds, instead of
        ``WHOS_ONLINE_WINDOW``. A room's snapshot is of who is in it now
        (``places.py``): each listed as seen now.
        """
        limits = (
            limit,
            hidden_limit,
            guest_limit,
            limit if bot_limit is None else bot_limit,
        )
        within = self.config.window if window is None else window
        if room is not None:
            within = 0  # its sets' scores say until when each is there
        return self.or_default(
            lambda: self._snapshot(room, limits, today_named, within), None
        )

    def _snapshot(
        self, room: str | None, listed: tuple[int, ...], today_named: int, window: int
    ) -> Snapshot:
        config = self.config
        limits = [max(n, 0) for n in listed]
        day = self.today()
        args: list[Arg] = [
            window,
            *limits,
            config.max_members,
            max(today_named, 0),
        ]
        calls = [
            Call("snapshot", self._snapshot_keys(shard, room, day), args, shard)
            for shard in self.shards
        ]
        site = self.layout
        figures: list[tuple[Arg, ...]] = []
        if room is None and not self.state.record_breaker.is_open:
            figures = [
                ("HMGET", site.record(), "count", "at"),
                ("HGET", site.daily_peaks(), day),
            ]
        answered, replies = scripts.run_shards(
            self.client, calls, self.state.shard_breakers, figures
        )
        parts = [self._part(call.shard, reply) for call, reply in answered]
        if room is not None:
            for part in parts:
                part.seen_now()
        return self._merged(parts, replies if room is None else None, limits, window)

    def _snapshot_keys(self, shard: Shard, room: str | None, day: int) -> list[str]:
        if room is not None:
            return [*(shard.room_key(room, kind) for kind in KINDS), shard.meta()]
        return [
            *(shard.members(kind) for kind in KINDS),
            shard.meta(),
            shard.start(),
            *(shard.day_key(day, name) for name in ("users", "guests", "logins")),
            *(shard.estimate(kind) for kind in ESTIMATED),
        ]

    def _part(self, shard: Shard, reply: Any) -> _Part:
        now, listed, counts, generation, *site = reply
        self.state.clock.observe(float(now), generation.decode(), shard.index)
        part = _Part(float(now), [_pairs(flat) for flat in listed], counts)
        if site:
            daily, where, estimates, named = site
            part.today = [int(n) for n in daily]
            part.today_named = decoded(named)
            listed_users = [member for flat in part.lists[:2] for member, _ in flat]
            part.where = {
                member: found
                for member, found in zip(
                    listed_users, [*where[0], *where[1]], strict=True
                )
                if found
            }
            part.estimates = dict(zip(ESTIMATED, map(int, estimates), strict=True))
        return part

    def _merged(
        self,
        parts: list[_Part],
        figures: list[Any] | None,
        limits: list[int],
        window: int,
    ) -> Snapshot:
        totals = dict.fromkeys(KINDS, 0)
        estimated: set[Kind] = set()
        for part in parts:
            for kind, counted in zip(KINDS, part.counts, strict=True):
                guess = part.estimates.get(kind, -1)
                if guess >= 0:
                    estimated.add(kind)
                totals[kind] += max(int(counted), guess)
        counts = Counts(**totals, estimated=frozenset(estimated))
        now = max(part.now for part in parts)
        lists = [
            _newest([part.lists[i] for part in parts], n) for i, n in enumerate(limits)
        ]
        record, today = None, Today()
        if figures is not None:
            record, today = self._site_figures(parts, figures, counts, now)
        return Snapshot(
            now=now,
            window=window,
            users=lists[0],
            hidden=lists[1],
            guests=lists[2],
            bots=lists[3],
            counts=counts,
            record=record,
            today=today,
            where={k: v for part in parts for k, v in part.where.items()},
            today_named=[member for part in parts for member in part.today_named],
        )

    def _site_figures(
        self, parts: list[_Part], figures: list[Any], counts: Counts, now: float
    ) -> tuple[tuple[int, float] | None, Today]:
        """The record and today's figures. The shards' figures of each minute
        raise them in Redis; between two minutes, the number online now
        (when it is exact) raises them as read, at the minute's start. While
        the site's own keys cannot be read, there is no record, and today's
        peak is at least the number online now."""
        breaker = self.state.record_breaker
        failed = next((f for f in figures if isinstance(f, Exception)), None)
        if failed is not None:
            breaker.failed(failed)
        elif figures:
            breaker.succeeded()
        known = bool(figures) and failed is None
        best, best_at = figures[0] if known else (None, None)
        record = None
        if best is not None and best_at is not None:
            record = (int(best), float(best_at))
        most_today = int(figures[1] or 0) if known else 0
        visible = counts.users + counts.guests  # hidden users move no figure
        if known and not counts.is_estimate:
            self._note_peak(visible, min(record[0] if record else 0, most_today))
        if not counts.is_estimate:
            if known and (record is None or visible > record[0]):
                minute = float(int(now) // 60 * 60)
                record = (visible, minute) if visible else record
            most_today = max(most_today, visible)
        users, guests, logins = (sum(part.today[i] for part in parts) for i in range(3))
        return record, Today(users, max(guests - logins, 0), most_today)

    def _note_peak(self, visible: int, kept: int) -> None:
        """More are online than the site's figures say: the next write
        keeps it (``Store.keep_peak_seen``)."""
        if visible > kept:
            seen, day = self.state.peak_seen, self.today()
            if seen is None or seen[1] != day or seen[0] < visible:
                self.state.peak_seen = (visible, day)

    def last_seen_many(self, pks: Iterable[object]) -> LastSeen | None:
        """When each user was last seen, hidden or not, and beyond the window
        as the last-seen set keeps them; ``None`` if Redis failed. One
        pipelined round trip, a script per shard and thousand users."""
        members = list(dict.fromkeys(str(pk) for pk in pks))
        return self.or_default(lambda: self._last_seen_many(members), None)

    def _last_seen_many(self, members: list[str]) -> LastSeen:
        if not members:
            seconds, micros = self.client.time()
            now = seconds + micros / 1e6
            return LastSeen(now=now, seen={}, hidden=frozenset(), ever={})
        by_shard: dict[Shard, list[str]] = {}
        for member in members:
            by_shard.setdefault(self.shard_of(member), []).append(member)
        calls = [
            Call(
                "last_seen",
                [shard.members("users"), shard.members("hidden"), shard.last_seen()],
                chosen[start : start + BATCH],
                shard,
            )
            for shard, chosen in by_shard.items()
            for start in range(0, len(chosen), BATCH)
        ]
        now = 0.0
        seen: dict[str, float] = {}
        hidden: set[str] = set()
        ever: dict[str, float] = {}
        answered, _ = scripts.run_shards(self.client, calls, self.state.shard_breakers)
        for call, (answered_at, visible, concealed, kept) in answered:
            now = max(now, float(answered_at))
            for asked, last in zip(call.args, kept, strict=True):
                if last is not None:
                    ever[str(asked)] = float(last)
            for asked, shown, secret in zip(call.args, visible, concealed, strict=True):
                pk = str(asked)
                if secret is not None and (
                    shown is None or float(secret) > float(shown)
                ):
                    seen[pk] = float(secret)
                    hidden.add(pk)
                elif shown is not None:
                    seen[pk] = float(shown)
        return LastSeen(now=now, seen=seen, hidden=frozenset(hidden), ever=ever)

    def history(self) -> History | None:
        """The staff page's charts; ``None`` if Redis failed."""
        return self.or_default(self._history, None)

    def _history(self) -> History:
        """The staff page's charts: one round trip, at most 1440 fields per
        shard and 90."""
        calls = [Call("history", [shard.history()], [], shard) for shard in self.shards]
        peaks_read = [("HGETALL", self.layout.daily_peaks())]
        answered, (peaks,) = scripts.run_shards(
            self.client, calls, self.state.shard_breakers, peaks_read
        )
        now = max(float(reply[0]) for _, reply in answered)
        first = int(now) // 60 - HISTORY_MINUTES + 1
        online: dict[int, int] = {}
        for _, (_, samples) in answered:
            for sample in samples:
                minute, _, count = sample.decode().partition(":")
                if int(minute) >= first:
                    at = int(minute) * 60
                    online[at] = online.get(at, 0) + int(count)
        found = {} if isinstance(peaks, Exception) else peaks
        days = [(int(day) * 86400, int(most)) for day, most in found.items()]
        return History(now, self._held(online, now), sorted(days))

    def _held(self, samples: dict[int, int], now: float) -> list[tuple[int, int]]:
        """The samples, each held for the minutes after it that have none, up
        to a guard period: while everyone online is guarded, nobody's record
        samples a minute, and the number online is what it was."""
        held = dict(samples)
        for start, count in samples.items():
            for later in range(1, self.config.guard_seconds // 60 + 1):
                minute = start + 60 * later
                if minute in samples or minute > now:
                    break
                held.setdefault(minute, count)
        return sorted(held.items())

    def rooms(self) -> list[str] | None:
        """The public rooms with anyone in them now; ``None`` if Redis
        failed."""
        return self.or_default(self._rooms, None)

    def _rooms(self) -> list[str]:
        calls = [
            Call("rooms", keys, batch, shard)
            for shard in self.shards
            for batch, keys in room_batches(self.client, shard, public=True)
        ]
        if not calls:
            return []
        found, _ = scripts.run_shards(self.client, calls, self.state.shard_breakers)
        return sorted({name for _, names in found for name in decoded(names)})

    def room_counts(
        self, rooms: Sequence[str], listed: int = 0, hidden_listed: int = 0
    ) -> dict[str, RoomCount] | None:
        """How many are in each room, by kind, with up to ``listed`` of each
        room's users and ``hidden_listed`` of its hidden users, newest
        first; ``None`` if Redis failed. One round trip however many rooms:
        a script per shard, each reading every room."""
        return self.or_default(
            lambda: self._room_counts(rooms, listed, hidden_listed), None
        )

    def _room_counts(
        self, rooms: Sequence[str], listed: int, hidden_listed: int
    ) -> dict[str, RoomCount]:
        names = list(dict.fromkeys(rooms))
        calls = [
            Call(
                "room_counts",
                [shard.room_key(room, kind) for room in names for kind in KINDS],
                [max(listed, 0), max(hidden_listed, 0)],
                shard,
            )
            for shard in self.shards
        ]
        found: dict[str, RoomCount] = {room: RoomCount(Counts(), []) for room in names}
        if not names:
            return found
        answered, _ = scripts.run_shards(self.client, calls, self.state.shard_breakers)
        for _, (_, replies) in answered:
            for room, (counts, users, hidden) in zip(names, replies, strict=True):
                before = found[room]
                totals = {
                    kind: getattr(before.counts, kind) + int(n)
                    for kind, n in zip(KINDS, counts, strict=True)
                }
                merged = _newest([before.users, _pairs(users)], max(listed, 0))
                concealed = _newest(
                    [before.hidden, _pairs(hidden)], max(hidden_listed, 0)
                )
                found[room] = RoomCount(Counts(**totals), merged, concealed)
        return found

    def in_room(
        self, room: str, pks: Iterable[object], *, guests: bool = False
    ) -> tuple[set[str], set[str]] | None:
        """Which of the users ``pks`` (or guests) are in ``room`` now:
        (visible, hidden); ``None`` if Redis failed. One round trip."""
        return self.or_default(lambda: self._in_room(room, pks, guests), None)

    def _in_room(
        self, room: str, pks: Iterable[object], guests: bool
    ) -> tuple[set[str], set[str]]:
        by_shard: dict[Shard, list[str]] = {}
        for pk in dict.fromkeys(str(pk) for pk in pks):
            by_shard.setdefault(self.shard_of(pk), []).append(pk)
        if not by_shard:
            return set(), set()
        kinds: tuple[Kind, ...] = ("guests",) * 2 if guests else ("users", "hidden")
        calls = [
            Call(
                "in_room",
                [shard.room_key(room, kind) for kind in kinds],
                members,
                shard,
            )
            for shard, members in by_shard.items()
        ]
        answered, _ = scripts.run_shards(self.client, calls, self.state.shard_breakers)
        visible = {member for _, (shown, _) in answered for member in decoded(shown)}
        hidden = {member for _, (_, secret) in answered for member in decoded(secret)}
        return visible, set() if guests else hidden


class _Part:
    """One shard's answer to a snapshot."""

    def __init__(self, now: float, lists: list[list[tuple[str, float]]], counts: Any):
        self.now = now
        self.lists = lists
        self.counts = counts
        self.today = [0, 0, 0]
        self.today_named: list[str] = []
        self.where: dict[str, bytes] = {}
        self.estimates: dict[Kind, int] = {}

    def seen_now(self) -> None:
        """A room's members are listed until when they are there: each is
        seen now, newest first as they were."""
        self.lists = [[(member, self.now) for member, _ in flat] for flat in self.lists]


def _pairs(flat: list[bytes]) -> list[tuple[str, float]]:
    return [(flat[i].decode(), float(flat[i + 1])) for i in range(0, len(flat) - 1, 2)]


def _newest(
    lists: list[list[tuple[str, float]]], limit: int
) -> list[tuple[str, float]]:
    """The ``limit`` newest of the shards' lists, each newest first."""
    if len(lists) == 1:
        return lists[0]
    merged = heapq.merge(*lists, key=lambda pair: -pair[1])
    return [pair for pair, _ in zip(merged, range(limit), strict=False)]
