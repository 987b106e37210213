"""Everything the benchmarks know of ``whos_online``, in one place.

The rest of benchmarks/ drives the app as a site does: requests through the
middleware, the ``{% whos_online %}`` tag and the ``presence`` functions
below. The few figures that time one step of a request alone (the guard
check, the client address, resolving the visitor, issuing the guard) need
the app's internals: they are imported here and nowhere else, so moving a
module of the package means mending this file only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from whos_online.presence import (
    PRUNE_BATCH,
    Call,
    _script,
    key,
    prune,
    record,
    snapshot,
    sync_clock,
)

from whos_online import guard
from whos_online.addresses import client_address as parse_client_address
from whos_online.conf import Config, conf, get_config
from whos_online.middleware import WhosOnlineMiddleware
from whos_online.visitors import Visit, Visitor

MIDDLEWARE = "whos_online.middleware.WhosOnlineMiddleware"
TAG = "{% load whos_online %}{% whos_online %}"
__all__ = ["PRUNE_BATCH", "WhosOnlineMiddleware", "key", "prune", "record"]
__all__ += ["snapshot"]


def guard_cookie() -> str:
    return conf.GUARD_COOKIE_NAME


def window() -> int:
    return conf.WINDOW


def guard_holds(request: HttpRequest) -> bool:
    """What the middleware asks of every request before deciding to record:
    reading the guard and whether it holds by Redis' clock."""
    return Visit(request).is_guarded


def client_address(meta: Mapping[str, object]) -> str | None:
    config = get_config()
    return parse_client_address(meta, config.proxy_count, config.trusted_networks)


def identify(request: HttpRequest) -> Visitor | None:
    """Resolve the visitor (kind, stored member) as a record does."""
    return Visit(request).visitor


def guest(request: HttpRequest) -> Visitor:
    visitor = identify(request)
    if visitor is None:
        raise RuntimeError("no guest in the request")
    return visitor


def set_guest_guard(
    response: HttpResponseBase, request: HttpRequest, visitor: Visitor
) -> None:
    config = get_config()
    clock = config.state.clock
    if not clock.label():
        sync_clock()
    guard.issue(
        config,
        response,
        session_key="",
        guest_address=visitor.address or "",
        server_now=clock.now(),
        generation=clock.label(),
        secure=False,
    )


def record_on_masters(config: Config, calls: Sequence[Call]) -> None:
    """Send record scripts through plain pipelines, one to each master of
    a Redis Cluster holding their keys: redis-py's cluster pipeline spends
    three times as long in Python per command, which would make the fill,
    not Redis, the thing measured. The same EVALSHAs a record sends; errors
    raise."""
    client: Any = config.client
    batches: dict[Any, list[Call]] = {}
    for call in calls:
        node = client.get_node_from_key(call.keys[0])
        batches.setdefault(node, []).append(call)
    source, sha = _script("record")
    for node, batch in batches.items():
        pipe = node.redis_connection.pipeline(transaction=False)
        pipe.script_load(source)
        for call in batch:
            pipe.evalsha(sha, len(call.keys), *call.keys, *call.args)
        pipe.execute()
