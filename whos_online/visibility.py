"""Invisible mode: a user's own choice to appear offline.

The choice is kept in the database (:class:`~whos_online.models.Visibility`),
because Redis may lose its data, and mirrored in Redis, where the record
script reads it in the same round trip: recording a user stays free of SQL.
When Redis has lost the mirror, the first record or toggle that notices
loads it again from the database (one query).

When the database cannot be read (the site forgot ``migrate whos_online``,
say), privacy fails closed: a user is taken to have chosen to appear
offline, and nothing raises (check ``whos_online.W004`` warns of the
unapplied migration).
"""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError, transaction

from whos_online.failsafe import quietly
from whos_online.store import get_store

# The models are imported where they are used: the middleware imports this
# module, and must be importable when the app is not installed, to say so.


def is_invisible(user: Any) -> bool:
    """Whether ``user`` chose to appear offline (one query); ``True`` when
    the database cannot say."""
    from whos_online.models import Visibility

    try:
        # A savepoint, so a failure leaves the page's own transaction usable.
        with transaction.atomic():
            return Visibility.objects.filter(user_id=user.pk, invisible=True).exists()
    except DatabaseError as exc:
        _unreadable(exc)
        return True


def set_invisible(user: Any, invisible: bool) -> bool:
    """Keep the choice, and apply it in Redis at once (if Redis cannot be
    reached, the next record of the user applies it); ``False`` if the
    database could not keep it, and nothing changed. This process's shared
    snapshots are dropped, so its next page shows the choice."""
    from whos_online.models import Visibility

    try:
        with transaction.atomic():
            Visibility.objects.update_or_create(
                user=user, defaults={"invisible": invisible}
            )
    except DatabaseError as exc:
        _unreadable(exc)
        return False
    quietly(lambda: _apply(str(user.pk), invisible), None)
    get_store().state.snapshots.clear()
    return True


def _apply(pk: str, invisible: bool) -> None:
    store = get_store()
    if not store.set_invisible(pk, invisible):
        load_mirror()
        store.set_invisible(pk, invisible)


def load_mirror() -> bool:
    """Fill Redis' mirror of the choices from the database; ``False`` if the
    database cannot be read (the mirror stays missing)."""
    from whos_online.models import Visibility

    try:
        with transaction.atomic():
            chosen = list(
                Visibility.objects.filter(invisible=True).values_list(
                    "user_id", flat=True
                )
            )
    except DatabaseError as exc:
        _unreadable(exc)
        return False
    get_store().load_invisible(chosen)
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
