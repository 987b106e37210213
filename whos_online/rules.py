"""What each setting must be: a rule and the words a system check
(``whos_online.E007``) says it in. Pure functions, so the settings
(:mod:`whos_online.conf`), the checks and the docs test read one table; it
imports nothing of the app."""

from __future__ import annotations

import ipaddress
import string
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.utils.functional import Promise
from django_redis.cache import RedisCache as DjangoRedisPackageCache

# More shards than a cluster has masters gains nothing; this bounds the keys.
MAX_SHARDS = 1024
AUDIENCES = ("everyone", "users", "staff", "nobody")
HIDDEN_COUNTS = ("never", "in-total", "separate")


def is_redis_backend(backend: object) -> bool:
    """Whether a cache backend (of ``WHOS_ONLINE_CACHE_ALIAS``) is Redis."""
    return isinstance(backend, (DjangoRedisCache, DjangoRedisPackageCache))


def is_whole(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def is_number(value: object, minimum: float) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value >= minimum
    )


def is_name(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def is_prefix(value: object) -> bool:
    return is_name(value) and not set("{}") & set(str(value))


def are_networks(value: object) -> bool:
    if not isinstance(value, (list, tuple)):
        return False
    try:
        for spec in value:
            ipaddress.ip_network(spec, strict=False)
    except (TypeError, ValueError):
        return False
    return True


def room_pattern_problem(pattern: str) -> str | None:
    """Why a room name of ``WHOS_ONLINE_ROOMS`` cannot be formatted with a
    URL's keyword arguments, or ``None`` when it can: each field names one
    argument (``{pk}``), with at most a conversion and a plain format spec."""
    try:
        fields = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        return str(exc)
    for _, name, spec, conversion in fields:
        if name is None:
            continue
        if not name.isidentifier():
            return f"the field {{{name}}} names no keyword argument of the URL"
        if conversion not in (None, "r", "s", "a"):
            return f"the field {{{name}}} has an unknown conversion !{conversion}"
        if spec and set("{}") & set(spec):
            return f"the field {{{name}}} has a nested field in its format spec"
    return None


def profile_urls(decorate: dict[str, Any]) -> dict[str, str]:
    """The profile pages ``WHOS_ONLINE_DECORATE`` names, as URL name -> the
    keyword argument of the URL that holds the user's primary key (``pk``)
    or another unique field of theirs (``username``): ``{"profiles":
    "app:profile"}`` is ``{"app:profile": "pk"}``. ``decorate`` is valid
    (``get_config().decorate`` reads an invalid one as the default)."""
    profiles = decorate.get("profiles", {})
    return {profiles: "pk"} if isinstance(profiles, str) else dict(profiles)


def is_decorate(value: object) -> bool:
    """Whether ``value`` is a valid ``WHOS_ONLINE_DECORATE``."""
    if not isinstance(value, dict) or not set(value) <= {"profiles"}:
        return False
    profiles = value.get("profiles", {})
    if isinstance(profiles, dict):
        return all(is_name(k) and is_name(x) for k, x in profiles.items())
    return is_name(profiles)


# Setting name (after WHOS_ONLINE_) -> (whether a value is valid, what it must be).
SETTING_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "CACHE_ALIAS": (is_name, "a cache alias from CACHES"),
    "KEY_PREFIX": (is_prefix, "a non-empty string without braces"),
    "WINDOW": (lambda v: is_whole(v, 1), "a whole number of seconds, at least 1"),
    "GUARD_SECONDS": (
        lambda v: is_whole(v, 0),
        "a whole number of seconds, 0 or more",
    ),
    "GUARD_COOKIE_NAME": (is_name, "a non-empty cookie name"),
    "MAX_NAMES": (lambda v: is_whole(v, 0), "a whole number, 0 or more"),
    "MAX_MEMBERS": (lambda v: is_whole(v, 1), "a whole number, at least 1"),
    "SHARDS": (
        lambda v: is_whole(v, 1) and v <= MAX_SHARDS,
        f"a whole number from 1 to {MAX_SHARDS}",
    ),
    "PROXY_COUNT": (lambda v: is_whole(v, 0), "a whole number, 0 or more"),
    "TRUSTED_PROXIES": (are_networks, "a list of networks such as '10.0.0.0/8'"),
    "GUEST_ADDRESSES": (
        lambda v: v in ("full", "truncated", "hashed"),
        'one of "full", "truncated" or "hashed"',
    ),
    "IPV6_PREFIX": (
        lambda v: is_whole(v, 1) and v <= 128,
        "a whole number of bits from 1 to 128",
    ),
    "FAILURE_BACKOFF": (lambda v: is_number(v, 0), "a number of seconds, 0 or more"),
    "AWAY_AFTER": (lambda v: is_whole(v, 1), "a whole number of seconds, at least 1"),
    "HEARTBEAT_SECONDS": (
        lambda v: is_whole(v, 2),
        "a whole number of seconds, at least 2",
    ),
    "TAB_SECONDS": (
        lambda v: is_whole(v, 5),
        "a whole number of seconds, at least 5",
    ),
    "TAB_TIMEOUT": (
        lambda v: is_whole(v, 90),
        "a whole number of seconds, at least 90 (a background tab pings"
        " about once a minute)",
    ),
    "ADMIN_EDITING": (lambda v: isinstance(v, bool), "True or False"),
    "ADMIN_EDITING_SECONDS": (
        lambda v: is_whole(v, 2),
        "a whole number of seconds, at least 2",
    ),
    "ROOM_TOKEN_MAX_AGE": (
        lambda v: is_whole(v, 1),
        "a whole number of seconds, at least 1",
    ),
    "SNAPSHOT_MAX_AGE": (lambda v: is_number(v, 0), "a number of seconds, 0 or more"),
    "ROOMS": (
        lambda v: (
            isinstance(v, dict)
            and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())
        ),
        "a dict of URL names to room names",
    ),
    "DECORATE": (
        is_decorate,
        'a dict such as {"profiles": "app:profile"}, or {"profiles": '
        '{"app:profile": "username"}} naming the URL\'s keyword argument',
    ),
    "LOCATIONS": (
        lambda v: (
            isinstance(v, dict)
            and all(
                isinstance(k, str) and isinstance(x, (str, Promise))
                for k, x in v.items()
            )
        ),
        "a dict of URL names to location labels (strings or gettext_lazy)",
    ),
    "IS_HIDDEN": (
        lambda v: v is None or is_name(v),
        "None or the dotted path of a function f(user) -> bool",
    ),
    "LAST_SEEN_DAYS": (lambda v: is_whole(v, 0), "a whole number of days, 0 or more"),
    "LAST_SEEN_SHOWN": (
        lambda v: v in ("exact", "approximate", "never"),
        'one of "exact", "approximate" or "never"',
    ),
    "CAN_SEE": (
        lambda v: v is None or is_name(v),
        "None or the dotted path of a function can_see(viewer, users)",
    ),
    "DETECT_BOTS": (lambda v: isinstance(v, bool), "True or False"),
    "ALLOW_INVISIBLE": (lambda v: isinstance(v, bool), "True or False"),
    "ANONYMOUS_CAN_VIEW": (lambda v: isinstance(v, bool), "True or False"),
    "NAMES_VISIBLE_TO": (
        lambda v: v in AUDIENCES,
        'one of "everyone", "users", "staff" or "nobody"',
    ),
    "PUBLIC_HIDDEN_COUNT": (
        lambda v: v in HIDDEN_COUNTS,
        'one of "never", "in-total" or "separate"',
    ),
    "MIN_NAMES_LISTED": (lambda v: is_whole(v, 0), "a whole number, 0 or more"),
    "CONNECTION_FACTORY": (
        lambda v: v is None or is_name(v),
        "None or the dotted path of a function returning a Redis client",
    ),
}
