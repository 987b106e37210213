"""The benchmark project's views and the floors' middleware. ``/`` touches
neither session nor user, like a cached page, so whatever a middleware
loads is its own cost; ``/thread/N/`` is the same page as a room; ``/home/``
is a forum's home page with the app (templates/bench/), ``/home/without/``
the same page without it."""

from __future__ import annotations

import functools
import time
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import engines
from django.urls import include, path
from django_redis import get_redis_connection

from whos_online.admin import ConcurrentEditingMixin
from whos_online.locations import location
from whos_online.rooms import records_room

PLAIN_COOKIE = "seen"
OURS = "whos_online.middleware.WhosOnlineMiddleware"
PLAIN = "benchmarks.project.PlainCookieMiddleware"
# The peer, django-online-users (requirements/bench.txt), when installed.
PEER_APP = "online_users"
PEER = "online_users.middleware.OnlineNowMiddleware"
# What the plain listing shows: the widget's names (their primary keys) and
# figures, set by the run (figures.listed).
LISTING: dict[str, Any] = {"pks": [], "figures": {}}
LISTING_TEMPLATE = (
    "<section><h2>Who's online</h2><p>{{ people }} people online</p>"
    "<ul><li>{{ users }} users</li><li>{{ guests }} guests</li></ul><p>"
    '{% for user in names %}<a href="/users/{{ user.pk }}/">{{ user.get_username }}'
    "</a>{% if not forloop.last %}, {% endif %}{% endfor %}</p></section>"
)


# The rows of a forum's listing of topics (benchmarks/together.py).
ROWS = 50
# Both ways the page greets its reader, as a forum's does: the reader's
# session and user are the page's own cost, not the counts'.
ROWS_TEMPLATE = (
    "{% load whos_online %}<p>{{ request.user.get_username }}</p><table>"
    "{% if plain %}{% for topic in topics %}<tr><td>"
    "{{ topic }}</td></tr>{% endfor %}{% else %}{% room_counts topics as viewing %}"
    "{% for topic, here in viewing %}<tr><td>{{ topic }}</td><td>{{ here.people }}"
    " viewing</td></tr>{% endfor %}{% endif %}</table>"
)
# The group whose change form staff have open, and the CSRF secret the
# form's asks send.
EDITED_GROUP = 1
CSRF = "b" * 32


def with_after_auth(name: str) -> list[str]:
    """startproject's middleware with ``name`` right after authentication."""
    stack, at = settings.STARTPROJECT, settings.STARTPROJECT.index(settings.AUTH) + 1
    return [*stack[:at], name, *stack[at:]]


class PlainCookieMiddleware:
    """The floors: with a plain cookie, nothing more (floor A); without it,
    one ZADD of the user's primary key or the guest's address, and the
    cookie set for five minutes (floor C, the seed design)."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self.clients = {
            alias: get_redis_connection(alias) for alias in settings.PARSERS
        }

    def __call__(self, request: HttpRequest) -> Any:
        response = self.get_response(request)
        if PLAIN_COOKIE not in request.COOKIES:
            client = self.clients[settings.WHOS_ONLINE_CACHE_ALIAS]
            user = request.user
            if user.is_authenticated:
                client.zadd("bench:seed:users", {str(user.pk): time.time()})
            else:
                client.zadd("bench:seed", {request.META["REMOTE_ADDR"]: time.time()})
            response.set_cookie(PLAIN_COOKIE, "1", 300, httponly=True, samesite="Lax")
        return response


def plain(request: HttpRequest, pk: int = 0) -> HttpResponse:
    return HttpResponse(b"ok")


@functools.cache
def widget_template() -> Any:
    return engines["django"].from_string("{% load whos_online %}{% whos_online %}")


def widget(request: HttpRequest) -> HttpResponse:
    return HttpResponse(widget_template().render({}, request))


@functools.cache
def listing_template() -> Any:
    return engines["django"].from_string(LISTING_TEMPLATE)


def listing(request: HttpRequest) -> HttpResponse:
    """The floor of the widget: the same names, with their query, and the
    same figures, in a plain template."""
    names = get_user_model().objects.filter(pk__in=LISTING["pks"])
    context = {"names": names, **LISTING["figures"]}
    return HttpResponse(listing_template().render(context, request))


@functools.cache
def rows_template() -> Any:
    return engines["django"].from_string(ROWS_TEMPLATE)


def topics(request: HttpRequest) -> HttpResponse:
    """A forum's listing of 50 topics, each with how many are viewing it
    (``?plain=1``: the same rows without)."""
    context = {
        "topics": [f"thread:{n}" for n in range(1, ROWS + 1)],
        "plain": "plain" in request.GET,
    }
    return HttpResponse(rows_template().render(context, request))


@location("Reading the front page")
def home(request: HttpRequest) -> HttpResponse:
    """A forum's home page as the example project's is: the count in the
    header, the toggle for users, the widget in the sidebar."""
    return render(request, "bench/home.html", {"base": "bench/base.html"})


def home_without(request: HttpRequest) -> HttpResponse:
    """The same page without the app, as the site without it serves it."""
    return render(request, "bench/home.html", {"base": "bench/base_without.html"})


class EditedGroupAdmin(ConcurrentEditingMixin, GroupAdmin):
    pass


editing_admin = admin.AdminSite(name="editing_admin")
editing_admin.register(Group, EditedGroupAdmin)
plain_admin = admin.AdminSite(name="plain_admin")
plain_admin.register(Group, GroupAdmin)

urlpatterns = [
    path("", plain),
    path("thread/<int:pk>/", records_room("thread:{pk}")(plain)),
    path("widget/", widget),
    path("listing/", listing),
    path("topics/", topics),
    path("whos-online/", include("whos_online.urls")),
    path("admin/", plain_admin.urls),
    path("editing-admin/", editing_admin.urls),
    # The home page's, last: the other pages resolve as before.
    path("home/without/", home_without, name="home"),
    path("home/", home, name="home"),  # the last of a name is what {% url %} gives
    *(path(f"{name}/", plain, name=name) for name in ("forum", "members", "about")),
    path("accounts/login/", plain, name="login"),
    path("accounts/logout/", plain, name="logout"),
]
