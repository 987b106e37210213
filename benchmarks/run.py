"""Run every benchmark and write docs/benchmarks/ (README.md, PNG charts and
results.json).

    .venv/bin/python benchmarks/run.py            # the full run, about 10 minutes
    .venv/bin/python benchmarks/run.py --quick    # a smoke run, about 2 minutes

It starts a redis-server of its own on a free loopback port (and, for the
load test, two gunicorn servers), and stops them all before it exits. It
never touches another Redis. Figures are medians and ratios of measurements
taken side by side, interleaved, in this one run: the machine may be shared
and noisy, so compare figures within a report, not across reports.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import servers  # noqa: E402

DOCS = ROOT / "docs" / "benchmarks"
HEADLINE_START = "<!-- benchmark headline: written by `make bench` -->"
HEADLINE_END = "<!-- end of benchmark headline -->"

FULL = {
    "rounds": 60,
    "cheap_block": 500,
    "dear_block": 100,
    "sizes": [10, 1_000, 100_000, 1_000_000],
    "size_rounds": 15,
    "prune_sizes": [10_000, 1_000_000],
    "prune_repeats": 5,
    "memory_size": 100_000,
    # Many short rounds: this machine's noise comes in swings of tens of
    # seconds, and the verdict is a median of per-round ratios.
    "load_rounds": 12,
    "load_seconds": 4.0,
}
QUICK = {
    "rounds": 6,
    "cheap_block": 100,
    "dear_block": 20,
    "sizes": [10, 1_000, 10_000],
    "size_rounds": 3,
    "prune_sizes": [1_000, 10_000],
    "prune_repeats": 1,
    "memory_size": 10_000,
    "load_rounds": 1,
    "load_seconds": 3.0,
}
# The load test's browsing mix: the demo users and readers, and guests.
LOAD_READERS = 9
LOAD_GUESTS = 8
# One worker with one thread per server. A keep-alive connection stays with
# the worker that accepted it, so with several workers the split of clients
# between them is luck, and a phase served by one busy worker while another
# idles measures that luck (runs swung between 160 and 340 req/s). Threads
# add GIL switching (6.8 instead of 5.2 ms of CPU per request). One worker
# on one core is what both servers get, side by side.
GUNICORN_WORKERS = 1
GUNICORN_THREADS = 1


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}] {message}", flush=True)


def setup_django(workdir: Path, redis_url: str) -> None:
    os.environ["BENCH_REDIS_URL"] = redis_url
    os.environ["BENCH_DB"] = str(workdir / "bench.sqlite3")
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.bench_settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run_per_request_postgres(
    workdir: Path, redis_url: str, params: dict[str, Any]
) -> dict[str, Any]:
    from benchmarks import postgres

    why_not = postgres.available()
    if why_not:
        log(f"per-request cost with PostgreSQL: skipped, {why_not}")
        return {"skipped": why_not}
    log("per-request cost again, with the database in PostgreSQL")
    return postgres.run(redis_url, params, workdir / "per-request-postgres.json")


def run_per_request(params: dict[str, Any]) -> Any:
    from benchmarks import per_request

    return per_request.measure(
        rounds=params["rounds"],
        cheap_block=params["cheap_block"],
        dear_block=params["dear_block"],
    )


def guarded_call() -> Any:
    """A guarded request's whole middleware call (the view stubbed out)."""
    from benchmarks import per_request
    from whos_online.middleware import WhosOnlineMiddleware

    world = per_request.World()
    world.renew_guards()
    request = world.request(per_request.BY_NAME["ours-user-guarded"])
    world.handlers["none"].get_response(request)
    middleware = WhosOnlineMiddleware(lambda r: None)
    return lambda: middleware(request)


def run_scale(params: dict[str, Any], quick: bool) -> dict[str, Any]:
    from benchmarks import scale
    from whos_online.conf import conf

    scale.ensure_users(scale.NAMES + 10)
    call = guarded_call()
    sizes = []
    for size in params["sizes"]:
        log(f"  {size:,} online: tag, snapshot, record, ZADD")
        sizes.append(scale.measure_size(size, params["size_rounds"], call, quick))
    prunes = []
    for size in params["prune_sizes"]:
        log(f"  pruning {size:,} stale members")
        prunes.append(scale.measure_prune(size, params["prune_repeats"], conf.WINDOW))
    log(f"  memory per member, {params['memory_size']:,} members of each kind")
    memory = scale.measure_memory(params["memory_size"])
    return {"sizes": sizes, "prunes": prunes, "memory": memory}


def process_cpu(pid: int) -> float:
    """CPU seconds used so far by ``pid`` and its children (gunicorn workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def run_load(workdir: Path, redis_url: str, params: dict[str, Any]) -> dict[str, Any]:
    from benchmarks import example_setup, load
    from whos_online.conf import conf

    env = {
        "BENCH_DB": str(workdir / "example.sqlite3"),
        "REDIS_URL": redis_url,
        "DJANGO_SETTINGS_MODULE": "benchmarks.example_settings",
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'example_project'}",
    }
    subprocess.run(
        [sys.executable, "-m", "benchmarks.example_setup", str(LOAD_READERS)],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )
    users = ["alice", "bob", "carol"] + [
        f"{example_setup.USER_PREFIX}{i}" for i in range(1, LOAD_READERS + 1)
    ]
    password = "whos-online"
    # A server of its own for each population, so no phase runs on a process
    # that another population's phases have just worked (and grown).
    middleware = {"without": "0", "with": "1", "with-noguard": "1"}
    ports = {name: servers.free_port() for name in middleware}
    with contextlib.ExitStack() as stack:
        pids = {
            name: stack.enter_context(
                servers.gunicorn(
                    ROOT,
                    ports[name],
                    {**env, "BENCH_WHOS_ONLINE_MIDDLEWARE": middleware[name]},
                    GUNICORN_WORKERS,
                    GUNICORN_THREADS,
                    workdir / f"gunicorn-{name}.log",
                )
            ).pid
            for name in middleware
        }
        populations = {
            "without": load.make_clients(
                ports["without"], users, LOAD_GUESTS, password, 0
            ),
            "with": load.make_clients(ports["with"], users, LOAD_GUESTS, password, 100),
            "with-noguard": load.make_clients(
                ports["with-noguard"],
                users,
                LOAD_GUESTS,
                password,
                200,
                drop_cookie=conf.GUARD_COOKIE_NAME,
            ),
        }
        for name, clients in populations.items():
            log(f"  {name}: {len(clients)} clients log in")
            load.log_in_all(clients)
            load.phase(clients, min(3.0, params["load_seconds"]), record=False)
        phases: dict[str, list[dict[str, Any]]] = {name: [] for name in populations}
        pooled: dict[str, list[float]] = {name: [] for name in populations}
        names = list(populations)
        for round_ in range(params["load_rounds"]):
            order = names if round_ % 2 == 0 else names[::-1]
            for name in order:
                cpu = process_cpu(pids[name])
                result = load.phase(populations[name], params["load_seconds"])
                server_cpu = process_cpu(pids[name]) - cpu
                log(
                    f"  round {round_ + 1} {name}: {result.rps:.0f} req/s, "
                    f"{result.errors} errors"
                )
                pooled[name].extend(result.latencies)
                phases[name].append(
                    {
                        "seconds": result.seconds,
                        "requests": result.requests,
                        "errors": result.errors,
                        "generator_cpu": result.generator_cpu,
                        "server_cpu": server_cpu,
                        **percentiles(result.latencies),
                    }
                )
        for clients in populations.values():
            for client in clients:
                client.close()
    return {
        "phases": phases,
        "latency": {name: percentiles(values) for name, values in pooled.items()},
        "clients": {"users": len(users), "guests": LOAD_GUESTS},
        "gunicorn": {"workers": GUNICORN_WORKERS, "threads": GUNICORN_THREADS},
        "pages": load.PAGES,
    }


def percentiles(latencies: list[float]) -> dict[str, float]:
    """p50, p90 and p99 in milliseconds."""
    if not latencies:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0}
    ordered = sorted(latencies)

    def at(q: float) -> float:
        return ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000

    return {"p50": at(0.50), "p90": at(0.90), "p99": at(0.99)}


def versions(redis_url: str) -> dict[str, str]:
    from importlib.metadata import version

    import django
    from redis import Redis

    info = Redis.from_url(redis_url).info("server")
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "whos_online"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit
        + (" (with uncommitted changes to whos_online/)" if dirty else ""),
        "cpus": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "django": django.get_version(),
        "redis_server": str(info.get("redis_version", "?")),
        "redis_py": version("redis"),
        "django_redis": version("django-redis"),
        "gunicorn": version("gunicorn"),
        "django_online_users": version("django-online-users"),
        "platform": platform.platform(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    parser.add_argument(
        "--out",
        type=Path,
        default=DOCS,
        help="where to write (the default also updates the README's headline)",
    )
    parser.add_argument(
        "--skip-load", action="store_true", help="no gunicorn load test"
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        help="only rewrite the report and charts from a results.json",
    )
    args = parser.parse_args()
    if args.from_json:
        from benchmarks import report

        report.write(json.loads(args.from_json.read_text()), args.out)
        if args.out.resolve() == DOCS.resolve():
            quote_headline_in_readme()
        return 0
    params = QUICK if args.quick else FULL
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="whos-online-bench-", dir=_scratch_root()))
    try:
        with servers.redis_server(workdir) as redis_url:
            log(f"private redis-server at {redis_url}; scratch in {workdir}")
            setup_django(workdir, redis_url)
            log("per-request cost of each middleware (interleaved rounds)")
            per_request = run_per_request(params)
            per_request_pg = run_per_request_postgres(workdir, redis_url, params)
            log("scaling with the number online")
            scaled = run_scale(params, args.quick)
            loaded = None
            if not args.skip_load:
                log("load test: the example project under gunicorn")
                loaded = run_load(workdir, redis_url, params)
            environment = versions(redis_url)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    from benchmarks import report

    command = (
        ".venv/bin/python benchmarks/run.py --quick"
        if args.quick
        else "make bench  # = .venv/bin/pip install -r requirements/bench.txt "
        "&& .venv/bin/python benchmarks/run.py"
    )
    results = {
        "mode": "quick" if args.quick else "full",
        "command": command,
        "params": params,
        "environment": environment,
        "per_request": asdict(per_request),
        "per_request_postgres": per_request_pg,
        "scale": {
            key: [asdict(item) for item in value] for key, value in scaled.items()
        },
        "load": loaded,
        "minutes": (time.monotonic() - started) / 60,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    report.write(results, args.out)
    if args.out.resolve() == DOCS.resolve():
        quote_headline_in_readme()
    log(f"wrote {args.out / 'README.md'} in {results['minutes']:.1f} minutes")
    return 0


def quote_headline_in_readme() -> None:
    """Put the new headline table in the README, between its markers."""
    readme = ROOT / "README.md"
    text = readme.read_text()
    start = text.index(HEADLINE_START) + len(HEADLINE_START)
    end = text.index(HEADLINE_END)
    headline = (DOCS / "headline.md").read_text()
    readme.write_text(text[:start] + "\n" + headline + text[end:])


def _scratch_root() -> str | None:
    """tmpfs when there is one: SQLite's fsyncs then cost no disk time, which
    favours the database-backed alternative, not us."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


if __name__ == "__main__":
    sys.exit(main())
