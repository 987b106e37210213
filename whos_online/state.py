"""What each process learns while it runs, kept in one :class:`State`.

The store owns one, built with it from a :class:`~whos_online.conf.Config`,
so a setting change starts every piece of it afresh. Nothing here talks to
Redis or imports anything of the app: the callers do, and tell the state what
they learnt.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

logger = logging.getLogger("whos_online")

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# How often a process asks Redis for its time and data generation when
# nothing it did lately told it: the most a Redis restart or a clock step
# goes unnoticed.
CLOCK_REFRESH_SECONDS = 5.0
# Failures and refused input are logged at most this often per message.
LOG_INTERVAL = 60.0


NEVER = float("-inf")


class ServerClock:
    """Redis' time and the generation of each shard's data, as this process
    last learnt them.

    Guards are stamped and checked by Redis' clock, so web servers whose
    clocks disagree agree on when a guard runs out; and a guard names the
    generation of the data it holds for (its *label*: the generation, led
    by the shard's number when there are several shards), so after Redis
    loses a shard's data the guards of that shard are void within
    ``CLOCK_REFRESH_SECONDS``, and at once when this process learns it
    (``on_new_generation`` is called, so that what was concluded from the
    old generation is forgotten).

    What this process measures itself (how long ago it learnt something) is
    measured on its monotonic clock, which no step of the wall clock moves:
    Redis' time is that clock plus the offset last learnt.
    """

    def __init__(self, shards: int, on_new_generation: Callable[[], None]) -> None:
        # Until Redis is asked, its time is taken to be this server's.
        self.offset = time.time() - time.monotonic()
        self._on_new_generation = on_new_generation
        self._labels = [""] * shards
        self._trusted_until = [NEVER] * shards
        # label -> until when it is trusted: the guarded request's one lookup.
        self._trusted: dict[str, float] = {}

    def observe(self, server_now: float, generation: str, shard: int = 0) -> str:
        """Learn from a reply of Redis (about ``shard``) received just now;
        returns the label a guard of that shard's data carries."""
        local = time.monotonic()
        self.offset = server_now - local
        label = generation if len(self._labels) == 1 else f"{shard}-{generation}"
        if self._labels[shard] != label:
            self._trusted.pop(self._labels[shard], None)
            self._labels[shard] = label
            self._on_new_generation()
        self._trusted_until[shard] = self._trusted[label] = (
            local + CLOCK_REFRESH_SECONDS
        )
        return label

    def label(self, shard: int = 0) -> str:
        """The label of ``shard``'s data generation, as last learnt."""
        return self._labels[shard]

    def now(self) -> float:
        """Redis' time now, as well as this process knows it."""
        return time.monotonic() + self.offset

    def holds_until(self, label: str, server_time: float) -> bool:
        """Whether the data ``label`` names is still there and Redis' time is
        not yet ``server_time``, by what this process learnt lately (``False``
        when that was too long ago to trust)."""
        return time.monotonic() < self.deadline(label, server_time)

    def deadline(self, label: str, server_time: float) -> float:
        """Until when, on the monotonic clock, :meth:`holds_until` holds by what
        this process knows now: at most ``CLOCK_REFRESH_SECONDS`` after it
        last heard from Redis, so a deadline kept for that long is as good
        as asking again (but for a new generation: see ``on_new_generation``,
        which is told)."""
        return min(self._trusted.get(label, NEVER), server_time - self.offset)

    def stale_shard(self, label: str) -> int | None:
        """The shard a guard of ``label`` holds for, if it is time to ask
        Redis about it again; ``None`` if what this process knows is recent
        (or the label names no shard of ours)."""
        shard = self._shard_of(label)
        if shard is None or time.monotonic() < self._trusted_until[shard]:
            return None
        return shard

    def _shard_of(self, label: str) -> int | None:
        if len(self._labels) == 1:
            return 0
        number, dash, _ = label.partition("-")
        if dash and number.isdigit() and int(number) < len(self._labels):
            return int(number)
        return None


class CircuitBreaker:
    """After a Redis failure, leave Redis alone for ``backoff`` seconds, then
    let one call through to probe; the first success closes it again."""

    def __init__(self, backoff: float) -> None:
        self.backoff = backoff
        self._retry_at = NEVER
        self._failing = False
        self._log = RateLimitedLog()

    @property
    def is_open(self) -> bool:
        return time.monotonic() < self._retry_at

    def failed(self, exc: Exception) -> None:
        self._failing = True
        self._retry_at = time.monotonic() + self.backoff
        self._log.warning(
            "redis",
            "Who's online could not reach Redis (%s: %s); pages are served "
            "without it, and it is retried in %ss.",
            type(exc).__name__,
            exc,
            self.backoff,
        )

    def succeeded(self) -> None:
        """A call made while it was closed succeeded: close it, unless a call
        inside that one (to one shard, say) has just opened it."""
        if self._failing and not self.is_open:
            self._failing = False
            self._log.forget("redis")
            logger.info("Who's online reaches Redis again.")


class RateLimitedLog:
    """Warnings logged at most once per ``LOG_INTERVAL`` per topic, with a
    count of those left out. It holds a few topics, never one per visitor."""

    MAX_TOPICS = 64

    def __init__(self) -> None:
        self._next_at: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}
        self._lock = threading.Lock()

    def warning(self, topic: str, message: str, *args: object) -> None:
        now = time.monotonic()
        with self._lock:
            if now < self._next_at.get(topic, NEVER):
                self._suppressed[topic] = self._suppressed.get(topic, 0) + 1
                return
            if len(self._next_at) >= self.MAX_TOPICS:
                self._next_at.clear()
            self._next_at[topic] = now + LOG_INTERVAL
            suppressed = self._suppressed.pop(topic, 0)
        if suppressed:
            message += " (%d more like this were not logged.)"
            args = (*args, suppressed)
        logger.warning(message, *args)

    def forget(self, topic: str) -> None:
        with self._lock:
            self._next_at.pop(topic, None)
            self._suppressed.pop(topic, None)


class BoundedMemo(dict[K, V]):
    """A dict of answers that starts over when it holds ``size`` of them:
    cheaper than an LRU on the hot path, and as good for a working set."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: K, answer: V) -> V:
        if len(self) >= self.size:
            self.clear()
        self[key] = answer
        return answer


SnapshotKey = tuple[str | None, bool]


class Snapshots(BoundedMemo[SnapshotKey, tuple[float, int, Any]]):
    """The snapshots a process shares between its pages: (room, with hidden
    users) -> (read from, names asked, snapshot). A change the process is
    told of (an announcement, a login) forgets them; a snapshot whose read
    began before that is never kept after it, or it would be shared, out of
    date, as if read after it."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.forgotten: dict[SnapshotKey, float] = {}
        self.cleared = NEVER
        self.lock = threading.Lock()

    def forget(self, key: SnapshotKey) -> None:
        self.change(key, lambda _: None)

    def change(self, key: SnapshotKey, changed: Callable[[Any], Any | None]) -> None:
        """A change the process made itself: the snapshot of ``key`` becomes
        ``changed(snapshot)``, or is forgotten where that is ``None``; a read
        begun before it is not kept after it, as after :meth:`forget`."""
        with self.lock:
            if len(self.forgotten) >= self.size:
                self._clear_all()
            self.forgotten[key] = time.monotonic()
            kept = self.pop(key, None)
            if kept is not None and (snapshot := changed(kept[2])) is not None:
                self[key] = (kept[0], kept[1], snapshot)

    def clear(self) -> None:
        with self.lock:
            self._clear_all()

    def _clear_all(self) -> None:
        self.cleared = time.monotonic()
        self.forgotten.clear()
        super().clear()

    def keep(self, key: SnapshotKey, started: float, limit: int, snapshot: Any) -> None:
        """Share ``snapshot`` of ``key``, read from ``started`` (monotonic)
        on, unless it was forgotten since."""
        with self.lock:
            if max(self.cleared, self.forgotten.get(key, NEVER)) >= started:
                return
            if len(self) >= self.size:
                self._clear_all()
            self[key] = (started, limit, snapshot)


class Throttle:
    """Lets each name through at most once per ``seconds``: bots keep no
    cookies, so this spares Redis instead of a guard; and a user's
    heartbeats are limited by it whatever their cookies say."""

    MAX_NAMES = 10_000

    def __init__(self) -> None:
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def allows(self, name: str, seconds: float) -> bool:
        now = time.monotonic()
        with self._lock:
            if self._next.get(name, NEVER) > now:
                return False
            if len(self._next) >= self.MAX_NAMES:
                self._next.clear()
            self._next[name] = now + seconds
            return True

    def forget(self, name: str) -> None:
        """Let ``name`` through next time."""
        with self._lock:
            self._next.pop(name, None)


class State:
    def __init__(self, *, failure_backoff: float, shards: int = 1) -> None:
        self.breaker = CircuitBreaker(failure_backoff)
        """Opened by a failure of the site as a whole (or of its only shard)."""
        self.shard_breakers = (
            (self.breaker,)
            if shards == 1
            else tuple(CircuitBreaker(failure_backoff) for _ in range(shards))
        )
        """One per shard, so a master that is down stops only its shards."""
        self.record_breaker = CircuitBreaker(failure_backoff)
        """With shards: opened by a failure of the site's own keys (the
        record, the daily peaks), which snapshots then do without."""
        # cookie -> Verdict (see seen.py): the verdicts are forgotten when a
        # shard's data generation changes, since they name the old one.
        self.guards: BoundedMemo[str, Any] = BoundedMemo(4096)
        self.clock = ServerClock(shards, on_new_generation=self.guards.clear)
        self.minutes_asked = [-1] * shards
        """For each shard, the last minute whose tick key this process's
        renewals asked about: once a minute is enough."""
        # (URLconf, path, path_info) -> the label of the page there.
        self.locations: BoundedMemo[tuple[str, str, str], str] = BoundedMemo(4096)
        # path_info, or (URLconf, path_info) for a request's own URLconf ->
        # the marks of the page there (see rooms.PageMarks).
        self.pages: BoundedMemo[object, Any] = BoundedMemo(4096)
        # The URLs the outputs link to (see links.py).
        self.links: BoundedMemo[object, str | None] = BoundedMemo(256)
        self.bots = Throttle()
        # User pk -> when this process may record their heartbeat again.
        self.heartbeats = Throttle()
        # "member tab" -> when this process may keep (or close) the tab again.
        self.tabs = Throttle()
        self.tabs_closed = Throttle()
        self.refused = RateLimitedLog()
        # (room, with hidden users) -> (read from, names asked, snapshot),
        # for WHOS_ONLINE_SNAPSHOT_MAX_AGE; bounded like the guards.
        self.snapshots = Snapshots(1024)
        # User pk -> (read at, the user): the users pages list, read once
        # per WHOS_ONLINE_SNAPSHOT_MAX_AGE, as their snapshots are.
        self.users: BoundedMemo[object, tuple[float, Any]] = BoundedMemo(10_000)
        # User pk -> (read at, invisible, hides last seen): their choices as
        # the database said, reused like the users for the gate's pages.
        self.choices: BoundedMemo[str, tuple[float, bool, bool]] = BoundedMemo(10_000)
        # A list of user pks -> (oldest read at, their Choices): what pages
        # made for nobody logged in were told of one snapshot's users.
        self.chosen: BoundedMemo[tuple[object, ...], tuple[float, Any]] = BoundedMemo(
            256
        )
        # What a roster was made from (its shared snapshot's id, the limit,
        # the kind of viewer, the users' choices) -> (that snapshot, the
        # roster), reused while the snapshot is shared; what an output shows,
        # with language and time zone -> (None, its HTML); and each person a
        # widget lists, the same way, apart: there are more of them.
        self.rosters: BoundedMemo[Any, tuple[Any, Any]] = BoundedMemo(256)
        self.renders: BoundedMemo[Any, tuple[Any, Any]] = BoundedMemo(256)
        self.people: BoundedMemo[Any, Any] = BoundedMemo(4096)
        self.peak_seen: tuple[int, int] | None = None
        """(people, day): the most a snapshot saw online at once above the
        site's figures, for the next write to keep (reads never write)."""
