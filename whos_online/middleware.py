"""Records each visitor as online, at most once per guard period."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponseBase

from whos_online import presence
from whos_online.addresses import client_address
from whos_online.failsafe import breaker
from whos_online.guard import is_guarded, set_guard


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
        if not is_guarded(request):
            record_visit(request, response)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
        if not is_guarded(request):
            await sync_to_async(record_visit)(request, response)
        return response


def record_visit(request: HttpRequest, response: HttpResponseBase) -> None:
    """Record the user, or else the guest's address, and set the guard."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        pk = user.pk
        recorded = breaker.call(lambda: presence.record_user(pk), None)
        guest_address = None
    else:
        guest_address = client_address(request.META)
        if guest_address is None:
            return
        address = guest_address
        recorded = breaker.call(lambda: presence.record_guest(address), None)
    if recorded is not None:
        set_guard(response, request, guest_address)
