"""The rows of benchmarks/pages.py's figures in docs/benchmarks/README.md:
a forum's home page with the app against the same page without it, and
the widget's page against a plain template of the same names, each in
instructions per page, each as shipped, within the snapshot's age and with
a new snapshot each page, saying how many of the counted pages took one."""

from __future__ import annotations

from typing import Any

from benchmarks.pages import EACH, SHIPPED, VARIANTS, WITHIN, name
from benchmarks.table import Table

KINDS = ("guest", "user")
# Issue 34's targets; a new snapshot each page (the setting at 0) has none:
# with the setting as shipped, a process pays it once in 2 s.
WHOLE, ADDED = 1.3, 1.0
TARGETED = (SHIPPED, WITHIN)
METHOD = """\
- **Pages** are counted in instructions as the rest (callgrind, one
  process; five pages of warm-up each), with 30 users and 20 guests
  online (the sets emptied, then each recorded through the app; the
  viewers among them, guarded, their guard from a visit to the page): a
  forum's home page as the example project's is
  (`benchmarks/templates/bench/`: a header with the count and, for a
  user, the toggle; a nav, some content, the widget in a sidebar, the
  heartbeat and the decorate script), through the site with the app,
  against the same page without the app's tags through `startproject`'s
  middleware alone; and the widget's page and the plain listing of the
  same names, each less the empty page for the same viewer. Each page
  with the app is counted as shipped (`WHOS_ONLINE_SNAPSHOT_MAX_AGE` 2 s
  of wall time, which under valgrind passes within some ten or twenty
  pages, and between a case's warm-up and its count: the row says how
  many of the counted pages took a new snapshot), within the snapshot's
  age (the setting raised to an hour, so that none does: what a process
  serving a page more often than every 2 s pays on all but one page in 2
  s), and with a new snapshot each page (the setting at 0: the snapshot,
  the users and their choices read and the widget rendered for every
  page). How many snapshots the counted pages took is Redis' count of
  the snapshot's `HMGET` (`INFO commandstats`); a page that recorded its
  visitor fails the run.
"""


def page_rows(t: Table, found: dict[str, Any] | None) -> None:
    """The pages' rows, if callgrind counted them."""
    if not found:
        return
    for kind in KINDS:
        for variant in VARIANTS:
            whole_page(t, found, kind, variant)
    for kind in KINDS:
        for variant in VARIANTS:
            widget_page(t, found, kind, variant)


def whole_page(t: Table, found: dict[str, Any], kind: str, variant: str) -> None:
    counted = found["instructions"]
    case = name("home page with the app", kind, variant)
    t.add(
        f"whole page with the app, {kind}, {shown(found, case, variant)}: instructions",
        [counted[case]],
        [counted[name("home page without the app", kind)]],
        "the page without the app",
        "",
        WHOLE if variant in TARGETED else 0,
    )


def widget_page(t: Table, found: dict[str, Any], kind: str, variant: str) -> None:
    counted = found["instructions"]
    case = name("widget page", kind, variant)
    empty = counted[name("empty page", kind)]
    t.add(
        f"widget page, {kind}, {shown(found, case, variant)}: instructions added",
        [counted[case] - empty],
        [counted[name("plain listing page", kind)] - empty],
        "a plain template, same names and figures",
        "",
        ADDED if variant in TARGETED else 0,
    )


def shown(found: dict[str, Any], case: str, variant: str) -> str:
    """How a case was counted: its variant and how many of its pages took
    a new snapshot."""
    taken, n = found["snapshots"][case], found["requests"]
    label = {SHIPPED: "as shipped", WITHIN: WITHIN, EACH: EACH}[variant]
    return f"{label} ({taken} of {n} pages took a new snapshot)"
