"""Room places go to people online, and each member's are their own: a
crawler or a stranger cannot fill what others need, and those who left
hold no place."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock

pytestmark = pytest.mark.django_db

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def logged_in(user: User) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def listed_in_room(room: str) -> int:
    return presence.snapshot(0, room=room).counts.total


def test_a_crawler_fetching_every_thread_leaves_users_their_rooms(
    alice: User,
) -> None:
    crawler = Client(HTTP_USER_AGENT=GOOGLEBOT)
    for n in range(60):
        crawler.get(f"/thread/{n}/")
    logged_in(alice).get("/thread/1000/")
    assert listed_in_room("thread:1000") == 1


def test_guests_in_many_rooms_keep_no_other_guest_out_of_one(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 20
    for n in range(15):
        Client(REMOTE_ADDR=f"192.0.2.{n}").get(f"/thread/{n}/")
    Client(REMOTE_ADDR="192.0.2.99").get("/thread/1000/")
    assert listed_in_room("thread:1000") == 1


def test_a_guest_the_site_did_not_let_in_holds_no_place(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    for n in range(2):
        Client(REMOTE_ADDR=f"192.0.2.{n}").get("/")
    Client(REMOTE_ADDR="192.0.2.99").get("/thread/1/")  # the guests' set is full
    assert listed_in_room("thread:1") == 0


def test_a_newcomer_clears_a_room_of_those_whose_presence_ran_out(
    clock: Clock, redis_client: Redis
) -> None:
    for n in range(6):
        presence.record_in_room("thread:busy", "guests", f"192.0.2.{n}")
    clock.advance(4 * 60)
    presence.record_in_room("thread:busy", "guests", "192.0.2.98")
    clock.advance(2 * 60)  # the first six's pages ran out: they left unseen
    presence.record_in_room("thread:busy", "guests", "192.0.2.99")
    assert redis_client.zcard(presence.key("guests", "thread:busy")) == 2


def test_guests_filling_rooms_leave_users_their_places(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 4
    for n in range(10):
        Client(REMOTE_ADDR=f"192.0.2.{n}").get("/thread/1/")
    logged_in(alice).get("/thread/1/")
    room = presence.snapshot(10, room="thread:1")
    assert [member for member, _ in room.users] == [str(alice.pk)]


def test_crawlers_are_counted_on_the_site_not_in_rooms(alice: User) -> None:
    Client(HTTP_USER_AGENT=GOOGLEBOT).get("/thread/1/")
    assert listed_in_room("thread:1") == 0
    assert presence.snapshot(0).counts.bots == 1


def test_one_off_guests_who_left_hold_no_place(
    settings: SettingsWrapper, clock: Clock, django_user_model: type[User]
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 10
    for n in range(6):
        presence.record_in_room("thread:busy", "guests", f"192.0.2.{n}")
    clock.advance(14 * 60)
    presence.record_in_room("thread:busy", "guests", "192.0.2.99")  # still in use
    clock.advance(2 * 60)  # the first six have left
    users = [django_user_model.objects.create_user(f"u{n}") for n in range(9)]
    for user in users:
        presence.record_in_room("thread:new", "users", str(user.pk))
    assert listed_in_room("thread:new") == 9


def test_users_who_logged_out_hold_no_place(
    settings: SettingsWrapper, django_user_model: type[User]
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 4
    for n in range(4):
        browser = logged_in(django_user_model.objects.create_user(f"reader{n}"))
        browser.get(f"/thread/{n}/")
        browser.get("/logout/")
    for n in range(4):
        presence.record_in_room("thread:new", "users", str(100 + n))
    assert listed_in_room("thread:new") == 4
