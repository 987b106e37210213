"""Keeps a Redis failure from ever reaching a page.

Everything that serves a page (the middleware, the tags, the endpoints, the
signal receivers) calls Redis through :func:`quietly`. Only Redis' own
failures (a refused connection, a timeout, an error reply) count: they open
the process's circuit breaker, which then leaves Redis alone for
``WHOS_ONLINE_FAILURE_BACKOFF`` seconds, so a dead server costs nothing on
the following requests. Anything else is a bug and is raised as usual; bad
input is refused before it gets here, so no visitor can open the breaker
for the others. With ``WHOS_ONLINE_SHARDS``, what touches one shard (a
record, a room) goes through that shard's breaker, so a master that is down
stops only the shards it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from redis.exceptions import RedisError, ResponseError

from whos_online.state import CircuitBreaker
from whos_online.store import get_store

T = TypeVar("T")
D = TypeVar("D")


def quietly(
    call: Callable[[], T], default: D, breaker: CircuitBreaker | None = None
) -> T | D:
    """``call()``, or ``default`` if Redis is known to be failing or fails now
    (by ``breaker``: the site's unless given). An error reply (a write
    refused at ``maxmemory``, say) gives the default without opening the
    breaker: Redis answers, and what does not write still works. While the
    settings cannot work (``Config.problems``), it is always the default."""
    store = get_store()
    if store.config.problems:
        return default  # settings that cannot work: presence is off
    state = store.state
    breaker = breaker or state.breaker
    if breaker.is_open:
        return default
    try:
        result = call()
    except ResponseError as exc:
        state.refused.warning(
            "reply", "Who's online got an error reply from Redis: %s", exc
        )
        return default
    except RedisError as exc:
        breaker.failed(exc)
        return default
    breaker.succeeded()
    return result
