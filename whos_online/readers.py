"""A room's reader as their own page lists them: the page records them in
its rooms after the view, so its widgets show them there already."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.http import HttpRequest

from whos_online.page import rooms_of_page, visit_of
from whos_online.store import Snapshot, get_store
from whos_online.visitors import Visitor


def reader_in(room: str, request: HttpRequest | None) -> Visitor | None:
    """The page's reader, where the page is in ``room``, as the room will
    hold them: a user who chose to appear offline is hidden there."""
    if request is None or room not in rooms_of_page(request):
        return None
    return visit_of(request).visitor


def with_reader(
    snapshot: Snapshot, room: str, reader: Visitor, shows_hidden: bool
) -> Snapshot:
    """A room's snapshot with its reader in it as of now (once, if they were
    there before: where the snapshot names only some of the room's readers,
    Redis is asked). A hidden reader who is not staff is left as they are:
    the hidden users were not listed to them, so whether they are in the
    room already cannot be told."""
    if reader.kind == "hidden" and not shows_hidden:
        return snapshot
    listed: list[tuple[str, float]] = getattr(snapshot, reader.kind)
    others = [pair for pair in listed if pair[0] != reader.member]
    counts = snapshot.counts
    if len(others) == len(listed) and not _held_unlisted(snapshot, room, reader):
        counts = replace(counts, **{reader.kind: getattr(counts, reader.kind) + 1})
    lists: dict[str, Any] = {reader.kind: [(reader.member, snapshot.now), *others]}
    return replace(snapshot, counts=counts, **lists)


def _held_unlisted(snapshot: Snapshot, room: str, reader: Visitor) -> bool:
    """Whether ``room`` holds ``reader`` though its snapshot names only some
    of its readers of their kind, not them."""
    if len(getattr(snapshot, reader.kind)) >= getattr(snapshot.counts, reader.kind):
        return False
    guests = reader.kind == "guests"
    found = get_store().in_room(room, [reader.member], guests=guests)
    return found is not None and reader.member in found[0] | found[1]


def loaded_viewer(reader: Visitor | None, viewer: Any) -> dict[str, Any]:
    """The viewer by key, where they are the room's ``reader``: their page
    loaded them already, so no query reads them again."""
    if reader is None or reader.user_pk is None:
        return {}
    is_viewer = str(getattr(viewer, "pk", None)) == reader.user_pk
    return {reader.user_pk: viewer} if is_viewer else {}
