from __future__ import annotations

from django.urls import path

from whos_online import streams, views

app_name = "whos_online"

urlpatterns = [
    path("", views.who_is_online, name="page"),
    path("online.json", views.online_json, name="json"),
    path("widget/", views.online_fragment, name="widget"),
    path("stream/", streams.stream, name="stream"),
    path("heartbeat/", views.heartbeat, name="heartbeat"),
    path("beacon/", views.beacon, name="beacon"),
    path("here/", views.here, name="here"),
    path("decorate/", views.decorate, name="decorate"),
    path("visibility/", views.set_visibility, name="visibility"),
]
