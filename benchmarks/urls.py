"""The benchmarks' two views.

``/`` touches neither the session nor the user, like a cached page or an API
answer: whatever a middleware loads is its own cost. ``/me/`` reads
``request.user``, as every page of the example project does (its header says
who is logged in), so the page pays for loading the session and the user.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path


def plain(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"ok")


def me(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"user" if request.user.is_authenticated else b"guest")


urlpatterns = [path("", plain), path("me/", me)]
