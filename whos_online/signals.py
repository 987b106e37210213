"""Signal receivers, connected in ``AppConfig.ready``."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from whos_online import presence
from whos_online.failsafe import quietly


def user_logged_out(
    *, request: HttpRequest | None = None, user: Any = None, **kwargs: Any
) -> None:
    """Logging out takes the user off the lists and out of their rooms at
    once, unless another device of theirs was seen within the guard period."""
    if user is None or user.pk is None:
        return
    session = getattr(request, "session", None)
    session_key = getattr(session, "session_key", None) or ""
    device = presence.device_of(session_key) if session_key else ""
    quietly(lambda: presence.log_out(str(user.pk), device), None)
