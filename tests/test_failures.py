"""The circuit breaker between the site and a failing Redis."""

from __future__ import annotations

import logging

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper
from redis.exceptions import ConnectionError as RedisConnectionError

from tests.conftest import Clock
from whos_online.store import get_store


class Flaky:
    """A Redis call that fails while ``down`` is set, and counts its calls."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.down:
            raise RedisConnectionError("Connection refused")
        return "ok"


@pytest.fixture(autouse=True)
def backoff(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_FAILURE_BACKOFF = 10


@pytest.fixture
def flaky() -> Flaky:
    return Flaky()


def test_a_failure_returns_the_default(flaky: Flaky) -> None:
    assert get_store().or_default(flaky, "default") == "default"


def test_after_a_failure_redis_is_left_alone_for_the_backoff(
    flaky: Flaky, clock: Clock
) -> None:
    get_store().or_default(flaky, None)
    clock.advance(9.9)
    assert get_store().or_default(flaky, "skipped") == "skipped"
    assert flaky.calls == 1


def test_after_the_backoff_one_call_probes_and_recovery_closes_it(
    flaky: Flaky, clock: Clock
) -> None:
    get_store().or_default(flaky, None)
    clock.advance(10.1)
    flaky.down = False
    assert get_store().or_default(flaky, None) == "ok"
    assert get_store().or_default(flaky, None) == "ok"
    assert flaky.calls == 3


def test_a_failed_probe_opens_it_again(flaky: Flaky, clock: Clock) -> None:
    get_store().or_default(flaky, None)
    clock.advance(10.1)
    get_store().or_default(flaky, None)
    clock.advance(5)
    assert get_store().or_default(flaky, "skipped") == "skipped"
    assert flaky.calls == 2


def test_failures_are_logged_at_most_once_a_minute_with_a_count(
    flaky: Flaky, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(5):
        get_store().or_default(flaky, None)
        clock.advance(11)
    clock.advance(20)
    get_store().or_default(flaky, None)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "1 more like this were not logged" not in warnings[0].getMessage()
    assert "4 more like this were not logged" in warnings[1].getMessage()


def test_recovery_is_logged(
    flaky: Flaky, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    get_store().or_default(flaky, None)
    clock.advance(11)
    flaky.down = False
    with caplog.at_level(logging.INFO, logger="whos_online"):
        get_store().or_default(flaky, None)
    assert "reaches Redis again" in caplog.records[-1].getMessage()


def test_an_error_that_is_not_redis_is_raised_and_leaves_the_breaker_closed(
    flaky: Flaky,
) -> None:
    def bug() -> None:
        raise ValueError("a bug, not an outage")

    with pytest.raises(ValueError):
        get_store().or_default(bug, None)
    flaky.down = False
    assert get_store().or_default(flaky, None) == "ok"
