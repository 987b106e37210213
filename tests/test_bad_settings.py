"""Settings that cannot work: `check` says so, and where it does not run
(under gunicorn), pages are served without presence."""

from __future__ import annotations

import logging

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser, Group, User
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online import url_checks
from whos_online.middleware import WhosOnlineMiddleware

pytestmark = pytest.mark.django_db


# Room names of WHOS_ONLINE_ROOMS that cannot be formatted.


@pytest.mark.parametrize(
    "pattern",
    [
        "topic:{pk.title}",
        "topic:{pk[0]}",
        "topic:{0}",
        "topic:{}",
        "topic:{pk!z}",
        "topic:{pk",
        "topic:pk}",
        "topic:{pk:{width}}",
    ],
)
def test_a_room_pattern_that_cannot_format_fails_check(
    settings: SettingsWrapper, pattern: str
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": pattern}
    (message,) = url_checks.check_rooms()
    assert message.id == "whos_online.E011"
    assert repr(pattern) in message.msg


@pytest.mark.parametrize(
    "pattern", ["topic:{pk}", "topic:{pk!s}", "topic:{pk:>5}", "all-topics", "{{x}}"]
)
def test_a_room_pattern_that_formats_passes_check(
    settings: SettingsWrapper, pattern: str
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": pattern}
    assert url_checks.check_rooms() == []


@pytest.mark.parametrize("pattern", ["topic:{pk.title}", "topic:{pk[0]}"])
def test_a_page_whose_room_pattern_cannot_format_is_served_in_no_room(
    browser: Client, settings: SettingsWrapper, pattern: str
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": pattern}
    topic = Group.objects.create(name="Rules")
    assert browser.get(f"/forum/{topic.pk}/").status_code == 200
    assert presence.rooms() == []


# A wrong setting under a server where `check` does not run.

WRONG = [
    ("WINDOW", "900"),
    ("HEARTBEAT_SECONDS", "60"),
    ("IS_HIDDEN", "tests.nowhere.is_ghost"),
    ("IS_HIDDEN", "tests.hiding.NOT_CALLABLE"),
    ("CACHE_ALIAS", "locmem"),
    ("CACHE_ALIAS", "nowhere"),
    ("CONNECTION_FACTORY", "tests.nowhere.client"),
    ("SHARDS", "4"),
    ("KEY_PREFIX", "{oops}"),
]


@pytest.fixture(params=WRONG, ids=[f"{name}={value}" for name, value in WRONG])
def wrong_setting(request: pytest.FixtureRequest, settings: SettingsWrapper) -> str:
    name, value = request.param
    setattr(settings, f"WHOS_ONLINE_{name}", value)
    return f"WHOS_ONLINE_{name}"


@pytest.mark.usefixtures("wrong_setting")
def test_a_wrong_setting_serves_pages_without_a_guard(browser: Client) -> None:
    response = browser.get("/")
    assert response.status_code == 200
    assert not response.cookies


@pytest.mark.usefixtures("wrong_setting")
def test_a_wrong_setting_renders_the_widget_unavailable(browser: Client) -> None:
    response = browser.get("/widget/")
    assert response.status_code == 200
    assert "cannot be shown right now" in response.content.decode()


@pytest.mark.usefixtures("wrong_setting")
def test_a_wrong_setting_serves_a_logged_in_users_pages_and_badges(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    assert browser.get("/thread-of-authors/?widget=last").status_code == 200
    assert browser.get("/thread/1/").status_code == 200


@pytest.mark.usefixtures("wrong_setting")
def test_a_wrong_setting_leaves_the_apps_endpoints_answering(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    assert browser.get("/whos-online/").status_code == 200
    assert browser.get("/whos-online/online.json").json()["available"] is False
    assert browser.post("/whos-online/heartbeat/").status_code == 503
    assert browser.post("/whos-online/beacon/").status_code == 204


def test_a_wrong_setting_is_logged_once_at_error(
    browser: Client, wrong_setting: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="whos_online"):
        for _ in range(3):
            browser.get("/widget/")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert wrong_setting in errors[0].getMessage()


def test_a_wrong_setting_made_right_brings_presence_back(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_WINDOW = "900"
    browser.get("/")
    settings.WHOS_ONLINE_WINDOW = 900
    browser.get("/")
    assert presence.snapshot(0).counts.guests == 1


async def async_page(request: HttpRequest) -> HttpResponse:
    return HttpResponse("async page")


@pytest.mark.usefixtures("wrong_setting")
def test_a_wrong_setting_serves_async_pages_without_a_guard(
    rf: RequestFactory,
) -> None:
    request = rf.get("/", REMOTE_ADDR="192.0.2.8")
    request.user = AnonymousUser()
    response = async_to_sync(WhosOnlineMiddleware(async_page))(request)
    assert response.content == b"async page"
    assert not response.cookies
