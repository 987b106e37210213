"""Live presence: the process's one subscription to what Redis announces,
fanned out in memory to the open streams of each room.

Redis announces a room (or ``*``, the site's lists) when someone joins or
leaves it (``store/changes.py``). The first stream a process opens starts
one listening thread; it hands each announcement to the event loop of every
stream of that room, never waiting for one. A stream keeps only the latest
announcement it has not taken (a burst costs it nothing more); one that
leaves them untaken for ``STALLED`` seconds (its client reads nothing) is
dropped, and its page polls; so are all when the subscription is lost
(Redis down), and a stream that cannot start raises :class:`Unavailable`.
:func:`follow` is what a stream (``streams.py``) and ``api.changes`` read;
what they read of Redis and the database then runs in a few threads they
all share (:func:`in_shared_threads`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from redis.exceptions import RedisError

from whos_online.store import Store, Subscription, get_store

# Seconds a stream may leave announcements untaken (its client reads
# nothing, so its sending waits) before it is dropped.
STALLED = 10.0
# Seconds between two events of one stream, at least: changes meanwhile
# make one event.
DEBOUNCE = 0.25
# Seconds the listening thread waits for a word before it checks it is
# still the process's (settings change).
WAIT = 1.0
# Threads that read (and render) for every stream and follower of changes
# of the process: a reading holds the GIL but for short waits on Redis and
# the database, so more threads would not read more a second.
READING_THREADS = 4
_readers = ThreadPoolExecutor(READING_THREADS, "whos-online-read")
# In a stream's queue: the subscription was lost.
LOST = -1
SITE = "*"

P = ParamSpec("P")
R = TypeVar("R")


class Unavailable(Exception):
    """The process cannot listen to Redis now: pages poll."""


class Listener:
    """One open stream of ``rooms`` (``*``: the site's), on its event loop:
    the latest announcement of any of them it has not taken, if any."""

    def __init__(self, rooms: tuple[str, ...], loop: asyncio.AbstractEventLoop) -> None:
        self.rooms, self.loop = rooms, loop
        self.waiting: int | None = None
        self.waiting_since = 0.0  # the loop's clock: the oldest not taken
        self.woken: asyncio.Future[None] | None = None  # what it awaits
        self.dropped = False
        self.stirred = False  # woken since the last beat

    def deliver(self, event: int, now: float) -> None:
        """On the stream's loop, at its time ``now``: the number of an
        announcement, or LOST (the hub's last word)."""
        if self.waiting is None:
            self.waiting_since = now
        elif now - self.waiting_since > STALLED:
            self.dropped = True  # too slow: it ends, and its page polls
        self.waiting = event
        self.wake()

    def beat(self) -> None:
        """On the stream's loop, every half keep-alive: wake it with nothing
        (``next`` returns ``None``) if it was not woken since the last."""
        if self.stirred:
            self.stirred = False
        else:
            self.wake()

    def wake(self) -> None:
        woken, self.woken = self.woken, None
        if woken is not None and not woken.done():
            woken.set_result(None)

    async def next(self) -> int | None:
        """The latest announcement (LOST: the stream ends), or ``None`` if
        woken by a beat before one came."""
        if self.waiting is None:
            # A bare future: of all a stream allocates for each event, what
            # Python's garbage collector walks with every other stream's.
            self.woken = self.loop.create_future()
            await self.woken
        self.stirred = True
        return None if self.waiting is None else self.latest(None)

    def latest(self, event: int | None) -> int:
        """The announcement waiting, else ``event`` (taken before it); LOST
        if either is, if there is neither, or if the stream was dropped."""
        if self.waiting is not None:
            event = LOST if LOST in (event, self.waiting) else self.waiting
            self.waiting = None
        return LOST if self.dropped or event is None else event


class Hub:
    """The process's subscription and the streams it feeds."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.lock = threading.Lock()
        self.listeners: dict[str, set[Listener]] = {}
        self.subscription: Subscription | None = None
        self.retired = False

    def open(self, rooms: tuple[str, ...], loop: asyncio.AbstractEventLoop) -> Listener:
        """A listener of ``rooms``, subscribing first if the process is not
        yet (blocking: one round trip); raises :class:`Unavailable`."""
        with self.lock:
            self._subscribe()
            listener = Listener(rooms, loop)
            for room in rooms:
                self.listeners.setdefault(room, set()).add(listener)
            return listener

    def start(self) -> None:
        """Subscribe if the process is not yet (blocking: one round trip),
        for a view that must know before it answers; raises
        :class:`Unavailable`."""
        with self.lock:
            self._subscribe()

    def _subscribe(self) -> None:
        """Under the lock: the subscription and its listening thread."""
        if self.subscription is not None:
            return
        try:
            self.subscription = self.store.listen()
        except RedisError as exc:
            raise Unavailable(str(exc)) from exc
        threading.Thread(
            target=self.run,
            args=(self.subscription,),
            name="whos-online-live",
            daemon=True,
        ).start()

    def close(self, listener: Listener) -> None:
        with self.lock:
            for room in listener.rooms:
                self.listeners.get(room, set()).discard(listener)

    def run(self, subscription: Subscription) -> None:
        """The listening thread: until the subscription fails or the
        settings it was made for change."""
        while not self.retired:
            try:
                changed = subscription.next(WAIT)
            except RedisError:
                break
            for room in changed or ():
                self.announce(room)
        with self.lock:
            self.subscription = None
            lost = {each for room in self.listeners.values() for each in room}
        _hand(lost, LOST)
        with contextlib.suppress(RedisError):
            subscription.close()

    def announce(self, changed: str) -> None:
        self.store.forget_snapshots(None if changed == SITE else changed)
        with self.lock:
            event, listeners = next(_events), list(self.listeners.get(changed, ()))
        _hand(listeners, event)


def _hand(listeners: Iterable[Listener], event: int) -> None:
    """``event`` to each listener on its loop: one call into each loop, not
    one per stream (each call wakes the loop's thread)."""
    on_loops: dict[asyncio.AbstractEventLoop, list[Listener]] = {}
    for listener in listeners:
        on_loops.setdefault(listener.loop, []).append(listener)
    for loop, group in on_loops.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: its streams are gone
            loop.call_soon_threadsafe(_deliver, loop, group, event)


def _deliver(
    loop: asyncio.AbstractEventLoop, listeners: list[Listener], event: int
) -> None:
    now = loop.time()
    for listener in listeners:
        listener.deliver(event, now)


_hubs: list[Hub] = []
# Numbers of announcements, unique in the process (streams share renderings
# by them), whichever hub heard them.
_events = itertools.count(1)


def hub() -> Hub:
    """The hub of the settings in force (a new one when they change)."""
    store = get_store()
    if not _hubs or _hubs[0].store is not store:
        for old in _hubs:
            old.retired = True
        _hubs[:] = [Hub(store)]
    return _hubs[0]


async def follow(
    room: str | None, *more: str, wait: float | None = None
) -> AsyncIterator[int | None]:
    """Follow ``room`` (``None``: the site's lists), and the rooms ``more``
    with it: ``0`` at once (show it as it is), then an event's number after
    each change of any of them (at most one per
    ``DEBOUNCE`` seconds; several changes meanwhile make one), and ``None``
    when none came for ``wait`` seconds (at least half that), for a
    keep-alive. It ends when the subscription is lost or the stream stalled
    (``STALLED``). Raises :class:`Unavailable` before the first if the
    process cannot listen to Redis."""
    loop = asyncio.get_running_loop()
    current = hub()
    opened = sync_to_async(current.open, thread_sensitive=False)
    listener = await opened((SITE if room is None else room, *more), loop)
    beating = _Beat.join(listener, wait) if wait is not None else None
    try:
        yield 0
        sent = loop.time()
        while True:
            event = await listener.next()
            if event is None:
                yield None
                continue
            pause = sent + DEBOUNCE - loop.time()
            if pause > 0:
                await asyncio.sleep(pause)
            event = listener.latest(event)
            if event == LOST:
                return
            yield event
            sent = loop.time()
    finally:
        current.close(listener)
        if beating is not None:
            beating.leave(listener)


class _Beat:
    """The listeners of one loop that want a keep-alive after ``wait``
    seconds without an event: one timer for all of them, which beats every
    ``wait / 2`` seconds, rather than one per stream set and cancelled at
    each event."""

    beats: dict[tuple[asyncio.AbstractEventLoop, float], _Beat] = {}

    def __init__(self, loop: asyncio.AbstractEventLoop, wait: float) -> None:
        self.key = (loop, wait)
        self.listeners: set[Listener] = set()
        self.task = loop.create_task(self.run(wait / 2))

    @classmethod
    def join(cls, listener: Listener, wait: float) -> _Beat:
        key = (listener.loop, wait)
        beat = cls.beats.get(key)
        if beat is None:
            beat = cls.beats[key] = cls(*key)
        beat.listeners.add(listener)
        return beat

    def leave(self, listener: Listener) -> None:
        self.listeners.discard(listener)
        if not self.listeners:
            self.task.cancel()
            del self.beats[self.key]

    async def run(self, period: float) -> None:
        while True:
            await asyncio.sleep(period)
            for listener in self.listeners:
                listener.beat()


def in_shared_threads(work: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """``work`` run in the threads every stream shares, not in a thread of
    its caller's (asgiref's ``sync_to_async`` would hold one per request or
    consumer for as long as it follows); its database connections looked
    after as a request's are: closed when broken or older than
    ``CONN_MAX_AGE`` (at once by default)."""

    def framed(*args: P.args, **kwargs: P.kwargs) -> R:
        close_old_connections()
        try:
            return work(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(framed, thread_sensitive=False, executor=_readers)
