"""The users online as model instances, for display.

A thin layer over :mod:`whos_online.presence` that turns user keys into
users with a single query, for the template tag and anything else that shows
the list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError

from whos_online import presence
from whos_online.conf import conf
from whos_online.failsafe import breaker


@dataclass(frozen=True)
class OnlineUser:
    user: AbstractBaseUser
    last_seen: datetime

    @property
    def name(self) -> str:
        return str(self.user)

    @property
    def url(self) -> str | None:
        get_url = getattr(self.user, "get_absolute_url", None)
        return get_url() if callable(get_url) else None


@dataclass(frozen=True)
class Roster:
    """What the widget shows. ``available`` is False when Redis could not be read."""

    available: bool
    window: int
    users: list[OnlineUser] = field(default_factory=list)
    user_count: int = 0
    guest_count: int = 0

    @property
    def total(self) -> int:
        return self.user_count + self.guest_count

    @property
    def more(self) -> int:
        """How many users online are not in ``users``."""
        return max(self.user_count - len(self.users), 0)

    @property
    def window_minutes(self) -> int:
        return max(round(self.window / 60), 1)


def online_roster(limit: int | None = None) -> Roster:
    """Who is online now: at most one Redis round trip and one query."""
    limit = conf.MAX_NAMES if limit is None else limit
    snapshot = breaker.call(lambda: presence.snapshot(limit), None)
    if snapshot is None:
        return Roster(available=False, window=conf.WINDOW)
    return Roster(
        available=True,
        window=snapshot.window,
        users=users_in_order(snapshot.users),
        user_count=snapshot.user_count,
        guest_count=snapshot.guest_count,
    )


def users_in_order(members: list[tuple[str, float]]) -> list[OnlineUser]:
    """Users for ``(key, last seen)`` pairs, in their order, in one query.

    Keys that are not valid primary keys, or whose user is gone, are skipped.
    """
    if not members:
        return []
    model = get_user_model()
    last_seen: dict[object, float] = {}
    for member, seen in members:
        try:
            last_seen.setdefault(model._meta.pk.to_python(member), seen)
        except ValidationError:
            continue
    users = model._default_manager.in_bulk(list(last_seen))
    return [
        OnlineUser(user, datetime.fromtimestamp(seen, tz=timezone.utc))
        for pk, seen in last_seen.items()
        if (user := users.get(pk)) is not None
    ]
