"""The app's signals, and its receiver of Django's ``user_logged_out``.

``user_came_online`` is sent when a user enters the window: the record
script says so, so exactly one process sends it, the one whose request
recorded them. ``user_went_offline`` is sent when a user logs out (and no
other device of theirs keeps them online) and when ``prune_online`` finds
that a user has left the window, so a timeout is announced as late as the
cron job's interval.

Both carry ``user_pk`` (a string) and ``hidden`` (whether the user is hidden
from the public: a receiver that tells others must leave them out);
``user_went_offline`` also ``reason``, ``"logout"`` or ``"timeout"``.
Receivers run inside the request or the command that saw the change, so
they should be quick; an exception in one is logged and never reaches the
request.
"""

from __future__ import annotations

import logging
from typing import Any

from django.dispatch import Signal
from django.http import HttpRequest

from whos_online import visibility
from whos_online.store import Pruned, Store, get_store

logger = logging.getLogger("whos_online")

user_came_online = Signal()
user_went_offline = Signal()


def announce(signal: Signal, **payload: Any) -> None:
    """Send ``signal``; a receiver's exception is logged, not raised."""
    for receiver, result in signal.send_robust(sender=Store, **payload):
        if isinstance(result, Exception):
            logger.error(
                "A receiver of a who's-online signal failed: %r",
                receiver,
                exc_info=result,
            )


def announce_pruned(pruned: Pruned) -> None:
    """Announce the users who left; ``hidden`` by Redis' sets or by their
    choice in the database, which wins over a copy Redis may have missed
    (one query)."""
    chosen = visibility.choices_among(pruned.users_left).invisible
    for pk in pruned.users_left:
        hidden = pk in chosen
        announce(user_went_offline, user_pk=pk, hidden=hidden, reason="timeout")
    for pk in pruned.hidden_left:
        announce(user_went_offline, user_pk=pk, hidden=True, reason="timeout")


def user_logged_out(
    *, request: HttpRequest | None = None, user: Any = None, **kwargs: Any
) -> None:
    """Logging out takes the user off the lists and out of their rooms at
    once, unless another device of theirs was seen within the guard period;
    this process's shared snapshots are dropped, however ``logout()`` was
    called (a view, code, the test client, Channels)."""
    if user is None or user.pk is None:
        return
    get_store().state.snapshots.clear()
    session = getattr(request, "session", None)
    session_key = getattr(session, "session_key", None) or ""
    store = get_store()
    device = store.device_of(session_key) if session_key else ""
    pk = str(user.pk)
    left = store.log_out(pk, device)
    if left is not None and left.removed:
        hidden = left.hidden or visibility.is_invisible(user)
        announce(user_went_offline, user_pk=pk, hidden=hidden, reason="logout")
