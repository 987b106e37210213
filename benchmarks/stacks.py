"""The requests the per-request benchmarks send, and the stacks they go
through: the minimal chain and Django's default ``startproject`` one, with
or without one more middleware (ours, or a reference one) right after
``AuthenticationMiddleware``, called as a WSGI server calls them.

Nothing here knows the app's internals, so compare.py can drive any
revision of ``whos_online`` with it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, NamedTuple
from wsgiref.util import setup_testing_defaults

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.http import HttpRequest
from django.test import Client
from django.test.utils import override_settings
from django_redis import get_redis_connection

SESSION = "django.contrib.sessions.middleware.SessionMiddleware"
AUTH = "django.contrib.auth.middleware.AuthenticationMiddleware"
STARTPROJECT = [
    "django.middleware.security.SecurityMiddleware",
    SESSION,
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    AUTH,
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
STACKS = {"min": [SESSION, AUTH], "std": STARTPROJECT}
EXTRA = {  # the middleware right after AuthenticationMiddleware
    "none": None,
    "ours": "whos_online.middleware.WhosOnlineMiddleware",
    "dou": "online_users.middleware.OnlineNowMiddleware",
    "noop": f"{__name__}.PassThroughMiddleware",
    "zadd": f"{__name__}.ZaddMiddleware",
    "plain": f"{__name__}.PlainCookieMiddleware",
}
PLAIN_COOKIE = "seen"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
ADDRESS = {"user": "198.51.100.7", "guest": "203.0.113.9"}


class PassThroughMiddleware:
    """Does nothing: what any middleware pays for being one more link."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.redis, self.key = get_redis_connection(), "bench-zadd"

    def __call__(self, request: HttpRequest) -> Any:
        return self.get_response(request)


class ZaddMiddleware(PassThroughMiddleware):
    """One bare ZADD per request and nothing else: "one round trip" paid in
    a request, where Django's own work runs between round trips."""

    def __call__(self, request: HttpRequest) -> Any:
        response = self.get_response(request)
        self.redis.zadd(self.key, {request.META["REMOTE_ADDR"]: time.time()})
        return response


class PlainCookieMiddleware(PassThroughMiddleware):
    """The least a guard can do: with a plain cookie, nothing more; without
    it, one ZADD, and the cookie set for five minutes."""

    def __call__(self, request: HttpRequest) -> Any:
        response = self.get_response(request)
        if PLAIN_COOKIE not in request.COOKIES:
            self.redis.zadd(self.key, {request.META["REMOTE_ADDR"]: time.time()})
            response.set_cookie(PLAIN_COOKIE, "1", 300, httponly=True, samesite="Lax")
        return response


class Case(NamedTuple):
    name: str
    stack: str  # a key of STACKS
    extra: str  # a key of EXTRA
    path: str  # "/" touches no session or user; "/me/" loads the user
    visitor: str  # "user" or "guest"
    cookie: str  # "", or the guard sent: "fresh", "expired" or "plain"
    baseline: str  # the case whose time is subtracted ("": none)
    cheap: bool  # cheap cases get larger blocks


CASES = [Case(*row) for row in [
    ("none-user", "min", "none", "/", "user", "", "", True),
    ("none-guest", "min", "none", "/", "guest", "", "", True),
    ("none-user-me", "min", "none", "/me/", "user", "", "", False),
    ("noop-user", "min", "noop", "/", "user", "", "none-user", True),
    ("ours-user-guarded", "min", "ours", "/", "user", "fresh", "none-user", True),
    ("ours-guest-guarded", "min", "ours", "/", "guest", "fresh", "none-guest", True),
    ("ours-user", "min", "ours", "/", "user", "expired", "none-user", False),
    ("ours-user-new", "min", "ours", "/", "user", "", "none-user", False),
    ("ours-guest", "min", "ours", "/", "guest", "", "none-guest", False),
    ("ours-user-me", "min", "ours", "/me/", "user", "expired", "none-user-me", False),
    ("zadd-guest", "min", "zadd", "/", "guest", "", "none-guest", False),
    ("zadd-user-me", "min", "zadd", "/me/", "user", "", "none-user-me", False),
    ("dou-user", "min", "dou", "/", "user", "", "none-user", False),
    ("dou-guest", "min", "dou", "/", "guest", "", "none-guest", True),
    ("dou-user-me", "min", "dou", "/me/", "user", "", "none-user-me", False),
    ("std-user", "std", "none", "/", "user", "", "", True),
    ("std-guest", "std", "none", "/", "guest", "", "", True),
    ("std-ours-user-guarded", "std", "ours", "/", "user", "fresh", "std-user", True),
    ("std-ours-guest-guarded", "std", "ours", "/", "guest", "fresh", "std-guest", True),
    ("std-ours-guest", "std", "ours", "/", "guest", "", "std-guest", False),
    ("std-plain-user", "std", "plain", "/", "user", "plain", "std-user", True),
    ("std-plain-guest", "std", "plain", "/", "guest", "plain", "std-guest", True),
    ("std-plain-guest-new", "std", "plain", "/", "guest", "", "std-guest", False),
]]  # fmt: skip
BY_NAME = {case.name: case for case in CASES}


def handler(stack: str, extra: str) -> WSGIHandler:
    chain, middleware = list(STACKS[stack]), EXTRA[extra]
    if middleware:
        chain.insert(chain.index(AUTH) + 1, middleware)
    with override_settings(MIDDLEWARE=chain):
        return WSGIHandler()


def environ(path: str, cookies: dict[str, str], address: str) -> dict[str, Any]:
    """A WSGI environ of a browser's GET ``path`` from ``address``."""
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    environ = {"PATH_INFO": path, "REMOTE_ADDR": address, "HTTP_COOKIE": cookie}
    setup_testing_defaults(environ)
    return environ | {"HTTP_USER_AGENT": BROWSER}


def start_response(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
    return None


class World:
    """The handlers, two logged-in users' sessions and the guard cookies."""

    def __init__(self, guard_cookie: str) -> None:
        self.guard_cookie = guard_cookie
        self.handlers = {(c.stack, c.extra): handler(c.stack, c.extra) for c in CASES}
        self.sessions = [self.log_in(name) for name in ("alice", "bob")]
        self.guards: dict[str, str] = {}
        # Guards issued for one second, once past it: what a browser sends
        # with its first request after a guard period.
        with override_settings(WHOS_ONLINE_GUARD_SECONDS=1):
            self.renew_guards()
        time.sleep(2.1)
        self.expired = dict(self.guards)
        self.renew_guards()

    @staticmethod
    def log_in(username: str) -> str:
        user, _ = get_user_model()._default_manager.get_or_create(username=username)
        client = Client()
        client.force_login(user)
        return client.cookies[settings.SESSION_COOKIE_NAME].value

    def environ(self, case: Case, cookies: dict[str, str] | None = None) -> Any:
        if cookies is None:
            cookies = {}
            if case.visitor == "user":
                cookies[settings.SESSION_COOKIE_NAME] = self.sessions[0]
            if case.cookie == "plain":
                cookies[PLAIN_COOKIE] = "1"
            elif case.cookie:
                guards = self.guards if case.cookie == "fresh" else self.expired
                cookies[self.guard_cookie] = guards[case.visitor]
        return environ(case.path, cookies, ADDRESS[case.visitor])

    def respond(self, case: Case, cookies: dict[str, str] | None = None) -> Any:
        call = self.handlers[case.stack, case.extra]
        response = call(self.environ(case, cookies), start_response)
        response.close()
        return response

    def prepared(self, name: str) -> WSGIRequest:
        """A request of case ``name`` that went through the minimal chain."""
        request = WSGIRequest(self.environ(BY_NAME[name]))
        self.handlers["min", "none"].get_response(request)
        return request

    def renew_guards(self) -> None:
        """Guards as the middleware itself issues them."""
        for visitor, name in (("user", "ours-user-new"), ("guest", "ours-guest")):
            cookie = self.respond(BY_NAME[name]).cookies[self.guard_cookie]
            self.guards[visitor] = cookie.value

    def run(self, case: Case, n: int) -> float:
        """Median µs per request over ``n`` fresh requests of ``case``."""
        environs = [self.environ(case) for _ in range(n)]
        call, times = self.handlers[case.stack, case.extra], []
        clock = time.perf_counter
        for environ in environs:
            start = clock()
            call(environ, start_response).close()
            times.append(clock() - start)
        return statistics.median(times) * 1e6
