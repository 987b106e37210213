"""A URLconf that a site's middleware gives every request
(``request.urlconf``): the site's pages, and its endpoints, under
/elsewhere/."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import include, path

from tests.urls import urlpatterns as site_patterns

urlpatterns = [path("elsewhere/", include(site_patterns))]


class UseThisURLconf:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.urlconf = __name__
        return self.get_response(request)
