"""Issue 36's live run: N open streams (``whos-online/stream/``) on one
uvicorn worker serving the example project, against the same N tabs
polling the widget every 30 s; writes docs/benchmarks/streams.md and
streams.json.

    .venv/bin/python benchmarks/streams.py                     # make bench-streams
    .venv/bin/python benchmarks/streams.py --streams 1000,10000
    .venv/bin/python benchmarks/streams.py --quick --out DIR   # make bench-smoke

It starts a redis-server of its own on a free loopback port, and for each
round a fresh uvicorn (one worker, ``benchmarks/load_settings.py``'s site,
a SQLite file in a scratch folder) on another. Each round:

1. the worker is warmed up (a page, a stream opened and closed, the widget
   fragment), and its RSS read from /proc;
2. N clients open a stream each (raw HTTP/1.1 on a connection of their own,
   as visitors who are not logged in: they share one rendering of each
   change) and read its first event; the RSS again: (after - before) / N is
   the memory of an open stream;
3. a quiet window: the worker's CPU with every stream open and nothing
   happening (keep-alives only);
4. joins, one at a time: this process records a new guest through the
   store (as the middleware does for a page), and waits until every client
   has had the event it causes; from the record to each client's event is
   a delay (p50/p99 over all clients and joins); the worker's CPU over the
   joins (from /proc/PID/stat) divided by them is its CPU per join event;
5. the streams closed, N tabs polling: the widget fragment
   (``whos-online/widget/``) requested at N / 30 a second, open-loop, for a
   few seconds: the worker's CPU a request and the requests a second that
   N polling tabs send, which the streams save.

The clients run in this process, on the same two cores as the worker and
Redis: their reading is part of the delay measured. With ``--pinned`` the
worker has a core of its own, as in a deployment where the readers are
elsewhere, and the clients and Redis share the others.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench import ROOT, described, log, redis_server, save, scratch  # noqa: E402
from benchmarks.load_client import percentile  # noqa: E402

DOCS = ROOT / "docs" / "benchmarks"
STREAM = "/whos-online/stream/"
FRAGMENT = "/whos-online/widget/"
POLL_SECONDS = 30  # how often a tab that cannot stream asks
FULL: dict[str, Any] = {
    "streams": [1_000],
    "rounds": 3,
    "joins": 10,
    "quiet": 5,
    "poll": 10,
}
QUICK: dict[str, Any] = {
    "streams": [50],
    "rounds": 1,
    "joins": 3,
    "quiet": 1,
    "poll": 2,
}
# uvicorn's event loop and HTTP parser, named: it would take uvloop and
# httptools by itself wherever they are installed.
SERVERS = {
    False: ["--loop", "asyncio", "--http", "h11"],
    True: ["--loop", "uvloop", "--http", "httptools"],
}
# Streams being opened at once: a burst of page loads, not a SYN flood.
OPENING = 100
# Seconds a join's event may take to reach every client before the round
# counts the rest as missed.
DEADLINE = 30.0
# The one visitor whose tabs the streams are (the load generator stands for
# the site's one proxy, which sends it in X-Forwarded-For).
VISITOR = "192.0.2.1"


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process, its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status(pid: int) -> dict[str, int]:
    """The resident memory (bytes) and threads of a process."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == "VmRSS":
            found["rss"] = int(value.split()[0]) * 1024
        elif name == "Threads":
            found["threads"] = int(value)
    return found


class Server(NamedTuple):
    port: int
    pid: int
    log: Path


@contextlib.contextmanager
def uvicorn(
    env: dict[str, str], workdir: Path, n: int, standard: bool, core: int | None
) -> Iterator[Server]:
    """One uvicorn worker (no supervisor: the process is the worker) serving
    the example project through its asgi.py: on asyncio's loop and h11, or,
    ``standard``, on what ``uvicorn[standard]`` installs (uvloop, httptools);
    on ``core`` alone if one is given."""
    from tests.redis_servers import free_port

    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "example_project.asgi:application"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    command += ["--app-dir", str(ROOT / "example_project"), "--no-access-log"]
    command += ["--log-level", "warning", "--backlog", "4096"]
    command += SERVERS[standard]
    log_path = workdir / f"uvicorn-{n}.log"
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
        yield Server(port, proc.pid, log_path)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def pin(core: int) -> None:
    os.sched_setaffinity(0, {core})


def request(port: int, path: str, address: str, close: bool = False) -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += ["User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0"]
    lines += ["Accept: text/event-stream" if path == STREAM else "Accept: */*"]
    lines += ["Accept-Language: en-US,en;q=0.9", f"X-Forwarded-For: {address}"]
    lines += ["Connection: close"] if close else []
    return "\r\n".join([*lines, "", ""]).encode()


async def get(port: int, path: str, address: str = VISITOR) -> int:
    """One request on a connection of its own: the status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request(port, path, address, close=True))
        head = await reader.readuntil(b"\r\n\r\n")
        await reader.read()
    finally:
        writer.close()
    return int(head.split()[1])


@dataclass
class Join:
    """One recorded guest: when, and the clients that had its event."""

    number: int
    at: float
    delays: list[float] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Clients:
    """The open streams; each hands the join under way its event's delay."""

    n: int
    opened: int = 0
    failed: int = 0
    ended: int = 0  # streams the server closed (dropped, or Redis lost)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    join: Join | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def client(self, port: int, address: str, gate: asyncio.Semaphore) -> None:
        seen = 0  # the last join this client had an event of
        try:
            async with gate:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(request(port, STREAM, address))
                head = await reader.readuntil(b"\r\n\r\n")
                if int(head.split()[1]) != 200:
                    raise ValueError(head.split(b"\r\n")[0].decode())
                while b"id: " not in await reader.readuntil(b"\n\n"):
                    pass
        except (OSError, ValueError, asyncio.IncompleteReadError):
            self.failed += 1
            self.count()
            return
        self.count()
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    self.ended += 1
                    self.check()
                    return
                join = self.join
                if join is not None and seen < join.number and b"id: " in chunk:
                    seen = join.number
                    join.delays.append(time.perf_counter() - join.at)
                    self.check()
        finally:
            writer.close()

    def check(self) -> None:
        """The join under way is done when every stream still open had it."""
        join = self.join
        if join is not None and len(join.delays) >= self.opened - self.ended:
            join.done.set()

    def count(self) -> None:
        self.opened += 1
        if self.opened == self.n:
            self.opened -= self.failed
            self.ready.set()


async def open_streams(port: int, n: int, new_guests: bool) -> Clients:
    """N streams, as tabs of one visitor already counted (a stream opening
    announces nothing), or, ``new_guests``, each of a visitor of its own
    address whom it counts as they open: N joins at once."""
    clients = Clients(n)
    gate = asyncio.Semaphore(OPENING)
    for i in range(n):
        address = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
        address = address if new_guests else VISITOR
        clients.tasks.append(asyncio.create_task(clients.client(port, address, gate)))
    await clients.ready.wait()
    return clients


def record_guest(member: str) -> None:
    from whos_online.store import Sighting, get_store

    if get_store().record(Sighting("guests", member, "", "", None)) is None:
        raise SystemExit("the store did not record the guest")


async def poll(port: int, n: int, seconds: float) -> dict[str, Any]:
    """N tabs polling the fragment every 30 s, open-loop for ``seconds``:
    N / 30 requests a second sent at fixed times."""
    loop = asyncio.get_running_loop()
    rate = n / POLL_SECONDS
    count = max(1, round(rate * seconds))
    start, latencies, errors = loop.time() + 0.05, [], 0

    async def one(i: int, due: float) -> None:
        nonlocal errors
        try:
            address = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
            code = await asyncio.wait_for(get(port, FRAGMENT, address), 60)
        except (OSError, ValueError, asyncio.TimeoutError):
            errors += 1
            return
        if code != 200:
            errors += 1
        else:
            latencies.append((loop.time() - due) * 1e3)

    tasks = []
    for i in range(count):
        due = start + i / rate
        if (delay := due - loop.time()) > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i % n, due)))
    await asyncio.gather(*tasks)
    return {"requests": count, "rate": rate, "errors": errors, "latencies": latencies}


async def one_round(
    server: Server, n: int, params: dict[str, Any], tag: str
) -> dict[str, Any]:
    pid = server.pid
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
    for task in warm.tasks:
        task.cancel()
    await asyncio.gather(*warm.tasks, return_exceptions=True)
    for _ in range(3):
        await get(server.port, FRAGMENT)
    await asyncio.sleep(1)
    before = status(pid)

    began = time.perf_counter()
    clients = await open_streams(server.port, n, params["new_guests"])
    opening = time.perf_counter() - began
    await asyncio.sleep(1)
    after = status(pid)

    cpu = cpu_seconds(pid)
    await asyncio.sleep(params["quiet"])
    quiet_cpu = (cpu_seconds(pid) - cpu) / params["quiet"]

    delays: list[float] = []
    missed = 0
    cpu, began = cpu_seconds(pid), time.perf_counter()
    for j in range(1, params["joins"] + 1):
        join = clients.join = Join(j, time.perf_counter())
        await asyncio.to_thread(record_guest, f"bench-{tag}-{j}")
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(join.done.wait(), DEADLINE)
        delays += join.delays
        missed += clients.opened - clients.ended - len(join.delays)
        await asyncio.sleep(0.5)  # past the streams' 250 ms between events
    joins_cpu = cpu_seconds(pid) - cpu
    joins_seconds = time.perf_counter() - began
    for task in clients.tasks:
        task.cancel()
    await asyncio.gather(*clients.tasks, return_exceptions=True)
    await asyncio.sleep(1)

    cpu = cpu_seconds(pid)
    polled = await poll(server.port, n, params["poll"])
    poll_cpu = cpu_seconds(pid) - cpu
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
            for n in params["streams"]:
                with uvicorn(env, workdir, n, params["standard"], core) as server:
                    figures = asyncio.run(one_round(server, n, params, f"{n}-{r}"))
                rounds.setdefault(str(n), []).append(figures)
                log(
                    f"round {r + 1}/{params['rounds']}, {n} streams: {summary(figures)}"
                )
        errors = {
            path.name: path.read_text(errors="replace")[-2000:]
            for path in workdir.glob("uvicorn-*.log")
            if "Traceback" in path.read_text(errors="replace")
        }
    return {"rounds": rounds, "server_errors": errors}


def summary(f: dict[str, Any]) -> str:
    return (
        f"{f['opened']} open ({f['failed']} failed, {f['ended']} ended) "
        f"in {f['opening_s']:.1f} s, "
        f"{f['kb_per_stream']:.1f} KiB each, {f['threads_after']} threads; "
        f"{f['cpu_ms_per_join']:.1f} ms CPU a join, delay p50 "
        f"{f['delay_p50_ms'] or 0:.0f} ms p99 {f['delay_p99_ms'] or 0:.0f} ms, "
        f"missed {f['events_missed']}; polling "
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
    software += [f"uvicorn {version('uvicorn')} (one worker, {server})"]
    return described(software)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 streams, one round")
    parser.add_argument("--out", type=Path, default=DOCS, help="where to write")
    parser.add_argument("--streams", help="open streams, e.g. 1000,10000")
    parser.add_argument("--rounds", type=int, help="rounds of each N")
    parser.add_argument("--joins", type=int, help="joins a round")
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
