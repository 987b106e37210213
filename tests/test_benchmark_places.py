"""benchmarks/places_lua.py and lua_instructions.py measure places.lua as
Redis is sent it."""

from __future__ import annotations

import pytest

# benchmarks/ is in the repository, not in the sdist that ships the tests.
pytest.importorskip("benchmarks.places_lua")

from benchmarks.places_lua import source  # noqa: E402
from whos_online.store import scripts  # noqa: E402


def test_the_work_trees_places_lua_is_measured_as_the_store_sends_it() -> None:
    assert source(None) == scripts.source_of("places")[0]


def test_the_prelude_of_a_measured_script_is_defined_below_its_hot_path() -> None:
    measured = source(None)
    assert measured.index("return '+'") < measured.index("local function")
