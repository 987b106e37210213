"""What a run starts or creates, and stops or drops again whatever happens:
a private redis-server on a free loopback port (so no other data is touched
and nothing else competes for it), gunicorn serving the example project, and
a PostgreSQL database of the run's own. Processes run in process groups of
their own and are ended by their id."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.common import ROOT
from tests.redis_servers import free_port

POSTGRES = urlsplit(os.environ.get("BENCH_POSTGRES", "postgresql://postgres@127.0.0.1"))


@contextlib.contextmanager
def process(command: list[str], port: int, log: Path, **kw: Any) -> Iterator[int]:
    """Run ``command`` (found on PATH or beside this Python) until the block
    ends, once ``port`` answers; yields its process id."""
    found = shutil.which(command[0], path=f"{Path(sys.executable).parent}:{os.defpath}")
    if found is None:
        raise RuntimeError(f"{command[0]} is not installed")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [found, *command[1:]], start_new_session=True, stdout=out, stderr=out, **kw
        )
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"{command[0]} did not answer on {port}, see {log}")
        yield proc.pid
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, sig)
                proc.wait(timeout=10)
                break


@contextlib.contextmanager
def redis_server(workdir: Path, *extra: str) -> Iterator[str]:
    """A redis-server of our own, with no persistence; yields its URL."""
    port = free_port()
    options = ["--port", str(port), "--save", "", "--appendonly", "no"]
    options += ["--bind", "127.0.0.1", "--dir", str(workdir), *extra]
    with process(["redis-server", *options], port, workdir / f"redis-{port}.log"):
        yield f"redis://127.0.0.1:{port}/0"


@contextlib.contextmanager
def redis_cluster(workdir: Path, masters: int = 3) -> Iterator[list[str]]:
    """``masters`` redis-servers joined by ``redis-cli --cluster create``
    (equal runs of slots, no replicas); yields their URLs."""
    with contextlib.ExitStack() as stack:
        urls = []
        for n in range(masters):
            node = workdir / f"cluster-{n}"
            node.mkdir()
            options = ("--cluster-enabled", "yes", "--cluster-port", str(free_port()))
            urls.append(stack.enter_context(redis_server(node, *options)))
        create = ["redis-cli", "--cluster", "create", "--cluster-yes"]
        create += [url.removeprefix("redis://").removesuffix("/0") for url in urls]
        subprocess.run(create, check=True, capture_output=True, timeout=60)
        from redis import Redis

        for url in urls:
            with Redis.from_url(url) as client:
                while client.cluster("INFO")["cluster_state"] != "ok":
                    time.sleep(0.05)
        yield urls


@contextlib.contextmanager
def gunicorn(port: int, env: dict[str, str], log: Path) -> Iterator[int]:
    """One gunicorn worker with one thread serving the example project (see
    benchmarks/load.py for why one); yields its process id."""
    project = ROOT / "example_project"
    command = ["gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "1"]
    command += ["--worker-class", "gthread", "--threads", "1", "--keep-alive", "30"]
    command += ["--pythonpath", f"{ROOT},{project}", "--log-level", "warning"]
    command += ["example_project.wsgi:application"]
    with process(command, port, log, cwd=project, env=os.environ | env) as pid:
        yield pid


def postgres() -> dict[str, Any]:
    """How to reach the PostgreSQL server ``BENCH_POSTGRES`` names."""
    url = POSTGRES
    names = {"host": url.hostname, "port": url.port or 5432, "user": url.username}
    return names | {"password": url.password}


def postgres_missing() -> str | None:
    """Why PostgreSQL cannot be used here, or ``None`` if it can."""
    try:
        import psycopg

        psycopg.connect(dbname="postgres", connect_timeout=2, **postgres()).close()
    except ImportError:
        return "psycopg is not installed (requirements/bench.txt installs it)"
    except psycopg.Error as exc:
        return f"no PostgreSQL server answered at {POSTGRES.netloc} ({exc})"
    return None


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A database of this run's own, dropped afterwards."""
    import psycopg

    name = f"whos_online_bench_{os.getpid()}"
    with psycopg.connect(dbname="postgres", autocommit=True, **postgres()) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
