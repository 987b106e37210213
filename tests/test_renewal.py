"""A returning visitor, whose guard ran out but names their last record, is
renewed with plain commands instead of the record script; whenever Redis'
answer shows the renewal did not leave them where the script would, the
script records them."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User
from django.test import Client
from redis import Redis

from tests import presence
from tests.conftest import Clock, CommandCounter
from tests.test_signals import Heard, came_online
from whos_online.conf import get_config

__all__ = ["came_online"]  # a fixture, used by name

pytestmark = pytest.mark.django_db

ADDRESS = "192.0.2.7"


def guard_runs_out(clock: Clock) -> None:
    """The guard runs out, on a busy site: other requests keep this process
    informed of Redis' clock."""
    clock.advance(get_config().guard_seconds + 1)
    presence.sync_clock()


def test_a_returning_guest_is_renewed_without_the_script(
    clock: Clock, redis_commands: CommandCounter
) -> None:
    browser = Client()
    browser.get("/", REMOTE_ADDR=ADDRESS)
    first = presence.snapshot(0, guest_limit=1).guests[0][1]
    guard_runs_out(clock)
    redis_commands.commands.clear()
    redis_commands.round_trips = 0
    browser.get("/", REMOTE_ADDR=ADDRESS)
    assert "EVALSHA" not in redis_commands.commands
    assert redis_commands.round_trips == 1
    assert presence.snapshot(0, guest_limit=1).guests[0][1] > first


def test_a_returning_user_is_renewed_without_the_script(
    alice: User, clock: Clock, redis_commands: CommandCounter
) -> None:
    browser = Client()
    browser.force_login(alice)
    browser.get("/")
    guard_runs_out(clock)
    redis_commands.commands.clear()
    browser.get("/")
    assert "EVALSHA" not in redis_commands.commands
    assert presence.last_seen(alice.pk) == pytest.approx(
        presence.snapshot(0).now, abs=1
    )


def test_a_guest_gone_from_redis_is_recorded_by_the_script(
    clock: Clock, redis_client: Redis
) -> None:
    browser = Client()
    browser.get("/", REMOTE_ADDR=ADDRESS)
    redis_client.zrem(presence.key("guests"), ADDRESS)
    guard_runs_out(clock)
    browser.get("/", REMOTE_ADDR=ADDRESS)
    assert [guest for guest, _ in presence.snapshot(0, guest_limit=5).guests] == [
        ADDRESS
    ]


def test_a_user_who_left_the_window_comes_online_again(
    alice: User, clock: Clock, came_online: Heard
) -> None:
    browser = Client()
    browser.force_login(alice)
    browser.get("/")
    clock.advance(get_config().window + 1)
    browser.get("/")
    assert len(came_online.payloads) == 2


def test_the_first_visit_after_midnight_counts_in_the_new_day(clock: Clock) -> None:
    browser = Client()
    clock.advance(86400 - time.time() % 86400 - 100)  # 100 s before midnight
    browser.get("/", REMOTE_ADDR=ADDRESS)
    guard_runs_out(clock)
    browser.get("/", REMOTE_ADDR=ADDRESS)
    assert presence.snapshot(0).today.guests == 1


def test_a_renewal_on_a_page_without_a_label_keeps_the_users_location(
    alice: User, clock: Clock
) -> None:
    browser = Client()
    browser.force_login(alice)
    browser.get("/forum/")
    guard_runs_out(clock)
    browser.get("/")
    assert presence.snapshot(1).where[str(alice.pk)].startswith(b"Reading the forum")


def test_a_user_seen_on_no_session_is_renewed_too(
    alice: User, clock: Clock, redis_commands: CommandCounter
) -> None:
    first = presence.record_user(alice.pk)
    clock.advance(1)
    redis_commands.commands.clear()
    stamp = presence.record("users", str(alice.pk), last_recorded=first)
    assert stamp is not None and not stamp.entered
    assert "EVALSHA" not in redis_commands.commands


def test_a_process_asks_once_a_minute_whether_to_keep_the_minutes_figures(
    clock: Clock, redis_commands: CommandCounter
) -> None:
    first, second = Client(), Client()
    first.get("/", REMOTE_ADDR=ADDRESS)
    second.get("/", REMOTE_ADDR="192.0.2.8")
    clock.advance(60 - time.time() % 60 + 5)  # early in a minute
    guard_runs_out(clock)
    presence.record_guest("192.0.2.9")  # the minute's first record keeps them
    redis_commands.commands.clear()
    kept = redis_commands.minute_scripts
    first.get("/", REMOTE_ADDR=ADDRESS)
    second.get("/", REMOTE_ADDR="192.0.2.8")
    assert redis_commands.commands.count("SET") == 1
    assert redis_commands.minute_scripts == kept  # kept already


def test_a_returning_user_who_appears_offline_is_renewed_without_the_script(
    alice: User, clock: Clock, redis_client: Redis, redis_commands: CommandCounter
) -> None:
    browser = Client()
    browser.force_login(alice)
    browser.post("/whos-online/visibility/", {"invisible": "1"})
    guard_runs_out(clock)
    browser.get("/")
    guard_runs_out(clock)
    redis_commands.commands.clear()
    browser.get("/")
    assert "EVALSHA" not in redis_commands.commands
    assert redis_client.zrange(presence.key("hidden"), 0, -1) == [
        str(alice.pk).encode()
    ]
    assert redis_client.zcard(presence.key("users")) == 0


def test_a_user_who_appeared_offline_elsewhere_is_moved_when_they_return(
    alice: User, clock: Clock, redis_client: Redis
) -> None:
    laptop, phone = Client(), Client()
    laptop.force_login(alice)
    laptop.get("/")
    phone.force_login(alice)
    phone.post("/whos-online/visibility/", {"invisible": "1"})
    redis_client.zadd(presence.key("users"), {str(alice.pk): time.time()})
    redis_client.zrem(presence.key("hidden"), str(alice.pk))
    guard_runs_out(clock)
    laptop.get("/")
    assert redis_client.zrange(presence.key("hidden"), 0, -1) == [
        str(alice.pk).encode()
    ]
    assert redis_client.zcard(presence.key("users")) == 0


# One contract for the two ways a record is made: the renewal's plain
# commands must leave Redis exactly as record.lua leaves it.


def redis_state(redis_client: Redis, prefix: str) -> dict[str, object]:
    """Every key of this test and what it holds, scores and expiries aside."""
    state: dict[str, object] = {}
    for raw in redis_client.scan_iter(match=f"{{{prefix}*", count=1000):
        key = raw.decode().removeprefix(f"{{{prefix}}}:")
        kind = bytes(redis_client.type(raw)).decode()  # type: ignore[arg-type]
        if kind == "zset":
            state[key] = redis_client.zrange(raw, 0, -1)
        elif kind == "set":
            state[key] = sorted(redis_client.smembers(raw))
        elif kind == "hash":
            state[key] = sorted(redis_client.hkeys(raw))
        else:  # strings: HyperLogLogs and markers
            state[key] = kind
    return state


@pytest.mark.parametrize(
    ("kind", "member", "device"),
    [
        ("guests", ADDRESS, ""),
        ("users", "1", "d1"),
        ("hidden", "2", "d2"),
    ],
)
def test_a_renewal_leaves_redis_as_the_script_would(
    kind: presence.Kind,
    member: str,
    device: str,
    clock: Clock,
    redis_client: Redis,
    isolated_presence: str,
    redis_commands: CommandCounter,
) -> None:
    start, began = clock.ahead, time.perf_counter()
    worlds = []
    for renewed in (True, False):
        for raw in redis_client.scan_iter(match=f"{{{isolated_presence}*"):
            redis_client.delete(raw)
        # Each world at the same moment, so that one does not cross into the
        # next minute (its keys are named by the minute) while the other did not.
        clock.ahead = start - (time.perf_counter() - began)
        first = presence.record(kind, member, device=device)
        assert first is not None
        guard_runs_out(clock)
        redis_commands.commands.clear()
        last = first.now if renewed else None
        presence.record(kind, member, device=device, last_recorded=last)
        assert ("EVALSHA" in redis_commands.commands) is not renewed
        worlds.append(redis_state(redis_client, isolated_presence))
    assert worlds[0] == worlds[1]
