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

# What a SCAN pattern reads as a wildcard, kept literal in a key's prefix.
GLOB = re.compile(r"[*?\[\]\\]")
ROOM_NAME = re.compile(r"[A-Za-z0-9_.:\-]{1,100}")

# The admin's rooms (``admin:...``, ``admin-editing:...``): never listed
# among the site's rooms in use.
ADMIN_ROOM = re.compile(r"admin[:\-]")


def _letter(kind: Kind) -> str:
    return "u" if kind in ("users", "hidden") else kind[0]


def is_admin_room(name: str) -> bool:
    return ADMIN_ROOM.match(name) is not None


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
        """The key ``name`` of this shard; the named methods below are the
        ones the store uses (docs/data-model.md describes each)."""
        return f"{{{self.tag}}}:{name}"

    def start(self) -> str:
        """The start of every key of this shard, for a script that names
        keys of a room or a user it is told of (same hash tag, same slot)."""
        return self.key("")

    def members(self, kind: Kind) -> str:
        """The sorted set of the members of ``kind`` online: last seen."""
        return self.key(kind)

    def meta(self) -> str:
        """The hash whose ``generation`` changes when Redis loses its data."""
        return self.key("meta")

    def tick(self, minute: int) -> str:
        """Set by the shard's first record of ``minute``."""
        return self.key(f"tick:{minute}")

    def estimate(self, kind: Kind) -> str:
        """The HyperLogLog that counts a set of ``kind`` at its cap."""
        return self.key(f"estimate:{kind}")

    def history(self) -> str:
        """The number online at each sampled minute of the day."""
        return self.key("history")

    def devices(self, pk: str) -> str:
        """The sessions a user was recorded from (keyed hashes)."""
        return self.key(f"devices:{pk}")

    def where(self, pk: str) -> str:
        """Where a user is: "label<TAB>path"."""
        return self.key(f"where:{pk}")

    def tabs(self, kind: Kind, member: str) -> str:
        """The places a member's tabs hold in rooms, each with its rooms and
        until when (prelude.lua's read_held). A user's (kinds users and
        hidden) are kept apart from a guest's and a bot's."""
        return self.key(f"tabs:{_letter(kind)}:{member}")

    def device_place(self, kind: Kind, member: str, device: str) -> str:
        """The place a member's device holds: the rooms of the page it
        opened last, until when, and the kind it is kept as (prelude.lua's
        read_device)."""
        return self.key(f"dev:{_letter(kind)}:{device}:{member}")

    def changes(self) -> str:
        """The pub/sub channel (sharded, on Redis 7) where the shard's
        scripts announce a room (or ``*``, the site's lists) whose members
        changed: a join or a leave, never a renewal, never who."""
        return self.key("changes")

    def last_seen(self) -> str:
        """When each user was last seen, kept beyond the window."""
        return self.key("last-seen")

    def room_keys(self) -> str:
        """A ``SCAN`` pattern of the keys of every room's sets."""
        return GLOB.sub(r"\\\g<0>", self.key("room:")) + "*"

    def room_of(self, key: str) -> str:
        """The room whose set is ``key`` (one of :meth:`room_keys`)."""
        return key.removeprefix(self.key("room:")).rpartition(":")[0]

    def prune_scratch(self) -> str:
        """Where prune copies the members online out of a mostly stale set."""
        return self.key("prune-scratch")

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
        """A key of the site as a whole; with one shard, it shares the
        shard's tag. The named methods below are the ones the store uses."""
        return f"{{{self.prefix}}}:{name}"

    def record(self) -> str:
        """The most ever online (``count``) and when (``at``)."""
        return self.site_key("record")

    def daily_peaks(self) -> str:
        """Day -> the most online that day, 90 days kept."""
        return self.site_key("daily-peaks")

    def figures(self) -> str:
        """Shard number -> its latest "minute:online:estimated"."""
        return self.site_key("figures")

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
