"""Records each visitor as online, at most once per guard period."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponseBase

from whos_online import presence
from whos_online.bots import throttle
from whos_online.failsafe import breaker
from whos_online.guard import Guard, read_guard, set_guard
from whos_online.visitors import identify


class WhosOnlineMiddleware:
    """Put it after ``AuthenticationMiddleware`` so it can see who is logged in.

    The visitor is recorded after the view has run, so the request that logs
    someone in already records them.
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
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self.__acall__(request)
        response: HttpResponseBase = self.get_response(request)  # type: ignore[assignment]
        guard = read_guard(request)
        if guard is None or not guard.holds:
            record_visit(request, response, guard)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
        guard = read_guard(request)
        if guard is None or not guard.holds:
            await sync_to_async(record_visit)(request, response, guard)
        return response


def record_visit(
    request: HttpRequest, response: HttpResponseBase, guard: Guard | None
) -> None:
    """Record the visitor and, for people, set the guard.

    An expired guard still names the user it was issued to. Bots keep no
    cookies, so instead of a guard each bot name is recorded at most once per
    guard period by each process.
    """
    visitor = identify(request, None if guard is None else guard.user_pk)
    if visitor is None:
        return
    if not visitor.is_person and not throttle.allows(visitor.member):
        return
    recorded = breaker.call(lambda: presence.record(visitor.kind, visitor.member), None)
    if recorded is not None and visitor.is_person:
        set_guard(
            response,
            request,
            user_pk=visitor.user_pk,
            guest_address=visitor.guest_address,
        )
