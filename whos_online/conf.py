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
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from django.conf import settings
from django.core.cache import InvalidCacheBackendError, caches
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.functional import Promise
from django.utils.module_loading import import_string

from whos_online.rules import SETTING_RULES, is_redis_backend

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
T = TypeVar("T")
UNSET = object()

logger = logging.getLogger("whos_online")


class Settings:
    """One property per setting: ``conf.WINDOW`` is ``WHOS_ONLINE_WINDOW``.

    A value that is not what the setting must be (:data:`SETTING_RULES`)
    reads as the default, so nothing that reads it can fail on it;
    :func:`get_config` reports it, once, and turns presence off."""

    def _get(self, name: str, default: T) -> T:
        value = getattr(settings, f"WHOS_ONLINE_{name}", default)
        is_valid = SETTING_RULES[name][0]
        return cast(T, value) if is_valid(value) else default

    @property
    def CACHE_ALIAS(self) -> str:
        """The cache alias whose Redis holds presence data."""
        return self._get("CACHE_ALIAS", "default")

    @property
    def KEY_PREFIX(self) -> str:
        """Start of every key, and its Redis Cluster hash tag."""
        return self._get("KEY_PREFIX", "whos_online")

    @property
    def SHARDS(self) -> int:
        """How many shards each set is split into, by a hash of the member,
        each under a hash tag of its own (for a Redis Cluster); 1: none."""
        return self._get("SHARDS", 1)

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
    def IPV6_PREFIX(self) -> int:
        """How many leading bits of a guest's IPv6 address count: one network
        of this size is one guest (128: each address)."""
        return self._get("IPV6_PREFIX", 64)

    @property
    def AWAY_AFTER(self) -> int:
        """Seconds after which a user still in the window shows as away."""
        return self._get("AWAY_AFTER", 5 * 60)

    @property
    def HEARTBEAT_SECONDS(self) -> int:
        """Seconds between the heartbeat script's pings while a page is visible."""
        return self._get("HEARTBEAT_SECONDS", 60)

    @property
    def TAB_SECONDS(self) -> int:
        """Seconds between a room page's pings that its tab is still open,
        visible or not (a browser runs a background tab's timers about once
        a minute)."""
        return self._get("TAB_SECONDS", 45)

    @property
    def TAB_TIMEOUT(self) -> int:
        """Seconds after its last ping that a tab which vanished (a crash, a
        lost network) leaves its rooms; a tab that closes leaves at once."""
        return self._get("TAB_TIMEOUT", 150)

    @property
    def ADMIN_EDITING(self) -> bool:
        """Deprecated: changes nothing, and check W008 says what does
        (``EditingAdminSite``, ``ConcurrentEditingMixin``)."""
        return self._get("ADMIN_EDITING", False)

    @property
    def ADMIN_EDITING_SECONDS(self) -> int:
        """Seconds between a change form's asks of who else is editing it;
        whoever missed six in a row has closed theirs."""
        return self._get("ADMIN_EDITING_SECONDS", 10)

    @property
    def MAX_ROOMS(self) -> int:
        """The most rooms in use within one window; new rooms wait beyond it."""
        return self._get("MAX_ROOMS", 10_000)

    @property
    def ROOM_TOKEN_MAX_AGE(self) -> int:
        """Seconds a room token (for the refresh and the beacon) stays valid."""
        return self._get("ROOM_TOKEN_MAX_AGE", 24 * 60 * 60)

    @property
    def SNAPSHOT_MAX_AGE(self) -> float:
        """Seconds a process may reuse a snapshot for other pages (0: never)."""
        return self._get("SNAPSHOT_MAX_AGE", 2.0)

    @property
    def ROOMS(self) -> dict[str, str]:
        """URL names (``"app:name"``) and the room of their pages, formatted
        with the URL's keyword arguments (``"topic:{pk}"``)."""
        return self._get("ROOMS", {})

    @property
    def DECORATE(self) -> dict[str, Any]:
        """What ``{% whos_online_decorate %}``'s script decorates besides
        links to pages in rooms: ``{"profiles": "app:profile"}``, the URL
        names of user profiles whose links get the online badge."""
        return self._get("DECORATE", {})

    @property
    def LOCATIONS(self) -> dict[str, str | Promise]:
        """URL names (``"app:name"``) and the location label of their pages,
        a string or a lazy translation (``gettext_lazy``)."""
        return self._get("LOCATIONS", {})

    @property
    def IS_HIDDEN(self) -> str | None:
        """Dotted path to ``f(user) -> bool``: whom to count but list to staff only."""
        return self._get("IS_HIDDEN", None)

    @property
    def CAN_SEE(self) -> str | None:
        """Dotted path to ``can_see(viewer, users) -> the users viewer may
        see``: a rule of the site's own (friends only, one team, blocked
        users), applied by the gate to every output."""
        return self._get("CAN_SEE", None)

    @property
    def LAST_SEEN_DAYS(self) -> int:
        """Days a user's last-seen time is kept beyond the window (0: none)."""
        return self._get("LAST_SEEN_DAYS", 30)

    @property
    def LAST_SEEN_SHOWN(self) -> str:
        """How last-seen times are shown: "exact", "approximate" (recently,
        within a week, within a month, a long time ago) or "never"."""
        return self._get("LAST_SEEN_SHOWN", "exact")

    @property
    def ALLOW_INVISIBLE(self) -> bool:
        """Whether users may choose to appear offline (invisible mode)."""
        return self._get("ALLOW_INVISIBLE", True)

    @property
    def DETECT_BOTS(self) -> bool:
        """Whether crawlers are recognised by User-Agent and kept apart."""
        return self._get("DETECT_BOTS", True)

    @property
    def NAMES_VISIBLE_TO(self) -> str:
        """Who sees names in lists: "everyone", "users" (logged in), "staff"
        or "nobody"; the others see counts only."""
        return self._get("NAMES_VISIBLE_TO", "everyone")

    @property
    def PUBLIC_HIDDEN_COUNT(self) -> str:
        """What everyone but staff learns of hidden users: "never" (they are
        not counted), "in-total" (counted as users, never apart) or
        "separate" (counted apart, as "1 hidden user")."""
        return self._get("PUBLIC_HIDDEN_COUNT", "never")

    @property
    def MIN_NAMES_LISTED(self) -> int:
        """Below this many visible users online, lists show counts only."""
        return self._get("MIN_NAMES_LISTED", 0)

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
    ipv6_prefix: int
    detect_bots: bool
    is_hidden: Callable[[Any], object] | None
    can_see: Callable[[Any, list[Any]], Iterable[Any]] | None
    snapshot_max_age: float
    allow_invisible: bool
    shards: int
    """How many shards presence is split into (``WHOS_ONLINE_SHARDS``)."""
    failure_backoff: float
    max_rooms: int
    last_seen_kept: int = 0
    """Seconds a last-seen time is kept (``WHOS_ONLINE_LAST_SEEN_DAYS``)."""
    rooms: Mapping[str, str] = field(default_factory=dict, hash=False)
    """``WHOS_ONLINE_ROOMS``, read once: every 2xx page asks it."""
    root_urlconf: str = ""
    """``ROOT_URLCONF``, read once: every guarded page view of a user asks
    it, and reading a setting costs more than the rest of that check."""
    problems: tuple[str, ...] = ()
    """Why the settings cannot work (a value of the wrong type or range, a
    dotted path that does not import, a cache alias that is not Redis):
    while there are any, presence is off and pages are served without it."""


@functools.cache
def get_config() -> Config:
    """The settings in force, derived once. Settings that cannot work are
    logged here, once per configuration, as an error (``manage.py check``,
    which a server such as gunicorn does not run, says the same): the app
    then serves pages without presence rather than failing them."""
    at_browser_close = settings.SESSION_EXPIRE_AT_BROWSER_CLOSE
    problems = [
        f"WHOS_ONLINE_{name} must be {expected}; it is {value!r}"
        for name, value, expected in invalid_settings()
    ]
    is_hidden = _function("IS_HIDDEN", conf.IS_HIDDEN, problems)
    can_see = _function("CAN_SEE", conf.CAN_SEE, problems)
    if _function("CONNECTION_FACTORY", conf.CONNECTION_FACTORY, problems) is None:
        problems += _cache_problems(conf.CACHE_ALIAS)
    if problems:
        logger.error(
            "Who's online is off, and pages are served without it, until its "
            "settings are fixed (manage.py check says more): %s.",
            "; ".join(problems),
        )
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
        ipv6_prefix=conf.IPV6_PREFIX,
        detect_bots=conf.DETECT_BOTS,
        is_hidden=is_hidden,
        can_see=can_see,
        snapshot_max_age=conf.SNAPSHOT_MAX_AGE,
        allow_invisible=conf.ALLOW_INVISIBLE,
        shards=conf.SHARDS,
        failure_backoff=conf.FAILURE_BACKOFF,
        max_rooms=conf.MAX_ROOMS,
        last_seen_kept=int(conf.LAST_SEEN_DAYS) * 86400,
        rooms=dict(conf.ROOMS),
        root_urlconf=str(getattr(settings, "ROOT_URLCONF", "")),
        problems=tuple(problems),
    )


def invalid_settings() -> list[tuple[str, object, str]]:
    """Each ``WHOS_ONLINE_`` setting the site gives a value it must not have:
    (its name after the prefix, the value, what it must be)."""
    found = []
    for name, (is_valid, expected) in SETTING_RULES.items():
        value = getattr(settings, f"WHOS_ONLINE_{name}", UNSET)
        if value is not UNSET and not is_valid(value):
            found.append((name, value, expected))
    return found


def _function(
    name: str, path: str | None, problems: list[str]
) -> Callable[..., Any] | None:
    """The function the setting ``name`` names by its dotted ``path``;
    ``None``, with a problem noted, when it does not import or is not
    callable."""
    if path is None:
        return None
    try:
        found = import_string(path)
    except ImportError as exc:
        problems.append(f"WHOS_ONLINE_{name} {path!r} does not import: {exc}")
        return None
    if not callable(found):
        problems.append(f"WHOS_ONLINE_{name} {path!r} is not callable")
        return None
    return cast(Callable[..., Any], found)


def _cache_problems(alias: str) -> list[str]:
    try:
        backend = caches[alias]
    except InvalidCacheBackendError:
        return [f"WHOS_ONLINE_CACHE_ALIAS {alias!r} is not in CACHES"]
    if not is_redis_backend(backend):
        return [f"WHOS_ONLINE_CACHE_ALIAS {alias!r} is not a Redis cache backend"]
    return []


def parse_networks(specs: list[str]) -> tuple[IPNetwork, ...]:
    """``WHOS_ONLINE_TRUSTED_PROXIES`` parsed (``conf`` gives only valid ones)."""
    return tuple(ipaddress.ip_network(spec, strict=False) for spec in specs)


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
