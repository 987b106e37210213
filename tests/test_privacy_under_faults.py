"""Invisible mode and last-seen privacy hold whatever happens to Redis: a
pause, an open breaker, refused writes, a failover, lost data. Each test
runs a redis-server of its own and does to it what an outage would."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.redis_servers import (
    RedisServer,
    cache_for,
    needs_redis_server,
    on_redis_server,
    redis_server,
    running,
    wait_until,
)
from whos_online import api
from whos_online.models import Visibility

__all__ = ["on_redis_server", "redis_server"]  # fixtures, used by name

pytestmark = [pytest.mark.django_db, pytest.mark.real_redis, needs_redis_server]

VISIBILITY = "/whos-online/visibility/"
JSON = "/whos-online/online.json"


@pytest.fixture
def server(on_redis_server: RedisServer, settings: SettingsWrapper) -> RedisServer:
    settings.WHOS_ONLINE_FAILURE_BACKOFF = 0  # tried again at once, after
    return on_redis_server


def logged_in(user: User) -> Client:
    browser = Client()
    browser.force_login(user)
    browser.get("/")
    return browser


def listed_to_a_guest() -> list[str]:
    """The names a guest is shown; Redis must have answered."""
    answer = Client().get(JSON).json()
    assert answer["available"]
    return [user["name"] for user in answer["users"]]


def listed_in_redis(server: RedisServer) -> tuple[list[bytes], list[bytes]]:
    with server.client() as client:
        visible = client.zrange(presence.key("users"), 0, -1)
        hidden = client.zrange(presence.key("hidden"), 0, -1)
    return visible, hidden


@contextmanager
def writes_paused(server: RedisServer) -> Iterator[None]:
    with server.client() as client:
        client.execute_command("CLIENT", "PAUSE", "3000", "WRITE")
        try:
            yield
        finally:
            client.execute_command("CLIENT", "UNPAUSE")


@contextmanager
def writes_refused(server: RedisServer) -> Iterator[None]:
    with server.client() as client:
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", 1)
        try:
            yield
        finally:
            client.config_set("maxmemory", 0)


def test_a_choice_made_while_writes_are_paused_holds_at_once_and_after(
    server: RedisServer, alice: User
) -> None:
    browser = logged_in(alice)
    with writes_paused(server):
        assert browser.post(VISIBILITY, {"invisible": "1"}).status_code == 204
        # The snapshot counts today's guests with PFCOUNT, which a write
        # pause holds too: the page is served without the list, or with it
        # and the database's word; never with her name.
        assert "alice" not in Client().get(JSON).content.decode()
        assert api.status(alice) == "offline"
    logged_in(alice)  # her phone, after the pause
    assert listed_in_redis(server) == ([], [str(alice.pk).encode()])
    assert listed_to_a_guest() == []


def test_a_choice_made_while_writes_are_refused_holds_at_once_and_after(
    server: RedisServer, alice: User
) -> None:
    browser = logged_in(alice)
    with writes_refused(server):
        assert browser.post(VISIBILITY, {"invisible": "1"}).status_code == 204
        assert listed_to_a_guest() == []
    browser.get("/")  # the toggle dropped her guard: recorded as she chose
    assert listed_in_redis(server) == ([], [str(alice.pk).encode()])


def test_a_choice_made_while_redis_is_down_holds_when_it_comes_back(
    server: RedisServer, alice: User
) -> None:
    browser = logged_in(alice)
    server.stop()
    assert browser.post(VISIBILITY, {"invisible": "1"}).status_code == 204
    server.start()  # empty: it lost its data too
    presence.sync_clock()
    assert listed_to_a_guest() == []
    logged_in(alice)
    assert listed_in_redis(server) == ([], [str(alice.pk).encode()])


def test_a_choice_redis_lost_with_its_data_holds(
    server: RedisServer, alice: User
) -> None:
    browser = logged_in(alice)
    browser.post(VISIBILITY, {"invisible": "1"})
    with server.client() as client:
        client.flushall()
    presence.sync_clock()  # within 5 s, the process learns the data is gone
    browser.get("/")
    assert listed_in_redis(server) == ([], [str(alice.pk).encode()])
    assert listed_to_a_guest() == []


def test_a_hidden_last_seen_stays_hidden_while_writes_are_paused(
    server: RedisServer, alice: User
) -> None:
    """A write pause holds every script, reads too (Redis 6.2 and fakeredis
    know no script flags): the answer waits for the socket's timeout, and
    tells nothing it should not."""
    logged_in(alice)
    Visibility.objects.create(user=alice, hide_last_seen=True)
    with writes_paused(server):
        (row,) = api.statuses([alice]).values()
    assert row.last_seen is None
    (row,) = api.statuses([alice]).values()
    assert (row.last_seen, row.last_seen_label) == (None, "last seen recently")


def test_a_choice_a_promoted_replica_missed_holds(
    server: RedisServer, alice: User, tmp_path: Path, settings: SettingsWrapper
) -> None:
    browser = logged_in(alice)
    replica = RedisServer(tmp_path)
    with running(replica), replica.client() as client:
        client.replicaof("127.0.0.1", server.port)
        wait_until(lambda: copied(client), "the replica's copy", 10)
        client.replicaof("NO", "ONE")  # promoted before the choice reached it
        browser.post(VISIBILITY, {"invisible": "1"})
        settings.CACHES = {**settings.CACHES, "private": cache_for(replica.url)}
        presence.sync_clock()
        assert listed_to_a_guest() == []
        logged_in(alice)
        assert listed_in_redis(replica) == ([], [str(alice.pk).encode()])


def copied(client: Redis) -> bool:
    return bool(client.info("replication").get("master_link_status") == "up") and (
        client.exists(presence.key("users")) == 1
    )
