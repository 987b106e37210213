"""benchmarks/path.py counts a request's moves between the app's modules and
the climbs back to a higher layer, by the layers import-linter checks."""

from __future__ import annotations

from pathlib import Path

import pytest

# benchmarks/ is in the repository, not in the sdist that ships the tests.
pytest.importorskip("benchmarks.path")

from benchmarks.path import floors, walk  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_the_layers_are_those_of_the_import_contract() -> None:
    height = floors(ROOT)
    assert height["middleware"] > height["page"] > height["visitors"]
    assert height["visitors"] > height["seen"] == height["marks"] > height["store"]


def test_calls_within_a_module_are_one_stay_and_a_call_back_up_is_a_climb() -> None:
    height = {"middleware": 3, "page": 2, "seen": 1}
    entered = ["middleware:a", "page:b", "page:c", "seen:d", "page:e"]
    stays, moves, climbs = walk(entered, height)
    assert stays == ["middleware", "page", "seen", "page"]
    assert (moves, climbs) == (3, 1)


def test_modules_outside_the_layers_are_not_counted() -> None:
    height = {"page": 2, "seen": 1}
    assert walk(["page:a", "__init__:b", "page:c", "seen:d"], height)[1:] == (1, 0)
