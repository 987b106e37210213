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
from whos_online.page import visit_of
from whos_online.rooms import record_page_rooms, rooms_to_enter
from whos_online.seen import Cookies, session_changed
from whos_online.store import get_store
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
        store = get_store()
        if store.config.problems:  # logged once by get_config
            return self.get_response(request)
        seen = Cookies(request, store)
        visit = None if seen.guarded else before_view(request, seen)
        outer, page.THREAD.request = page.THREAD.request, request
        try:
            response: HttpResponseBase = self.get_response(request)  # type: ignore[assignment]
        finally:
            page.THREAD.request = outer
        if after_view_needed(request, response, seen, visit):
            after_view(visit_of(request, seen), response)
        rooms = rooms_to_enter(request, response, seen)
        if rooms is not None:
            record_page_rooms(request, response, seen, rooms)
        if store.has_peak_to_keep:
            store.keep_peak_seen()
        made = getattr(request, page.ATTRIBUTE, None)
        if made is not None and made.personal:
            keep_private(response)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        store = get_store()
        if store.config.problems:  # logged once by get_config
            return await self.get_response(request)  # type: ignore[no-any-return,misc]
        seen = Cookies(request, store)
        visit = None
        if not seen.guarded:
            visit = await sync_to_async(before_view)(request, seen)
        token = page.TASK.set(request)
        try:
            response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
        finally:
            page.TASK.reset(token)
        if after_view_needed(request, response, seen, visit):
            await sync_to_async(after_view)(visit_of(request, seen), response)
        rooms = rooms_to_enter(request, response, seen)
        if rooms is not None:
            await sync_to_async(record_page_rooms)(request, response, seen, rooms)
        if store.has_peak_to_keep:
            await sync_to_async(store.keep_peak_seen)()
        made = getattr(request, page.ATTRIBUTE, None)
        if made is not None and made.personal:
            keep_private(response)
        return response


def before_view(request: HttpRequest, seen: Cookies) -> Visit:
    """The guard does not hold (by a clock learnt lately): ask Redis' clock
    if the guard may hold after all, else record the visitor."""
    visit = visit_of(request, seen)
    if visit.guard is not None:
        visit.store.catch_up(visit.guard.data_label)
    if not visit.is_guarded and not is_heartbeat(request):
        visit.record()
    return visit


def after_view_needed(
    request: HttpRequest, response: HttpResponseBase, seen: Cookies, visit: Visit | None
) -> bool:
    """Whether the view's answer leaves anything to record: a visitor just
    recorded (their guard, their location), a new identity, or a user who
    moved to a page with another location."""
    return (
        visit is not None
        and visit.stamp is not None
        or session_changed(request, seen.session_key)
        or seen.moved
        and 200 <= response.status_code < 300
    )


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
