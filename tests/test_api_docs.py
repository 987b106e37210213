"""docs/api.md keeps up with whos_online.api: every public name with its
signature, written in the Markdown itself (not only in autodoc directives,
which the repository's reader does not see), and each function's cost as
the page states it, measured."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import presence
from tests.conftest import CommandCounter
from whos_online import api

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs/api.md").read_text()
# The page without its autodoc directives: what stands alone.
MARKDOWN = re.sub(r"```\{eval-rst\}.*?```", "", PAGE, flags=re.S)
FUNCTIONS = sorted(
    name for name in api.__all__ if inspect.isfunction(getattr(api, name))
)
CLASSES = sorted(name for name in api.__all__ if inspect.isclass(getattr(api, name)))
# What a call costs, measured below; an async iterator's cost is per change
# (tests/test_live.py follows one).
CALLED = [
    name for name in FUNCTIONS if not inspect.isasyncgenfunction(getattr(api, name))
]


def section(name: str) -> str:
    """The Markdown section of ``name``, from its heading to the next."""
    start = MARKDOWN.index(f"\n### `{name}`\n")
    end = MARKDOWN.find("\n#", start + 1)
    return MARKDOWN[start : None if end == -1 else end]


def signature(name: str) -> str:
    """``api.NAME(params) -> returns``, as a reader writes the call: the
    parameters with their defaults, the return type as annotated."""
    found = inspect.signature(getattr(api, name))
    bare = found.replace(
        parameters=[p.replace(annotation=p.empty) for p in found.parameters.values()],
        return_annotation=found.empty,
    )
    return f"api.{name}{bare} -> {found.return_annotation}"


def test_every_public_name_has_a_section() -> None:
    assert sorted(api.__all__) == sorted([*FUNCTIONS, *CLASSES, "Status"])
    for name in api.__all__:
        assert f"\n### `{name}`\n" in MARKDOWN


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_is_written_with_its_signature(name: str) -> None:
    assert f"```python\n{signature(name)}\n```" in section(name)


@pytest.mark.parametrize("name", CLASSES)
def test_every_type_is_written_with_its_fields(name: str) -> None:
    cls = getattr(api, name)
    written = section(name)
    if issubclass(cls, Exception):
        assert f"class {name}(Exception):" in written
        return
    assert f"class {name}:" in written
    for field in dataclasses.fields(cls):
        assert f"\n    {field.name}: {field.type}\n" in written
    for attribute, value in vars(cls).items():
        if isinstance(value, property):
            returns = inspect.signature(value.fget).return_annotation  # type: ignore[arg-type]
            assert re.search(
                rf"\n    {attribute}: {re.escape(returns)} +# property", written
            )


def test_status_is_written_as_its_values() -> None:
    values = ", ".join(f'"{value}"' for value in typing.get_args(api.Status))
    assert f"Status = Literal[{values}]" in section("Status")


# Each function's cost, as its section's "**Cost:**" line says it.

NUMBERS = {"no": 0, "one": 1, "two": 2, "three": 3}


def stated_cost(name: str) -> tuple[int, int]:
    """(round trips, queries) as the section says them, for a few users."""
    (line,) = re.findall(r"^\*\*Cost:\*\* (.+)$", section(name), re.M)
    trips = re.search(r"(\w+) round trips?", line)
    queries = re.search(r"(\w+) quer(?:y|ies)", line)
    assert trips is not None and queries is not None, line
    return NUMBERS[trips.group(1)], NUMBERS[queries.group(1)]


@pytest.fixture
def everyone(alice: User, bob: User) -> tuple[User, User]:
    """Alice and bob online, alice in a room."""
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    presence.record_in_room("thread:1", "users", str(alice.pk))
    return alice, bob


CALLS: dict[str, Callable[[User, User], Any]] = {
    "status": lambda alice, bob: api.status(alice, viewer=bob),
    "is_online": lambda alice, bob: api.is_online(alice, viewer=bob),
    "last_seen": lambda alice, bob: api.last_seen(alice, viewer=bob),
    "statuses": lambda alice, bob: api.statuses([alice, bob], viewer=bob),
    "online_users": lambda alice, bob: api.online_users(viewer=bob),
    "counts": lambda alice, bob: api.counts(viewer=bob),
    "room_counts": lambda alice, bob: api.room_counts(["thread:1", "t:2"], viewer=bob),
    "viewers": lambda alice, bob: api.viewers("thread:1", viewer=bob),
    "is_viewing": lambda alice, bob: api.is_viewing(alice, "thread:1", viewer=bob),
    "should_notify": lambda alice, bob: api.should_notify([alice, bob], "thread:1"),
    "is_invisible": lambda alice, bob: api.is_invisible(alice),
    # bob is in no room.
    "set_invisible": lambda alice, bob: api.set_invisible(bob),
}


def test_every_function_is_measured() -> None:
    assert sorted(CALLS) == CALLED


@pytest.mark.django_db
@pytest.mark.usefixtures("warm_scripts")
@pytest.mark.parametrize("name", CALLED)
def test_every_function_costs_what_its_section_says(
    name: str, everyone: tuple[User, User], redis_commands: CommandCounter
) -> None:
    redis_commands.reset()
    with CaptureQueriesContext(connection) as captured:
        CALLS[name](*everyone)
    # The test's transaction wraps each atomic block in a savepoint.
    queries = [q for q in captured if "SAVEPOINT" not in q["sql"]]
    assert (redis_commands.round_trips, len(queries)) == stated_cost(name)
