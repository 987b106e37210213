"""Every setting of the app, with its default, and what is derived from them:
one settings object.

:func:`get_config` builds one frozen :class:`Config`: a field per
``WHOS_ONLINE_`` setting, named as the setting in lower case
(``WHOS_ONLINE_WINDOW`` is ``get_config().window``), beside the plain values
derived from settings (the guard key, trusted networks, the imported rules).
The one ``setting_changed`` receiver below drops it, so ``override_settings``
just works; nothing is written into settings. Whatever is built from a
``Config`` (the store, its client and the process's state) is built again
when the ``Config`` it was made from is no longer the current one.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import ipaddress
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from django.conf import settings
from django.core.cache import InvalidCacheBackendError, caches
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.functional import Promise
from django.utils.module_loading import import_string

from whos_online.rules import SETTING_RULES, is_redis_backend

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
UNSET = object()
# A change form's staff member who has not asked for this many intervals
# has closed the form.
MISSED_ASKS = 6
SETTING = "setting"
"""The metadata key that marks a field of :class:`Config` as a setting."""

logger = logging.getLogger("whos_online")


def setting(default: Any = None, *, factory: Callable[[], Any] | None = None) -> Any:
    """A field of :class:`Config` that is the setting of its name, with its
    default (a container's default is made by ``factory``)."""
    if factory is not None:
        return field(default_factory=factory, hash=False, metadata={SETTING: True})
    return field(default=default, metadata={SETTING: True})


@dataclass(frozen=True, kw_only=True)
class Config:
    """The settings in force, built once by :func:`get_config`.

    Each field marked by :func:`setting` is ``WHOS_ONLINE_<its name in upper
    case>``, with its default. A value that is not what the setting must be
    (:data:`SETTING_RULES`) reads as the default, so nothing that reads it
    can fail on it; it is one of the ``problems``, which turn presence off.
    The other fields are derived from settings."""

    cache_alias: str = setting("default")
    """The cache alias whose Redis holds presence data."""
    key_prefix: str = setting("whos_online")
    """Start of every key, and its Redis Cluster hash tag."""
    shards: int = setting(1)
    """How many shards each set is split into, by a hash of the member,
    each under a hash tag of its own (for a Redis Cluster); 1: none."""
    window: int = setting(15 * 60)
    """Seconds since the last visit during which a member counts as online."""
    guard_seconds: int = setting(5 * 60)
    """Seconds the guard cookie spares a visitor from being recorded again."""
    guard_cookie_name: str = setting("whos_online")
    max_names: int = setting(50)
    """How many names the widget lists before "and N more"."""
    max_members: int = setting(100_000)
    """The most members one sorted set keeps; the oldest are trimmed first."""
    proxy_count: int = setting(0)
    """How many reverse proxies in front of Django append to X-Forwarded-For."""
    trusted_proxies: Sequence[str] = setting(factory=list)
    """Networks (CIDR) of reverse proxies whose X-Forwarded-For is believed."""
    guest_addresses: str = setting("full")
    """How guest addresses are stored: "full", "truncated" or "hashed"."""
    ipv6_prefix: int = setting(64)
    """How many leading bits of a guest's IPv6 address count: one network
    of this size is one guest (128: each address)."""
    away_after: int = setting(5 * 60)
    """Seconds after which a user still in the window shows as away."""
    heartbeat_seconds: int = setting(60)
    """Seconds between the heartbeat script's pings while a page is visible."""
    tab_seconds: int = setting(45)
    """Seconds between a room page's pings that its tab is still open,
    visible or not (a browser runs a background tab's timers about once
    a minute)."""
    tab_timeout: int = setting(150)
    """Seconds after its last ping that a tab which vanished (a crash, a
    lost network) leaves its rooms; a tab that closes leaves at once."""
    admin_editing: bool = setting(False)
    """Deprecated: changes nothing, and check W008 says what does
    (``EditingAdminSite``, ``ConcurrentEditingMixin``)."""
    admin_editing_seconds: int = setting(10)
    """Seconds between a change form's asks of who else is editing it;
    whoever missed six in a row has closed theirs."""
    room_token_max_age: int = setting(24 * 60 * 60)
    """Seconds a room token (for the refresh and the beacon) stays valid."""
    snapshot_max_age: float = setting(2.0)
    """Seconds a process may reuse a snapshot for other pages (0: never)."""
    rooms: Mapping[str, str] = setting(factory=dict)
    """URL names (``"app:name"``) and the room of their pages, formatted
    with the URL's keyword arguments (``"topic:{pk}"``)."""
    decorate: dict[str, Any] = setting(factory=dict)
    """What ``{% whos_online_decorate %}``'s script decorates besides
    links to pages in rooms: ``{"profiles": "app:profile"}``, the URL
    names of user profiles whose links get the online badge."""
    locations: Mapping[str, str | Promise] = setting(factory=dict)
    """URL names (``"app:name"``) and the location label of their pages,
    a string or a lazy translation (``gettext_lazy``)."""
    is_hidden: str | None = setting(None)
    """Dotted path to ``f(user) -> bool``: whom to count but list to staff
    only (imported: ``is_hidden_function``)."""
    can_see: str | None = setting(None)
    """Dotted path to ``can_see(viewer, users) -> the users viewer may
    see``: a rule of the site's own (friends only, one team, blocked
    users), applied by the gate to every output (imported:
    ``can_see_function``)."""
    last_seen_days: int = setting(30)
    """Days a user's last-seen time is kept beyond the window (0: none)."""
    last_seen_shown: str = setting("exact")
    """How last-seen times are shown: "exact", "approximate" (recently,
    within a week, within a month, a long time ago) or "never"."""
    allow_invisible: bool = setting(True)
    """Whether users may choose to appear offline (invisible mode)."""
    detect_bots: bool = setting(True)
    """Whether crawlers are recognised by User-Agent and kept apart."""
    names_visible_to: str = setting("everyone")
    """Who sees names in lists: "everyone", "users" (logged in), "staff"
    or "nobody"; the others see counts only."""
    public_hidden_count: str = setting("never")
    """What everyone but staff learns of hidden users: "never" (they are
    not counted), "in-total" (counted as users, never apart) or
    "separate" (counted apart, as "1 hidden user")."""
    min_names_listed: int = setting(0)
    """Below this many visible users online, lists show counts only."""
    anonymous_can_view: bool = setting(True)
    """Whether visitors who are not logged in may read the endpoints."""
    failure_backoff: float = setting(10.0)
    """Seconds to leave Redis alone after a failure before trying again."""
    connection_factory: str | None = setting(None)
    """Dotted path to a function taking no arguments that returns the
    redis-py client to use instead of the cache alias's (for instance a
    ``redis.cluster.RedisCluster``); it sets the client's own timeouts."""

    # Derived from the settings above and Django's own.
    session_cookie_name: str
    cookie_path: str
    cookie_domain: str | None
    user_cookie_age: int | None
    """``None``: the user's guard is a browser-session cookie, like the
    session cookie."""
    trusted_networks: tuple[IPNetwork, ...]
    """``trusted_proxies`` parsed."""
    is_hidden_function: Callable[[Any], object] | None
    """The function ``is_hidden`` names."""
    can_see_function: Callable[[Any, list[Any]], Iterable[Any]] | None
    """The function ``can_see`` names."""
    last_seen_kept: int
    """Seconds a last-seen time is kept (``last_seen_days``)."""
    root_urlconf: str
    """``ROOT_URLCONF``, read once: every guarded page view of a user asks
    it, and reading a setting costs more than the rest of that check."""
    problems: tuple[str, ...]
    """Why the settings cannot work (a value of the wrong type or range, a
    dotted path that does not import, a cache alias that is not Redis):
    while there are any, presence is off and pages are served without it."""

    @property
    def admin_presence_seconds(self) -> int:
        """Seconds within which a change form's staff member last asked, to
        count as still there."""
        return MISSED_ASKS * self.admin_editing_seconds

    @property
    def longest_place(self) -> int:
        """Seconds the longest-lived place in a room lasts without another
        word: a device's (the guard period), a tab's or a change form's.
        Rooms' sets and a member's places are kept this long after their
        last write."""
        return max(self.guard_seconds, self.tab_timeout, self.admin_presence_seconds)

    @functools.cached_property
    def guard_key(self) -> bytes:
        """The key of guards, derived from ``SECRET_KEY`` when first used:
        the checks read this object, and Django's own checks run with an
        empty ``SECRET_KEY``, which cannot be read."""
        return hashlib.blake2b(
            settings.SECRET_KEY.encode(), person=b"whos_online.grd", digest_size=32
        ).digest()

    @functools.cached_property
    def guard_hasher(self) -> hashlib.blake2b:
        """A keyed hash of guards, not yet fed: each guard's MAC copies it
        rather than key a hash afresh (a third of the cost of checking a
        guard the process had not seen)."""
        return hashlib.blake2b(key=self.guard_key, digest_size=16)


def is_setting(found: dataclasses.Field[Any]) -> bool:
    """Whether a field of :class:`Config` is a setting (``WHOS_ONLINE_`` and
    its name in upper case), not derived."""
    return bool(found.metadata.get(SETTING))


@functools.cache
def get_config() -> Config:
    """The settings in force, derived once. Settings that cannot work are
    logged here, once per configuration, as an error (``manage.py check``,
    which a server such as gunicorn does not run, says the same): the app
    then serves pages without presence rather than failing them."""
    given = {f.name: _setting(f) for f in dataclasses.fields(Config) if is_setting(f)}
    at_browser_close = settings.SESSION_EXPIRE_AT_BROWSER_CLOSE
    problems = [
        f"WHOS_ONLINE_{name} must be {expected}; it is {value!r}"
        for name, value, expected in invalid_settings()
    ]
    is_hidden = _function("IS_HIDDEN", given["is_hidden"], problems)
    can_see = _function("CAN_SEE", given["can_see"], problems)
    if _function("CONNECTION_FACTORY", given["connection_factory"], problems) is None:
        problems += _cache_problems(given["cache_alias"])
    if problems:
        logger.error(
            "Who's online is off, and pages are served without it, until its "
            "settings are fixed (manage.py check says more): %s.",
            "; ".join(problems),
        )
    return Config(
        **given,
        session_cookie_name=settings.SESSION_COOKIE_NAME,
        cookie_path=settings.SESSION_COOKIE_PATH,
        cookie_domain=settings.SESSION_COOKIE_DOMAIN,
        user_cookie_age=(
            None
            if at_browser_close
            else max(int(settings.SESSION_COOKIE_AGE), given["guard_seconds"])
        ),
        trusted_networks=parse_networks(given["trusted_proxies"]),
        is_hidden_function=is_hidden,
        can_see_function=can_see,
        last_seen_kept=int(given["last_seen_days"]) * 86400,
        root_urlconf=str(getattr(settings, "ROOT_URLCONF", "")),
        problems=tuple(problems),
    )


def _setting(found: dataclasses.Field[Any]) -> Any:
    """The value of the setting of the field ``found``: the site's, or the
    default where the site gives none or one its rule refuses."""
    name = found.name.upper()
    value = getattr(settings, f"WHOS_ONLINE_{name}", UNSET)
    if value is not UNSET and SETTING_RULES[name][0](value):
        return value
    if found.default_factory is not dataclasses.MISSING:
        return found.default_factory()
    return found.default


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


def parse_networks(specs: Sequence[str]) -> tuple[IPNetwork, ...]:
    """``WHOS_ONLINE_TRUSTED_PROXIES`` parsed (a valid one: see ``_setting``)."""
    return tuple(ipaddress.ip_network(spec, strict=False) for spec in specs)


# Django settings that Config is derived from, besides our own, or that
# what is built from it keeps an answer of (the links: links.py).
DJANGO_SETTINGS_USED = {
    "CACHES",
    "ROOT_URLCONF",
    "SECRET_KEY",
    "STATIC_URL",
    "STATICFILES_STORAGE",
    "STORAGES",
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
