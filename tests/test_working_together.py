"""Presence where people work together: "N viewing" on every row of a
listing, and not notifying someone who is reading."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.template import engines
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import CommandCounter
from whos_online import api
from whos_online.models import Visibility

pytestmark = pytest.mark.django_db

LISTING = (
    "{% load whos_online %}{% room_counts topics as viewing %}"
    "{% for topic, here in viewing %}{{ topic.name }}={{ here.people }};{% endfor %}"
)


@pytest.fixture
def topics() -> list[Group]:
    return [Group.objects.create(name=f"topic{n}") for n in range(50)]


def room_of(topic: Group) -> str:
    return f"auth.group:{topic.pk}"


def render(topics: list[Group], viewer: object = None) -> str:
    request = RequestFactory().get("/")
    request.user = viewer  # type: ignore[assignment]
    template = engines["django"].from_string(LISTING)
    return template.render({"topics": topics}, request)


def test_each_row_of_a_listing_says_how_many_are_viewing_it(
    topics: list[Group], alice: User, bob: User
) -> None:
    presence.record_in_room(room_of(topics[0]), "users", str(alice.pk))
    presence.record_in_room(room_of(topics[0]), "guests", "192.0.2.1")
    presence.record_in_room(room_of(topics[2]), "users", str(bob.pk))
    shown = render(topics[:3])
    assert shown == "topic0=2;topic1=0;topic2=1;"


@pytest.mark.usefixtures("warm_scripts")
def test_a_listing_of_fifty_rows_costs_one_round_trip_and_one_query(
    topics: list[Group], alice: User, redis_commands: CommandCounter
) -> None:
    for topic in topics[::5]:
        presence.record_in_room(room_of(topic), "users", str(alice.pk))
    redis_commands.reset()
    with CaptureQueriesContext(connection) as captured:
        render(topics)
    assert redis_commands.round_trips == 1
    made = [q for q in captured if "SAVEPOINT" not in q["sql"]]
    assert len(made) == 1  # the listed users' choices


def test_a_user_who_appears_offline_is_not_counted_in_a_row(
    topics: list[Group], alice: User
) -> None:
    presence.record_in_room(room_of(topics[0]), "users", str(alice.pk))
    Visibility.objects.create(user=alice, invisible=True)  # Redis never heard
    assert render(topics[:1]) == "topic0=0;"


def test_the_sites_rule_keeps_users_out_of_the_rows_it_hides_them_from(
    topics: list[Group], alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    presence.record_in_room(room_of(topics[0]), "users", str(alice.pk))
    assert render(topics[:1]) == "topic0=0;"


@pytest.mark.usefixtures("warm_scripts")
def test_an_empty_listing_asks_nothing(redis_commands: CommandCounter) -> None:
    redis_commands.reset()
    assert render([]) == ""
    assert redis_commands.round_trips == 0


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_every_row_counts_none(topics: list[Group]) -> None:
    assert render(topics[:2]) == "topic0=0;topic1=0;"


def test_a_row_whose_room_is_not_valid_counts_none() -> None:
    template = engines["django"].from_string(
        "{% load whos_online %}{% room_counts rooms as viewing %}"
        "{% for room, here in viewing %}{{ room }}={{ here.people }};{% endfor %}"
    )
    assert template.render({"rooms": ["not a room"]}) == "not a room=0;"


def test_the_api_counts_rooms_by_name(topics: list[Group], alice: User) -> None:
    presence.record_in_room("thread:1", "users", str(alice.pk))
    found = api.room_counts(["thread:1", topics[0], "not a room"])
    assert {name: counts.people for name, counts in found.items()} == {
        "thread:1": 1,
        room_of(topics[0]): 0,
    }


# Not notifying someone who is reading.


def test_whoever_is_reading_the_thread_is_not_notified(
    alice: User, bob: User, django_user_model: type[User]
) -> None:
    carol = django_user_model.objects.create_user("carol")
    Client().force_login(alice)
    reading = Client()
    reading.force_login(alice)
    reading.get("/thread/7/")
    assert api.should_notify([alice, bob, carol], "thread:7") == [bob, carol]


def test_a_hidden_reader_is_not_notified_either(alice: User, bob: User) -> None:
    presence.record_in_room("thread:7", "hidden", str(alice.pk))
    assert api.should_notify([alice, bob], "thread:7") == [bob]


@pytest.mark.usefixtures("warm_scripts")
def test_a_batch_of_users_costs_one_round_trip(
    django_user_model: type[User], redis_commands: CommandCounter
) -> None:
    users = [django_user_model.objects.create_user(f"u{n}") for n in range(100)]
    redis_commands.reset()
    api.should_notify(users, "thread:7")
    assert redis_commands.round_trips == 1


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_everyone_is_notified(alice: User, bob: User) -> None:
    assert api.should_notify([alice, bob], "thread:7") == [alice, bob]


def test_a_room_that_is_not_valid_notifies_everyone(alice: User) -> None:
    assert api.should_notify([alice], "not a room") == [alice]


def test_is_viewing_says_who_is_in_the_room(alice: User, bob: User) -> None:
    presence.record_in_room("thread:7", "users", str(alice.pk))
    assert api.is_viewing(alice, "thread:7")
    assert not api.is_viewing(bob, "thread:7")
    assert not api.is_viewing(alice, "not a room")


def test_is_viewing_keeps_a_hidden_reader_from_all_but_staff(
    alice: User, django_user_model: type[User]
) -> None:
    presence.record_in_room("thread:7", "hidden", str(alice.pk))
    staff = django_user_model.objects.create_user("s", is_staff=True)
    assert not api.is_viewing(alice, "thread:7")
    assert api.is_viewing(alice, "thread:7", viewer=staff)


def test_is_viewing_follows_the_sites_rule(
    alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    presence.record_in_room("thread:7", "users", str(alice.pk))
    assert not api.is_viewing(alice, "thread:7")


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_nobody_is_viewing(alice: User) -> None:
    assert not api.is_viewing(alice, "thread:7")


def test_viewers_lists_the_room_as_the_viewer_may_see_it(
    alice: User, bob: User
) -> None:
    presence.record_in_room("thread:7", "users", str(alice.pk))
    presence.record_in_room("thread:7", "hidden", str(bob.pk))
    assert [online.user for online in api.viewers("thread:7")] == [alice]
    assert api.viewers("not a room") == []


def test_no_users_to_notify_asks_nothing(redis_commands: CommandCounter) -> None:
    redis_commands.reset()
    assert api.should_notify([], "thread:7") == []
    assert redis_commands.round_trips == 0
