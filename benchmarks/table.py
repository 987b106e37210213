"""A report's table: each figure beside its floor measured in the same
run, as ratios taken round by round (benchmarks/report.py and
benchmarks/load_report.py)."""

from __future__ import annotations

import statistics
from typing import Any, NamedTuple


class Row(NamedTuple):
    name: str
    measured: str
    floor: str
    ratio: str
    target: str
    verdict: str


def med(values: list[float]) -> float:
    return statistics.median(values)


def cell(values: list[float], unit: str = " µs", digits: int = 1) -> str:
    if len(values) == 1:
        return f"{values[0]:,.{digits}f}{unit}"
    low, mid, high = min(values), med(values), max(values)
    return f"{low:,.{digits}f} / **{mid:,.{digits}f}** / {high:,.{digits}f}{unit}"


def too_small(floor: list[float], noise: float = 0) -> bool:
    """Whether a floor cannot be divided by meaningfully: not above zero,
    nor above its own noise (twice its rounds' median absolute deviation),
    nor above ``noise`` (how far two counts of one case differ)."""
    mid = med(floor)
    return mid <= max(noise, 2 * med([abs(f - mid) for f in floor]), 0)


def ratios(top: list[float], bottom: list[float]) -> list[float]:
    """Round by round, leaving out a round whose floor is not above zero."""
    return [a / b for a, b in zip(top, bottom, strict=True) if b > 0]


def ratio_text(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}×"
    return f"**{med(values):.2f}×** ({min(values):.2f}–{max(values):.2f})"


class Table:
    """The rows, and the derived figures results.json keeps."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.derived: dict[str, Any] = {}

    def add(
        self,
        name: str,
        top: list[float],
        bottom: list[float],
        floor: str,
        unit: str = " µs",
        most: float = 0,
        noise: float = 0,
        cap: float = 0,
    ) -> None:
        """``most``: the ratio's target, if it has one; ``noise``: how far
        two counts of one case differ; ``cap``: a target for the figure
        itself, its largest measure."""
        digits = {"/s": 0, " s": 3, "": 0}.get(unit, 1)
        floor = f"{floor}: {cell(bottom, unit, digits)}"
        if noise:
            floor += f" (bare request counted twice: ±{noise:,.0f})"
        if too_small(bottom, noise):
            text = "floor too small to divide by (within noise)"
            self.derived[name] = {"ratio_median": None, "met": None}
            self.rows.append(Row(name, cell(top, unit, digits), floor, text, "", ""))
            return
        each = ratios(top, bottom)
        met = med(each) <= most if most else (max(top) <= cap if cap else None)
        self.derived[name] = {"ratio_median": med(each), "met": met}
        target = f"≤ {most:g}×" if most else (f"≤ {cap:g}{unit}" if cap else "—")
        verdict = {True: "met", False: "**missed**", None: ""}[met]
        shown = cell(top, unit, digits)
        self.rows.append(Row(name, shown, floor, ratio_text(each), target, verdict))


def markdown(header: list[str], body: list[list[str]] | list[Row]) -> str:
    lines = [header, ["---"] * len(header), *body]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)
