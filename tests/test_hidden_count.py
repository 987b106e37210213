"""What the public learns of hidden users (``WHOS_ONLINE_PUBLIC_HIDDEN_COUNT``),
through the widget and the JSON endpoint; staff always see the breakdown."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online import checks
from whos_online.models import Visibility

pytestmark = pytest.mark.django_db

JSON = "/whos-online/online.json"
WIDGET = "/widget/"


@pytest.fixture(autouse=True)
def alice_bob_and_a_guest(alice: User, bob: User) -> None:
    """alice visible, bob hidden, one guest online (the reader is a guest too)."""
    presence.record_user(alice.pk)
    presence.record_user(bob.pk, hidden=True)
    presence.record_guest("192.0.2.77")


@pytest.fixture
def staff_browser(django_user_model: type[User]) -> Client:
    browser = Client()
    browser.force_login(django_user_model.objects.create_user("staff", is_staff=True))
    return browser


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_by_default_the_public_cannot_tell_a_hidden_user_from_an_offline_one(
    browser: Client,
) -> None:
    widget = text_of(browser.get(WIDGET).content.decode())
    assert "3 visitors online" in widget  # alice and two guests
    assert "1 user" in widget
    assert "hidden" not in widget
    counts = browser.get(JSON).json()["counts"]
    # Withheld reads null: a 0 would claim nobody is hidden.
    assert (counts["people"], counts["users"], counts["hidden"]) == (3, 1, None)


def test_never_counts_hidden_users_in_the_total_either(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "never"
    counts = browser.get(JSON).json()["counts"]
    assert (counts["people"], counts["total"], counts["hidden"]) == (3, 3, None)


def test_in_total_counts_hidden_users_as_users_without_singling_them_out(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "in-total"
    widget = text_of(browser.get(WIDGET).content.decode())
    assert "4 visitors online" in widget
    assert "2 users" in widget
    assert "hidden" not in widget
    assert "more" not in widget  # alice is the only name, and all there is
    data = browser.get(JSON).json()
    counts = data["counts"]
    assert (counts["people"], counts["users"], counts["hidden"]) == (4, 2, None)
    assert [user["name"] for user in data["users"]] == ["alice"]
    assert data["more"] == 0


def test_separate_shows_the_public_how_many_are_hidden(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "separate"
    widget = text_of(browser.get(WIDGET).content.decode())
    assert "4 visitors online" in widget
    assert "1 hidden user" in widget
    counts = browser.get(JSON).json()["counts"]
    assert (counts["people"], counts["users"], counts["hidden"]) == (4, 1, 1)


@pytest.mark.parametrize("choice", ["never", "in-total", "separate"])
def test_staff_always_see_the_breakdown(
    staff_browser: Client, settings: SettingsWrapper, choice: str
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = choice
    widget = text_of(staff_browser.get(WIDGET).content.decode())
    assert "1 hidden user" in widget
    data = staff_browser.get(JSON).json()
    assert (data["counts"]["users"], data["counts"]["hidden"]) == (2, 1)
    assert {user["name"] for user in data["users"]} == {"alice", "bob", "staff"}


def test_an_unknown_choice_is_e007(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "sometimes"
    assert [m.id for m in checks.check_settings()] == ["whos_online.E007"]


def figures(browser: Client) -> tuple[int, int, int | None]:
    data = browser.get(JSON).json()
    record = data["record"]
    return (
        data["today"]["visitors"],
        data["today"]["most_online"],
        None if record is None else record["count"],
    )


def test_a_hidden_arrival_moves_no_public_figure(
    browser: Client, django_user_model: type[User]
) -> None:
    browser.get(WIDGET)
    before = figures(browser)
    for n in range(3):
        hider = django_user_model.objects.create_user(f"hider{n}")
        Visibility.objects.create(user=hider, invisible=True)
        ghost = Client()
        ghost.force_login(hider)
        ghost.get("/")
    assert figures(browser) == before
