"""A URLconf that a site's middleware gives every request
(``request.urlconf``): the site's pages, and its endpoints, under
/elsewhere/."""

from __future__ import annotations

from django.urls import include, path

from tests import urls_per_request
from tests.urls import urlpatterns as site_patterns

urlpatterns = [path("elsewhere/", include(site_patterns))]


class UseThisURLconf(urls_per_request.UseThisURLconf):
    urlconf = __name__
