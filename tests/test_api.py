"""The public Python API, as a view or a serializer would use it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from tests import presence
from whos_online import api

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("staff", is_staff=True)


def test_a_user_seen_just_now_is_online(alice: User) -> None:
    presence.record_user(alice.pk)
    assert api.is_online(alice)
    assert api.status(alice) == "online"
    assert api.last_seen(alice) is not None


def test_a_user_never_seen_is_offline(alice: User) -> None:
    assert not api.is_online(alice)
    assert api.status(alice) == "offline"
    assert api.last_seen(alice) is None


def test_a_user_seen_a_while_ago_is_away(
    alice: User, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", str(alice.pk), 600)
    assert api.status(alice) == "away"
    assert api.is_online(alice)


def test_a_hidden_user_is_offline_to_the_public_and_online_to_staff(
    alice: User, staff: User
) -> None:
    presence.record_user(alice.pk, hidden=True)
    assert api.status(alice) == "offline"
    assert api.last_seen(alice) is None
    assert api.status(alice, viewer=staff) == "online"


def test_statuses_of_many_users_come_by_primary_key(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    found = api.statuses([alice, bob])
    assert {pk: row.status for pk, row in found.items()} == {
        alice.pk: "online",
        bob.pk: "offline",
    }


def test_online_users_are_newest_first(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    assert [online.user for online in api.online_users()] == [bob, alice]
    assert [online.user for online in api.online_users(limit=1)] == [bob]


def test_counts_leave_crawlers_out_of_people(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record_guest("192.0.2.1")
    presence.record("bots", "Googlebot")
    counts = api.counts()
    assert (counts.people, counts.total) == (2, 3)


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_nobody_is_online(alice: User) -> None:
    assert api.status(alice) == "offline"
    assert api.online_users() == []
    assert api.counts().total == 0
