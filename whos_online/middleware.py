"""Records each visitor as online, at most once per guard period."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponseBase

from whos_online import page
from whos_online.page import arrive, leave


class WhosOnlineMiddleware:
    """Put it after ``AuthenticationMiddleware`` so it can see who is logged in.

    The visitor is recorded before the view runs, so the page already counts
    them; a view that logs someone in or out records the new identity too.
    After a page a browser opened answered 2xx, the visitor's device is in
    the page's rooms, and in no other (see :mod:`whos_online.rooms`).

    What it does is decided once, for WSGI and ASGI alike, by the request's
    one object (:mod:`whos_online.page`): :func:`~whos_online.page.arrive`
    before the view and :func:`~whos_online.page.leave` after it;
    ``__call__`` and ``__acall__`` only call or await what they decide (work
    on Redis or the database runs in a thread under ASGI), as Django's
    ``MiddlewareMixin`` does.
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
