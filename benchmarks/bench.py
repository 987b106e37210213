"""What every figure is measured with: a private redis-server, requests
through ``WSGIHandler``, time inside Redis, and min/median/max."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import statistics
import subprocess
import time
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


class Inside:
    """Time inside Redis: the commands a client sent, not those a script
    ran (SLOWLOG logs every command; a script's own have no client address);
    and the server's main-thread CPU, its reading and writing included."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def cpu(self) -> float:
        info = self.client.info("cpu")
        return info["used_cpu_user_main_thread"] + info["used_cpu_sys_main_thread"]

    def once(self, fn: Callable[[], object]) -> dict[str, float]:
        """µs inside Redis, Redis commands and wall seconds of ``fn``'s one
        call (the seconds of ``fn`` alone, not of reading the SLOWLOG)."""
        client = self.client
        client.config_set("slowlog-max-len", 1_000_000)
        client.config_set("slowlog-log-slower-than", 0)
        client.slowlog_reset()
        client.config_resetstat()
        began = time.perf_counter()
        fn()
        seconds = time.perf_counter() - began
        client.config_set("slowlog-log-slower-than", -1)
        sent = [e for e in client.slowlog_get(-1) if e["client_address"] != b"?:0"]
        sent = [e for e in sent if not e["command"].lower().startswith(IGNORED)]
        zadd = client.info("commandstats").get("cmdstat_zadd", {})
        client.slowlog_reset()
        return {
            "seconds": seconds,
            "us": sum(e["duration"] for e in sent),
            "commands": len(sent),
            "zadd_usec_per_call": zadd.get("usec_per_call", 0),
        }

    def measure(
        self, fn: Callable[[], object], n: int, before: Callable[[], object] | None
    ) -> dict[str, float]:
        """Per call of ``fn`` (``n`` calls, ``before`` run first): µs inside
        Redis, commands sent; then, in a second pass without the SLOWLOG, µs
        of Redis' main thread."""
        if before:
            before()
        figures = self.once(lambda: [fn() for _ in range(n)])
        del figures["seconds"]  # the rounds' own time: the second pass is the core's
        figures["us"] /= n
        figures["commands"] /= n
        if before:
            before()
        start = self.cpu()
        for _ in range(n):
            fn()
        return figures | {"core_us": (self.cpu() - start) * 1e6 / n}


IGNORED = (b"slowlog", b"config", b"info")


def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
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
