from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from example_project import views

urlpatterns = [
    path("", views.home, name="home"),
    path("forum/", views.forum, name="forum"),
    path("forum/<int:pk>/", views.thread, name="thread"),
    path("members/", views.members, name="members"),
    path("members/<str:username>/", views.member, name="member"),
    path("about/", views.about, name="about"),
    path("news/", views.news, name="news"),
    # login/ and logout/ (a POST), with the template registration/login.html.
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    # The widget's live refresh (HTML fragment), the JSON list and the heartbeat.
    path("whos-online/", include("whos_online.urls")),
]
