"""Statuses and last-seen times, as viewers may see them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online.gate import status_for
from whos_online.roster import online_roster, presence_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("staff", is_staff=True)


@pytest.mark.parametrize(
    ("ago", "status"),
    [(0, "online"), (299, "online"), (300, "away"), (899, "away"), (900, "offline")],
)
def test_status_follows_away_after_and_the_window(ago: float, status: str) -> None:
    assert status_for(1000.0 - ago, 1000.0) == status


def test_status_of_someone_never_seen_is_offline() -> None:
    assert status_for(None, 1000.0) == "offline"


def test_status_thresholds_follow_the_settings(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_AWAY_AFTER = 10
    assert status_for(985.0, 1000.0) == "away"


def test_presence_of_gives_each_users_status_and_last_seen(
    alice: User, bob: User, seen_ago: Callable[[str, str, float], None]
) -> None:
    presence.record_user(alice.pk)
    seen_ago("users", str(bob.pk), 600)
    rows = presence_of([alice, bob])
    assert [(row.user, row.status) for row in rows] == [
        (alice, "online"),
        (bob, "away"),
    ]
    assert all(row.last_seen is not None for row in rows)


def test_hidden_users_look_offline_to_everyone_but_staff(
    alice: User, staff: User
) -> None:
    presence.record_user(alice.pk, hidden=True)
    (public,) = presence_of([alice], viewer=None)
    assert (public.status, public.last_seen) == ("offline", None)
    (seen_by_staff,) = presence_of([alice], viewer=staff)
    assert seen_by_staff.status == "online"


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_everyone_is_offline(alice: User) -> None:
    (row,) = presence_of([alice])
    assert (row.status, row.last_seen) == ("offline", None)


def test_the_roster_lists_hidden_users_to_staff_only(
    alice: User, bob: User, staff: User
) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk, hidden=True)
    public = online_roster(viewer=None)
    assert [online.user for online in public.users] == [alice]
    assert public.counts.hidden == 0
    for_staff = online_roster(viewer=staff)
    assert [(o.user, o.hidden) for o in for_staff.users] == [
        (bob, True),
        (alice, False),
    ]


def test_more_counts_hidden_users_only_for_staff(
    alice: User, bob: User, staff: User
) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk, hidden=True)
    assert online_roster(limit=0, viewer=None).more == 1
    assert online_roster(limit=0, viewer=staff).more == 2


def test_an_inactive_staff_member_sees_no_hidden_users(bob: User, staff: User) -> None:
    staff.is_active = False
    presence.record_user(bob.pk, hidden=True)
    assert online_roster(viewer=staff).users == []
