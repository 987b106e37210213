"""python manage.py reset_online_record"""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO

import pytest
from django.core import checks
from django.core.management import (
    CommandError,
    call_command,
    execute_from_command_line,
)

from tests import presence


def reset(*args: str) -> str:
    out = StringIO()
    call_command("reset_online_record", *args, stdout=out)
    return out.getvalue()


def test_it_forgets_the_record(seen_ago: Callable[[str, str, float], None]) -> None:
    presence.record_user(1)
    seen_ago("users", "1", 1000)
    assert reset() == "The record was reset.\n"
    assert presence.most_ever_online() is None


def test_it_says_when_there_was_no_record() -> None:
    assert reset() == "There was no record to reset.\n"


def test_verbosity_0_prints_nothing() -> None:
    assert reset("--verbosity", "0") == ""


@pytest.mark.usefixtures("unreachable_redis")
def test_redis_unreachable_is_a_command_error() -> None:
    with pytest.raises(CommandError, match="Could not reset the record"):
        reset()


def test_it_runs_whatever_the_system_checks_say(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def host_check(**kwargs: object) -> list[checks.CheckMessage]:
        return [checks.Error("the host's error", id="host.E001")]

    checks.register(host_check)
    try:
        execute_from_command_line(["manage.py", "reset_online_record"])
    finally:
        checks.registry.registry.registered_checks.discard(host_check)
    assert capsys.readouterr() == ("There was no record to reset.\n", "")
