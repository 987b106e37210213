"""System checks for the mistakes a site can make setting the app up (what
its settings name in the URLconf: ``url_checks.py``).

Every ID is documented in docs/checks.md.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.cache import InvalidCacheBackendError, caches
from django.core.checks import CheckMessage, Error, Warning
from django.db import connections, router
from django.utils.module_loading import import_string

from whos_online.conf import get_config, invalid_settings
from whos_online.connection import has_read_timeout
from whos_online.rules import SETTING_RULES, is_redis_backend

MIDDLEWARE_PATH = "whos_online.middleware.WhosOnlineMiddleware"
AUTH_MIDDLEWARE_PATH = "django.contrib.auth.middleware.AuthenticationMiddleware"


def check_middleware(**kwargs: Any) -> list[CheckMessage]:
    from django.contrib.auth.middleware import AuthenticationMiddleware

    from whos_online.middleware import WhosOnlineMiddleware

    ours = _positions(WhosOnlineMiddleware)
    if not ours:
        return [
            Error(
                f"{MIDDLEWARE_PATH!r} is not in MIDDLEWARE, so nobody is recorded.",
                hint=f"Add it to MIDDLEWARE after {AUTH_MIDDLEWARE_PATH!r}.",
                id="whos_online.E001",
            )
        ]
    errors: list[CheckMessage] = []
    if len(ours) > 1:
        errors.append(
            Error(
                f"{MIDDLEWARE_PATH!r} appears {len(ours)} times in MIDDLEWARE.",
                hint="Keep one.",
                id="whos_online.E002",
            )
        )
    auth = _positions(AuthenticationMiddleware)
    if not auth or ours[0] < auth[0]:
        errors.append(
            Error(
                f"{MIDDLEWARE_PATH!r} must come after {AUTH_MIDDLEWARE_PATH!r} "
                "in MIDDLEWARE, or it cannot tell users from guests.",
                hint=f"Move it below {AUTH_MIDDLEWARE_PATH!r}.",
                id="whos_online.E003",
            )
        )
    return errors


def _positions(cls: type) -> list[int]:
    """Where ``cls``, or a subclass of it, stands in MIDDLEWARE."""
    found = []
    for index, path in enumerate(settings.MIDDLEWARE):
        try:
            entry = import_string(path)
        except ImportError:
            continue
        if isinstance(entry, type) and issubclass(entry, cls):
            found.append(index)
    return found


def check_cache(**kwargs: Any) -> list[CheckMessage]:
    config = get_config()
    if config.connection_factory is not None:
        return []  # the cache alias is not used
    alias = config.cache_alias  # the default when it is not a name (E007)
    try:
        backend = caches[alias]
    except InvalidCacheBackendError:
        return [
            Error(
                f"WHOS_ONLINE_CACHE_ALIAS is {alias!r}, which is not in CACHES.",
                hint="Name a cache alias whose backend is django-redis or "
                "django.core.cache.backends.redis.RedisCache.",
                id="whos_online.E004",
            )
        ]
    if not is_redis_backend(backend):
        return [
            Error(
                f"The cache {alias!r} named by WHOS_ONLINE_CACHE_ALIAS uses "
                f"{type(backend).__module__}.{type(backend).__qualname__}, "
                "which is not a Redis backend.",
                hint="Use django_redis.cache.RedisCache or "
                "django.core.cache.backends.redis.RedisCache for that alias.",
                id="whos_online.E005",
            )
        ]
    if not has_read_timeout(alias):
        return [
            Warning(
                f"The cache {alias!r} named by WHOS_ONLINE_CACHE_ALIAS sets no "
                "socket timeout, so a Redis that stops answering would hold "
                "every request until the operating system gives up.",
                hint='Set OPTIONS {"SOCKET_TIMEOUT": 0.25, '
                '"SOCKET_CONNECT_TIMEOUT": 0.25} (django-redis) or '
                '{"socket_timeout": 0.25, "socket_connect_timeout": 0.25} '
                "(Django's RedisCache).",
                id="whos_online.W003",
            )
        ]
    return []


def check_guard(**kwargs: Any) -> list[CheckMessage]:
    config = get_config()  # valid values (E007)
    guard, window = config.guard_seconds, config.window
    if guard >= window:
        return [
            Error(
                f"WHOS_ONLINE_GUARD_SECONDS ({guard}) must be shorter than "
                f"WHOS_ONLINE_WINDOW ({window}), or visitors who are still "
                "browsing drop out of the list.",
                hint="The defaults are 300 and 900 seconds.",
                id="whos_online.E006",
            )
        ]
    return []


def check_statuses(**kwargs: Any) -> list[CheckMessage]:
    config = get_config()
    away, window, guard = config.away_after, config.window, config.guard_seconds
    messages: list[CheckMessage] = []
    if away >= window:
        messages.append(
            Error(
                f"WHOS_ONLINE_AWAY_AFTER ({away}) must be shorter than "
                f"WHOS_ONLINE_WINDOW ({window}), or nobody is ever shown as away.",
                id="whos_online.E008",
            )
        )
    if away < guard:
        messages.append(
            Warning(
                f"WHOS_ONLINE_AWAY_AFTER ({away}) is shorter than "
                f"WHOS_ONLINE_GUARD_SECONDS ({guard}): users still browsing "
                "show as away until their guard runs out.",
                hint="Make AWAY_AFTER at least GUARD_SECONDS, or use the heartbeat.",
                id="whos_online.W001",
            )
        )
    return messages


def check_imports(**kwargs: Any) -> list[CheckMessage]:
    """The dotted paths in settings name functions that import."""
    config = get_config()
    messages: list[CheckMessage] = []
    for name, expected, check_id in (
        ("IS_HIDDEN", "a function f(user) -> bool", "whos_online.E009"),
        (
            "CAN_SEE",
            "a function can_see(viewer, users) -> the users viewer may see",
            "whos_online.E012",
        ),
        (
            "CONNECTION_FACTORY",
            "a function returning a Redis client",
            "whos_online.E010",
        ),
    ):
        path: str | None = getattr(config, name.lower())
        if path is None:
            continue
        try:
            found = import_string(path)
        except ImportError as exc:
            found, reason = None, str(exc)
        else:
            reason = "it is not callable"
        if not callable(found):
            messages.append(
                Error(
                    f"WHOS_ONLINE_{name} names {path!r}, which cannot be used: "
                    f"{reason}.",
                    hint=f"Name {expected}.",
                    id=check_id,
                )
            )
    return messages


def check_settings(**kwargs: Any) -> list[CheckMessage]:
    return [
        Error(
            f"WHOS_ONLINE_{name} must be {expected}; it is {value!r}.",
            id="whos_online.E007",
        )
        for name, value, expected in invalid_settings()
    ]


# Settings the app no longer has, and why.
RETIRED = {
    "WHOS_ONLINE_MAX_ROOMS": (
        "Rooms are no longer counted site-wide but per member: a user holds places "
        "from 5 devices and a guest from one, each in at most 10 rooms, and a "
        "member's tabs at most 20 rooms (docs/data-model.md)."
    ),
}


def check_setting_names(**kwargs: Any) -> list[CheckMessage]:
    """A ``WHOS_ONLINE_`` setting the app does not have is a typo: its
    value is never read."""
    known = [f"WHOS_ONLINE_{name}" for name in SETTING_RULES]
    messages: list[CheckMessage] = []
    for name in sorted(dir(settings)):
        if not name.startswith("WHOS_ONLINE_") or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        guess = (
            f"Did you mean {close[0]}?"
            if close
            else "The settings are listed in the docs (docs/settings.md)."
        )
        messages.append(
            Warning(
                f"{name} is not a setting of the app, so it does nothing.",
                hint=RETIRED.get(name, guess),
                id="whos_online.W005",
            )
        )
    return messages


def check_admin_editing(**kwargs: Any) -> list[CheckMessage]:
    """``WHOS_ONLINE_ADMIN_EDITING`` is deprecated: it changes no ModelAdmin
    any more (it ran the admin's autodiscovery from ``ready()`` and changed
    the class of ModelAdmins already registered). A site that sets it is
    told what does the same now."""
    if not get_config().admin_editing:
        return []
    hint = (
        "Give the admin site who else is editing instead: name "
        "whos_online.admin_editing.EditingAdminSite as your admin app config's "
        "default_site (or add ConcurrentEditingSiteMixin to your own site), "
        "or put ConcurrentEditingMixin first among a ModelAdmin's bases; "
        "then leave the setting out. See docs/admin-editing.md."
        if apps.is_installed("django.contrib.admin")
        else "django.contrib.admin is not in INSTALLED_APPS, so there is no "
        "change form to show who else is editing: leave the setting out."
    )
    return [
        Warning(
            "WHOS_ONLINE_ADMIN_EDITING is deprecated and no longer gives any "
            "ModelAdmin who else is editing.",
            hint=hint,
            id="whos_online.W008",
        )
    ]


def check_migrations(
    databases: Iterable[str] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """The app's migrations are applied (``check --database``): without its
    table, users are counted but listed nowhere, as if they hid."""
    from django.db.migrations.executor import MigrationExecutor

    messages: list[CheckMessage] = []
    for alias in databases or ():
        if not router.allow_migrate(alias, "whos_online"):
            continue
        executor = MigrationExecutor(connections[alias])
        ours = [
            node
            for node in executor.loader.graph.leaf_nodes()
            if node[0] == "whos_online"
        ]
        unapplied = [
            migration
            for migration, _ in executor.migration_plan(ours)
            if migration.app_label == "whos_online"
        ]
        if unapplied:
            messages.append(
                Warning(
                    f"The database {alias!r} lacks {len(unapplied)} migration(s) "
                    "of whos_online, so users' choices to appear offline cannot "
                    "be read and no user is listed as online.",
                    hint="Run `manage.py migrate whos_online`.",
                    id="whos_online.W004",
                )
            )
    return messages
