from __future__ import annotations

from django.contrib.auth import get_user_model, login, logout
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.urls import path


def page(request: HttpRequest) -> HttpResponse:
    return HttpResponse("a page")


def widget(request: HttpRequest) -> HttpResponse:
    template = engines["django"].from_string("{% load whos_online %}{% whos_online %}")
    return HttpResponse(template.render({}, request))


def log_in(request: HttpRequest, pk: int) -> HttpResponse:
    login(request, get_user_model()._default_manager.get(pk=pk))
    return HttpResponse("logged in")


def log_out(request: HttpRequest) -> HttpResponse:
    logout(request)
    return HttpResponse("logged out")


urlpatterns = [
    path("", page),
    path("widget/", widget),
    path("login/<int:pk>/", log_in),
    path("logout/", log_out),
]
