"""Each figure of issue 19, measured as a large site meets it: sets of
100,000 users and 100,000 guests, the floors measured in the same run.

Requests go through ``WSGIHandler`` with startproject's middleware, alone
(``bare``), with a middleware that checks a plain cookie (``plain``, floors
A and C) or with ``WhosOnlineMiddleware`` (``ours``). Each figure is taken
in rounds, its floor beside it in every round, the order shuffled.
"""

from __future__ import annotations

import itertools
import random
import shutil
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.test.utils import override_settings
from django_redis import get_redis_connection

from benchmarks import layout
from benchmarks.bench import (
    Inside,
    Site,
    beside,
    cookies_set,
    environ,
    log,
    spread,
    start_response,
)
from benchmarks.project import (
    LISTING,
    OURS,
    PEER,
    PEER_APP,
    PLAIN,
    PLAIN_COOKIE,
    with_after_auth,
)
from whos_online.store import get_store

CSRF = "k" * 32
PARSER_LABELS = {"presence": "redis-py's parser", "presence-hiredis": "hiredis"}
# The pages a guest browsing goes through in turn, none of them a room.
BROWSED = ("/", "/forum/", "/members/", "/about/")


def ipv4(i: int) -> str:
    return f"{(i >> 24) % 223 + 1}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


class World:
    """The run's site: its sets filled, its users logged in, its guards."""

    def __init__(self, size: int, users: int) -> None:
        self.client = get_redis_connection("presence")
        self.size = size
        self.sites = {
            "bare": Site(settings.STARTPROJECT),
            "plain": Site(with_after_auth(PLAIN)),
            "ours": Site(with_after_auth(OURS)),
        }
        if PEER_APP in settings.INSTALLED_APPS:
            self.sites["peer"] = Site(with_after_auth(PEER))
        self.guard = settings.WHOS_ONLINE_GUARD_COOKIE_NAME
        call_command("migrate", verbosity=0)
        model = get_user_model()
        model.objects.bulk_create(model(username=f"u{i}") for i in range(users))
        self.sessions = []
        for user in model.objects.all():
            client = Client()
            client.force_login(user)
            self.sessions.append(client.cookies[settings.SESSION_COOKIE_NAME].value)
        self.peer_error = settings.PEER_ERROR
        if "peer" in self.sites:  # installed, but does it run on this Django?
            self.sites["peer"](environ("/", "203.0.113.9", self.user(0)))
            status = getattr(start_response, "status", "")
            if not status.startswith("200"):
                self.peer_error = f"answers {status} on this Django"
                del self.sites["peer"]
        self.fresh = (ipv4(n) for n in itertools.count(100 << 24))  # never seen
        self.guests = itertools.cycle(range(size))
        self.fill()

    def now(self) -> float:
        seconds, micro = self.client.time()
        return seconds + micro / 1e6

    def fill(self) -> None:
        """``size`` users and guests seen within the window's last 14 minutes."""
        now, step = self.now(), 840 / self.size
        log(f"filling {self.size:,} users and {self.size:,} guests")
        for kind, member in (("users", lambda i: str(10**7 + i)), ("guests", ipv4)):
            layout.fill(
                self.client,
                kind,
                ((member(i), now - i * step) for i in range(self.size)),
            )

    def issue(
        self, address: str, cookies: dict[str, str], path: str = "/"
    ) -> dict[str, str]:
        """The guard the app issues to this visitor, with their cookies; a
        room page's guard, as a browser keeps it, says it was recorded there."""
        headers = self.sites["ours"](environ("/", address, cookies))
        cookies = cookies | {self.guard: cookies_set(headers)[self.guard]}
        if path != "/":
            headers = self.sites["ours"](environ(path, address, cookies))
            cookies = cookies | cookies_set(headers)
        return cookies

    def user(self, i: int) -> dict[str, str]:
        return {settings.SESSION_COOKIE_NAME: self.sessions[i % len(self.sessions)]}


def rounds(
    cases: dict[str, Callable[[], float]],
    n: int,
    before: Callable[[], None] = lambda: None,
) -> dict[str, list[float]]:
    """Each case once per round, in a new order each round."""
    rng = random.Random(19)
    out: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(n):
        before()
        order = list(cases)
        rng.shuffle(order)
        for name in order:
            out[name].append(cases[name]())
    return out


class NotSeen:
    """Guards issued to guests, a block at a time, each forgotten by the
    process as soon as issued, as after the distinct visitors that fill what
    it remembers: each is checked afresh when measured. Issued just before
    the round that takes them: a run's rounds outlast a guard's five minutes,
    so guards issued all at once ahead would run out."""

    def __init__(self, world: World, block: int) -> None:
        self.world, self.block = world, block
        self.addresses = itertools.count()
        self.ready: list[tuple[str, dict[str, str]]] = []

    def issue(self) -> None:
        remembered = get_store().state.guards
        for i in itertools.islice(self.addresses, self.block):
            cookies = self.world.issue(ipv4(i), {})
            remembered.pop(cookies[self.world.guard], None)
            self.ready.append((ipv4(i), cookies))

    def take(self) -> tuple[str, dict[str, str]]:
        return self.ready.pop()


def request_costs(world: World, n_rounds: int, block: int) -> dict[str, Any]:
    """µs each case adds to a request, each of its requests timed beside a
    bare one; the bare request's own µs."""
    sites, g = world.sites, "203.0.113.9"
    not_seen = NotSeen(world, block)
    guest = user = guest_in_room = user_in_room = reader = {}

    def issue() -> None:
        """The guarded visitors' guards, issued again before each round: a
        run's rounds may outlast a guard's five minutes on a slow machine."""
        nonlocal guest, user, guest_in_room, user_in_room, reader
        guest = world.issue(g, {})
        user = world.issue("198.51.100.7", world.user(0))
        guest_in_room = world.issue(g, {}, "/thread/7/")
        user_in_room = world.issue("198.51.100.7", world.user(0), "/thread/7/")
        # A device of its own: a device is in the rooms of its latest page,
        # so the room page above (a visit of user 0's session) would move it.
        reader = world.issue("198.51.100.7", world.user(1), "/thread/7/")

    def before_round() -> None:
        issue()
        not_seen.issue()

    issue()
    session = world.user(0)
    plain = {PLAIN_COOKIE: "1"}
    threads = itertools.count(10**6)
    cheap = {
        "bare guest": ("bare", lambda i: environ("/", g, {})),
        "bare user": ("bare", lambda i: environ("/", g, session)),
        "plain cookie, guest (floor A)": ("plain", lambda i: environ("/", g, plain)),
        "plain cookie, user (floor A)": (
            "plain",
            lambda i: environ("/", g, session | plain),
        ),
        "guarded guest": ("ours", lambda i: environ("/", g, guest)),
        "guarded user": ("ours", lambda i: environ("/", "198.51.100.7", user)),
        "guarded guest, a visitor not seen": (
            "ours",
            lambda i: environ("/", *not_seen.take()),
        ),
        # A guest going from page to page (in no room), not reloading one.
        "guarded guest, browsing pages": (
            "ours",
            lambda i: environ(BROWSED[i % len(BROWSED)], g, guest),
        ),
        "guarded guest, room page": (
            "ours",
            lambda i: environ("/thread/7/", g, guest_in_room),
        ),
        "guarded user, room page": (
            "ours",
            lambda i: environ("/thread/7/", "198.51.100.7", user_in_room),
        ),
        # Each page a room new to the reader, with the guard of a room page.
        "guarded user, a new thread each page": (
            "ours",
            lambda i: environ(f"/thread/{next(threads)}/", "198.51.100.7", reader),
        ),
        # The seed design recording a logged-in user: their user loaded.
        "one ZADD + plain cookie, user (floor C)": (
            "plain",
            lambda i: environ("/", "198.51.100.7", session),
        ),
    }
    for kind, cookies in (("guest", {}), ("user", session)) if "peer" in sites else ():
        cheap[f"peer {kind}"] = ("peer", lambda i, c=cookies: environ("/", g, c))
    cases: dict[str, Callable[[], float]] = {}
    bare = sites["bare"]
    for name, (site, make) in cheap.items():
        if name.startswith("bare"):
            cases[name] = lambda m=make: bare.timed([m(i) for i in range(block)])
            continue
        # Beside a bare request for the same page: a room page's own view
        # and URL are no cost of ours.
        base = cheap["bare user" if "user" in name else "bare guest"][1]
        cases[name] = lambda s=sites[site], m=make, b=base: beside(
            s,
            bare,
            [(e, same_page(b(i), e)) for i, e in enumerate(map(m, range(block)))],
        )
    # The widget's page and a plain template listing the same names and
    # figures, each beside the same empty page, for a guarded guest.
    listed(world)
    for name, page in (
        ("widget page", "/widget/"),
        ("plain listing page", "/listing/"),
    ):
        cases[name] = lambda p=page: beside(
            sites["ours"],
            sites["ours"],
            [(environ(p, g, guest), environ("/", g, guest)) for _ in range(block)],
        )
    for parser, label in PARSER_LABELS.items():
        if parser not in settings.PARSERS:
            continue
        for name, site in (
            ("unguarded guest", "ours"),
            ("one ZADD + plain cookie, guest (floor C)", "plain"),
        ):
            cases[f"{name}, {label}"] = lambda s=sites[site], p=parser: unguarded(
                s, p, world, block // 4
            )
    for _ in range(2):  # warm: scripts loaded, code paths hot
        not_seen.issue()
        for case in cases.values():
            case()
    log(f"{n_rounds} rounds of {len(cases)} cases")
    raw = rounds(cases, n_rounds, before=before_round)
    recorded(world, next(threads) - 1, "users")
    sent = {}  # a guard that no longer held would have sent a record
    before_round()
    for name in [name for name in cheap if name.startswith("guarded")]:
        commands = Inside(world.client).once(cases[name])["commands"] / block
        if commands > 0.05 and "room" not in name and "thread" not in name:
            raise RuntimeError(f"{name}: {commands:.2f} Redis commands per request")
        sent[name] = commands
    alone = {n: spread(raw[n]) for n in ("bare guest", "bare user")}
    return {"bare": alone, "raw": raw, "redis_commands": sent}


def listed(world: World) -> None:
    """Record the users the widget names (the most recent), and give the
    plain listing the same names and figures."""
    from whos_online import api

    for i in range(len(world.sessions)):
        world.issue("198.51.100.7", world.user(i))
    counts = api.counts()
    LISTING["pks"] = [online.user.pk for online in api.online_users()]
    LISTING["figures"] = {
        "users": counts.users,
        "guests": counts.guests,
        "people": counts.users + counts.guests,
    }


def recorded(world: World, thread: int, kind: str) -> None:
    """Check a reader was recorded in the thread they opened last, not
    refused at a cap, which would cost less."""
    if not layout.room_size(world.client, f"thread:{thread}", kind):
        raise RuntimeError(f"thread {thread} was refused: is the reader online?")


def same_page(base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """The bare request ``base`` for the page ``case`` asks for."""
    return base | {"PATH_INFO": case["PATH_INFO"]}


def unguarded(site: Site, parser: str, world: World, n: int) -> float:
    """µs a guest without a cookie adds, beside a bare request."""
    with override_settings(WHOS_ONLINE_CACHE_ALIAS=parser):
        addresses = [ipv4(next(world.guests)) for _ in range(n)]
        pairs = [(environ("/", a, {}), environ("/", a, {})) for a in addresses]
        return beside(site, world.sites["bare"], pairs)


def callgrind(world: World, requests: int, seen: int) -> tuple[Any, Any] | None:
    """Instructions per request (valgrind's callgrind) of the guarded
    requests, the peer's and their floors, and the pages of pages.py, all in
    one process (see instructions.py): the requests' counts, and the pages'
    figures. The visitors not seen come after ``seen`` others, more than the
    process remembers (4,096). The guards are issued for an hour: a full
    run's count under valgrind outlasts their five minutes, and a guard that
    ran out would send records."""
    if shutil.which("valgrind") is None:
        return None
    with override_settings(WHOS_ONLINE_GUARD_SECONDS=3600):
        return _callgrind(world, requests, seen)


def _callgrind(world: World, requests: int, seen: int) -> tuple[Any, Any]:
    from benchmarks import instructions, pages
    from benchmarks.instructions import Case

    fresh = [ipv4(i + (60 << 24)) for i in range(seen + requests)]
    log(f"  issuing guards to {len(fresh):,} visitors for the count")
    session, plain = world.user(0), {PLAIN_COOKIE: "1"}
    in_room = world.issue("198.51.100.7", session, "/thread/7/")
    threads = [
        in_room | {"path": f"/thread/{3 * 10**6 + i}/"}
        for i in range(requests + instructions.WARM)
    ]
    cases: dict[str, Case] = {
        "bare guest": Case("bare", [{}]),
        "bare user": Case("bare", [session]),
        "plain cookie, guest (floor A)": Case("plain", [plain]),
        "plain cookie, user (floor A)": Case("plain", [session | plain]),
        "guarded guest": Case("ours", [world.issue("203.0.113.9", {})]),
        "guarded user": Case("ours", [world.issue("203.0.113.9", session)]),
        "guarded guest, browsing pages": Case(
            "ours", [world.issue("203.0.113.9", {}) | {"path": p} for p in BROWSED]
        ),
        "bare guest, browsing pages": Case("bare", [{"path": p} for p in BROWSED]),
        "guarded guest, a visitor not seen": Case(
            "ours",
            [world.issue(a, {}) | {"address": a} for a in fresh],
        ),
        "guarded user, a new thread each page": Case("ours", threads),
        "one ZADD + plain cookie, user (floor C)": Case("plain", [session]),
    }
    if "peer" in world.sites:
        cases["peer guest"] = Case("peer", [{}])
        cases["peer user"] = Case("peer", [session])
    log(f"  the pages: {pages.USERS} users and {pages.GUESTS} guests online")
    on_pages, listing = pages.cases(world)  # after the records above
    # The bare requests again, last of those counted with the run's settings:
    # how far two counts of one case differ.
    again = {f"{name}, again": cases[name] for name in ("bare guest", "bare user")}
    counted = instructions.measure(cases | on_pages | again, requests, listing)
    return pages.split(counted, on_pages)
