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
from typing import Any, NamedTuple

from redis import Redis

from whos_online.store import scripts
from whos_online.store.base import StoreBase
from whos_online.store.keys import KINDS, Kind, Shard, is_admin_room
from whos_online.store.scripts import Arg

# The most rooms one page (a device's latest, or a tab's) is in: the first
# of them by name are kept. The most rooms a member's tabs hold together:
# past it, their tab that runs out first frees its rooms. A user's devices
# are at most five (record.lua), a guest's one. docs/data-model.md bounds
# memory with these.
ROOMS_PER_PLACE = 10
ROOMS_IN_TABS = 20
# A user's devices set keeps this many, as record.lua trims it.
DEVICES_PER_USER = 5
# Rooms one script reads or prunes.
ROOMS_BATCH = 100


class Places(StoreBase):
    def enter_rooms(
        self,
        kind: Kind,
        member: str,
        device: str,
        rooms: Sequence[str],
        was: Sequence[str] | None = None,
    ) -> list[str] | None:
        """The device's latest page is in ``rooms`` (valid names; none for
        a page in no room): it leaves the rooms of its page before and is in
        these for the guard period. ``was``: the rooms its guard says it was
        in (``None``: not known). The rooms entered (none for a member not
        online), or ``None`` if Redis failed."""
        chosen = _chosen(rooms)
        return self.or_default(
            lambda: self._enter(kind, member, device, chosen, was),
            None,
            self.breaker_of(member),
        )

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
        chosen = _chosen(rooms)
        return self.or_default(
            lambda: self._run_places(kind, member, place, seconds, takes_over, chosen),
            None,
            self.breaker_of(member),
        )

    def _enter(
        self,
        kind: Kind,
        member: str,
        device: str,
        rooms: list[str],
        was: Sequence[str] | None,
    ) -> list[str]:
        shard = self.shard_of(member)
        now = self.learnt_now(shard)
        if was is None or now is None:
            seconds = self.config.guard_seconds
            return self._run_places(kind, member, f"d:{device}", seconds, "", rooms)
        move = Move(shard, kind, member, device, rooms, int(now))
        moved = self._move(move, _chosen(was))
        if isinstance(moved, Unsettled):
            return self._settle(move, moved)
        return moved

    def _move(self, move: Move, before: list[str]) -> list[str] | Unsettled:
        """A device reading thread after thread, moved with plain commands in
        one round trip (a script costs Redis several times as much): into
        ``rooms``, out of those its guard says it was in (``before``). The
        rooms entered, or what Redis held when that was other than the guard
        said (another tab of the browser moved it meanwhile, a user's kind
        changed, it held no place), for settle_device.lua to set right."""
        config, (shard, kind, member, device, rooms, now) = self.config, move
        longest, placed = config.longest_place + 1, f"d:{device} {member}"
        till = now + config.guard_seconds + 1
        left = [room for room in before if room not in rooms]
        commands: list[tuple[Arg, ...]] = []
        for room in rooms:
            key = shard.room_key(room, kind)
            commands.append(("ZADD", key, "GT", till, placed))
            # A newcomer clears the room of presence that ran out.
            commands.append(("ZREMRANGEBYSCORE", key, "-inf", now))
            commands.append(("EXPIRE", key, longest))
        for room in left:
            commands.append(("ZREM", shard.room_key(room, kind), placed))
        key = shard.device_place(kind, member, device)
        if rooms:
            value = f"{kind} {till} {' '.join(rooms)}"
            commands.append(("SET", key, value, "EX", longest, "GET"))
        else:
            commands.append(("GETDEL", key))
        asked: list[str] = []
        # Entering from no room, a member must be online to hold a place.
        if not before and _is_public(rooms):
            commands.append(("ZSCORE", shard.members(kind), member))
            asked.append("online")
        # Whether another place of theirs may hold the rooms left, where this
        # process keeps a snapshot of one to follow the move in.
        if any(self.keeps_snapshot(room) for room in left):
            commands.append(("EXISTS", shard.tabs(kind, member)))
            asked.append("tabs")
            if kind != "guests":
                commands.append(("ZCARD", shard.devices(member)))
                asked.append("devices")
        # Redis 6.2 has no SPUBLISH: its error is the one reply let pass.
        commands.append(("SPUBLISH", shard.changes(), " ".join([*rooms, *left])))
        replies = scripts.plain(self.client, commands)[:-1]
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        found = dict(zip(asked, replies[len(replies) - len(asked) :], strict=True))
        previous = replies[len(replies) - len(asked) - 1]
        if not _held(previous, kind, before) or found.get("online", 0) is None:
            return Unsettled(previous)
        alone = not found.get("tabs", 1) and found.get("devices", 1) <= 1
        self._show(kind, member, rooms, left, alone=alone)
        return rooms

    def _settle(self, move: Move, found: Unsettled) -> list[str]:
        shard, kind, member, device, rooms, now = move
        keys = [shard.start(), shard.members(kind)]
        was = "" if found.previous is None else bytes(found.previous).decode()
        args: list[Arg] = [
            kind,
            member,
            device,
            was,
            "1" if _is_public(rooms) else "0",
            self.config.longest_place + 1,
            now,
            *rooms,
        ]
        return self._answered(kind, member, rooms, "settle_device", keys, args)

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
        keys = [shard.start(), shard.tabs(kind, member), shard.members(kind)]
        now = self.learnt_now(shard)
        args: list[Arg] = [
            kind,
            member,
            place,
            seconds,
            takes_over,
            config.longest_place + 1,
            ROOMS_IN_TABS,
            "1" if _is_public(rooms) else "0",
            "" if now is None else int(now),
            *rooms,
        ]
        return self._answered(kind, member, rooms, "places", keys, args)

    def _answered(
        self,
        kind: Kind,
        member: str,
        rooms: list[str],
        script: str,
        keys: list[str],
        args: list[Arg],
    ) -> list[str]:
        """Run ``script``, which answers "+" (in ``rooms``) or "-"
        (refused), then the rooms the member is no longer in; show it in this
        process's snapshots. The rooms entered."""
        reply = scripts.run(self.client, script, keys, args)
        placed, *left_names = bytes(reply).split()
        entered = rooms if placed == b"+" else []
        self._show(kind, member, entered, decoded(left_names))
        return entered

    def _show(
        self,
        kind: Kind,
        member: str,
        entered: list[str],
        left: list[str],
        *,
        alone: bool = True,
    ) -> None:
        """The process that moves someone shows it at once: its shared
        snapshots of the rooms follow the move; where another place of the
        member may hold a room left (not ``alone``), they are read again."""
        for room in entered:
            self.follow_in_snapshots(room, kind, member, joined=True)
        for room in left:
            if alone:
                self.follow_in_snapshots(room, kind, member, joined=False)
            else:
                self.forget_snapshots(room)

    def move_in_rooms(self, shard: Shard, pk: str, hidden: bool) -> None:
        """Move the user ``pk`` to the hidden set of each room they are in
        (``hidden``) or back, keeping until when they are there, and
        announce it: one round trip."""
        keys = [shard.start()]
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


class Move(NamedTuple):
    """A device moving to ``rooms``, at ``now`` (Redis' time, whole
    seconds)."""

    shard: Shard
    kind: Kind
    member: str
    device: str
    rooms: list[str]
    now: int


class Unsettled(NamedTuple):
    """What a device's place was before a move by plain commands, when not
    what its guard said (``None``: none)."""

    previous: bytes | None


def _chosen(rooms: Sequence[str]) -> list[str]:
    """The rooms one place is in: the first ``ROOMS_PER_PLACE`` by name."""
    return sorted(set(rooms))[:ROOMS_PER_PLACE]


def _is_public(rooms: Sequence[str]) -> bool:
    """Whether the rooms need their members online: not the admin's only."""
    return not all(is_admin_room(room) for room in rooms)


def _held(previous: bytes | None, kind: Kind, rooms: list[str]) -> bool:
    """Whether a device's place before (read_device's text) was of ``kind``
    in ``rooms``, as its guard said (none: it held no place)."""
    if previous is None:
        return not rooms
    its_kind, _, its_rooms = bytes(previous).decode().split(" ", 2)
    return its_kind == kind and its_rooms.split() == rooms


def decoded(names: Any) -> list[str]:
    return [bytes(name).decode() for name in names]
