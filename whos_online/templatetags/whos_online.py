"""``{% load whos_online %}``: the widget, counts, statuses and the heartbeat.

Every tag and filter is a thin wrapper over :mod:`whos_online.roster`; each
costs one Redis round trip and never raises when Redis is down.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.template.context import Context
from django.urls import NoReverseMatch, reverse
from django.utils.http import urlencode

from whos_online.conf import conf
from whos_online.rooms import room_token
from whos_online.roster import UserPresence, online_roster, presence_of

register = template.Library()

COUNTS = {"total", "users", "hidden", "guests", "bots"}


@register.inclusion_tag("whos_online/whos_online.html", takes_context=True)
def whos_online(
    context: Context,
    limit: int | None = None,
    room: str | None = None,
    refresh: int = 0,
) -> dict[str, Any]:
    """The "Who's online" widget.

    ``{% whos_online %}`` lists up to ``WHOS_ONLINE_MAX_NAMES`` users;
    ``limit=10`` lists up to ten; ``room="thread:42"`` lists that room;
    ``refresh=30`` refreshes it in place every 30 seconds with a small
    script (the static widget stays for browsers without JavaScript).
    """
    viewer = _viewer(context)
    roster = online_roster(limit, room=room, viewer=viewer)
    return {
        "roster": roster,
        "refresh_seconds": refresh if refresh and refresh > 0 else 0,
        "refresh_url": _refresh_url(room, viewer) if refresh else None,
        "request": context.get("request"),
    }


@register.simple_tag(takes_context=True)
def online_count(context: Context, kind: str = "total", room: str | None = None) -> int:
    """``{% online_count %}``, ``{% online_count "guests" %}``: how many are
    online (``total``, ``users``, ``hidden``, ``guests`` or ``bots``)."""
    if kind not in COUNTS:
        raise template.TemplateSyntaxError(
            f"online_count counts one of {sorted(COUNTS)}, not {kind!r}."
        )
    roster = online_roster(0, room=room, viewer=_viewer(context))
    return getattr(roster.counts, kind)  # type: ignore[no-any-return]


@register.simple_tag(takes_context=True)
def presence_list(context: Context, users: Any) -> list[UserPresence]:
    """``{% presence_list members as rows %}``: each user's ``status``
    (online, away, offline) and ``last_seen``, in one round trip for all."""
    return presence_of(users, viewer=_viewer(context))


@register.filter
def online_status(user: Any) -> str:
    """``{{ user|online_status }}``: ``online``, ``away`` or ``offline``."""
    return presence_of([user])[0].status


@register.filter
def last_seen(user: Any) -> datetime | None:
    """``{{ user|last_seen|timesince }}``: when the user was last seen."""
    return presence_of([user])[0].last_seen


@register.inclusion_tag("whos_online/heartbeat.html", takes_context=True)
def whos_online_heartbeat(context: Context) -> dict[str, Any]:
    """Keeps a logged-in user's status exact while the page is visible."""
    viewer = _viewer(context)
    url = None
    if viewer is not None and viewer.is_authenticated:
        url = _reverse("whos_online:heartbeat")
    return {
        "heartbeat_url": url,
        "heartbeat_seconds": conf.HEARTBEAT_SECONDS,
        "csrf_token": context.get("csrf_token"),
    }


def _viewer(context: Context) -> Any:
    request = context.get("request")
    return getattr(request, "user", None)


def _refresh_url(room: str | None, viewer: Any) -> str | None:
    url = _reverse("whos_online:widget")
    if url is None or room is None:
        return url
    return f"{url}?{urlencode({'room': room_token(room, viewer)})}"


def _reverse(name: str) -> str | None:
    """The URL, or ``None`` where the site has not included whos_online.urls."""
    try:
        return reverse(name)
    except NoReverseMatch:
        return None
