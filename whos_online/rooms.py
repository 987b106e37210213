"""Presence in a named room, for "who's viewing this thread".

A page is in a room when its view says so (``@records_room("thread:{pk}")``
or ``RoomMixin`` and ``room_name``, formatted with the URL's keyword
arguments), when ``WHOS_ONLINE_ROOMS`` names one for its URL name (for views
the site does not own), or when its template names a room by a model
instance (``{% whos_online room=topic %}``: ``"forum.topic:42"``). One
function, :func:`rooms_of_page`, says which rooms a page is in, for the
record and for the widget alike.

The visitor is recorded in those rooms after the view, and only when it
answered 2xx: requests for threads that do not exist never fill the rooms'
index. The page's own widget of such a room already counts and lists its
reader, who is about to be recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from contextlib import suppress
from typing import Any, NamedTuple, TypeVar

from django.db.models import Model
from django.http import HttpRequest, HttpResponseBase
from django.urls import ResolverMatch

from whos_online import guard, locations, page
from whos_online.conf import get_config
from whos_online.locations import marked
from whos_online.page import Page, visit_of
from whos_online.state import Throttle
from whos_online.store import Store, get_store, is_room_name
from whos_online.visitors import Visit, Visitor

View = TypeVar("View", bound=Callable[..., Any])

TAB_ID = re.compile(r"[A-Za-z0-9_\-]{8,64}")
# The attribute a view's room name is kept in, as @location keeps its label.
ATTRIBUTE = "whos_online_room"
NO_ROOMS: frozenset[str] = frozenset()


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


def room_name(room: object, kwargs: Mapping[str, Any] | None = None) -> str | None:
    """The name of a room given as a name (formatted with ``kwargs``) or as a
    model instance (``"app_label.model:pk"``); ``None``, logged, when it is
    not a valid room name."""
    if isinstance(room, Model):
        name = f"{room._meta.label_lower}:{room.pk}"
    else:
        name = str(room)
        with suppress(KeyError, IndexError, ValueError, AttributeError, TypeError):
            name = name.format(**(kwargs or {}))
    return None if refuse_bad_room(name) else name


def page_room(request: HttpRequest) -> str | None:
    """The room the requested page is in by its view or its URL name."""
    return room_of_path(request)[0]


class PageMarks(NamedTuple):
    """What a guard is compared with on a page of a path: the room the page
    is in by its view or URL name, that room's :func:`rooms_mark` (``""``:
    none), and the :func:`~whos_online.guard.mark` of its location label
    (``""``: none)."""

    room: str | None
    rooms: str
    where: str


NO_MARKS = PageMarks(None, "", "")


def room_of_path(
    request: HttpRequest, store: Store | None = None
) -> tuple[str | None, str]:
    """:func:`page_room` and its :func:`rooms_mark`."""
    marks = page_marks(request, store or get_store())
    return marks.room, marks.rooms


def page_marks(request: HttpRequest, store: Store) -> PageMarks:
    """The :class:`PageMarks` of the page Django resolved the request to,
    kept by the process for each path of bounded length: every guarded page
    view asks, and its path was resolved once already. A page answered
    before it was resolved (by a cache's middleware) is in no room, and its
    location is looked up."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        label = locations.label_of(request, store.state.locations)
        return NO_MARKS._replace(where=guard.mark(label)) if label else NO_MARKS
    path = request.path_info
    if len(path) > locations.MAX_PATH_LENGTH:
        return marks_of(match, store)
    memo = store.state.pages
    urlconf = getattr(request, "urlconf", None)
    key = path if urlconf is None else (urlconf, path)
    found: PageMarks | None = memo.get(key)
    return memo.put(key, marks_of(match, store)) if found is None else found


def marks_of(match: ResolverMatch, store: Store) -> PageMarks:
    template = room_template(match, store)
    room = None if template is None else room_name(template, match.kwargs)
    label = locations.label_of_match(match)
    return PageMarks(
        room,
        "" if room is None else rooms_mark({room}),
        guard.mark(label) if label else "",
    )


def room_template(match: ResolverMatch, store: Store) -> str | None:
    """The room name, not yet formatted, that the page of ``match`` is in
    by its view (``@records_room``, ``RoomMixin``) or by its URL name
    (``WHOS_ONLINE_ROOMS``); ``None`` when it is in none."""
    template = getattr(match.func, ATTRIBUTE, None)
    if template is None:
        rooms = store.config.rooms
        template = rooms.get(match.view_name) if rooms else None
    return template


def room_at(match: ResolverMatch) -> str | None:
    """The room of the page a resolved URL leads to, formatted with its
    keyword arguments (any page, not the request's: a link on it)."""
    template = room_template(match, get_store())
    return None if template is None else room_name(template, match.kwargs)


def join_named_room(request: HttpRequest, room: str) -> None:
    """A template named ``room`` by a model instance: the page is in it."""
    made = page.of(request)
    made.named_rooms = made.named_rooms | {room}


def rooms_of_page(request: HttpRequest) -> AbstractSet[str]:
    """Every room the page is in, so far: the record after the view and the
    page's widgets both ask this."""
    made = page.made_for(request)
    named: AbstractSet[str] = NO_ROOMS if made is None else made.named_rooms
    room = page_room(request)
    return named if room is None else named | {room}


def rooms_to_enter(made: Page, response: HttpResponseBase) -> AbstractSet[str] | None:
    """After the view: the rooms a page a browser opened (answered 2xx)
    puts its device in (none: it leaves those of its page before), or
    ``None`` when nothing is to be written: their guard holds and says they
    were recorded in these very rooms lately (a guarded page of the same
    rooms costs nothing, and so does a page in no room after one in no
    room). Reads nothing but the request and what its cookies said, so the
    middleware asks it on every request before it hands anything to a
    thread."""
    # Before anything is kept of the path: a page that does not exist costs
    # nobody else anything.
    if not 200 <= response.status_code < 300:
        return None
    request = made.request
    _, mark = room_of_path(request, made.store)
    if made.named_rooms:  # rooms named by the templates too
        mark = rooms_mark(rooms_of_page(request))
    before = "" if made.guard is None else made.guard.rooms
    if mark == before and (made.guarded or not mark):
        return None  # the guarded path: nothing else is read
    if not is_page_opened(request, response):
        return None
    return rooms_of_page(request)


def record_page_rooms(
    request: HttpRequest, response: HttpResponseBase, rooms: AbstractSet[str]
) -> None:
    """The device is in ``rooms`` now (:func:`rooms_to_enter`), and its
    guard says so: one round trip."""
    enter_rooms(request, rooms)
    note_rooms(request, rooms, response)


def is_page_opened(request: HttpRequest, response: HttpResponseBase) -> bool:
    """Whether a browser opened this page (a navigation), rather than a
    script fetching something (the widget's refresh, an API): by the
    ``Sec-Fetch-*`` headers browsers send, else a GET answered with HTML."""
    meta = request.META
    mode = meta.get("HTTP_SEC_FETCH_MODE")
    if mode is not None:
        return mode == "navigate" and meta.get("HTTP_SEC_FETCH_DEST") in (
            None,
            "document",
        )
    content_type = response.get("Content-Type") or ""
    return request.method == "GET" and content_type.startswith("text/html")


def enter_rooms(request: HttpRequest, rooms: AbstractSet[str]) -> None:
    """The request's device is now in ``rooms`` (valid names; none: in no
    room): one round trip; a failure is logged, never raised, and costs
    nobody else anything. Crawlers are counted on the site, never in
    rooms: a crawler fetching every thread would fill the rooms people
    read. :func:`note_rooms` then tells the guard."""
    visit = visit_of(request)
    visitor = visit.visitor
    if visitor is not None and visitor.is_person:
        store = visit.store
        store.enter_rooms(visitor.kind, visitor.member, visit.device, sorted(rooms))


def note_rooms(
    request: HttpRequest, rooms: AbstractSet[str], response: HttpResponseBase
) -> None:
    """The device entered ``rooms``: its guard says so from now on."""
    visit_of(request).note_rooms(rooms_mark(rooms) if rooms else "", response)


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


def rooms_mark(rooms: AbstractSet[str]) -> str:
    """What a guard keeps of the rooms a visitor was recorded in."""
    return guard.mark("\n".join(sorted(rooms)) if len(rooms) > 1 else min(rooms))


def refuse_bad_room(room: object) -> bool:
    """Whether ``room`` is not a room name, in which case it is logged."""
    if is_room_name(room):
        return False
    get_store().state.refused.warning(
        "room", "Who's online ignored an invalid room name %r.", str(room)[:120]
    )
    return True
