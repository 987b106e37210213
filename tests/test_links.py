"""The URLs a page links to (the endpoints its scripts ask, the scripts
themselves) are those of the request's own URLconf, script prefix and
language, and of the static files' storage in force, though a process works
each out once rather than on every page."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from django.core.files.storage import Storage
from django.template import Context, Template
from django.test import Client
from django.urls import set_script_prefix
from pytest_django.fixtures import Settings as SettingsWrapper

pytestmark = pytest.mark.django_db

REFRESH = re.compile(r'data-whos-online-refresh="([^"?]+)')
SCRIPT = re.compile(r'<script src="([^"]*refresh\.js[^"]*)"')


def refresh_url(html: str) -> str:
    found = REFRESH.search(html)
    assert found is not None, html
    return found[1]


def script_url(html: str) -> str:
    found = SCRIPT.search(html)
    assert found is not None, html
    return found[1]


def thread_page(path: str = "/thread/1/", **extra: Any) -> str:
    return Client().get(path, **extra).content.decode()


def under(prefix: str) -> str:
    """The thread's page served under ``prefix``, as a WSGI server's
    SCRIPT_NAME sets it."""
    set_script_prefix(prefix)
    try:
        return thread_page()
    finally:
        set_script_prefix("/")


def test_the_widgets_endpoint_is_under_each_requests_script_prefix() -> None:
    assert refresh_url(under("/one/")) == "/one/whos-online/widget/"
    assert refresh_url(under("/two/")) == "/two/whos-online/widget/"
    assert refresh_url(thread_page()) == "/whos-online/widget/"


def test_the_widgets_endpoint_is_that_of_the_requests_own_urlconf(
    settings: SettingsWrapper,
) -> None:
    assert refresh_url(thread_page()) == "/whos-online/widget/"
    settings.MIDDLEWARE = [
        "tests.urls_elsewhere.UseThisURLconf",
        *settings.MIDDLEWARE,
    ]
    expected = "/elsewhere/whos-online/widget/"
    assert refresh_url(thread_page("/elsewhere/thread/1/")) == expected


def test_a_script_is_where_the_static_url_says(settings: SettingsWrapper) -> None:
    settings.STATIC_URL = "/static/"
    assert script_url(thread_page()) == "/static/whos_online/refresh.js"
    settings.STATIC_URL = "https://cdn.example.com/assets/"
    expected = "https://cdn.example.com/assets/whos_online/refresh.js"
    assert script_url(thread_page()) == expected


class SignedStorage(Storage):
    """A storage that serves from elsewhere and signs each URL for a while,
    as S3's does: a URL given once is no good for ever."""

    signatures = itertools.count()

    def url(self, name: str | None) -> str:
        return f"https://bucket.example.com/{name}?signature={next(self.signatures)}"


def test_a_script_of_a_storage_that_signs_its_urls_is_signed_afresh_each_page(
    settings: SettingsWrapper,
) -> None:
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, "django.contrib.staticfiles"]
    settings.STATIC_URL = "/static/"
    storage = {"BACKEND": f"{__name__}.SignedStorage"}
    settings.STORAGES = settings.STORAGES | {"staticfiles": storage}
    first, second = script_url(thread_page()), script_url(thread_page())
    assert first.startswith("https://bucket.example.com/whos_online/refresh.js?")
    assert first != second


def stylesheet_tag() -> str:
    return Template("{% load whos_online %}{% whos_online_stylesheet %}").render(
        Context()
    )


def test_the_stylesheet_tag_links_the_stylesheet_where_static_says(
    settings: SettingsWrapper,
) -> None:
    expected = '<link rel="stylesheet" href="{}">'
    settings.STATIC_URL = "/static/"
    assert stylesheet_tag() == expected.format("/static/whos_online/whos_online.css")
    settings.STATIC_URL = "https://cdn.example.com/assets/"
    css = "https://cdn.example.com/assets/whos_online/whos_online.css"
    assert stylesheet_tag() == expected.format(css)


def test_the_stylesheet_of_a_storage_that_signs_its_urls_is_signed_afresh(
    settings: SettingsWrapper,
) -> None:
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, "django.contrib.staticfiles"]
    storage = {"BACKEND": f"{__name__}.SignedStorage"}
    settings.STORAGES = settings.STORAGES | {"staticfiles": storage}
    first, second = stylesheet_tag(), stylesheet_tag()
    assert 'href="https://bucket.example.com/whos_online/whos_online.css?' in first
    assert first != second


def test_a_stylesheet_url_is_escaped_in_its_link(settings: SettingsWrapper) -> None:
    settings.STATIC_URL = '/static/"><script>/'
    assert "<script>" not in stylesheet_tag()
