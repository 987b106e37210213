"""Where the raw Redis client for presence data comes from.

Presence data never goes through the pickling cache API: the app borrows the
raw client of a Django cache alias whose backend is django-redis or Django's
own ``RedisCache`` (a Sentinel-backed django-redis alias included), and gives
it short timeouts of its own so that a slow Redis delays a page by a fraction
of a second at most. Where no cache alias can serve, such as Redis Cluster,
``WHOS_ONLINE_CONNECTION_FACTORY`` names a function that builds the client.
"""

from __future__ import annotations

import functools
from typing import Any

from django.core.cache import BaseCache, caches
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string
from redis import ConnectionPool, Redis
from redis.sentinel import SentinelConnectionPool

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
    """The client for the configured alias, or the one the connection factory
    builds; cached until a setting changes."""
    factory = conf.CONNECTION_FACTORY
    if factory is not None:
        return _client_of_factory(factory)
    client = _client_of_cache(conf.CACHE_ALIAS)
    return _with_timeout(client, conf.SOCKET_TIMEOUT)


def _client_of_factory(path: str) -> Redis:
    """What the function at ``path`` returns, used as it is: it sets its own
    timeouts. A ``redis.cluster.RedisCluster`` serves like a ``Redis``."""
    client: Redis = import_string(path)()
    return client


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


# What redis-py's pool remembers of its first settings, to return to after a
# maintenance notification; a copy must not return to the cache's timeouts.
_ORIGINALS = ("orig_host_address", "orig_socket_timeout", "orig_socket_connect_timeout")


def _with_timeout(client: Redis, timeout: float | None) -> Redis:
    """A client on a pool of its own whose connections time out after ``timeout``.

    Only a plain ``ConnectionPool`` and a ``SentinelConnectionPool`` (which
    keeps asking the same Sentinels for the master) can be copied faithfully;
    any other pool (a site's own subclass) is used as it is, with its own
    timeouts.
    """
    pool = client.connection_pool
    if timeout is None or type(pool) not in (ConnectionPool, SentinelConnectionPool):
        return client
    kwargs: dict[str, Any] = {**pool.connection_kwargs, "socket_timeout": timeout}
    for name in _ORIGINALS:  # so that the copy remembers its own timeouts
        kwargs.pop(name, None)
    if "path" not in kwargs:  # Unix sockets have no connect timeout
        kwargs["socket_connect_timeout"] = timeout
    kwargs.update(
        connection_class=pool.connection_class, max_connections=pool.max_connections
    )
    if isinstance(pool, SentinelConnectionPool):
        return Redis(connection_pool=_sentinel_pool(pool, kwargs))
    return Redis(connection_pool=ConnectionPool(**kwargs))


def _sentinel_pool(
    pool: SentinelConnectionPool, kwargs: dict[str, Any]
) -> SentinelConnectionPool:
    """A copy of ``pool`` with ``kwargs``, asking the same Sentinels for the
    same service; its connections find the master again after a failover."""
    kwargs.pop("connection_pool")  # the old pool's own link to the Sentinels
    return SentinelConnectionPool(  # type: ignore[no-untyped-call]
        pool.service_name,
        pool.sentinel_manager,
        is_master=pool.is_master,
        check_connection=pool.check_connection,
        **kwargs,
    )
