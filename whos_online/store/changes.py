"""Listening to what the scripts announce: one subscription to every
shard's changes channel (``Shard.changes``), for the process's live streams.

A script announces a room (or ``*``, the site's lists) when someone joins
or leaves it, never who, and nothing for a renewal. Sharded pub/sub
(``SSUBSCRIBE``, Redis 7): on a Redis Cluster each channel lives on the
nodes of its shard's slot, so an announcement never crosses the cluster.
"""

from __future__ import annotations

from typing import Any

from whos_online.store.base import StoreBase


class Subscription:
    """The process's subscription; each method may raise ``RedisError``."""

    def __init__(self, client: Any, channels: list[str]) -> None:
        self.pubsub = client.pubsub(ignore_subscribe_messages=True)
        self.pubsub.ssubscribe(*channels)

    def next(self, timeout: float) -> list[str] | None:
        """What changed (rooms, or ``*``: one announcement may name
        several), or ``None`` after ``timeout`` seconds without a word."""
        message = self.pubsub.get_sharded_message(timeout=timeout)
        return None if message is None else bytes(message["data"]).decode().split()

    def close(self) -> None:
        self.pubsub.close()


class Changes(StoreBase):
    def listen(self) -> Subscription:
        """A subscription to every shard's changes; raises ``RedisError``
        when Redis cannot be reached (the caller's streams then poll)."""
        return Subscription(self.client, [shard.changes() for shard in self.shards])
