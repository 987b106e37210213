"""Presence as HTML: the widget, rendered once per shared snapshot and kind
of viewer, and a count as a page writes it.

A roster made from the snapshot its process shares between pages
(``WHOS_ONLINE_SNAPSHOT_MAX_AGE``) is the same for every viewer of one kind
given the same users' choices (:attr:`~whos_online.roster.Roster.made_from`),
so the process renders its widget once for all of them, in each language
and time zone, and hands the same HTML to the others until the snapshot is
replaced. A roster made for its viewer alone (the site's rule judges each
viewer, a room lists its reader, a visitor who just arrived) renders apart,
and so does every roster where the site has its own copy of the widget's
templates, which may show anything of the request.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path

from django.http import HttpRequest
from django.template.loader import get_template, render_to_string
from django.utils import timezone, translation
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from whos_online.roster import Roster
from whos_online.store import Counts, get_store

WIDGET = "whos_online/widget.html"
# Every template the widget's HTML is made of.
PARTS = (WIDGET, "whos_online/people_count.html", "whos_online/window.html")
OURS = Path(__file__).resolve().parent / "templates"


def widget_html(roster: Roster, request: HttpRequest | None) -> SafeString:
    """The widget showing ``roster``, to the viewer of ``request``."""
    if roster.made_from is None:
        return _render(roster, request)
    snapshot, made = roster.made_from
    key: Hashable = (
        made,
        translation.get_language(),
        timezone.get_current_timezone_name(),
    )
    renders = get_store().state.renders
    found = renders.get(key)
    if found is not None and found[0] is snapshot:
        return found[1]  # type: ignore[no-any-return]
    if not _templates_are_ours():
        return _render(roster, request)
    # Nothing of the request: the same HTML for every viewer of this kind.
    html = _render(roster, None)
    renders.put(key, (snapshot, html))
    return html


def _render(roster: Roster, request: HttpRequest | None) -> SafeString:
    return SafeString(render_to_string(WIDGET, {"roster": roster}, request))


def _templates_are_ours() -> bool:
    """Whether the widget's templates are the app's own, which show nothing
    of the request, not a site's copy."""
    return all(
        Path(get_template(name).origin.name).resolve() == OURS / name  # type: ignore[attr-defined]
        for name in PARTS
    )


class Count(int):
    """A count that, written into a page, is marked so the refresh script can
    keep it current: ``<span data-whos-online-count="people">4</span>``
    ("about 100000" when estimated). In arithmetic, comparisons and
    ``{% ... as n %}`` it is a plain number."""

    kind: str
    approximate: bool

    def __new__(cls, value: int, kind: str, approximate: bool = False) -> Count:
        count = super().__new__(cls, value)
        count.kind = kind
        count.approximate = approximate
        return count

    def __html__(self) -> SafeString:
        return format_html(
            '<span class="whos-online-count" data-whos-online-count="{}">{}</span>',
            self.kind,
            _as_text(int(self), self.approximate),
        )


def count_text(counts: Counts, kind: str) -> str:
    """``{{ counts|count_text:"guests" }}``: the count as a page shows it,
    "about 100000" where it is an estimate (a set at its cap)."""
    return _as_text(getattr(counts, kind), is_approximate(counts, kind))


def is_approximate(counts: Counts, kind: str) -> bool:
    if kind in ("people", "total"):
        return counts.is_estimate
    return kind in counts.estimated


def _as_text(value: int, approximate: bool) -> str:
    if approximate:
        return gettext("about %(count)s") % {"count": value}
    return str(value)
