"""The example project under gunicorn, with and without the middleware.

Three servers run at once, each one worker with one thread (a keep-alive
connection stays with the worker that accepted it, so with several the split
of clients is luck): without ``WhosOnlineMiddleware``, with it, and with it
for clients that drop the guard cookie, so every request records. Each
client keeps one connection from a loopback address of its own (each guest
is a different guest), keeps the cookies the server sets, as a browser
does, logs in through the login form or stays a guest, then requests page
after page without pause until the phase ends.

``python -m benchmarks.load N`` prepares the example project's database
(migrations, the demo users and N readers); run() runs it in a child with
the servers' environment.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from benchmarks import servers
from benchmarks.common import ROOT, log, percentile

BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
PASSWORD = "whos-online"  # the demo users'
USERS = ["alice", "bob", "carol", *(f"reader{i}" for i in range(1, 10))]
GUESTS = 8
PAGES = {"/": 30, "/forum/": 25, "/forum/1/": 8, "/forum/2/": 8, "/forum/3/": 5}
PAGES |= {"/forum/4/": 4, "/about/": 10, "/members/": 10}
WEIGHTS = list(PAGES.values())
# Server: (whether it has the middleware, whether its clients drop the guard).
SERVERS = {"without": ("0", False), "with": ("1", False), "with-noguard": ("1", True)}


@dataclass
class Client:
    port: int
    source: str  # the loopback address it connects from
    username: str | None  # None: a guest
    drop: str  # a cookie it never keeps
    cookies: dict[str, str] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    conn: http.client.HTTPConnection | None = None

    def request(
        self, path: str, form: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        headers = {"User-Agent": BROWSER, "Cookie": cookie}
        if form:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for retry in (False, True):  # the server may close an idle connection
            if self.conn is None:
                address = (self.source, 0)
                self.conn = http.client.HTTPConnection(
                    "127.0.0.1", self.port, 30, address
                )
            try:
                body = urlencode(form).encode() if form else None
                self.conn.request("POST" if form else "GET", path, body, headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if retry:
                    raise
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                if morsel["max-age"] == "0" or not morsel.value:
                    self.cookies.pop(name, None)
                elif name != self.drop:
                    self.cookies[name] = morsel.coded_value
        return response.status, data

    def log_in(self) -> None:
        if self.username is None:
            status, expected = self.request("/")[0], 200
        else:
            token = CSRF.search(self.request("/accounts/login/")[1])
            assert token, "the login page has no CSRF token"
            form = {"csrfmiddlewaretoken": token[1].decode(), "password": PASSWORD}
            form |= {"username": self.username, "next": "/"}
            status, expected = self.request("/accounts/login/", form)[0], 302
        if status != expected:
            raise RuntimeError(f"logging in as {self.username} answered {status}")

    def browse(self, deadline: float, record: bool) -> None:
        rng = random.Random(self.source)
        while (start := time.perf_counter()) < deadline:
            try:
                status = self.request(rng.choices(list(PAGES), WEIGHTS)[0])[0]
            except (OSError, http.client.HTTPException):
                status = 0
            if (end := time.perf_counter()) > deadline:
                return  # finished after the bell: not counted
            if status != 200:
                self.errors += 1
            elif record:
                self.latencies.append(end - start)


def in_threads(clients: list[Client], work: Callable[[Client], None]) -> None:
    errors: list[BaseException] = []

    def run(client: Client) -> None:
        try:
            work(client)
        except BaseException as exc:  # raised below, in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if errors:
        raise RuntimeError(f"{len(errors)} clients failed, first: {errors[0]!r}")


def phase(clients: list[Client], seconds: float, record: bool = True) -> list[float]:
    """All clients browse for ``seconds``; the latencies of what completed."""
    for client in clients:
        client.latencies, client.errors = [], 0
    deadline = time.perf_counter() + seconds
    in_threads(clients, lambda client: client.browse(deadline, record))
    return [latency for client in clients for latency in client.latencies]


def process_cpu(pid: int) -> float:
    """CPU seconds used so far by ``pid`` and its children (the worker)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if pid in (int(entry.name), int(fields[1])):
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
    prepare = [sys.executable, "-m", "benchmarks.load", str(len(USERS) - 3)]
    subprocess.run(prepare, cwd=ROOT, env=os.environ | env, check=True)
    phases: dict[str, list[dict[str, Any]]] = {name: [] for name in SERVERS}
    pooled: dict[str, list[float]] = {name: [] for name in SERVERS}
    with contextlib.ExitStack() as stack:
        pids, clients = {}, {}
        for n, (name, (middleware, drops)) in enumerate(SERVERS.items(), start=1):
            port, log_file = servers.free_port(), workdir / f"gunicorn-{name}.log"
            server_env = env | {"BENCH_WHOS_ONLINE_MIDDLEWARE": middleware}
            pids[name] = stack.enter_context(
                servers.gunicorn(port, server_env, log_file)
            )
            drop = app.guard_cookie() if drops else ""
            visitors = enumerate([*USERS, *[None] * GUESTS], start=2)
            clients[name] = [
                Client(port, f"127.0.{n}.{i}", v, drop) for i, v in visitors
            ]
            log(f"  {name}: {len(clients[name])} clients log in")
            in_threads(clients[name], Client.log_in)
            phase(clients[name], min(3.0, seconds), record=False)
        for round_ in range(rounds):
            for name in list(SERVERS)[:: -1 if round_ % 2 else 1]:
                cpu, generator = process_cpu(pids[name]), time.process_time()
                latencies = phase(clients[name], seconds)
                errors = sum(client.errors for client in clients[name])
                log(
                    f"  round {round_ + 1} {name}: {len(latencies) / seconds:.0f} req/s"
                )
                pooled[name] += latencies
                phases[name].append(
                    {"seconds": seconds, "requests": len(latencies), "errors": errors}
                    | {"server_cpu": process_cpu(pids[name]) - cpu}
                    | {"generator_cpu": time.process_time() - generator}
                    | latency(latencies)
                )
    return {
        "phases": phases,
        "latency": {name: latency(values) for name, values in pooled.items()},
        "clients": {"users": len(USERS), "guests": GUESTS},
        "pages": list(PAGES.items()),
    }


if __name__ == "__main__":
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("create_demo_users", verbosity=0)
    for i in range(1, int(sys.argv[1]) + 1):
        manager = get_user_model()._default_manager
        user, created = manager.get_or_create(username=f"reader{i}")
        if created:
            user.set_password(PASSWORD)
            user.save()
