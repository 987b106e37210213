from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path

from tests.themed_admin.settings import THEME

urlpatterns: list[URLPattern | URLResolver] = [
    path("admin/", admin.site.urls),
    path("whos-online/", include("whos_online.urls")),
]
if THEME == "unfold":
    # Unfold styles the fields of its own ModelAdmin's forms only.
    from tests.themed_admin.sites import unfold_user_admin

    unfold_user_admin()
if THEME == "grappelli":
    urlpatterns.append(path("grappelli/", include("grappelli.urls")))
