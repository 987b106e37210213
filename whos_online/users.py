"""Users online as model instances: read in one query for a list of
``(key, last seen)`` pairs, each with when they were last seen and where.

What a viewer may learn of them is the gate's (``whos_online.gate``); this
only turns the keys Redis holds into users.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from whos_online.gate import Grade, grade_label
from whos_online.locations import Location, parse
from whos_online.store import get_store


@dataclass(frozen=True)
class OnlineUser:
    user: Any
    last_seen: datetime
    hidden: bool = False
    admin_url: str | None = None
    """Set on the staff page, for viewers who may open the user's admin page."""
    location: Location | None = None
    """Where they were at their last record, if the page had a label."""
    time_shown: bool = True
    """Whether the viewer may learn ``last_seen`` to the minute; when not,
    ``grade`` says how long ago roughly, if anything."""
    grade: Grade | None = None

    @property
    def name(self) -> str:
        return str(self.user)

    @property
    def last_seen_label(self) -> str:
        """How long ago, roughly, in the active language ("" if exact)."""
        return grade_label(self.grade)

    @property
    def url(self) -> str | None:
        get_url = getattr(self.user, "get_absolute_url", None)
        return get_url() if callable(get_url) else None


@dataclass(frozen=True)
class Named:
    """A member known by name (a bot; on the staff page, a guest's stored
    address) and when it was last seen."""

    name: str
    last_seen: datetime


def users_in_order(
    visible: Sequence[tuple[str, float]],
    hidden: Sequence[tuple[str, float]] = (),
    where: Mapping[str, bytes] | None = None,
    known: Mapping[str, Any] | None = None,
) -> list[OnlineUser]:
    """Users for ``(key, last seen)`` pairs, newest first, in one query for
    those not ``known`` (users loaded already, by key).

    Keys that are not valid primary keys, or whose user is gone, are skipped.
    """
    members = sorted(
        [(seen, member, False) for member, seen in visible]
        + [(seen, member, True) for member, seen in hidden],
        reverse=True,
    )
    if not members:
        return []
    model = get_user_model()
    wanted: dict[object, tuple[float, bool, str]] = {}
    for seen, member, is_hidden in members:
        try:
            pk = model._meta.pk.to_python(member)
        except ValidationError:
            continue
        wanted.setdefault(pk, (seen, is_hidden, member))
    loaded = {
        pk: known[member]
        for pk, (_, _, member) in wanted.items()
        if known and member in known
    }
    users = loaded | _users(model, [pk for pk in wanted if pk not in loaded])
    places = where or {}
    return [
        OnlineUser(
            user, as_datetime(seen), is_hidden, location=parse(places.get(member))
        )
        for pk, (seen, is_hidden, member) in wanted.items()
        if (user := users.get(pk)) is not None
    ]


def _users(model: Any, pks: list[object]) -> dict[object, Any]:
    """The users ``pks`` by key, in one query for those this process has not
    read within ``WHOS_ONLINE_SNAPSHOT_MAX_AGE``: its pages list the same
    users while they share a snapshot."""
    store = get_store()
    kept, now = store.config.snapshot_max_age, time.monotonic()
    if kept <= 0:
        return model._default_manager.in_bulk(pks)  # type: ignore[no-any-return]
    memo = store.state.users
    found = {}
    for pk in pks:
        read = memo.get(pk)
        if read is not None and now - read[0] < kept:
            found[pk] = read[1]
    missing = [pk for pk in pks if pk not in found]
    if missing:
        for pk, user in model._default_manager.in_bulk(missing).items():
            found[pk] = memo.put(pk, (now, user))[1]
    return found


def as_datetime(timestamp: float) -> datetime:
    """A score (seconds since the epoch) as an aware UTC datetime."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc)


def as_record(record: tuple[int, float] | None) -> tuple[int, datetime] | None:
    return None if record is None else (record[0], as_datetime(record[1]))
