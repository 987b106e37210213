"""Invisible mode: a user's own choice to appear offline.

The choice is kept in the database (:class:`~whos_online.models.Visibility`),
because Redis may lose its data, and mirrored in Redis, where the record
script reads it in the same round trip: recording a user stays free of SQL.
When Redis has lost the mirror, the first record or toggle that notices
loads it again from the database (one query).
"""

from __future__ import annotations

from typing import Any

from whos_online.failsafe import quietly
from whos_online.models import Visibility
from whos_online.store import get_store


def is_invisible(user: Any) -> bool:
    """Whether ``user`` chose to appear offline (one query)."""
    return Visibility.objects.filter(user_id=user.pk, invisible=True).exists()


def set_invisible(user: Any, invisible: bool) -> None:
    """Keep the choice, and apply it in Redis at once (if Redis cannot be
    reached, the next record of the user applies it). This process's shared
    snapshots are dropped, so its next page shows the choice."""
    Visibility.objects.update_or_create(user=user, defaults={"invisible": invisible})
    quietly(lambda: _apply(str(user.pk), invisible), None)
    get_store().state.snapshots.clear()


def _apply(pk: str, invisible: bool) -> None:
    store = get_store()
    if not store.set_invisible(pk, invisible):
        load_mirror()
        store.set_invisible(pk, invisible)


def load_mirror() -> None:
    """Fill Redis' mirror of the choices from the database."""
    chosen = Visibility.objects.filter(invisible=True).values_list("user_id", flat=True)
    get_store().load_invisible(chosen)
