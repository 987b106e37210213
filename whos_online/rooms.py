"""Presence in a named room, for "who's viewing this thread".

A page is in a room when its view says so (``@records_room("thread:{pk}")``
or ``RoomMixin`` and ``room_name``, formatted with the URL's keyword
arguments), when ``WHOS_ONLINE_ROOMS`` names one for its URL name (for views
the site does not own), or when its template names a room by a model
instance (``{% whos_online room=topic %}``: ``"forum.topic:42"``). One
function, :func:`~whos_online.page.rooms_of_page`, says which rooms a page
is in, for the record and for the widget alike.

The visitor is recorded in those rooms after the view, and only when it
answered 2xx (:meth:`~whos_online.page.Page.writes_after`): requests for
threads that do not exist never fill the rooms' index. The page's own
widget of such a room already counts and lists its reader, who is about to
be recorded. A tab whose page runs the room script keeps itself in its
rooms while it is open (:func:`keep_tab`, :func:`leave_tab`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar

from django.http import HttpRequest

from whos_online import page
from whos_online.conf import get_config
from whos_online.locations import marked
from whos_online.marks import ATTRIBUTE
from whos_online.page import visit_of
from whos_online.state import Throttle
from whos_online.visitors import Visit, Visitor

View = TypeVar("View", bound=Callable[..., Any])

TAB_ID = re.compile(r"[A-Za-z0-9_\-]{8,64}")


def records_room(name: str) -> Callable[[View], View]:
    """Put the decorated view's pages in the room ``name``, formatted with
    the view's keyword arguments (``"thread:{pk}"``)."""

    def decorator(view: View) -> View:
        return marked(view, ATTRIBUTE, name)

    return decorator


class RoomMixin:
    """For class-based views: put the view's pages in ``room_name``,
    formatted with the view's keyword arguments."""

    room_name: str = ""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        view = super().as_view(**initkwargs)  # type: ignore[misc]
        setattr(view, ATTRIBUTE, cls.room_name)
        return view


def join_named_room(request: HttpRequest, room: str) -> None:
    """A template named ``room`` by a model instance: the page is in it."""
    made = page.of(request)
    made.named_rooms = made.named_rooms | {room}


def tab_id(value: object) -> str | None:
    """``value`` if it is a tab id a room page's script makes (8 to 64 of
    ``A-Z a-z 0-9 _ -``), else ``None``: a visitor's input, kept bounded."""
    if isinstance(value, str) and TAB_ID.fullmatch(value):
        return value
    return None


# A browser runs a background tab's timers about once a minute: a tab's
# pings come at most this many seconds apart, visible or not.
PINGS_APART = 60
# Seconds a tab's place keeps in hand for a ping that comes late.
PING_MARGIN = 15


def tab_renewal_seconds() -> float:
    """How long after it renewed a tab's place a process lets the tab's
    pings write nothing: a renewal lasts ``WHOS_ONLINE_TAB_TIMEOUT``, so the
    first ping after this renews it in time (150 s, pings every 45 or 60
    s: 75 s, about every other ping). At least a third of the pings'
    period."""
    config = get_config()
    apart = max(config.tab_seconds, PINGS_APART)
    return max(config.tab_timeout - apart - PING_MARGIN, config.tab_seconds / 3)


def keep_tab(
    request: HttpRequest,
    tab: str,
    rooms: AbstractSet[str],
    seconds: int,
    *,
    every: float = 0,
) -> bool:
    """The request's tab ``tab`` (a valid id) shows a page in exactly
    ``rooms`` for ``seconds`` more (a tab in no room leaves them): one round
    trip, at most once per ``every`` seconds a tab and process. Whether it
    was kept."""
    visit = visit_of(request)
    visitor = _tab_holder(visit, visit.store.state.tabs, tab, every)
    if visitor is None:
        return False
    kept = visit.store.keep_tab(
        visitor.kind, visitor.member, visit.device, tab, sorted(rooms), seconds
    )
    return kept is not None


def leave_tab(request: HttpRequest, tab: str, *, every: float = 0) -> bool:
    """The request's tab ``tab`` closed: it leaves its rooms at once (one
    round trip, at most once per ``every`` seconds a tab and process).
    Whether it left."""
    visit = visit_of(request)
    state = visit.store.state
    visitor = _tab_holder(visit, state.tabs_closed, tab, every)
    if visitor is None:
        return False
    # A page back from the back-forward cache says so with the same tab.
    state.tabs.forget(_throttled_as(visitor, tab))
    return visit.store.leave_tab(visitor.kind, visitor.member, tab)


def _tab_holder(
    visit: Visit, throttle: Throttle, tab: str, every: float
) -> Visitor | None:
    """Who holds the tab, if a person, and if ``throttle`` lets them
    through (``every`` seconds a tab and process; 0: always)."""
    visitor = visit.visitor
    if visitor is None or not visitor.is_person:
        return None
    if every and not throttle.allows(_throttled_as(visitor, tab), every):
        return None
    return visitor


def _throttled_as(visitor: Visitor, tab: str) -> str:
    return f"{visitor.member} {tab}"
