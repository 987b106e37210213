"""A forum's home page with the app and without it, and the widget's page
beside a plain template of the same names, counted in instructions
(callgrind, benchmarks/instructions.py) as issue 34's study counted them:
guarded viewers, 30 users and 20 guests online, the site with the app
(startproject's middleware and ``WhosOnlineMiddleware``) against the site
without it (startproject's alone).

Each page with the app is counted three times (``VARIANTS``): as shipped (a
process reuses its snapshot, the users, their choices and the widget's HTML
for ``WHOS_ONLINE_SNAPSHOT_MAX_AGE``, 2 s of wall time, which under
valgrind passes within some ten or twenty pages), within one snapshot's
age (the setting raised, so no counted page takes a new one), and with a
new snapshot each page (the setting at 0: the snapshot, the users and their
choices read, and the widget rendered, for every page). Redis' ``INFO
commandstats`` says how many snapshots each case's counted pages took.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.test.utils import override_settings

from benchmarks import layout
from benchmarks.instructions import Case, Counted

if TYPE_CHECKING:
    from benchmarks.figures import World

USERS, GUESTS = 30, 20  # online, as in issue 34's study
GUEST, USER = "203.0.113.9", "198.51.100.7"
HOME, WITHOUT = "/home/", "/home/without/"
# Pages before those counted: the templates compiled, the connections open,
# a snapshot taken; more would only lengthen the run under valgrind.
WARM = 5
# Pages counted a case: a count's noise is a page's, not a request's, and
# fewer keep a full run's pages inside the guards' five minutes under valgrind.
PAGES = 30
# How each page with the app is counted: the settings as shipped; the
# snapshot's age raised to an hour, so that valgrind's slowness takes no new
# one (every counted page within one snapshot's age, as a process serving a
# page more often than every 2 s is on all but one page in 2 s); and at 0.
SHIPPED, WITHIN, EACH = "", "within the snapshot's age", "a new snapshot each page"
VARIANTS: dict[str, dict[str, Any] | None] = {
    SHIPPED: None,
    WITHIN: {"WHOS_ONLINE_SNAPSHOT_MAX_AGE": 3600},
    EACH: {"WHOS_ONLINE_SNAPSHOT_MAX_AGE": 0},
}


def name(page: str, kind: str, variant: str = SHIPPED) -> str:
    """A case's name: ``page`` (``home page with the app``, ``widget page``,
    …) for a viewer of ``kind``, counted as ``variant`` says."""
    return f"{page}, {kind}" + (f", {variant}" if variant else "")


def cases(world: World) -> tuple[dict[str, Case], dict[str, Any]]:
    """The pages' cases, for a guarded guest and a guarded user, and what
    the plain listing shows: the names and figures the widget shows."""
    found: dict[str, Case] = {}
    for kind, cookies in online(world).items():
        found |= cases_of(kind, cookies, world.guard)
    return found, listed()


def cases_of(kind: str, cookies: dict[str, str], guard: str) -> dict[str, Case]:
    """A viewer's pages: ``cookies`` are what their browser keeps, the guard
    and the CSRF cookie included (the site without the app sets no guard)."""
    without = {key: value for key, value in cookies.items() if key != guard}
    found = {
        name("home page without the app", kind): Case(
            "bare", [without | {"path": WITHOUT}], warm=WARM, counted=PAGES
        ),
        name("plain listing page", kind): Case(
            "ours", [cookies | {"path": "/listing/"}], warm=WARM, counted=PAGES
        ),
        name("empty page", kind): Case("ours", [cookies], counted=PAGES),
    }
    for page, path in (("home page with the app", HOME), ("widget page", "/widget/")):
        for variant, settings in VARIANTS.items():
            found[name(page, kind, variant)] = Case(
                "ours", [cookies | {"path": path}], settings, WARM, PAGES
            )
    return found


def online(world: World) -> dict[str, dict[str, str]]:
    """Only ``USERS`` users and ``GUESTS`` guests online, recorded through
    the app, the two viewers last; each viewer's cookies after they opened
    the home page."""
    from benchmarks.figures import ipv4

    for kind in ("users", "guests"):
        layout.empty(world.client, kind)
    for i in range(1, USERS):
        world.issue(USER, world.user(i), HOME)
    for i in range(1, GUESTS):
        world.issue(ipv4(i + (70 << 24)), {}, HOME)
    return {
        "guest": world.issue(GUEST, {}, HOME) | {"address": GUEST},
        "user": world.issue(USER, world.user(0), HOME) | {"address": USER},
    }


def listed() -> dict[str, Any]:
    """The names and figures the widget shows, read afresh (this process's
    snapshot may be older than the last record), checked."""
    from whos_online import api

    with override_settings(**(VARIANTS[EACH] or {})):
        counts, users = api.counts(), api.online_users()
    if (counts.users, counts.guests, len(users)) != (USERS, GUESTS, USERS):
        raise RuntimeError(f"{counts} online, {len(users)} listed: not the study's")
    figures = {"users": counts.users, "guests": counts.guests}
    return {
        "pks": [online.user.pk for online in users],
        "figures": figures | {"people": counts.users + counts.guests},
    }


def split(counted: Counted, pages: dict[str, Case]) -> tuple[Any, Any]:
    """The other cases' instructions, and the pages' figures: instructions
    per page, what Redis ran for each case's ``PAGES`` pages, and how many
    snapshots they took (one ``HMGET`` of the site's record each, sent with
    the snapshot's script; only a record runs another, which the check
    below rules out: a guard that no longer held)."""
    others = {k: v for k, v in counted.instructions.items() if k not in pages}
    found = {k: v for k, v in counted.instructions.items() if k in pages}
    ran = {name: counted.redis[name] for name in pages}
    for name, commands in ran.items():
        if commands.get("zadd", 0) or commands.get("pfadd", 0):
            raise RuntimeError(f"{name}: a page recorded its visitor: {commands}")
    return others, {
        "instructions": found,
        "snapshots": {name: commands.get("hmget", 0) for name, commands in ran.items()},
        "redis": ran,
        "requests": PAGES,
        "users": USERS,
        "guests": GUESTS,
    }
