"""What every part of the store shares: the settings it was built from, the
key layout, the process's state and the Redis client."""

from __future__ import annotations

import functools
import hashlib

from redis import Redis

from whos_online.conf import Config
from whos_online.connection import build_client
from whos_online.state import CircuitBreaker, State
from whos_online.store.keys import Kind, Layout, Shard


class StoreBase:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.layout = Layout(config.prefix, config.shards)
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

    def key(self, name: str, room: str | None = None, kind: Kind = "users") -> str:
        """The key ``name`` of the first shard (with one shard, the site's),
        or with ``room`` that room's set of ``kind``: see docs/data-model.md."""
        shard = self.shards[0]
        return shard.key(name) if room is None else shard.room_key(room, kind)

    def device_of(self, session_key: str) -> str:
        """What is kept of a session: a keyed hash, never the key itself."""
        digest = hashlib.blake2b(
            session_key.encode(), key=self.config.guard_key, digest_size=9
        )
        return digest.hexdigest()

    def minute(self) -> int:
        """This minute by Redis' clock as this process knows it."""
        return int(self.state.clock.now() // 60)

    def today(self) -> int:
        """Today by Redis' clock, in days since the epoch (UTC)."""
        return int(self.state.clock.now() // 86400)
