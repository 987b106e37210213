"""Who else has an object open in the admin, who of them is editing it, and
who saved or deleted it since a form was opened.

Each object has two rooms: ``admin:<app.model>:<pk>``, which everyone with
its change form open is in, and ``admin-editing:<app.model>:<pk>``, which
those of them with unsaved changes are in too. The form's script keeps its
staff member in them by asking every ``WHOS_ONLINE_ADMIN_EDITING_SECONDS``
(:func:`stay`) and takes them out as the page closes (:func:`leave`); whoever
missed six of those asks in a row has gone. Who is in the rooms is read
through the gate, as every list of names is.

Saves are told from the admin's own history (``LogEntry``): a form carries
the newest entry's number when it was opened, and any change or deletion
of the object logged after it by someone else is a save since. No clock is
compared, the web server's or Redis'.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from django.contrib.admin.models import CHANGE, DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model

from whos_online.conf import conf
from whos_online.gate import Gate
from whos_online.rooms import join_named_room, keep_tab, leave_tab, room_name
from whos_online.roster import Roster, online_roster
from whos_online.store import get_store
from whos_online.users import OnlineUser

# Whoever has not asked for this many intervals has closed the form.
MISSED_ASKS = 6
# The most others named on one form: past it, they are counted.
NAMED = 20


@dataclass(frozen=True)
class Colleague:
    """Another staff member with the object open, as the viewer may see them."""

    online: OnlineUser
    editing: bool

    @property
    def name(self) -> str:
        return self.online.name


@dataclass(frozen=True)
class Save:
    """A change or deletion of the object logged since the form was opened."""

    by: str | None
    """Who made it, where the gate lets the viewer learn it."""
    deleted: bool
    entry: int
    """Its entry in the admin's history: a form told of it asks for newer."""


@dataclass(frozen=True)
class Others:
    """What a staff member with an object's form open learns of the others."""

    available: bool = False
    """False when Redis could not be read: nothing is known of the others."""
    here: list[Colleague] = field(default_factory=list)
    unnamed: int = 0
    """Others here whom the gate lets the viewer count but not name."""
    save: Save | None = None

    @property
    def editing(self) -> int:
        return sum(1 for colleague in self.here if colleague.editing)


@dataclass(frozen=True)
class Rooms:
    viewing: str
    editing: str


def rooms_of(obj: Model) -> Rooms | None:
    """The object's two rooms; ``None`` (logged) when its key makes no
    valid room name."""
    base = room_name(obj)
    viewing = None if base is None else room_name(f"admin:{base}")
    editing = None if base is None else room_name(f"admin-editing:{base}")
    if viewing is None or editing is None:
        return None
    return Rooms(viewing, editing)


def presence_window() -> int:
    """Seconds within which a form's staff member last asked, to count."""
    return MISSED_ASKS * conf.ADMIN_EDITING_SECONDS


def enter(request: Any, obj: Model) -> None:
    """The change form of ``obj`` is being shown: its staff member is in
    the object's room once the page is served (the middleware records it)."""
    rooms = rooms_of(obj)
    if rooms is not None:
        join_named_room(request, rooms.viewing)


def stay(request: Any, obj: Model, *, editing: bool) -> None:
    """The form is still open (with unsaved changes, if ``editing``): its
    tab is in the object's rooms for six asks more."""
    rooms = rooms_of(obj)
    if rooms is None:
        return
    here = {rooms.viewing, rooms.editing} if editing else {rooms.viewing}
    keep_tab(request, form_tab(rooms), here, presence_window())


def leave(request: Any, obj: Model) -> None:
    """The form was closed: its tab leaves the object's rooms."""
    rooms = rooms_of(obj)
    if rooms is not None:
        leave_tab(request, form_tab(rooms))


def form_tab(rooms: Rooms) -> str:
    """The tab a staff member's forms of one object share."""
    return "form-" + hashlib.blake2b(rooms.viewing.encode(), digest_size=8).hexdigest()


def others_here(viewer: Any, obj: Model) -> Others:
    """Who else has ``obj`` open, as the gate lets ``viewer`` learn it: two
    round trips and up to two queries (the others' choices, the others)."""
    rooms = rooms_of(obj)
    if rooms is None:
        return Others()
    # Read afresh (a window given), not from a snapshot this process shares.
    window = presence_window()
    roster = online_roster(NAMED + 1, room=rooms.viewing, viewer=viewer, window=window)
    if not roster.available:
        return Others()
    own = str(getattr(viewer, "pk", ""))
    listed = [online for online in roster.users if str(online.user.pk) != own]
    if not roster.shows_names:
        return Others(available=True, unnamed=_others_counted(roster, rooms, own))
    editing = _editing(rooms.editing, listed)
    here = [
        Colleague(online, str(online.user.pk) in editing) for online in listed[:NAMED]
    ]
    return Others(available=True, here=here, unnamed=max(len(listed) - NAMED, 0))


def _others_counted(roster: Roster, rooms: Rooms, own: str) -> int:
    """How many others are in the room, where the gate names nobody: the
    viewer is left out if they are in it (one round trip)."""
    counts = roster.counts
    everyone = counts.users + (counts.hidden if roster.shows_hidden_count else 0)
    mine = get_store().in_room(rooms.viewing, [own])
    return max(everyone - (1 if mine and (mine[0] or mine[1]) else 0), 0)


def _editing(room: str, listed: list[OnlineUser]) -> set[str]:
    """The keys of the ``listed`` users in the editing ``room``."""
    if not listed:
        return set()
    found = get_store().in_room(room, (online.user.pk for online in listed))
    return set() if found is None else found[0] | found[1]


def history_mark() -> int:
    """The newest entry of the admin's history: what a form opened now has
    seen (one query)."""
    newest = LogEntry.objects.order_by("-pk").values_list("pk", flat=True).first()
    return newest or 0


def save_since(viewer: Any, model: type[Model], pk: str, mark: str) -> Save | None:
    """The newest change or deletion of the object ``pk`` of ``model`` that
    someone other than ``viewer`` logged after the history entry ``mark``
    (as the form sent it; ``None`` for a form sent without one): one query."""
    if not mark.isdigit():
        return None
    entry = (
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(
                model, for_concrete_model=False
            ),
            object_id=pk,
            action_flag__in=(CHANGE, DELETION),
            pk__gt=int(mark),
        )
        .exclude(user_id=viewer.pk)
        .select_related("user")
        .order_by("-pk")
        .first()
    )
    if entry is None:
        return None
    gate = Gate(viewer)
    named = gate.in_audience and not gate.refused([entry.user])
    deleted = entry.action_flag == DELETION
    return Save(str(entry.user) if named else None, deleted, entry.pk)
