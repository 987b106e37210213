"""The benchmark report divides by the floors measured in the same run and
says so where a floor cannot be divided by (benchmarks/report.py)."""

from __future__ import annotations

import pytest

# benchmarks/ is in the repository, not in the sdist that ships the tests.
pytest.importorskip("benchmarks.report")

from benchmarks.report import headline  # noqa: E402
from benchmarks.table import Table  # noqa: E402


def test_a_floor_far_below_a_bare_request_is_divided_by_as_measured() -> None:
    table = Table()
    table.add("guarded guest: instructions added", [24_000], [4_000], "A", "", 2.5)
    assert table.derived["guarded guest: instructions added"]["ratio_median"] == 6.0
    assert table.rows[0].floor == "A: 4,000"
    assert table.rows[0].verdict == "**missed**"


def test_ratios_are_taken_round_by_round() -> None:
    table = Table()
    table.add("widget", [300.0, 200.0, 900.0], [100.0, 100.0, 150.0], "plain", most=3)
    assert table.rows[0].ratio == "**3.00×** (2.00–6.00)"
    assert table.rows[0].verdict == "met"


def test_a_floor_within_its_own_noise_gets_no_ratio() -> None:
    table = Table()
    table.add("guarded guest: µs added", [5.0, 5.2, 5.1], [0.4, 1.0, 2.3], "A")
    assert table.rows[0].ratio == "floor too small to divide by (within noise)"
    assert table.derived["guarded guest: µs added"]["ratio_median"] is None


def test_a_floor_no_larger_than_two_counts_of_one_case_differ_gets_no_ratio() -> None:
    table = Table()
    table.add("guarded user: instructions", [30_000], [1_500], "A", "", noise=2_000)
    assert table.rows[0].ratio.startswith("floor too small")
    assert "counted twice: ±2,000" in table.rows[0].floor


def test_a_figure_with_a_cap_of_its_own_is_judged_by_its_largest_measure() -> None:
    table = Table()
    table.add("prune: longest block", [4.0, 11.0], [2.0, 2.0], "one", " ms", cap=10)
    assert (table.rows[0].target, table.rows[0].verdict) == ("≤ 10 ms", "**missed**")


def test_the_headline_shows_each_row_with_its_floor() -> None:
    table = Table()
    table.add("the widget: µs added to a page", [2_000.0], [900.0], "a plain template")
    text = headline(table.rows, "capacity")
    assert "| the widget: µs added to a page | 2,000.0 µs | a plain template: " in text
    assert "2.22×" in text
