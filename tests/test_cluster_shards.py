"""WHOS_ONLINE_SHARDS on a real three-master Redis Cluster: six shards, two
on each master, through the public API and the middleware.

The shared cluster of tests/redis_servers.py serves every test but those
that kill a master: each starts a cluster of its own, whose masters keep
serving their slots while one is down (``cluster-require-full-coverage no``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis.crc import key_slot

from tests import presence
from tests.redis_servers import (
    Cluster,
    cluster_in_use,
    real_redis,
    redis_cluster,
    start_cluster,
)
from whos_online.conf import get_config
from whos_online.store import get_store
from whos_online.store.keys import Shard

pytestmark = real_redis

__all__ = ["redis_cluster"]  # a fixture, used by name

SHARDS = 6
GUESTS = [f"198.51.{n // 250}.{n % 250}" for n in range(600)]


def sharded_on(settings: SettingsWrapper, cluster: Cluster) -> Iterator[Cluster]:
    """Presence in SHARDS shards on ``cluster``; this test's keys deleted
    from every master still running afterwards."""
    cluster_in_use.append(cluster)
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "tests.redis_servers.cluster_client"
    settings.WHOS_ONLINE_SHARDS = SHARDS
    prefix = get_config().key_prefix
    yield cluster
    cluster_in_use.remove(cluster)
    for node in cluster.nodes:
        if node.is_running:
            with node.client() as client:
                for name in client.scan_iter(match=f"{{{prefix}*", count=1000):
                    client.delete(name)


@pytest.fixture
def cluster(settings: SettingsWrapper, redis_cluster: Cluster) -> Iterator[Cluster]:
    yield from sharded_on(settings, redis_cluster)


@pytest.fixture
def own_cluster(settings: SettingsWrapper, tmp_path: Path) -> Iterator[Cluster]:
    """A cluster of this test's own, which it may kill a master of."""
    options = ("--cluster-require-full-coverage", "no")
    for started in start_cluster(tmp_path, *options):
        yield from sharded_on(settings, started)


def master_of(cluster: Cluster, shard: Shard) -> int:
    """The port of the master holding ``shard``."""
    return cluster.owners()[key_slot(shard.key("users").encode())]


def reset_stats(cluster: Cluster) -> None:
    """CONFIG RESETSTAT on every master."""
    for node in cluster.nodes:
        with node.client() as client:
            client.config_resetstat()


def evalsha_calls(cluster: Cluster) -> dict[int, int]:
    """How many EVALSHA each master ran since its last CONFIG RESETSTAT."""
    calls = {}
    for node in cluster.nodes:
        with node.client() as client:
            stats = client.info("commandstats").get("cmdstat_evalsha", {})
        calls[node.port] = int(stats.get("calls", 0))
    return calls


def test_six_shards_fall_two_on_each_master(cluster: Cluster) -> None:
    held = Counter(master_of(cluster, shard) for shard in get_store().shards)
    assert sorted(held.values()) == [2, 2, 2]


def test_records_are_spread_so_no_master_runs_over_40_percent(
    cluster: Cluster,
) -> None:
    presence.record_guest(GUESTS[0])  # the script is loaded where it is sent
    reset_stats(cluster)
    for guest in GUESTS:
        presence.record_guest(guest)
    for pk in range(300):
        presence.record_user(pk)
    calls = evalsha_calls(cluster)
    records = len(GUESTS) + 300
    # and each shard's minute figures: two scripts a minute, in two minutes
    assert records <= sum(calls.values()) <= records + 2 * 2 * SHARDS
    assert max(calls.values()) <= 0.4 * sum(calls.values())


def test_requests_through_the_middleware_are_spread_over_the_masters(
    cluster: Cluster,
) -> None:
    reset_stats(cluster)
    for guest in GUESTS[:300]:
        Client().get("/", REMOTE_ADDR=guest)
    calls = evalsha_calls(cluster)
    assert sum(calls.values()) >= 300
    assert max(calls.values()) <= 0.4 * sum(calls.values())


def test_counts_equal_the_members_recorded(cluster: Cluster) -> None:
    users, hidden, guests = range(250), range(1000, 1040), GUESTS
    for pk in users:
        presence.record_user(pk)
    for pk in hidden:
        presence.record_user(pk, hidden=True)
    for guest in guests:
        presence.record_guest(guest)
    presence.record("bots", "Googlebot")
    counts = presence.snapshot(0).counts
    assert (counts.users, counts.hidden, counts.guests, counts.bots) == (
        len(users),
        len(hidden),
        len(guests),
        1,
    )
    assert not counts.is_estimate


def test_lists_merge_the_newest_of_every_master(cluster: Cluster) -> None:
    for pk in range(60):
        presence.record_user(pk)
    listed = presence.snapshot(20).users
    assert [pk for pk, _ in listed] == [str(pk) for pk in range(59, 39, -1)]


def test_the_record_counts_everyone_online_on_every_master(
    cluster: Cluster,
) -> None:
    for guest in GUESTS[:90]:
        presence.record_guest(guest)
    snapshot = presence.snapshot(0)
    assert snapshot.record is not None and snapshot.record[0] == 90
    assert snapshot.today.most_online == 90


def test_each_shards_first_record_of_a_minute_raises_the_sites_record(
    cluster: Cluster,
) -> None:
    for guest in GUESTS[:90]:
        presence.record_guest(guest)
    with cluster.client() as client:
        stored = client.hget(get_store().layout.site_key("record"), "count")
    assert stored is not None and 1 <= int(stored) <= 90


def test_prune_removes_exactly_the_stale_members_of_every_shard(
    cluster: Cluster,
) -> None:
    client = get_store().client
    fresh_guests, stale_guests = GUESTS[:100], GUESTS[100:400]
    for guest in fresh_guests:
        presence.record_guest(guest)
    for pk in range(50):
        presence.record_user(pk)
    old = presence.record_user(49) - get_config().window - 60
    for guest in stale_guests:
        client.zadd(get_store().shard_of(guest).key("guests"), {guest: old})
    stale_users = [str(pk) for pk in range(500, 560)]
    for user in stale_users:
        client.zadd(get_store().shard_of(user).key("users"), {user: old})
    pruned = presence.prune()
    assert pruned.removed["guests"] == len(stale_guests)
    assert sorted(pruned.users_left) == sorted(stale_users)
    held = [client.zcard(shard.key("guests")) for shard in get_store().shards]
    assert sum(held) == len(fresh_guests)  # in the sets, not just the window
    assert presence.prune().removed["guests"] == 0


def kill_master(cluster: Cluster, port: int) -> tuple[set[Shard], set[Shard]]:
    """Stop the master on ``port``, once the client knows every master; the
    shards that went down with it, and the others."""
    presence.snapshot(0)
    shards = set(get_store().shards)
    dead = {shard for shard in shards if master_of(cluster, shard) == port}
    next(node for node in cluster.nodes if node.port == port).stop()
    return dead, shards - dead


def site_master(cluster: Cluster) -> int:
    """The port of the master holding the site's record."""
    return cluster.owners()[key_slot(get_store().layout.site_key("record").encode())]


def other_master(cluster: Cluster) -> int:
    """A master that does not hold the site's record."""
    return next(n.port for n in cluster.nodes if n.port != site_master(cluster))


def test_records_on_the_live_masters_land_while_one_master_is_down(
    own_cluster: Cluster,
) -> None:
    dead, _ = kill_master(own_cluster, other_master(own_cluster))
    alive = [g for g in GUESTS[:60] if get_store().shard_of(g) not in dead]
    lost = next(g for g in GUESTS if get_store().shard_of(g) in dead)
    for guest in alive:
        presence.record_guest(guest)
    assert presence.record("guests", lost) is None  # its master is down
    snapshot = presence.snapshot(0)
    assert snapshot.counts.guests == len(alive)
    assert snapshot.record is not None and snapshot.record[0] == len(alive)


def test_pages_render_and_only_the_dead_masters_breakers_open(
    own_cluster: Cluster,
) -> None:
    dead, alive = kill_master(own_cluster, other_master(own_cluster))
    guests = GUESTS[:30]
    for guest in guests:
        assert Client().get("/", REMOTE_ADDR=guest).status_code == 200
    page = Client().get("/widget/", REMOTE_ADDR=guests[0])
    landed = sum(get_store().shard_of(g) in alive for g in guests)
    assert page.status_code == 200
    assert f"{landed} guests" in page.content.decode()
    breakers = get_store().state.shard_breakers
    assert {s for s in get_store().shards if breakers[s.index].is_open} == dead
    assert not get_store().state.breaker.is_open


def test_counts_are_shown_while_the_master_of_the_record_is_down(
    own_cluster: Cluster,
) -> None:
    dead, _ = kill_master(own_cluster, site_master(own_cluster))
    alive = [g for g in GUESTS[:60] if get_store().shard_of(g) not in dead]
    for guest in GUESTS[:60]:
        Client().get("/", REMOTE_ADDR=guest)
    snapshot = presence.snapshot(0)
    assert (snapshot.counts.guests, snapshot.record) == (len(alive), None)
    assert not get_store().state.breaker.is_open
