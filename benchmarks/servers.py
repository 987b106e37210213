"""The processes a benchmark run starts, and stops again whatever happens.

A private redis-server on a free loopback port (so no other data is touched
and nothing else competes for it), and gunicorn serving the example project.
Each runs in a process group of its own and is ended by its id.
"""

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
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"process {process.args!r} exited with {process.returncode}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout}s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL it if it lingers."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A redis-server of our own, with no persistence; yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError(
            "redis-server is not installed (apt-get install redis-server)"
        )
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--save", "",
            "--appendonly", "no",
            "--dir", str(workdir),
            "--logfile", str(workdir / "redis.log"),
        ],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_port(port, process, timeout=10)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


@contextmanager
def gunicorn(
    root: Path, port: int, env: dict[str, str], workers: int, threads: int, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """gunicorn serving example_project.wsgi on 127.0.0.1:port."""
    binary = shutil.which("gunicorn", path=str(Path(sys.executable).parent))
    if binary is None:
        raise RuntimeError(
            "gunicorn is not installed (pip install -r requirements/bench.txt)"
        )
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                "--bind", f"127.0.0.1:{port}",
                "--workers", str(workers),
                "--worker-class", "gthread",
                "--threads", str(threads),
                "--keep-alive", "30",
                "--pythonpath", f"{root},{root / 'example_project'}",
                "--log-level", "warning",
                "example_project.wsgi:application",
            ],
            cwd=root / "example_project",
            env={**os.environ, **env},
            start_new_session=True,
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for_port(port, process, timeout=60)
        yield process
    finally:
        stop(process)
