"""The circuit breaker between the site and a failing Redis."""

from __future__ import annotations

import logging

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper
from redis.exceptions import ConnectionError as RedisConnectionError

from whos_online.failsafe import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


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


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def breaker(clock: Clock, settings: SettingsWrapper) -> CircuitBreaker:
    settings.WHOS_ONLINE_FAILURE_BACKOFF = 10
    return CircuitBreaker(clock)


def test_a_failure_returns_the_default(breaker: CircuitBreaker) -> None:
    assert breaker.call(Flaky(), "default") == "default"


def test_after_a_failure_redis_is_left_alone_for_the_backoff(
    breaker: CircuitBreaker, clock: Clock
) -> None:
    flaky = Flaky()
    breaker.call(flaky, None)
    clock.now += 9.9
    assert breaker.call(flaky, "skipped") == "skipped"
    assert flaky.calls == 1


def test_after_the_backoff_one_call_probes_and_recovery_closes_it(
    breaker: CircuitBreaker, clock: Clock
) -> None:
    flaky = Flaky()
    breaker.call(flaky, None)
    clock.now += 10
    flaky.down = False
    assert breaker.call(flaky, None) == "ok"
    assert breaker.call(flaky, None) == "ok"
    assert not breaker.is_open


def test_a_failed_probe_opens_it_again(breaker: CircuitBreaker, clock: Clock) -> None:
    flaky = Flaky()
    breaker.call(flaky, None)
    clock.now += 10
    breaker.call(flaky, None)
    assert flaky.calls == 2
    assert breaker.is_open


def test_failures_are_logged_at_most_once_a_minute_with_a_count(
    breaker: CircuitBreaker, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    flaky = Flaky()
    with caplog.at_level(logging.WARNING, logger="whos_online"):
        for _ in range(7):
            breaker.call(flaky, None)
            clock.now += 10
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2
    assert "5 more failures were not logged" in messages[1]


def test_recovery_is_logged(
    breaker: CircuitBreaker, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    flaky = Flaky()
    breaker.call(flaky, None)
    clock.now += 10
    flaky.down = False
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="whos_online"):
        breaker.call(flaky, None)
    assert [r.getMessage() for r in caplog.records] == [
        "Who's online reaches Redis again."
    ]
