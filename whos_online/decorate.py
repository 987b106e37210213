"""Presence on pages whose templates the site does not own (a forum or a CMS
installed from PyPI): what ``{% whos_online_decorate %}``'s script asks.

The script (``static/whos_online/decorate.js``) sends, in one request, the
paths of the page's links and the room tokens of the elements the site
marks (``data-whos-online-viewing``). Each path is resolved here with
Django's resolver, so nothing a visitor sends names a user or a room beyond
what the site's URLs resolve to, or a token it issued to them:

- a link to a user's profile page (a URL name of
  ``WHOS_ONLINE_DECORATE["profiles"]``, the user found by the URL's keyword
  argument) gets the user's badge, as ``{% online_badge %}`` draws it;
- a link to a page in a room (by its view, or by ``WHOS_ONLINE_ROOMS``) and
  a marked element get "N viewing".

Statuses and counts come from :func:`whos_online.statuses.badge_of` and
:func:`whos_online.roster.room_counts` with the request, so the viewer's
gate decides what they learn, as on any page: one round trip for the
badges (the page's snapshot) and one for every room.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db.models import Q
from django.http import Http404, HttpRequest
from django.urls import ResolverMatch, get_script_prefix, resolve
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import ngettext

from whos_online.conf import get_config
from whos_online.marks import room_at
from whos_online.page import viewer_of
from whos_online.roster import room_counts
from whos_online.rules import profile_urls
from whos_online.statuses import badge_html, badge_of
from whos_online.store import Counts
from whos_online.tokens import room_from_token

# The most distinct paths one request asks about (the script sends the
# first ones of the page), and the longest path looked at.
MOST_PATHS = 200
LONGEST_PATH = 400
# The most marked elements' room tokens one request names.
MOST_ROOMS = 50


def decorations(
    request: HttpRequest, paths: Iterable[str], tokens: Iterable[str]
) -> dict[str, dict[str, str]]:
    """What the page's links and marks show, as the request's viewer may
    learn it: ``badges`` (path -> badge), ``viewing`` (path -> "N viewing")
    and ``rooms`` (token -> "N viewing"), each HTML, ``""`` for nothing."""
    resolved = _resolved(paths, getattr(request, "urlconf", None))
    users = _profile_users(resolved)
    in_rooms = {path: room_at(match) for path, match in resolved.items()}
    by_path = {path: room for path, room in in_rooms.items() if room is not None}
    by_token: dict[str, str] = {}
    for token in list(dict.fromkeys(tokens))[:MOST_ROOMS]:
        room = room_from_token(token, viewer_of(request))
        if room is not None:
            by_token[token] = room
    rooms = sorted({*by_path.values(), *by_token.values()})
    counts = dict(room_counts(rooms, request=request)) if rooms else {}
    return {
        "badges": {path: badge_html(badge_of(user).status) for path, user in users},
        "viewing": {path: viewing_html(counts[room]) for path, room in by_path.items()},
        "rooms": {
            token: viewing_html(counts[room]) for token, room in by_token.items()
        },
    }


def viewing_html(counts: Counts) -> SafeString:
    """ "N viewing" for a room's counts; nothing when nobody is in it."""
    people = counts.people
    if not people:
        return SafeString("")
    text = ngettext("%(count)s viewing", "%(count)s viewing", people)
    return format_html(
        '<span class="whos-online-viewing">{}</span>', text % {"count": people}
    )


def _resolved(paths: Iterable[str], urlconf: str | None) -> dict[str, ResolverMatch]:
    """The first :data:`MOST_PATHS` distinct paths that resolve to a page
    of the site, as Django resolves a request's path (the site's script
    prefix taken off, escapes decoded), each with its match."""
    prefix = get_script_prefix()
    found = {}
    for path in list(dict.fromkeys(paths))[:MOST_PATHS]:
        if len(path) > LONGEST_PATH or not path.startswith(prefix):
            continue
        path_info = "/" + unquote(path.removeprefix(prefix), errors="replace")
        try:
            found[path] = resolve(path_info, urlconf)
        except Http404:  # Resolver404: no page of the site
            continue
    return found


def _profile_users(resolved: Mapping[str, ResolverMatch]) -> list[tuple[str, Any]]:
    """The users whose profile pages the paths lead to, by path, read in one
    query; a path whose user does not exist is left out."""
    profiles = profile_urls(get_config().decorate)
    model = get_user_model()
    wanted: dict[str, tuple[str, object]] = {}
    for path, match in resolved.items():
        argument = profiles.get(match.view_name)
        if argument is None or argument not in match.kwargs:
            continue
        value = _field_value(model, argument, match.kwargs[argument])
        if value is not None:
            wanted[path] = (argument, value)
    if not wanted:
        return []
    by_field: dict[str, set[object]] = defaultdict(set)
    for argument, value in wanted.values():
        by_field[argument].add(value)
    query = Q()
    for argument, values in by_field.items():
        query |= Q(**{f"{argument}__in": values})
    found = {
        (argument, _value_of(user, argument)): user
        for user in model._default_manager.filter(query)
        for argument in by_field
    }
    return [(path, found[key]) for path, key in wanted.items() if key in found]


def _field_value(model: Any, argument: str, value: object) -> object | None:
    """``value`` as the user model's field ``argument`` (``pk``: the primary
    key) holds it, or ``None`` when it cannot be one (not a number for a
    number, out of the database's range): never a query that fails."""
    try:
        field = model._meta.pk if argument == "pk" else model._meta.get_field(argument)
    except FieldDoesNotExist:  # whos_online.E013 says so
        return None
    try:
        converted: object = field.to_python(value)
        field.run_validators(converted)
    except ValidationError:
        return None
    return converted


def _value_of(user: Any, argument: str) -> object:
    return user.pk if argument == "pk" else getattr(user, argument)
