"""Where the raw Redis client for presence data comes from.

Presence data never goes through the pickling cache API: the app borrows the
raw client of a Django cache alias whose backend is django-redis or Django's
own ``RedisCache``, and gives it short timeouts of its own so that a slow
Redis delays a page by a fraction of a second at most.
"""

from __future__ import annotations

import functools
from typing import Any

from django.core.cache import BaseCache, caches
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.exceptions import ImproperlyConfigured
from redis import ConnectionPool, Redis

from whos_online.conf import conf

try:
    from django_redis.cache import RedisCache as DjangoRedisPackageCache
except ImportError:  # pragma: no cover - django-redis is a dependency
    DjangoRedisPackageCache = None


def is_redis_backend(backend: BaseCache) -> bool:
    if isinstance(backend, DjangoRedisCache):
        return True
    return DjangoRedisPackageCache is not None and isinstance(
        backend, DjangoRedisPackageCache
    )


@functools.cache
def get_client() -> Redis:
    """The client for the configured alias; cached until a setting changes."""
    client = _client_of_cache(conf.CACHE_ALIAS)
    return _with_timeout(client, conf.SOCKET_TIMEOUT)


def _client_of_cache(alias: str) -> Redis:
    backend = caches[alias]
    if isinstance(backend, DjangoRedisCache):
        return backend._cache.get_client(None, write=True)
    if DjangoRedisPackageCache is not None and isinstance(
        backend, DjangoRedisPackageCache
    ):
        return backend.client.get_client(write=True)  # type: ignore[no-any-return]
    raise ImproperlyConfigured(
        f"WHOS_ONLINE_CACHE_ALIAS {alias!r} is not a Redis cache backend."
    )


def _with_timeout(client: Redis, timeout: float | None) -> Redis:
    """A client on a pool of its own whose connections time out after ``timeout``.

    Only a plain ``ConnectionPool`` can be copied faithfully; any other pool
    (Sentinel, a site's own subclass) is used as it is, with its own timeouts.
    """
    pool = client.connection_pool
    if timeout is None or type(pool) is not ConnectionPool:
        return client
    kwargs: dict[str, Any] = {**pool.connection_kwargs, "socket_timeout": timeout}
    if "path" not in kwargs:  # Unix sockets have no connect timeout
        kwargs["socket_connect_timeout"] = timeout
    own_pool = ConnectionPool(
        connection_class=pool.connection_class,
        max_connections=pool.max_connections,
        **kwargs,
    )
    return Redis(connection_pool=own_pool)
