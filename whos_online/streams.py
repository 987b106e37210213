"""The live stream of a widget: Server-Sent Events, under ASGI.

``stream/`` (``?room=<token>`` for a room's widget, as the refresh fragment
takes it) sends the widget as the viewer may see it now, then again after
each change of its room (at most one event per 250 ms), each rendered
exactly as the refresh fragment is (``views.online_fragment``): through the
viewer's gate, with the request. Streams of visitors who are not logged in
share one rendering of each change. An event's id is a digest of what it
shows, so a browser that reconnects with ``Last-Event-ID`` is not sent what
it shows already. A comment every 15 s keeps proxies from closing it.

Where it cannot stream, it answers so that the page's script polls as
before: 204 under WSGI (a stream would hold a worker), 503 when Redis
cannot be listened to.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    StreamingHttpResponse,
)
from django.utils import translation
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.http import require_GET

from whos_online import page
from whos_online.conf import get_config
from whos_online.live import Unavailable, follow
from whos_online.rendered import widget_html
from whos_online.rooms import room_from_token
from whos_online.roster import online_roster

# Seconds between two keep-alive comments.
KEEP_ALIVE = 15.0
# Renderings shared by anonymous streams: (room, event, language) -> HTML.
SHARED = 256
_shared: dict[tuple[str | None, int, str], asyncio.Future[str]] = {}


@require_GET
async def stream(request: HttpRequest) -> HttpResponseBase:
    if not isinstance(request, ASGIRequest):
        # Under WSGI a stream would hold a worker: 204 tells EventSource not
        # to come back, and the page polls.
        return HttpResponse(status=204)
    user = await request.auser()
    if not (get_config().anonymous_can_view or user.is_authenticated):
        return HttpResponse("Log in to see who is online.", status=403)
    room = None
    token = request.GET.get("room")
    if token is not None:
        room = room_from_token(token, user)
        if room is None:
            return HttpResponse("Unknown or expired room.", status=400)
    changes = follow(room, wait=KEEP_ALIVE)
    try:
        await anext(changes)
    except Unavailable:
        return HttpResponse("Live presence is unavailable.", status=503)
    shown = request.headers.get("Last-Event-ID", "")
    language = translation.get_language()
    shared = not user.is_authenticated
    response = StreamingHttpResponse(
        _events(request, room, changes, shown, language, shared=shared),
        content_type="text/event-stream",
    )
    response["X-Accel-Buffering"] = "no"  # nginx sends each event at once
    add_never_cache_headers(response)
    patch_vary_headers(response, ["Cookie"])
    return response


async def _events(
    request: HttpRequest,
    room: str | None,
    changes: AsyncIterator[int | None],
    shown: str,
    language: str,
    *,
    shared: bool,
) -> AsyncIterator[str]:
    rendered = sync_to_async(_render)
    html = await rendered(request, room, language)
    try:
        while True:
            digest = hashlib.sha256(html.encode()).hexdigest()[:32]
            if digest != shown:
                shown = digest
                yield event_text(digest, html)
            event = await anext(changes)
            while event is None:
                yield ": keep-alive\n\n"
                event = await anext(changes)
            if shared:
                html = await _shared_rendering(request, room, event, language)
            else:
                html = await rendered(request, room, language)
    except StopAsyncIteration:
        return  # the subscription was lost, or this client stalled
    finally:
        await changes.aclose()  # type: ignore[attr-defined]


def event_text(digest: str, html: str) -> str:
    data = "".join(f"data: {line}\n" for line in html.splitlines())
    return f"id: {digest}\n{data}\n"


async def _shared_rendering(
    request: HttpRequest, room: str | None, event: int, language: str
) -> str:
    """The rendering every anonymous stream of ``room`` shows for ``event``:
    made by the first to ask."""
    key = (room, event, language)
    made = _shared.get(key)
    if made is None:
        if len(_shared) >= SHARED:
            _shared.clear()
        made = _shared[key] = asyncio.get_running_loop().create_future()
        try:
            made.set_result(await sync_to_async(_render)(request, room, language))
        except Exception as exc:
            _shared.pop(key, None)
            made.set_exception(exc)
    return await made


def _render(request: HttpRequest, room: str | None, language: str) -> str:
    """The widget as ``online_fragment`` renders it, read afresh."""
    page.forget(request)
    with translation.override(language):
        return widget_html(online_roster(room=room, request=request), request)
