"""What a page is by the view Django resolved it to: the room its view or
URL name puts it in, and the marks a guard keeps of that room and of the
page's location label, remembered by the process per path.

The guarded path compares these with the guard's, so it stays a few
dictionary lookups; the rooms a page's templates name come on top
(:mod:`whos_online.rooms`).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from contextlib import suppress
from typing import Any, NamedTuple

from django.db.models import Model
from django.http import HttpRequest, HttpResponseBase
from django.urls import ResolverMatch

from whos_online import guard, locations
from whos_online.store import Store, get_store, is_room_name

# The attribute a view's room name is kept in, as @location keeps its label.
ATTRIBUTE = "whos_online_room"


class PageMarks(NamedTuple):
    """What a guard is compared with on a page of a path: the room the page
    is in by its view or URL name, that room's :func:`rooms_mark` (``""``:
    none), and the :func:`~whos_online.guard.mark` of its location label
    (``""``: none)."""

    room: str | None
    rooms: str
    where: str


NO_MARKS = PageMarks(None, "", "")


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
    if len(request.path_info) > locations.MAX_PATH_LENGTH:
        return marks_of(match, store)
    memo, key = store.state.pages, path_key(request)
    found: PageMarks | None = memo.get(key)
    return memo.put(key, marks_of(match, store)) if found is None else found


def kept_marks(store: Store, key: object) -> PageMarks | None:
    """The marks the process keeps of a path (its :func:`path_key`), if it
    resolved a page of that path before (a page answered from a cache is
    taken for the page it was made from): the guarded path's, resolving
    nothing."""
    found: PageMarks | None = store.state.pages.get(key)
    return found


def path_key(request: HttpRequest) -> object:
    """What a path's marks are kept by: the path, and the URLconf if the
    request names one."""
    urlconf = getattr(request, "urlconf", None)
    return request.path_info if urlconf is None else (urlconf, request.path_info)


def knows(found: guard.Guard, marks: PageMarks) -> bool:
    """Whether the guard ``found`` says its visitor was recorded in the
    rooms of a page of ``marks``, and, for a user, at its location label
    (or the page has none)."""
    return marks.rooms == found.rooms and (
        found.is_guests or marks.where in ("", found.where)
    )


def page_room(request: HttpRequest, store: Store | None = None) -> str | None:
    """The room the requested page is in by its view or its URL name."""
    return page_marks(request, store or get_store()).room


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


def refuse_bad_room(room: object) -> bool:
    """Whether ``room`` is not a room name, in which case it is logged."""
    if is_room_name(room):
        return False
    get_store().state.refused.warning(
        "room", "Who's online ignored an invalid room name %r.", str(room)[:120]
    )
    return True


# Rooms named in a guard at most this long together; more are kept as a
# hash, and a move from them goes through places.lua.
MAX_NAMED_ROOMS = 64


def rooms_mark(rooms: AbstractSet[str]) -> str:
    """What a guard keeps of the rooms a visitor was recorded in (``""``:
    none): their names, so a move from them is plain commands
    (``store/places.py``), or a hash of them where the names are long."""
    if not rooms:
        return ""
    names = "~".join(sorted(rooms))
    if len(names) <= MAX_NAMED_ROOMS:
        return names
    return "#" + guard.mark("\n".join(sorted(rooms)))


def rooms_named(mark: str) -> list[str] | None:
    """The rooms a :func:`rooms_mark` names; ``None`` where it is a hash."""
    if mark.startswith("#"):
        return None
    return mark.split("~") if mark else []


def answered(response: HttpResponseBase) -> bool:
    """Whether the view answered 2xx: only then is a page's location or
    room kept, so requests for pages that do not exist fill nothing."""
    return 200 <= response.status_code < 300


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


def moved(request: HttpRequest, found: guard.Guard, marks: PageMarks) -> bool:
    """Whether a user's page view (one of ``marks``) has a location other
    than the one their guard ``found`` knows was last written: written after
    a 2xx."""
    return marks.where not in ("", found.where) and locations.may_store(request)
