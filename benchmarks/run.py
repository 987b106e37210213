"""Run every benchmark and write docs/benchmarks/ (README.md, headline.md,
which it also puts in the README, PNG charts and results.json).

    .venv/bin/python benchmarks/run.py                     # make bench
    .venv/bin/python benchmarks/run.py --quick --out DIR   # make bench-smoke

It starts a redis-server of its own on a free loopback port (and three
gunicorn servers for the load test), uses a PostgreSQL database of its own
if a server answers, and stops or drops them all before it exits. Figures
are medians and ratios of measurements interleaved in this one run: the
machine may be shared and noisy, so compare figures within a report only.

No pyperf or pytest-benchmark: the per-request figures are differences
between cases interleaved round by round in one warm process, against one
Redis; pyperf spreads a benchmark over fresh processes and pytest-benchmark
times one case at a time, so neither can pair the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import servers  # noqa: E402
from benchmarks.common import ROOT, log  # noqa: E402

DOCS = ROOT / "docs" / "benchmarks"
MARKERS = (
    "<!-- benchmark headline: written by `make bench` -->",
    "<!-- end of benchmark headline -->",
)
FULL = {
    "rounds": 60,
    "cheap_block": 500,
    "dear_block": 100,
    "sizes": [10, 1_000, 100_000, 1_000_000],
    "size_rounds": 15,
    "size_block": 20,
    "prune_sizes": [10_000, 1_000_000],
    "prune_repeats": 5,
    "memory_size": 100_000,
    # Many short rounds: this machine's noise comes in swings of tens of
    # seconds, and the verdict is a median of per-round ratios.
    "load_rounds": 12,
    "load_seconds": 4.0,
}
QUICK = FULL | {"rounds": 6, "cheap_block": 100, "dear_block": 20, "size_rounds": 3}
QUICK |= {"size_block": 5}
QUICK |= {"sizes": [10, 1_000, 10_000], "prune_sizes": [1_000, 10_000]}
QUICK |= {"prune_repeats": 1, "memory_size": 10_000, "load_rounds": 1}
QUICK |= {"load_seconds": 3.0}


def request_costs(params: dict[str, Any]) -> dict[str, Any]:
    from benchmarks import per_request

    return per_request.measure(
        params["rounds"], params["cheap_block"], params["dear_block"]
    )


def measure(params: dict[str, Any], workdir: Path, load: bool) -> dict[str, Any]:
    from benchmarks import app, per_request, scale, stacks

    log("per-request cost of each middleware (interleaved rounds)")
    results: dict[str, Any] = {"per_request": request_costs(params)}
    results["per_request_postgres"] = {"skipped": servers.postgres_missing()}
    if results["per_request_postgres"]["skipped"] is None:
        log("per-request cost again, with the database in PostgreSQL")
        out = workdir / "postgres.json"
        rounds = str(max(params["rounds"] // 2, 2))  # each request takes longer
        with servers.postgres_database() as name:
            command = [sys.executable, __file__, "--per-request-only", str(out)]
            command += ["--quick"] * (params is QUICK)
            env = {**os.environ, "BENCH_POSTGRES_DB": name, "BENCH_ROUNDS": rounds}
            subprocess.run(command, env=env, check=True)
        results["per_request_postgres"] = json.loads(out.read_text())
    log("scaling with the number online")
    scale.ensure_users(scale.NAMES + 10)
    guarded = per_request.guarded_call(stacks.World(app.guard_cookie()))
    results["scale"] = {"prune_batch": app.PRUNE_BATCH, "sizes": [], "prunes": []}
    for size in params["sizes"]:
        log(f"  {size:,} online: tag, snapshot, record, ZADD")
        rounds, block = params["size_rounds"], params["size_block"]
        sized = scale.measure_size(size, rounds, block, guarded)
        results["scale"]["sizes"].append(sized)
    for size in params["prune_sizes"]:
        log(f"  pruning {size:,} stale members")
        prune = scale.measure_prune(size, params["prune_repeats"])
        results["scale"]["prunes"].append(prune)
    log(f"  memory per member, {params['memory_size']:,} members of each kind")
    results["scale"]["memory"] = scale.measure_memory(params["memory_size"])
    results["load"] = None
    if load:
        from benchmarks import load as load_test

        log("load test: the example project under gunicorn")
        rounds, seconds = params["load_rounds"], params["load_seconds"]
        redis_url = os.environ["BENCH_REDIS_URL"]
        results["load"] = load_test.run(workdir, redis_url, rounds, seconds)
    return results


def set_up_django(workdir: Path | None = None, redis_url: str = "") -> None:
    if workdir:
        os.environ["BENCH_DB"] = str(workdir / "bench.sqlite3")
        os.environ["BENCH_REDIS_URL"] = redis_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def environment(redis_url: str) -> dict[str, str]:
    import django
    from redis import Redis

    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = [line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line]

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "whos_online")
    packages = ("redis", "django-redis", "gunicorn", "django-online-users")
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD")
        + (" (with uncommitted changes to whos_online/)" if dirty else ""),
        "cpus": str(os.cpu_count()),
        "cpu": cpu[0] if cpu else "CPU unknown",
        "platform": platform.platform(),
        "python": platform.python_version(),
        "django": django.get_version(),
        "redis_server": Redis.from_url(redis_url).info("server")["redis_version"],
        **{name.replace("-", "_"): version(name) for name in packages},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    parser.add_argument("--out", type=Path, default=DOCS, help="where to write")
    parser.add_argument("--skip-load", action="store_true", help="no load test")
    parser.add_argument("--from-json", type=Path, help="only redo the report")
    parser.add_argument("--per-request-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    params = QUICK if args.quick else FULL
    if args.per_request_only:  # run.py itself, again, with PostgreSQL
        set_up_django()
        from django.db import connection

        params = params | {"rounds": int(os.environ["BENCH_ROUNDS"])}
        result = request_costs(params)
        version = connection.pg_version  # type: ignore[attr-defined]
        result["database"] = f"PostgreSQL {version // 10000}"
        args.per_request_only.write_text(json.dumps(result))
        return
    if args.from_json:
        results = json.loads(args.from_json.read_text())
    else:
        started = time.monotonic()
        shm = Path("/dev/shm")  # tmpfs: SQLite's fsyncs cost no disk time
        scratch = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
        workdir = Path(tempfile.mkdtemp(prefix="whos-online-bench-", dir=scratch))
        try:
            with servers.redis_server(workdir) as redis_url:
                log(f"private redis-server at {redis_url}; scratch in {workdir}")
                set_up_django(workdir, redis_url)
                results = measure(params, workdir, not args.skip_load)
                results["environment"] = environment(redis_url)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        minutes = (time.monotonic() - started) / 60
        results |= {"mode": "quick" if args.quick else "full", "params": params}
        results["minutes"] = minutes
    from benchmarks import report

    args.out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, indent=1, default=str)
    (args.out / "results.json").write_text(text + "\n")
    report.write(results, args.out)
    if args.out.resolve() == DOCS.resolve():
        readme = ROOT / "README.md"
        before, rest = readme.read_text().split(MARKERS[0], 1)
        after = rest.split(MARKERS[1], 1)[1]
        headline = (DOCS / "headline.md").read_text()
        readme.write_text(f"{before}{MARKERS[0]}\n{headline}{MARKERS[1]}{after}")
    log(f"wrote {args.out / 'README.md'}")


if __name__ == "__main__":
    main()
