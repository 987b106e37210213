"""Records each visitor as online, at most once per guard period."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponseBase

from whos_online import presence
from whos_online.failsafe import quietly
from whos_online.visitors import Visit


class WhosOnlineMiddleware:
    """Put it after ``AuthenticationMiddleware`` so it can see who is logged in.

    The visitor is recorded before the view runs, so the page already counts
    them; a view that logs someone in or out records the new identity too.
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
        visit = Visit(request)
        if needs_redis_before(visit):
            before_view(visit)
        response: HttpResponseBase = self.get_response(request)  # type: ignore[assignment]
        if visit.stamp is not None or visit.identity_changed:
            after_view(visit, response)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        visit = Visit(request)
        if needs_redis_before(visit):
            await sync_to_async(before_view)(visit)
        response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
        if visit.stamp is not None or visit.identity_changed:
            await sync_to_async(after_view)(visit, response)
        return response


def needs_redis_before(visit: Visit) -> bool:
    """False on the hot path: a guard that holds, by a clock learnt lately."""
    return not visit.is_guarded


def before_view(visit: Visit) -> None:
    if visit.guard is not None and visit.config.state.clock.is_stale:
        quietly(presence.sync_clock, None)  # then the guard may hold after all
    if not visit.is_guarded:
        quietly(visit.record, None)


def after_view(visit: Visit, response: HttpResponseBase) -> None:
    if visit.identity_changed:
        quietly(visit.record_new_identity, None)
    visit.issue_guard(response)
