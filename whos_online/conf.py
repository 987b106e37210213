"""Every setting of the app, with its default.

Nothing is copied into ``django.conf.settings``. Each property reads its
setting on first use and remembers it until a ``setting_changed`` signal
(``override_settings``, pytest-django's ``settings``) clears the memory.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings

T = TypeVar("T")


class Settings:
    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def _get(self, name: str, default: T) -> T:
        # Reading a setting that is not set costs an AttributeError inside
        # LazySettings (about 2 µs); the request path reads a dozen, so values
        # are remembered until signals.forget_cached_settings clears them.
        try:
            return self._values[name]  # type: ignore[no-any-return]
        except KeyError:
            value: T = getattr(settings, f"WHOS_ONLINE_{name}", default)
            self._values[name] = value
            return value

    def forget(self) -> None:
        """Read every setting afresh (called when a setting changes)."""
        self._values.clear()

    @property
    def CACHE_ALIAS(self) -> str:
        return self._get("CACHE_ALIAS", "default")

    @property
    def KEY_PREFIX(self) -> str:
        return self._get("KEY_PREFIX", "whos_online")

    @property
    def WINDOW(self) -> int:
        """Seconds since the last visit during which a member counts as online."""
        return self._get("WINDOW", 15 * 60)

    @property
    def GUARD_SECONDS(self) -> int:
        """Seconds the guard cookie spares a visitor from being recorded again."""
        return self._get("GUARD_SECONDS", 5 * 60)

    @property
    def GUARD_COOKIE_NAME(self) -> str:
        return self._get("GUARD_COOKIE_NAME", "whos_online")

    @property
    def MAX_NAMES(self) -> int:
        """How many names the widget lists before "and N more"."""
        return self._get("MAX_NAMES", 50)

    @property
    def MAX_MEMBERS(self) -> int:
        """The most members one sorted set keeps; the oldest are trimmed first."""
        return self._get("MAX_MEMBERS", 100_000)

    @property
    def PROXY_COUNT(self) -> int:
        """How many reverse proxies in front of Django append to X-Forwarded-For."""
        return self._get("PROXY_COUNT", 0)

    @property
    def TRUSTED_PROXIES(self) -> list[str]:
        """Networks (CIDR) of reverse proxies whose X-Forwarded-For is believed."""
        return self._get("TRUSTED_PROXIES", [])

    @property
    def GUEST_ADDRESSES(self) -> str:
        """How guest addresses are stored: "full", "truncated" or "hashed"."""
        return self._get("GUEST_ADDRESSES", "full")

    @property
    def SOCKET_TIMEOUT(self) -> float | None:
        """Connect and read timeout, in seconds, for presence commands."""
        return self._get("SOCKET_TIMEOUT", 0.25)

    @property
    def AWAY_AFTER(self) -> int:
        """Seconds after which a user still in the window shows as away."""
        return self._get("AWAY_AFTER", 5 * 60)

    @property
    def HEARTBEAT_SECONDS(self) -> int:
        """Seconds between the heartbeat script's pings while a page is visible."""
        return self._get("HEARTBEAT_SECONDS", 60)

    @property
    def MAX_ROOMS(self) -> int:
        """The most rooms in use within one window; new rooms wait beyond it."""
        return self._get("MAX_ROOMS", 10_000)

    @property
    def IS_HIDDEN(self) -> str | None:
        """Dotted path to ``f(user) -> bool``: whom to count but list to staff only."""
        return self._get("IS_HIDDEN", None)

    @property
    def DETECT_BOTS(self) -> bool:
        """Whether crawlers are recognised by User-Agent and kept apart."""
        return self._get("DETECT_BOTS", True)

    @property
    def ANONYMOUS_CAN_VIEW(self) -> bool:
        """Whether visitors who are not logged in may read the endpoints."""
        return self._get("ANONYMOUS_CAN_VIEW", True)

    @property
    def FAILURE_BACKOFF(self) -> float:
        """Seconds to leave Redis alone after a failure before trying again."""
        return self._get("FAILURE_BACKOFF", 10.0)

    @property
    def CONNECTION_FACTORY(self) -> str | None:
        """Dotted path to a function taking no arguments that returns the
        redis-py client to use instead of the cache alias's (for instance a
        ``redis.cluster.RedisCluster``); it sets the client's own timeouts."""
        return self._get("CONNECTION_FACTORY", None)


conf = Settings()
