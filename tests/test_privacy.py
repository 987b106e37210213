"""How guest addresses are stored: full, truncated or hashed."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from whos_online.addresses import truncate
from whos_online.conf import get_config

pytestmark = pytest.mark.django_db


def visit(address: str, path: str = "/") -> None:
    """A guest at ``address`` opens a page in a browser of their own."""
    Client().get(path, REMOTE_ADDR=address)


def another_process() -> None:
    """Forget what this process learnt, as a newly started one would."""
    get_config.cache_clear()


def guests(redis_client: Redis) -> list[str]:
    found: list[bytes] = redis_client.zrange(presence.key("guests"), 0, -1)  # type: ignore[assignment]
    return [member.decode() for member in found]


@pytest.fixture
def hashed(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_GUEST_ADDRESSES = "hashed"


def test_addresses_are_stored_in_full_by_default(redis_client: Redis) -> None:
    visit("203.0.113.7")
    assert guests(redis_client) == ["203.0.113.7"]


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("203.0.113.7", "203.0.113.0"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1::"),
        ("::1", "::"),
    ],
)
def test_truncation_keeps_the_24_or_48_network(address: str, network: str) -> None:
    assert truncate(address) == network


def test_truncated_guests_of_one_network_count_as_one(
    settings: SettingsWrapper, redis_client: Redis
) -> None:
    settings.WHOS_ONLINE_GUEST_ADDRESSES = "truncated"
    visit("203.0.113.7")
    visit("203.0.113.8")
    visit("198.51.100.1")
    assert sorted(guests(redis_client)) == ["198.51.100.0", "203.0.113.0"]


@pytest.mark.usefixtures("hashed")
def test_hashed_guests_are_stored_without_the_address(redis_client: Redis) -> None:
    visit("203.0.113.7")
    (member,) = guests(redis_client)
    assert re.fullmatch(r"h:[0-9a-f]{24}", member)  # a hash, not "203.0.113.7"


@pytest.mark.usefixtures("hashed")
def test_a_hashed_guest_counts_once(redis_client: Redis) -> None:
    visit("203.0.113.7")
    visit("203.0.113.7")
    visit("203.0.113.8")
    assert len(guests(redis_client)) == 2


@pytest.mark.usefixtures("hashed")
def test_nothing_kept_in_redis_can_undo_the_hash(redis_client: Redis) -> None:
    visit("203.0.113.7")
    assert redis_client.exists(presence.key("salt")) == 0


@pytest.mark.usefixtures("hashed")
def test_processes_hash_alike_at_once(redis_client: Redis) -> None:
    visit("203.0.113.7")
    another_process()
    visit("203.0.113.7")
    assert len(guests(redis_client)) == 1


@pytest.mark.usefixtures("hashed")
def test_rooms_store_guests_the_same_way(redis_client: Redis) -> None:
    visit("203.0.113.7", "/thread/1/")
    found: list[bytes] = redis_client.zrange(presence.key("guests", "thread:1"), 0, -1)  # type: ignore[assignment]
    assert found[0].startswith(b"h:")


@pytest.mark.usefixtures("hashed")
def test_the_guard_still_spares_a_hashed_guest(redis_client: Redis) -> None:
    browser = Client()
    browser.get("/", REMOTE_ADDR="203.0.113.7")
    browser.get("/", REMOTE_ADDR="203.0.113.7")
    browser.get("/", REMOTE_ADDR="203.0.113.9")
    assert len(guests(redis_client)) == 2
