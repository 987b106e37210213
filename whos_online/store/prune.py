"""Removing members who left the window, from every set, and members whose
presence in a room ran out."""

from __future__ import annotations

from whos_online.store import scripts
from whos_online.store.base import StoreBase
from whos_online.store.keys import KINDS, Kind, Shard
from whos_online.store.places import decoded, room_batches
from whos_online.store.results import Pruned
from whos_online.store.scripts import Arg

# One prune script removes at most this many members, to keep Redis
# responsive; it keeps at most COPIED online by copying them out of a mostly
# stale set, whose members Redis then frees in its background thread
# (copying 25,000 takes about as long as removing 2,500 one by one).
PRUNE_BATCH = 2_500
COPIED = 25_000


class Prune(StoreBase):
    def prune(self, *, dry_run: bool = False, named: bool = True) -> Pruned:
        """Remove members last seen before the window from every set, rooms
        included, shard by shard (what is kept for each user, their devices,
        rooms and location, expires with their presence). ``named``: say
        which users left (for ``user_went_offline``), at the cost of their
        names coming back."""
        removed: dict[str, int] = {}
        users_left: list[str] = []
        hidden_left: list[str] = []
        for shard in self.shards:
            before = sum(removed.values())
            for kind in KINDS:
                if dry_run or not named or kind in ("guests", "bots"):
                    count = self._prune_set(shard, kind, dry_run=dry_run)
                else:
                    left = self._prune_users(shard, kind)
                    count = len(left)
                    (users_left if kind == "users" else hidden_left).extend(left)
                removed[kind] = removed.get(kind, 0) + count
            changed = ["*"] if sum(removed.values()) > before else []
            for name, count in self._prune_rooms(shard, dry_run=dry_run).items():
                removed[name] = removed.get(name, 0) + count
                if count and name.startswith("room:"):
                    changed.append(name.removeprefix("room:").rpartition(":")[0])
            if not dry_run:
                self.announce(shard, sorted(set(changed)))
            if not dry_run and self.config.last_seen_kept:
                forgotten = self._prune_last_seen(shard)
                removed["last-seen"] = removed.get("last-seen", 0) + forgotten
        return Pruned(removed, users_left, hidden_left)

    def _prune_last_seen(self, shard: Shard) -> int:
        """Forget last-seen times older than ``WHOS_ONLINE_LAST_SEEN_DAYS``
        (the set holds at most ``WHOS_ONLINE_MAX_MEMBERS``: one command)."""
        keys = [shard.last_seen()]
        args = [self.config.last_seen_kept]
        return int(scripts.run(self.client, "prune_last_seen", keys, args))

    def _prune_users(self, shard: Shard, kind: Kind) -> list[str]:
        """Remove the stale members of ``kind`` a batch at a time; which."""
        keys = [shard.members(kind), shard.prune_scratch()]
        args: list[Arg] = [self.config.window, PRUNE_BATCH, "0", "1", COPIED]
        left: list[str] = []
        while True:
            batch = decoded(scripts.run(self.client, "prune", keys, args))
            left += batch
            if len(batch) < PRUNE_BATCH:
                return left

    def _prune_set(self, shard: Shard, kind: Kind, *, dry_run: bool) -> int:
        keys = [shard.members(kind), shard.prune_scratch()]
        window = self.config.window
        if dry_run:
            counting: list[Arg] = [window, 0, "1", "0", COPIED]
            return int(scripts.run(self.client, "prune", keys, counting))
        removed = 0
        while True:
            args: list[Arg] = [window, PRUNE_BATCH, "0", "0", COPIED]
            batch = int(scripts.run(self.client, "prune", keys, args))
            removed += batch
            if batch != PRUNE_BATCH:
                return removed

    def _prune_rooms(self, shard: Shard, *, dry_run: bool) -> dict[str, int]:
        """The rooms whose sets the shard keeps, a hundred at a time."""
        removed: dict[str, int] = {}
        for batch, keys in room_batches(self.client, shard):
            args: list[Arg] = ["1" if dry_run else "0", *batch]
            counts = scripts.run(self.client, "prune_rooms", keys, args)
            names = [f"room:{room}:{kind}" for room in batch for kind in KINDS]
            for name, count in zip(names, counts, strict=True):
                removed[name] = removed.get(name, 0) + int(count)
        return removed
