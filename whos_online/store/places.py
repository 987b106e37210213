"""Where members are, room by room: the places their devices and tabs hold.

A device is in the rooms of the page it opened last, for the guard period
unless it opens another; a tab whose page runs the room script is in its
rooms while it says so, for the tab timeout after its last word, and leaves
them as it closes. A member is in a room while any of their places there
lasts, and counts once. Each write is one round trip (``places.lua``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whos_online.store import scripts
from whos_online.store.base import StoreBase
from whos_online.store.keys import Kind, Shard
from whos_online.store.scripts import Arg

# The most rooms one page (a device's latest, or a tab's) is in: the first
# of them by name are kept. The most places a member holds: past it, their
# own place that runs out first is freed. docs/data-model.md bounds memory
# with both.
ROOMS_PER_PLACE = 10
PLACES_PER_MEMBER = 20


class Places(StoreBase):
    def enter_rooms(
        self, kind: Kind, member: str, device: str, rooms: Sequence[str]
    ) -> list[str] | None:
        """The device's latest page is in ``rooms`` (valid names; none for
        a page in no room): it leaves the rooms of its page before and is in
        these for the guard period. The rooms entered (a room whose budget
        is full waits), or ``None`` if Redis failed."""
        seconds = self.config.guard_seconds
        return self._place(kind, member, f"d:{device}", seconds, "", rooms)

    def keep_tab(
        self,
        kind: Kind,
        member: str,
        device: str,
        tab: str,
        rooms: Sequence[str],
        seconds: int,
    ) -> list[str] | None:
        """The tab ``tab`` (a valid tab id) of the member's ``device`` is in
        exactly ``rooms`` for ``seconds`` more: it takes over its device's
        places there and leaves any other room it was in. The rooms entered,
        or ``None`` if Redis failed."""
        return self._place(kind, member, f"t:{tab}", seconds, f"d:{device}", rooms)

    def leave_tab(self, kind: Kind, member: str, tab: str) -> bool:
        """The tab ``tab`` closed: it leaves its rooms at once. ``False`` if
        Redis failed."""
        return self._place(kind, member, f"t:{tab}", 0, "", ()) is not None

    def _place(
        self,
        kind: Kind,
        member: str,
        place: str,
        seconds: int,
        takes_over: str,
        rooms: Sequence[str],
    ) -> list[str] | None:
        chosen = sorted(set(rooms))[:ROOMS_PER_PLACE]
        return self.or_default(
            lambda: self._run_places(kind, member, place, seconds, takes_over, chosen),
            None,
            self.breaker_of(member),
        )

    def _run_places(
        self,
        kind: Kind,
        member: str,
        place: str,
        seconds: int,
        takes_over: str,
        rooms: list[str],
    ) -> list[str]:
        config, shard = self.config, self.shard_of(member)
        keys = [shard.start(), shard.places(kind, member)]
        args: list[Arg] = [
            kind,
            member,
            place,
            seconds,
            takes_over,
            config.max_rooms,
            config.max_members,
            PLACES_PER_MEMBER,
            *rooms,
        ]
        _, entered_names, left_names = scripts.run(self.client, "places", keys, args)
        entered, left = decoded(entered_names), decoded(left_names)
        # The process that moves someone shows it at once: its shared
        # snapshots of those rooms follow the move.
        for room in entered:
            self.follow_in_snapshots(room, kind, member, joined=True)
        for room in left:
            self.follow_in_snapshots(room, kind, member, joined=False)
        return entered

    def move_in_rooms(self, shard: Shard, pk: str, hidden: bool) -> None:
        """Move the user ``pk`` to the hidden set of each room they are in
        (``hidden``) or back: one round trip, three if in rooms."""
        key = shard.places("users", pk)
        held = decoded(self.client.zrange(key, 0, -1))
        rooms = sorted({entry.partition(" ")[0] for entry in held})
        if rooms:
            self.move_in_these_rooms(shard, pk, rooms, hidden=hidden)

    def move_in_these_rooms(
        self, shard: Shard, pk: str, rooms: list[str], *, hidden: bool
    ) -> None:
        """Move ``pk`` between the visible and hidden sets of each room,
        keeping until when they are there, and announce it: three round
        trips."""
        leave: Kind = "users" if hidden else "hidden"
        join: Kind = "hidden" if hidden else "users"
        reads = self.client.pipeline(transaction=False)
        for room in rooms:
            reads.zscore(shard.room_key(room, leave), pk)
        writes = self.client.pipeline(transaction=False)
        moved = []
        for room, till in zip(rooms, reads.execute(), strict=True):
            if till is not None:
                moved.append(room)
                writes.zrem(shard.room_key(room, leave), pk)
                writes.zadd(shard.room_key(room, join), {pk: till})
                writes.expire(shard.room_key(room, join), self.config.window)
        writes.execute()
        self.announce(shard, moved)


def decoded(names: Any) -> list[str]:
    return [bytes(name).decode() for name in names]
