"""Counts beyond WHOS_ONLINE_MAX_MEMBERS: a set at its cap is counted by a
HyperLogLog per minute of the window, and shown as "about N"."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests.conftest import Clock, CommandCounter
from whos_online import presence
from whos_online.conf import get_config

CAP = 20


@pytest.fixture(autouse=True)
def small_cap(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = CAP


def record_guests(count: int, start: int = 0) -> None:
    for n in range(start, start + count):
        presence.record_guest(f"198.51.{n // 250}.{n % 250}")


def test_below_the_cap_counts_are_exact() -> None:
    record_guests(CAP - 1)
    counts = presence.snapshot(0).counts
    assert counts.guests == CAP - 1
    assert not counts.is_estimate


def test_a_set_at_its_cap_is_counted_by_its_estimate() -> None:
    record_guests(3 * CAP)
    counts = presence.snapshot(0).counts
    assert counts.guests == 3 * CAP
    assert counts.estimated == {"guests"}
    assert counts.is_estimate


def test_users_at_the_cap_are_estimated_too() -> None:
    for pk in range(2 * CAP):
        presence.record_user(pk)
    counts = presence.snapshot(0).counts
    assert counts.users == 2 * CAP
    assert counts.estimated == {"users"}


def test_the_estimate_costs_one_round_trip_more(
    redis_commands: CommandCounter,
) -> None:
    record_guests(3 * CAP)
    presence.snapshot(0)  # loads the scripts
    redis_commands.round_trips = 0
    presence.snapshot(0)
    assert redis_commands.round_trips == 2


def test_the_estimate_forgets_minutes_before_the_window(clock: Clock) -> None:
    record_guests(3 * CAP)
    clock.advance(get_config().window + 120)
    record_guests(2 * CAP, start=1000)
    assert presence.snapshot(0).counts.guests == 2 * CAP


def test_the_oldest_minute_counts_for_the_part_of_it_inside_the_window(
    clock: Clock,
) -> None:
    clock.advance(70 - time.time() % 60)  # 10 s into a minute
    record_guests(2 * CAP)
    clock.advance(60)  # the next minute
    record_guests(2 * CAP, start=1000)
    # The window now starts 40 s into the first minute: a third of it is
    # inside, so a third of those seen only then are counted.
    clock.advance(get_config().window - 30)
    assert presence.snapshot(0).counts.guests == 2 * CAP + round(2 * CAP / 3)


def test_the_widget_says_about_how_many(client: Client) -> None:
    record_guests(3 * CAP)
    page = client.get("/widget/").content.decode()
    assert "about 61 visitors online" in page
    assert "about 61 guests" in page


def test_an_estimated_count_tag_says_about(client: Client) -> None:
    record_guests(3 * CAP)
    page = client.get("/busy-page/").content.decode()
    assert 'data-whos-online-count="people">about 61<' in page


def test_a_room_at_its_cap_counts_exactly_what_it_holds() -> None:
    record_guests(3 * CAP)
    for n in range(2 * CAP):
        presence.record_in_room("thread:1", "guests", f"198.51.0.{n}")
    counts = presence.snapshot(0, room="thread:1").counts
    assert counts.guests == CAP
    assert not counts.is_estimate
