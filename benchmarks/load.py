"""A small closed-loop load generator with browser-like clients.

Each client holds one keep-alive connection from a loopback source address
of its own (127.0.x.y, so each guest is a different guest), keeps every
cookie the server sets, as a browser does, and either logs in through the
login form (CSRF token and all) or stays a guest. It then browses: request a
page, read it whole, request the next, with no pause, until the phase ends.
A client may be told to drop the guard cookie, to measure the worst case in
which every request is recorded.

Everything is sent to 127.0.0.1; every loop is bounded by a deadline.
"""

from __future__ import annotations

import http.client
import random
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
CSRF_INPUT = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')

# What a reader of the demo forum opens, with weights.
PAGES: list[tuple[str, int]] = [
    ("/", 30),
    ("/forum/", 25),
    ("/forum/1/", 8),
    ("/forum/2/", 8),
    ("/forum/3/", 5),
    ("/forum/4/", 4),
    ("/about/", 10),
    ("/members/", 10),
]


class ClientError(RuntimeError):
    pass


@dataclass
class Client:
    port: int
    source: str
    username: str | None  # None: a guest
    password: str = ""
    drop_cookie: str = ""  # a cookie never kept (the guard, for the worst case)
    seed: int = 0
    cookies: dict[str, str] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    _conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(
                "127.0.0.1", self.port, timeout=30, source_address=(self.source, 0)
            )
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        headers = {
            "Host": f"127.0.0.1:{self.port}",
            "User-Agent": BROWSER,
            "Accept": "text/html",
            **(headers or {}),
        }
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
            except (http.client.HTTPException, ConnectionError):
                # The server closed an idle keep-alive connection: reconnect once.
                self.close()
                if attempt:
                    raise
                continue
            for header in response.headers.get_all("Set-Cookie") or []:
                self._keep(header)
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return response.status, data
        raise ClientError("unreachable")

    def _keep(self, header: str) -> None:
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        for name, morsel in jar.items():
            if name == self.drop_cookie:
                continue
            if morsel["max-age"] == "0" or morsel.value == "":
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = morsel.coded_value

    def log_in(self) -> None:
        if self.username is None:
            status, _ = self.request("GET", "/")
            if status != 200:
                raise ClientError(f"GET / answered {status}")
            return
        status, page = self.request("GET", "/accounts/login/")
        match = CSRF_INPUT.search(page)
        if status != 200 or match is None:
            raise ClientError(f"login page answered {status} without a CSRF token")
        form = urllib.parse.urlencode(
            {
                "csrfmiddlewaretoken": match.group(1).decode(),
                "username": self.username,
                "password": self.password,
                "next": "/",
            }
        ).encode()
        status, _ = self.request(
            "POST",
            "/accounts/login/",
            body=form,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        if status != 302:
            raise ClientError(f"logging in as {self.username} answered {status}")

    def browse(self, deadline: float, record: bool) -> None:
        rng = random.Random(self.seed)
        paths = [path for path, _ in PAGES]
        weights = [weight for _, weight in PAGES]
        while True:
            path = rng.choices(paths, weights)[0]
            start = time.perf_counter()
            if start >= deadline:
                return
            try:
                status, _ = self.request("GET", path)
            except (OSError, http.client.HTTPException):
                status = 0
            end = time.perf_counter()
            if end > deadline:
                return  # finished after the bell: not counted
            if status != 200:
                self.errors += 1
            elif record:
                self.latencies.append(end - start)


@dataclass
class Phase:
    seconds: float
    requests: int
    errors: int
    latencies: list[float]
    generator_cpu: float  # CPU seconds the generator itself used

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


def make_clients(
    port: int,
    users: list[str],
    guests: int,
    password: str,
    first_source: int,
    drop_cookie: str = "",
) -> list[Client]:
    clients = []
    for n, username in enumerate([*users, *[None] * guests], start=1):
        host = first_source + n
        source = f"127.0.{host // 250 % 250}.{host % 250 + 2}"
        clients.append(
            Client(
                port=port,
                source=source,
                username=username,
                password=password,
                drop_cookie=drop_cookie,
                seed=host,
            )
        )
    return clients


def run_threads(clients: list[Client], target: str, *args: object) -> None:
    errors: list[BaseException] = []

    def work(client: Client) -> None:
        try:
            getattr(client, target)(*args)
        except BaseException as exc:  # reported below, in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if errors:
        raise ClientError(f"{len(errors)} clients failed, first: {errors[0]!r}")


def log_in_all(clients: list[Client]) -> None:
    run_threads(clients, "log_in")


def phase(clients: list[Client], seconds: float, record: bool = True) -> Phase:
    """All clients browse for ``seconds``; what completed in that time."""
    for client in clients:
        client.latencies = []
        client.errors = 0
    cpu = time.process_time()
    deadline = time.perf_counter() + seconds
    run_threads(clients, "browse", deadline, record)
    latencies = [x for client in clients for x in client.latencies]
    return Phase(
        seconds=seconds,
        requests=len(latencies),
        errors=sum(client.errors for client in clients),
        latencies=latencies,
        generator_cpu=time.process_time() - cpu,
    )
