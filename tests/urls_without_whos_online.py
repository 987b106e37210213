"""A site that forgot ``include("whos_online.urls")``."""

from __future__ import annotations

from django.urls import path

from tests.urls import page, thread

urlpatterns = [path("", page), path("thread/<int:pk>/", thread)]
