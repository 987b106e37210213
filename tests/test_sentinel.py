"""Redis Sentinel, through django-redis' SentinelClient, on real servers.

The test run starts a master, its replica and one Sentinel on loopback
ports. The failover test stops the master for good; Sentinel promotes the
replica and recording resumes without a restart, because the connection
pool asks Sentinel for the master again when it reconnects.
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper
from redis.sentinel import SentinelConnectionPool

from tests import presence
from tests.redis_servers import (
    TIMEOUTS,
    SentinelSetup,
    real_redis,
    redis_sentinel,
    wait_until,
)
from whos_online.store import get_store

pytestmark = real_redis

__all__ = ["redis_sentinel"]  # a fixture, used by name

FAILOVER_TIMEOUT = 20.0


def sentinel_cache(setup: SentinelSetup) -> dict[str, Any]:
    """What a site puts in CACHES to reach Redis through Sentinel."""
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": f"redis://{setup.service}/0",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.SentinelClient",
            "CONNECTION_FACTORY": "django_redis.pool.SentinelConnectionFactory",
            "SENTINELS": [("127.0.0.1", setup.sentinel.port)],
            **TIMEOUTS,
        },
    }


@pytest.fixture(autouse=True)
def through_sentinel(
    settings: SettingsWrapper, redis_sentinel: SentinelSetup
) -> SentinelSetup:
    settings.CACHES = {**settings.CACHES, "sentinel": sentinel_cache(redis_sentinel)}
    settings.WHOS_ONLINE_CACHE_ALIAS = "sentinel"
    settings.WHOS_ONLINE_FAILURE_BACKOFF = 0
    return redis_sentinel


def test_the_client_asks_sentinel_for_the_master() -> None:
    pool = get_store().client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.is_master


def test_the_client_keeps_the_caches_timeouts() -> None:
    kwargs = get_store().client.connection_pool.connection_kwargs
    assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"]) == (0.25, 0.25)


def test_visits_are_recorded_on_the_master(through_sentinel: SentinelSetup) -> None:
    presence.record_user(1)
    presence.record_guest("192.0.2.1")
    master = next(
        server
        for server in (through_sentinel.master, through_sentinel.replica)
        if server.port == through_sentinel.master_port()
    )
    with master.client() as client:
        assert client.zrange(presence.key("users"), 0, -1) == [b"1"]
    assert presence.snapshot(limit=10, guest_limit=10).counts.total == 2


def record_through_breaker(member: str) -> bool:
    return presence.record("guests", member) is not None


def test_recording_resumes_after_sentinel_promotes_the_replica(
    through_sentinel: SentinelSetup,
) -> None:
    setup = through_sentinel
    assert record_through_breaker("192.0.2.1")
    old_master = setup.master_port()
    assert old_master == setup.master.port, "run before any other failover"
    # Replication is async: wait until the replica has it, in waits shorter
    # than the client's 0.25 s read timeout so a loaded machine cannot trip it.
    wait_until(lambda: get_store().client.wait(1, 100) >= 1, "replication", 10)

    setup.master.stop()
    waited = wait_until(
        lambda: setup.master_port() != old_master, "failover", FAILOVER_TIMEOUT
    )
    assert setup.master_port() == setup.replica.port
    wait_until(lambda: record_through_breaker("192.0.2.2"), "recording", 5)

    print(f"Sentinel promoted the replica {waited:.1f} s after the master stopped")
    with setup.replica.client() as client:
        assert client.zscore(presence.key("guests"), "192.0.2.2") is not None
        assert client.zscore(presence.key("guests"), "192.0.2.1") is not None
