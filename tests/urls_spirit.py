"""A django-spirit forum at the site's root, and the app's endpoints."""

from __future__ import annotations

import spirit.urls
from django.urls import include, path

urlpatterns = [
    path("whos-online/", include("whos_online.urls")),
    path("", include(spirit.urls)),
]
