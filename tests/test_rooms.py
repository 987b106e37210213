"""Presence in rooms: the decorator, the mixin and the room tokens."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from whos_online.rooms import room_from_token, room_token

pytestmark = pytest.mark.django_db


def room_members(redis_client: Redis, kind: str, room: str) -> list[bytes]:
    return redis_client.zrange(presence.key(kind, room), 0, -1)  # type: ignore[return-value]


def test_the_decorator_records_the_visitor_in_the_formatted_room(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.force_login(alice)
    browser.get("/thread/42/")
    assert room_members(redis_client, "users", "thread:42") == [str(alice.pk).encode()]


def test_the_decorator_records_guests_too(browser: Client, redis_client: Redis) -> None:
    browser.get("/thread/42/", REMOTE_ADDR="192.0.2.4")
    assert room_members(redis_client, "guests", "thread:42") == [b"192.0.2.4"]


def test_the_decorator_works_on_async_views(
    browser: Client, redis_client: Redis
) -> None:
    assert browser.get("/async-thread/7/", REMOTE_ADDR="192.0.2.4").status_code == 200
    assert room_members(redis_client, "guests", "thread:7") == [b"192.0.2.4"]


def test_the_mixin_records_the_visitor_in_the_formatted_room(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/topic/3/", REMOTE_ADDR="192.0.2.4")
    assert room_members(redis_client, "guests", "topic:3") == [b"192.0.2.4"]


def test_every_visit_to_a_room_is_recorded_despite_the_guard(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/thread/1/")
    browser.get("/thread/2/")
    assert room_members(redis_client, "guests", "thread:2") == [b"127.0.0.1"]


@pytest.mark.parametrize("url", ["/bad-room/", "/unformattable-room/"])
def test_an_invalid_room_name_is_logged_and_the_page_served(
    browser: Client, caplog: pytest.LogCaptureFixture, url: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="whos_online"):
        assert browser.get(url).status_code == 200
    assert "invalid room name" in caplog.text
    assert presence.rooms() == []


def test_a_guest_without_an_address_is_not_recorded_in_the_room(
    browser: Client,
) -> None:
    assert browser.get("/thread/1/", REMOTE_ADDR="nonsense").status_code == 200
    assert presence.rooms() == []


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_a_room_page_is_served(browser: Client) -> None:
    assert browser.get("/thread/1/").status_code == 200


def test_the_widget_lists_the_room(browser: Client, alice: User, bob: User) -> None:
    presence.record_in_room("thread:1", "users", str(bob.pk))
    presence.record_user(alice.pk)
    html = browser.get("/thread/1/", REMOTE_ADDR="192.0.2.9").content.decode()
    assert "bob" in html
    assert "alice" not in html


def test_a_room_token_gives_the_room_back_to_its_viewer(alice: User) -> None:
    assert room_from_token(room_token("thread:1", alice), alice) == "thread:1"


def test_a_room_token_works_for_anonymous_viewers() -> None:
    token = room_token("thread:1", AnonymousUser())
    assert room_from_token(token, AnonymousUser()) == "thread:1"
    assert room_from_token(token, None) == "thread:1"


def test_a_room_token_is_refused_to_another_viewer(alice: User, bob: User) -> None:
    assert room_from_token(room_token("thread:1", alice), bob) is None
    assert room_from_token(room_token("thread:1", alice), AnonymousUser()) is None


@pytest.mark.parametrize("token", ["", "thread:1", "garbage:xyz", "é" * 50])
def test_a_forged_room_token_is_refused(alice: User, token: str) -> None:
    assert room_from_token(token, alice) is None


def test_a_token_for_an_invalid_room_is_refused(alice: User) -> None:
    assert room_from_token(room_token("no spaces", alice), alice) is None


@pytest.mark.xfail(
    strict=True,
    reason="roster._shared_or_new bypasses the shared snapshot only for a visitor "
    "who just entered the site, not one who just entered the room",
)
def test_a_visitor_who_just_entered_a_room_sees_themselves_in_its_box_by_default(
    settings: SettingsWrapper, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 2.0  # the default
    first = Client()
    first.force_login(alice)
    first.get("/thread/1/")
    second = Client()
    second.force_login(bob)
    second.get("/")  # browsing the site, guarded, before entering the room
    assert "bob" in second.get("/thread/1/").content.decode()
