"""Redis Cluster, through WHOS_ONLINE_CONNECTION_FACTORY, on a real cluster.

The test run starts three masters on loopback ports and joins them with
``redis-cli --cluster create``; every key of a site shares one hash tag, so
each Lua script runs on the master that owns the site's slot.
"""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from typing import cast

import pytest
from django.core.management import call_command
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis.cluster import RedisCluster
from redis.crc import key_slot

from tests import presence
from tests.redis_servers import Cluster, cluster_in_use, real_redis, redis_cluster
from whos_online import checks
from whos_online.conf import get_config
from whos_online.store import get_store, scripts

pytestmark = real_redis

__all__ = ["redis_cluster"]  # a fixture, used by name

# Every name presence.key() is given, rooms included.
KEY_NAMES = (
    "users",
    "hidden",
    "guests",
    "bots",
    "record",
    "history",
    "rooms",
    "meta",
    "invisible",
)


@pytest.fixture(autouse=True)
def on_cluster(
    settings: SettingsWrapper, redis_cluster: Cluster
) -> Iterator[RedisCluster]:
    """Presence data on the test cluster; yields a client to look at it with."""
    cluster_in_use.append(redis_cluster)
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "tests.redis_servers.cluster_client"
    with redis_cluster.client() as client:
        yield client
        client.delete(*site_keys())  # one slot, so one command
    cluster_in_use.remove(redis_cluster)


def site_keys() -> list[str]:
    return [
        *(presence.key(name) for name in KEY_NAMES),
        *(presence.key(kind, "thread:1") for kind in presence.KINDS),
    ]


def test_the_factory_builds_the_client() -> None:
    assert isinstance(cast(object, get_store().client), RedisCluster)


def test_every_key_of_a_site_maps_to_one_slot(on_cluster: RedisCluster) -> None:
    slots = {key_slot(name.encode()) for name in site_keys()}
    assert len(slots) == 1
    assert {on_cluster.cluster_keyslot(name) for name in site_keys()} == slots


def test_sites_with_prefixes_of_their_own_spread_over_the_masters(
    settings: SettingsWrapper, redis_cluster: Cluster
) -> None:
    owners = redis_cluster.owners()
    masters = set()
    for n in range(30):
        settings.WHOS_ONLINE_KEY_PREFIX = f"site{n}"
        masters.add(owners[key_slot(presence.key("users").encode())])
    assert masters == {node.port for node in redis_cluster.nodes}


def test_users_and_guests_are_recorded_and_counted() -> None:
    presence.record_user(1)
    presence.record_user(2, hidden=True)
    presence.record_guest("192.0.2.1")
    counts = presence.snapshot(limit=10, hidden_limit=10, guest_limit=10).counts
    assert (counts.users, counts.hidden, counts.guests) == (1, 1, 1)


def test_a_snapshot_lists_members_newest_first() -> None:
    for pk in (1, 2, 3):
        presence.record_user(pk)
    assert [member for member, _ in presence.snapshot(limit=10).users] == [
        "3",
        "2",
        "1",
    ]


def test_the_record_high_is_kept() -> None:
    for n in range(1, 4):
        presence.record_guest(f"192.0.2.{n}")
    record = presence.most_ever_online()
    assert record is not None and record[0] == 3


def test_last_seen_reads_the_users_score() -> None:
    seen = presence.record_user(7)
    assert presence.last_seen(7) == pytest.approx(seen)
    assert presence.last_seen(8) is None


def test_prune_removes_members_seen_before_the_window(
    on_cluster: RedisCluster,
) -> None:
    now = presence.record_user(1)
    on_cluster.zadd(presence.key("users"), {"2": now - 10 * get_config().window})
    assert presence.prune().removed["users"] == 1
    assert on_cluster.zrange(presence.key("users"), 0, -1) == [b"1"]


def test_the_prune_command_runs_against_the_cluster() -> None:
    presence.record_user(1)
    out = StringIO()
    call_command("prune_online", stdout=out)
    assert presence.snapshot(limit=1).counts.users == 1


def test_rooms_are_recorded_and_listed() -> None:
    presence.record_in_room("thread:1", "users", "1")
    assert presence.rooms() == ["thread:1"]
    assert presence.snapshot(1, room="thread:1").counts.users == 1


def test_scripts_are_loaded_again_after_a_script_flush(
    on_cluster: RedisCluster,
) -> None:
    presence.record_user(1)
    on_cluster.script_flush()
    presence.record_user(2)
    assert presence.snapshot(limit=10).counts.users == 2


def test_a_visit_through_the_middleware_is_recorded(
    on_cluster: RedisCluster,
) -> None:
    Client().get("/", REMOTE_ADDR="192.0.2.9")
    assert on_cluster.zrange(presence.key("guests"), 0, -1) == [b"192.0.2.9"]


def test_the_cache_checks_do_not_apply() -> None:
    assert checks.check_cache() == []


def test_every_script_can_be_loaded_ahead_on_every_master(
    redis_cluster: Cluster,
) -> None:
    presence.load_scripts()
    record = scripts.source_of("record")[1]  # the prelude and the script
    for node in redis_cluster.nodes:
        with node.client() as master:
            assert master.script_exists(record) == [True]
