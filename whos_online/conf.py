"""Every setting of the app, with its default, read at use.

Nothing is copied into ``django.conf.settings``: each property reads the
setting when it is used, so ``override_settings`` works without a signal
handler.
"""

from __future__ import annotations

from django.conf import settings


class Settings:
    @property
    def CACHE_ALIAS(self) -> str:
        return getattr(settings, "WHOS_ONLINE_CACHE_ALIAS", "default")

    @property
    def KEY_PREFIX(self) -> str:
        return getattr(settings, "WHOS_ONLINE_KEY_PREFIX", "whos_online")

    @property
    def WINDOW(self) -> int:
        """Seconds since the last visit during which a member counts as online."""
        return getattr(settings, "WHOS_ONLINE_WINDOW", 15 * 60)

    @property
    def GUARD_SECONDS(self) -> int:
        """Seconds the guard cookie spares a visitor from being recorded again."""
        return getattr(settings, "WHOS_ONLINE_GUARD_SECONDS", 5 * 60)

    @property
    def GUARD_COOKIE_NAME(self) -> str:
        return getattr(settings, "WHOS_ONLINE_GUARD_COOKIE_NAME", "whos_online")

    @property
    def MAX_NAMES(self) -> int:
        """How many names the widget lists before "and N more"."""
        return getattr(settings, "WHOS_ONLINE_MAX_NAMES", 50)

    @property
    def MAX_MEMBERS(self) -> int:
        """The most members one sorted set keeps; the oldest are trimmed first."""
        return getattr(settings, "WHOS_ONLINE_MAX_MEMBERS", 100_000)

    @property
    def PROXY_COUNT(self) -> int:
        """How many reverse proxies in front of Django append to X-Forwarded-For."""
        return getattr(settings, "WHOS_ONLINE_PROXY_COUNT", 0)

    @property
    def TRUSTED_PROXIES(self) -> list[str]:
        """Networks (CIDR) of reverse proxies whose X-Forwarded-For is believed."""
        return getattr(settings, "WHOS_ONLINE_TRUSTED_PROXIES", [])

    @property
    def GUEST_ADDRESSES(self) -> str:
        """How guest addresses are stored: "full", "truncated" or "hashed"."""
        return getattr(settings, "WHOS_ONLINE_GUEST_ADDRESSES", "full")

    @property
    def SOCKET_TIMEOUT(self) -> float | None:
        """Connect and read timeout, in seconds, for presence commands."""
        return getattr(settings, "WHOS_ONLINE_SOCKET_TIMEOUT", 0.25)

    @property
    def AWAY_AFTER(self) -> int:
        """Seconds after which a user still in the window shows as away."""
        return getattr(settings, "WHOS_ONLINE_AWAY_AFTER", 5 * 60)

    @property
    def HEARTBEAT_SECONDS(self) -> int:
        """Seconds between the heartbeat script's pings while a page is visible."""
        return getattr(settings, "WHOS_ONLINE_HEARTBEAT_SECONDS", 60)

    @property
    def MAX_ROOMS(self) -> int:
        """The most rooms in use within one window; new rooms wait beyond it."""
        return getattr(settings, "WHOS_ONLINE_MAX_ROOMS", 10_000)

    @property
    def IS_HIDDEN(self) -> str | None:
        """Dotted path to ``f(user) -> bool``: whom to count but list to staff only."""
        return getattr(settings, "WHOS_ONLINE_IS_HIDDEN", None)

    @property
    def DETECT_BOTS(self) -> bool:
        """Whether crawlers are recognised by User-Agent and kept apart."""
        return getattr(settings, "WHOS_ONLINE_DETECT_BOTS", True)

    @property
    def ANONYMOUS_CAN_VIEW(self) -> bool:
        """Whether visitors who are not logged in may read the endpoints."""
        return getattr(settings, "WHOS_ONLINE_ANONYMOUS_CAN_VIEW", True)

    @property
    def FAILURE_BACKOFF(self) -> float:
        """Seconds to leave Redis alone after a failure before trying again."""
        return getattr(settings, "WHOS_ONLINE_FAILURE_BACKOFF", 10.0)


conf = Settings()
