"""What a middleware adds to each request, measured in-process.

Each request goes through Django's ``WSGIHandler`` as a WSGI server calls
it, with a fresh environ built before the clock starts, and is timed alone,
``close()`` included. Two stacks, the minimal one (Session and Auth
middleware) and the default ``startproject`` one, each with or without one
more middleware right after ``AuthenticationMiddleware``. In each round
every case runs a block of requests, in a shuffled order, with a block of
bare ZADDs; a case's cost is the median over rounds of its block's median
less its baseline's in the same round (the report subtracts). Counting
(Redis commands, SQL, session and user loads) is a separate, untimed pass.

``run.py --per-request-only OUT.json`` runs it alone, as run.py does again
with the database in PostgreSQL.
"""

from __future__ import annotations

import cProfile
import gc
import itertools
import pstats
import random
import statistics
import time
import timeit
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

from django.conf import settings
from django.contrib import auth
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from django.http import HttpRequest, HttpResponse, parse_cookie
from django.test.utils import CaptureQueriesContext
from django_redis import get_redis_connection
from redis import Redis

from benchmarks import app
from benchmarks.common import ROOT, per_call
from benchmarks.stacks import ADDRESS, BY_NAME, CASES, PLAIN_COOKIE, Case, World


@contextmanager
def counting() -> Iterator[dict[str, Any]]:
    """Redis commands, SQL statements, session and user loads, meanwhile."""
    with ExitStack() as stack:
        spies = [stack.enter_context(spy(owner, name)) for owner, name in SPIED]
        queries = stack.enter_context(CaptureQueriesContext(connection))
        counts: dict[str, Any] = {}
        yield counts
    statements = [query["sql"] for query in queries.captured_queries]
    counts |= {"redis": [str(call.args[1]) for call in spies[0].call_args_list]}
    counts |= {"sql": len(statements), "statements": statements}
    counts |= {"session_loads": spies[1].call_count, "user_loads": spies[2].call_count}


SPIED = [(Redis, "execute_command"), (SessionStore, "load"), (auth, "get_user")]


def spy(owner: Any, name: str) -> Any:
    """Patch ``owner.name`` with a mock that calls it and records the calls."""
    return mock.patch.object(
        owner, name, autospec=True, side_effect=getattr(owner, name)
    )


def count(world: World, case: Case, cookies: dict[str, str] | None = None) -> Any:
    with counting() as counts:
        response = world.respond(case, cookies)
    cookies_set = {app.guard_cookie(), PLAIN_COOKIE} & set(response.cookies)
    counts["guard_set"] = bool(cookies_set)
    return counts


def identity_checks(world: World) -> dict[str, Any]:
    """A guard holds only for the identity it was issued to."""
    world.renew_guards()
    guard = {app.guard_cookie(): world.guards["user"]}
    alice, bob = ({settings.SESSION_COOKIE_NAME: key} for key in world.sessions)
    checks = {
        "alice's guard, same session": alice | guard,
        "alice's guard, bob's session (switched user)": bob | guard,
        "alice's guard, no session (logged out)": guard,
    }
    case = BY_NAME["ours-user-guarded"]
    return {label: count(world, case, cookies) for label, cookies in checks.items()}


def timed(steps: dict[str, Callable[[], object]], number: int) -> list[list[Any]]:
    """Each step's ns per call: the median of seven ``timeit`` runs."""

    def ns(fn: Callable[[], object]) -> float:
        return statistics.median(timeit.repeat(fn, number=number, repeat=7)) * 1e9

    return [[label, ns(fn) / number] for label, fn in steps.items()]


def profiled(
    requests: Sequence[HttpRequest], call: Callable[[HttpRequest], object]
) -> Any:
    """The twelve functions with most own time per request (cProfile)."""
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [call(request) for request in requests])
    rows, n = [], len(requests)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    for (path, line, name), (_, calls, own, _, _) in stats.items():
        where = path.split("site-packages/")[-1].replace(f"{ROOT}/", "")
        label = f"{where}:{line}({name})" if line else name
        if not name.startswith(("<module", "<lambda", "<listcomp", "<method 'disable")):
            rows.append([label, calls / n, own / n * 1e9])
    return sorted(rows, key=lambda row: -row[2])[:12]


def guarded_breakdown(world: World, number: int) -> dict[str, Any]:
    """Where the guarded path's time goes: each step timed alone, then the
    middleware's call under cProfile (which inflates every figure)."""
    world.renew_guards()
    user, guest = map(world.prepared, ("ours-user-guarded", "ours-guest-guarded"))
    assert app.guard_holds(user) and app.guard_holds(guest), "guards must verify"
    response = HttpResponse()  # the view, stubbed out, costs the step nothing
    middleware = app.WhosOnlineMiddleware(lambda request: response)
    both = world.environ(BY_NAME["ours-user-guarded"])["HTTP_COOKIE"]
    session = world.environ(BY_NAME["none-user"])["HTTP_COOKIE"]
    steps = {
        "middleware(request), user, view stubbed": lambda: middleware(user),
        "middleware(request), guest, view stubbed": lambda: middleware(guest),
        "  is_guarded(request), user": lambda: app.guard_holds(user),
        "  is_guarded(request), guest": lambda: app.guard_holds(guest),
        "    client_address(META), guests only": lambda: app.client_address(guest.META),
        "parse_cookie(), session + guard": lambda: parse_cookie(both),
        "parse_cookie(), session only": lambda: parse_cookie(session),
    }
    profile = profiled([user] * number * 5, middleware)
    return {"timed": timed(steps, number), "profile": profile}


def unguarded_breakdown(world: World, number: int) -> dict[str, Any]:
    """Where an unguarded guest's time goes: the round trip, the script's
    own time inside Redis, and the Python around it."""
    client, floor, address = get_redis_connection(), app.key("floor"), ADDRESS["guest"]
    entering = (f"10.{n >> 8 & 255}.{n & 255}.1" for n in itertools.count())
    with spy(Redis, "execute_command") as sent:
        app.record("guests", address)
    script_args = sent.call_args.args[3:]  # self, "EVALSHA", sha, then these
    noop = client.script_load("return 1")
    request, response = world.prepared("ours-guest"), HttpResponse()
    guard_args = (response, request, app.guest(request))
    empty = f"EVALSHA of `return 1` with the record's {len(script_args) - 1} arguments"
    steps: dict[str, Callable[[], object]] = {
        "PING round trip (redis-py)": client.ping,
        "bare ZADD round trip": lambda: client.zadd(floor, {"m": time.time()}),
        empty: lambda: client.execute_command("EVALSHA", noop, *script_args),
        "record(): the script's round trip": lambda: app.record("guests", address),
        "record() of a guest entering the window": lambda: app.record(
            "guests", next(entering)
        ),
        "identify(request), guest": lambda: app.identify(request),
        "set_guard(response, ...), guest": lambda: app.set_guest_guard(*guard_args),
    }
    rows = timed(steps, number)
    labels = list(steps)
    for label, step in (
        ("the record script", labels[3]),
        ("the record script, a guest entering", labels[4]),
        ("ZADD", labels[1]),
    ):
        client.config_resetstat()
        for _ in range(number):
            steps[step]()
        command = "zadd" if label == "ZADD" else "evalsha"
        stats = client.info("commandstats").get(f"cmdstat_{command}", {})
        rows.append([f"inside Redis: {label}", stats.get("usec_per_call", 0) * 1e3])
    requests = [world.prepared("ours-guest") for _ in range(number)]
    middleware = app.WhosOnlineMiddleware(lambda request: HttpResponse())
    return {"timed": rows, "profile": profiled(requests, middleware)}


def guarded_call(world: World) -> Callable[[], object]:
    """A guarded user's whole middleware call, the view stubbed out."""
    world.renew_guards()
    request = world.prepared("ours-user-guarded")
    response = HttpResponse()
    middleware = app.WhosOnlineMiddleware(lambda request: response)
    return lambda: middleware(request)


def measure(rounds: int, cheap_block: int, dear_block: int) -> dict[str, Any]:
    world, client, floor = (
        World(app.guard_cookie()),
        get_redis_connection(),
        app.key("floor"),
    )

    def bare_zadd() -> object:
        return client.zadd(floor, {"m": time.time()})

    blocks = {c.name: cheap_block if c.cheap else dear_block for c in CASES}
    for case in CASES:  # scripts loaded, rows created, code paths hot
        world.run(case, 20)
    counts = {case.name: count(world, case) for case in CASES}
    means: dict[str, list[float]] = {case.name: [] for case in CASES}
    zadd: list[float] = []
    rng = random.Random(5)
    gc.collect()
    gc.freeze()
    for _ in range(rounds):
        world.renew_guards()
        jobs: list[Case | None] = [*CASES, None]
        rng.shuffle(jobs)
        gc.disable()
        for job in jobs:
            if job is None:
                zadd.append(per_call(bare_zadd, dear_block))
            else:
                means[job.name].append(world.run(job, blocks[job.name]))
        gc.enable()
        gc.collect()
    gc.unfreeze()
    quick = cheap_block <= 100
    return {
        "rounds": rounds,
        "block": blocks,
        "baselines": {case.name: case.baseline for case in CASES},
        "means": means,
        "zadd": zadd,
        "counts": counts,
        "identity": identity_checks(world),
        "breakdown": guarded_breakdown(world, 2000 if quick else 20_000),
        "unguarded": unguarded_breakdown(world, 100 if quick else 1000),
    }
