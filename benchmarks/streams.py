"""Issue 36's live run: N open streams (``whos-online/stream/``) on one
uvicorn worker serving the example project (or on several, ``--workers``),
against the same N tabs polling the widget every 30 s; writes
docs/benchmarks/streams.md and streams.json.

    .venv/bin/python benchmarks/streams.py                     # make bench-streams
    .venv/bin/python benchmarks/streams.py --streams 1000,10000 --workers 1,2
    .venv/bin/python benchmarks/streams.py --quick --out DIR   # make bench-smoke

It starts a redis-server of its own on a free loopback port, and for each
round a fresh uvicorn (``benchmarks/load_settings.py``'s site, a SQLite
file in a scratch folder) on another. Each round:

1. the workers are warmed up (a page, a stream opened and closed, the
   widget fragment), and their RSS read from /proc;
2. N clients open a stream each (raw HTTP/1.1 on a connection of their own,
   as visitors who are not logged in: they share one rendering of each
   change) and read its first event; the RSS again: (after - before) / N is
   the memory of an open stream;
3. a quiet window: the workers' CPU with every stream open and nothing
   happening (keep-alives only);
4. joins, one at a time: this process records a new guest through the
   store (as the middleware does for a page), and waits until every client
   has had the event it causes; from the record to each client's event is
   a delay (p50/p99 over all clients and joins); the workers' CPU over the
   joins (from /proc/PID/stat) divided by them is the CPU per join event;
   each worker logs CPython's full garbage collections
   (``benchmarks/gc_log.py``), and those that began among the joins are
   counted, with how long each took;
5. the streams closed, N tabs polling: the widget fragment
   (``whos-online/widget/``) requested at N / 30 a second, open-loop, for a
   few seconds: the workers' CPU a request and the requests a second that
   N polling tabs send, which the streams save.

The clients run in this process, on the same two cores as the workers and
Redis: their reading is part of the delay measured, so once the streams are
open they are read from one epoll in plain Python, a few µs an event
(``benchmarks/streams_clients.py``). With ``--pinned`` the one worker has a
core of its own, as in a deployment where the readers are elsewhere, and
the clients and Redis share the others.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import gc_log  # noqa: E402
from benchmarks.bench import ROOT, described, log, redis_server, save, scratch  # noqa: E402
from benchmarks.load_client import percentile  # noqa: E402
from benchmarks.streams_clients import (  # noqa: E402
    FRAGMENT,
    get,
    open_streams,
    poll,
)

DOCS = ROOT / "docs" / "benchmarks"
FULL: dict[str, Any] = {
    "streams": [1_000],
    "rounds": 3,
    "joins": 10,
    "quiet": 5,
    "poll": 10,
    "workers": [1],
}
QUICK: dict[str, Any] = {
    "streams": [50],
    "rounds": 1,
    "joins": 3,
    "quiet": 1,
    "poll": 2,
    "workers": [1],
}
# uvicorn's event loop and HTTP parser, named: it would take uvloop and
# httptools by itself wherever they are installed.
SERVERS = {
    False: ["--loop", "asyncio", "--http", "h11"],
    True: ["--loop", "uvloop", "--http", "httptools"],
}
# Seconds a join's event may take to reach every client before the round
# counts the rest as missed.
DEADLINE = 30.0


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds of processes, their threads included."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def status(pids: list[int]) -> dict[str, int]:
    """The resident memory (bytes) and threads of processes, together."""
    found = {"rss": 0, "threads": 0}
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "VmRSS":
                found["rss"] += int(value.split()[0]) * 1024
            elif name == "Threads":
                found["threads"] += int(value)
    return found


class Server(NamedTuple):
    port: int
    pid: int
    log: Path
    workers: int
    gc_log: Path

    def worker_pids(self) -> list[int]:
        """The processes that serve: uvicorn itself with one worker, else
        the workers its supervisor spawned (once all have started)."""
        if self.workers == 1:
            return [self.pid]
        for _ in range(300):
            children = Path(f"/proc/{self.pid}/task/{self.pid}/children")
            pids = [int(pid) for pid in children.read_text().split()]
            spawned = [pid for pid in pids if b"spawn_main" in _cmdline(pid)]
            if len(spawned) == self.workers:
                return spawned
            time.sleep(0.1)
        raise SystemExit(f"uvicorn did not start {self.workers} workers")


def _cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


@contextlib.contextmanager
def uvicorn(
    env: dict[str, str],
    workdir: Path,
    n: int,
    params: dict[str, Any],
    workers: int,
    core: int | None,
) -> Iterator[Server]:
    """uvicorn serving the example project through its asgi.py, one worker
    (no supervisor: the process is the worker) or ``workers`` under its
    supervisor: on asyncio's loop and h11, or, ``params["standard"]``, on
    what ``uvicorn[standard]`` installs (uvloop, httptools); on ``core``
    alone if one is given. Each worker logs its full garbage collections."""
    from tests.redis_servers import free_port

    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "example_project.asgi:application"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    command += ["--app-dir", str(ROOT / "example_project"), "--no-access-log"]
    command += ["--log-level", "warning", "--backlog", "4096"]
    command += SERVERS[params["standard"]]
    log_path = workdir / f"uvicorn-{n}-{workers}.log"
    gc_log = workdir / f"gc-{n}-{workers}.log"
    env = env | {"BENCH_GC_LOG": str(gc_log)}
    with log_path.open("ab") as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=out,
            env=os.environ | env | {"PYTHONPATH": str(ROOT)},
            start_new_session=True,
            preexec_fn=None if core is None else partial(pin, core),
        )
    try:
        yield Server(port, proc.pid, log_path, workers, gc_log)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def pin(core: int) -> None:
    os.sched_setaffinity(0, {core})


def record_guest(member: str) -> None:
    from whos_online.store import Sighting, get_store

    if get_store().record(Sighting("guests", member, "", "", None)) is None:
        raise SystemExit("the store did not record the guest")


async def one_round(
    server: Server, n: int, params: dict[str, Any], tag: str
) -> dict[str, Any]:
    for _ in range(300):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if await get(server.port, "/about/") == 200:
                break
        await asyncio.sleep(0.1)
    else:
        raise SystemExit(f"uvicorn did not answer:\n{server.log.read_text()[-3000:]}")
    # Warm: a stream opened and closed, the fragment, so what is measured
    # next is what each more stream or request costs.
    warm = await open_streams(server.port, 1, False)
    warm.close()
    for _ in range(3):
        await get(server.port, FRAGMENT)
    await asyncio.sleep(1)
    pids = server.worker_pids()
    before = status(pids)

    began = time.perf_counter()
    clients = await open_streams(server.port, n, params["new_guests"])
    opening = time.perf_counter() - began
    await asyncio.sleep(1)
    after = status(pids)

    cpu = cpu_seconds(pids)
    await asyncio.sleep(params["quiet"])
    quiet_cpu = (cpu_seconds(pids) - cpu) / params["quiet"]

    delays: list[float] = []
    missed = 0
    cpu, began = cpu_seconds(pids), time.perf_counter()
    window = time.monotonic()
    for j in range(1, params["joins"] + 1):
        at = time.perf_counter()
        record_guest(f"bench-{tag}-{j}")
        heard = clients.hear(j, at, DEADLINE)
        delays += heard
        missed += len(clients.heard) - len(heard)
        await asyncio.sleep(0.5)  # past the streams' 250 ms between events
    joins_cpu = cpu_seconds(pids) - cpu
    collections = gc_log.between(server.gc_log, window, time.monotonic())
    joins_seconds = time.perf_counter() - began
    clients.close()
    await asyncio.sleep(1)

    cpu = cpu_seconds(pids)
    polled = await poll(server.port, n, params["poll"])
    poll_cpu = cpu_seconds(pids) - cpu
    return {
        "streams": n,
        "opened": clients.opened,
        "failed": clients.failed,
        "ended": clients.ended,
        "opening_s": opening,
        "rss_before_mb": before["rss"] / 2**20,
        "rss_after_mb": after["rss"] / 2**20,
        "kb_per_stream": (after["rss"] - before["rss"]) / max(1, clients.opened) / 1024,
        "threads_before": before["threads"],
        "threads_after": after["threads"],
        "quiet_cpu_ms_per_s": quiet_cpu * 1e3,
        "joins": params["joins"],
        "cpu_ms_per_join": joins_cpu / params["joins"] * 1e3,
        "cpu_ms_per_join_net": (joins_cpu - quiet_cpu * joins_seconds)
        / params["joins"]
        * 1e3,
        "delay_p50_ms": percentile(delays, 50) * 1e3 if delays else None,
        "delay_p99_ms": percentile(delays, 99) * 1e3 if delays else None,
        "delay_max_ms": max(delays) * 1e3 if delays else None,
        "full_collections": len(collections),
        "full_collection_ms": statistics.median(c.seconds for c in collections) * 1e3
        if collections
        else None,
        "events_missed": missed,
        "poll_rate": polled["rate"],
        "poll_requests": polled["requests"],
        "poll_errors": polled["errors"],
        "poll_p50_ms": percentile(polled["latencies"], 50)
        if polled["latencies"]
        else None,
        "poll_cpu_ms_per_request": poll_cpu / polled["requests"] * 1e3,
    }


def set_up(env: dict[str, str]) -> None:
    """The scratch database, and Django in this process for recording."""
    os.environ |= env
    sys.path.insert(0, str(ROOT / "example_project"))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run(params: dict[str, Any], workdir: Path) -> dict[str, Any]:
    core = None
    if params["pinned"]:  # the worker on a core of its own; the rest elsewhere
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < 2:
            raise SystemExit("--pinned needs two cores or more")
        core = cores[0]
        os.sched_setaffinity(0, cores[1:])  # Redis, started next, inherits it
    with redis_server(workdir) as redis_url:
        log(f"private redis-server at {redis_url}; scratch in {workdir}")
        env = {"REDIS_URL": redis_url, "DEMO_DB_PATH": str(workdir / "db.sqlite3")}
        env |= {"DJANGO_SETTINGS_MODULE": "benchmarks.load_settings"}
        env |= {"LOAD_CASE": "app"}
        set_up(env)
        rounds: dict[str, list[dict[str, Any]]] = {}
        for r in range(params["rounds"]):
            for n, workers in itertools.product(params["streams"], params["workers"]):
                with uvicorn(env, workdir, n, params, workers, core) as server:
                    tag = f"{n}-{workers}-{r}"
                    figures = asyncio.run(one_round(server, n, params, tag))
                rounds.setdefault(column(n, workers), []).append(figures)
                log(
                    f"round {r + 1}/{params['rounds']}, {n} streams on {workers} "
                    f"worker(s): {summary(figures)}"
                )
        errors = {
            path.name: path.read_text(errors="replace")[-2000:]
            for path in workdir.glob("uvicorn-*.log")
            if "Traceback" in path.read_text(errors="replace")
        }
    return {"rounds": rounds, "server_errors": errors}


def column(n: int, workers: int) -> str:
    """A column of the report: N streams, on one worker or ``N@workers``."""
    return str(n) if workers == 1 else f"{n}@{workers}"


def summary(f: dict[str, Any]) -> str:
    return (
        f"{f['opened']} open ({f['failed']} failed, {f['ended']} ended) "
        f"in {f['opening_s']:.1f} s, "
        f"{f['kb_per_stream']:.1f} KiB each, {f['threads_after']} threads; "
        f"{f['cpu_ms_per_join']:.1f} ms CPU a join, delay p50 "
        f"{f['delay_p50_ms'] or 0:.0f} ms p99 {f['delay_p99_ms'] or 0:.0f} ms, "
        f"missed {f['events_missed']}, {f['full_collections']} full collections; "
        "polling "
        f"{f['poll_cpu_ms_per_request']:.2f} ms CPU a request"
    )


def environment(standard: bool) -> dict[str, str]:
    import platform
    from importlib.metadata import version

    import django

    redis = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True
    )
    server = next((w[2:] for w in redis.stdout.split() if w.startswith("v=")), "?")
    software = [f"Python {platform.python_version()}", f"Django {django.get_version()}"]
    software += [f"Redis {server}", f"redis-py {version('redis')}"]
    if standard:
        server = f"uvloop {version('uvloop')}, httptools {version('httptools')}"
    else:
        server = "h11, asyncio loop"
    software += [f"uvicorn {version('uvicorn')} ({server})"]
    return described(software)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 streams, one round")
    parser.add_argument("--out", type=Path, default=DOCS, help="where to write")
    parser.add_argument("--streams", help="open streams, e.g. 1000,10000")
    parser.add_argument("--rounds", type=int, help="rounds of each N")
    parser.add_argument("--joins", type=int, help="joins a round")
    parser.add_argument("--workers", help="uvicorn workers, e.g. 1,2 (default 1)")
    parser.add_argument(
        "--new-guests",
        action="store_true",
        help="each stream a visitor of its own, counted as it opens",
    )
    parser.add_argument(
        "--standard",
        action="store_true",
        help="uvicorn on uvloop and httptools, as uvicorn[standard] installs",
    )
    parser.add_argument(
        "--pinned",
        action="store_true",
        help="the worker on a core of its own, the clients and Redis on the others",
    )
    parser.add_argument("--from-json", type=Path, help="only write the report again")
    args = parser.parse_args()
    params = QUICK if args.quick else FULL
    if args.streams:
        params = params | {"streams": [int(n) for n in args.streams.split(",")]}
    for name in ("rounds", "joins"):
        if getattr(args, name) is not None:
            params = params | {name: getattr(args, name)}
    params = params | {"new_guests": args.new_guests, "standard": args.standard}
    params = params | {"pinned": args.pinned}
    if args.workers:
        params = params | {"workers": [int(w) for w in args.workers.split(",")]}
    if args.from_json:
        results = json.loads(args.from_json.read_text())
    else:
        started = time.monotonic()
        with scratch("whos-online-streams-") as workdir:
            # A socket a stream here, and one in the worker (which inherits
            # the limit scratch raised).
            files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            if max(params["streams"]) + 100 > files:
                raise SystemExit(
                    f"{max(params['streams'])} streams: over {files} files"
                )
            results = run(params, workdir)
        results |= {"mode": "quick" if args.quick else "full", "params": params}
        results["environment"] = environment(params["standard"])
        results["minutes"] = (time.monotonic() - started) / 60
        results["command"] = "benchmarks/streams.py " + " ".join(sys.argv[1:])
    from benchmarks import streams_report

    save(results, args.out, "streams", streams_report.write)


if __name__ == "__main__":
    main()
