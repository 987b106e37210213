"""Invisible mode: a user's own choice to appear offline.

The choice is kept in the database (:class:`~whos_online.models.Visibility`),
because Redis may lose its data, and mirrored in Redis, where the record
script reads it in the same round trip: recording a user stays free of SQL.
When Redis has lost the mirror, the first record or toggle that notices
loads it again from the database (one query).
"""

from __future__ import annotations

from typing import Any

from whos_online import presence
from whos_online.failsafe import quietly

# The models are imported where they are used: the middleware imports this
# module, and must be importable when the app is not installed, to say so.


def is_invisible(user: Any) -> bool:
    """Whether ``user`` chose to appear offline (one query)."""
    from whos_online.models import Visibility

    return Visibility.objects.filter(user_id=user.pk, invisible=True).exists()


def set_invisible(user: Any, invisible: bool) -> None:
    """Keep the choice, and apply it in Redis at once (if Redis cannot be
    reached, the next record of the user applies it)."""
    from whos_online.models import Visibility

    Visibility.objects.update_or_create(user=user, defaults={"invisible": invisible})
    quietly(lambda: _apply(str(user.pk), invisible), None)


def _apply(pk: str, invisible: bool) -> None:
    if not presence.set_invisible(pk, invisible):
        load_mirror()
        presence.set_invisible(pk, invisible)


def load_mirror() -> None:
    """Fill Redis' mirror of the choices from the database."""
    from whos_online.models import Visibility

    chosen = Visibility.objects.filter(invisible=True).values_list("user_id", flat=True)
    presence.load_invisible(chosen)
