"""One IPv6 /64 (what one household, phone or server is given) counts as
one visitor: a stranger rotating addresses inside it cannot set the site's
figures or fill its sets."""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock
from whos_online.store import Snapshot

pytestmark = pytest.mark.django_db

ROTATIONS = 300


def visit(address: str, path: str = "/") -> None:
    """A guest at ``address`` opens a page in a browser of their own."""
    Client().get(path, REMOTE_ADDR=address)


def guests(redis_client: Redis, room: str | None = None) -> list[str]:
    key = presence.key("guests", room) if room else presence.key("guests")
    found: list[bytes] = redis_client.zrange(key, 0, -1)  # type: ignore[assignment]
    return [member.decode() for member in found]


def rotate(count: int = ROTATIONS, path: str = "/") -> None:
    """One stranger, a new address of their /64 for each page."""
    for n in range(count):
        visit(f"2001:db8:1:2:{n:x}:1:2:3", path)


def figures() -> Snapshot:
    return presence.snapshot(0)


def test_addresses_of_one_64_are_one_guest(redis_client: Redis) -> None:
    rotate()
    assert len(guests(redis_client)) == 1


def test_addresses_of_two_64s_are_two_guests(redis_client: Redis) -> None:
    visit("2001:db8:1:2::1")
    visit("2001:db8:1:3::1")
    assert len(guests(redis_client)) == 2


def test_one_64_moves_the_sites_figures_by_one_at_most(clock: Clock) -> None:
    for address in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        visit(address)
    rotate()
    clock.advance(60)  # the next minute's first record keeps the figures
    visit("192.0.2.1")
    found = figures()
    assert found.counts.people <= 4
    assert found.record is not None and found.record[0] <= 4
    assert found.today.most_online <= 4
    assert found.today.users + found.today.guests <= 4


def test_one_64_is_one_guest_in_a_room(redis_client: Redis) -> None:
    rotate(50, "/thread/1/")
    assert len(guests(redis_client, "thread:1")) == 1


@pytest.mark.parametrize("mode", ["truncated", "hashed"])
def test_one_64_is_one_guest_however_addresses_are_stored(
    redis_client: Redis, settings: SettingsWrapper, mode: str
) -> None:
    settings.WHOS_ONLINE_GUEST_ADDRESSES = mode
    rotate(50)
    assert len(guests(redis_client)) == 1


def test_the_prefix_that_counts_as_one_is_a_setting(
    redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_IPV6_PREFIX = 56
    visit("2001:db8:1:2::1")
    visit("2001:db8:1:3::1")
    assert guests(redis_client) == ["2001:db8:1::"]


def test_a_prefix_of_128_counts_each_address(
    redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_IPV6_PREFIX = 128
    visit("2001:db8:1:2::1")
    visit("2001:db8:1:2::2")
    assert sorted(guests(redis_client)) == ["2001:db8:1:2::1", "2001:db8:1:2::2"]


def test_an_ipv4_guest_is_stored_as_before(redis_client: Redis) -> None:
    visit("203.0.113.7")
    assert guests(redis_client) == ["203.0.113.7"]


def test_the_guard_still_spares_a_guest_of_a_64(redis_client: Redis) -> None:
    browser = Client()
    browser.get("/", REMOTE_ADDR="2001:db8:1:2::1")
    redis_client.delete(presence.key("guests"))
    browser.get("/", REMOTE_ADDR="2001:db8:1:2::1")  # guarded: nothing written
    assert guests(redis_client) == []


def test_a_guard_is_bound_to_its_address_not_its_64(redis_client: Redis) -> None:
    browser = Client()
    browser.get("/", REMOTE_ADDR="2001:db8:1:2::1")
    redis_client.delete(presence.key("guests"))
    browser.get("/", REMOTE_ADDR="2001:db8:1:2::2")  # another address: recorded
    assert guests(redis_client) == ["2001:db8:1:2::"]
