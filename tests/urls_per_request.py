"""A URLconf that a site's middleware gives some requests (``request.urlconf``)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import path

from tests.urls import forum
from tests.urls import urlpatterns as site_patterns

urlpatterns = [path("elsewhere/", forum), *site_patterns]


class UseThisURLconf:
    urlconf = __name__

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.urlconf = self.urlconf
        return self.get_response(request)
