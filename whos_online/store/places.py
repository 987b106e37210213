"""Where members are, room by room: the places their devices and tabs hold.

A device is in the rooms of the page it opened last, for the guard period
unless it opens another; a tab whose page runs the room script is in its
rooms while it says so, for the tab timeout after its last word, and leaves
them as it closes. A member is in a room while any of their places there
lasts, and counts once. Each write is one round trip (``places.lua``).

Only a member online (in the site's set of their kind) holds places, and
each holds a bounded number: nothing about rooms is shared between members
but the rooms' sets, so a stranger opening rooms costs nobody else a place.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from redis import Redis

from whos_online.store import scripts
from whos_online.store.base import StoreBase
from whos_online.store.keys import KINDS, Kind, Shard, is_admin_room
from whos_online.store.scripts import Arg

# The most rooms one page (a device's latest, or a tab's) is in: the first
# of them by name are kept. The most places a member holds in rooms (each
# room of each page): past it, their own place that runs out first is
# freed. docs/data-model.md bounds memory with both.
ROOMS_PER_PLACE = 10
PLACES_PER_MEMBER = 20
# Rooms one script reads or prunes.
ROOMS_BATCH = 100


class Places(StoreBase):
    def enter_rooms(
        self, kind: Kind, member: str, device: str, rooms: Sequence[str]
    ) -> list[str] | None:
        """The device's latest page is in ``rooms`` (valid names; none for
        a page in no room): it leaves the rooms of its page before and is in
        these for the guard period. The rooms entered (none for a member
        not online), or ``None`` if Redis failed."""
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
        keys = [shard.start(), shard.places(kind, member), shard.members(kind)]
        args: list[Arg] = [
            kind,
            member,
            place,
            seconds,
            takes_over,
            config.longest_place + 1,
            PLACES_PER_MEMBER,
            "0" if all(is_admin_room(room) for room in rooms) else "1",
            self._whole_seconds(shard),
            *rooms,
        ]
        placed, *left_names = bytes(
            scripts.run(self.client, "places", keys, args)
        ).split()
        entered = rooms if placed == b"+" else []
        left = decoded(left_names)
        # The process that moves someone shows it at once: its shared
        # snapshots of those rooms follow the move.
        for room in entered:
            self.follow_in_snapshots(room, kind, member, joined=True)
        for room in left:
            self.follow_in_snapshots(room, kind, member, joined=False)
        return entered

    def _whole_seconds(self, shard: Shard) -> str:
        """Redis' time in whole seconds, as this process learnt it lately
        (as a renewal scores by it), or ``""`` for the script to ask: a
        ``TIME`` is nearly 8% of what a move costs Redis."""
        now = self.learnt_now(shard)
        return "" if now is None else str(int(now))

    def move_in_rooms(self, shard: Shard, pk: str, hidden: bool) -> None:
        """Move the user ``pk`` to the hidden set of each room they are in
        (``hidden``) or back, keeping until when they are there, and
        announce it: one round trip."""
        keys = [shard.start(), shard.places("users", pk)]
        args: list[Arg] = [
            pk,
            "hidden" if hidden else "users",
            self.config.longest_place + 1,
        ]
        scripts.run(self.client, "move_rooms", keys, args)


def room_batches(
    client: Redis, shard: Shard, *, public: bool = False
) -> Iterator[tuple[list[str], list[str]]]:
    """The rooms whose sets ``shard`` keeps (some may hold nobody now; only
    the public ones if ``public``), a script's worth at a time: their names,
    and each one's four sets. By ``SCAN``, a walk of the whole keyspace, for
    the staff page and prune, never a visitor's page."""
    found = client.scan_iter(match=shard.room_keys(), count=1_000)
    rooms = sorted({shard.room_of(bytes(key).decode()) for key in found})
    if public:
        rooms = [room for room in rooms if not is_admin_room(room)]
    for start in range(0, len(rooms), ROOMS_BATCH):
        batch = rooms[start : start + ROOMS_BATCH]
        yield batch, [shard.room_key(room, kind) for room in batch for kind in KINDS]


def decoded(names: Any) -> list[str]:
    return [bytes(name).decode() for name in names]
