"""System checks of what the app's settings name in the URLconf: its own
URLs included, and the URL names ``WHOS_ONLINE_LOCATIONS``,
``WHOS_ONLINE_ROOMS`` and ``WHOS_ONLINE_DECORATE`` give.

Every ID is documented in docs/checks.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import FieldDoesNotExist
from django.urls import NoReverseMatch, get_resolver, reverse

from whos_online.conf import get_config
from whos_online.rules import profile_urls, room_pattern_problem


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
