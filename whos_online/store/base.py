"""What every part of the store shares: the settings it was built from, the
key layout, the process's state, the Redis client, and how a Redis failure
is kept inside the store.

Every public method of the store that serves a page answers with a typed
default (``None``, ``False``) when Redis cannot be reached or refuses, as
django-redis' ``omit_exception`` does: the caller never sees a Redis error
and never chooses a breaker. Each picks its own: the shard's of the member
it is about, else the site's. A failure to reach Redis opens that breaker,
which then leaves Redis alone for ``WHOS_ONLINE_FAILURE_BACKOFF`` seconds;
an error reply (a write refused at ``maxmemory``) gives the default without
opening it, since what does not write still works. Only the management
commands' methods (``prune``, ``reset_most_ever_online``) raise, for the
command to say so."""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from redis import Redis
from redis.exceptions import RedisError, ResponseError

from whos_online.conf import Config
from whos_online.connection import build_client
from whos_online.state import CircuitBreaker, State
from whos_online.store import scripts
from whos_online.store.keys import Kind, Layout, Shard

T = TypeVar("T")
D = TypeVar("D")


class StoreBase:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.layout = Layout(config.key_prefix, config.shards)
        self.state = State(failure_backoff=config.failure_backoff, shards=config.shards)

    @functools.cached_property
    def client(self) -> Redis:
        return build_client()

    @property
    def shards(self) -> tuple[Shard, ...]:
        return self.layout.shards

    def shard_of(self, member: str) -> Shard:
        return self.layout.shard_of(member)

    def breaker_of(self, member: str) -> CircuitBreaker:
        """The circuit breaker of the shard ``member`` is kept in."""
        return self.state.shard_breakers[self.shard_of(member).index]

    def announce(self, shard: Shard, changed: Sequence[str]) -> None:
        """Tell the web processes that ``changed`` (rooms, or ``*`` for the
        site's lists) changed, where no script did: one round trip."""
        if changed:
            scripts.run(self.client, "announce", [shard.start()], list(changed))

    def is_failing(self, member: str) -> bool:
        """Whether Redis is known to be failing for ``member`` (its shard's
        breaker is open), or presence is off (settings that cannot work)."""
        return bool(self.config.problems) or self.breaker_of(member).is_open

    def or_default(
        self, call: Callable[[], T], default: D, breaker: CircuitBreaker | None = None
    ) -> T | D:
        """``call()``, or ``default`` if Redis is known to be failing or fails
        now (by ``breaker``: the site's unless given), or while the settings
        cannot work (``Config.problems``). Anything but a Redis failure is a
        bug, and is raised."""
        state = self.state
        breaker = breaker or state.breaker
        if self.config.problems or breaker.is_open:
            return default
        try:
            result = call()
        except ResponseError as exc:
            state.refused.warning(
                "reply", "Who's online got an error reply from Redis: %s", exc
            )
            return default
        except RedisError as exc:
            breaker.failed(exc)
            return default
        breaker.succeeded()
        return result

    def key(self, name: str, room: str | None = None, kind: Kind = "users") -> str:
        """The key ``name`` of the first shard (with one shard, the site's),
        or with ``room`` that room's set of ``kind``: see docs/data-model.md."""
        shard = self.shards[0]
        return shard.key(name) if room is None else shard.room_key(room, kind)

    def forget_snapshots(self, room: str | None) -> None:
        """A change in ``room`` (``None``: the site's lists): this process's
        shared snapshots of it are out of date."""
        for shows_hidden in (False, True):
            self.state.snapshots.forget((room, shows_hidden))

    def keeps_snapshot(self, room: str) -> bool:
        """Whether this process shares a snapshot of ``room``."""
        snapshots = self.state.snapshots
        return (room, False) in snapshots or (room, True) in snapshots

    def follow_in_snapshots(
        self, room: str, kind: Kind, member: str, *, joined: bool
    ) -> None:
        """``member`` (of ``kind``) just joined ``room`` or left it: this
        process's shared snapshots of the room are changed as Redis was,
        where they tell whether the member was there, else forgotten."""
        for shows_hidden in (False, True):
            self.state.snapshots.change(
                (room, shows_hidden),
                lambda snapshot: snapshot.moved(kind, member, joined=joined),
            )

    def device_of(self, session_key: str) -> str:
        """What is kept of a session: a keyed hash, never the key itself."""
        digest = hashlib.blake2b(
            session_key.encode(), key=self.config.guard_key, digest_size=9
        )
        return digest.hexdigest()

    def learnt_now(self, shard: Shard) -> float | None:
        """Redis' time as this process learnt it in the past few seconds,
        for the data ``shard`` holds now; ``None`` when it knows none, for
        the caller to ask Redis."""
        clock = self.state.clock
        if not clock.holds_until(clock.label(shard.index), math.inf):
            return None
        return clock.now()

    def minute(self) -> int:
        """This minute by Redis' clock as this process knows it."""
        return int(self.state.clock.now() // 60)

    def today(self) -> int:
        """Today by Redis' clock, in days since the epoch (UTC)."""
        return int(self.state.clock.now() // 86400)
