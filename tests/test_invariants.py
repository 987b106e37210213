"""The invariants presence keeps however its features meet, each found broken
where two features met (issue "Rebuild the core"), through HTTP and the
public API."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock
from tests.redis_servers import (
    RedisServer,
    needs_redis_server,
    on_redis_server,
    redis_server,
)
from whos_online import api
from whos_online.conf import get_config
from whos_online.models import Visibility
from whos_online.store.places import DEVICES_PER_USER

__all__ = ["on_redis_server", "redis_server"]  # fixtures, used by name

pytestmark = pytest.mark.django_db

JSON = "/whos-online/online.json"


def listed(client: Client | None = None, url: str = JSON) -> list[str]:
    """The names a visitor who is not logged in sees."""
    users = (client or Client()).get(url).json()["users"]
    return [user["name"] for user in users]


def lose_redis_data(redis_client: Redis, prefix: str) -> None:
    """What a restart without persistence does to this test's keys."""
    for name in redis_client.scan_iter(match=f"{{{prefix}*"):
        redis_client.delete(name)


# Privacy fails closed.


@pytest.fixture
def invisible_alice(alice: User) -> User:
    Visibility.objects.create(user=alice, invisible=True)
    return alice


def test_an_invisible_users_heartbeat_after_redis_lost_its_data_lists_nobody(
    invisible_alice: User, redis_client: Redis, isolated_presence: str
) -> None:
    browser = Client()
    browser.force_login(invisible_alice)
    browser.get("/")
    lose_redis_data(redis_client, isolated_presence)
    browser.post("/whos-online/heartbeat/")
    assert listed() == []


def test_an_invisible_users_room_visit_after_redis_lost_its_data_lists_nobody(
    invisible_alice: User, redis_client: Redis, isolated_presence: str
) -> None:
    browser = Client()
    browser.force_login(invisible_alice)
    browser.get("/thread/1/")
    lose_redis_data(redis_client, isolated_presence)
    presence.sync_clock()  # within 5 s, the process learns the data is gone
    browser.get("/thread/1/")
    room = presence.snapshot(10, room="thread:1")
    assert room.users == []
    assert room.counts.hidden == 1


def test_thousands_of_invisible_users_cost_a_user_no_more_after_a_loss(
    django_user_model: type[User],
    alice: User,
    redis_client: Redis,
    isolated_presence: str,
) -> None:
    hiders = django_user_model.objects.bulk_create(
        django_user_model(username=f"hider{n}") for n in range(9_000)
    )
    Visibility.objects.bulk_create(
        Visibility(user=user, invisible=True) for user in hiders
    )
    lose_redis_data(redis_client, isolated_presence)
    browser = Client()
    browser.force_login(alice)
    browser.get("/")
    assert listed() == ["alice"]


# A stranger's input costs that stranger alone.


def test_a_flood_past_the_cap_never_raises_the_most_ever_online(
    settings: SettingsWrapper, clock: Clock
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 5
    presence.record_guest("192.0.2.1")
    presence.record_guest("192.0.2.2")
    clock.advance(60)
    presence.record_guest("192.0.2.1")  # the minute's figures: 2 online
    for n in range(50):
        presence.record_guest(f"198.51.100.{n}")  # 2 more counted, then the cap
    clock.advance(60)
    presence.record_guest("192.0.2.1")  # the next minute's: an estimate
    record = presence.most_ever_online()
    assert record is not None and record[0] == 4  # counted, never estimated
    assert presence.snapshot(0).today.most_online == 4


def test_a_flood_of_room_visits_never_pushes_anyone_out_of_a_room(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 10
    for n in range(5):
        presence.record_in_room("thread:1", "guests", f"192.0.2.{n}")
    for n in range(100):
        presence.record_in_room(f"thread:{n % 7 + 2}", "guests", f"2001:db8::{n:x}")
    listed_in_room = presence.snapshot(0, room="thread:1", guest_limit=10).guests
    assert sorted(m for m, _ in listed_in_room) == [f"192.0.2.{n}" for n in range(5)]


# Memory has one bound for all sets together.


def test_rooms_hold_only_members_the_capped_sets_let_in(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 10
    for n in range(100):
        presence.record_in_room(f"thread:{n % 20}", "guests", f"2001:db8::{n:x}")
        presence.record_in_room(f"thread:{n % 20}", "users", str(n))
    held = sum(
        presence.snapshot(0, room=room).counts.total for room in presence.rooms()
    )
    assert held == 10 + 10  # the users' set's and the guests'


def test_a_user_holds_places_from_a_bounded_number_of_devices() -> None:
    for n in range(DEVICES_PER_USER * 3):  # each from a device of its own
        presence.record_in_room(f"thread:{n}", "users", "1")
    held = sum(
        presence.snapshot(0, room=room).counts.total for room in presence.rooms()
    )
    assert held == DEVICES_PER_USER


def test_a_full_site_refuses_newcomers_their_rooms(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    presence.record_in_room("thread:1", "guests", "192.0.2.1")
    presence.record_in_room("thread:2", "guests", "192.0.2.2")
    assert presence.record_in_room("thread:1", "guests", "192.0.2.3") is None
    assert presence.record_in_room("thread:1", "guests", "192.0.2.1") is not None


def test_members_who_left_a_room_make_way_for_newcomers(
    settings: SettingsWrapper, clock: Clock
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    presence.record_in_room("thread:1", "guests", "192.0.2.1")
    clock.advance(100)
    presence.record_in_room("thread:1", "guests", "192.0.2.2")
    clock.advance(get_config().window - 50)  # the first has left
    assert presence.record_in_room("thread:1", "guests", "192.0.2.3") is not None


def test_rooms_nobody_visited_within_the_window_free_their_place(
    settings: SettingsWrapper, clock: Clock
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    presence.record_in_room("thread:1", "users", "1")
    presence.record_in_room("thread:2", "users", "2")
    clock.advance(get_config().window + 1)
    assert presence.record_in_room("thread:3", "users", "3") is not None
    assert presence.record_in_room("thread:3", "users", "4") is not None


def test_a_room_entered_again_after_it_went_idle_counts_its_members_once(
    clock: Clock, redis_client: Redis
) -> None:
    presence.record_in_room("thread:1", "guests", "192.0.2.1")
    clock.advance(get_config().guard_seconds + 1)  # thread:1 went idle
    presence.record_in_room("thread:1", "guests", "192.0.2.2")
    assert presence.snapshot(0, room="thread:1").counts.guests == 1
    assert redis_client.zcard(presence.key("guests", "thread:1")) == 1


# A login is one person.


def test_a_guest_who_logs_in_is_one_visitor_today(alice: User) -> None:
    browser = Client()
    browser.get("/")
    browser.post(f"/login/{alice.pk}/")
    assert browser.get(JSON).json()["today"]["visitors"] == 1


def log_in_on_a_redis_just_started(user: User, redis_client: Redis) -> Client:
    """A guest's first page, then their login, on a Redis that knows the
    record script by then but not the login's."""
    redis_client.script_flush()  # as after a restart: Redis knows no script
    browser = Client()
    browser.get("/")
    browser.post(f"/login/{user.pk}/")
    return browser


def test_a_guest_who_logs_in_on_a_redis_just_started_counts_once_in_the_record(
    alice: User, redis_client: Redis
) -> None:
    browser = log_in_on_a_redis_just_started(alice, redis_client)
    assert browser.get(JSON).json()["record"]["count"] == 1


def test_a_guest_who_logs_in_on_a_redis_just_started_is_one_visitor_today(
    alice: User, redis_client: Redis
) -> None:
    browser = log_in_on_a_redis_just_started(alice, redis_client)
    assert browser.get(JSON).json()["today"]["visitors"] == 1


def test_visitors_today_are_never_fewer_than_those_online_now(alice: User) -> None:
    Client().get("/", REMOTE_ADDR="192.0.2.1")  # a guest who stays a guest
    browser = Client()  # another person at the same address (one household)
    browser.get("/", REMOTE_ADDR="192.0.2.1")
    browser.post(f"/login/{alice.pk}/", REMOTE_ADDR="192.0.2.1")
    Client().get("/", REMOTE_ADDR="192.0.2.1")
    figures = browser.get(JSON, REMOTE_ADDR="192.0.2.1").json()
    assert figures["counts"]["people"] == 2
    assert figures["today"]["visitors"] >= figures["counts"]["people"]


# Prune leaves nothing of those who left.


def test_after_prune_no_set_holds_anyone_who_left(
    alice: User,
    bob: User,
    redis_client: Redis,
    server_now: Callable[[], float],
    isolated_presence: str,
    clock: Clock,
) -> None:
    at_home, at_work = Client(), Client()
    at_home.force_login(alice)
    at_home.get("/thread/1/")
    Client().get("/", REMOTE_ADDR="192.0.2.1")
    clock.advance(100)
    at_work.force_login(alice)
    at_work.get("/")
    presence.record_user(bob.pk)
    clock.advance(get_config().window - 90)  # home, bob and the guest left
    at_work.get("/")
    call_command("prune_online", verbosity=0)
    since = server_now() - get_config().window
    sorted_sets = [
        name
        for name in redis_client.scan_iter(match=f"{{{isolated_presence}*")
        if redis_client.type(name) == b"zset"
    ]
    stale = {
        name: redis_client.zcount(name, "-inf", f"({since}") for name in sorted_sets
    }
    assert {name: count for name, count in stale.items() if count} == {}


# A read never writes, and never fails because a write would.


@pytest.mark.real_redis
@needs_redis_server
def test_reads_answer_while_redis_refuses_writes(
    on_redis_server: RedisServer, alice: User
) -> None:
    presence.record_user(alice.pk)
    with on_redis_server.client() as server:
        server.config_set("maxmemory-policy", "noeviction")
        server.config_set("maxmemory", 1)  # any write is refused now
        try:
            answers = [Client().get(JSON).json() for _ in range(5)]
        finally:
            server.config_set("maxmemory", 0)
    assert [bool(answer["users"]) for answer in answers] == [True] * 5, answers
    assert api.counts().users == 1


def test_no_output_reads_request_user_but_the_requests_one_object() -> None:
    """Every tag, view and endpoint asks the request's one object who the
    page is for (``page.viewer_of``), which is nobody in particular on a
    page a cache may keep: none reads ``request.user`` itself."""
    package = Path(__file__).resolve().parent.parent / "whos_online"
    readers = sorted(
        f"{path.relative_to(package)}:{node.lineno}"
        for path in package.rglob("*.py")
        if path.name != "page.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr == "user"
        and isinstance(node.value, ast.Name)
        and node.value.id == "request"
    )
    assert readers == []
