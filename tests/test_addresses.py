"""Which address a guest is recorded under, and what is never believed."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from whos_online.addresses import client_address, normalise
from whos_online.conf import get_config


def client_of(meta: Mapping[str, object]) -> str | None:
    """The client address under the proxy settings in force."""
    config = get_config()
    return client_address(meta, config.proxy_count, config.trusted_networks)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("192.0.2.1", "192.0.2.1"),
        (" 192.0.2.1 ", "192.0.2.1"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("2001:0db8:0000:0000:0000:ff00:0042:8329", "2001:db8::ff00:42:8329"),
        ("::ffff:198.51.100.4", "198.51.100.4"),
        ("fe80::1%eth0", "fe80::1"),
        ("::1", "::1"),
    ],
)
def test_valid_addresses_are_normalised(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "localhost",
        "192.0.2",
        "192.0.2.256",
        "192.0.2.1:8080",
        "[::1]",
        "1" * 65,
        None,
        7,
    ],
)
def test_anything_else_is_not_an_address(raw: object) -> None:
    assert normalise(raw) is None


def test_remote_addr_is_the_client_by_default() -> None:
    meta = {"REMOTE_ADDR": "192.0.2.1", "HTTP_X_FORWARDED_FOR": "203.0.113.7"}
    assert client_of(meta) == "192.0.2.1"


def test_without_remote_addr_there_is_no_client() -> None:
    assert client_of({"HTTP_X_FORWARDED_FOR": "203.0.113.7"}) is None


def test_one_proxy_gives_the_rightmost_forwarded_address(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_PROXY_COUNT = 1
    meta = {
        "REMOTE_ADDR": "10.0.0.2",
        "HTTP_X_FORWARDED_FOR": "198.51.100.66, 203.0.113.7",
    }
    assert client_of(meta) == "203.0.113.7"


def test_two_proxies_skip_the_address_the_first_proxy_appended(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_PROXY_COUNT = 2
    meta = {
        "REMOTE_ADDR": "10.0.0.2",
        "HTTP_X_FORWARDED_FOR": "198.51.100.66, 203.0.113.7, 10.0.0.1",
    }
    assert client_of(meta) == "203.0.113.7"


def test_a_chain_shorter_than_the_proxy_count_gives_no_client(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_PROXY_COUNT = 2
    meta = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "203.0.113.7"}
    assert client_of(meta) is None


def test_trusted_networks_are_skipped_from_the_right(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_TRUSTED_PROXIES = ["10.0.0.0/8"]
    meta = {
        "REMOTE_ADDR": "10.0.0.2",
        "HTTP_X_FORWARDED_FOR": "198.51.100.66, 203.0.113.7, 10.1.2.3",
    }
    assert client_of(meta) == "203.0.113.7"


def test_a_request_not_from_a_trusted_proxy_is_its_own_client(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_TRUSTED_PROXIES = ["10.0.0.0/8"]
    meta = {"REMOTE_ADDR": "192.0.2.1", "HTTP_X_FORWARDED_FOR": "203.0.113.7"}
    assert client_of(meta) == "192.0.2.1"


def test_a_chain_of_only_trusted_proxies_gives_no_client(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_TRUSTED_PROXIES = ["10.0.0.0/8"]
    meta = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "10.0.0.9"}
    assert client_of(meta) is None


@pytest.mark.parametrize(
    "forwarded",
    ["", "not-an-address", "203.0.113.7, garbage", "1.1.1.1," * 500],
)
def test_a_malformed_or_oversized_forwarded_header_gives_no_client(
    settings: SettingsWrapper, forwarded: str
) -> None:
    settings.WHOS_ONLINE_TRUSTED_PROXIES = ["10.0.0.0/8"]
    meta = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": forwarded}
    assert client_of(meta) is None


def test_a_missing_forwarded_header_behind_a_proxy_gives_no_client(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_PROXY_COUNT = 1
    assert client_of({"REMOTE_ADDR": "10.0.0.2"}) is None


def test_an_invalid_trusted_network_turns_presence_off_at_request_time(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_TRUSTED_PROXIES = ["not a network", "10.0.0.0/8"]
    (problem,) = get_config().problems
    assert "WHOS_ONLINE_TRUSTED_PROXIES" in problem
