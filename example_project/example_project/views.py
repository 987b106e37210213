"""Plain pages: the widget itself is in the base template, on every one."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

TOPICS = [
    ("Announcements", "Read me first: the forum rules", 3),
    ("General", "Which Redis do you run in production?", 12),
    ("General", "Show us your Django side projects", 27),
    ("Help", "How many visitors can a sorted set hold?", 5),
]


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


def forum(request: HttpRequest) -> HttpResponse:
    topics = [
        {"board": board, "title": title, "replies": replies}
        for board, title, replies in TOPICS
    ]
    return render(request, "forum.html", {"topics": topics})


def about(request: HttpRequest) -> HttpResponse:
    return render(request, "about.html")
