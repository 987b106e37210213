"""The example project under gunicorn, with and without the middleware.

Three servers run at once, each one gunicorn worker with one thread: a
keep-alive connection stays with the worker that accepted it, so with
several workers the split of clients between them is luck (runs swung
between 160 and 340 req/s), and threads add GIL switching. One serves the
project without ``WhosOnlineMiddleware``, one with it, one with it for
clients that drop the guard cookie (every request records); each population
has a server of its own, so no phase runs on a process that another
population's phases have just worked.

Each client holds one keep-alive connection from a loopback address of its
own (127.0.x.y, so each guest is a different guest), keeps every cookie the
server sets, as a browser does, logs in through the login form (CSRF token
and all) or stays a guest, then requests page after page without pause
until the phase ends. Everything is sent to 127.0.0.1; every loop is bounded
by a deadline.

    python -m benchmarks.load prepare N

migrates the example project's database and creates the demo users and N
readers (run.py runs it with the servers' environment).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from benchmarks import servers
from benchmarks.common import ROOT, log, percentile

BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
CSRF_INPUT = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
PASSWORD = "whos-online"  # the demo users' password
READERS, GUESTS = 9, 8
# What a reader of the demo forum opens, with weights.
PAGES = [("/", 30), ("/forum/", 25), ("/forum/1/", 8), ("/forum/2/", 8)]
PAGES += [("/forum/3/", 5), ("/forum/4/", 4), ("/about/", 10), ("/members/", 10)]
# Population: (whether the server has the middleware, whether clients drop
# the guard cookie).
POPULATIONS = {"without": ("0", False), "with": ("1", False)}
POPULATIONS["with-noguard"] = ("1", True)


@dataclass
class Client:
    port: int
    source: str
    username: str | None  # None: a guest
    drop: str  # a cookie never kept ("": keep all)
    seed: int
    cookies: dict[str, str] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(
        self, path: str, form: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        headers = {"Host": f"127.0.0.1:{self.port}", "User-Agent": BROWSER}
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None if form is None else urllib.parse.urlencode(form).encode()
        if body:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=30, source_address=(self.source, 0)
                )
            try:
                self.conn.request("POST" if body else "GET", path, body, headers)
                response = self.conn.getresponse()
                data = response.read()
            except (http.client.HTTPException, ConnectionError):
                self.close()  # the server closed an idle connection: once more
                if attempt:
                    raise
                continue
            for header in response.headers.get_all("Set-Cookie") or []:
                jar: SimpleCookie = SimpleCookie(header)
                for name, morsel in jar.items():
                    if morsel["max-age"] == "0" or not morsel.value:
                        self.cookies.pop(name, None)
                    elif name != self.drop:
                        self.cookies[name] = morsel.coded_value
            return response.status, data
        raise AssertionError("unreachable")

    def log_in(self) -> None:
        if self.username is None:
            status, expected = self.request("/")[0], 200
        else:
            _, page = self.request("/accounts/login/")
            token = CSRF_INPUT.search(page)
            assert token, "the login page has no CSRF token"
            form = {"csrfmiddlewaretoken": token.group(1).decode(), "next": "/"}
            form |= {"username": self.username, "password": PASSWORD}
            status, expected = self.request("/accounts/login/", form)[0], 302
        if status != expected:
            raise RuntimeError(f"logging in as {self.username} answered {status}")

    def browse(self, deadline: float, record: bool) -> None:
        rng = random.Random(self.seed)
        paths, weights = zip(*PAGES, strict=True)
        while (start := time.perf_counter()) < deadline:
            try:
                status, _ = self.request(rng.choices(paths, weights)[0])
            except (OSError, http.client.HTTPException):
                status = 0
            end = time.perf_counter()
            if end > deadline:
                return  # finished after the bell: not counted
            if status != 200:
                self.errors += 1
            elif record:
                self.latencies.append(end - start)


def in_threads(clients: list[Client], work: Callable[[Client], None]) -> None:
    errors: list[BaseException] = []

    def guarded(client: Client) -> None:
        try:
            work(client)
        except BaseException as exc:  # reported below, in the main thread
            errors.append(exc)

    threads = [
        threading.Thread(target=guarded, args=(c,), daemon=True) for c in clients
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if errors:
        raise RuntimeError(f"{len(errors)} clients failed, first: {errors[0]!r}")


def phase(clients: list[Client], seconds: float, record: bool = True) -> dict[str, Any]:
    """All clients browse for ``seconds``; what completed in that time."""
    for client in clients:
        client.latencies, client.errors = [], 0
    cpu = time.process_time()
    deadline = time.perf_counter() + seconds
    in_threads(clients, lambda client: client.browse(deadline, record))
    return {
        "seconds": seconds,
        "latencies": [x for client in clients for x in client.latencies],
        "errors": sum(client.errors for client in clients),
        "generator_cpu": time.process_time() - cpu,
    }


def process_cpu(pid: int) -> float:
    """CPU seconds used so far by ``pid`` and its children (the worker)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(entry.name) == pid or int(fields[1]) == pid:
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def latency(values: list[float]) -> dict[str, float]:
    """p50, p90 and p99 in milliseconds."""
    return {f"p{q}": percentile(values, q) * 1000 for q in (50, 90, 99)}


def run(workdir: Path, redis_url: str, rounds: int, seconds: float) -> dict[str, Any]:
    from benchmarks import app

    env = {
        "BENCH_DB": str(workdir / "example.sqlite3"),
        "REDIS_URL": redis_url,
        "DJANGO_SETTINGS_MODULE": "benchmarks.example_settings",
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'example_project'}",
    }
    command = [sys.executable, "-m", "benchmarks.load", "prepare", str(READERS)]
    subprocess.run(command, cwd=ROOT, env={**os.environ, **env}, check=True)
    users = ["alice", "bob", "carol", *(f"reader{i}" for i in range(1, READERS + 1))]
    with contextlib.ExitStack() as stack:
        pids, clients = {}, {}
        for n, (name, (middleware, drops)) in enumerate(POPULATIONS.items()):
            port = servers.free_port()
            server_env = {**env, "BENCH_WHOS_ONLINE_MIDDLEWARE": middleware}
            log_file = workdir / f"gunicorn-{name}.log"
            pids[name] = stack.enter_context(
                servers.gunicorn(port, server_env, log_file)
            )
            drop = app.guard_cookie() if drops else ""
            clients[name] = [
                Client(port, f"127.0.{h // 250 % 250}.{h % 250 + 2}", user, drop, h)
                for h, user in enumerate([*users, *[None] * GUESTS], start=100 * n + 1)
            ]
            stack.callback(lambda cs=clients[name]: [c.close() for c in cs])
            log(f"  {name}: {len(clients[name])} clients log in")
            in_threads(clients[name], Client.log_in)
            phase(clients[name], min(3.0, seconds), record=False)
        phases: dict[str, list[dict[str, Any]]] = {name: [] for name in POPULATIONS}
        pooled: dict[str, list[float]] = {name: [] for name in POPULATIONS}
        for round_ in range(rounds):
            for name in list(POPULATIONS)[:: 1 if round_ % 2 == 0 else -1]:
                cpu = process_cpu(pids[name])
                result = phase(clients[name], seconds)
                latencies = result.pop("latencies")
                result |= {"requests": len(latencies), **latency(latencies)}
                result["server_cpu"] = process_cpu(pids[name]) - cpu
                log(
                    f"  round {round_ + 1} {name}: {len(latencies) / seconds:.0f} req/s"
                )
                pooled[name] += latencies
                phases[name].append(result)
    return {
        "phases": phases,
        "latency": {name: latency(values) for name, values in pooled.items()},
        "clients": {"users": len(users), "guests": GUESTS},
        "gunicorn": {"workers": 1, "threads": 1},
        "pages": PAGES,
    }


def prepare(readers: int) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("create_demo_users", verbosity=0)
    model = get_user_model()
    for i in range(1, readers + 1):
        user, created = model._default_manager.get_or_create(username=f"reader{i}")
        if created:
            user.set_password(PASSWORD)
            user.save()


if __name__ == "__main__" and sys.argv[1:2] == ["prepare"]:
    prepare(int(sys.argv[2]))
