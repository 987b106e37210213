"""Last seen beyond the window, with graded privacy: each viewer learns it
as the user and the site allow (the exact time, roughly, or nothing)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.template import engines
from django.test import Client, RequestFactory
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online import api
from whos_online.models import Visibility

pytestmark = pytest.mark.django_db

DAY = 86400
VISIBILITY = "/whos-online/visibility/"


@pytest.fixture
def seen_two_days_ago(alice: User, clock: Clock) -> User:
    """alice visited, then left two days ago."""
    browser = Client()
    browser.force_login(alice)
    browser.get("/")
    clock.advance(2 * DAY)
    return alice


def seen_on_a_page(viewer: Client, subject: User) -> str:
    """What a page's ``|last_seen`` and ``|last_seen_label`` say of ``subject``."""
    html = viewer.get(f"/every-output/{subject.username}/").content.decode()
    found = re.search(r"\[seen ([^\]]*)\]", html)
    assert found is not None
    return found.group(1)


def logged_in(user: User) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def test_a_user_who_left_days_ago_was_last_seen_then(
    seen_two_days_ago: User,
) -> None:
    last = api.last_seen(seen_two_days_ago)
    assert last is not None
    assert api.status(seen_two_days_ago) == "offline"
    shown = datetime.fromisoformat(seen_on_a_page(Client(), seen_two_days_ago))
    assert abs((shown - last).total_seconds()) < 1


def test_a_user_who_hides_their_last_seen_is_seen_only_roughly(
    seen_two_days_ago: User,
) -> None:
    Visibility.objects.create(user=seen_two_days_ago, hide_last_seen=True)
    assert api.last_seen(seen_two_days_ago) is None
    (row,) = api.statuses([seen_two_days_ago]).values()
    assert row.last_seen_label == "last seen recently"
    assert seen_on_a_page(Client(), seen_two_days_ago) == "last seen recently"


def test_the_rough_grades_follow_how_long_ago(
    alice: User, bob: User, clock: Clock
) -> None:
    Visibility.objects.create(user=alice, hide_last_seen=True)
    logged_in(alice).get("/")
    labels = []
    for days in (1, 5, 20):
        clock.advance(days * DAY)  # 1, then 6, then 26 days ago
        labels.append(api.statuses([alice])[alice.pk].last_seen_label)
    assert labels == [
        "last seen recently",
        "last seen within a week",
        "last seen within a month",
    ]


def test_who_hides_their_own_last_seen_sees_others_only_roughly(
    seen_two_days_ago: User, bob: User
) -> None:
    Visibility.objects.create(user=bob, hide_last_seen=True)
    assert api.last_seen(seen_two_days_ago, viewer=bob) is None
    assert seen_on_a_page(logged_in(bob), seen_two_days_ago) == "last seen recently"
    assert api.last_seen(seen_two_days_ago) is not None  # others still do


def test_staff_see_the_exact_time_whatever_was_chosen(
    seen_two_days_ago: User, django_user_model: type[User]
) -> None:
    Visibility.objects.create(user=seen_two_days_ago, hide_last_seen=True)
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    assert api.last_seen(seen_two_days_ago, viewer=staff) is not None


def test_invisible_mode_hides_the_last_seen_too(seen_two_days_ago: User) -> None:
    Visibility.objects.create(user=seen_two_days_ago, invisible=True)
    (row,) = api.statuses([seen_two_days_ago]).values()
    assert (row.status, row.last_seen, row.last_seen_label) == ("offline", None, "")


def test_the_site_may_show_every_last_seen_only_roughly(
    seen_two_days_ago: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_LAST_SEEN_SHOWN = "approximate"
    (row,) = api.statuses([seen_two_days_ago]).values()
    assert (row.last_seen, row.last_seen_label) == (None, "last seen recently")


def test_the_site_may_show_no_last_seen(
    seen_two_days_ago: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_LAST_SEEN_SHOWN = "never"
    (row,) = api.statuses([seen_two_days_ago]).values()
    assert (row.last_seen, row.last_seen_label) == (None, "")


def test_the_public_page_shows_a_user_online_who_hides_it_roughly(
    alice: User,
) -> None:
    Visibility.objects.create(user=alice, hide_last_seen=True)
    logged_in(alice).get("/")
    html = Client().get("/whos-online/").content.decode()
    assert "<bdi>alice</bdi>" in html
    assert "last seen recently" in html
    assert "<time" not in html.split("<bdi>alice</bdi>")[1].split("</tr>")[0]


def test_a_presence_list_makes_the_pages_last_seen_filters_free(
    seen_two_days_ago: User, redis_commands: CommandCounter
) -> None:
    viewer = Client()
    viewer.get("/")
    redis_commands.round_trips = 0
    viewer.get(f"/every-output/{seen_two_days_ago.username}/")
    # The site's snapshot, the presence list (which the filters then use),
    # the room's snapshot, and the page's room counts.
    assert redis_commands.round_trips == 4


# Choosing, on the same form as invisible mode.


def test_a_user_hides_their_last_seen_with_the_toggle(alice: User) -> None:
    browser = logged_in(alice)
    assert browser.post(VISIBILITY, {"hide_last_seen": "1"}).status_code == 204
    assert Visibility.objects.get(user=alice).hide_last_seen
    assert browser.post(VISIBILITY, {"hide_last_seen": "0"}).status_code == 204
    assert not Visibility.objects.get(user=alice).hide_last_seen


def test_the_last_seen_choice_needs_a_clear_answer(alice: User) -> None:
    assert logged_in(alice).post(VISIBILITY, {"hide_last_seen": "x"}).status_code == 400


def test_the_toggle_offers_to_hide_the_last_seen(alice: User) -> None:
    assert "Hide when I was last seen" in render_toggle(alice)
    Visibility.objects.create(user=alice, hide_last_seen=True)
    assert "Show when I was last seen" in render_toggle(alice)


def render_toggle(user: User) -> str:
    request = RequestFactory().get("/page/")
    request.user = user
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online_visibility %}"
    )
    return template.render({"csrf_token": "t"}, request)


# Memory: kept for a bounded time, and for a bounded number of users.


def test_last_seen_is_forgotten_after_the_days_it_is_kept(
    seen_two_days_ago: User, settings: SettingsWrapper, clock: Clock
) -> None:
    settings.WHOS_ONLINE_LAST_SEEN_DAYS = 3
    clock.advance(2 * DAY)
    assert presence.prune().removed["last-seen"] == 1
    assert api.last_seen(seen_two_days_ago) is None


def test_the_last_seen_set_holds_at_most_the_most_members(
    settings: SettingsWrapper, redis_client: Redis, clock: Clock
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 3
    for pk in range(1, 4):
        presence.record_user(pk)
    clock.advance(15 * 60 + 1)  # they left the window: others come
    for pk in range(4, 6):
        presence.record_user(pk)
    assert redis_client.zrange(presence.key("last-seen"), 0, -1) == [
        b"3",
        b"4",
        b"5",
    ]


def test_no_last_seen_is_kept_when_the_days_are_zero(
    settings: SettingsWrapper, redis_client: Redis
) -> None:
    settings.WHOS_ONLINE_LAST_SEEN_DAYS = 0
    presence.record_user(1)
    assert not redis_client.exists(presence.key("last-seen"))


def test_long_ago_reads_a_long_time_ago(
    alice: User, settings: SettingsWrapper, clock: Clock
) -> None:
    settings.WHOS_ONLINE_LAST_SEEN_DAYS = 90
    Visibility.objects.create(user=alice, hide_last_seen=True)
    logged_in(alice).get("/")
    clock.advance(40 * DAY)
    label = api.statuses([alice])[alice.pk].last_seen_label
    assert label == "last seen a long time ago"


def test_with_invisible_mode_off_the_last_seen_choice_still_holds(
    alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ALLOW_INVISIBLE = False
    Visibility.objects.create(user=alice, invisible=True, hide_last_seen=True)
    logged_in(alice).get("/")
    (row,) = api.statuses([alice]).values()
    assert (row.status, row.last_seen_label) == ("online", "last seen recently")


@pytest.mark.usefixtures("visibility_table_missing")
def test_without_the_table_the_last_seen_choice_says_it_is_unavailable(
    alice: User,
) -> None:
    response = logged_in(alice).post(VISIBILITY, {"hide_last_seen": "1"})
    assert response.status_code == 503
