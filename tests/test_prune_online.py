"""python manage.py prune_online"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from io import StringIO

import pytest
from django.core import checks
from django.core.management import (
    CommandError,
    call_command,
    execute_from_command_line,
)
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence


def prune(*args: str) -> str:
    out = StringIO()
    call_command("prune_online", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def stale_and_fresh(seen_ago: Callable[[str, str, float], None]) -> None:
    seen_ago("users", "1", 1000)
    seen_ago("users", "2", 10)
    seen_ago("guests", "192.0.2.1", 1000)
    seen_ago("guests", "192.0.2.2", 5000)


@pytest.mark.usefixtures("stale_and_fresh")
def test_it_removes_stale_members_and_says_how_many(redis_client: Redis) -> None:
    assert prune() == "Removed 3 stale members.\n"
    assert redis_client.zcard(presence.key("users")) == 1
    assert redis_client.zcard(presence.key("guests")) == 0


@pytest.mark.usefixtures("stale_and_fresh")
def test_dry_run_counts_and_removes_nothing(redis_client: Redis) -> None:
    assert prune("--dry-run") == "Would remove 3 stale members.\n"
    assert redis_client.zcard(presence.key("users")) == 2


@pytest.mark.usefixtures("stale_and_fresh")
def test_verbosity_0_prints_nothing() -> None:
    assert prune("--verbosity", "0") == ""


@pytest.mark.usefixtures("stale_and_fresh")
def test_verbosity_2_prints_each_set() -> None:
    assert prune("--verbosity", "2") == (
        "Removed 3 stale members.\n"
        "  users: 1\n  hidden: 0\n  guests: 2\n  bots: 0\n"
        "  last-seen: 0\n"
    )


def test_one_member_is_singular(seen_ago: Callable[[str, str, float], None]) -> None:
    seen_ago("users", "1", 1000)
    assert prune() == "Removed 1 stale member.\n"


@pytest.mark.usefixtures("unreachable_redis")
def test_redis_unreachable_is_a_command_error() -> None:
    with pytest.raises(
        CommandError, match="Could not prune who's online.*ConnectionError"
    ):
        prune()


def test_a_cache_that_is_not_redis_is_a_command_error(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "locmem"
    with pytest.raises(CommandError, match="not a Redis cache backend"):
        prune()


@pytest.fixture
def host_checks_that_fail() -> Iterator[None]:
    """The host site's own checks, an error and a warning, as cron finds them."""

    def host_check(**kwargs: object) -> list[checks.CheckMessage]:
        return [
            checks.Error("the host's error", id="host.E001"),
            checks.Warning("the host's warning", id="host.W001"),
        ]

    checks.register(host_check)
    yield
    checks.registry.registry.registered_checks.discard(host_check)


@pytest.mark.usefixtures("stale_and_fresh", "host_checks_that_fail")
def test_a_cron_run_at_verbosity_0_prints_nothing_whatever_the_checks_say(
    capsys: pytest.CaptureFixture[str], redis_client: Redis
) -> None:
    execute_from_command_line(["manage.py", "prune_online", "--verbosity", "0"])
    assert capsys.readouterr() == ("", "")
    assert redis_client.zcard(presence.key("users")) == 1
