"""The load run divides each case by the site without whos_online measured
in the same round, and its visitors keep cookies as browsers do
(benchmarks/load.py, benchmarks/load_report.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

# benchmarks/ is in the repository, not in the sdist that ships the tests.
pytest.importorskip("benchmarks.load_report")

from benchmarks import load_tags  # noqa: E402
from benchmarks.load_client import Visitor, percentile  # noqa: E402
from benchmarks.load_report import capacity_rows, rows, sweep_rows  # noqa: E402
from whos_online.templatetags import whos_online as the_apps_tags  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TAG = re.compile(r"{%\s*(\w+)")


def figures(rate: float, p50: float | None, p99: float | None) -> dict[str, Any]:
    return {"requests_per_s": rate, "p50_ms": p50, "p99_ms": p99}


def results(**rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return {"cases": {name: f"({name})" for name in rounds}, "rounds": rounds}


def test_each_figure_is_divided_by_the_floor_of_its_own_round() -> None:
    body = rows(
        results(
            a=[figures(200, 5, 10), figures(100, 10, 20)],
            b=[figures(200, 5.5, 12), figures(100, 11, 30)],
        )
    )
    assert [row[0] for row in body] == [
        "(b): achieved requests/s",
        "(b): p50",
        "(b): p99",
    ]
    assert [row[3] for row in body] == [
        "**1.00×** (1.00–1.00)",
        "**1.10×** (1.10–1.10)",
        "**1.35×** (1.20–1.50)",
    ]
    assert [row[5] for row in body] == ["met", "met", "**missed**"]


def test_fewer_requests_a_second_than_the_floor_misses_the_target() -> None:
    body = rows(results(a=[figures(200, 5, 10)], b=[figures(190, 5, 10)]))
    assert body[0][4:] == ["≥ 0.99×", "**missed**"]


def test_the_peer_is_shown_beside_the_floor_without_a_target() -> None:
    body = rows(results(a=[figures(200, 5, 10)], d=[figures(200, 20, 80)]))
    assert body[1][3:] == ["4.00×", "—", ""]


def test_a_round_that_answered_no_page_gives_no_latency_ratio() -> None:
    body = rows(results(a=[figures(200, 5, 10)], b=[figures(0, None, None)]))
    assert body[1][1] == "no page answered"


def test_visitors_keep_and_drop_cookies_as_browsers_do() -> None:
    visitor = Visitor("10.0.0.1", session="abc")
    assert b"Cookie: sessionid=abc\r\n" in visitor.request(8000, "/")
    visitor.keep(8000, [" whos_online=g1; Max-Age=300; Path=/", " csrftoken=t; Path=/"])
    visitor.keep(8000, [' sessionid=""; Max-Age=0; Path=/'])
    assert visitor.cookies[8000] == {"whos_online": "g1", "csrftoken": "t"}
    assert b"X-Forwarded-For: 10.0.0.1\r\n" in visitor.request(8000, "/")


def test_percentiles_are_by_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 99)) == (50.0, 99.0)


def swept(p99s: dict[int, list[float | None]]) -> dict[str, list[dict[str, Any]]]:
    return {
        str(rate): [figures(rate, 5, p99) for p99 in each]
        for rate, each in p99s.items()
    }


def test_a_sites_capacity_is_the_highest_rate_whose_median_p99_is_under_100_ms() -> (
    None
):
    sweep = {
        "a": swept({100: [10, 12], 200: [30, 40], 300: [90, 150]}),
        "b": swept({100: [20, 22], 200: [95, 150], 300: [900, 1000]}),
    }
    assert capacity_rows(sweep, {"a": "(a)", "b": "(b)"})[-2:] == [
        ["(a): highest rate with p99 < 100 ms", "200/s", "", "", ""],
        [
            "(b): highest rate with p99 < 100 ms",
            "100/s",
            "**0.50×**",
            "≥ 0.8×",
            "**missed**",
        ],
    ]


def test_a_rate_with_a_round_that_answered_nothing_is_over_capacity() -> None:
    sweep = {
        "a": swept({100: [10], 200: [20]}),
        "b": swept({100: [10], 200: [None]}),
    }
    rows_ = capacity_rows(sweep, {"a": "(a)", "b": "(b)"})
    assert rows_[-1][:2] == ["(b): highest rate with p99 < 100 ms", "100/s"]


def test_a_site_under_capacity_at_every_rate_swept_has_none() -> None:
    sweep = {"a": swept({100: [10], 200: [500]}), "b": swept({100: [500]})}
    rows_ = capacity_rows(sweep, {"a": "(a)", "b": "(b)"})
    assert rows_[-1][1:3] == ["none swept", "**0.00×**"]


def test_a_floor_within_capacity_at_every_rate_swept_only_bounds_the_ratio() -> None:
    """The floor's capacity is then above the sweep's top rate: the app's
    ratio is at most what the sweep shows, which may not meet the target."""
    sweep = {
        "a": swept({100: [10], 200: [20]}),
        "b": swept({100: [20], 200: [30]}),
        "c": swept({100: [20], 200: [300]}),
    }
    rows_ = capacity_rows(sweep, {"a": "(a)", "b": "(b)", "c": "(c)"})
    assert rows_[1][2:] == [
        "**≤ 1.00×**",
        "≥ 0.8×",
        "not known: (a) was within capacity at every rate swept",
    ]
    assert rows_[2][2:] == ["**≤ 0.50×**", "≥ 0.8×", "**missed**"]


def test_the_sweep_shows_each_rates_median_p99_beside_the_floors() -> None:
    sweep = {
        "a": swept({100: [10, 12, 30], 200: [30, 40, 50]}),
        "b": swept({100: [20, 22, 24], 200: [95, None, 150]}),
    }
    assert sweep_rows(sweep) == [
        ["100/s", "12.0 ms", "22.0 ms"],
        ["200/s", "40.0 ms", "150.0 ms (1 round answered nothing)"],
    ]


def test_the_site_without_the_app_has_every_tag_of_the_app_the_example_uses() -> None:
    templates = (ROOT / "example_project" / "templates").rglob("*.html")
    written = {tag for page in templates for tag in TAG.findall(page.read_text())}
    used = written & set(the_apps_tags.register.tags)
    assert used - set(load_tags.register.tags) == set()
