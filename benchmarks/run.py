"""Measure every figure of issue 19 in one run and write docs/benchmarks/
(README.md, headline.md, which the README quotes, and results.json).

    .venv/bin/python benchmarks/run.py                     # make bench
    .venv/bin/python benchmarks/run.py --quick --out DIR   # make bench-smoke

It starts a redis-server of its own on a free loopback port and keeps its
SQLite file in a scratch folder; both go when it exits. A figure that
cannot be measured (no valgrind, no hiredis) is left out and said so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench import ROOT, described, log, redis_server  # noqa: E402

DOCS = ROOT / "docs" / "benchmarks"
MARKERS = (
    "<!-- benchmark headline: written by `make bench` -->",
    "<!-- end of benchmark headline -->",
)
FULL = {
    "size": 100_000,  # users and guests online
    "users": 200,  # logged-in users with sessions
    "rounds": 30,
    "block": 400,  # requests per case per round (a quarter for round trips)
    "redis_rounds": 7,
    "redis_calls": 200,
    "benchmark_requests": 100_000,
    "prune_size": 1_000_000,
    "prune_rounds": 3,
    "callgrind_requests": 200,
    "not_seen_after": 4_200,  # distinct visitors before those counted
    "together_block": 40,  # pages a case per round (an admin page is slow)
}
QUICK = FULL | {"size": 5_000, "users": 30, "rounds": 3, "block": 60}
QUICK |= {"redis_rounds": 2, "redis_calls": 30, "benchmark_requests": 10_000}
QUICK |= {"prune_size": 20_000, "prune_rounds": 1, "callgrind_requests": 20}
QUICK |= {"not_seen_after": 100, "together_block": 10}


def measure(params: dict[str, Any], callgrind: bool) -> dict[str, Any]:
    from benchmarks import figures, redis_figures, together

    world = figures.World(params["size"], params["users"])
    log("requests through WSGIHandler, alternated in rounds")
    results: dict[str, Any] = {}
    results["peer_error"] = world.peer_error
    results["requests"] = figures.request_costs(
        world, params["rounds"], params["block"]
    )
    log("working together: a listing's rows, an admin change form")
    results["together"] = together.costs(
        world, params["rounds"], params["together_block"]
    )
    log("time inside Redis, per operation")
    results["redis"] = redis_figures.redis_costs(
        world, params["redis_rounds"], params["redis_calls"]
    )
    log("operations per second of one Redis core (redis-benchmark)")
    results["throughput"] = redis_figures.throughput(
        world, params["benchmark_requests"], params["prune_rounds"]
    )
    log(f"prune of {params['prune_size']:,} stale members")
    results["prune"] = redis_figures.prune(
        world, params["prune_size"], params["prune_rounds"]
    )
    results["instructions"] = results["pages"] = None
    if callgrind:
        log("instructions per request (callgrind, if valgrind is installed)")
        counted = figures.callgrind(
            world, params["callgrind_requests"], params["not_seen_after"]
        )
        if counted is not None:
            results["instructions"], results["pages"] = counted
    return results


def environment(redis_url: str) -> dict[str, str]:
    import django
    from django.conf import settings
    from redis import Redis

    hiredis = (
        "hiredis " + version("hiredis")
        if "presence-hiredis" in _parsers()
        else "no hiredis"
    )
    server = Redis.from_url(redis_url).info("server")["redis_version"]
    software = [f"Python {platform.python_version()}", f"Django {django.get_version()}"]
    software += [f"Redis {server}", f"redis-py {version('redis')}"]
    software += [f"django-redis {version('django-redis')}", hiredis]
    if not settings.PEER_ERROR:
        software.append(f"django-online-users {version('django-online-users')}")
    return described(software)


def _parsers() -> dict[str, str]:
    from django.conf import settings

    return settings.PARSERS  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    parser.add_argument("--out", type=Path, default=DOCS, help="where to write")
    parser.add_argument("--prune-size", type=int, help="stale members to prune")
    parser.add_argument("--no-callgrind", action="store_true", help="skip valgrind")
    parser.add_argument("--from-json", type=Path, help="only write the report again")
    args = parser.parse_args()
    params = (QUICK if args.quick else FULL) | (
        {"prune_size": args.prune_size} if args.prune_size else {}
    )
    if args.from_json:
        results = json.loads(args.from_json.read_text())
    else:
        started = time.monotonic()
        shm = Path("/dev/shm")  # tmpfs: SQLite's fsyncs cost no disk time
        scratch = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
        workdir = Path(tempfile.mkdtemp(prefix="whos-online-bench-", dir=scratch))
        try:
            with redis_server(workdir) as redis_url:
                log(f"private redis-server at {redis_url}; scratch in {workdir}")
                os.environ |= {
                    "BENCH_REDIS_URL": redis_url,
                    "BENCH_DB": str(workdir / "db.sqlite3"),
                }
                os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
                import django

                django.setup()
                from django.conf import settings

                params |= {
                    "guard_seconds": settings.WHOS_ONLINE_GUARD_SECONDS,
                    "heartbeat_seconds": settings.WHOS_ONLINE_HEARTBEAT_SECONDS,
                }
                results = measure(params, not args.no_callgrind)
                results["environment"] = environment(redis_url)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        results |= {"mode": "quick" if args.quick else "full", "params": params}
        results["minutes"] = (time.monotonic() - started) / 60
    from benchmarks import report

    args.out.mkdir(parents=True, exist_ok=True)
    report.write(results, args.out)  # adds the derived figures to results
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    if args.out.resolve() == DOCS.resolve():
        readme = ROOT / "README.md"
        before, rest = readme.read_text().split(MARKERS[0], 1)
        after = rest.split(MARKERS[1], 1)[1]
        headline = (DOCS / "headline.md").read_text()
        readme.write_text(f"{before}{MARKERS[0]}\n{headline}{MARKERS[1]}{after}")
    log(f"wrote {args.out / 'README.md'}")


if __name__ == "__main__":
    main()
