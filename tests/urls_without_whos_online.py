"""A site that has not included whos_online.urls."""

from __future__ import annotations

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
