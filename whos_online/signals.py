"""Signal receivers, connected in ``AppConfig.ready``."""

from __future__ import annotations

from typing import Any

from whos_online import presence
from whos_online.failsafe import breaker


def forget_logged_out_user(*, user: Any = None, **kwargs: Any) -> None:
    """Logging out takes the user off the online list at once."""
    if user is not None and user.pk is not None:
        breaker.call(lambda: presence.forget_user(user.pk), None)


# Django settings that something cached by the app was derived from.
WATCHED_SETTINGS = {
    "CACHES",
    "SECRET_KEY",
    "SESSION_COOKIE_AGE",
    "SESSION_COOKIE_DOMAIN",
    "SESSION_COOKIE_NAME",
    "SESSION_COOKIE_PATH",
    "SESSION_EXPIRE_AT_BROWSER_CLOSE",
}


def forget_cached_settings(*, setting: str, **kwargs: Any) -> None:
    """Drop what was derived from settings, so ``override_settings`` takes effect."""
    if setting.startswith("WHOS_ONLINE_") or setting in WATCHED_SETTINGS:
        from whos_online import connection, guard, privacy, visitors
        from whos_online.conf import conf

        conf.forget()
        connection.get_client.cache_clear()
        presence.forget()
        visitors._import.cache_clear()
        guard.forget()
        privacy.salts.reset()
