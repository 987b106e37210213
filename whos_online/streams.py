"""The live stream of a widget: Server-Sent Events, under ASGI.

``stream/`` (``?room=<token>`` for a room's widget, as the refresh fragment
takes it) sends the widget as the viewer may see it now, then again after
each change of its room (at most one event per 250 ms), each rendered
exactly as the refresh fragment is (``views.online_fragment``): through the
viewer's gate, with the request. Streams of visitors who are not logged in
share one rendering of each change. An event's id is a digest of what it
shows, so a browser that reconnects with ``Last-Event-ID`` is not sent what
it shows already. A comment every 15 s keeps proxies from closing it.

A stream holds no thread: the renderings of all of a process's streams
run in the few threads live presence reads in (``live.READING_THREADS``),
and the thread Django's ASGI handler keeps for each request's sync code
(its middleware) is let go once the stream starts
(:func:`_let_the_request_thread_go`).

Where it cannot stream, it answers so that the page's script polls as
before: 204 under WSGI (a stream would hold a worker), 503 when Redis
cannot be listened to.

:func:`nudges` is the stream of a page whose script asks for what it shows
(the admin's change form): it says only *that* what its viewer may learn of
some rooms changed, never what, so the page's own ask, through the gate,
stays the one source of its words.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Callable
from typing import NamedTuple

from asgiref.sync import SyncToAsync
from django.core.handlers.asgi import ASGIRequest
from django.db import connections
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
from whos_online.live import Unavailable, follow, hub, in_shared_threads
from whos_online.rendered import widget_html
from whos_online.roster import online_roster
from whos_online.tokens import room_from_token

# Seconds between two keep-alive comments.
KEEP_ALIVE = 15.0
KEPT_ALIVE = b": keep-alive\n\n"
# What a nudge says, and the id of its last when what it followed is gone.
CHANGED = "changed"
GONE = "gone"
# Renderings shared by anonymous streams: (room, event, language) -> Event.
SHARED = 256
_shared: dict[tuple[str | None, int, str], asyncio.Future[Event]] = {}


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
    return _event_stream(
        _events(request, room, changes, shown, language, shared=shared)
    )


def nudges(
    request: HttpRequest, rooms: tuple[str, ...], seen: Callable[[], str | None]
) -> HttpResponseBase:
    """From a view that checked its viewer may follow ``rooms``: a stream
    that sends an event, saying only ``changed``, whenever ``seen`` (a
    digest of what the viewer may learn, ``None``: gone) changes after a
    change of ``rooms``; a last one, and the end, when it is gone. At first
    when it differs from ``Last-Event-ID`` (or ``?shown=``, what the page
    shows). 204 under WSGI, 503 when Redis cannot be listened to."""
    if not isinstance(request, ASGIRequest):
        return HttpResponse(status=204)
    try:
        hub().start()
    except Unavailable:
        return HttpResponse("Live presence is unavailable.", status=503)
    shown = request.headers.get("Last-Event-ID") or request.GET.get("shown", "")
    return _event_stream(_nudged(rooms, seen, shown))


async def _nudged(
    rooms: tuple[str, ...], seen: Callable[[], str | None], shown: str
) -> AsyncIterator[bytes]:
    changes = follow(*rooms, wait=KEEP_ALIVE)
    digest = in_shared_threads(seen)
    try:
        await _let_the_request_thread_go()
        await anext(changes)
        while True:
            now = await digest() or GONE
            if now != shown:
                shown = now
                yield event_text(now, CHANGED)
            if now == GONE:
                return
            event = await anext(changes)
            while event is None:
                yield KEPT_ALIVE
                event = await anext(changes)
    except (StopAsyncIteration, Unavailable):
        return  # the subscription was lost, or this client stalled
    finally:
        await changes.aclose()  # type: ignore[attr-defined]


def _event_stream(events: AsyncIterator[bytes]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(events, content_type="text/event-stream")
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
) -> AsyncIterator[bytes]:
    await _let_the_request_thread_go()
    now = await _rendered(request, room, language)
    try:
        while True:
            if now.id != shown:
                shown = now.id
                yield now.text
            event = await anext(changes)
            while event is None:
                yield KEPT_ALIVE
                event = await anext(changes)
            if shared:
                now = await _shared_rendering(request, room, event, language)
            else:
                now = await _rendered(request, room, language)
    except StopAsyncIteration:
        return  # the subscription was lost, or this client stalled
    finally:
        await changes.aclose()  # type: ignore[attr-defined]


class Event(NamedTuple):
    """What a stream sends of the widget: its id (a digest of the widget),
    and the event's text, made once for all the streams that share it."""

    id: str
    text: bytes

    @classmethod
    def of(cls, html: str) -> Event:
        digest = hashlib.sha256(html.encode()).hexdigest()[:32]
        return cls(digest, event_text(digest, html))


def event_text(digest: str, html: str) -> bytes:
    """Bytes, so that Django sends them as they are (a ``str`` is encoded
    again for each stream)."""
    data = "".join(f"data: {line}\n" for line in html.splitlines())
    return f"id: {digest}\n{data}\n".encode()


async def _shared_rendering(
    request: HttpRequest, room: str | None, event: int, language: str
) -> Event:
    """The rendering every anonymous stream of ``room`` shows for ``event``:
    made by the first to ask."""
    key = (room, event, language)
    made = _shared.get(key)
    if made is None:
        if len(_shared) >= SHARED:
            _shared.clear()
        made = _shared[key] = asyncio.get_running_loop().create_future()
        try:
            made.set_result(await _rendered(request, room, language))
        except Exception as exc:
            _shared.pop(key, None)
            made.set_exception(exc)
    return await made


def _render(request: HttpRequest, room: str | None, language: str) -> Event:
    """The widget as ``online_fragment`` renders it, read afresh."""
    page.forget(request)
    with translation.override(language):
        html = widget_html(online_roster(room=room, request=request), request)
    return Event.of(html)


# Made once, not for each stream: what each open stream holds, Python's
# garbage collector walks at every full collection.
_rendered = in_shared_threads(_render)


async def _let_the_request_thread_go() -> None:
    """Django's ASGI handler keeps a thread for each request's sync code
    until its response ends, which for a stream is when its tab closes.
    When the stream starts that code has run (the middleware), so the
    thread is closed now, its database connections first; the response's
    end takes a new one for a moment."""
    context = SyncToAsync.thread_sensitive_context.get(None)
    threads = SyncToAsync.context_to_thread_executor
    # No context: not served by Django's ASGI handler (a test's client). A
    # context given its thread by whoever made it: theirs to close.
    given = getattr(context, "_executor", None) is not None
    if context is None or context not in threads or given:
        return
    thread = threads.pop(context)
    await asyncio.get_running_loop().run_in_executor(thread, connections.close_all)
    thread.shutdown(wait=False)
