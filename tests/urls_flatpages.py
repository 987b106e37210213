"""The test site with a labelled catch-all at its root, as flatpages sites
have: any path reaches a view, which answers 404 for pages it does not have."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import re_path

from tests.urls import urlpatterns as site
from whos_online.locations import location


@location("Reading a page")
def flatpage(request: HttpRequest, url: str) -> HttpResponse:
    if url.strip("/") != "about":
        raise Http404("No such page.")
    return HttpResponse("about us")


urlpatterns = [*site, re_path(r"^(?P<url>.*)$", flatpage)]
