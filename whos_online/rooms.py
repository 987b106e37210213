"""Presence in a named room, for "who's viewing this thread".

Decorate a view with ``@records_room("thread:{pk}")`` (the name is formatted
with the view's keyword arguments) or give a class-based view ``RoomMixin``
and a ``room_name``. Each request to the view records the visitor in the
room: one Redis round trip.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.core import signing
from django.http import HttpRequest, HttpResponseBase

from whos_online import presence
from whos_online.failsafe import breaker
from whos_online.visitors import identify

logger = logging.getLogger("whos_online")

View = TypeVar("View", bound=Callable[..., Any])

TOKEN_SALT = "whos_online.room"


def record_in_room(request: HttpRequest, template: str, kwargs: dict[str, Any]) -> None:
    """Record the request's visitor in the room ``template`` formatted with
    ``kwargs``; a name that does not format or is invalid is logged, not raised."""
    try:
        room = template.format(**kwargs)
    except (KeyError, IndexError, ValueError):
        room = template
    if not presence.is_room_name(room):
        logger.warning("Who's online ignored an invalid room name %r.", room[:200])
        return
    visitor = identify(request)
    if visitor is not None:
        breaker.call(
            lambda: presence.record_in_room(room, visitor.kind, visitor.member), None
        )


def records_room(name: str) -> Callable[[View], View]:
    """Record each visitor of the decorated view in the room ``name``,
    formatted with the view's keyword arguments (``"thread:{pk}"``)."""

    def decorator(view: View) -> View:
        if iscoroutinefunction(view):

            @functools.wraps(view)
            async def async_wrapper(
                request: HttpRequest, *args: Any, **kwargs: Any
            ) -> HttpResponseBase:
                response = await view(request, *args, **kwargs)
                await sync_to_async(record_in_room)(request, name, kwargs)
                return response  # type: ignore[no-any-return]

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(view)
        def wrapper(
            request: HttpRequest, *args: Any, **kwargs: Any
        ) -> HttpResponseBase:
            response = view(request, *args, **kwargs)
            record_in_room(request, name, kwargs)
            return response  # type: ignore[no-any-return]

        return wrapper  # type: ignore[return-value]

    return decorator


class RoomMixin:
    """For class-based views: records each visitor in ``room_name``,
    formatted with the view's keyword arguments."""

    room_name: str = ""
    kwargs: dict[str, Any]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        response = super().dispatch(request, *args, **kwargs)  # type: ignore[misc]
        record_in_room(request, self.room_name, self.kwargs)
        return response


def room_token(room: str, viewer: Any) -> str:
    """A token that lets ``viewer`` (and only them) refresh ``room``'s list.

    The endpoints take rooms only as tokens, so a visitor can follow a room
    the site showed them, never name one it did not.
    """
    return signing.dumps([room, _viewer_id(viewer)], salt=TOKEN_SALT, compress=True)


def room_from_token(token: str, viewer: Any) -> str | None:
    """The room in ``token`` if it was issued to ``viewer``."""
    try:
        room, viewer_id = signing.loads(token, salt=TOKEN_SALT)
    except (signing.BadSignature, TypeError, ValueError):
        return None
    if viewer_id != _viewer_id(viewer) or not presence.is_room_name(room):
        return None
    return str(room)


def _viewer_id(viewer: Any) -> str:
    if viewer is not None and getattr(viewer, "is_authenticated", False):
        return str(viewer.pk)
    return ""
