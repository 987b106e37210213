"""Issue 28's load run: the example project under gunicorn, 200 visitors
each opening a page a second, with whos_online and without, side by side in
one run; writes docs/benchmarks/load.md and load.json.

    .venv/bin/python benchmarks/load.py                     # make bench-load
    .venv/bin/python benchmarks/load.py --quick --out DIR   # make bench-smoke

It starts a redis-server of its own on a free loopback port and one gunicorn
per kind of site (benchmarks/load_settings.py) on free loopback ports, with
a SQLite file in a scratch folder; all go when it exits. The load is open:
each visitor's pages are sent at fixed times whether or not earlier ones
were answered, and a page's latency runs from when it was due, so a server
that falls behind shows it (no coordinated omission).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench import ROOT, described, log, redis_server, save, scratch  # noqa: E402
from benchmarks.load_client import Visitor, fetch, open_loop, percentile  # noqa: E402

DOCS = ROOT / "docs" / "benchmarks"
# The pages a visitor browses in turn: each has the widget, the threads
# their room's too.
BROWSE = ("/", "/forum/", *(f"/forum/{pk}/" for pk in range(1, 5)), "/about/")
FIRST_NEW_THREAD = 1_000  # the example's own threads are 1 to 4


class Case(NamedTuple):
    name: str
    label: str
    site: str  # LOAD_CASE of the gunicorn that serves it
    new_room: bool  # a thread new to the site on each page, or BROWSE


CASES = (
    Case("a", "(a) without whos_online", "without", False),
    Case("b", "(b) middleware and widget", "app", False),
    Case("c", "(b) and a new thread (room) each page", "app", True),
    Case("d", "(d) django-online-users 0.3, no widget", "peer", False),
)
FULL = {"visitors": 200, "users": 100, "rounds": 5, "seconds": 20, "warmup": 3}
# The capacity sweep: the same sites at each rate (visitors, each a page a
# second, as many logged in as in the run), short rounds of (a), (b), (c).
# 350 tells 0.8x of 400 from 0.75x; the rates past 500 find the floor's
# own capacity, without which a ratio is only a bound.
FULL |= {"sweep": [100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1000]}
FULL |= {"sweep_rounds": 2}
FULL |= {"sweep_seconds": 10}
QUICK = FULL | {"visitors": 20, "users": 10, "rounds": 1, "seconds": 3, "warmup": 1}
QUICK |= {"sweep": [10, 20], "sweep_rounds": 1, "sweep_seconds": 2}
SWEPT = "abc"


def group_cpu(pgid: int) -> float:
    """CPU seconds (user and system) of the processes of a process group:
    a gunicorn master and its workers."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


class Server(NamedTuple):
    site: str
    port: int
    pgid: int


@contextlib.contextmanager
def gunicorn(
    site: str, env: dict[str, str], args: argparse.Namespace, workdir: Path
) -> Iterator[Server]:
    """A gunicorn serving the example project as ``site``, as a user runs it:
    its defaults but for the workers (and their class)."""
    from tests.redis_servers import free_port

    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "example_project.wsgi:application"]
    command += ["--bind", f"127.0.0.1:{port}", "--workers", str(args.workers)]
    command += ["--worker-class", args.worker_class, "--threads", str(args.threads)]
    command += ["--chdir", str(ROOT / "example_project"), "--pythonpath", str(ROOT)]
    env = os.environ | env | {"LOAD_CASE": site}
    with (workdir / f"gunicorn-{site}.log").open("wb") as out:
        proc = subprocess.Popen(
            command, stdout=out, stderr=out, env=env, start_new_session=True
        )
    try:
        yield Server(site, port, proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def failures(site: str, workdir: Path) -> dict[str, int]:
    """The exceptions a site's pages raised, by their last line in its log
    (``sqlite3.OperationalError: database is locked``)."""
    text = (workdir / f"gunicorn-{site}.log").read_text(errors="replace")
    found = re.findall(r"^((?:\w+\.)*\w+(?:Error|Exception)\b.*)$", text, re.M)
    return dict(Counter(found))


async def ready(server: Server, workdir: Path) -> None:
    probe = Visitor("192.0.2.1")
    for _ in range(300):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if await fetch(server.port, probe, "/about/") == 200:
                return
        await asyncio.sleep(0.1)
    log_text = (workdir / f"gunicorn-{server.site}.log").read_text()[-3000:]
    raise SystemExit(f"gunicorn ({server.site}) did not answer:\n{log_text}")


def set_up_site(visitors: int, users: int) -> list[Visitor]:
    """Migrate the scratch database; the users, each logged in with a session
    of their own; the visitors, each from an address of their own, users and
    guests mixed so that the first N of them, for any N, are logged in in
    the same proportion."""
    import django

    django.setup()
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    model = get_user_model()
    model.objects.bulk_create(
        model(username=f"reader{n}", password=make_password(None)) for n in range(users)
    )
    store = import_module(settings.SESSION_ENGINE).SessionStore
    people = []
    for n, user in enumerate(model.objects.order_by("pk")[:users]):
        session = store()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        people.append(Visitor(address(n), session.session_key or ""))
    guests = [Visitor(address(n)) for n in range(users, visitors)]
    mixed = []
    for n in range(visitors):
        logged_in = (n + 1) * users // visitors > n * users // visitors
        mixed.append(people.pop(0) if logged_in else guests.pop(0))
    return mixed


def address(n: int) -> str:
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"


async def prepare(
    servers: list[Server], visitors: list[Visitor], workdir: Path
) -> None:
    """Each gunicorn answers; then each visitor opens a page of each site
    once, so the run starts with browsers that have their cookies."""
    gate = asyncio.Semaphore(20)

    async def first(server: Server, visitor: Visitor) -> None:
        async with gate:
            await fetch(server.port, visitor, "/")

    for server in servers:
        await ready(server, workdir)
    await asyncio.gather(*(first(s, v) for s in servers for v in visitors))


def redis_counters(client: Any) -> tuple[int, float]:
    """Commands Redis has run (those scripts run included) and its
    main thread's CPU seconds."""
    stats = client.info("commandstats")
    calls = sum(
        v["calls"]
        for k, v in stats.items()
        if k not in ("cmdstat_info", "cmdstat_config")
    )
    cpu = client.info("cpu")
    return calls, cpu["used_cpu_user_main_thread"] + cpu["used_cpu_sys_main_thread"]


def measure(
    case: Case,
    server: Server,
    visitors: list[Visitor],
    params: dict[str, Any],
    seed: int,
    client: Any,
    threads: Iterator[int],
) -> dict[str, Any]:
    """One round of one case: its figures, and what each page cost the
    server's processes, Redis and this load generator."""

    def page(i: int, k: int) -> str:
        if case.new_room:
            return f"/forum/{next(threads)}/"
        return BROWSE[(i + k) % len(BROWSE)]

    server_cpu, (commands, redis_cpu) = group_cpu(server.pgid), redis_counters(client)
    ours = resource.getrusage(resource.RUSAGE_SELF)
    sample, seconds = asyncio.run(
        open_loop(
            server.port, visitors, page, params["seconds"], params["warmup"], seed
        )
    )
    mine = resource.getrusage(resource.RUSAGE_SELF)
    pages = len(visitors) * (params["seconds"] + params["warmup"])
    after_commands, after_cpu = redis_counters(client)
    late = sample.late or [0.0]
    return {
        "requests_per_s": sample.answered_in_window / seconds,
        "p50_ms": percentile(sample.latencies, 50) if sample.latencies else None,
        "p99_ms": percentile(sample.latencies, 99) if sample.latencies else None,
        "due": sample.due,
        "answered": len(sample.latencies),
        "errors": dict(sample.errors),
        "sent_late_p99_ms": percentile(late, 99),
        "server_cpu_ms": (group_cpu(server.pgid) - server_cpu) / pages * 1e3,
        "redis_commands": (after_commands - commands) / pages,
        "redis_cpu_us": (after_cpu - redis_cpu) / pages * 1e6,
        "generator_cpu_ms": (
            mine.ru_utime + mine.ru_stime - ours.ru_utime - ours.ru_stime
        )
        / pages
        * 1e3,
        "load_average": os.getloadavg()[0],
    }


def summary(figures: dict[str, Any]) -> str:
    p50, p99 = figures["p50_ms"] or 0, figures["p99_ms"] or 0
    text = f"{figures['requests_per_s']:.1f}/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms"
    return text + (f", not 2xx: {figures['errors']}" if figures["errors"] else "")


def environment(args: argparse.Namespace) -> dict[str, str]:
    import platform
    from importlib.metadata import version

    import django

    redis = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True
    )
    server = next(
        (w[2:] for w in redis.stdout.split() if w.startswith("v=")), "unknown"
    )
    workers = f"{args.workers} {args.worker_class} workers"
    if args.worker_class == "gthread":
        workers += f" of {args.threads} threads"
    software = [f"Python {platform.python_version()}", f"Django {django.get_version()}"]
    software += [f"Redis {server}", f"redis-py {version('redis')}"]
    software += [f"gunicorn {version('gunicorn')} ({workers})"]
    software += [f"django-online-users {version('django-online-users')}"]
    return described(software) | {"workers": workers}


def run(
    args: argparse.Namespace, params: dict[str, Any], workdir: Path
) -> dict[str, Any]:
    from redis import Redis

    cases = [case for case in CASES if case.name in args.cases]
    sites = list(dict.fromkeys(case.site for case in cases))
    with redis_server(workdir) as redis_url, contextlib.ExitStack() as stack:
        log(f"private redis-server at {redis_url}; scratch in {workdir}")
        env = {"REDIS_URL": redis_url, "DEMO_DB_PATH": str(workdir / "db.sqlite3")}
        env["DJANGO_SETTINGS_MODULE"] = "benchmarks.load_settings"
        os.environ |= env | {"LOAD_CASE": "setup"}
        sys.path.insert(0, str(ROOT / "example_project"))
        most = max(params["visitors"], *params["sweep"])
        everyone = set_up_site(most, most * params["users"] // params["visitors"])
        visitors = everyone[: params["visitors"]]
        servers = {
            site: stack.enter_context(gunicorn(site, env, args, workdir))
            for site in sites
        }
        asyncio.run(prepare(list(servers.values()), everyone, workdir))
        client = Redis.from_url(redis_url)
        threads = iter(range(FIRST_NEW_THREAD, 10**9))
        rounds: dict[str, list[dict[str, Any]]] = {case.name: [] for case in cases}
        for r in range(params["rounds"]):
            order = cases[r % len(cases) :] + cases[: r % len(cases)]
            for case in order:
                figures = measure(
                    case, servers[case.site], visitors, params, r, client, threads
                )
                rounds[case.name].append(figures)
                log(
                    f"round {r + 1}/{params['rounds']} {case.label}: {summary(figures)}"
                )
                time.sleep(1)  # what is left of the round's work, done
        swept = [case for case in cases if case.name in SWEPT]
        sweep = {case.name: {} for case in swept}
        short = params | {"seconds": params["sweep_seconds"]}
        for rate in params["sweep"] if args.sweep else ():
            for r in range(params["sweep_rounds"]):
                for case in swept:
                    server, some = servers[case.site], everyone[:rate]
                    figures = measure(case, server, some, short, r, client, threads)
                    sweep[case.name].setdefault(str(rate), []).append(figures)
                    log(f"{rate} visitors, {case.label}: {summary(figures)}")
                    time.sleep(1)
        errors = {site: failures(site, workdir) for site in sites}
    return {"cases": {c.name: c.label for c in cases}, "rounds": rounds} | {
        "sweep": sweep if args.sweep else {},
        "server_errors": {site: found for site, found in errors.items() if found},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="a few visitors, one short round"
    )
    parser.add_argument("--out", type=Path, default=DOCS, help="where to write")
    parser.add_argument("--rounds", type=int, help="rounds of every case")
    parser.add_argument("--seconds", type=int, help="measured seconds a round")
    parser.add_argument("--visitors", type=int, help="visitors, each a page a second")
    parser.add_argument("--users", type=int, help="of them, logged-in users")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--worker-class", default="sync", help="sync or gthread")
    parser.add_argument(
        "--threads", type=int, default=1, help="threads a gthread worker"
    )
    parser.add_argument("--cases", default="abcd", help="which cases, e.g. ab")
    parser.add_argument(
        "--no-sweep",
        dest="sweep",
        action="store_false",
        help="leave out the capacity sweep",
    )
    parser.add_argument("--from-json", type=Path, help="only write the report again")
    args = parser.parse_args()
    params = QUICK if args.quick else FULL
    for name in ("rounds", "seconds", "visitors", "users"):
        if getattr(args, name) is not None:
            params = params | {name: getattr(args, name)}
    if args.from_json:
        results = json.loads(args.from_json.read_text())
    else:
        started = time.monotonic()
        with scratch("whos-online-load-") as workdir:
            results = run(args, params, workdir)
        results |= {"mode": "quick" if args.quick else "full", "params": params}
        results["environment"] = environment(args)
        results["minutes"] = (time.monotonic() - started) / 60
    from benchmarks import load_report

    save(results, args.out, "load", load_report.write)


if __name__ == "__main__":
    main()
