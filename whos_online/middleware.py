"""Records each visitor as online, at most once per guard period."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponseBase
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_cache_control, patch_vary_headers

from whos_online import locations, page
from whos_online.guard import Guard
from whos_online.page import Page
from whos_online.rooms import PageMarks, page_marks, record_page_rooms, rooms_to_enter
from whos_online.seen import Verdict, holds, session_changed, session_key_of
from whos_online.store import Store, get_store
from whos_online.visitors import Visit


class WhosOnlineMiddleware:
    """Put it after ``AuthenticationMiddleware`` so it can see who is logged in.

    The visitor is recorded before the view runs, so the page already counts
    them; a view that logs someone in or out records the new identity too.
    After a page a browser opened answered 2xx, the visitor's device is in
    the page's rooms, and in no other (see :mod:`whos_online.rooms`).

    What it does is decided once, for WSGI and ASGI alike, by :func:`arrive`
    before the view and :func:`leave` after it; ``__call__`` and
    ``__acall__`` only call or await what they decide (work on Redis or the
    database runs in a thread under ASGI), as Django's ``MiddlewareMixin``
    does.
    """

    sync_capable = True
    async_capable = True

    def __init__(
        self,
        get_response: (
            Callable[[HttpRequest], HttpResponseBase]
            | Callable[[HttpRequest], Awaitable[HttpResponseBase]]
        ),
    ) -> None:
        if not apps.is_installed("whos_online"):
            raise ImproperlyConfigured(
                "WhosOnlineMiddleware needs 'whos_online' in INSTALLED_APPS: "
                "its templates, checks and signal receivers live there."
            )
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self.__acall__(request)
        came = arrive(request)
        if came is None:
            return self.get_response(request)
        _, _, came_with, first = came
        visit = None if first is None else first()
        token = page.SERVING.set((request, came_with))
        try:
            response: HttpResponseBase = self.get_response(request)  # type: ignore[assignment]
        finally:
            page.SERVING.reset(token)
        writes = leave(request, response, came, visit)
        if writes is not None:
            writes()
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        came = arrive(request)
        if came is None:
            return await self.get_response(request)  # type: ignore[no-any-return,misc]
        _, _, came_with, first = came
        visit = None if first is None else await sync_to_async(first)()
        token = page.SERVING.set((request, came_with))
        try:
            response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
        finally:
            page.SERVING.reset(token)
        writes = leave(request, response, came, visit)
        if writes is not None:
            await sync_to_async(writes)()
        return response


Arrival = tuple[Store, "Verdict | None", str, "Callable[[], Visit | None] | None"]
"""What :func:`arrive` found: the store, the guard's verdict if it spares
the request a record, the session key the request came with, and the work
to do before the view, if any."""


def arrive(request: HttpRequest) -> Arrival | None:
    """Before the view, as both the sync and the async middleware run it
    (they only call or await what these functions decide): ``None`` when the
    app is not set up to record anyone."""
    store = get_store()
    if store.config.problems:  # logged once by get_config
        return None
    held = holds(request, store)
    if held is not None:
        return store, held, held.session_key, None
    came_with = session_key_of(request, store.config)
    started = page.start(request, store, came_with)
    return store, None, came_with, functools.partial(before_view, started)


def leave(
    request: HttpRequest,
    response: HttpResponseBase,
    came: Arrival,
    visit: Visit | None,
) -> Callable[[], None] | None:
    """After the view: marks a response made for its viewer alone private,
    and returns what the answer leaves to write, if anything."""
    store, held, came_with, _ = came
    made = page.made_for(request)
    if held is None or not nothing_to_write(request, response, store, held, made):
        made = page.start(request, store, came_with)
        writes = writes_after(made, response, visit)
    else:
        writes = None
    if made is not None and made.personal:
        keep_private(response)
    return writes


def before_view(made: Page) -> Visit | None:
    """Unless the cookies' guard spares the request a record (by a clock
    learnt lately), ask Redis' clock if it may hold after all, else record
    the visitor."""
    if made.guarded:
        return None
    visit = made.visit_of()
    if visit.guard is not None:
        visit.store.catch_up(visit.guard.data_label)
    if not visit.is_guarded and not is_heartbeat(made.request):
        visit.record()
    return visit


def nothing_to_write(
    request: HttpRequest,
    response: HttpResponseBase,
    store: Store,
    held: Verdict,
    made: Page | None,
) -> bool:
    """The guarded path after the view: whether the answer surely leaves
    nothing to write for a request whose guard ``held`` (no login or logout,
    no peak to keep, the page's rooms and a user's location those the guard
    says were written; ``made``: the page, if an output made one). When
    unsure, :func:`writes_after` decides."""
    session = getattr(request, "session", None)
    if session is not None and session.modified or store.state.peak_seen is not None:
        return False
    if made is not None and made.named_rooms:
        return False
    if not 200 <= response.status_code < 300:
        return True
    found: Guard = held.guard  # type: ignore[assignment]  # kept only on a guard
    marks = page_marks(request, store)
    if marks.rooms != found.rooms:
        return False
    return found.is_guests or not moved(request, found, marks)


def moved(request: HttpRequest, found: Guard, marks: PageMarks) -> bool:
    """Whether a user's page view (one of ``marks``) has a location other
    than the one their guard ``found`` knows was last written: written after
    a 2xx."""
    return marks.where not in ("", found.where) and locations.may_store(request)


def writes_after(
    made: Page, response: HttpResponseBase, visit: Visit | None
) -> Callable[[], None] | None:
    """What the view's answer leaves to write, as one call (a thread's, under
    ASGI); ``None`` when it leaves nothing, as on the guarded path: a
    visitor just recorded (their guard, their location), a new identity, a
    user who moved to a page with another location, the rooms of a page a
    browser opened, a peak a snapshot saw."""
    request = made.request
    records = (
        visit is not None
        and visit.stamp is not None
        or session_changed(request, made.session_key)
        or made.guard is not None
        and not made.guard.is_guests
        and 200 <= response.status_code < 300
        and moved(request, made.guard, page_marks(request, made.store))
    )
    rooms = rooms_to_enter(made, response)
    peak = made.store.has_peak_to_keep
    if not records and rooms is None and not peak:
        return None

    def write() -> None:
        if records:
            after_view(made.visit_of(), response)
        if rooms is not None:
            record_page_rooms(request, response, rooms)
        if peak:
            made.store.keep_peak_seen()

    return write


def is_heartbeat(request: HttpRequest) -> bool:
    """Whether this is a POST to the heartbeat, whose view records its user
    (or refuses to: its rate limit is kept on the server, so a client that
    drops its guard cookie is not recorded here on every POST)."""
    if request.method != "POST":
        return False
    try:
        url = reverse("whos_online:heartbeat", getattr(request, "urlconf", None))
    except NoReverseMatch:
        return False
    return request.path == url


def after_view(visit: Visit, response: HttpResponseBase) -> None:
    if visit.identity_changed:
        visit.record_new_identity()
    visit.issue_guard(response)
    if answered(response):
        visit.record_location(response)


def keep_private(response: HttpResponseBase) -> None:
    """A page that showed anything made for its viewer alone (a staff
    member's hidden users, names only logged-in users may see) is no page
    for a shared cache to keep."""
    patch_vary_headers(response, ["Cookie"])
    patch_cache_control(response, private=True)


def answered(response: HttpResponseBase) -> bool:
    return 200 <= response.status_code < 300
