"""Records each visitor as online, at most once per guard period."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponseBase
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_cache_control, patch_vary_headers

from whos_online import page
from whos_online.page import Page
from whos_online.rooms import record_page_rooms, rooms_to_enter
from whos_online.seen import session_changed
from whos_online.visitors import Visit


class WhosOnlineMiddleware:
    """Put it after ``AuthenticationMiddleware`` so it can see who is logged in.

    The visitor is recorded before the view runs, so the page already counts
    them; a view that logs someone in or out records the new identity too.
    After a page a browser opened answered 2xx, the visitor's device is in
    the page's rooms, and in no other (see :mod:`whos_online.rooms`).
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
        made = page.start(request)
        if made is None:
            return self.get_response(request)
        visit = None if made.guarded else before_view(made)
        outer, page.THREAD.page = page.THREAD.page, made
        try:
            response: HttpResponseBase = self.get_response(request)  # type: ignore[assignment]
        finally:
            page.THREAD.page = outer
        writes = writes_after(made, response, visit)
        if writes is not None:
            writes()
        if made.personal:
            keep_private(response)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        made = page.start(request)
        if made is None:
            return await self.get_response(request)  # type: ignore[no-any-return,misc]
        visit = None if made.guarded else await sync_to_async(before_view)(made)
        token = page.TASK.set(made)
        try:
            response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
        finally:
            page.TASK.reset(token)
        writes = writes_after(made, response, visit)
        if writes is not None:
            await sync_to_async(writes)()
        if made.personal:
            keep_private(response)
        return response


def before_view(made: Page) -> Visit:
    """The guard does not hold (by a clock learnt lately): ask Redis' clock
    if the guard may hold after all, else record the visitor."""
    visit = made.visit_of()
    if visit.guard is not None:
        visit.store.catch_up(visit.guard.data_label)
    if not visit.is_guarded and not is_heartbeat(made.request):
        visit.record()
    return visit


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
        or made.moved
        and 200 <= response.status_code < 300
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
