"""How guest addresses are stored: full, truncated or hashed."""

from __future__ import annotations

import re
from hashlib import blake2b

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock
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


def our_values(redis_client: Redis) -> list[bytes]:
    """Every string, and every member of every set, this test stored."""
    found: list[bytes] = []
    for name in redis_client.scan_iter(match=f"{{{get_config().key_prefix}*"):
        kind = redis_client.type(name)
        if kind == b"string":
            found.append(redis_client.get(name))  # type: ignore[arg-type]
        elif kind == b"zset":
            found += redis_client.zrange(name, 0, -1)  # type: ignore[arg-type]
        elif kind == b"set":
            found += redis_client.smembers(name)  # type: ignore[arg-type]
        elif kind == b"hash":
            found += redis_client.hvals(name)  # type: ignore[arg-type]
    return found


@pytest.mark.usefixtures("hashed")
def test_nothing_in_redis_recovers_a_hashed_address(redis_client: Redis) -> None:
    """Whoever reads Redis (or a backup of it) tries every value there as
    the key of the hash, as they would with a salt kept beside it."""
    visit("203.0.113.7")
    (member,) = guests(redis_client)
    recovered = [
        value
        for value in our_values(redis_client)
        if f"h:{blake2b(b'203.0.113.7', key=value[:64], digest_size=12).hexdigest()}"
        == member
    ]
    assert recovered == []


@pytest.mark.usefixtures("hashed")
def test_processes_agree_on_a_guests_hash_whatever_redis_lost(
    redis_client: Redis,
) -> None:
    visit("203.0.113.7")
    for name in redis_client.scan_iter(match=f"{{{get_config().key_prefix}*"):
        if not name.endswith(b":guests"):
            redis_client.delete(name)  # expired, evicted, flushed
    another_process()
    visit("203.0.113.7")
    assert len(guests(redis_client)) == 1


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
def test_a_hashed_guest_is_a_new_member_the_next_day(
    redis_client: Redis, clock: Clock
) -> None:
    visit("203.0.113.7")
    (yesterdays,) = guests(redis_client)
    clock.advance(24 * 60 * 60)
    visit("203.0.113.7")
    (todays,) = guests(redis_client)  # yesterday's has expired with the set
    assert todays != yesterdays


@pytest.mark.usefixtures("hashed")
def test_another_secret_key_gives_other_hashes(
    redis_client: Redis, settings: SettingsWrapper
) -> None:
    visit("203.0.113.7")
    settings.SECRET_KEY = "another secret"
    visit("203.0.113.7")
    assert len(guests(redis_client)) == 2


@pytest.mark.usefixtures("hashed")
def test_rooms_store_guests_the_same_way(redis_client: Redis) -> None:
    visit("203.0.113.7", "/thread/1/")
    found: list[bytes] = redis_client.zrange(presence.key("guests", "thread:1"), 0, -1)  # type: ignore[assignment]
    assert presence.members_of(found)[0].startswith("h:")


@pytest.mark.usefixtures("hashed")
def test_the_guard_still_spares_a_hashed_guest(redis_client: Redis) -> None:
    browser = Client()
    browser.get("/", REMOTE_ADDR="203.0.113.7")
    browser.get("/", REMOTE_ADDR="203.0.113.7")
    browser.get("/", REMOTE_ADDR="203.0.113.9")
    assert len(guests(redis_client)) == 2
