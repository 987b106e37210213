"""System checks for the mistakes a site can make setting the app up.

Every ID is documented in docs/checks.md.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.cache import InvalidCacheBackendError, caches
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import FieldDoesNotExist
from django.db import connections, router
from django.urls import NoReverseMatch, get_resolver, reverse
from django.utils.module_loading import import_string

from whos_online.conf import get_config, invalid_settings
from whos_online.connection import has_read_timeout
from whos_online.rules import (
    SETTING_RULES,
    is_redis_backend,
    profile_urls,
    room_pattern_problem,
)

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


def check_urls(**kwargs: Any) -> list[CheckMessage]:
    try:
        reverse("whos_online:widget")
    except NoReverseMatch:
        return [
            Warning(
                "whos_online.urls is not included in the URLconf, so "
                "{% whos_online refresh=N %}, {% whos_online_heartbeat %}, "
                "{% whos_online_beacon %} and the JSON endpoint do nothing.",
                hint='Add path("whos-online/", include("whos_online.urls")) '
                "to your urlpatterns.",
                id="whos_online.W002",
            )
        ]
    return []


def check_settings(**kwargs: Any) -> list[CheckMessage]:
    return [
        Error(
            f"WHOS_ONLINE_{name} must be {expected}; it is {value!r}.",
            id="whos_online.E007",
        )
        for name, value, expected in invalid_settings()
    ]


def check_setting_names(**kwargs: Any) -> list[CheckMessage]:
    """A ``WHOS_ONLINE_`` setting the app does not have is a typo: its
    value is never read."""
    known = [f"WHOS_ONLINE_{name}" for name in SETTING_RULES]
    messages: list[CheckMessage] = []
    for name in sorted(dir(settings)):
        if not name.startswith("WHOS_ONLINE_") or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        messages.append(
            Warning(
                f"{name} is not a setting of the app, so it does nothing.",
                hint=f"Did you mean {close[0]}?"
                if close
                else "The settings are listed in the docs (docs/settings.md).",
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


def check_locations(**kwargs: Any) -> list[CheckMessage]:
    """Each key of ``WHOS_ONLINE_LOCATIONS`` names a URL pattern."""
    return _keys_are_url_names(
        "WHOS_ONLINE_LOCATIONS",
        get_config().locations,
        "so no page gets its label",
        "forum:thread",
        "whos_online.W006",
    )


def check_rooms(**kwargs: Any) -> list[CheckMessage]:
    """Each key of ``WHOS_ONLINE_ROOMS`` names a URL pattern, and each room
    name can be formatted with its keyword arguments."""
    rooms = get_config().rooms
    messages = _keys_are_url_names(
        "WHOS_ONLINE_ROOMS",
        rooms,
        "so no page is in its room",
        "forum:topic",
        "whos_online.W007",
    )
    for url_name, pattern in rooms.items():
        problem = room_pattern_problem(pattern)
        if problem is not None:
            messages.append(
                Error(
                    f"WHOS_ONLINE_ROOMS gives {url_name!r} the room {pattern!r}, "
                    f"which cannot be formatted: {problem}.",
                    hint='Name the URL\'s keyword arguments in braces: "topic:{pk}".',
                    id="whos_online.E011",
                )
            )
    return messages


def check_decorate(**kwargs: Any) -> list[CheckMessage]:
    """Each profile page of ``WHOS_ONLINE_DECORATE`` is a URL name whose
    URLs have the keyword argument named for it, and that argument is the
    user's primary key or a unique field of the user model."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    messages: list[CheckMessage] = []
    for url_name, argument in profile_urls(get_config().decorate).items():
        arguments = _url_arguments(url_name)
        if arguments is None or argument not in arguments:
            what = (
                "is not the name of a URL pattern"
                if arguments is None
                else f"has no URL with the keyword argument {argument!r}"
            )
            messages.append(
                Warning(
                    f"WHOS_ONLINE_DECORATE names the profile page {url_name!r}, "
                    f"which {what}, so links to it get no badge.",
                    hint="Name the URL as reverse() would, with the keyword "
                    'argument holding the user: {"profiles": {"app:profile": '
                    '"pk"}} or {"profiles": {"app:profile": "username"}}.',
                    id="whos_online.W009",
                )
            )
        if not _is_unique_user_field(model, argument):
            messages.append(
                Error(
                    f"WHOS_ONLINE_DECORATE finds the user of {url_name!r} by "
                    f'{argument!r}, which is neither "pk" nor a unique field '
                    f"of {model._meta.label}, so its links get no badge.",
                    hint="Name the URL's keyword argument that holds the "
                    'user\'s primary key ("pk") or username, and give the URL '
                    "that name.",
                    id="whos_online.E013",
                )
            )
    return messages


def _is_unique_user_field(model: Any, name: str) -> bool:
    if name == "pk":
        return True
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return False
    return bool(getattr(field, "unique", False))


def _keys_are_url_names(
    setting: str, found: Mapping[str, object], outcome: str, example: str, check_id: str
) -> list[CheckMessage]:
    return [
        Warning(
            f"{setting} has {name!r}, which is not the name of a URL pattern, "
            f"{outcome}.",
            hint=f'Use the name given to path(), with its namespace: "{example}".',
            id=check_id,
        )
        for name in found
        if not _is_url_name(name)
    ]


def _is_url_name(name: str) -> bool:
    return _url_arguments(name) is not None


def _url_arguments(name: str) -> set[str] | None:
    """The keyword arguments of the URLs named ``name`` (with its
    namespaces), or ``None`` when no URL has that name."""
    resolver = get_resolver()
    *namespaces, url_name = name.split(":")
    for namespace in namespaces:
        if namespace not in resolver.namespace_dict:
            return None
        resolver = resolver.namespace_dict[namespace][1]
    if url_name not in resolver.reverse_dict:
        return None
    arguments: set[str] = set()
    for possibilities, _, defaults, _ in resolver.reverse_dict.getlist(url_name):
        for _, params in possibilities:
            arguments.update(params)
        arguments.update(defaults)
    return arguments


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
