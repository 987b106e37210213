"""The pages' rows: a forum's home page with the app beside the same page
without it, and the widget's page beside a plain template of the same
names, in instructions, each saying how many of its counted pages took a
new snapshot (benchmarks/pages.py, benchmarks/pages_report.py)."""

from __future__ import annotations

from typing import Any

import pytest

# benchmarks/ is in the repository, not in the sdist that ships the tests.
pytest.importorskip("benchmarks.pages_report")

from benchmarks.instructions import Case, Counted  # noqa: E402
from benchmarks.pages import EACH, SHIPPED, VARIANTS, WITHIN, name, split  # noqa: E402
from benchmarks.pages_report import page_rows  # noqa: E402
from benchmarks.report import headline  # noqa: E402
from benchmarks.table import Row, Table  # noqa: E402

TAKEN = {SHIPPED: 2, WITHIN: 0, EACH: 20}


def found(home: dict[str, float], widget: dict[str, float]) -> dict[str, Any]:
    """A run's pages for both viewers: the home page with the app, as each
    variant counted it, beside 3,000,000 without; the widget's page and the
    plain listing (8,000,000) each above an empty page of 800,000."""
    counted: dict[str, float] = {}
    snapshots: dict[str, int] = {}
    for kind in ("guest", "user"):
        counted[name("home page without the app", kind)] = 3_000_000
        counted[name("plain listing page", kind)] = 8_800_000
        counted[name("empty page", kind)] = 800_000
        for variant in VARIANTS:
            for page, figures in (
                ("home page with the app", home),
                ("widget page", widget),
            ):
                counted[name(page, kind, variant)] = figures[variant]
                snapshots[name(page, kind, variant)] = TAKEN[variant]
    return {"instructions": counted, "snapshots": snapshots, "requests": 20}


def rows(home: dict[str, float], widget: dict[str, float]) -> dict[str, Row]:
    table = Table()
    page_rows(table, found(home, widget))
    return {row.name: row for row in table.rows}


HOME = {SHIPPED: 4_200_000.0, WITHIN: 3_600_000.0, EACH: 9_000_000.0}
WIDGET = {SHIPPED: 6_000_000.0, WITHIN: 4_000_000.0, EACH: 20_000_000.0}


def test_the_whole_page_is_divided_by_the_page_without_the_app() -> None:
    shown = rows(HOME, WIDGET)
    row = shown[
        "whole page with the app, guest, as shipped "
        "(2 of 20 pages took a new snapshot): instructions"
    ]
    assert row.measured == "4,200,000"
    assert row.floor == "the page without the app: 3,000,000"
    assert (row.ratio, row.target, row.verdict) == ("1.40×", "≤ 1.3×", "**missed**")
    within = shown[
        "whole page with the app, user, within the snapshot's age "
        "(0 of 20 pages took a new snapshot): instructions"
    ]
    assert (within.ratio, within.verdict) == ("1.20×", "met")


def test_the_widget_page_and_the_listing_are_each_less_the_empty_page() -> None:
    shown = rows(HOME, WIDGET)
    row = shown[
        "widget page, user, as shipped (2 of 20 pages took a new snapshot): "
        "instructions added"
    ]
    assert row.measured == "5,200,000"
    assert row.floor == "a plain template, same names and figures: 8,000,000"
    assert (row.ratio, row.target, row.verdict) == ("0.65×", "≤ 1×", "met")


def test_a_new_snapshot_each_page_is_shown_without_a_target() -> None:
    shown = rows(HOME, WIDGET)
    row = shown[
        "widget page, guest, a new snapshot each page "
        "(20 of 20 pages took a new snapshot): instructions added"
    ]
    assert (row.ratio, row.target, row.verdict) == ("2.40×", "—", "")


def test_every_page_row_is_there_for_both_viewers() -> None:
    shown = rows(HOME, WIDGET)
    assert len(shown) == 2 * 2 * len(VARIANTS)
    assert sum(", user, " in row for row in shown) == 2 * len(VARIANTS)


def test_a_run_without_the_pages_has_no_page_rows() -> None:
    table = Table()
    page_rows(table, None)
    assert table.rows == []


def test_the_headline_shows_the_pages_as_shipped() -> None:
    table = Table()
    page_rows(table, found(HOME, WIDGET))
    text = headline(table.rows, "capacity")
    assert text.count("as shipped") == 4
    assert "within the snapshot's age" not in text
    assert "| whole page with the app, guest, as shipped" in text


def counted(**redis: dict[str, int]) -> Counted:
    return Counted({"bare guest": 700_000.0, "widget page, guest": 3e6}, redis)


def test_the_snapshots_taken_are_counted_from_redis() -> None:
    pages = {"widget page, guest": Case("ours", [{}])}
    run = counted(**{"widget page, guest": {"evalsha": 3, "hmget": 3, "hget": 3}})
    others, figures = split(run, pages)
    assert others == {"bare guest": 700_000.0}
    assert figures["snapshots"] == {"widget page, guest": 3}
    assert figures["instructions"] == {"widget page, guest": 3e6}


def test_a_page_that_recorded_its_visitor_fails_the_run() -> None:
    pages = {"widget page, guest": Case("ours", [{}])}
    run = counted(**{"widget page, guest": {"evalsha": 1, "zadd": 1, "hmget": 1}})
    with pytest.raises(RuntimeError, match="recorded its visitor"):
        split(run, pages)
