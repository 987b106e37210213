"""Where the raw Redis client for presence data comes from.

Presence data never goes through the pickling cache API. For a django-redis
alias the app borrows its client (``django_redis.get_redis_connection``,
Sentinel included); for Django's own ``RedisCache`` it builds a client of
its own from the alias's ``LOCATION`` and ``OPTIONS`` with redis-py's
``from_url``. Either way the timeouts are the ones the site set in
``OPTIONS`` (a system check warns when there are none). Where no cache
alias can serve, such as Redis Cluster, ``WHOS_ONLINE_CONNECTION_FACTORY``
names a function that builds the client.
"""

from __future__ import annotations

from typing import Any, cast

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string
from django_redis import get_redis_connection
from django_redis.cache import RedisCache as DjangoRedisPackageCache
from redis import Redis

from whos_online.conf import get_config

# Django's RedisCache takes these itself; every other option is redis-py's.
DJANGO_ONLY_OPTIONS = ("serializer", "pool_class", "parser_class")


def build_client() -> Redis:
    """The client of the connection factory, or of the configured alias."""
    factory = get_config().connection_factory
    if factory is not None:
        client: Redis = import_string(factory)()
        return client
    return client_of_cache(get_config().cache_alias)


def client_of_cache(alias: str) -> Redis:
    backend = caches[alias]
    if isinstance(backend, DjangoRedisPackageCache):
        return get_redis_connection(alias, write=True)  # type: ignore[no-any-return]
    if isinstance(backend, DjangoRedisCache):
        location = _cache_settings(alias)["LOCATION"]
        url = location[0] if isinstance(location, (list, tuple)) else location
        options = cache_options(alias)
        for name in DJANGO_ONLY_OPTIONS:
            options.pop(name, None)
        return Redis.from_url(url, **options)
    raise ImproperlyConfigured(
        f"WHOS_ONLINE_CACHE_ALIAS {alias!r} is not a Redis cache backend."
    )


def _cache_settings(alias: str) -> dict[str, Any]:
    return cast(dict[str, Any], settings.CACHES[alias])


def cache_options(alias: str) -> dict[str, Any]:
    return dict(_cache_settings(alias).get("OPTIONS", {}))


def has_read_timeout(alias: str) -> bool:
    """Whether the alias's OPTIONS bound how long a Redis reply may take."""
    options = cache_options(alias)
    if isinstance(caches[alias], DjangoRedisPackageCache):
        pool_kwargs = options.get("CONNECTION_POOL_KWARGS", {})
        return (
            options.get("SOCKET_TIMEOUT") is not None
            or pool_kwargs.get("socket_timeout") is not None
        )
    return options.get("socket_timeout") is not None
