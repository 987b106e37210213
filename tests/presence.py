"""The store, in the words the tests use: each is one call of the process's
:class:`~whos_online.store.Store` through its public methods, so the tests
read the same whatever the store's insides."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from whos_online.store import (
    HISTORY_MINUTES,
    KINDS,
    Counts,
    History,
    Kind,
    LastSeen,
    LoggedOut,
    Pruned,
    Raised,
    Sighting,
    Snapshot,
    Stamp,
    get_store,
    is_room_name,
)

T = TypeVar("T")

__all__ = [
    "HISTORY_MINUTES",
    "KINDS",
    "Counts",
    "Kind",
    "is_room_name",
]


def key(name: str, room: str | None = None, kind: Kind = "users") -> str:
    """A key of the data model (docs/data-model.md), in the first shard;
    ``key(kind, room)`` is that room's set of ``kind``."""
    if room is not None:
        return get_store().key("", room, name)  # type: ignore[arg-type]
    return get_store().key(name)


def members_of(entries: Iterable[bytes]) -> list[str]:
    """The members a set's entries (as Redis holds them) are of, each once:
    a room's entries are places, "<place> <member>" (docs/data-model.md)."""
    return list(dict.fromkeys(e.decode().split(" ", 1)[-1] for e in entries))


def record(
    kind: Kind,
    member: str,
    *,
    device: str = "",
    left_guest: str = "",
    last_recorded: float | None = None,
) -> Stamp | None:
    sighting = Sighting(kind, member, device, left_guest, last_recorded)
    return get_store().record(sighting)


def log_in(
    kind: Kind, member: str, *, left_guest: str, takes_back: Raised | None = None
) -> Stamp:
    """The guest ``left_guest`` logged in as ``member``; ``takes_back``: what
    that guest's arrival raised, for a hidden user's login to take back."""
    sighting = Sighting.login(
        kind, member, device="", left_guest=left_guest, takes_back=takes_back
    )
    return answered(get_store().record(sighting))


def record_user(pk: object, *, hidden: bool = False) -> float:
    """Record the user ``pk`` as a page view would; the time."""
    stamp = record("hidden" if hidden else "users", str(pk))
    assert stamp is not None
    return stamp.now


def record_guest(member: str) -> float:
    stamp = record("guests", member)
    assert stamp is not None
    return stamp.now


def record_in_room(room: str, kind: Kind, member: str) -> list[str] | None:
    """Record ``member`` and put them in ``room`` as a device of theirs
    whose latest page is in it (a device per room, so one member may be put
    in several), as a page view does; the rooms entered, ``None`` when
    refused or Redis failed."""
    device = f"test-{room}"
    record(kind, member, device=device)
    return get_store().enter_rooms(kind, member, device, [room]) or None


def enter_rooms(kind: Kind, member: str, device: str, rooms: list[str]) -> list[str]:
    """Put ``member``'s ``device`` in ``rooms`` without recording them (a
    page view records first); the rooms entered."""
    return answered(get_store().enter_rooms(kind, member, device, rooms))


def answered(found: T | None) -> T:
    """What the store answered; the test fails where Redis did not."""
    assert found is not None, "Redis did not answer"
    return found


def snapshot(limit: int, **options: Any) -> Snapshot:
    return answered(get_store().snapshot(limit, **options))


def most_ever_online() -> tuple[int, float] | None:
    """The record as the site shows it."""
    return snapshot(0).record


def reset_most_ever_online() -> bool:
    return get_store().reset_most_ever_online()


def prune(*, dry_run: bool = False) -> Pruned:
    return get_store().prune(dry_run=dry_run)


def last_seen_many(pks: Iterable[object]) -> LastSeen:
    return answered(get_store().last_seen_many(pks))


def last_seen(pk: object) -> float | None:
    return last_seen_many([pk]).seen.get(str(pk))


def rooms() -> list[str]:
    return answered(get_store().rooms())


def history() -> History:
    return answered(get_store().history())


def set_invisible(pk: str, invisible: bool) -> None:
    assert get_store().set_invisible(pk, invisible)


def sync_clock(shard: int | None = None) -> None:
    get_store().sync_clock(shard)


def log_out(pk: str, device: str) -> LoggedOut:
    return answered(get_store().log_out(pk, device))


def load_scripts() -> None:
    get_store().load_scripts()
