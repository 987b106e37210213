"""The demo's pages. The site-wide widget, the count and the heartbeat are in
the base template, on every page; a thread adds the list of its own room."""

from __future__ import annotations

from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import cache_page

from whos_online.locations import location
from whos_online.rooms import records_room


class Topic(NamedTuple):
    board: str
    title: str
    replies: int
    author: str


TOPICS = {
    1: Topic("Announcements", "Read me first: the forum rules", 3, "admin"),
    2: Topic("General", "Which Redis do you run in production?", 12, "alice"),
    3: Topic("General", "Show us your Django side projects", 27, "bob"),
    4: Topic("Help", "How many visitors can a sorted set hold?", 5, "carol"),
}


@location("Reading the front page")
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


@location("Reading the forum")
def forum(request: HttpRequest) -> HttpResponse:
    return render(request, "forum.html", {"topics": TOPICS.items()})


@records_room("thread:{pk}")
@location("Reading a thread")
def thread(request: HttpRequest, pk: int) -> HttpResponse:
    """A thread page; each visit records the visitor in the room "thread:<pk>"."""
    topic = TOPICS.get(pk)
    if topic is None:
        raise Http404("No such thread.")
    context = {"pk": pk, "topic": topic}
    return render(request, "thread.html", context)


@location("Looking at the members")
def members(request: HttpRequest) -> HttpResponse:
    """Every user with their status and when they were last seen."""
    model = get_user_model()
    users = model._default_manager.order_by(model.USERNAME_FIELD)
    return render(request, "members.html", {"members": users})


@location("Looking at a member")
def member(request: HttpRequest, username: str) -> HttpResponse:
    """A member's page, which the forum's "Started by" links lead to."""
    model = get_user_model()
    lookup = {model.USERNAME_FIELD: username}
    found = get_object_or_404(model._default_manager, **lookup)
    return render(request, "member.html", {"member": found})


def about(request: HttpRequest) -> HttpResponse:
    return render(request, "about.html")


@cache_page(60 * 5, cache="default")
def news(request: HttpRequest) -> HttpResponse:
    """A page served from the cache, as a CDN would serve it: the same HTML
    for everyone, so it carries no widget, only the beacon."""
    return render(request, "news.html")
