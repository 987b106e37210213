"""One clock for the whole site: Redis' own, not each web server's.

Last-seen scores are taken from the Redis server's TIME inside the Lua
scripts, so web servers whose clocks are hours apart still agree on who was
seen last. The application's clock is skewed here by patching time.time;
the Redis server is a real one of this test's own, since an in-process fake
would follow the patched clock too.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from django.test import Client

from tests import presence
from tests.redis_servers import RedisServer, on_redis_server, real_redis, redis_server

pytestmark = real_redis

__all__ = ["on_redis_server", "redis_server"]  # fixtures, used by name

HOURS = 3600.0
REAL_TIME = time.time


@pytest.fixture
def skew(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Put this process's clock ``seconds`` off, like a web server whose
    clock drifted."""

    def set_skew(seconds: float) -> None:
        monkeypatch.setattr(time, "time", lambda: REAL_TIME() + seconds)

    return set_skew


def redis_time(server: RedisServer) -> float:
    with server.client() as client:
        seconds, micros = client.time()
    return float(seconds + micros / 1_000_000)


def test_the_skew_is_in_effect(skew: Callable[[float], None]) -> None:
    skew(3 * HOURS)
    assert time.time() - REAL_TIME() == pytest.approx(3 * HOURS, abs=1)


def test_a_score_is_the_redis_servers_time_not_the_web_servers(
    on_redis_server: RedisServer, skew: Callable[[float], None]
) -> None:
    skew(-5 * HOURS)
    seen = presence.record_user(1)
    assert seen == pytest.approx(redis_time(on_redis_server), abs=1)
    assert abs(seen - time.time()) > 4 * HOURS


def test_a_visit_through_the_middleware_is_scored_by_redis(
    on_redis_server: RedisServer, skew: Callable[[float], None]
) -> None:
    skew(7 * HOURS)
    Client().get("/", REMOTE_ADDR="192.0.2.1")
    with on_redis_server.client() as client:
        score = client.zscore(presence.key("guests"), "192.0.2.1")
    assert score == pytest.approx(redis_time(on_redis_server), abs=1)


def test_a_readers_place_in_a_room_is_kept_by_redis_time(
    on_redis_server: RedisServer, skew: Callable[[float], None]
) -> None:
    skew(7 * HOURS)
    reader = Client(REMOTE_ADDR="192.0.2.1")
    reader.get("/thread/1/")
    reader.get("/thread/2/")  # a move, by the time the process learnt from Redis
    with on_redis_server.client() as client:
        until = client.zscore(presence.key("guests", "thread:2"), "d: 192.0.2.1")
    guard = 300
    assert until == pytest.approx(redis_time(on_redis_server) + guard + 1, abs=2)


def test_web_servers_with_skewed_clocks_agree_on_who_was_seen_last(
    on_redis_server: RedisServer, skew: Callable[[float], None]
) -> None:
    # Visits arrive in this order at servers whose clocks are far apart.
    for member, seconds in [
        ("ahead", 2 * HOURS),
        ("behind", -2 * HOURS),
        ("on_time", 0),
    ]:
        skew(seconds)
        presence.record_guest(member)
        time.sleep(0.002)
    listed = presence.snapshot(0, guest_limit=3).guests
    assert [member for member, _ in listed] == ["on_time", "behind", "ahead"]


def test_a_skewed_web_server_still_counts_others_as_online(
    on_redis_server: RedisServer, skew: Callable[[float], None]
) -> None:
    skew(-2 * HOURS)
    presence.record_user(1)
    skew(2 * HOURS)
    assert presence.snapshot(limit=10).counts.users == 1
    assert presence.last_seen(1) == pytest.approx(redis_time(on_redis_server), abs=1)


@pytest.mark.django_db
@pytest.mark.parametrize("hours", [1, -1])
def test_a_user_browsing_across_servers_an_hour_apart_stays_listed(
    on_redis_server: RedisServer, skew: Callable[[float], None], hours: int
) -> None:
    """One browser, its requests served in turn by an on-time web server and
    one an hour off (each a process of its own: what it learnt is forgotten).
    Each honours the other's guard, and neither stops the other recording."""
    from django.contrib.auth import get_user_model

    from whos_online.conf import get_config

    alice = get_user_model().objects.create_user("alice")
    browser = Client()
    browser.force_login(alice)
    recorded_at = []
    for server_skew in (0, hours * HOURS, 0, hours * HOURS):
        skew(server_skew)
        get_config.cache_clear()  # another process
        browser.get("/")
        recorded_at.append(presence.last_seen(alice.pk))
    assert len(set(recorded_at)) == 1  # recorded once, then guarded everywhere
    assert recorded_at[0] == pytest.approx(redis_time(on_redis_server), abs=5)
