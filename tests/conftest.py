from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django_redis import get_redis_connection
from fakeredis import _helpers as fakeredis_helpers
from fakeredis._socket import _base as fakeredis_socket
from fakeredis.commands_mixins import server_mixin as fakeredis_server
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis
from redis.client import Pipeline

from tests import presence
from whos_online import live
from whos_online.models import Visibility
from whos_online.store import get_store, scripts


@pytest.fixture(autouse=True)
def isolated_presence(settings: SettingsWrapper) -> Iterator[str]:
    """Give each test keys of its own and clean up after.

    A new prefix is a setting change, so the process state derived from
    settings (breaker, guards, clock, throttle) starts afresh too.
    Only keys under this test's prefix (its shards' included) are deleted,
    so a real Redis shared with anything else is left as it was.
    """
    prefix = f"whos_online_test_{uuid.uuid4().hex[:12]}"
    settings.WHOS_ONLINE_KEY_PREFIX = prefix
    yield prefix
    client: Redis = get_redis_connection("default")
    for name in client.scan_iter(match=f"{{{prefix}*", count=1000):
        client.delete(name)


class Clock:
    """Time as the site and its (in-process) Redis see it, moved by hand."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def advance(self, seconds: float) -> None:
        self.ahead += seconds


DAY = 86400


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Move time forward for the web server and fakeredis alike, to age
    guards, tokens and members. A real Redis keeps its own time, so tests
    that need this run on fakeredis only. Ask for it before any fixture that
    records someone: late in the day it moves on to the next."""
    if os.environ.get("REDIS_URL"):
        pytest.skip("a real Redis does not follow the test's clock")
    moved = Clock()
    wall, monotonic = time.time, time.monotonic
    monkeypatch.setattr(time, "time", lambda: wall() + moved.ahead)
    monkeypatch.setattr(time, "monotonic", lambda: monotonic() + moved.ahead)
    # A test that moves time on starts a day afresh when the day has less
    # than two hours left: what a day keeps (today's figures, a renewal of
    # today's record) is not what the test is about.
    left = DAY - wall() % DAY
    if left < 2 * 3600:
        moved.advance(left + 60)
    return moved


@pytest.fixture
def step_wall_clock(
    monkeypatch: pytest.MonkeyPatch, clock: Clock
) -> Callable[[float], None]:
    """Step this web server's wall clock (``time.time``) by some seconds, as
    an operator or NTP may, while its monotonic clock runs on and Redis (the
    in-process fakeredis here) keeps true time."""
    true_time = time.time
    redis_time = SimpleNamespace(time=true_time)
    monkeypatch.setattr(fakeredis_helpers, "time", redis_time)
    monkeypatch.setattr(fakeredis_server, "time", redis_time)
    # fakeredis runs its keys' expiry by this one.
    monkeypatch.setattr(fakeredis_socket, "time", redis_time)

    def step(seconds: float) -> None:
        monkeypatch.setattr(time, "time", lambda: true_time() + seconds)

    return step


@pytest.fixture
def visibility_table_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A site that has not run ``migrate whos_online``: the app's queries
    name a table the database does not have, and fail as they would there.

    The model is pointed at another name rather than the table dropped: on
    MySQL and MariaDB a ``DROP TABLE`` is not rolled back, and commits the
    test's transaction with it, so the table and the test's rows would
    outlive the test."""
    monkeypatch.setattr(Visibility._meta, "db_table", "whos_online_not_migrated")


@pytest.fixture
def redis_client() -> Redis:
    return get_store().client


@pytest.fixture
def server_now(redis_client: Redis) -> Callable[[], float]:
    """The Redis server's clock, which presence scores are taken from."""

    def now() -> float:
        seconds, micros = redis_client.time()
        return seconds + micros / 1_000_000

    return now


@pytest.fixture
def seen_ago(
    redis_client: Redis, server_now: Callable[[], float]
) -> Callable[[str, str, float], None]:
    """Write a member into a set as if last seen ``seconds`` ago."""

    def write(kind: str, member: str, seconds: float) -> None:
        redis_client.zadd(presence.key(kind), {member: server_now() - seconds})

    return write


class CommandCounter:
    """Counts the commands a Redis client sends, and its round trips: one
    per command, or per pipeline of them.

    A shard's first record of each minute also keeps the minute's figures
    (``tick.lua`` and ``raise.lua``, two round trips a minute); those are
    left out, so that a test which happens to cross a minute counts the
    same. Their own tests look for them in ``minute_scripts``."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        self.round_trips = 0
        self.minute_scripts = 0

    def __len__(self) -> int:
        return len(self.commands)

    def reset(self) -> None:
        self.commands.clear()
        self.round_trips = 0

    def sent(self, commands: list[tuple[Any, ...]]) -> None:
        kept = [args for args in commands if not _is_minute_script(args)]
        self.minute_scripts += len(commands) - len(kept)
        self.commands += [str(args[0]) for args in kept]
        self.round_trips += 1 if kept else 0


MINUTE_SCRIPTS = {
    part for name in ("tick", "raise") for part in scripts.source_of(name)
}


def _is_minute_script(args: tuple[Any, ...]) -> bool:
    return str(args[0]).upper() in ("EVALSHA", "EVAL") and args[1] in MINUTE_SCRIPTS


@pytest.fixture
def redis_commands(monkeypatch: pytest.MonkeyPatch) -> CommandCounter:
    """Every command any Redis client sends from here on, by name."""
    counter = CommandCounter()
    original = Redis.execute_command

    def counting(self: Redis, *args: Any, **options: Any) -> Any:
        counter.sent([args])
        return original(self, *args, **options)  # type: ignore[no-untyped-call]

    original_pipeline = Pipeline.execute

    def counting_pipeline(self: Pipeline, raise_on_error: bool = True) -> Any:
        counter.sent([args for args, _ in self.command_stack])
        return original_pipeline(self, raise_on_error)

    original_plain = scripts.plain

    def counting_plain(client: Redis, commands: list[tuple[Any, ...]]) -> Any:
        counter.sent(commands)
        return original_plain(client, commands)

    monkeypatch.setattr(Redis, "execute_command", counting)
    monkeypatch.setattr(Pipeline, "execute", counting_pipeline)
    monkeypatch.setattr(scripts, "plain", counting_plain)
    return counter


@pytest.fixture
def retired_hubs() -> Iterator[None]:
    """Live streams' hubs of this test retired after it, so the next test's
    streams start a hub of their own."""
    yield
    for hub in live._hubs:
        hub.retired = True
    get_store()


@pytest.fixture
def warm_scripts() -> None:
    """Load the Lua scripts so later calls are a single EVALSHA each."""
    presence.load_scripts()


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("alice", password="pw")


@pytest.fixture
def bob(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("bob", password="pw")


@pytest.fixture
def unreachable_redis(settings: SettingsWrapper) -> None:
    """Point the app at a port where nothing listens."""
    settings.WHOS_ONLINE_CACHE_ALIAS = "unreachable"


@pytest.fixture
def browser() -> Client:
    """A test client that keeps its cookies, like a browser."""
    return Client()
