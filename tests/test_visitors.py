"""Who a request is recorded as: user, hidden user, bot or guest."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest
from django.test import RequestFactory
from pytest_django.fixtures import Settings as SettingsWrapper

from whos_online import page
from whos_online.bots import bot_name
from whos_online.state import Throttle
from whos_online.visitors import Visitor

pytestmark = pytest.mark.django_db

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


def visitor(request: HttpRequest, user: object = None) -> Visitor | None:
    request.user = user or AnonymousUser()  # type: ignore[assignment]
    return page.visit_of(request).visitor


@pytest.fixture
def hide_ghosts(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"


def test_a_logged_in_user_is_a_user(rf: RequestFactory, alice: User) -> None:
    assert visitor(rf.get("/"), alice) == Visitor("users", str(alice.pk))


@pytest.mark.usefixtures("hide_ghosts")
def test_a_user_the_setting_hides_is_hidden(
    rf: RequestFactory, django_user_model: type[User]
) -> None:
    ghost = django_user_model.objects.create_user("ghost1")
    found = visitor(rf.get("/"), ghost)
    assert found is not None and found.kind == "hidden"


@pytest.mark.usefixtures("hide_ghosts")
def test_users_the_setting_does_not_hide_are_visible(
    rf: RequestFactory, alice: User
) -> None:
    found = visitor(rf.get("/"), alice)
    assert found is not None and found.kind == "users"


def test_a_crawler_is_a_bot_by_name(rf: RequestFactory) -> None:
    assert visitor(rf.get("/", HTTP_USER_AGENT=GOOGLEBOT)) == Visitor(
        "bots", "Googlebot"
    )


def test_a_logged_in_user_with_a_crawler_agent_is_still_a_user(
    rf: RequestFactory, alice: User
) -> None:
    found = visitor(rf.get("/", HTTP_USER_AGENT=GOOGLEBOT), alice)
    assert found is not None and found.kind == "users"


def test_bot_detection_can_be_turned_off(
    rf: RequestFactory, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_DETECT_BOTS = False
    request = rf.get("/", HTTP_USER_AGENT=GOOGLEBOT, REMOTE_ADDR="192.0.2.1")
    assert visitor(request) == Visitor("guests", "192.0.2.1", "192.0.2.1")


def test_a_browser_is_a_guest_by_address(rf: RequestFactory) -> None:
    request = rf.get("/", HTTP_USER_AGENT=FIREFOX, REMOTE_ADDR="192.0.2.1")
    assert visitor(request) == Visitor("guests", "192.0.2.1", "192.0.2.1")


def test_a_guest_is_stored_as_the_privacy_setting_says(
    rf: RequestFactory, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_GUEST_ADDRESSES = "truncated"
    request = rf.get("/", REMOTE_ADDR="192.0.2.1")
    assert visitor(request) == Visitor("guests", "192.0.2.0", "192.0.2.1")


def test_a_guest_without_an_address_is_nobody(rf: RequestFactory) -> None:
    assert visitor(rf.get("/", REMOTE_ADDR="nonsense")) is None


@pytest.mark.parametrize(
    ("user_agent", "name"),
    [
        (GOOGLEBOT, "Googlebot"),
        (
            "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
            "Bingbot",
        ),
        ("Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)", "GPTBot"),
        (FIREFOX, None),
        ("", None),
        ("Googlebot" + "x" * 600, None),
    ],
)
def test_bot_names(user_agent: str, name: str | None) -> None:
    assert bot_name(user_agent) == name


def test_bot_names_are_never_longer_than_64_characters() -> None:
    name = bot_name("Mozilla/5.0 (compatible; " + "a" * 200 + "bot/1.0)")
    assert name is not None and len(name) <= 64


def test_the_throttle_lets_a_name_through_once_per_period() -> None:
    throttle = Throttle()
    assert throttle.allows("Googlebot", 300) is True
    assert throttle.allows("Googlebot", 300) is False
    assert throttle.allows("Bingbot", 300) is True


def test_the_throttle_stays_bounded_by_starting_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Throttle, "MAX_NAMES", 3)
    throttle = Throttle()
    for n in range(3):
        throttle.allows(f"bot{n}", 300)
    assert throttle.allows("bot3", 300) is True
    assert throttle.allows("bot0", 300) is True
