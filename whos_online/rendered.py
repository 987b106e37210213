"""Presence as HTML: the widget and the box around it, rendered once per
process for what they show; the scripts' tags and the visibility toggle,
rendered once per process and language with the viewer's own values (a
CSRF token, the page's path) put in; and a count as a page writes it.

A roster made from the snapshot its process shares between pages
(``WHOS_ONLINE_SNAPSHOT_MAX_AGE``) is the same for every viewer of one kind
given the same users' choices (:attr:`~whos_online.roster.Roster.made_from`),
so the process renders its widget once for all of them, in each language
and time zone, and hands the same HTML to the others, and to the pages of
the next snapshot while it shows the same (:attr:`~whos_online.roster.Roster.shown`).
A roster made for its viewer alone (the site's rule judges each viewer, a
room lists its reader, a visitor who just arrived) renders apart, and so
does every roster where the site has its own copy of the widget's
templates, which may show anything of the request. The box of a room
carries tokens of the room for its viewer: it is rendered once per process
with marks where they go, and they are put in for each page.
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Callable, Hashable
from datetime import datetime
from datetime import timezone as dt_timezone
from pathlib import Path
from typing import Any

from django.http import HttpRequest
from django.template import Context, Engine, RequestContext
from django.utils import timezone, translation
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from whos_online.roster import Roster
from whos_online.store import Counts, get_store
from whos_online.users import OnlineUser

WIDGET = "whos_online/widget.html"
# The widget's parts: its counts, one person it lists, what "now" means.
TALLY = ("whos_online/tally.html", "whos_online/people_count.html")
PERSON = "whos_online/person.html"
WINDOW = "whos_online/window.html"
# Every template the widget's HTML is made of.
PARTS = (WIDGET, *TALLY, PERSON, WINDOW)
# The box ``{% whos_online %}`` puts the widget in.
BOX = "whos_online/whos_online.html"
OURS = Path(__file__).resolve().parent / "templates"


def widget_html(roster: Roster, request: HttpRequest | None) -> SafeString:
    """The widget showing ``roster``, to the viewer of ``request``."""
    if roster.made_from is None:
        return _render(roster, request)
    key: Hashable = (
        roster.shown,
        translation.get_language(),
        timezone.get_current_timezone_name(),
    )
    # Nothing of the request in the shared HTML: the same for every viewer
    # shown the same, this snapshot's or the next's.
    return _once(
        key,
        None,
        PARTS,
        shared=lambda: _render(roster, None),
        alone=lambda: _render(roster, request),
    )


def tally_html(counts: Counts) -> SafeString:
    """``{{ roster.counts|tally_html }}``: the widget's counts, rendered once
    per process and language for the same counts."""
    return _part(TALLY, {"counts": counts}, counts)


def window_html(roster: Roster) -> SafeString:
    """``{{ roster|window_html }}``: what the widget's "now" means, rendered
    once per process and language for a room, and for each window."""
    return _part((WINDOW,), {"roster": roster}, (bool(roster.room), roster.window))


def _part(
    names: tuple[str, ...], values: dict[str, Any], shows: Hashable
) -> SafeString:
    """The template ``names[0]`` (which includes the rest) rendered from
    ``values``, once per process and language for what it ``shows``."""
    render = functools.partial(_render_values, names[0], values)
    key = (names[0], shows, translation.get_language())
    return _once(key, None, names, shared=render, alone=render)


def people_html(people: list[OnlineUser]) -> SafeString:
    """``{{ roster.users|people_html }}``: the people the widget lists, each
    (``whos_online/person.html``) rendered once per process and language for
    what it shows (a room's list changes with each reader who comes in; its
    people seldom do), joined by commas."""
    memo, language = get_store().state.people, translation.get_language()
    shown = []
    for online in people:
        key = (online.name, online.url, online.hidden, language)
        html = memo.get(key)
        if html is None:
            # Asked only on a miss, as for the other parts: it reads the disk.
            if not _templates_are_ours((PERSON,)):
                return SafeString(", ".join(_person(each) for each in people))
            html = memo.put(key, _person(online))
        shown.append(html)
    return SafeString(", ".join(shown))


def _person(online: OnlineUser) -> SafeString:
    return _render_values(PERSON, {"online": online})


def box_html(values: dict[str, Any]) -> SafeString:
    """``{% whos_online %}``: the box around the widget (its title, the
    refresh script's marks), rendered from the tag's ``values``. A box of
    the whole site around a widget made from a shared snapshot is the same
    for every viewer of that kind, so it is rendered once per snapshot too;
    a room's box once per process, with the page's own put in. A site's own
    copy of the templates renders for each page."""
    roster: Roster = values["roster"]
    if values["room_key"]:
        return _room_box_html(values)
    if roster.made_from is None or values["room_key"] is None:
        return _render_values(BOX, values)
    key: Hashable = (
        BOX,
        roster.shown,
        translation.get_language(),
        timezone.get_current_timezone_name(),
        *(values[name] for name in BOX_VARIES_BY),
    )
    render = functools.partial(_render_values, BOX, values)
    return _once(key, None, (*PARTS, BOX), shared=render, alone=render)


# What a box of the whole site shows besides its widget.
BOX_VARIES_BY = (
    "refresh_seconds",
    "refresh_url",
    "refresh_script",
    "stream_url",
    "heading",
)
# What a room's box shows of its page: its room, the tokens of the room for
# its viewer (``here`` holds two more), its widget (put in last: nothing is
# put in over what it shows).
ROOM_BOX_OWN = ("refresh_url", "stream_url", "room_key")
HERE_OWN = ("token", "url")


def _room_box_html(values: dict[str, Any]) -> SafeString:
    """A room's box, rendered once per process and language with marks
    where the page's own go, which are put in."""
    here: dict[str, Any] | None = values["here"]
    own = {name: values[name] for name in ROOM_BOX_OWN if values[name] is not None}
    if here is not None:
        own |= {f"here-{name}": here[name] for name in HERE_OWN}
    own["widget"] = values["widget"]
    shown = values | {name: f"{MARK}-{name}" for name in own}
    if here is not None:
        shown["here"] = here | {name: f"{MARK}-here-{name}" for name in HERE_OWN}
    key: Hashable = (
        BOX,
        translation.get_language(),
        bool(values["roster"].room),
        *own,
        *(values[name] for name in ("refresh_seconds", "refresh_script", "heading")),
        None if here is None else here["seconds"],
    )
    html = _once(
        key,
        None,
        (*PARTS, BOX),
        shared=functools.partial(_render_values, BOX, shown),
        alone=functools.partial(_render_values, BOX, values),
    )
    return _put_in(html, own)


def template_html(
    name: str,
    values: dict[str, Any],
    *,
    parts: tuple[str, ...] = (),
    personal: tuple[str, ...] = ("csrf_token",),
    translated: bool = False,
) -> SafeString:
    """One of the app's templates (``name``, and the ``parts`` it includes)
    rendered from ``values``, once per process (and language, where its text
    is ``translated``) for the same values: the viewer's own (``personal``:
    their CSRF token, the page's path) are rendered as marks and put in each
    time, escaped as the template would have. A site's own copy of any of
    the templates renders for each call."""
    own = {field: values[field] for field in personal if values.get(field) is not None}
    shown = values | {field: f"{MARK}-{field}" for field in own} if own else values
    language = translation.get_language() if translated else None
    html = _once(
        (name, language, *shown.values()),
        None,
        (name, *parts),
        shared=lambda: _render_values(name, shown),
        alone=lambda: _render_values(name, values),
    )
    return _put_in(html, own) if own else html


def _put_in(html: SafeString, own: dict[str, Any]) -> SafeString:
    """``html`` with the marks of the page's ``own`` values replaced by them,
    escaped as the template would have (a callable called, as a template
    calls it, only where its mark is)."""
    text = str(html)
    for field, value in own.items():
        mark = f"{MARK}-{field}"
        if mark in text:
            shown = value() if callable(value) else value
            text = text.replace(mark, conditional_escape(shown))
    return SafeString(text)


@functools.lru_cache(maxsize=16)
def stylesheet_html(url: str) -> SafeString:
    """``{% whos_online_stylesheet %}``: the app's stylesheet at ``url``."""
    return format_html('<link rel="stylesheet" href="{}">', url)


HEARTBEAT = "whos_online/heartbeat.html"
DECORATE = "whos_online/decorate.html"
VISIBILITY = "whos_online/visibility.html"
CHOICE = "whos_online/choice.html"


def heartbeat_html(values: dict[str, Any]) -> SafeString:
    """``{% whos_online_heartbeat %}``: its token put in."""
    return template_html(HEARTBEAT, values)


def decorate_html(values: dict[str, Any]) -> SafeString:
    """``{% whos_online_decorate %}``: the same for every page."""
    return template_html(DECORATE, values)


def visibility_html(values: dict[str, Any]) -> SafeString:
    """``{% whos_online_visibility %}``: the viewer's token and path put in."""
    return template_html(
        VISIBILITY,
        values,
        parts=(CHOICE,),
        personal=("csrf_token", "next"),
        translated=True,
    )


# What stands for a viewer's own value in HTML rendered for anyone: nothing
# a page shows could write it.
MARK = f"whos-online-{secrets.token_hex(8)}"


def _once(
    key: Hashable,
    made_from: object,
    names: tuple[str, ...],
    *,
    shared: Callable[[], SafeString],
    alone: Callable[[], SafeString],
) -> SafeString:
    """The HTML kept for ``key`` while it was made from ``made_from`` (a
    snapshot; ``None``: anything), else made now by ``shared`` and kept,
    where the templates ``names`` are the app's own; by ``alone`` where the
    site has its own copy of any, which may show anything of the request."""
    renders = get_store().state.renders
    found = renders.get(key)
    if found is not None and found[0] is made_from:
        return found[1]  # type: ignore[no-any-return]
    if not _templates_are_ours(names):
        return alone()
    html = shared()
    renders.put(key, (made_from, html))
    return html


def _render_values(name: str, values: dict[str, Any]) -> SafeString:
    return _render_django(name, values, None)


def _render(roster: Roster, request: HttpRequest | None) -> SafeString:
    return _render_django(WIDGET, {"roster": roster}, request)


def _render_django(
    name: str, values: dict[str, Any], request: HttpRequest | None
) -> SafeString:
    """The app's template ``name``, a Django template, by Django's engine
    (whatever a site's first backend matches), as an inclusion tag renders
    it; with the request's context processors where one is given."""
    template = Engine.get_default().get_template(name)
    autoescape = template.engine.autoescape
    context = (
        Context(values, autoescape=autoescape)
        if request is None
        else RequestContext(request, values, autoescape=autoescape)
    )
    return SafeString(template.render(context))


def _templates_are_ours(names: tuple[str, ...] = PARTS) -> bool:
    """Whether the templates ``names`` are the app's own, which show nothing
    of the request, not a site's copy."""
    return all(
        Path(Engine.get_default().get_template(name).origin.name).resolve()
        == OURS / name
        for name in names
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


def minutes_since(value: datetime | None, now: datetime | None = None) -> int | None:
    """``{{ row.last_seen|minutes_since:roster.now }}``: whole minutes from
    ``value`` (an aware datetime) to ``now`` (a roster's ``now`` is Redis'
    time; default: this server's clock), never below 0; ``None`` for
    ``None``. Lets a template say "just now" for 0 and choose a plural for
    the rest (see ``whos_online/staff_table.html``)."""
    if value is None:
        return None
    elapsed = (now or datetime.fromtimestamp(time.time(), dt_timezone.utc)) - value
    return max(int(elapsed.total_seconds() // 60), 0)
