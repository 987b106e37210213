"""Where each user is: "Reading: the forum rules", like phpBB's list.

A site labels its pages, and the label is kept for each online user when
they are recorded (so it is the page they were on at their last record, at
most one guard period ago), in the same round trip. Labels are the site's
words, never the visitor's: a view decorated with ``@location("Reading the
forum")``, a class-based view with ``LocationMixin`` and ``location``, or
``WHOS_ONLINE_LOCATIONS = {"url name": "label"}``. A label marked for
translation (``gettext_lazy``) is stored in its source words and read in
the language of whoever reads it. The link is the page's
path. Requests that are not page views (fetch, HTMX, the app's own
endpoints, pages without a label) never overwrite a location.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest
from django.urls import Resolver404, resolve
from django.utils import translation
from django.utils.functional import Promise
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext

from whos_online.conf import get_config
from whos_online.state import BoundedMemo

# (URLconf, path, path_info) -> the label of the page there ("" for none).
LocationMemo = BoundedMemo[tuple[str, str, str], str]

View = TypeVar("View", bound=Callable[..., Any])

ATTRIBUTE = "whos_online_location"
MAX_LABEL_LENGTH = 100
MAX_PATH_LENGTH = 200
# Stored as "label<TAB>path"; neither may hold the separator.
SEPARATOR = "\t"


@dataclass(frozen=True)
class Location:
    """Where a user is: the label's words as stored, and the page's path."""

    words: str
    url: str

    @property
    def label(self) -> str:
        """The label in the active language: a label the site marked for
        translation reads in the language of the page that shows it."""
        return gettext(self.words)


def location(label: str | Promise) -> Callable[[View], View]:
    """Label the decorated view: ``@location(_("Reading the forum"))``."""

    def decorator(view: View) -> View:
        return marked(view, ATTRIBUTE, label)

    return decorator


def marked(view: View, attribute: str, value: object) -> View:
    """``view`` with ``attribute`` set on a wrapper of it, so that a view
    decorated for one URL (a third-party view, in urls.py) keeps its other
    URLs as they were."""
    if iscoroutinefunction(view):

        @functools.wraps(view)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await view(*args, **kwargs)

    else:

        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return view(*args, **kwargs)

    setattr(wrapper, attribute, value)
    return wrapper  # type: ignore[return-value]


class LocationMixin:
    """For class-based views: set ``location`` to the page's label."""

    location: str | Promise = ""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        view = super().as_view(**initkwargs)  # type: ignore[misc]
        setattr(view, ATTRIBUTE, cls.location)
        return view


def location_of(request: HttpRequest, memo: LocationMemo | None = None) -> str:
    """What to store as the request's location, or ``""`` to leave it be."""
    words = label_of(request, memo)
    return f"{words}{SEPARATOR}{request.path}" if words else ""


def label_of(request: HttpRequest, memo: LocationMemo | None = None) -> str:
    """The label of the request's location in the site's own words, or
    ``""`` when it has none to store.

    A guarded page view of a user asks too (has the user moved?), so what
    a path resolves to may be kept in ``memo``.
    """
    if request.method != "GET":
        return ""
    # Middleware may give the request a URLconf of its own; Django applies it
    # only after every middleware has run.
    urlconf = str(getattr(request, "urlconf", None) or get_config().root_urlconf)
    path = request.path
    if memo is None:
        label = _words(_label_of(request, urlconf))
    else:
        key = (urlconf, path, request.path_info)
        kept = memo.get(key)
        label = (
            memo.put(key, _words(_label_of(request, urlconf))) if kept is None else kept
        )
    if not label or len(path) > MAX_PATH_LENGTH or _is_not_a_page_view(request):
        return ""
    return label


def _words(label: object) -> str:
    """A label as stored: its words, at most ``MAX_LABEL_LENGTH`` of them; a
    lazy translation's in its source language, for each reader's page to
    translate."""
    if isinstance(label, Promise):
        with translation.override(None):
            label = str(label)
    return " ".join(str(label).split())[:MAX_LABEL_LENGTH]


def _label_of(request: HttpRequest, urlconf: str) -> object:
    try:
        match = resolve(request.path_info, urlconf)
    except Resolver404:
        return ""
    return getattr(match.func, ATTRIBUTE, None) or get_config().locations.get(
        match.view_name, ""
    )


def parse(stored: bytes | str | None) -> Location | None:
    if not stored:
        return None
    text = stored.decode() if isinstance(stored, bytes) else stored
    label, _, url = text.partition(SEPARATOR)
    return Location(label, url) if is_local_path(url) else None


def is_local_path(url: str) -> bool:
    """Whether ``url`` is a path of this site, never a link elsewhere
    (``//host/``, ``/\\host/`` are)."""
    return url.startswith("/") and url_has_allowed_host_and_scheme(
        url, allowed_hosts=None
    )


def _is_not_a_page_view(request: HttpRequest) -> bool:
    # META itself: request.headers would copy all of META, on every guarded
    # page view of a user.
    meta = request.META
    return (
        meta.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest"
        or "HTTP_HX_REQUEST" in meta
        or meta.get("HTTP_SEC_FETCH_DEST", "document") not in ("document", "")
    )
