"""The Redis key layout: which key holds what, and in which shard.

Every key of a shard shares one Redis Cluster hash tag, so one script may
touch several of them. With ``WHOS_ONLINE_SHARDS`` above 1, each member is
kept in one shard by a stable hash of it, and each shard has a tag of its
own (so a cluster spreads them over its masters); the site's own keys (the
record, the daily peaks) stay under ``{KEY_PREFIX}``. docs/data-model.md
describes every key.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Literal

Kind = Literal["users", "hidden", "guests", "bots"]
KINDS: tuple[Kind, ...] = ("users", "hidden", "guests", "bots")
# Who counts towards "most ever online" and "online now": people, not crawlers.
PEOPLE: tuple[Kind, ...] = ("users", "hidden", "guests")
# The sets whose numbers are estimated past the cap.
ESTIMATED: tuple[Kind, ...] = ("users", "guests")

ROOM_NAME = re.compile(r"[A-Za-z0-9_.:\-]{1,100}")


def is_room_name(name: object) -> bool:
    """Room names are 1 to 100 of ``A-Z a-z 0-9 _ . : -``."""
    return isinstance(name, str) and ROOM_NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class Shard:
    """One slice of presence data: the sets of the members that hash to it,
    and what a record touches with them, all under one hash tag."""

    index: int
    tag: str

    def key(self, name: str) -> str:
        return f"{{{self.tag}}}:{name}"

    def room_key(self, room: str, kind: Kind) -> str:
        if not is_room_name(room):
            raise ValueError(f"Not a room name: {room!r}")
        return self.key(f"room:{room}:{kind}")

    def minute_key(self, kind: Kind, minute: int) -> str:
        """The HyperLogLog of the members of ``kind`` recorded in ``minute``
        (minutes since the epoch)."""
        return self.key(f"seen:{kind}:{minute}")

    def day_key(self, day: int, name: str) -> str:
        return self.key(f"day:{day}:{name}")


class Layout:
    """The shards of a site, and the site's own keys."""

    def __init__(self, prefix: str, shards: int) -> None:
        self.prefix = prefix
        self.shards = tuple(
            Shard(index, tag) for index, tag in enumerate(shard_tags(prefix, shards))
        )

    def site_key(self, name: str) -> str:
        """A key of the site as a whole (the record, the daily peaks); with
        one shard, it shares the shard's tag."""
        return f"{{{self.prefix}}}:{name}"

    def shard_of(self, member: str) -> Shard:
        """The shard ``member`` is kept in: a stable hash, the same in every
        process and release."""
        shards = self.shards
        if len(shards) == 1:
            return shards[0]
        return shards[zlib.crc32(member.encode()) % len(shards)]


def shard_tags(prefix: str, count: int) -> tuple[str, ...]:
    """The hash tags of ``count`` shards: the prefix alone for one; else, for
    each ``1/count`` of the 16384 slots, the first ``"<prefix>-<n>"`` whose
    slot falls in the middle half of it. A cluster whose masters own equal
    runs of slots (as ``redis-cli --cluster create`` makes them) then gets
    equal shares, however it rounds the edges of its runs."""
    if count == 1:
        return (prefix,)
    from redis.crc import REDIS_CLUSTER_HASH_SLOTS as SLOTS
    from redis.crc import key_slot

    tags: dict[int, str] = {}
    n = 0
    while len(tags) < count:
        slot = key_slot(f"{prefix}-{n}".encode())
        share = slot * count // SLOTS
        low, high = share * SLOTS // count, (share + 1) * SLOTS // count
        if share not in tags and abs(2 * slot + 1 - low - high) <= (high - low) // 2:
            tags[share] = f"{prefix}-{n}"
        n += 1
    return tuple(tags[share] for share in range(count))
