"""Every setting of the app, with its default, and what is derived from them.

``conf.WINDOW`` and its siblings read ``django.conf.settings`` at each use,
so ``override_settings`` just works; nothing is written into settings.

The request path reads many of them on every request, so :func:`get_config`
builds one frozen :class:`Config` of plain values derived from settings, and
the one ``setting_changed`` receiver below drops it. Whatever is built from a
``Config`` (the store, its client and the process's state) is built again
when the ``Config`` it was made from is no longer the current one.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.functional import Promise
from django.utils.module_loading import import_string

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# More shards than a cluster has masters gains nothing; this bounds the keys.
MAX_SHARDS = 1024


class Settings:
    """One property per setting: ``conf.WINDOW`` is ``WHOS_ONLINE_WINDOW``."""

    @property
    def CACHE_ALIAS(self) -> str:
        """The cache alias whose Redis holds presence data."""
        return getattr(settings, "WHOS_ONLINE_CACHE_ALIAS", "default")

    @property
    def KEY_PREFIX(self) -> str:
        """Start of every key, and its Redis Cluster hash tag."""
        return getattr(settings, "WHOS_ONLINE_KEY_PREFIX", "whos_online")

    @property
    def SHARDS(self) -> int:
        """How many shards each set is split into, by a hash of the member,
        each under a hash tag of its own (for a Redis Cluster); 1: none."""
        return getattr(settings, "WHOS_ONLINE_SHARDS", 1)

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
    def ROOM_TOKEN_MAX_AGE(self) -> int:
        """Seconds a room token (for the refresh and the beacon) stays valid."""
        return getattr(settings, "WHOS_ONLINE_ROOM_TOKEN_MAX_AGE", 24 * 60 * 60)

    @property
    def SNAPSHOT_MAX_AGE(self) -> float:
        """Seconds a process may reuse a snapshot for other pages (0: never)."""
        return getattr(settings, "WHOS_ONLINE_SNAPSHOT_MAX_AGE", 2.0)

    @property
    def ROOMS(self) -> dict[str, str]:
        """URL names (``"app:name"``) and the room of their pages, formatted
        with the URL's keyword arguments (``"topic:{pk}"``)."""
        return getattr(settings, "WHOS_ONLINE_ROOMS", {})

    @property
    def LOCATIONS(self) -> dict[str, str | Promise]:
        """URL names (``"app:name"``) and the location label of their pages,
        a string or a lazy translation (``gettext_lazy``)."""
        return getattr(settings, "WHOS_ONLINE_LOCATIONS", {})

    @property
    def IS_HIDDEN(self) -> str | None:
        """Dotted path to ``f(user) -> bool``: whom to count but list to staff only."""
        return getattr(settings, "WHOS_ONLINE_IS_HIDDEN", None)

    @property
    def ALLOW_INVISIBLE(self) -> bool:
        """Whether users may choose to appear offline (invisible mode)."""
        return getattr(settings, "WHOS_ONLINE_ALLOW_INVISIBLE", True)

    @property
    def DETECT_BOTS(self) -> bool:
        """Whether crawlers are recognised by User-Agent and kept apart."""
        return getattr(settings, "WHOS_ONLINE_DETECT_BOTS", True)

    @property
    def NAMES_VISIBLE_TO(self) -> str:
        """Who sees names in lists: "everyone", "users" (logged in), "staff"
        or "nobody"; the others see counts only."""
        return getattr(settings, "WHOS_ONLINE_NAMES_VISIBLE_TO", "everyone")

    @property
    def PUBLIC_HIDDEN_COUNT(self) -> str:
        """What everyone but staff learns of hidden users: "never" (they are
        not counted), "in-total" (counted as users, never apart) or
        "separate" (counted apart, as "1 hidden user")."""
        return getattr(settings, "WHOS_ONLINE_PUBLIC_HIDDEN_COUNT", "never")

    @property
    def MIN_NAMES_LISTED(self) -> int:
        """Below this many visible users online, lists show counts only."""
        return getattr(settings, "WHOS_ONLINE_MIN_NAMES_LISTED", 0)

    @property
    def ANONYMOUS_CAN_VIEW(self) -> bool:
        """Whether visitors who are not logged in may read the endpoints."""
        return getattr(settings, "WHOS_ONLINE_ANONYMOUS_CAN_VIEW", True)

    @property
    def FAILURE_BACKOFF(self) -> float:
        """Seconds to leave Redis alone after a failure before trying again."""
        return getattr(settings, "WHOS_ONLINE_FAILURE_BACKOFF", 10.0)

    @property
    def CONNECTION_FACTORY(self) -> str | None:
        """Dotted path to a function taking no arguments that returns the
        redis-py client to use instead of the cache alias's (for instance a
        ``redis.cluster.RedisCluster``); it sets the client's own timeouts."""
        return getattr(settings, "WHOS_ONLINE_CONNECTION_FACTORY", None)


conf = Settings()


@dataclass(frozen=True)
class Config:
    """Everything derived from settings, built once by :func:`get_config`."""

    prefix: str
    window: int
    guard_seconds: int
    max_members: int
    cookie_name: str
    session_cookie_name: str
    cookie_path: str
    cookie_domain: str | None
    user_cookie_age: int | None
    """``None``: the user's guard is a browser-session cookie, like the
    session cookie."""
    guard_key: bytes
    proxy_count: int
    trusted_networks: tuple[IPNetwork, ...]
    guest_addresses: str
    detect_bots: bool
    is_hidden: Callable[[Any], object] | None
    snapshot_max_age: float
    allow_invisible: bool
    shards: int
    """How many shards presence is split into (``WHOS_ONLINE_SHARDS``)."""
    failure_backoff: float
    max_rooms: int
    rooms: Mapping[str, str] = field(default_factory=dict, hash=False)
    """``WHOS_ONLINE_ROOMS``, read once: every 2xx page asks it."""
    root_urlconf: str = ""
    """``ROOT_URLCONF``, read once: every guarded page view of a user asks
    it, and reading a setting costs more than the rest of that check."""


@functools.cache
def get_config() -> Config:
    at_browser_close = settings.SESSION_EXPIRE_AT_BROWSER_CLOSE
    hidden_path = conf.IS_HIDDEN
    return Config(
        prefix=conf.KEY_PREFIX,
        window=conf.WINDOW,
        guard_seconds=conf.GUARD_SECONDS,
        max_members=conf.MAX_MEMBERS,
        cookie_name=conf.GUARD_COOKIE_NAME,
        session_cookie_name=settings.SESSION_COOKIE_NAME,
        cookie_path=settings.SESSION_COOKIE_PATH,
        cookie_domain=settings.SESSION_COOKIE_DOMAIN,
        user_cookie_age=(
            None
            if at_browser_close
            else max(int(settings.SESSION_COOKIE_AGE), conf.GUARD_SECONDS)
        ),
        guard_key=hashlib.blake2b(
            settings.SECRET_KEY.encode(), person=b"whos_online.grd", digest_size=32
        ).digest(),
        proxy_count=conf.PROXY_COUNT,
        trusted_networks=parse_networks(conf.TRUSTED_PROXIES),
        guest_addresses=conf.GUEST_ADDRESSES,
        detect_bots=conf.DETECT_BOTS,
        is_hidden=None if hidden_path is None else import_string(hidden_path),
        snapshot_max_age=conf.SNAPSHOT_MAX_AGE,
        allow_invisible=conf.ALLOW_INVISIBLE,
        shards=min(max(int(conf.SHARDS), 1), MAX_SHARDS),
        failure_backoff=conf.FAILURE_BACKOFF,
        max_rooms=conf.MAX_ROOMS,
        rooms=dict(conf.ROOMS) if isinstance(conf.ROOMS, dict) else {},
        root_urlconf=str(getattr(settings, "ROOT_URLCONF", "")),
    )


def parse_networks(specs: object) -> tuple[IPNetwork, ...]:
    """``WHOS_ONLINE_TRUSTED_PROXIES`` parsed; a system check reports bad ones."""
    networks = []
    for spec in specs if isinstance(specs, (list, tuple)) else ():
        try:
            networks.append(ipaddress.ip_network(spec, strict=False))
        except (TypeError, ValueError):
            continue
    return tuple(networks)


# Django settings that Config is derived from, besides our own.
DJANGO_SETTINGS_USED = {
    "CACHES",
    "ROOT_URLCONF",
    "SECRET_KEY",
    "SESSION_COOKIE_AGE",
    "SESSION_COOKIE_DOMAIN",
    "SESSION_COOKIE_NAME",
    "SESSION_COOKIE_PATH",
    "SESSION_EXPIRE_AT_BROWSER_CLOSE",
}


@receiver(setting_changed)
def reset_config(*, setting: str, **kwargs: Any) -> None:
    """Derive everything afresh when a setting changes (``override_settings``)."""
    if setting.startswith("WHOS_ONLINE_") or setting in DJANGO_SETTINGS_USED:
        get_config.cache_clear()
