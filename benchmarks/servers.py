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

POSTGRES = os.environ.get("BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def process(command: list[str], port: int, log: Path, **kw: Any) -> Iterator[int]:
    """Run ``command`` until the block ends; wait for ``port`` to answer."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, start_new_session=True, stdout=out, stderr=out, **kw
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{command[0]} exited, see {log}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]}: nothing listens on {port}")
            time.sleep(0.05)
        yield proc.pid
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
                break


def which(name: str, hint: str) -> str:
    found = shutil.which(name, path=f"{Path(sys.executable).parent}:{os.defpath}")
    if found is None:
        raise RuntimeError(f"{name} is not installed ({hint})")
    return found


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A redis-server of our own, with no persistence; yields its URL."""
    port = free_port()
    binary = which("redis-server", "apt-get install redis-server")
    options = ["--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    options += ["--appendonly", "no", "--dir", str(workdir)]
    with process([binary, *options], port, workdir / "redis.log"):
        yield f"redis://127.0.0.1:{port}/0"


@contextlib.contextmanager
def gunicorn(port: int, env: dict[str, str], log: Path) -> Iterator[int]:
    """One gunicorn worker with one thread serving the example project (see
    benchmarks/load.py for why one); yields its process id."""
    binary = which("gunicorn", "pip install -r requirements/bench.txt")
    project = ROOT / "example_project"
    command = [binary, "--bind", f"127.0.0.1:{port}", "--workers", "1"]
    command += ["--worker-class", "gthread", "--threads", "1", "--keep-alive", "30"]
    command += ["--pythonpath", f"{ROOT},{project}", "--log-level", "warning"]
    command += ["example_project.wsgi:application"]
    environ = {**os.environ, **env}
    with process(command, port, log, cwd=project, env=environ) as pid:
        yield pid


def postgres() -> dict[str, Any]:
    url = urlsplit(POSTGRES)
    return {
        "host": url.hostname or "127.0.0.1",
        "port": url.port or 5432,
        "user": url.username or "postgres",
        "password": url.password or "",
    }


def postgres_missing() -> str | None:
    """Why PostgreSQL cannot be used here, or ``None`` if it can."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (requirements/bench.txt installs it)"
    try:
        psycopg.connect(dbname="postgres", connect_timeout=2, **postgres()).close()
    except psycopg.Error as exc:
        return f"no PostgreSQL server answered at {POSTGRES} ({type(exc).__name__})"
    return None


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A database of this run's own on ``BENCH_POSTGRES``, dropped after."""
    import psycopg

    name = f"whos_online_bench_{os.getpid()}"
    with psycopg.connect(dbname="postgres", autocommit=True, **postgres()) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
