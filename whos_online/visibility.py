"""Invisible mode: a user's own choice to appear offline.

The choice is kept in the database (:class:`~whos_online.models.Visibility`)
and only there: Redis keeps no copy that could go stale. A record of a user
reads it (one query, once per guard period and device) and says whether
they are hidden; a toggle moves them in Redis at once, and when Redis cannot
be reached then, their next record does. Whatever Redis holds meanwhile,
every output asks the gate (:mod:`whos_online.gate`), which reads the
choices of the users it is about to show.

When the database cannot be read (the site forgot ``migrate whos_online``,
say), privacy fails closed: a user is taken to have chosen to appear
offline, and nothing raises (check ``whos_online.W004`` warns of the
unapplied migration).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.db.models import Q

from whos_online.store import get_store

# The models are imported where they are used: the middleware imports this
# module, and must be importable when the app is not installed, to say so.


@dataclass(frozen=True)
class Choices:
    """What some users chose, by key (strings)."""

    invisible: frozenset[str] = frozenset()
    hide_last_seen: frozenset[str] = frozenset()


def is_invisible(user: Any) -> bool:
    """Whether ``user`` chose to appear offline (one query); ``True`` when
    the database cannot say."""
    return str(user.pk) in choices_among([user.pk]).invisible


def choices_among(pks: Iterable[object]) -> Choices:
    """What the users ``pks`` chose (one query; none for no users); every
    choice that hides, for all of them, when the database cannot say."""
    from whos_online.models import Visibility

    wanted = primary_keys(pks)
    if not wanted:
        return Choices()
    try:
        # A savepoint, so a failure leaves the page's own transaction usable.
        with transaction.atomic():
            rows = list(
                Visibility.objects.filter(user_id__in=wanted)
                .filter(Q(invisible=True) | Q(hide_last_seen=True))
                .values_list("user_id", "invisible", "hide_last_seen")
            )
    except DatabaseError as exc:
        _unreadable(exc)
        return Choices(frozenset(wanted), frozenset(wanted))
    return Choices(
        frozenset(str(pk) for pk, invisible, _ in rows if invisible),
        frozenset(str(pk) for pk, _, hides in rows if hides),
    )


def primary_keys(members: Iterable[object]) -> list[str]:
    """The members that are primary keys of the user model, as strings."""
    field = get_user_model()._meta.pk
    assert field is not None
    found = []
    for member in members:
        try:
            field.to_python(member)
        except ValidationError:
            continue
        found.append(str(member))
    return found


def set_hide_last_seen(user: Any, hide: bool) -> bool:
    """Keep whether ``user`` hides when they were last seen; ``False`` if
    the database could not keep it."""
    from whos_online.models import Visibility

    try:
        with transaction.atomic():
            Visibility.objects.update_or_create(
                user=user, defaults={"hide_last_seen": hide}
            )
    except DatabaseError as exc:
        _unreadable(exc)
        return False
    get_store().state.snapshots.clear()
    return True


def set_invisible(user: Any, invisible: bool) -> bool:
    """Keep the choice, and apply it in Redis at once; ``False`` if the
    database could not keep it, and nothing changed. When Redis cannot be
    reached, the choice applies at the user's next record, and every output
    follows it meanwhile. This process's shared snapshots are dropped, so
    its next page shows the choice."""
    from whos_online.models import Visibility

    try:
        with transaction.atomic():
            Visibility.objects.update_or_create(
                user=user, defaults={"invisible": invisible}
            )
    except DatabaseError as exc:
        _unreadable(exc)
        return False
    store = get_store()
    pk = str(user.pk)
    store.set_invisible(pk, invisible)  # else applied at their next record
    store.state.snapshots.clear()
    return True


def _unreadable(exc: DatabaseError) -> None:
    get_store().state.refused.warning(
        "visibility",
        "Who's online cannot read users' choices to appear offline (%s: %s), "
        "so it lists nobody as visible on their say-so. Has `manage.py "
        "migrate whos_online` been run?",
        type(exc).__name__,
        exc,
    )
