"""Who else has an object open in the admin, who of them is editing it, and
whether it was saved or deleted since a form was opened.

Each object has two rooms: ``admin:<app.model>:<pk>``, which everyone with
its change form open is in, and ``admin-editing:<app.model>:<pk>``, which
those of them with unsaved changes are in too. Each page of a change form is
a tab of its own (:func:`new_tab`). The form's script keeps its tab in them
by asking every ``WHOS_ONLINE_ADMIN_EDITING_SECONDS`` (:func:`stay`) and
takes it out as the page closes (:func:`leave`); whoever missed six of those
asks in a row has gone. Who is in the rooms is read through the gate, as
every list of names is.

A save since is found by the object's stored values, not by any order of ids
or clock: a form carries, signed, the :func:`fingerprint` of the object it
was made from (:func:`form_mark`); a save compares it with the row read
locked inside its own transaction (:func:`save_over`), so of two saves at
once the second finds the first. The admin's history (``LogEntry``) only
names who saved, through the gate: someone else, or the same staff member
in another tab.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from django.contrib.admin.models import CHANGE, DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core import signing
from django.db import router, transaction
from django.db.models import Model

from whos_online.conf import get_config
from whos_online.gate import Gate
from whos_online.marks import room_name
from whos_online.rooms import join_named_room, keep_tab, leave_tab
from whos_online.roster import Roster, online_roster
from whos_online.store import get_store
from whos_online.users import OnlineUser

# The most others named on one form: past it, they are counted.
NAMED = 20
# A tab's id: random bytes, URL-safe; what a mark may hold, and its length.
TAB_BYTES = 12
TAB = re.compile(r"[A-Za-z0-9_-]{16}\Z")
MARK_SALT = "whos_online.admin-editing"
# The longest mark read: one the site makes is about 150 characters.
MAX_MARK = 400


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
    """A change or deletion of the object since the form was opened, or a
    form whose mark the site did not make (``unchecked``)."""

    by: str | None = None
    """Who made it, where the gate lets the viewer learn it."""
    deleted: bool = False
    yours: bool = False
    """Made by the viewer, in another tab."""
    unchecked: bool = False
    seen: str = ""
    """The object's fingerprint now: the state a page telling of this save
    shows, and its asks compare with."""


@dataclass(frozen=True)
class Opened:
    """What a change form's mark says: its tab, the fingerprint of the
    object it was made from, and when (to name who saved, never to decide)."""

    tab: str
    fingerprint: str
    at: int


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
    return get_config().admin_presence_seconds


def enter(request: Any, obj: Model) -> None:
    """The change form of ``obj`` is being shown: its staff member is in
    the object's room once the page is served (the middleware records it)."""
    rooms = rooms_of(obj)
    if rooms is not None:
        join_named_room(request, rooms.viewing)


def stay(request: Any, obj: Model, tab: str, *, editing: bool) -> None:
    """The form of the page ``tab`` is still open (with unsaved changes, if
    ``editing``): the tab is in the object's rooms for six asks more, and
    out of the editing room once its changes are undone."""
    rooms = rooms_of(obj)
    if rooms is None:
        return
    here = {rooms.viewing, rooms.editing} if editing else {rooms.viewing}
    keep_tab(request, tab, here, presence_window())


def leave(request: Any, obj: Model, tab: str) -> None:
    """The form of the page ``tab`` was closed: it leaves the object's
    rooms at once."""
    rooms = rooms_of(obj)
    if rooms is not None:
        leave_tab(request, tab)


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


def digest(others: Others, obj: Model) -> str:
    """What a staff member with ``obj``'s form open learns of the others
    (``others``, as the gate let them) and of the object as stored, as one
    short string: a live stream tells the form to ask again only when it
    changes, so a change the gate hides from them is never told."""
    here = [
        [str(each.online.user.pk), each.name, each.editing, each.online.hidden]
        for each in others.here
    ]
    seen = [others.available, here, others.unnamed, fingerprint(obj)]
    encoded = json.dumps(seen, separators=(",", ":")).encode()
    return hashlib.blake2b(encoded, digest_size=16).hexdigest()


def new_tab() -> str:
    """The id of a change form's page, made as it is served: each page load
    is a tab of its own, kept apart in the rooms and in saves."""
    return secrets.token_urlsafe(TAB_BYTES)


def fingerprint(obj: Model) -> str:
    """What ``obj``'s stored fields hold, as one short string: the same
    values give the same fingerprint, on any process and any database."""
    values = [field.value_to_string(obj) for field in obj._meta.concrete_fields]
    encoded = json.dumps(values, default=str, separators=(",", ":"))
    return hashlib.blake2b(encoded.encode(), digest_size=16).hexdigest()


def stored_fingerprint(
    model: type[Model], pk: Any, *, lock: bool = False
) -> str | None:
    """The fingerprint of the row ``pk`` of ``model`` as stored now
    (``None``: there is none); with ``lock``, the row stays locked until the
    transaction around the caller ends, so no other save can come between
    (one query)."""
    using = router.db_for_write(model)
    with transaction.atomic(using=using):
        rows = model._base_manager.db_manager(using).filter(pk=pk)
        found = (rows.select_for_update() if lock else rows).first()
    return None if found is None else fingerprint(found)


def form_mark(viewer: Any, obj: Model, tab: str, stored: str | None = None) -> str:
    """What a change form carries of what it was opened from: its tab, the
    fingerprint of ``obj`` (or ``stored``, one taken already) and when,
    signed for ``viewer`` and ``obj``, so that it cannot be forged."""
    taken = fingerprint(obj) if stored is None else stored
    at = int(time.time())
    payload = [_label(type(obj), obj.pk), str(viewer.pk), tab, taken, at]
    return signing.dumps(payload, salt=MARK_SALT)


def opened(viewer: Any, model: type[Model], pk: Any, sent: str) -> Opened | None:
    """What the form ``sent`` (its mark) was opened from, if the site made
    that mark for ``viewer`` and this object; ``None`` for anything else,
    whatever it is."""
    if not sent or len(sent) > MAX_MARK:
        return None
    try:
        payload = signing.loads(sent, salt=MARK_SALT)
    except (signing.BadSignature, ValueError):
        return None
    match payload:
        case [str(label), str(user), str(tab), str(taken), int(at)] if (
            label == _label(model, pk) and user == str(viewer.pk) and TAB.match(tab)
        ):
            return Opened(tab, taken, at)
    return None


def save_since(
    viewer: Any, model: type[Model], pk: Any, form: Opened, now: str | None
) -> Save | None:
    """Whether the object was saved or deleted since ``form`` was opened,
    ``now`` being its fingerprint as it is (``None``: it is gone); who did it
    is named from the admin's history, through the gate (one query, only
    when it was)."""
    if now == form.fingerprint:
        return None
    return _named(viewer, model, pk, form.at, now)


def save_over(viewer: Any, obj: Model, sent: str) -> Save | None:
    """Before ``obj`` is saved from a form that sent the mark ``sent``: the
    save since it was opened that this one would overwrite, if any. The row
    is read locked, inside the save's transaction, so of two saves at once
    the second waits for the first and then finds it. ``obj`` as loaded
    before the lock is compared too: a save between its load and the lock
    is one. A mark the site did not make is refused as unchecked."""
    model = type(obj)
    now = stored_fingerprint(model, obj.pk, lock=True)
    form = opened(viewer, model, obj.pk, sent)
    if form is None:
        return Save(unchecked=True, seen=now or "")
    if now == form.fingerprint == fingerprint(obj):
        return None
    return _named(viewer, model, obj.pk, form.at, now)


def _named(
    viewer: Any, model: type[Model], pk: Any, since: int, now: str | None
) -> Save:
    """A save since ``since``, named by the newest change or deletion of the
    object the admin logged since then: by ``viewer`` (then in another tab),
    or by someone the gate lets the viewer name (one query)."""
    entry = (
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(
                model, for_concrete_model=False
            ),
            object_id=str(pk),
            action_flag__in=(CHANGE, DELETION),
            action_time__gte=datetime.fromtimestamp(since, tz=timezone.utc),
        )
        .select_related("user")
        .order_by("-action_time", "-pk")
        .first()
    )
    deleted, seen = now is None, now or ""
    if entry is None:
        return Save(deleted=deleted, seen=seen)
    if str(entry.user_id) == str(viewer.pk):
        return Save(deleted=deleted, yours=True, seen=seen)
    gate = Gate(viewer)
    named = gate.in_audience and not gate.refused([entry.user])
    return Save(str(entry.user) if named else None, deleted, seen=seen)


def _label(model: type[Model], pk: Any) -> str:
    return f"{model._meta.label_lower}:{pk}"
