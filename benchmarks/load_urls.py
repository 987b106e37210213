"""The example project's URLs, with a thread page for any number, so that a
visitor can open a thread (a room) new to the site on each page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from example_project.urls import (  # type: ignore[import-untyped]
    urlpatterns as example,
)
from example_project.views import Topic  # type: ignore[import-untyped]

from whos_online.locations import location
from whos_online.rooms import records_room


@records_room("thread:{pk}")
@location("Reading a thread")
def thread(request: HttpRequest, pk: int) -> HttpResponse:
    """The example's thread page, for a made-up topic numbered ``pk``."""
    topic = Topic("General", f"Thread number {pk}", pk % 40, "alice")
    return render(request, "thread.html", {"pk": pk, "topic": topic})


urlpatterns = [path("forum/<int:pk>/", thread, name="thread"), *example]
