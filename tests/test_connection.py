"""Where the Redis client comes from, and its timeouts."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from whos_online import presence
from whos_online.connection import _with_timeout, get_client


def test_django_redis_is_supported() -> None:
    presence.record_user(1)
    assert presence.snapshot(1).counts.users == 1


def test_djangos_own_redis_cache_is_supported(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "builtin"
    presence.record_user(1)
    assert presence.snapshot(1).counts.users == 1


def test_a_cache_that_is_not_redis_is_refused(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "locmem"
    with pytest.raises(ImproperlyConfigured, match="'locmem' is not a Redis cache"):
        get_client()


def pool_timeouts(client: Redis) -> tuple[object, object]:
    kwargs = client.connection_pool.connection_kwargs
    return kwargs.get("socket_timeout"), kwargs.get("socket_connect_timeout")


def test_connections_time_out_after_a_quarter_second_by_default() -> None:
    assert pool_timeouts(get_client()) == (0.25, 0.25)


def test_the_timeout_follows_the_setting(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_SOCKET_TIMEOUT = 1.5
    assert pool_timeouts(get_client()) == (1.5, 1.5)


def test_a_timeout_of_none_keeps_the_caches_own_pool(settings: SettingsWrapper) -> None:
    from django_redis import get_redis_connection

    settings.WHOS_ONLINE_SOCKET_TIMEOUT = None
    assert get_client() is get_redis_connection("default")


def test_the_client_is_reused_until_a_setting_changes(
    settings: SettingsWrapper,
) -> None:
    first = get_client()
    assert get_client() is first
    settings.WHOS_ONLINE_SOCKET_TIMEOUT = 2
    assert get_client() is not first


def test_unix_socket_connections_get_the_read_timeout_only() -> None:
    client = _with_timeout(Redis(unix_socket_path="/run/redis.sock"), 0.5)
    assert pool_timeouts(client) == (0.5, None)


def test_pools_it_cannot_copy_are_used_as_they_are() -> None:
    from redis import BlockingConnectionPool

    client = Redis(connection_pool=BlockingConnectionPool())  # type: ignore[no-untyped-call]
    assert _with_timeout(client, 0.5) is client
