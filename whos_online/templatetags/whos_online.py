"""``{% load whos_online %}``: the widget, counts, statuses, the heartbeat
and the beacon.

Every tag and filter is a thin wrapper over :mod:`whos_online.roster`; each
costs at most one Redis round trip and never raises when Redis is down.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from django import template
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Model
from django.http import HttpRequest
from django.template.context import Context
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from whos_online import links, page
from whos_online.conf import get_config
from whos_online.decorate import MOST_PATHS
from whos_online.marks import page_room as page_room_of
from whos_online.marks import room_name
from whos_online.page import rooms_of_page
from whos_online.rendered import (
    Count,
    box_html,
    count_text,
    decorate_html,
    heartbeat_html,
    is_approximate,
    minutes_since,
    people_html,
    stylesheet_html,
    tally_html,
    visibility_html,
    widget_html,
    window_html,
)
from whos_online.rooms import join_named_room
from whos_online.roster import Roster, online_roster
from whos_online.roster import room_counts as roster_room_counts
from whos_online.statuses import (
    UserPresence,
    badge_html,
    badge_of,
    presence_of,
    seen_of,
)
from whos_online.store import Counts
from whos_online.tokens import room_token as make_room_token

register = template.Library()

COUNTS = ("people", "total", "users", "hidden", "guests", "bots")
REFRESH_JS = "whos_online/refresh.js"


register.filter("count_text", count_text)
register.filter("minutes_since", minutes_since)
register.filter("people_html", people_html)
register.filter("tally_html", tally_html)
register.filter("window_html", window_html)


@register.simple_tag(takes_context=True, name="whos_online")
def whos_online_box(
    context: Context,
    limit: int | str | None = None,
    room: str | Model | None = None,
    refresh: int | str = 0,
    heading: int | str = 2,
) -> SafeString:
    return box_html(whos_online(context, limit, room, refresh, heading))


def whos_online(
    context: Context,
    limit: int | str | None = None,
    room: str | Model | None = None,
    refresh: int | str = 0,
    heading: int | str = 2,
) -> dict[str, Any]:
    """The "Who's online" widget.

    ``{% whos_online %}`` lists up to ``WHOS_ONLINE_MAX_NAMES`` users;
    ``limit=10`` lists up to ten; ``room="thread:42"`` lists that room;
    ``room=topic`` (a model instance) lists the room ``"forum.topic:42"``
    and puts the page in it, so its reader is recorded there after a 2xx;
    ``refresh=30`` refreshes it in place every 30 seconds with a small
    script (the static widget stays for browsers without JavaScript), and
    with it every ``{% online_count %}`` on the page. Its title is an
    ``<h2>``; ``heading=3`` makes it an ``<h3>``, ``heading=0`` leaves it
    out where the page already has a heading for the widget. Numbers may be
    written as text (``limit="10"``); one that is not a whole number is
    taken as the default.
    """
    seconds = max(_whole(refresh, 0) or 0, 0)
    level = _whole(heading, 2)
    viewer = _viewer(context)
    name = _room(context, room)
    roster = _roster(context, _whole(limit, None), room, name)
    refreshed = bool(seconds) and roster.room == name
    # One token of the room for the viewer serves the refresh, the stream and
    # the tab's place alike.
    token = make_room_token(name, viewer) if refreshed and name else None
    return {
        "roster": roster,
        "refresh_seconds": seconds,
        "refresh_url": _endpoint_of(token) if refreshed else None,
        "refresh_script": links.script(REFRESH_JS) if refreshed else None,
        "stream_url": (
            _endpoint_of(token, "whos_online:stream")
            if refreshed and _streams(context)
            else None
        ),
        "here": _here(context, name, token),
        # Rendered where the template shows it (a site's copy may not).
        "widget": functools.partial(widget_html, roster, context.get("request")),
        "request": context.get("request"),
        "heading": level if level in range(1, 7) else 0,
        # What the beacon's fresh widgets are keyed by; None for a bad room.
        "room_key": "" if room is None else name,
    }


@register.simple_tag(takes_context=True)
def online_count(
    context: Context, kind: str = "people", room: str | Model | None = None
) -> int:
    """``{% online_count %}``: how many people are online (bots not counted);
    ``{% online_count "total" %}`` counts bots too; ``"users"``, ``"hidden"``,
    ``"guests"`` or ``"bots"`` count one kind. A site-wide count is kept
    current by a refreshing widget on the same page."""
    if kind not in COUNTS:
        raise template.TemplateSyntaxError(
            f"online_count counts one of {list(COUNTS)}, not {kind!r}."
        )
    counts = _roster(context, 0, room, _room(context, room)).counts
    value: int = getattr(counts, kind)
    if room is not None:
        return value
    return Count(value, kind, is_approximate(counts, kind))


@register.simple_tag(takes_context=True)
def page_room(context: Context) -> str | None:
    """``{% page_room as room %}``: the room this page is in by its view
    (``@records_room``, ``RoomMixin``) or by ``WHOS_ONLINE_ROOMS``, the one
    its reader is recorded in; ``None`` when it is in none."""
    request = context.get("request")
    return page_room_of(request) if isinstance(request, HttpRequest) else None


@register.simple_tag(takes_context=True)
def presence_list(context: Context, users: Any) -> list[UserPresence]:
    """``{% presence_list members as rows %}``: each user's ``status``
    (online, away, offline, or unknown where the viewer may not learn it)
    and ``last_seen``, in one round trip for all."""
    request = context.get("request")
    if isinstance(request, HttpRequest):
        return presence_of(users, request=request)
    return presence_of(users, viewer=_viewer(context))


@register.simple_tag(takes_context=True)
def room_counts(context: Context, items: Any) -> list[tuple[Any, Counts]]:
    """``{% room_counts topics as viewing %}``: each of ``items`` (model
    instances or room names: a listing's rows) with how many are in its
    room, ``{% for topic, here in viewing %}{{ here.people }}``, as this
    viewer may learn it: one round trip for the whole listing."""
    request = context.get("request")
    if isinstance(request, HttpRequest):
        return roster_room_counts(items, request=request)
    return roster_room_counts(items, viewer=_viewer(context))


@register.simple_tag
def online_badge(user: Any) -> SafeString:
    """``{% online_badge user %}``: a dot for the user's status, styled by
    the shipped stylesheet, with the status in the page's language for
    screen readers and as its tooltip; all the badges of a page cost one
    round trip together. Nothing for no user (a deleted author's ``None``)."""
    if not _is_user(user):
        return SafeString("")
    return badge_html(badge_of(user).status)


@register.filter
def online_status(user: Any) -> str:
    """``{{ user|online_status }}``: ``online``, ``away`` or ``offline``, or
    ``unknown`` where the viewer may not learn it; all the badges of a page
    cost one round trip together; ``""`` for no user."""
    return badge_of(user).status if _is_user(user) else ""


@register.filter
def last_seen_label(user: Any) -> str:
    """``{{ user|last_seen_label }}``: how long ago the user was last seen,
    roughly ("last seen within a week"), where the viewer may learn only
    that; ``""`` where they may learn the time (``|last_seen``) or nothing."""
    return seen_of(user).last_seen_label if _is_user(user) else ""


@register.filter
def last_seen(user: Any) -> datetime | None:
    """``{{ user|last_seen|timesince }}``: when the user was last seen,
    within ``WHOS_ONLINE_LAST_SEEN_DAYS``, where the viewer may learn the
    time (else see ``|last_seen_label``); ``None`` otherwise, or for no
    user. A user not online costs a round trip of their own: for many, use
    ``{% presence_list %}``."""
    return seen_of(user).last_seen if _is_user(user) else None


@register.simple_tag(takes_context=True, name="whos_online_heartbeat")
def whos_online_heartbeat_script(context: Context) -> SafeString:
    return heartbeat_html(whos_online_heartbeat(context))


def whos_online_heartbeat(context: Context) -> dict[str, Any]:
    """Keeps a logged-in user's status exact while the page is visible."""
    viewer = _viewer(context)
    url = None
    if viewer is not None and viewer.is_authenticated:
        url = links.endpoint("whos_online:heartbeat")
    return {
        "heartbeat_url": url,
        "heartbeat_script": url and links.script("whos_online/heartbeat.js"),
        "heartbeat_seconds": get_config().heartbeat_seconds,
        # Asked only where the script is shown: a lazy token asked sets the
        # CSRF cookie.
        "csrf_token": context.get("csrf_token") if url else None,
    }


@register.inclusion_tag("whos_online/beacon.html", takes_context=True)
def whos_online_beacon(
    context: Context, room: str | Model | None = None
) -> dict[str, Any]:
    """For pages served from a cache or a CDN, which never reach the
    middleware: a small script tells the server the visitor is here, at most
    once per guard period (and names ``room``, when given)."""
    name = None if room is None else room_name(room)
    token = None if name is None else make_room_token(name, _viewer(context))
    url = _endpoint_of(token, "whos_online:beacon")
    return {
        "beacon_url": url,
        "beacon_seconds": get_config().guard_seconds,
        "refresh_script": url and links.script(REFRESH_JS),
        "beacon_script": url and links.script("whos_online/beacon.js"),
    }


@register.simple_tag(name="whos_online_decorate")
def whos_online_decorate_script(refresh: int | str = 0) -> SafeString:
    return decorate_html(whos_online_decorate(refresh))


def whos_online_decorate(refresh: int | str = 0) -> dict[str, Any]:
    """``{% whos_online_decorate %}``, once in the site's base template: a
    small script that puts the online badge beside every link to a user's
    profile (``WHOS_ONLINE_DECORATE``) and "N viewing" beside every link to
    a page in a room, and in elements marked with ``{% room_token %}``, on
    pages whose templates the site does not own; one request for the whole
    page. ``refresh=30`` asks again every 30 seconds; without it, as often
    as a refreshing widget on the page."""
    url = links.endpoint("whos_online:decorate")
    return {
        "decorate_url": url,
        "decorate_script": url and links.script("whos_online/decorate.js"),
        "refresh_seconds": max(_whole(refresh, 0) or 0, 0),
        "most_paths": MOST_PATHS,
    }


@register.simple_tag(takes_context=True)
def room_token(context: Context, room: str | Model) -> str:
    """``<span data-whos-online-viewing="{% room_token topic %}"></span>``:
    the room of ``room`` (a name, or a model instance) in a token only this
    viewer can use, for ``{% whos_online_decorate %}`` to fill the element
    with "N viewing"; ``""`` for a room name that is not valid."""
    name = room_name(room)
    return "" if name is None else make_room_token(name, _viewer(context))


@register.simple_tag(takes_context=True, name="whos_online_visibility")
def whos_online_visibility_forms(context: Context) -> SafeString:
    return visibility_html(whos_online_visibility(context))


def whos_online_visibility(context: Context) -> dict[str, Any]:
    """For a logged-in user: a button to appear offline, or online again,
    and one to hide when they were last seen, or show it again (each a POST
    with the CSRF token; one query for both current choices)."""
    viewer = _viewer(context)
    request = context.get("request")
    url = links.endpoint("whos_online:visibility")
    config = get_config()
    offers_invisible = config.allow_invisible
    offers_last_seen = config.last_seen_shown == "exact"
    if (
        url is None
        or not (offers_invisible or offers_last_seen)
        or not getattr(viewer, "is_authenticated", False)
        or not isinstance(request, HttpRequest)
    ):
        return {"visibility_url": None}
    chosen = page.of(request).gate.own_choices()
    return {
        "visibility_url": url,
        "offers_invisible": offers_invisible,
        "invisible": str(viewer.pk) in chosen.invisible,
        "offers_last_seen": offers_last_seen,
        "hides_last_seen": str(viewer.pk) in chosen.hide_last_seen,
        "next": getattr(request, "get_full_path", lambda: "")(),
        "csrf_token": context.get("csrf_token"),
    }


def _is_user(user: object) -> bool:
    """Whether a badge can be had: a user with a primary key (not ``None``,
    as a deleted author is, nor an anonymous user, nor a missing variable)."""
    return getattr(user, "pk", None) is not None


def _whole(value: object, default: int | None) -> int | None:
    """A tag's number argument as templates write it: ``10`` or ``"10"``;
    anything else is the ``default``."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return default


def _room(context: Context, room: object) -> str | None:
    """The name of the room a tag was given; a model instance also puts the
    page in its room."""
    if room is None:
        return None
    name = room_name(room)
    request = context.get("request")
    if isinstance(room, Model) and isinstance(request, HttpRequest) and name:
        join_named_room(request, name)
    return name


def _roster(
    context: Context, limit: int | None, room: object, name: str | None
) -> Roster:
    if room is not None and name is None:
        return Roster(window=get_config().window, room=None)
    request = context.get("request")
    return online_roster(
        limit,
        room=name,
        viewer=_viewer(context),
        request=request if isinstance(request, HttpRequest) else None,
    )


def _viewer(context: Context) -> Any:
    """Who the page is made for, as the request's one object says: nobody
    in particular on a page a cache may keep for others."""
    request = context.get("request")
    return page.of(request).viewer if isinstance(request, HttpRequest) else None


def _endpoint_of(token: str | None, view: str = "whos_online:widget") -> str | None:
    """The URL of ``view``, naming a room by its ``token``, if any."""
    url = links.endpoint(view)
    if url is None or token is None:
        return url
    return f"{url}?{urlencode({'room': token})}"


def _streams(context: Context) -> bool:
    """Whether the page is served under ASGI, where its widgets may stream
    (under WSGI a stream would hold a worker: the page polls)."""
    return isinstance(context.get("request"), ASGIRequest)


def _here(
    context: Context, room: str | None, token: str | None
) -> dict[str, Any] | None:
    """What the refresh script of a page in ``room`` needs to keep its tab
    there while it is open: the endpoint, the room's ``token``, how often."""
    request = context.get("request")
    if room is None or token is None or not isinstance(request, HttpRequest):
        return None
    if room not in rooms_of_page(request):
        return None
    url = links.endpoint("whos_online:here")
    if url is None:
        return None
    return {"url": url, "token": token, "seconds": get_config().tab_seconds}


@register.simple_tag
def whos_online_stylesheet() -> SafeString:
    """The ``<link>`` of the app's stylesheet, its URL worked out once."""
    return stylesheet_html(links.script("whos_online/whos_online.css"))
