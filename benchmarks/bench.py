"""What every figure is measured with: a private redis-server, requests
through ``WSGIHandler``, time inside Redis, and min/median/max."""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from wsgiref.util import setup_testing_defaults

ROOT = Path(__file__).resolve().parent.parent
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}] {message}", flush=True)


def spread(values: list[float]) -> dict[str, float]:
    return {
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
        "n": len(values),
    }


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A redis-server of our own on a free loopback port, no persistence."""
    from tests.redis_servers import free_port

    port = free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1"]
    command += ["--save", "", "--appendonly", "no", "--dir", str(workdir)]
    command += ["--latency-tracking-info-percentiles", "50 99 100"]  # p100: max
    with (workdir / "redis.log").open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=out, start_new_session=True)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def save(
    results: dict[str, Any],
    out: Path,
    name: str,
    write: Callable[[dict[str, Any], Path], None],
) -> None:
    """A run's report, ``name``.md as ``write`` makes it, and its figures,
    ``name``.json (which ``--from-json`` reads back), in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    write(results, out)
    (out / f"{name}.json").write_text(json.dumps(results, indent=1) + "\n")
    log(f"wrote {out / (name + '.md')}")


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A run's scratch folder, on tmpfs where there is one (SQLite's fsyncs
    cost no disk time), removed after it, even when the run is stopped with
    SIGTERM (its servers' context managers stop them too); and as many open
    files as the run may have (a backlog of pages, thousands of streams)."""

    def stopped(number: int, frame: object) -> None:
        raise SystemExit(f"stopped by signal {number}")

    signal.signal(signal.SIGTERM, stopped)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    shm = Path("/dev/shm")
    where = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    workdir = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
    try:
        yield workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def sent() -> Iterator[Counter[str]]:
    """The commands this process sends to Redis meanwhile, by name: those a
    client sends alone and those of its pipelines (redis-py packs both);
    those of a transaction as ``queued NAME``."""
    from redis.connection import AbstractConnection

    counts: Counter[str] = Counter()
    send: Any = AbstractConnection.send_command
    pack: Any = AbstractConnection.pack_commands

    def name(args: Any) -> str:
        first = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
        return first.lower()

    def spy_send(self: Any, *args: Any, **kwargs: Any) -> None:
        counts[name(args)] += 1
        send(self, *args, **kwargs)

    def spy_pack(self: Any, commands: Any) -> Any:
        queued = False  # inside MULTI ... EXEC, which runs them as a script does
        for args in commands:
            cmd = name(args)
            queued = (queued or cmd == "multi") and cmd != "exec"
            counts[f"queued {cmd}" if queued and cmd != "multi" else cmd] += 1
        return pack(self, commands)

    AbstractConnection.send_command = spy_send  # type: ignore[method-assign]
    AbstractConnection.pack_commands = spy_pack  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        AbstractConnection.send_command = send  # type: ignore[method-assign]
        AbstractConnection.pack_commands = pack  # type: ignore[method-assign]


class Inside:
    """Time inside Redis from ``INFO commandstats`` after ``CONFIG
    RESETSTAT``: the µs Redis spent executing each command, those a script
    runs listed too (``cmdstat_zadd`` beside ``cmdstat_evalsha``). A
    script's µs already hold its own commands', so the total counts the
    commands the client sent: where a name was both sent and run by a
    script, the sent share of its µs. No SLOWLOG: logging each command costs
    Redis time of its own."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def cpu(self) -> float:
        info = self.client.info("cpu")
        return info["used_cpu_user_main_thread"] + info["used_cpu_sys_main_thread"]

    def once(self, fn: Callable[[], object]) -> dict[str, Any]:
        """``fn``'s one call: µs inside Redis, commands sent, wall seconds,
        Redis' main-thread CPU µs (its reading and writing included), the
        longest command (``p100`` of ``INFO latencystats``) and, per
        command name, calls and µs."""
        client = self.client
        client.config_resetstat()
        cpu = self.cpu()
        with sent() as names:
            began = time.perf_counter()
            fn()
            seconds = time.perf_counter() - began
        core = (self.cpu() - cpu) * 1e6
        stats = client.info("commandstats")
        longest = client.info("latencystats")
        per = {
            key[len("cmdstat_") :]: {"calls": v["calls"], "us": v["usec"]}
            for key, v in stats.items()
            if not key[len("cmdstat_") :].startswith(IGNORED)
        }
        us = sum(
            v["us"] * min(1, names[cmd.split("|")[0]] / v["calls"])
            for cmd, v in per.items()
        )
        blocks = [
            v["p100"]
            for key, v in longest.items()
            if not key[len("latency_percentiles_usec_") :].startswith(IGNORED)
        ]
        names = Counter({k: v for k, v in names.items() if not k.startswith(IGNORED)})
        return {
            "seconds": seconds,
            "us": us,
            "commands": sum(names.values()),
            "core_us": core,
            "longest_us": max(blocks, default=0.0),
            "per_command": per,
        }

    def measure(
        self, fn: Callable[[], object], n: int, before: Callable[[], object] | None
    ) -> dict[str, Any]:
        """Per call of ``fn`` (``n`` calls, ``before`` run first)."""
        if before:
            before()
        figures = self.once(lambda: [fn() for _ in range(n)])
        for key in ("us", "commands", "core_us"):
            figures[key] /= n
        for counts in figures["per_command"].values():
            counts["calls"] /= n
            counts["us"] /= n
        return figures


IGNORED = ("config", "info")


def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
    start_response.status = status  # type: ignore[attr-defined]
    start_response.headers = headers  # type: ignore[attr-defined]


class Site:
    """Django's ``WSGIHandler`` for a middleware list, called as a WSGI
    server calls it, with environs built before the clock starts."""

    def __init__(self, middleware: list[str]) -> None:
        from django.core.handlers.wsgi import WSGIHandler
        from django.test.utils import override_settings

        with override_settings(MIDDLEWARE=middleware):
            self.handler = WSGIHandler()

    def __call__(self, environ: dict[str, Any]) -> list[tuple[str, str]]:
        self.handler(environ, start_response).close()
        return start_response.headers  # type: ignore[attr-defined,no-any-return]

    def timed(self, environs: list[dict[str, Any]]) -> float:
        """The median µs of one request per environ, each timed alone."""
        clock, handler, times = time.perf_counter, self.handler, []
        for environ in environs:
            start = clock()
            handler(environ, start_response).close()
            times.append(clock() - start)
        return statistics.median(times) * 1e6


def beside(case: Site, base: Site, pairs: list[tuple[Any, Any]]) -> float:
    """Median µs a request through ``case`` takes over one through ``base``
    timed right beside it (each goes first half the time): a burst of noise
    from elsewhere on the machine hits both."""
    clock, added = time.perf_counter, []
    for i, (env, base_env) in enumerate(pairs):
        took = [0.0, 0.0]
        order = [(0, case, env), (1, base, base_env)]
        for at, site, this in order if i % 2 else order[::-1]:
            start = clock()
            site.handler(this, start_response).close()
            took[at] = clock() - start
        added.append(took[0] - took[1])
    return statistics.median(added) * 1e6


def environ(
    path: str, address: str, cookies: dict[str, str], post: bool = False, csrf: str = ""
) -> dict[str, Any]:
    env: dict[str, Any] = {
        "PATH_INFO": path,
        "REMOTE_ADDR": address,
        "HTTP_USER_AGENT": BROWSER,
        "REQUEST_METHOD": "POST" if post else "GET",
        "wsgi.input": io.BytesIO(),
    }
    if csrf:
        env["HTTP_X_CSRFTOKEN"] = csrf
    if cookies:
        env["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    setup_testing_defaults(env)
    return env


def cookies_set(headers: list[tuple[str, str]]) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    for name, value in headers:
        if name.lower() == "set-cookie":
            jar.load(value)
    return {name: morsel.value for name, morsel in jar.items() if morsel.value}


def described(software: list[str]) -> dict[str, str]:
    """What a report says of its run: when, on which commit (and whether
    whos_online/ was changed since), on what machine, with what software."""
    import platform
    from datetime import datetime, timezone

    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = [line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line]

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "whos_online")
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD")
        + (" (whos_online/ modified)" if dirty else ""),
        "machine": f"{os.cpu_count()} cores, {cpu[0] if cpu else '?'}, "
        + platform.platform(),
        "software": ", ".join(software),
    }
