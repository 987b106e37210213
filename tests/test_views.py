"""The JSON, fragment and heartbeat endpoints, and who may read what."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online.conf import get_config
from whos_online.tokens import room_token

pytestmark = pytest.mark.django_db

JSON = "/whos-online/online.json"
FRAGMENT = "/whos-online/widget/"
HEARTBEAT = "/whos-online/heartbeat/"


@pytest.fixture
def staff(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("staff", is_staff=True)


@pytest.fixture
def everyone(alice: User, bob: User) -> None:
    """alice visible, bob hidden, one guest and one bot online."""
    presence.record_user(alice.pk)
    presence.record_user(bob.pk, hidden=True)
    presence.record_guest("192.0.2.77")
    presence.record("bots", "Googlebot")


@pytest.mark.usefixtures("everyone")
def test_json_has_the_counts_the_visible_users_and_the_window(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "separate"
    data = browser.get(JSON).json()  # the reader is a guest, and counts
    assert data["counts"] == {
        "people": 4,
        "users": 1,
        "hidden": 1,
        "guests": 2,
        "bots": 1,
        "total": 5,
        "estimated": [],
    }
    assert [user["name"] for user in data["users"]] == ["alice"]
    assert data["bots"] == ["Googlebot"]
    assert data["other_bots"] == 0
    assert data["window"] == 900
    assert data["record"]["count"] == 4


@pytest.mark.usefixtures("everyone")
@pytest.mark.parametrize("url", [JSON, FRAGMENT])
def test_no_endpoint_ever_shows_a_guest_address(
    browser: Client, staff: User, url: str
) -> None:
    assert b"192.0.2.77" not in browser.get(url).content
    browser.force_login(staff)
    assert b"192.0.2.77" not in browser.get(url).content


@pytest.mark.usefixtures("everyone")
@pytest.mark.parametrize("url", [JSON, FRAGMENT])
def test_hidden_users_are_not_listed_to_users(
    browser: Client, alice: User, url: str
) -> None:
    browser.force_login(alice)
    assert b"bob" not in browser.get(url).content


@pytest.mark.usefixtures("everyone")
def test_hidden_users_are_listed_to_staff(browser: Client, staff: User) -> None:
    browser.force_login(staff)
    users = browser.get(JSON).json()["users"]
    assert {"name": "bob", "url": None, "hidden": True} in users


@pytest.mark.usefixtures("everyone")
def test_the_fragment_is_the_widget(browser: Client) -> None:
    response = browser.get(FRAGMENT)
    assert response.status_code == 200
    assert b'class="whos-online-widget"' in response.content
    assert b"alice" in response.content


@pytest.mark.parametrize("url", [JSON, FRAGMENT])
def test_an_unchanged_list_costs_a_304(browser: Client, alice: User, url: str) -> None:
    presence.record_user(alice.pk)
    browser.get("/")  # the poller itself is online already
    etag = browser.get(url)["ETag"]
    response = browser.get(url, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304
    assert response.content == b""


def test_a_changed_list_gets_a_new_etag(
    browser: Client, alice: User, bob: User
) -> None:
    presence.record_user(alice.pk)
    browser.get("/")
    etag = browser.get(JSON)["ETag"]
    presence.record_user(bob.pk)
    response = browser.get(JSON, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200
    assert response["ETag"] != etag


@pytest.mark.parametrize("url", [JSON, FRAGMENT])
def test_responses_are_private_and_vary_on_the_cookie(
    browser: Client, url: str
) -> None:
    response = browser.get(url)
    assert "Cookie" in response["Vary"]
    assert "private" in response["Cache-Control"]


@pytest.mark.parametrize("url", [JSON, FRAGMENT])
def test_anonymous_visitors_are_refused_when_the_setting_says_so(
    browser: Client, settings: SettingsWrapper, alice: User, url: str
) -> None:
    settings.WHOS_ONLINE_ANONYMOUS_CAN_VIEW = False
    assert browser.get(url).status_code == 403
    browser.force_login(alice)
    assert browser.get(url).status_code == 200


@pytest.mark.parametrize("url", [JSON, FRAGMENT])
def test_the_endpoints_answer_only_get(browser: Client, url: str) -> None:
    assert browser.post(url).status_code == 405


def test_a_room_is_read_with_its_token(browser: Client, alice: User, bob: User) -> None:
    browser.force_login(alice)
    presence.record_in_room("thread:1", "users", str(bob.pk))
    data = browser.get(JSON, {"room": room_token("thread:1", alice)}).json()
    assert [user["name"] for user in data["users"]] == ["bob"]


@pytest.mark.parametrize("url", [JSON, FRAGMENT])
def test_a_room_named_by_the_client_is_refused(browser: Client, url: str) -> None:
    assert browser.get(url, {"room": "thread:1"}).status_code == 400


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_json_says_unavailable(browser: Client) -> None:
    response = browser.get(JSON)
    assert response.status_code == 200
    assert response.json()["available"] is False


def test_a_heartbeat_records_the_user(browser: Client, alice: User) -> None:
    browser.force_login(alice)
    assert browser.post(HEARTBEAT).status_code == 204
    assert presence.last_seen(alice.pk) is not None


def test_a_heartbeat_while_guarded_records_the_user_again(
    browser: Client, alice: User, clock: Clock
) -> None:
    browser.force_login(alice)
    first = browser.get("/") and presence.last_seen(alice.pk)
    clock.advance(241)  # her status would turn "away" before the next one
    assert browser.post(HEARTBEAT).status_code == 204
    assert presence.last_seen(alice.pk) == pytest.approx(first + 241, abs=1)  # type: ignore[operator]


def test_a_heartbeat_while_the_user_is_sure_to_stay_online_asks_nothing_of_redis(
    browser: Client, alice: User, clock: Clock, redis_commands: CommandCounter
) -> None:
    browser.force_login(alice)
    first = browser.get("/") and presence.last_seen(alice.pk)
    clock.advance(60)
    presence.sync_clock()  # a busy process has heard from Redis lately
    redis_commands.commands.clear()
    assert browser.post(HEARTBEAT).status_code == 204
    assert redis_commands.commands == []
    assert presence.last_seen(alice.pk) == first


def test_a_beacon_with_an_unknown_room_records_no_room(
    browser: Client, redis_client: Redis
) -> None:
    assert browser.post("/whos-online/beacon/?room=forged").status_code == 204
    assert presence.rooms() == []


def test_a_heartbeat_records_a_hidden_user_as_hidden(
    browser: Client, django_user_model: type[User], settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
    ghost = django_user_model.objects.create_user("ghost")
    browser.force_login(ghost)
    browser.post(HEARTBEAT)
    assert presence.snapshot(limit=0).counts.hidden == 1


def test_heartbeats_are_rate_limited_per_user(browser: Client, alice: User) -> None:
    browser.force_login(alice)
    browser.post(HEARTBEAT)
    response = browser.post(HEARTBEAT)
    assert response.status_code == 429
    assert response["Retry-After"] == "30"


def test_a_heartbeat_too_soon_after_a_page_is_refused_without_asking_redis(
    browser: Client, alice: User, redis_commands: CommandCounter
) -> None:
    browser.force_login(alice)
    browser.get("/")  # recorded, and the guard says when
    redis_commands.commands.clear()
    assert browser.post(HEARTBEAT).status_code == 429
    assert redis_commands.commands == []


def test_a_heartbeat_in_time_is_a_renewal_and_renews_the_guard(
    browser: Client, alice: User, clock: Clock, redis_commands: CommandCounter
) -> None:
    browser.force_login(alice)
    browser.get("/")
    clock.advance(241)
    presence.sync_clock()  # a busy process has heard from Redis lately
    redis_commands.commands.clear()
    response = browser.post(HEARTBEAT)
    assert response.status_code == 204
    assert "EVALSHA" not in redis_commands.commands
    assert get_config().guard_cookie_name in response.cookies
    assert browser.post(HEARTBEAT).status_code == 429  # the renewed guard says so


def test_a_heartbeat_needs_a_logged_in_user(browser: Client) -> None:
    assert browser.post(HEARTBEAT).status_code == 403


def test_a_heartbeat_needs_post(browser: Client, alice: User) -> None:
    browser.force_login(alice)
    assert browser.get(HEARTBEAT).status_code == 405


def test_a_heartbeat_needs_the_csrf_token(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(HEARTBEAT).status_code == 403


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_a_heartbeat_is_a_503(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    assert browser.post(HEARTBEAT).status_code == 503


@pytest.mark.usefixtures("unreachable_redis")
def test_heartbeats_during_an_outage_log_no_error_that_mails_the_admins(
    browser: Client, alice: User, caplog: pytest.LogCaptureFixture
) -> None:
    browser.force_login(alice)
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            browser.post(HEARTBEAT)
    assert [r for r in caplog.records if r.name == "django.request"] == []
    outages = [r for r in caplog.records if "could not reach Redis" in r.message]
    assert len(outages) == 1


@pytest.mark.usefixtures("warm_scripts")
def test_heartbeats_without_the_guard_cookie_are_limited_on_the_server(
    browser: Client, alice: User, redis_commands: CommandCounter
) -> None:
    browser.force_login(alice)
    cookie = get_config().guard_cookie_name
    assert browser.post(HEARTBEAT).status_code == 204
    redis_commands.reset()
    statuses = set()
    for _ in range(199):
        browser.cookies.pop(cookie, None)  # a client that keeps no guard
        statuses.add(browser.post(HEARTBEAT).status_code)
    assert statuses == {429}
    assert redis_commands.commands == []  # nothing written, nothing asked


def test_a_heartbeat_refused_on_the_server_says_when_to_try_again(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    cookie = get_config().guard_cookie_name
    browser.post(HEARTBEAT)
    browser.cookies.pop(cookie, None)
    response = browser.post(HEARTBEAT)
    assert response.status_code == 429
    assert response["Retry-After"] == "30"


def test_the_servers_limit_lets_a_heartbeat_through_after_half_the_interval(
    browser: Client, alice: User, clock: Clock
) -> None:
    browser.force_login(alice)
    cookie = get_config().guard_cookie_name
    first = browser.post(HEARTBEAT) and presence.last_seen(alice.pk)
    clock.advance(31)
    browser.cookies.pop(cookie, None)
    assert browser.post(HEARTBEAT).status_code == 204
    assert presence.last_seen(alice.pk) == pytest.approx(first + 31, abs=1)  # type: ignore[operator]


def test_a_post_on_a_site_without_the_apps_urls_records_its_visitor(
    browser: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.ROOT_URLCONF = "tests.urls_without_whos_online"
    browser.force_login(alice)
    browser.post("/")
    assert presence.last_seen(alice.pk) is not None


def test_a_post_to_another_page_records_its_visitor(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    browser.post("/")
    assert presence.last_seen(alice.pk) is not None
