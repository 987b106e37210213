"""The URLs the app's outputs link to, its endpoints and its scripts, worked
out once per process rather than on every page: a page with the widget, the
toggle and the scripts asks for five or six, and ``reverse()`` and
``{% static %}`` are a good part of what the widget adds to a page.

An endpoint's URL is kept for the URLconf, script prefix and language it
was reversed in, which are all it depends on. A script's URL is kept where
the static files' storage serves them from disk, which gives the same URL
each time; a storage elsewhere may sign its URLs for a while (S3's), so it
is asked every time. A change of ``STATIC_URL`` or ``STORAGES`` builds the
store, and with it these, again (:mod:`whos_online.conf`).
"""

from __future__ import annotations

from django.apps import apps
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.files.storage import FileSystemStorage
from django.templatetags.static import static
from django.urls import (
    NoReverseMatch,
    get_resolver,
    get_script_prefix,
    get_urlconf,
    reverse,
)
from django.utils.translation import get_language

from whos_online.store import get_store

MISSING = object()


def endpoint(name: str) -> str | None:
    """The URL of the endpoint ``name`` (``"whos_online:widget"``), or
    ``None`` where the site has not included whos_online.urls (a system
    check says so)."""
    urlconf = get_urlconf()
    key = (name, get_resolver(urlconf), get_script_prefix(), get_language())
    known = get_store().state.links
    found = known.get(key, MISSING)
    if found is MISSING:
        try:
            found = reverse(name, urlconf)
        except NoReverseMatch:
            found = None
        known.put(key, found)
    return found  # type: ignore[return-value]


def script(path: str) -> str:
    """The URL of the static file ``path`` (``"whos_online/refresh.js"``),
    as ``{% static %}`` gives it."""
    known = get_store().state.links
    found = known.get(path)
    if found is None:
        found = static(path)
        if not _signs_its_urls():
            known.put(path, found)
    return found


def _signs_its_urls() -> bool:
    """Whether the static files' URLs may differ from one asking to the
    next: those of a storage that does not serve them from disk (without
    django.contrib.staticfiles, ``STATIC_URL`` alone makes them)."""
    return apps.is_installed("django.contrib.staticfiles") and not isinstance(
        staticfiles_storage, FileSystemStorage
    )
