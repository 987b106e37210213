"""Online badges beside usernames (``|online_status``, ``|last_seen``): a
page pays one Redis round trip for all of them, however many it shows."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.test import AsyncClient, Client, RequestFactory
from django.utils import translation
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online.middleware import WhosOnlineMiddleware

pytestmark = pytest.mark.django_db


@pytest.fixture
def authors(django_user_model: type[User]) -> list[User]:
    """Twenty post authors (as /thread-of-authors/ lists them): the first
    five online, the sixth hidden, the rest never seen."""
    users = [django_user_model.objects.create_user(f"author{n:02}") for n in range(20)]
    for user in users[:5]:
        presence.record_user(user.pk)
    presence.record_user(users[5].pk, hidden=True)
    return users


def status_of(user: User) -> str:
    """``{{ user|online_status }}``, rendered wherever it is called."""
    template = "{% load whos_online %}{{ u|online_status }}"
    return engines["django"].from_string(template).render({"u": user})


def statuses(html: str) -> list[str]:
    return re.findall(r"author\d\d=([^;]*);", html)


@pytest.mark.usefixtures("warm_scripts", "authors")
def test_a_thread_with_twenty_badges_costs_one_round_trip(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/")  # recorded and guarded
    redis_commands.commands.clear()
    redis_commands.round_trips = 0
    browser.get("/thread-of-authors/")
    assert redis_commands.round_trips == 1


@pytest.mark.usefixtures("warm_scripts", "authors")
def test_a_thread_served_over_asgi_costs_one_round_trip_for_its_badges(
    redis_commands: CommandCounter,
) -> None:
    browser = AsyncClient()
    async_to_sync(browser.get)("/")  # recorded and guarded
    redis_commands.round_trips = 0
    html = async_to_sync(browser.get)("/thread-of-authors/").content.decode()
    assert redis_commands.round_trips == 1
    assert statuses(html) == ["online"] * 5 + ["offline"] * 15


@pytest.mark.usefixtures("warm_scripts", "authors")
def test_badges_and_the_widget_on_one_page_share_the_round_trip(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/")
    redis_commands.round_trips = 0
    browser.get("/thread-of-authors/?widget=last")
    assert redis_commands.round_trips == 1


@pytest.mark.usefixtures("warm_scripts", "authors")
def test_after_a_widget_that_lists_only_some_users_badges_take_a_fuller_snapshot(
    browser: Client, redis_commands: CommandCounter, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MAX_NAMES = 2  # of five users online
    browser.get("/")
    redis_commands.round_trips = 0
    html = browser.get("/thread-of-authors/?widget=first").content.decode()
    assert statuses(html) == ["online"] * 5 + ["offline"] * 15
    assert redis_commands.round_trips == 2


@pytest.mark.usefixtures("authors")
def test_each_badge_shows_its_authors_status(browser: Client) -> None:
    html = browser.get("/thread-of-authors/").content.decode()
    assert statuses(html) == ["online"] * 5 + ["offline"] * 15


@pytest.mark.usefixtures("authors")
def test_a_badge_shows_a_hidden_user_offline_even_to_staff(
    browser: Client, django_user_model: type[User]
) -> None:
    browser.force_login(django_user_model.objects.create_user("s", is_staff=True))
    html = browser.get("/thread-of-authors/").content.decode()
    assert statuses(html)[5] == "offline"


def test_badges_say_away_after_the_away_time(
    browser: Client, clock: Clock, authors: list[User]
) -> None:
    # The clock before the authors: late in the day it starts the next one,
    # which must not come between their record and this test's six minutes.
    clock.advance(6 * 60)
    presence.record_user(authors[1].pk)
    html = browser.get("/thread-of-authors/").content.decode()
    assert statuses(html)[:2] == ["away", "online"]


def test_last_seen_badges_give_the_time_within_the_window(
    browser: Client, authors: list[User]
) -> None:
    html = browser.get("/thread-of-authors/?badge=seen").content.decode()
    seen = statuses(html)
    assert all(seen[:5]) and seen[5:] == [""] * 15


@pytest.fixture
def two_names_listed(
    monkeypatch: pytest.MonkeyPatch, settings: SettingsWrapper
) -> None:
    """A snapshot lists the two most recent of the users online, a page's
    badges' snapshot too."""
    monkeypatch.setattr("whos_online.roster.BADGE_NAMES", 2)
    settings.WHOS_ONLINE_MAX_NAMES = 2


def test_a_badge_made_outside_any_page_after_one_reads_redis_afresh(
    browser: Client, authors: list[User]
) -> None:
    browser.get("/thread-of-authors/")
    presence.record_user(authors[10].pk)
    assert status_of(authors[10]) == "online"


def test_a_view_that_raises_through_the_middleware_leaves_no_page_behind(
    rf: RequestFactory, alice: User
) -> None:

    def broken(request: HttpRequest) -> HttpResponse:
        status_of(alice)  # offline, and kept for the page
        raise RuntimeError

    request = rf.get("/")
    request.user = AnonymousUser()
    with pytest.raises(RuntimeError):
        WhosOnlineMiddleware(broken)(request)
    presence.record_user(alice.pk)
    assert status_of(alice) == "online"


@pytest.mark.usefixtures("warm_scripts", "two_names_listed")
def test_beyond_the_names_one_snapshot_lists_each_unlisted_author_costs_one_more(
    browser: Client, authors: list[User], redis_commands: CommandCounter
) -> None:
    browser.get("/")
    redis_commands.round_trips = 0
    html = browser.get("/thread-of-authors/").content.decode()
    assert statuses(html) == ["online"] * 5 + ["offline"] * 15
    assert redis_commands.round_trips == 1 + 18


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_every_badge_says_offline(
    browser: Client, django_user_model: type[User]
) -> None:
    for n in range(20):
        django_user_model.objects.create_user(f"author{n:02}")
    html = browser.get("/thread-of-authors/").content.decode()
    assert statuses(html) == ["offline"] * 20


def test_a_page_reuses_no_badge_of_the_page_before(
    browser: Client, authors: list[User]
) -> None:
    browser.get("/thread-of-authors/")
    presence.record_user(authors[10].pk)
    html = browser.get("/thread-of-authors/").content.decode()
    assert statuses(html)[10] == "online"


@pytest.mark.usefixtures("warm_scripts", "two_names_listed")
def test_a_users_status_and_last_seen_are_looked_up_once_per_page(
    browser: Client, authors: list[User], redis_commands: CommandCounter
) -> None:
    browser.get("/")
    redis_commands.round_trips = 0
    browser.get("/thread-of-authors/?badge=both")
    assert redis_commands.round_trips == 1 + 18


def test_an_online_badge_says_the_status_in_the_pages_language(alice: User) -> None:
    presence.record_user(alice.pk)
    template = engines["django"].from_string(
        "{% load whos_online %}{% online_badge user %}"
    )
    with translation.override("de"):
        html = template.render({"user": alice})
    assert 'class="whos-online-badge whos-online-badge-online"' in html
    assert 'title="online"' in html  # German says "online" too
    with translation.override("ru"):
        assert "в сети" in template.render({"user": alice})


def test_an_offline_users_badge_is_hollow_by_its_class(bob: User) -> None:
    html = (
        engines["django"]
        .from_string("{% load whos_online %}{% online_badge user %}")
        .render({"user": bob})
    )
    assert "whos-online-badge-offline" in html
