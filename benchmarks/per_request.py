"""What a middleware adds to each request, measured in-process.

Each chain is Django's real handler (``BaseHandler.load_middleware``) over
SessionMiddleware and AuthenticationMiddleware, with or without a
who's-online middleware after them. Every request is a fresh ``WSGIRequest``
built before the clock starts, and each is timed alone. In each round every
case runs one block of requests, in a shuffled order, together with a block
of bare ``ZADD`` round trips; a case's added cost is the median, over rounds,
of its block's median less that of the chain without any who's-online
middleware in the same round. (Medians, because this machine is shared: a
request that another process preempts is not the middleware's cost.)
Counting (Redis commands, SQL queries, session and user loads) is a separate,
untimed pass, so its wrappers cost the timings nothing.
"""

from __future__ import annotations

import cProfile
import gc
import io
import itertools
import pstats
import random
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIRequest
from django.db import connection
from django.http import HttpRequest, HttpResponse, parse_cookie
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from redis import Redis

from whos_online import guard, presence
from whos_online.addresses import client_address
from whos_online.conf import conf
from whos_online.connection import get_client
from whos_online.middleware import WhosOnlineMiddleware
from whos_online.visitors import identify

ROOT = Path(__file__).resolve().parent.parent

SESSION = "django.contrib.sessions.middleware.SessionMiddleware"
AUTH = "django.contrib.auth.middleware.AuthenticationMiddleware"
OURS = "whos_online.middleware.WhosOnlineMiddleware"
DOU = "online_users.middleware.OnlineNowMiddleware"
NOOP = "benchmarks.per_request.PassThroughMiddleware"
ZADD_ONLY = "benchmarks.per_request.ZaddOnlyMiddleware"

CHAINS = {
    "none": [SESSION, AUTH],
    "noop": [SESSION, AUTH, NOOP],
    "ours": [SESSION, AUTH, OURS],
    "dou": [SESSION, AUTH, DOU],
    "zadd": [SESSION, AUTH, ZADD_ONLY],
}

BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
USER_ADDRESS = "198.51.100.7"
GUEST_ADDRESS = "203.0.113.9"


class PassThroughMiddleware:
    """A middleware that does nothing: the floor any middleware pays for
    being one more link in Django's chain."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        return self.get_response(request)


class ZaddOnlyMiddleware:
    """One bare ZADD per request and nothing else: the floor for "one round
    trip", paid inside a real request rather than in a tight loop, where
    the CPU caches stay hot between round trips."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.key = presence.key("bench-zadd-middleware")

    def __call__(self, request: HttpRequest) -> Any:
        response = self.get_response(request)
        get_client().zadd(self.key, {request.META["REMOTE_ADDR"]: time.time()})
        return response


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    chain: str
    path: str
    visitor: str  # "user" or "guest"
    guard: str = ""  # "", "fresh" or "expired": the guard cookie sent
    baseline: str = ""  # the case whose mean is subtracted
    cheap: bool = True  # cheap cases get larger blocks


CASES = [
    Case("none-user", "no middleware, user", "none", "/", "user"),
    Case("none-guest", "no middleware, guest", "none", "/", "guest"),
    Case(
        "none-user-me", "no middleware, user, /me/", "none", "/me/", "user",
        cheap=False,
    ),
    Case("noop-user", "pass-through", "noop", "/", "user", baseline="none-user"),
    Case(
        "ours-user-guarded", "ours, user, guarded", "ours", "/", "user",
        guard="fresh", baseline="none-user",
    ),
    Case(
        "ours-guest-guarded", "ours, guest, guarded", "ours", "/", "guest",
        guard="fresh", baseline="none-guest",
    ),
    Case(
        "ours-user", "ours, user, guard expired", "ours", "/", "user",
        guard="expired", baseline="none-user", cheap=False,
    ),
    Case(
        "ours-user-new", "ours, user, no guard yet", "ours", "/", "user",
        baseline="none-user", cheap=False,
    ),
    Case(
        "ours-guest", "ours, guest, unguarded", "ours", "/", "guest",
        baseline="none-guest", cheap=False,
    ),
    Case(
        "ours-user-me", "ours, user, guard expired, view loads user", "ours",
        "/me/", "user", guard="expired", baseline="none-user-me", cheap=False,
    ),
    Case(
        "zadd-guest", "ZADD-only middleware, guest", "zadd", "/", "guest",
        baseline="none-guest", cheap=False,
    ),
    Case(
        "zadd-user-me", "ZADD-only middleware, user, view loads user", "zadd",
        "/me/", "user", baseline="none-user-me", cheap=False,
    ),
    Case(
        "dou-user", "django-online-users, user", "dou", "/", "user",
        baseline="none-user", cheap=False,
    ),
    Case(
        "dou-guest", "django-online-users, guest", "dou", "/", "guest",
        baseline="none-guest",
    ),
    Case(
        "dou-user-me", "django-online-users, user, view loads user", "dou", "/me/",
        "user", baseline="none-user-me", cheap=False,
    ),
]  # fmt: skip
BY_NAME = {case.name: case for case in CASES}


@dataclass
class Counts:
    redis: list[str] = field(default_factory=list)
    sql: int = 0
    statements: list[str] = field(default_factory=list)
    session_loads: int = 0
    user_loads: int = 0
    guard_set: bool = False


@dataclass
class Breakdown:
    timed: list[tuple[str, float]]  # label, ns per call
    profile: list[tuple[str, float, float]]  # function, calls per request, ns own


@dataclass
class Result:
    rounds: int
    block: dict[str, int]
    means: dict[str, list[float]]  # median µs per request, per round
    zadd: list[float]  # µs per bare ZADD round trip, per round
    counts: dict[str, Counts]
    identity: dict[str, Counts]
    breakdown: Breakdown
    unguarded: Breakdown

    def median(self, name: str) -> float:
        return statistics.median(self.means[name])

    def added(self, name: str) -> float:
        """Median over rounds of (case − its baseline), in µs."""
        base = BY_NAME[name].baseline
        diffs = [a - b for a, b in zip(self.means[name], self.means[base], strict=True)]
        return statistics.median(diffs)

    def added_spread(self, name: str) -> tuple[float, float]:
        """Quartiles of the per-round differences: how steady ``added`` is."""
        base = BY_NAME[name].baseline
        diffs = [a - b for a, b in zip(self.means[name], self.means[base], strict=True)]
        q = statistics.quantiles(diffs, n=4)
        return q[0], q[2]

    @property
    def zadd_median(self) -> float:
        return statistics.median(self.zadd)


def build_handler(chain: str) -> BaseHandler:
    with override_settings(MIDDLEWARE=CHAINS[chain]):
        handler = BaseHandler()
        handler.load_middleware()
    return handler


def environ(path: str, cookies: dict[str, str], remote: str) -> dict[str, Any]:
    return {
        "HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in cookies.items()),
        "HTTP_USER_AGENT": BROWSER,
        "PATH_INFO": path,
        "REMOTE_ADDR": remote,
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multiprocess": True,
        "wsgi.multithread": False,
        "wsgi.run_once": False,
    }


class World:
    """The handlers, the logged-in user's session and fresh guard cookies."""

    def __init__(self) -> None:
        self.handlers = {chain: build_handler(chain) for chain in CHAINS}
        model = get_user_model()
        user, _ = model._default_manager.get_or_create(username="bench-visitor")
        other, _ = model._default_manager.get_or_create(username="bench-other")
        self.session_key = self._login(user)
        self.other_session_key = self._login(other)
        self.guards = {"user": "", "guest": ""}
        self.expired_guards = self._expired_guards()

    @staticmethod
    def _login(user: Any) -> str:
        client = Client()
        client.force_login(user)
        return client.cookies[settings.SESSION_COOKIE_NAME].value

    def _expired_guards(self) -> dict[str, str]:
        """Guards the middleware issued for one second, once past it: what a
        browser sends on its first request after a guard period."""
        with override_settings(WHOS_ONLINE_GUARD_SECONDS=1):
            self.renew_guards()
        time.sleep(2.1)
        return dict(self.guards)

    def cookies(self, case: Case) -> dict[str, str]:
        cookies = {}
        if case.visitor == "user":
            cookies[settings.SESSION_COOKIE_NAME] = self.session_key
        if case.guard == "fresh":
            cookies[conf.GUARD_COOKIE_NAME] = self.guards[case.visitor]
        elif case.guard == "expired":
            cookies[conf.GUARD_COOKIE_NAME] = self.expired_guards[case.visitor]
        return cookies

    def address(self, case: Case) -> str:
        return USER_ADDRESS if case.visitor == "user" else GUEST_ADDRESS

    def request(self, case: Case) -> WSGIRequest:
        return WSGIRequest(environ(case.path, self.cookies(case), self.address(case)))

    def requests(self, case: Case, n: int) -> list[WSGIRequest]:
        env = environ(case.path, self.cookies(case), self.address(case))
        return [WSGIRequest({**env, "wsgi.input": io.BytesIO(b"")}) for _ in range(n)]

    def renew_guards(self) -> None:
        """Guards as the middleware itself issues them (they expire)."""
        for visitor in ("user", "guest"):
            case = BY_NAME["ours-user-new" if visitor == "user" else "ours-guest"]
            response = self.handlers["ours"].get_response(self.request(case))
            self.guards[visitor] = response.cookies[conf.GUARD_COOKIE_NAME].value

    def run(self, case: Case, n: int) -> float:
        """Median µs per request over ``n`` fresh requests of ``case``."""
        requests = self.requests(case, n)
        get_response = self.handlers[case.chain].get_response
        clock = time.perf_counter_ns
        times = []
        for request in requests:
            start = clock()
            get_response(request)
            times.append(clock() - start)
        return statistics.median(times) / 1000


def zadd_block(client: Redis, n: int) -> float:
    """Median µs per bare redis-py ZADD round trip to the same server."""
    name = presence.key("bench-zadd-floor")
    clock = time.perf_counter_ns
    times = []
    for _ in range(n):
        start = clock()
        client.zadd(name, {"198.51.100.7": time.time()})
        times.append(clock() - start)
    return statistics.median(times) / 1000


@contextmanager
def counting() -> Iterator[Counts]:
    counts = Counts()
    original_execute = Redis.execute_command
    original_load = SessionStore.load
    original_get_user = auth.get_user

    def execute(self: Redis, *args: Any, **options: Any) -> Any:
        counts.redis.append(str(args[0]))
        return original_execute(self, *args, **options)  # type: ignore[no-untyped-call]

    def load(self: SessionStore) -> Any:
        counts.session_loads += 1
        return original_load(self)

    def get_user(request: HttpRequest) -> Any:
        counts.user_loads += 1
        return original_get_user(request)

    Redis.execute_command = execute  # type: ignore[method-assign]
    SessionStore.load = load  # type: ignore[method-assign]
    auth.get_user = get_user
    try:
        with CaptureQueriesContext(connection) as queries:
            yield counts
        counts.sql = len(queries.captured_queries)
        counts.statements = [q["sql"] for q in queries.captured_queries]
    finally:
        Redis.execute_command = original_execute  # type: ignore[method-assign]
        SessionStore.load = original_load  # type: ignore[method-assign]
        auth.get_user = original_get_user


def count(world: World, case: Case) -> Counts:
    request = world.request(case)
    with counting() as counts:
        response = world.handlers[case.chain].get_response(request)
    counts.guard_set = conf.GUARD_COOKIE_NAME in response.cookies
    return counts


def identity_checks(world: World) -> dict[str, Counts]:
    """A guard holds only for the identity it was issued to."""
    world.renew_guards()
    checks = {
        "alice's guard, same session": {
            settings.SESSION_COOKIE_NAME: world.session_key,
            conf.GUARD_COOKIE_NAME: world.guards["user"],
        },
        "alice's guard, bob's session (switched user)": {
            settings.SESSION_COOKIE_NAME: world.other_session_key,
            conf.GUARD_COOKIE_NAME: world.guards["user"],
        },
        "alice's guard, no session (logged out)": {
            conf.GUARD_COOKIE_NAME: world.guards["user"],
        },
    }
    results = {}
    for label, cookies in checks.items():
        request = WSGIRequest(environ("/", cookies, USER_ADDRESS))
        with counting() as counts:
            response = world.handlers["ours"].get_response(request)
        counts.guard_set = conf.GUARD_COOKIE_NAME in response.cookies
        results[label] = counts
    return results


def is_guarded(request: HttpRequest) -> bool:
    """What the middleware asks of every request before deciding to record."""
    issued = guard.read_guard(request)
    return issued is not None and issued.holds


def guarded_breakdown(world: World, number: int) -> Breakdown:
    """Where the guarded path's time goes, without relying on private names.

    Each step is timed alone (median of seven ``timeit`` runs), then
    cProfile lists the functions the middleware's guarded call runs, with
    their own time per call (profiling inflates every figure; compare
    shares, not absolutes).
    """
    world.renew_guards()
    user = world.request(BY_NAME["ours-user-guarded"])
    guest = world.request(BY_NAME["ours-guest-guarded"])
    for request in (user, guest):
        # Through the real chain once: cookies parsed, a lazy session attached.
        world.handlers["none"].get_response(request)
    response = HttpResponse(b"ok")
    middleware = WhosOnlineMiddleware(lambda request: response)
    assert is_guarded(user) and is_guarded(guest), "guards must verify"
    with_guard = environ("/", world.cookies(BY_NAME["ours-user-guarded"]), "")
    without_guard = environ("/", world.cookies(BY_NAME["none-user"]), "")
    both_cookies = with_guard["HTTP_COOKIE"]
    session_cookie = without_guard["HTTP_COOKIE"]
    steps: list[tuple[str, Callable[[], object]]] = [
        ("middleware(request), user, view stubbed", lambda: middleware(user)),
        ("middleware(request), guest, view stubbed", lambda: middleware(guest)),
        ("  is_guarded(request), user", lambda: is_guarded(user)),
        ("  is_guarded(request), guest", lambda: is_guarded(guest)),
        ("    client_address(META), guests only", lambda: client_address(guest.META)),
        ("parse_cookie(), session + guard", lambda: parse_cookie(both_cookies)),
        ("parse_cookie(), session only", lambda: parse_cookie(session_cookie)),
    ]
    timed = []
    for label, fn in steps:
        timings = timeit.repeat(fn, number=number, repeat=7)
        timed.append((label, statistics.median(timings) / number * 1e9))

    profiler = cProfile.Profile()
    calls = number * 5
    profiler.enable()
    for _ in range(calls):
        middleware(user)
    profiler.disable()
    return Breakdown(timed=timed, profile=_profile_rows(profiler, calls))


def unguarded_breakdown(world: World, number: int) -> Breakdown:
    """Where an unguarded guest request's time goes: the round trip, the
    script's own time inside Redis, and the Python around it."""
    client = get_client()
    case = BY_NAME["ours-guest"]
    floor_key = presence.key("bench-zadd-floor")
    sent: list[tuple[Any, ...]] = []
    original = Redis.execute_command

    def spy(self: Redis, *args: Any, **options: Any) -> Any:
        sent.append(args)
        return original(self, *args, **options)  # type: ignore[no-untyped-call]

    Redis.execute_command = spy  # type: ignore[method-assign]
    try:
        presence.record("guests", GUEST_ADDRESS)
    finally:
        Redis.execute_command = original  # type: ignore[method-assign]
    record_command = sent[-1]
    noop_sha = client.script_load("return 1")
    request = world.request(case)
    world.handlers["none"].get_response(request)
    visitor = identify(request)
    assert visitor is not None
    response = HttpResponse(b"ok")

    def record() -> object:
        return presence.record("guests", GUEST_ADDRESS)

    newcomers = itertools.count()

    def record_newcomer() -> object:
        n = next(newcomers)
        return presence.record("guests", f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}")

    def set_guard() -> None:
        guard.set_guard(response, request, guest_address=visitor.guest_address)

    steps: list[tuple[str, Callable[[], object]]] = [
        ("PING round trip (redis-py)", client.ping),
        ("bare ZADD round trip", lambda: client.zadd(floor_key, {"m": time.time()})),
        (
            f"EVALSHA of `return 1` with the record's {len(record_command) - 2} "
            "keys and arguments",
            lambda: client.execute_command("EVALSHA", noop_sha, *record_command[2:]),
        ),
        ("presence.record(): the record script's round trip", record),
        ("presence.record() of a guest entering the window", record_newcomer),
        ("identify(request), guest", lambda: identify(request)),
        ("set_guard(response, ...), guest", set_guard),
    ]
    timed = []
    for label, fn in steps:
        timings = timeit.repeat(fn, number=number, repeat=7)
        timed.append((label, statistics.median(timings) / number * 1e9))
    # Time inside Redis, from its own command statistics.
    for label, command, fn in (
        ("inside Redis: the record script", "evalsha", record),
        (
            "inside Redis: the record script, a guest entering",
            "evalsha",
            record_newcomer,
        ),
        ("inside Redis: ZADD", "zadd", steps[1][1]),
    ):
        client.config_resetstat()
        for _ in range(number):
            fn()
        stats = client.info("commandstats").get(f"cmdstat_{command}", {})
        timed.append((label, float(stats.get("usec_per_call", 0.0)) * 1000))

    profiler = cProfile.Profile()
    middleware = WhosOnlineMiddleware(lambda request: HttpResponse(b"ok"))
    requests = world.requests(case, number)
    for fresh in requests:
        world.handlers["none"].get_response(fresh)
    profiler.enable()
    for fresh in requests:
        middleware(fresh)
    profiler.disable()
    return Breakdown(timed=timed, profile=_profile_rows(profiler, len(requests)))


def _profile_rows(
    profiler: cProfile.Profile, calls: int
) -> list[tuple[str, float, float]]:
    stats = pstats.Stats(profiler)
    rows = []
    for (path, line, name), (_, ncalls, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        if name == "<module>" or "disable" in name:
            continue
        where = path.split("site-packages/")[-1].replace(str(ROOT) + "/", "")
        label = f"{where}:{line}({name})" if line else name
        rows.append((label, ncalls / calls, tottime / calls * 1e9))
    rows.sort(key=lambda row: -row[2])
    return rows[:12]


def measure(rounds: int, cheap_block: int, dear_block: int, seed: int = 5) -> Result:
    world = World()
    client = get_client()
    rng = random.Random(seed)
    blocks = {c.name: cheap_block if c.cheap else dear_block for c in CASES}
    # Warm up: scripts loaded, rows created, caches filled, code paths hot.
    world.renew_guards()
    for case in CASES:
        world.run(case, 20)
    zadd_block(client, 20)

    counts = {case.name: count(world, case) for case in CASES}
    means: dict[str, list[float]] = {case.name: [] for case in CASES}
    zadd: list[float] = []
    gc.collect()
    gc.freeze()
    for _ in range(rounds):
        world.renew_guards()
        jobs: list[Case | None] = [*CASES, None]
        rng.shuffle(jobs)
        gc.disable()
        try:
            for case in jobs:
                if case is None:
                    zadd.append(zadd_block(client, dear_block))
                else:
                    means[case.name].append(world.run(case, blocks[case.name]))
        finally:
            gc.enable()
        gc.collect()
    gc.unfreeze()
    return Result(
        rounds=rounds,
        block=blocks,
        means=means,
        zadd=zadd,
        counts=counts,
        identity=identity_checks(world),
        breakdown=guarded_breakdown(
            world, number=20_000 if cheap_block > 100 else 2000
        ),
        unguarded=unguarded_breakdown(world, number=1000 if cheap_block > 100 else 100),
    )
