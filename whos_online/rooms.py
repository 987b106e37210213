"""Presence in a named room, for "who's viewing this thread".

Decorate a view with ``@records_room("thread:{pk}")`` (the name is formatted
with the view's keyword arguments) or give a class-based view ``RoomMixin``
and a ``room_name``. Each request to the view records the visitor in the
room before the view runs, so the room's list includes its reader: one
Redis round trip.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.core import signing
from django.http import HttpRequest, HttpResponseBase

from whos_online.conf import conf
from whos_online.failsafe import quietly
from whos_online.store import get_store, is_room_name
from whos_online.visitors import visit_of

View = TypeVar("View", bound=Callable[..., Any])

TOKEN_SALT = "whos_online.room"


def record_in_room(request: HttpRequest, template: str, kwargs: dict[str, Any]) -> None:
    """Record the request's visitor in the room ``template`` formatted with
    ``kwargs``; a name that does not format or is invalid is logged (at most
    once a minute), never raised, and costs nobody else anything."""
    try:
        room = template.format(**kwargs)
    except (KeyError, IndexError, ValueError):
        room = template
    if not refuse_bad_room(room):
        visitor = visit_of(request).visitor
        if visitor is not None:
            store = get_store()
            quietly(
                lambda: store.record_in_room(room, visitor.kind, visitor.member),
                None,
                store.breaker_of(visitor.member),
            )


def refuse_bad_room(room: object) -> bool:
    """Whether ``room`` is not a room name, in which case it is logged."""
    if is_room_name(room):
        return False
    get_store().state.refused.warning(
        "room", "Who's online ignored an invalid room name %r.", str(room)[:120]
    )
    return True


def records_room(name: str) -> Callable[[View], View]:
    """Record each visitor of the decorated view in the room ``name``,
    formatted with the view's keyword arguments (``"thread:{pk}"``)."""

    def decorator(view: View) -> View:
        if iscoroutinefunction(view):

            @functools.wraps(view)
            async def async_wrapper(
                request: HttpRequest, *args: Any, **kwargs: Any
            ) -> HttpResponseBase:
                await sync_to_async(record_in_room)(request, name, kwargs)
                return await view(request, *args, **kwargs)  # type: ignore[no-any-return]

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(view)
        def wrapper(
            request: HttpRequest, *args: Any, **kwargs: Any
        ) -> HttpResponseBase:
            record_in_room(request, name, kwargs)
            return view(request, *args, **kwargs)  # type: ignore[no-any-return]

        return wrapper  # type: ignore[return-value]

    return decorator


class RoomMixin:
    """For class-based views: records each visitor in ``room_name``,
    formatted with the view's keyword arguments."""

    room_name: str = ""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        record_in_room(request, self.room_name, kwargs)
        return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]


def room_token(room: str, viewer: Any) -> str:
    """A token that lets ``viewer`` (and only them) follow ``room`` for
    ``WHOS_ONLINE_ROOM_TOKEN_MAX_AGE`` seconds.

    The endpoints take rooms only as tokens, so a visitor can follow a room
    the site showed them, never name one it did not.
    """
    return signing.dumps([room, _viewer_id(viewer)], salt=TOKEN_SALT, compress=True)


def room_from_token(token: str, viewer: Any) -> str | None:
    """The room in ``token`` if it was issued to ``viewer`` and is not too old."""
    try:
        room, viewer_id = signing.loads(
            token, salt=TOKEN_SALT, max_age=conf.ROOM_TOKEN_MAX_AGE
        )
    except (signing.BadSignature, TypeError, ValueError):
        return None
    if viewer_id != _viewer_id(viewer) or not is_room_name(room):
        return None
    return str(room)


def _viewer_id(viewer: Any) -> str:
    if viewer is not None and getattr(viewer, "is_authenticated", False):
        return str(viewer.pk)
    return ""
