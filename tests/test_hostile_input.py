"""Whatever a client sends, nothing breaks, nothing leaks, nothing grows."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from whos_online.conf import get_config
from whos_online.store import get_store

pytestmark = pytest.mark.django_db

NASTY_NAMES = [
    '<img src=x onerror="alert(1)">',
    "Robert'); DROP TABLE users;--",
    "\u202eevil\u202c",
    "名前🙂",
    "a&amp;b",
]


@pytest.mark.parametrize(
    "cookie",
    [
        "x" * 8000,
        "whos_online=" + "9" * 4000,
        "whos_online=\x00\x01\x02",
        "whos_online=%ff%fe; sessionid=%00",
        "whos_online=é; =; ;;; a=b=c",
    ],
)
def test_any_cookie_header_is_served(browser: Client, cookie: str) -> None:
    assert browser.get("/", HTTP_COOKIE=cookie).status_code == 200


@pytest.mark.parametrize(
    "user_agent",
    [
        "",
        "x" * 10_000,
        "Googlebot\x00",
        "é" * 600,
        "Mozilla/5.0 (compatible; 机器人bot)",
    ],
)
def test_any_user_agent_is_served(browser: Client, user_agent: str) -> None:
    assert browser.get("/", HTTP_USER_AGENT=user_agent).status_code == 200


@pytest.mark.parametrize(
    "forwarded",
    [
        "203.0.113.7, " * 2000,
        "\x00\xff",
        "203.0.113.7,,,",
        "[2001:db8::1]:443",
        "203.0.113.7\r\nX-Evil: 1",
    ],
)
def test_spoofed_or_malformed_forwarded_headers_create_no_member(
    browser: Client, settings: SettingsWrapper, redis_client: Redis, forwarded: str
) -> None:
    settings.WHOS_ONLINE_PROXY_COUNT = 1
    response = browser.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded)
    assert response.status_code == 200
    assert redis_client.zcard(presence.key("guests")) == 0


def test_forwarded_headers_are_ignored_without_proxies(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR="203.0.113.66")
    assert redis_client.zrange(presence.key("guests"), 0, -1) == [b"192.0.2.1"]


@pytest.mark.parametrize("name", NASTY_NAMES)
@pytest.mark.parametrize(
    "url", ["/widget/", "/whos-online/widget/", "/whos-online/online.json"]
)
def test_usernames_are_escaped_everywhere_they_are_shown(
    browser: Client, django_user_model: type[User], name: str, url: str
) -> None:
    user = django_user_model.objects.create_user(name)
    presence.record_user(user.pk)
    response = browser.get(url)
    assert response.status_code == 200
    if url.endswith(".json"):
        assert response.json()["users"][0]["name"] == name
    else:
        body = response.content.decode()
        assert escape(name) in body
        assert "<img" not in body


def test_forged_guards_move_nothing_the_process_keeps_for_other_visitors(
    browser: Client,
) -> None:
    browser.get("/")
    browser.get("/")  # guarded: the process keeps its verdict on the guard
    kept = dict(get_store().state.guards)
    stranger = Client(REMOTE_ADDR="")  # no address: nothing to record, quick
    for n in range(5000):
        stranger.cookies[get_config().guard_cookie_name] = f"{n}.g.1...{n:032x}"
        stranger.get("/")
    assert get_store().state.guards == kept


def test_a_flood_of_distinct_guests_leaves_the_set_at_the_cap(
    settings: SettingsWrapper, redis_client: Redis
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 100
    for n in range(500):
        presence.record_guest(f"2001:db8::{n:x}")
    assert redis_client.zcard(presence.key("guests")) == 100
    newest = redis_client.zrevrange(presence.key("guests"), 0, 0)
    assert newest == [b"2001:db8::63"]  # the 100th: those online stay


def test_a_flood_of_bot_names_leaves_the_bot_set_at_the_cap(
    settings: SettingsWrapper, redis_client: Redis
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 10
    for n in range(50):
        Client().get("/", HTTP_USER_AGENT=f"Mozilla/5.0 (compatible; Spider{n}bot/1.0)")
    assert redis_client.zcard(presence.key("bots")) == 10


@pytest.mark.parametrize(
    "room", ["../../etc", "{other-site}:users", "x" * 5000, "thread:1\r\nDEL"]
)
def test_room_tokens_from_clients_are_never_used_as_names(
    browser: Client, room: str
) -> None:
    assert browser.get("/whos-online/online.json", {"room": room}).status_code == 400


def test_a_presence_key_of_another_type_never_breaks_the_widget(
    redis_client: Redis,
) -> None:
    browser = Client()
    browser.get("/")  # recorded, and guarded from here on
    redis_client.set(presence.key("users"), "not a sorted set")
    response = browser.get("/widget/")
    assert response.status_code == 200
    assert "cannot be shown right now" in response.content.decode()


def test_a_login_while_the_guests_set_is_broken_still_logs_in(
    redis_client: Redis, alice: User
) -> None:
    browser = Client()
    browser.get("/")  # a guest first
    redis_client.delete(presence.key("guests"))
    redis_client.set(presence.key("guests"), "not a sorted set")
    response = browser.post(f"/login/{alice.pk}/")
    assert response.status_code == 200
