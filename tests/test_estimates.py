"""Counts beyond WHOS_ONLINE_MAX_MEMBERS: a set at its cap is counted by a
HyperLogLog per minute of the window, and shown as "about N"."""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock, CommandCounter
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


def a_minute_later(clock: Clock) -> None:
    """Move to the next minute, whose first record counts the minutes past."""
    clock.advance(60)
    presence.record_guest("192.0.2.1")


def test_a_set_at_its_cap_is_counted_by_its_estimate(clock: Clock) -> None:
    record_guests(3 * CAP)
    a_minute_later(clock)
    counts = presence.snapshot(0).counts
    assert counts.guests == 3 * CAP
    assert counts.estimated == {"guests"}
    assert counts.is_estimate


def test_users_at_the_cap_are_estimated_too(clock: Clock) -> None:
    for pk in range(2 * CAP):
        presence.record_user(pk)
    a_minute_later(clock)
    counts = presence.snapshot(0).counts
    assert counts.users == 2 * CAP
    assert counts.estimated == {"users"}


def test_a_set_at_its_cap_is_counted_at_least_by_what_it_holds() -> None:
    record_guests(3 * CAP)
    counts = presence.snapshot(0).counts
    assert counts.guests == CAP
    assert counts.estimated == {"guests"}


def test_the_estimate_costs_no_round_trip_more(
    clock: Clock, redis_commands: CommandCounter
) -> None:
    record_guests(3 * CAP)
    a_minute_later(clock)
    presence.snapshot(0)  # loads the scripts
    redis_commands.round_trips = 0
    presence.snapshot(0)
    assert redis_commands.round_trips == 1


def test_the_estimate_forgets_minutes_before_the_window(clock: Clock) -> None:
    record_guests(3 * CAP)
    clock.advance(get_config().window + 120)
    record_guests(2 * CAP, start=1000)
    a_minute_later(clock)
    assert presence.snapshot(0).counts.guests == 2 * CAP


def test_newcomers_are_counted_from_the_next_minute_on(clock: Clock) -> None:
    record_guests(2 * CAP)
    clock.advance(60)
    record_guests(2 * CAP, start=1000)
    assert presence.snapshot(0).counts.guests == 2 * CAP
    a_minute_later(clock)
    assert presence.snapshot(0).counts.guests == 4 * CAP


def test_the_widget_says_about_how_many(client: Client, clock: Clock) -> None:
    record_guests(3 * CAP)
    a_minute_later(clock)
    page = client.get("/widget/").content.decode()
    assert "about 60 visitors online" in page
    assert "about 60 guests" in page


def test_an_estimated_count_tag_says_about(client: Client, clock: Clock) -> None:
    record_guests(3 * CAP)
    a_minute_later(clock)
    page = client.get("/busy-page/").content.decode()
    assert 'data-whos-online-count="people">about 60<' in page


def test_a_room_at_its_cap_counts_exactly_what_it_holds() -> None:
    record_guests(3 * CAP)
    for n in range(2 * CAP):
        presence.record_in_room("thread:1", "users", str(n))
    counts = presence.snapshot(0, room="thread:1").counts
    assert counts.users == CAP
    assert not counts.is_estimate
