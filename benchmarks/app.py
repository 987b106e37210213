"""Everything the benchmarks know of ``whos_online``, in one place.

The rest of benchmarks/ drives the app as a site does: requests through the
middleware, the ``{% whos_online %}`` tag and the ``presence`` functions
below. The few figures that time one step of a request alone (the guard
check, the client address, identifying the visitor, setting the guard) need
the app's internals: they are imported here and nowhere else, so moving a
module of the package means mending this file only.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase

from whos_online.addresses import client_address
from whos_online.conf import conf
from whos_online.guard import read_guard, set_guard
from whos_online.middleware import WhosOnlineMiddleware
from whos_online.presence import PRUNE_BATCH, key, prune, record, snapshot
from whos_online.visitors import Visitor, identify

MIDDLEWARE = "whos_online.middleware.WhosOnlineMiddleware"
TAG = "{% load whos_online %}{% whos_online %}"
__all__ = ["PRUNE_BATCH", "WhosOnlineMiddleware", "client_address", "identify"]
__all__ += ["key", "prune", "record", "snapshot"]


def guard_cookie() -> str:
    return conf.GUARD_COOKIE_NAME


def window() -> int:
    return conf.WINDOW


def guard_holds(request: HttpRequest) -> bool:
    """What the middleware asks of every request before deciding to record."""
    guard = read_guard(request)
    return guard is not None and guard.holds


def guest(request: HttpRequest) -> Visitor:
    visitor = identify(request)
    if visitor is None:
        raise RuntimeError("identify() found no guest in the request")
    return visitor


def set_guest_guard(
    response: HttpResponseBase, request: HttpRequest, visitor: Visitor
) -> None:
    set_guard(response, request, guest_address=visitor.guest_address)
