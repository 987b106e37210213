"""Redis going away under a stream of requests: every page is still served.

A private redis-server is stopped part way through a stream of requests and
started again on the same port; a silent server that accepts connections
but never answers stands for a hung Redis. The latency the outage adds is
printed as a report, never asserted: durations on a shared CI machine prove
nothing, and the circuit breaker's job is to make them not matter.
"""

from __future__ import annotations

import socket
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.redis_servers import (
    RedisServer,
    cache_for,
    needs_redis_server,
    on_redis_server,
    redis_server,
)
from whos_online.store import Kind, get_store

__all__ = ["on_redis_server", "redis_server"]  # fixtures, used by name

REQUESTS_PER_PHASE = 100
# Requests come 5 ms apart, so the outage outlasts the back-off a few times.
PACE = 0.005
BACKOFF = 0.2
MIDDLEWARE = "whos_online.middleware.WhosOnlineMiddleware"


@dataclass
class Phase:
    name: str
    statuses: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    tries: int = 0  # records the breaker let through to Redis

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def worst(self) -> float:
        return max(self.seconds)

    def line(self, baseline: Phase) -> str:
        """Milliseconds, and what they add to the baseline's."""
        return (
            f"{self.name:<24} {len(self.seconds):>4} {self.tries:>5}"
            f" {self.median * 1000:>9.2f} {self.worst * 1000:>8.2f}"
            f" {(self.median - baseline.median) * 1000:>+12.2f}"
            f" {(self.worst - baseline.worst) * 1000:>+11.2f}"
        )


def address(n: int) -> str:
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"


def visit(n: int, phase: Phase) -> None:
    """One request from a new visitor without cookies, who wants recording."""
    start = time.perf_counter()
    response = Client().get("/", REMOTE_ADDR=address(n))
    phase.seconds.append(time.perf_counter() - start)
    phase.statuses.append(response.status_code)


def is_recorded(n: int) -> bool:
    return get_store().client.zscore(presence.key("guests"), address(n)) is not None


@pytest.fixture
def phases(monkeypatch: pytest.MonkeyPatch) -> list[Phase]:
    """The phases of a stream; each counts the records the breaker let through."""
    found: list[Phase] = []
    record = presence.record

    def counting(kind: Kind, member: str, **options: Any) -> Any:
        found[-1].tries += 1
        return record(kind, member, **options)

    monkeypatch.setattr(presence, "record", counting)
    return found


def run_phase(phases: list[Phase], name: str, first: int, warm_up: bool) -> Phase:
    phases.append(Phase(name))
    if warm_up:  # imports, URL resolver, connecting, loading the Lua script
        Client().get("/")
        phases[-1].tries = 0
    for n in range(first, first + REQUESTS_PER_PHASE):
        visit(n, phases[-1])
        time.sleep(PACE)
    return phases[-1]


def report(phases: list[Phase]) -> str:
    """A table of the phases, the first being the baseline."""
    header = (
        f"{'phase':<24} {'reqs':>4} {'tries':>5} {'median ms':>9} {'worst ms':>8}"
        f" {'added median':>12} {'added worst':>11}"
    )
    lines = [phase.line(phases[0]) for phase in phases]
    return "\n".join(["", "Outage report (latency per request):", header, *lines])


@pytest.mark.real_redis
@needs_redis_server
def test_a_stream_of_requests_is_served_while_redis_stops_and_restarts(
    on_redis_server: RedisServer,
    settings: SettingsWrapper,
    phases: list[Phase],
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings.WHOS_ONLINE_FAILURE_BACKOFF = BACKOFF
    with_middleware = settings.MIDDLEWARE
    settings.MIDDLEWARE = [m for m in with_middleware if m != MIDDLEWARE]
    run_phase(phases, "baseline, no middleware", 0, warm_up=True)
    settings.MIDDLEWARE = with_middleware
    up = run_phase(phases, "Redis up", 1000, warm_up=True)
    recorded_while_up = sum(is_recorded(n) for n in range(1000, 1000 + len(up.seconds)))
    on_redis_server.stop()
    down = run_phase(phases, "Redis down", 2000, warm_up=False)
    on_redis_server.start()
    restarted = run_phase(phases, "Redis restarted", 3000, warm_up=False)

    with capsys.disabled():
        print(report(phases))
    assert {*up.statuses, *down.statuses, *restarted.statuses} == {200}
    assert recorded_while_up == REQUESTS_PER_PHASE
    assert down.tries < REQUESTS_PER_PHASE / 2  # the breaker spared the rest
    time.sleep(BACKOFF)
    visit(4000, restarted)
    assert is_recorded(4000)


@pytest.fixture
def silent_redis(settings: SettingsWrapper) -> Iterator[Callable[[], int]]:
    """A server that accepts connections and never answers; yields how many
    connections it has accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    accepted: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept)
    thread.start()
    port = listener.getsockname()[1]
    settings.CACHES = {
        **settings.CACHES,
        "silent": cache_for(f"redis://127.0.0.1:{port}/0"),
    }
    settings.WHOS_ONLINE_CACHE_ALIAS = "silent"
    try:
        yield lambda: len(accepted)
    finally:
        done.set()
        thread.join()
        for connection in [*accepted, listener]:
            connection.close()


def test_a_redis_that_never_answers_costs_one_bounded_wait_then_none(
    silent_redis: Callable[[], int], capsys: pytest.CaptureFixture[str]
) -> None:
    first, later = Phase("first request"), Phase("next 20 requests")
    visit(1, first)
    assert get_store().state.breaker.is_open
    for n in range(2, 22):
        visit(n, later)

    with capsys.disabled():
        print(
            f"\nA silent Redis: the first request took {first.seconds[0] * 1000:.0f} ms"
            f" (SOCKET_TIMEOUT 250 ms); the next 20 took at most"
            f" {max(later.seconds) * 1000:.1f} ms each."
        )
    assert {*first.statuses, *later.statuses} == {200}
    assert silent_redis() == 1


@pytest.mark.real_redis
@pytest.mark.django_db
@needs_redis_server
def test_browsing_users_are_listed_again_soon_after_redis_loses_its_data(
    on_redis_server: RedisServer,
    settings: SettingsWrapper,
    django_user_model: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Six users browse (a page each every half second, from one process) on
    a Redis without persistence; it restarts empty. Their guards name the old
    data's generation, so they are recorded again on a request soon after."""
    settings.WHOS_ONLINE_FAILURE_BACKOFF = BACKOFF
    browsers = []
    for n in range(6):
        browser = Client()
        browser.force_login(django_user_model.objects.create_user(f"user{n}"))
        browser.get("/")
        browsers.append(browser)

    def listed() -> int:
        return int(get_store().client.zcard(presence.key("users")) or 0)

    assert listed() == 6
    on_redis_server.stop()
    on_redis_server.start()
    restarted = time.monotonic()
    while listed() < 6 and time.monotonic() - restarted < 60:
        for browser in browsers:
            browser.get("/")
        time.sleep(0.5)
    seconds = time.monotonic() - restarted
    with capsys.disabled():
        print(
            f"\nAfter a restart without persistence, 6 of 6 users were listed "
            f"again {seconds:.1f} s later ({listed()} listed)."
        )
    assert listed() == 6
