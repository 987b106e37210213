"""Logging out takes a user off the list at once; arrivals and departures
are announced by signals."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.dispatch import Signal
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock
from whos_online.models import Visibility
from whos_online.signals import user_came_online, user_went_offline

SeenAgo = Callable[[str, str, float], None]

pytestmark = pytest.mark.django_db


def test_logging_out_takes_the_user_off_the_list_at_once(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    browser.get("/")
    browser.get("/logout/")
    assert presence.snapshot(limit=10).users == []


def test_logging_out_a_hidden_user_takes_them_off_too(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    presence.record_user(alice.pk, hidden=True)
    browser.get("/logout/")
    assert presence.snapshot(limit=0).counts.hidden == 0


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_logging_out_still_works(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    assert browser.get("/logout/").status_code == 200


def test_logging_out_when_not_logged_in_is_harmless(browser: Client) -> None:
    assert browser.get("/logout/").status_code == 200


class Heard:
    """The signals a receiver heard, with their payloads."""

    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []

    def __call__(self, sender: Any, signal: Any, **payload: Any) -> None:
        self.payloads.append(payload)


def listening(signal: Signal) -> Iterator[Heard]:
    heard = Heard()
    signal.connect(heard)
    yield heard
    signal.disconnect(heard)


@pytest.fixture
def came_online() -> Iterator[Heard]:
    yield from listening(user_came_online)


@pytest.fixture
def went_offline() -> Iterator[Heard]:
    yield from listening(user_went_offline)


def test_a_user_entering_the_window_came_online(
    browser: Client, alice: User, came_online: Heard
) -> None:
    browser.force_login(alice)
    browser.get("/")
    assert came_online.payloads == [{"user_pk": str(alice.pk), "hidden": False}]


def test_a_user_renewing_their_presence_did_not_come_online_again(
    browser: Client, alice: User, came_online: Heard, clock: Clock
) -> None:
    browser.force_login(alice)
    browser.get("/")
    clock.advance(301)  # the guard ran out; she is still within the window
    browser.get("/")
    assert len(came_online.payloads) == 1


def test_logging_in_came_online(
    browser: Client, alice: User, came_online: Heard
) -> None:
    browser.get(f"/login/{alice.pk}/")
    assert [p["user_pk"] for p in came_online.payloads] == [str(alice.pk)]


def test_guests_are_not_announced(browser: Client, came_online: Heard) -> None:
    browser.get("/")
    assert came_online.payloads == []


def test_logging_out_went_offline(
    browser: Client, alice: User, went_offline: Heard
) -> None:
    browser.get(f"/login/{alice.pk}/")
    browser.get("/logout/")
    assert went_offline.payloads == [
        {"user_pk": str(alice.pk), "hidden": False, "reason": "logout"}
    ]


def test_logging_out_while_another_device_is_online_did_not_go_offline(
    alice: User, went_offline: Heard
) -> None:
    phone, laptop = Client(), Client()
    phone.get(f"/login/{alice.pk}/")
    laptop.get(f"/login/{alice.pk}/")
    phone.get("/logout/")
    assert went_offline.payloads == []


def test_prune_announces_users_who_left_the_window(
    alice: User, bob: User, went_offline: Heard, seen_ago: SeenAgo
) -> None:
    seen_ago("users", str(alice.pk), 1000)
    seen_ago("hidden", str(bob.pk), 1000)
    call_command("prune_online", stdout=StringIO())
    assert went_offline.payloads == [
        {"user_pk": str(alice.pk), "hidden": False, "reason": "timeout"},
        {"user_pk": str(bob.pk), "hidden": True, "reason": "timeout"},
    ]


def test_a_failing_receiver_never_reaches_the_request(
    browser: Client, alice: User, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("a receiver's bug")

    user_came_online.connect(broken)
    try:
        browser.force_login(alice)
        assert browser.get("/").status_code == 200
    finally:
        user_came_online.disconnect(broken)
    assert "receiver of a who's-online signal failed" in caplog.text


def test_logging_out_in_code_takes_the_user_off_this_process_s_lists_at_once(
    browser: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 60  # pages share a snapshot
    guest = Client()
    guest.get("/")  # a guest already online, whose pages share the snapshot
    browser.force_login(alice)
    assert "alice" in browser.get("/widget/").content.decode()
    browser.logout()  # user_logged_out alone, no view of ours in between
    assert "alice" not in guest.get("/widget/").content.decode()


def test_a_user_whose_choice_redis_missed_leaves_announced_as_hidden(
    browser: Client, alice: User, went_offline: Heard
) -> None:
    browser.force_login(alice)
    browser.get("/")
    Visibility.objects.create(user=alice, invisible=True)  # Redis never heard
    browser.get("/logout/")
    assert went_offline.payloads == [
        {"user_pk": str(alice.pk), "hidden": True, "reason": "logout"}
    ]


def test_prune_announces_a_user_whose_choice_redis_missed_as_hidden(
    alice: User, went_offline: Heard, seen_ago: SeenAgo
) -> None:
    seen_ago("users", str(alice.pk), 1000)
    Visibility.objects.create(user=alice, invisible=True)
    call_command("prune_online", stdout=StringIO())
    assert went_offline.payloads == [
        {"user_pk": str(alice.pk), "hidden": True, "reason": "timeout"}
    ]
