"""Which Redis client presence data goes through."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django_redis import get_redis_connection
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from whos_online import checks
from whos_online.store import get_store


def test_django_redis_is_supported() -> None:
    presence.record_user(1)
    assert presence.snapshot(10).counts.users == 1


def test_djangos_own_redis_cache_is_supported(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "builtin"
    presence.record_user(1)
    assert presence.snapshot(10).counts.users == 1


def test_djangos_own_redis_cache_keeps_its_timeouts(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "builtin"
    kwargs = get_store().client.connection_pool.connection_kwargs
    assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"]) == (0.25, 0.25)


def test_django_redis_keeps_its_timeouts() -> None:
    kwargs = get_store().client.connection_pool.connection_kwargs
    assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"]) == (0.25, 0.25)


def test_a_cache_that_is_not_redis_is_refused(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "locmem"
    with pytest.raises(ImproperlyConfigured, match="not a Redis cache backend"):
        get_store().client  # noqa: B018  (building it is what refuses)


def test_the_client_is_built_once_and_reused() -> None:
    assert get_store().client is get_store().client


def test_a_connection_factory_builds_the_client(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "tests.test_connection.the_default_client"
    assert get_store().client is the_default_client()


def test_with_a_connection_factory_the_cache_alias_is_not_checked(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "tests.test_connection.the_default_client"
    settings.WHOS_ONLINE_CACHE_ALIAS = "locmem"
    assert checks.check_cache() == []


def the_default_client() -> Redis:
    """A connection factory, as a site names one in settings."""
    return get_redis_connection("default")  # type: ignore[no-any-return]
